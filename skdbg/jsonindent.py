"""``json.dumps(obj, indent=N)``'s exact text, faster before Python 3.13: the C encoder writes each
container that holds no container.

Why: with ``indent``, the standard library of Python 3.10–3.12 encodes in Python (its C encoder takes
no indentation before 3.13), a few generator steps per value. ``codegen adapt``'s manifest of 500
kernels (~0.8 MB) took ~30 ms of a ~0.45 s command that way, and ``analyze``'s JSON of a 2,000-ELF
scene ~14 ms, both after all other work. Most of such a document is flat containers (an artifact's
fields, a parameter's name and type, a list of names). Here the nesting is walked in Python and each
flat container is handed whole to the C encoder, with the item separator of its depth (``",\\n"`` and
the indentation): that is the indented text of the container but for the line break after its
opening bracket and before its closing one, which are added. A JSON string never holds a raw line
break, so nothing else in the text changes. How much faster depends on the document's shape: 1.2x
for small nested leaves, 1.6–1.8x for the two documents above, 2.5x for flat records (3.12).

The walk writes only what the two encoders treat alike: ``dict``, ``list`` and ``tuple`` holding
``str``, ``int``, ``float``, ``bool`` and ``None`` (the exact types: a subclass may define methods the
two encoders call differently), mapping keys of those scalar types, no cycle. Anything else (a
subclass, an enum, an object the standard library refuses or its ``default`` would write, a cycle,
an integer too long to print, a stack too deep for the walk) makes the whole document go to
``json.dumps``, which raises its own exception or writes the text. From 3.13 on (C indentation), and
where the C encoder is missing, ``json.dumps`` writes every document. tests/test_jsonindent.py holds
the text to ``json.dumps``'s on random and real documents (on the test run's Python, and on 3.10 in
CI) and checks that the walk, not the fallback, writes the real ones. One corner only: a document
nested within a level of the recursion limit may be written where ``json.dumps`` gives up.
"""

from __future__ import annotations

import json
import json.encoder
import sys
import threading
from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

#: the standard library's C encoder (``_json.make_encoder``; None where ``_json`` is missing). Not in
#: its typed interface, hence looked up by name
c_make_encoder: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)

#: the standard library writes indented text in C itself from this version on
_STDLIB_IN_C = sys.version_info >= (3, 13)

#: the types the walk writes (exactly these: see the module docstring); the same set for mapping keys
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Unwritten(Exception):
    """Something the walk leaves to ``json.dumps``: it writes the whole document (or refuses it)."""


def _refuse(o: Any) -> Any:
    """The C encoders' ``default``: an object of another type is for ``json.dumps`` (its ``default``,
    patched or not, its message)."""
    raise _Unwritten


#: per depth ``d``: the separator between the items of a container at ``d`` levels of indentation
#: (``",\n"`` and the indentation), the line break and indentation before them, and the C encoder of
#: a flat container whose items sit there
_Level = tuple[str, str, Callable[..., Any]]


class _Levels:
    """The :data:`_Level` of each depth for one ``(indent, ensure_ascii)``, made as the walk first
    reaches it. Why a lock: a level is looked up by its index, so two threads adding levels at once
    must not leave one at the wrong place (every later text would be mis-indented). Re-entrant: a
    signal handler may render while its thread is in :meth:`grow`."""

    def __init__(self, indent: int, ensure_ascii: bool) -> None:
        self.unit = " " * indent
        self.quote = encode_basestring_ascii if ensure_ascii else encode_basestring
        self.at: list[_Level] = []
        self._lock = threading.RLock()

    def grow(self, depth: int) -> None:
        """Make the levels of every depth up to ``depth``."""
        assert c_make_encoder is not None
        with self._lock:
            while len(self.at) <= depth:
                d = len(self.at)
                sep = ",\n" + self.unit * d
                # no markers: a flat container holds no container, so it cannot hold itself (the walk
                # checks the others); allow_nan as the standard library's default
                encoder = c_make_encoder(None, _refuse, self.quote, None, ": ", sep, False, False, True)
                self.at.append((sep, "\n" + self.unit * d, encoder))


_CACHE: dict[tuple[int, bool], _Levels] = {}
_CACHE_LOCK = threading.Lock()


def dumps_indented(
    obj: Any, *, indent: int = 2, ensure_ascii: bool = True, default: Callable[[Any], Any] | None = None
) -> str:
    """``json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii, default=default)`` (same text, same
    exceptions). The walk writes no object ``default`` would be asked about: a document holding one
    goes to ``json.dumps`` whole, which asks it."""
    if c_make_encoder is not None and not _STDLIB_IN_C and type(indent) is int and type(ensure_ascii) is bool:
        levels = _CACHE.get((indent, ensure_ascii))
        if levels is None:
            with _CACHE_LOCK:
                levels = _CACHE.setdefault((indent, ensure_ascii), _Levels(indent, ensure_ascii))
        out: list[str] = []
        try:
            _emit(obj, 0, out, levels, set())
        except (_Unwritten, TypeError, ValueError, RecursionError):
            pass  # json.dumps writes it, or raises its own exception (not chained to the walk's)
        else:
            return "".join(out)
    return json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii, default=default)


def _key(key: Any) -> str:
    """A mapping key of one of :data:`_SCALARS` as the standard library writes it (a string first)."""
    kind = type(key)
    if kind is str:
        return key  # type: ignore[no-any-return]
    if kind is float:
        return _float_text(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    return int.__repr__(key)


def _float_text(value: float) -> str:
    """A float as the standard library's Python encoder writes it (``allow_nan``: the JavaScript names)."""
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _emit(o: Any, depth: int, out: list[str], levels: _Levels, path: set[int]) -> None:
    """Append the indented text of ``o``, a value at ``depth`` levels of nesting, to ``out``; raise
    :class:`_Unwritten` for what ``json.dumps`` must write (see the module docstring)."""
    inner = depth + 1
    if len(levels.at) <= inner:
        levels.grow(inner)
    kind = type(o)
    if kind is dict:
        if not o:
            out.append("{}")
            return
        if not set(map(type, o)) <= _SCALARS:
            raise _Unwritten
        inside = set(map(type, o.values()))
    elif kind is list or kind is tuple:
        if not o:
            out.append("[]")
            return
        inside = set(map(type, o))
    elif kind in _SCALARS:
        out.append("".join(levels.at[inner][2](o, 0)))
        return
    else:
        raise _Unwritten
    sep, first, flat = levels.at[inner]
    close = levels.at[depth][1]
    if inside <= _SCALARS:  # flat: the C encoder writes it, items already on their own lines
        text = "".join(flat(o, 0))
        out.append(text[0] + first + text[1:-1] + close + text[-1])
        return
    marker = id(o)
    if marker in path:
        raise _Unwritten  # a cycle: json.dumps says so
    path.add(marker)
    if kind is dict:
        quote = levels.quote
        out.append("{")
        for k, v in o.items():
            out.append(first)
            first = sep
            out.append(quote(_key(k)))
            out.append(": ")
            _emit(v, inner, out, levels, path)
        out.append(close + "}")
    else:
        out.append("[")
        for v in o:
            out.append(first)
            first = sep
            _emit(v, inner, out, levels, path)
        out.append(close + "]")
    path.discard(marker)


__all__ = ["dumps_indented"]
