"""The code ``dataclasses`` generates for skdbg's record classes, compiled once and kept beside the
package's bytecode.

Why: ``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and (frozen)
``__setattr__``/``__delattr__`` as source text and compiles it with ``exec`` when the class is created,
on every start of the program. skdbg defines about 180 record classes; compiling their ~950 small
functions took ~60 ms of the ~145 ms ``analyze`` spends importing (Python 3.11), a third of a small
scene's whole run. A given text always compiles to the same code object, so, as Python does for
modules in ``__pycache__``, the code is compiled once, stored, and read back on later starts: the file
is opened and its index read (~0.2 ms for ~1,800 texts); each text's entry is read, checked and decoded
only when a class asks for it (:class:`_Index`).

How: :func:`install` gives the ``dataclasses`` module an ``exec`` of its own. This relies on one detail
of CPython's ``dataclasses``, true from 3.10 to 3.13: it runs the generated text by calling the name
``exec``, which it looks up in its module globals before the builtins. The replacement changes only
where the code object comes from, and only for texts of skdbg's own modules (a bounded, known set): the
text is looked up in the stored table, compiled when absent, and run by the builtin ``exec`` with the
same namespaces. Any other text (Textual's, pandas', a user's classes) is compiled exactly as the
builtin would have compiled it for its caller and run the same way, so nothing else in the process
changes. Should a later Python stop calling ``exec`` by name, the classes are simply compiled as before.
The table is read on the first class made: a command that makes none (``--help``) never reads it.

Where: ``dataclass_code.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder, found,
trusted and checked as :mod:`skdbg.pycache_store` says (an indexed table: a damaged entry is one text
absent); a text absent from the file is compiled, and the file rewritten with it. New entries are
written when the program exits, unless bytecode writing is off (``PYTHONDONTWRITEBYTECODE``,
``python -B``) or the folder cannot be written.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import dataclasses
import marshal
import sys
import threading
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from operator import gt
from pathlib import Path
from types import CodeType
from typing import Any

from skdbg.pycache_store import Blob, read_indexed, store_path, write_indexed

#: the top-level package name of the modules whose dataclasses are served from the table
_OURS = "skdbg"
#: a table above this many texts is written back with this run's texts only. skdbg's classes make
#: ~1,800 texts (~2.5 MB) when every module is imported; more means a development checkout's edited
#: classes left old texts behind (the index of each 1,000 costs ~0.1 ms to read at every start)
MAX_ENTRIES = 4096
#: first item of the file's head: what the file is, in which layout
FILE_KIND = "skdbg-dataclass-code-4"
#: the ``from __future__`` flags the builtin ``exec`` of a text takes from its caller's code (CPython's
#: ``PyCF_MASK``: every feature but the two whose flags are obsolete, nested_scopes and generators)
_FUTURE_FLAGS = 0
for _feature in set(__future__.all_feature_names) - {"nested_scopes", "generators"}:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
#: 3.13's ``frame.f_locals`` of a function's or an inlined comprehension's frame (PEP 667): ``locals()``
#: and the builtin ``exec`` take a snapshot of it, never the proxy itself
_FRAME_LOCALS_PROXY = type((lambda: sys._getframe().f_locals)()) if sys.version_info >= (3, 13) else None

_builtin_exec = builtins.exec


class _Index:
    """A stored table as read: its entries' keys (sorted), where each entry ends in the blob and each
    entry's CRC, three arrays of unsigned 32-bit numbers; and the blob of entries, each
    ``marshal.dumps((text, marshalled code))``, read from the file (:class:`~skdbg.pycache_store.Blob`)
    only when a run asks for the entry's text, then checked (its CRC) and unmarshalled.

    Why: ``analyze`` makes ~170 classes from ~500 of the ~1,800 texts of a table that holds every
    module's classes. Read and unmarshalled whole at the start (the table as one marshalled dict), it
    cost ~5.5 ms and ~1,850 page faults before the plog scan's child could be forked; its index alone
    costs ~0.2 ms, and each entry a ``pread``."""

    __slots__ = ("_whole", "blob", "crcs", "ends", "keys")

    def __init__(self, keys: array[int], ends: array[int], crcs: array[int], blob: Blob | None) -> None:
        self.keys = keys
        self.ends = ends
        self.crcs = crcs
        self.blob = blob
        self._whole: bytes | None = None  # the blob read at once, for a walk over every entry

    def __len__(self) -> int:
        return len(self.keys)

    def marshalled(self, text: str) -> bytes | None:
        """The marshalled code stored for ``text``; None when absent, or its entry is damaged."""
        keys = self.keys
        key = _key(text)
        at = bisect_left(keys, key)
        while at < len(keys) and keys[at] == key:  # texts of one key (rare): each entry is read
            entry = self._entry(at)
            if entry is not None and entry[0] == text:
                return entry[1]
            at += 1
        return None

    def entries(self) -> dict[str, bytes]:
        """Every entry that reads as one, under its own text's key: text -> marshalled code."""
        return {text: code for text, code, _ in self._walk()}

    def raw_entries(self) -> dict[str, bytes]:
        """:meth:`entries`, each as its stored bytes (what a rewrite copies)."""
        return {text: raw for text, _, raw in self._walk()}

    def intact(self) -> bool:
        """Every entry reads as one, under its own text's key (what :func:`load` asks before it gives
        the table)."""
        return sum(1 for _ in self._walk()) == len(self.keys)

    def _walk(self) -> Iterator[tuple[str, bytes, bytes]]:
        """(text, marshalled code, stored bytes) of every entry that reads as one, under its own key."""
        if self._whole is None and self.blob is not None and len(self.ends):
            self._whole = self.blob.read(0, self.ends[-1])
        for at in range(len(self.keys)):
            entry = self._entry(at)
            if entry is not None and _key(entry[0]) == self.keys[at]:
                yield entry

    def _entry(self, at: int) -> tuple[str, bytes, bytes] | None:
        """Entry ``at``: (text, marshalled code, its stored bytes); None when it does not read as one."""
        start, stop = self.ends[at - 1] if at else 0, self.ends[at]
        if self._whole is not None:
            raw = self._whole[start:stop]
        else:
            raw = self.blob.read(start, stop) if self.blob is not None else b""
        if len(raw) != stop - start or zlib.crc32(raw) != self.crcs[at]:
            return None
        try:  # the CRC held: only a file written wrong gets past it, and then marshal may raise
            entry = marshal.loads(raw)
        except Exception:
            return None
        if (
            type(entry) is not tuple
            or len(entry) != 2
            or type(entry[0]) is not str
            or type(entry[1]) is not bytes
        ):
            return None
        return entry[0], entry[1], raw


