"""The compiled form of regular expressions, kept beside the package's bytecode.

Why: ``re`` turns a pattern's text into the code its matching engine runs by parsing it in Python, on
every start of the program. A small scene's ``skdbg analyze`` compiles about 210 patterns (skdbg's line
grammars, and those of click, json and the standard library); that took 50–65 ms of its ~0.35 s on the
2-core test machine. A given text and flags always compile to the same code on a given Python, so, as
for the record classes' code (:mod:`skdbg.classcode`), the result is stored once and read back.

How: ``re`` compiles a pattern it has not cached in memory by calling ``compile`` of its compiler
module (``re._compiler`` from Python 3.11, ``sre_compile`` on 3.10), whose last step hands the parsed
code to ``_sre.compile``. :func:`install` replaces that ``compile`` function with one that looks the
(text, flags) up in the table and, when found, calls ``_sre.compile`` with the stored arguments. When
absent it runs the original, noting the arguments of its ``_sre.compile`` call (the compiler module is
given a copy of ``_sre`` whose ``compile`` notes them, per thread) and keeps them for the table. A
parsed pattern (``re.Scanner``'s), a ``re.DEBUG`` compile, or an argument marshal cannot store goes
through untouched. :func:`install` does nothing on a Python whose compiler module lacks these names,
and patterns are then compiled as before. A test compares every stored pattern with a fresh compile:
a ``re.Pattern`` equals another only with the same text, flags and code.

Where: ``regex_code.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder, found,
trusted and checked as :mod:`skdbg.pycache_store` says. New entries are written when the program
exits, unless bytecode writing is off (``PYTHONDONTWRITEBYTECODE``, ``python -B``) or the folder cannot
be written. The table is read on the first pattern compiled.
"""

from __future__ import annotations

import atexit
import importlib
import marshal
import re
import sys
import threading
import types
from pathlib import Path
from typing import Any

from skdbg.pycache_store import read_payload, store_path, write_payload

#: what the file is, in which layout
FILE_KIND = "skdbg-regex-code-1"
#: a table above this many patterns is written back with this run's patterns only (edited patterns of a
#: development checkout leave old ones behind; all of skdbg's commands together compile about 600)
MAX_ENTRIES = 2048

Key = tuple[str | bytes, int]


def _plain(value: Any) -> Any:
    """``value`` with every int subclass made a plain int, all the way down: ``re``'s opcodes are int
    subclasses, which marshal refuses, and ``_sre.compile`` reads them as ints."""
    if value is None or type(value) in (str, bytes, int, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if type(value) is list:
        return [_plain(v) for v in value]
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    if type(value) is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"not storable: {type(value).__name__}")


class _Table:
    """The stored arguments (read on first use) and those noted in this run."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.stored: dict[Key, tuple[Any, ...]] | None = None
        self.used: set[Key] = set()
        self.fresh: dict[Key, tuple[Any, ...]] = {}
        self.loaded = 0
        self.hits = 0

    def lookup(self, key: Key) -> tuple[Any, ...] | None:
        stored = self.stored
        if stored is None:
            with self.lock:
                if self.stored is None:
                    self.stored = load(self.path) if self.path is not None else {}
                    self.loaded = len(self.stored)
                stored = self.stored
        return stored.get(key)


#: re's matching engine (a C module without type stubs)
_sre: Any = importlib.import_module("_sre")
_table: _Table | None = None
_noting = threading.local()  # .args: the list this thread's _sre.compile calls are noted in, or None
_DEBUG = int(re.DEBUG)


def cache_path() -> Path | None:
    """Where this interpreter's table lives; None when this Python keeps no bytecode cache."""
    return store_path("regex_code")


