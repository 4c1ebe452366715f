"""``json.dumps(obj, indent=N)``'s exact text, about twice as fast before Python 3.13: the C encoder
writes each container that holds no container.

Why: with ``indent``, the standard library of Python 3.10–3.12 encodes in Python (its C encoder takes
no indentation before 3.13), a few generator steps per value. ``codegen adapt``'s manifest of 500
kernels (~0.8 MB) took ~30 ms of a ~0.45 s command that way, and ``analyze``'s JSON of a 2,000-ELF
scene ~14 ms, both after all other work. Most of such a document is flat containers (an artifact's
fields, a parameter's name and type, a list of names). Here the nesting is walked in Python and each
flat container is handed whole to the C encoder, with the item separator of its depth (``",\\n"`` and
the indentation): that is the indented text of the container but for the line break after its
opening bracket and before its closing one, which are added. A JSON string never holds a raw line
break, so nothing else in the text changes. From 3.13 on (C indentation), and where the C encoder is
missing, the standard library writes the text itself.

The text is the standard library's, byte for byte (tests/test_jsonindent.py compares the two on random
documents and on the real ones, on every Python the machine has). Whatever the walk cannot write (a
value or key the standard library refuses, a circular reference, nesting near the recursion limit)
is handed to the standard library, which raises its own exception or writes the text. Two corners
are not the standard library's: a float subclass whose comparisons lie is written by its value, as
the C encoder reads it, and nesting a few levels short of the recursion limit, where the standard
library gives up first, is written.
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

#: the message and exception of the standard library for an object it cannot encode
_DEFAULT = json.JSONEncoder().default

#: per depth ``d``: the separator between the items of a container at ``d`` levels of indentation
#: (``",\n"`` and the indentation), the line break and indentation before them, and the C encoder of
#: a flat container whose items sit there
_Level = tuple[str, str, Callable[..., Any]]


class _Levels:
    """The :data:`_Level` of each depth for one ``(indent, ensure_ascii)``, made as the walk first
    reaches it. Why a lock: a level is looked up by its index, so two threads adding levels at once
    must not leave one at the wrong place (every later text would be mis-indented)."""

    def __init__(self, indent: int, ensure_ascii: bool) -> None:
        self.unit = " " * indent
        self.quote = encode_basestring_ascii if ensure_ascii else encode_basestring
        self.at: list[_Level] = []
        self._lock = threading.Lock()

    def grow(self, depth: int) -> None:
        """Make the levels of every depth up to ``depth``."""
        assert c_make_encoder is not None
        with self._lock:
            while len(self.at) <= depth:
                d = len(self.at)
                sep = ",\n" + self.unit * d
                # no markers: a flat container holds no container, so it cannot hold itself (the walk
                # checks the others); allow_nan as the standard library's default
                encoder = c_make_encoder(None, _DEFAULT, self.quote, None, ": ", sep, False, False, True)
                self.at.append((sep, "\n" + self.unit * d, encoder))


_CACHE: dict[tuple[int, bool], _Levels] = {}
_CACHE_LOCK = threading.Lock()
_CONTAINERS = (dict, list, tuple)


def dumps_indented(obj: Any, *, indent: int = 2, ensure_ascii: bool = True) -> str:
    """``json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii)`` (same text, same exceptions)."""
    if c_make_encoder is None or _STDLIB_IN_C or type(indent) is not int:
        return json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii)
    levels = _CACHE.get((indent, ensure_ascii))
    if levels is None:
        with _CACHE_LOCK:
            levels = _CACHE.setdefault((indent, ensure_ascii), _Levels(indent, ensure_ascii))
    out: list[str] = []
    try:
        _emit(obj, 0, out, levels, set())
    except (TypeError, ValueError, RecursionError):
        # the standard library's own refusal (its exception, its message), or its text where the walk
        # alone gave up (a stack too deep for it)
        return json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii)
    return "".join(out)


def _key(key: Any) -> str:
    """A mapping key as the standard library writes it (converted to a string first when it is not
    one); a key it refuses raises a ``TypeError`` (the caller has the standard library say why)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _float_text(value: float) -> str:
    """A float as the standard library's Python encoder writes it (``allow_nan``: the JavaScript
    names), with its comparisons, in its order."""
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _emit(o: Any, depth: int, out: list[str], levels: _Levels, path: set[int]) -> None:
    """Append the indented text of ``o``, a value at ``depth`` levels of nesting, to ``out``."""
    inner = depth + 1
    if len(levels.at) <= inner:
        levels.grow(inner)
    if isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        # what the encoders iterate is items(): a subclass's values() need not agree with it
        values: Any = o.values() if type(o) is dict else [v for _, v in o.items()]
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        values = o
    else:
        out.append("".join(levels.at[inner][2](o, 0)))
        return
    sep, first, flat = levels.at[inner]
    close = levels.at[depth][1]
    for v in values:
        if isinstance(v, _CONTAINERS):
            break
    else:  # flat: the C encoder writes it, items already on their own lines
        text = "".join(flat(o, 0))
        out.append(text[0] + first + text[1:-1] + close + text[-1])
        return
    marker = id(o)
    if marker in path:
        raise ValueError("Circular reference detected")
    path.add(marker)
    if isinstance(o, dict):
        quote = levels.quote
        out.append("{")
        for k, v in o.items():
            out.append(first)
            first = sep
            out.append(quote(k if isinstance(k, str) else _key(k)))
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