def _key(text: str) -> int:
    """The index key of ``text``: its CRC-32 (two texts may share one: every entry of a key is tried,
    and an entry is used only for its own text)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _numbers(data: object) -> array[int] | None:
    """A stored array of unsigned 32-bit numbers (little-endian bytes); None when it is not one."""
    if type(data) is not bytes or len(data) % 4:
        return None
    out = array("I")
    if out.itemsize != 4:  # no 4-byte unsigned int here: no table
        return None
    out.frombytes(data)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _stored_numbers(values: array[int]) -> bytes:
    if sys.byteorder != "little":
        values = array("I", values)
        values.byteswap()
    return values.tobytes()


_NO_INDEX = _Index(array("I"), array("I"), array("I"), None)


class _Table:
    """This run's texts and code objects: the stored ones (read on first use, each decoded when first
    asked for) and the ones compiled this run. ``codes`` holds every text this run asked for."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.stored: _Index | None = None  # None: not read yet
        self.codes: dict[str, CodeType] = {}  # decoded or compiled in this run: the texts used
        self.fresh: dict[str, CodeType] = {}  # compiled in this run: the file lacked them
        self.loaded = 0
        self.hits = 0

    @property
    def compiled(self) -> int:
        return len(self.fresh)

    def _stored(self) -> _Index:
        stored = self.stored
        if stored is None:
            with self.lock:
                if self.stored is None:
                    self.stored = (read_index(self.path) if self.path is not None else None) or _NO_INDEX
                    self.loaded = len(self.stored)
                stored = self.stored
        return stored

    def code_of(self, text: str) -> CodeType:
        code = self.codes.get(text)
        if code is None:
            raw = self._stored().marshalled(text)
            code = _decode(raw) if raw is not None else None
            if code is None:  # absent, or an entry that is not code (then rewritten)
                code = compile(text, "<string>", "exec", dont_inherit=True)  # as dataclasses' exec would
                with self.lock:
                    self.fresh[text] = code
            else:
                self.hits += 1
            self.codes[text] = code
        else:
            self.hits += 1
        return code


