"""skdbg's own regular expressions, compiled once and kept beside the package's bytecode.

Why: ``re`` parses each pattern's text in Python, on every start of the program, before it can match
with it. The line grammars of the sk_meta parsers are about 210 patterns; compiling them took 35–40 ms
of a small scene's ~0.35 s ``skdbg analyze`` on the 2-core test machine, and serving them from the
table takes about a millisecond. A given text and flags always compile to the same matcher code on
one Python release, so, as for the record classes' code (:mod:`skdbg.classcode`), the code is stored
once and handed to ``re``'s matching engine on later starts.

What: only patterns passed to :func:`compile` are stored: the grammars skdbg's modules define in their
source (a bounded, known set). Patterns built from data (a search text typed in the TUI, a pattern
holding a scene's pids) are compiled with ``re.compile`` as usual and never stored. A pattern whose
text could make ``re``'s parser warn (:func:`may_warn`) is never stored either, so no warning is lost;
none of skdbg's grammars could (a test checks that all of them are stored).

How: on a miss, :func:`compile` returns ``re.compile(pattern, flags)``. When the table will be
written (bytecode writing is on and its folder writable, asked once), it also works out the arguments
``re`` hands its engine (``_sre.compile``) the way ``re``'s compiler does (the parser's tree, the
compiler's code, the group names), and keeps them only if the pattern they make equals ``re``'s own:
``re.Pattern`` equality compares the text, the flags and the code. On a hit, ``_sre.compile`` gets
the stored arguments. On a Python whose ``re`` lacks the compiler functions used here, every pattern
is compiled by ``re.compile`` and nothing is stored.

Where: ``regex_code.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder, found,
trusted and checked as :mod:`skdbg.pycache_store` says. The file also names the exact Python release (a
patch release may fix ``re``'s compiler): another release's file is ignored and rewritten. New entries
are written when the program exits, unless bytecode writing is off (``PYTHONDONTWRITEBYTECODE``,
``python -B``) or the folder cannot be written.
"""

from __future__ import annotations

import atexit
import importlib
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, AnyStr

from skdbg.pycache_store import read_payload, store_path, write_payload

#: what the file is, for which exact Python release
FILE_KIND = f"skdbg-regex-code-1 {sys.version}"
#: a table above this many patterns is written back with this run's patterns only (a development
#: checkout's edited patterns leave old ones behind); skdbg defines a few hundred
MAX_ENTRIES = 1024
#: Python 3.10 warns of a global inline flag after the start of the pattern
_LATE_FLAGS_WARN = sys.version_info < (3, 11)
_FLAG_LETTERS = frozenset("aiLmsux-")
#: flags whose compile warns or prints: re.DEBUG, and re.TEMPLATE where it still exists (3.11, 3.12
#: warn it is deprecated)
_NEVER_STORED = int(re.DEBUG) | int(getattr(re, "TEMPLATE", 0))

Key = tuple[bool, str | bytes, int]

_sre: Any = importlib.import_module("_sre")  # re's matching engine (a C module without type stubs)


def _compiler_parts() -> tuple[Any, Any] | None:
    """``(parse, code)``: the functions ``re``'s compiler turns a text into engine code with; None on
    a Python laid out otherwise."""
    try:
        parser: Any = importlib.import_module("re._parser")
        compiler: Any = importlib.import_module("re._compiler")
    except ImportError:  # Python 3.10
        parser = importlib.import_module("sre_parse")
        compiler = importlib.import_module("sre_compile")
    parse, code = getattr(parser, "parse", None), getattr(compiler, "_code", None)
    return (parse, code) if callable(parse) and callable(code) else None


def may_warn(pattern: str | bytes, flags: int = 0) -> bool:
    """True when ``re``'s parser could warn about ``pattern`` (Python 3.10 to 3.13), by a conservative
    reading of its text: a ``[`` or a doubled ``-&~|`` inside a set (a possible nested set or set
    operation), a conditional group reference (``(?(``), a non-ASCII text (a group name), an inline
    flag after the start (3.10), or a flag that warns. Escaped characters are skipped, so ``\\[[a]``
    (a literal ``[`` then a set) is not suspect."""
    if flags & _NEVER_STORED:
        return True
    text = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    if not text.isascii() or "(?(" in text:
        return True
    if _LATE_FLAGS_WARN:
        at = text.find("(?", 1)
        while at != -1:
            if text[at + 2 : at + 3] in _FLAG_LETTERS:
                return True
            at = text.find("(?", at + 1)
    i, n, in_set = 0, len(text), False
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if in_set:
            if ch == "]":
                in_set = False
            elif ch == "[" or (ch in "-&~|" and text[i + 1 : i + 2] == ch):
                return True
            i += 1
        elif ch == "[":
            i += 1
            if text[i : i + 1] == "[":
                return True
            if text[i : i + 1] == "^":
                i += 1
            if text[i : i + 1] == "]":  # a literal ] first in a set
                i += 1
            in_set = True
        else:
            i += 1
    return False