def load(path: Path) -> dict[Key, tuple[Any, ...]]:
    """The table stored at ``path``; empty when the file is absent, unreadable, damaged, of another
    Python or not trusted. Never raises."""
    entries = read_payload(path, FILE_KIND)
    if type(entries) is not dict:
        return {}
    for key, args in entries.items():
        if not (
            type(key) is tuple
            and len(key) == 2
            and type(key[0]) in (str, bytes)
            and type(key[1]) is int
            and type(args) is tuple
        ):
            return {}
    return entries


def save(path: Path, entries: dict[Key, tuple[Any, ...]]) -> bool:
    """Write ``entries`` to ``path`` atomically; False, and nothing changed, when it cannot be written."""
    return write_payload(path, FILE_KIND, entries)


def _noting_compile(*args: Any) -> Any:
    """``_sre.compile`` for the compiler module: notes its arguments when this thread asks."""
    noted = getattr(_noting, "args", None)
    if noted is not None:
        noted.append(args)
    return _sre.compile(*args)


def _compile_with(original: Any) -> Any:
    def compile(p: Any, flags: int = 0) -> Any:  # noqa: A001 (the compiler module's name for it)
        """The compiler module's ``compile``, served from the table for a pattern text."""
        table = _table
        if table is None or type(p) not in (str, bytes) or type(flags) is not int or flags & _DEBUG:
            return original(p, flags)
        key = (p, flags)
        args = table.lookup(key)
        if args is not None:
            try:
                made = _sre.compile(*args)
            except Exception:  # an entry this Python refuses: compiled afresh, and the entry replaced
                made = None
            if made is not None:
                table.hits += 1
                table.used.add(key)
                return made
        outer = getattr(_noting, "args", None)
        noted: list[tuple[Any, ...]] = []
        _noting.args = noted
        try:
            made = original(p, flags)
        finally:
            _noting.args = outer
        if len(noted) == 1:
            try:
                entry = _plain(noted[0])
                marshal.dumps(entry)
            except (TypeError, ValueError):
                return made
            with table.lock:
                table.fresh[key] = entry
                table.used.add(key)
        return made

    return compile


def _store() -> None:
    """At exit: write the table when this run compiled patterns it lacked (bounded by MAX_ENTRIES)."""
    table = _table
    if table is None or table.path is None or table.stored is None or not table.fresh:
        return
    if sys.dont_write_bytecode:
        return
    entries = {**table.stored, **table.fresh}
    if len(entries) > MAX_ENTRIES:
        entries = {k: v for k, v in entries.items() if k in table.used}
    save(table.path, entries)


def _compiler_module() -> Any:
    """The module whose ``compile`` ``re`` calls on a miss of its in-memory cache."""
    compiler = getattr(re, "_compiler", None)
    if compiler is None:  # Python 3.10
        compiler = sys.modules.get("sre_compile")
    return compiler


def install(path: Path | None = None) -> None:
    """Serve ``re``'s compiles from the table at ``path`` (default :func:`cache_path`); the first call of
    a process decides, later ones do nothing."""
    global _table
    compiler = _compiler_module()
    if _table is not None or compiler is None:
        return
    if getattr(compiler, "_sre", None) is not _sre or not callable(getattr(compiler, "compile", None)):
        return  # another layout of re's internals: patterns are compiled as before
    _table = _Table(cache_path() if path is None else path)
    noting_sre = types.ModuleType("_sre")
    noting_sre.__dict__.update(vars(_sre))
    noting_sre.compile = _noting_compile  # type: ignore[attr-defined]
    compiler._sre = noting_sre
    compiler.compile = _compile_with(compiler.compile)
    atexit.register(_store)


def stats() -> dict[str, int]:
    """This run's counts: patterns read from the file, served from it, compiled and noted."""
    table = _table
    if table is None:
        return {"loaded": 0, "hits": 0, "compiled": 0}
    return {"loaded": table.loaded, "hits": table.hits, "compiled": len(table.fresh)}


__all__ = ["FILE_KIND", "MAX_ENTRIES", "cache_path", "install", "load", "save", "stats"]