def _decode(raw: bytes) -> CodeType | None:
    """One stored entry's code object; None when it is not one (the entry's CRC held, so only a file
    written wrong gets here)."""
    try:
        code = marshal.loads(raw)
    except Exception:
        return None
    return code if type(code) is CodeType else None


_table: _Table | None = None


def cache_path() -> Path | None:
    """Where this interpreter's table lives; None when this Python keeps no bytecode cache."""
    return store_path("dataclass_code")


def read_index(path: Path) -> _Index | None:
    """The table stored at ``path``, its entries still unread (:class:`_Index`); None when the file is
    absent, unreadable, damaged in its index, of another Python or layout, or not trusted
    (:mod:`skdbg.pycache_store`). Never raises: a bad file must not stop the program."""
    got = read_indexed(path, FILE_KIND)
    if got is None:
        return None
    index, blob = got
    if type(index) is not tuple or len(index) != 3:
        blob.close()
        return None
    keys, ends, crcs = map(_numbers, index)
    if keys is None or ends is None or crcs is None or not len(keys) == len(ends) == len(crcs):
        blob.close()
        return None
    if any(map(gt, keys, keys[1:])):
        blob.close()
        return None  # keys out of order: the lookup's search would miss some
    return _Index(keys, ends, crcs, blob)


def load(path: Path) -> dict[str, bytes]:
    """The whole table stored at ``path``, text -> marshalled code (what the tests read); empty when
    :func:`read_index` gives nothing or any entry is damaged. (A run reads entries one by one, and a
    damaged entry is then one text compiled: :class:`_Index`.)"""
    index = read_index(path)
    if index is None or not index.intact():
        return {}
    return index.entries()


def save(path: Path, codes: Mapping[str, CodeType | bytes]) -> bool:
    """Write ``codes`` (code objects, or marshalled code as :func:`load` gives it) to ``path``
    atomically; False, and nothing changed, when the folder cannot be written."""
    return _write(path, {text: _entry_bytes(text, code) for text, code in codes.items()})


def _entry_bytes(text: str, code: CodeType | bytes) -> bytes:
    return marshal.dumps((text, code if type(code) is bytes else marshal.dumps(code)))


def _write(path: Path, entries: Mapping[str, bytes]) -> bool:
    """Write the table of ``entries`` (text -> stored bytes of its entry), sorted by key."""
    ordered = sorted((_key(text), raw) for text, raw in entries.items())
    keys, ends, crcs = array("I"), array("I"), array("I")
    at = 0
    for key, raw in ordered:
        at += len(raw)
        keys.append(key)
        ends.append(at)
        crcs.append(zlib.crc32(raw))
    index = tuple(map(_stored_numbers, (keys, ends, crcs)))
    return write_indexed(path, FILE_KIND, index, b"".join(raw for _, raw in ordered))


#: per set of ``__future__`` flags: a function that calls the builtin ``exec`` from code compiled with
#: those flags, so that the builtin compiles a text as it would for a caller with them
_TRAMPOLINES: dict[int, Any] = {}


def _trampoline(flags: int, builtins_ns: Any = None) -> Any:
    """A function that calls the builtin ``exec`` from a frame compiled with ``flags`` and whose
    builtins are ``builtins_ns`` (the caller's: what the builtin puts in a globals that lacks
    ``__builtins__``); one is kept per ``flags`` for the usual builtins."""
    if builtins_ns is None or builtins_ns is vars(builtins):
        hop = _TRAMPOLINES.get(flags)
        if hop is None:
            hop = _TRAMPOLINES[flags] = _make_trampoline(flags, builtins)
        return hop
    return _make_trampoline(flags, builtins_ns)


def _make_trampoline(flags: int, builtins_ns: Any) -> Any:
    code = compile(
        "lambda *a, **k: exec(*a, **k)", "<exec trampoline>", "eval", flags=flags, dont_inherit=True
    )
    return eval(code, {"exec": _builtin_exec, "__builtins__": builtins_ns})