class _Table:
    """The stored arguments (read on the first compile) and those worked out in this run."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.stored: dict[Key, tuple[Any, ...]] | None = None
        self.used: set[Key] = set()
        self.fresh: dict[Key, tuple[Any, ...]] = {}
        self.hits = 0
        self.refused = 0  # patterns compiled but not stored (they could warn, or were misread)
        self._can_write: bool | None = None

    def get(self, key: Key) -> tuple[Any, ...] | None:
        if self.stored is None:
            with self.lock:
                if self.stored is None:
                    self.stored = load(self.path) if self.path is not None else {}
        return self.stored.get(key)

    @property
    def writable(self) -> bool:
        """The table will be written at exit: bytecode writing is on and its folder (or the nearest
        folder above it that exists) may be written, so a miss is worth working out (asked once)."""
        if self.path is None or sys.dont_write_bytecode:
            return False
        if self._can_write is None:
            folder = self.path.parent
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent
            self._can_write = folder.is_dir() and os.access(folder, os.W_OK) and not self.path.is_dir()
        return self._can_write


_table = _Table(store_path("regex_code"))
_parts = _compiler_parts()


def cache_path() -> Path | None:
    """Where this interpreter's table lives; None when this Python keeps no bytecode cache."""
    return _table.path


def load(path: Path) -> dict[Key, tuple[Any, ...]]:
    """The table stored at ``path``; empty when the file is absent, unreadable, damaged, of another
    Python release or not trusted. Never raises."""
    entries = read_payload(path, FILE_KIND)
    if type(entries) is not dict:
        return {}
    for key, args in entries.items():
        if not (
            type(key) is tuple
            and len(key) == 3
            and type(key[0]) is bool
            and type(key[1]) is (bytes if key[0] else str)
            and type(key[2]) is int
            and type(args) is tuple
            and args[:1] == (key[1],)  # the entry makes the pattern of its key
        ):
            return {}
    return entries


def save(path: Path, entries: dict[Key, tuple[Any, ...]]) -> bool:
    """Write ``entries`` to ``path`` atomically; False, and nothing changed, when it cannot be written."""
    return write_payload(path, FILE_KIND, entries)


def _plain(value: Any) -> Any:
    """``value`` with every int subclass made a plain int, all the way down: ``re``'s opcodes are int
    subclasses, which marshal cannot store, and the engine reads them as ints."""
    if value is None or type(value) in (str, bytes, int, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"not storable: {type(value).__name__}")


def engine_arguments(pattern: str | bytes, flags: int) -> tuple[Any, ...] | None:
    """What ``re``'s compiler hands ``_sre.compile`` for ``pattern`` and ``flags``, worked out as it
    does (None on a Python laid out otherwise)."""
    if _parts is None:
        return None
    parse, code_of = _parts
    tree = parse(pattern, flags)
    code = code_of(tree, flags)
    groupindex = dict(tree.state.groupdict)
    indexgroup: list[str | None] = [None] * tree.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    args = (pattern, flags | tree.state.flags, code, tree.state.groups - 1, groupindex, tuple(indexgroup))
    return tuple(_plain(a) for a in args)


def compile(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:  # noqa: A001
    """``re.compile(pattern, flags)`` for a pattern defined in skdbg's source: its engine code comes
    from the table when stored there (see the module docstring)."""
    flags = int(flags)
    key: Key = (isinstance(pattern, bytes), pattern, flags)
    args = _table.get(key) if type(pattern) in (str, bytes) and not flags & _NEVER_STORED else None
    if args is not None:
        try:
            made: re.Pattern[AnyStr] = _sre.compile(*args)
        except Exception:  # an entry the engine refuses: compiled as usual, and the entry replaced
            pass
        else:
            _table.hits += 1
            _table.used.add(key)
            return made
    made = re.compile(pattern, flags)
    if _table.writable and type(pattern) in (str, bytes):
        if may_warn(pattern, flags):
            _table.refused += 1
        else:
            _note(key, made)
    return made


def _note(key: Key, made: re.Pattern[Any]) -> None:
    """Keep the engine arguments of a pattern compiled in this run, if they make ``re``'s own pattern."""
    try:
        args = engine_arguments(key[1], key[2])
        if args is None or _sre.compile(*args) != made:
            _table.refused += 1
            return
    except Exception:  # a pattern re compiled but this reading of its compiler cannot: not stored
        _table.refused += 1
        return
    with _table.lock:
        _table.fresh[key] = args
        _table.used.add(key)


def _store() -> None:
    """At exit: write the table when this run compiled patterns it lacked (bounded by MAX_ENTRIES)."""
    table = _table
    if not table.fresh or table.path is None or not table.writable:
        return
    entries = {**(table.stored or {}), **table.fresh}
    if len(entries) > MAX_ENTRIES:
        entries = {k: v for k, v in entries.items() if k in table.used}
    save(table.path, entries)


atexit.register(_store)


def stats() -> dict[str, int]:
    """This run's counts: patterns served from the file, worked out to be added to it, and compiled
    but not stored (a text that could make ``re`` warn, or engine arguments that did not match)."""
    return {"hits": _table.hits, "compiled": len(_table.fresh), "refused": _table.refused}


__all__ = [
    "FILE_KIND",
    "MAX_ENTRIES",
    "cache_path",
    "compile",
    "engine_arguments",
    "load",
    "may_warn",
    "save",
    "stats",
]
