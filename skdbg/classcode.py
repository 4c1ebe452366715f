"""The code ``dataclasses`` generates for skdbg's record classes, compiled once and kept beside the
package's bytecode.

Why: ``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and (frozen)
``__setattr__``/``__delattr__`` as source text and compiles it with ``exec`` when the class is created,
on every start of the program. skdbg defines about 180 record classes; compiling their ~950 small
functions took ~60 ms of the ~145 ms ``analyze`` spends importing (Python 3.11), a third of a small
scene's whole run. A given text always compiles to the same code object, so, as Python does for
modules in ``__pycache__``, the code is compiled once, stored, and read back on later starts (~3 ms).

How: :func:`install` gives the ``dataclasses`` module an ``exec`` of its own (``exec`` is a name that
module looks up in its globals before the builtins, on every Python from 3.10 to 3.13). It changes only
where the code object comes from: the text is looked up in the stored table, compiled when absent, and
run by the builtin ``exec`` with the same globals and locals. Only classes of skdbg's own modules are
served from the table (a bounded, known set); any other caller's text goes to the builtin untouched. The
table is read on the first class made, so a command that makes none (``--help``) never reads it.

Where: ``dataclass-code.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder (under
``PYTHONPYCACHEPREFIX`` when that is set), next to the interpreter's ``.pyc`` files. The file names the
interpreter's bytecode magic number; a file of another Python, an unreadable or damaged one, or one that
neither this user nor root owns, or that group or others may write, is ignored and the code compiled.
New entries are written when the program exits, atomically and owner-only, unless bytecode writing is
off (``PYTHONDONTWRITEBYTECODE``, ``python -B``) or the folder cannot be written.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import stat
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

#: the top-level package name of the modules whose dataclasses are served from the table
_OURS = "skdbg"
#: a table above this many texts is written back with this run's texts only (a development checkout's
#: edited classes leave their old texts behind; an install's set never changes)
MAX_ENTRIES = 4096
#: first item of the stored tuple: what the file is, in which layout
FILE_KIND = "skdbg-dataclass-code-1"

_builtin_exec = builtins.exec


class _Table:
    """This run's texts and code objects: the stored ones (read on first use), the new ones, the used."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.codes: dict[str, CodeType] | None = None  # None: not read yet
        self.loaded = 0
        self.used: set[str] = set()
        self.compiled = 0
        self.hits = 0

    def code_of(self, text: str) -> CodeType:
        codes = self.codes
        if codes is None:
            with self.lock:
                if self.codes is None:
                    self.codes = load(self.path) if self.path is not None else {}
                    self.loaded = len(self.codes)
                codes = self.codes
        code = codes.get(text)
        if code is None:
            # dont_inherit: compiled as dataclasses' own ``exec`` compiles it, without this module's
            # ``from __future__`` flags (annotations of the generated functions would become strings)
            code = compile(text, "<string>", "exec", dont_inherit=True)
            with self.lock:
                codes[text] = code
                self.compiled += 1
        else:
            self.hits += 1
        self.used.add(text)
        return code


_table: _Table | None = None


def cache_path() -> Path | None:
    """Where this interpreter's table lives; None when this Python keeps no bytecode cache."""
    import importlib.util

    try:
        # a made-up module name: its bytecode path carries the cache tag, the -O level and the prefix
        pyc = importlib.util.cache_from_source(str(Path(__file__).with_name("dataclass_code.py")))
    except NotImplementedError:  # sys.implementation.cache_tag is None
        return None
    return Path(pyc).with_suffix(".marshal")


def _magic() -> bytes:
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def _trusted(st: os.stat_result) -> bool:
    """As trusted as the ``.pyc`` files beside it: a regular file of this user or root that group and
    others cannot write."""
    if not stat.S_ISREG(st.st_mode) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "geteuid") or st.st_uid in (os.geteuid(), 0)


def load(path: Path) -> dict[str, CodeType]:
    """The table stored at ``path``; empty when it is absent, unreadable, damaged, of another Python
    or not trusted (:func:`_trusted`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as fh:
            if not _trusted(os.fstat(fh.fileno())):
                return {}
            data = fh.read()
    except OSError:
        return {}
    try:
        kind, magic, codes = marshal.loads(data)
    except (EOFError, ValueError, TypeError):  # damaged, cut, or not a 3-tuple
        return {}
    if kind != FILE_KIND or magic != _magic() or type(codes) is not dict:
        return {}
    if not all(type(k) is str and type(v) is CodeType for k, v in codes.items()):
        return {}
    return codes


def save(path: Path, codes: dict[str, CodeType]) -> bool:
    """Write ``codes`` to ``path`` atomically (a temporary file beside it, then a rename); False, and
    nothing changed, when the folder cannot be written."""
    import tempfile  # only when writing: its imports cost ~3 ms of every start

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(marshal.dumps((FILE_KIND, _magic(), codes)))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def _exec(source: Any, namespace: Any = None, local_names: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it; a text of one of skdbg's classes runs the table's code."""
    if namespace is None:  # exec's default: the caller's namespaces (dataclasses always passes its own)
        frame = sys._getframe(1)
        namespace = frame.f_globals
        if local_names is None:
            local_names = frame.f_locals
    table = _table
    if (
        table is not None
        and type(source) is str
        and type(namespace) is dict
        and str(namespace.get("__name__", "")).partition(".")[0] == _OURS
    ):
        source = table.code_of(source)
    _builtin_exec(source, namespace, local_names)


def _store() -> None:
    """At exit: write the table when this run compiled texts it lacked (bounded by MAX_ENTRIES)."""
    table = _table
    if table is None or table.path is None or table.codes is None or not table.compiled:
        return
    if sys.dont_write_bytecode:
        return
    codes = table.codes
    if len(codes) > MAX_ENTRIES:
        codes = {k: v for k, v in codes.items() if k in table.used}
    save(table.path, codes)


def install(path: Path | None = None) -> None:
    """Serve ``dataclasses``' ``exec`` from the table at ``path`` (default :func:`cache_path`); the
    first call of a process decides, later ones do nothing."""
    global _table
    if _table is not None:
        return
    _table = _Table(cache_path() if path is None else path)
    vars(dataclasses)["exec"] = _exec
    atexit.register(_store)


def stats() -> dict[str, int]:
    """This run's counts: texts read from the file, served from it, compiled (what the tests check)."""
    table = _table
    if table is None:
        return {"loaded": 0, "hits": 0, "compiled": 0}
    return {"loaded": table.loaded, "hits": table.hits, "compiled": table.compiled}


__all__ = ["FILE_KIND", "MAX_ENTRIES", "cache_path", "install", "load", "save", "stats"]