def _exec(*args: Any, **kwargs: Any) -> None:
    """``exec`` as ``dataclasses`` calls it: ``exec(text, globals, namespace)``. A text of one of
    skdbg's classes runs the table's code. Every other call is the builtin's own, made for the caller:
    the builtin checks the arguments, raises its own errors and compiles a text with the caller's
    ``__future__`` flags; only namespaces left out are filled in first from the caller's, as the
    builtin would have taken them from the frame that called it. (Two frames of this module's stand
    between: tracebacks and ``sys._getframe`` inside the text show them.)"""
    try:
        caller = sys._getframe(1)
    except ValueError:  # no Python caller (a C callback, atexit, a _thread target): nothing to take
        _trampoline(0)(*args, **kwargs)
        return
    inherited = caller.f_code.co_flags & _FUTURE_FLAGS  # what the builtin takes from its caller
    table = _table
    if (
        table is not None
        and not kwargs
        and len(args) == 3
        and not inherited
        and type(args[0]) is str
        and type(args[1]) is dict
        and type(args[2]) is dict
        and type(name := args[1].get("__name__")) is str
        and name.partition(".")[0] == _OURS
    ):
        _builtin_exec(table.code_of(args[0]), args[1], args[2])
        return
    args = _with_default_namespaces(args, kwargs, caller)
    _trampoline(inherited, caller.f_builtins)(*args, **kwargs)


def _with_default_namespaces(args: tuple[Any, ...], kwargs: dict[str, Any], caller: Any) -> tuple[Any, ...]:
    """``args`` with the globals and locals the builtin would take from ``caller`` where they are left
    out or None (moved from ``kwargs`` when named there); unchanged when the builtin refuses the call,
    so that it raises its own error."""
    by_name = sys.version_info >= (3, 13)  # the namespaces are keywords too from 3.13
    named = [k for k in ("globals", "locals") if k in kwargs]
    if not args or len(args) > 3 or (named and not by_name):
        return args
    if ("globals" in named and len(args) > 1) or ("locals" in named and len(args) > 2):
        return args  # given by position and by name
    given = [*args, None, None][:3]
    for slot, name in ((1, "globals"), (2, "locals")):
        if name in named:
            given[slot] = kwargs.pop(name)
    if given[1] is None:
        given[1] = caller.f_globals
        if given[2] is None:
            local_names = caller.f_locals
            if type(local_names) is _FRAME_LOCALS_PROXY:  # 3.13: what locals() gives, a snapshot
                local_names = dict(local_names)
            given[2] = local_names
    return tuple(given)


def _store() -> None:
    """At exit: write the table when this run compiled texts it lacked (bounded by MAX_ENTRIES)."""
    table = _table
    if table is None or table.path is None or table.stored is None or not table.fresh:
        return
    if sys.dont_write_bytecode:
        return
    # the stored entries copied as they are (each checked), this run's compiled ones added
    entries = table.stored.raw_entries()
    entries.update((text, _entry_bytes(text, code)) for text, code in table.fresh.items())
    if len(entries) > MAX_ENTRIES:
        entries = {k: v for k, v in entries.items() if k in table.codes}
    _write(table.path, entries)


def install(path: Path | None = None) -> None:
    """Serve ``dataclasses``' ``exec`` from the table at ``path`` (default :func:`cache_path`); the
    first call of a process decides, later ones do nothing."""
    global _table
    if _table is not None:
        return
    _table = _Table(cache_path() if path is None else path)
    vars(dataclasses)["exec"] = _exec
    atexit.register(_store)


def generated_code(text: str) -> CodeType:
    """The code of a function text skdbg's own modules generate and run with ``exec`` (the parsers'
    record builders): served from the same table as the record classes' code, compiled once, when the
    table is installed; compiled here otherwise. Why: the ~70 builders cost ~8 ms of compiling at every
    start of ``analyze``, like the classes' code did. The text must need no ``__future__`` feature
    (they have no annotations): it is compiled without the caller's."""
    table = _table
    if table is None:
        return compile(text, "<string>", "exec", dont_inherit=True)
    return table.code_of(text)


def stats() -> dict[str, int]:
    """This run's counts (what the tests check): entries in the file's index (damaged ones too),
    texts served from the file or from this run's codes, texts compiled."""
    table = _table
    if table is None:
        return {"loaded": 0, "hits": 0, "compiled": 0}
    return {"loaded": table.loaded, "hits": table.hits, "compiled": table.compiled}


__all__ = [
    "FILE_KIND",
    "MAX_ENTRIES",
    "cache_path",
    "generated_code",
    "install",
    "load",
    "read_index",
    "save",
    "stats",
]
