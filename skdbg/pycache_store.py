"""Tables of compiled things kept beside the package's bytecode, as Python keeps ``.pyc`` files.

Why a module of its own: two tables live there (the record classes' code, :mod:`skdbg.classcode`, and
the regular expressions' compiled form, :mod:`skdbg.regexcode`), and both must be found, trusted,
checked and written the same way.

Where: ``<stem>.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder (under
``PYTHONPYCACHEPREFIX`` when that is set), next to the interpreter's ``.pyc`` files. Files are written
atomically, readable as the package's sources are and writable by the owner only. A file that neither
this user nor root owns, or that group or others may write, reads as absent, as does an unreadable one.

Two layouts. A *payload* table (:func:`read_payload`, :func:`write_payload`: the regular expressions)
is one marshalled object; its file names its kind, the interpreter's bytecode magic number and a CRC-32
of the object, and a file of another kind or Python, a damaged or a cut one reads as absent. An
*indexed* table (:func:`read_indexed`, :func:`write_indexed`: the record classes' code) is such a head
holding an index, followed by raw entries read only when asked for (:class:`Blob`): the head is checked
the same way when the file is opened, each entry by its reader, with what the index says of it (its
CRC), when it reads it. A damaged entry is then one absent entry, not an absent table.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import threading
import weakref
import zlib
from pathlib import Path
from typing import Any


def store_path(stem: str) -> Path | None:
    """Where this interpreter's table ``stem`` lives; None when this Python keeps no bytecode cache."""
    import importlib.util

    try:
        # a made-up module name: its bytecode path carries the cache tag, the -O level and the prefix
        pyc = importlib.util.cache_from_source(str(Path(__file__).with_name(f"{stem}.py")))
    except NotImplementedError:  # sys.implementation.cache_tag is None
        return None
    return Path(pyc).with_suffix(".marshal")


def magic() -> bytes:
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def _trusted(st: os.stat_result) -> bool:
    """As trusted as the ``.pyc`` files beside it: a regular file of this user or root that group and
    others cannot write."""
    if not stat.S_ISREG(st.st_mode) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "geteuid") or st.st_uid in (os.geteuid(), 0)


def _open_trusted(path: Path) -> tuple[int, int] | None:
    """A read-only descriptor of the table file at ``path`` and the file's size; None when it is
    absent, unreadable or not trusted (:func:`_trusted`)."""
    try:
        # O_NONBLOCK: a FIFO put there must not block the start (it is then refused as not regular)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if _trusted(st):
            return fd, st.st_size
    except OSError:
        pass
    _close_quietly(fd)
    return None


def _read_trusted(path: Path) -> bytes | None:
    """The bytes of the table file at ``path``; None as for :func:`_open_trusted`."""
    opened = _open_trusted(path)
    if opened is None:
        return None
    try:
        with os.fdopen(opened[0], "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _checked_body(head: Any, kind: str) -> bytes | None:
    """The body of a stored ``(kind, magic, crc, body)`` head when it is ``kind``'s, of this Python,
    and its CRC holds; else None."""
    if type(head) is not tuple or len(head) != 4:
        return None
    stored_kind, stored_magic, crc, body = head
    if stored_kind != kind or stored_magic != magic() or type(body) is not bytes or zlib.crc32(body) != crc:
        return None
    return body


def read_payload(path: Path, kind: str) -> Any:
    """The object stored at ``path`` as ``kind``; None when the file is absent, unreadable, damaged, of
    another kind or Python, or not trusted (:func:`_trusted`). Never raises: a bad file must not stop
    the program. The caller checks the object's shape."""
    data = _read_trusted(path)
    if data is None:
        return None
    try:  # marshal raises ValueError, EOFError, TypeError and SystemError on damaged input
        body = _checked_body(marshal.loads(data), kind)
        return None if body is None else marshal.loads(body)
    except Exception:
        return None


#: bytes of the little-endian length of an indexed table's head (:func:`write_indexed`)
_HEAD_LEN = 8


#: ``os.pread`` where the system has it (Unix)
_PREAD = getattr(os, "pread", None)


def _read_at(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes of ``fd`` at ``offset`` (fewer at the end): ``os.pread`` where there is one, else a
    seek and a read (the caller keeps the two together)."""
    if _PREAD is not None:
        return bytes(_PREAD(fd, size, offset))
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


class Blob:
    """The entries of an indexed table, read from its file when asked for (``os.pread``: the file
    stays open until this object is dropped or closed). The file read is the one opened and checked:
    replaced meanwhile (tables are written by renaming), it is still the old file; cut meanwhile, a
    read gives fewer bytes, which the caller's check of each entry refuses."""

    __slots__ = ("__weakref__", "_base", "_closer", "_fd", "_lock")

    def __init__(self, fd: int, base: int) -> None:
        self._fd = fd
        self._base = base
        # a seek and its read kept together where there is no pread (and no fork: a lock held by
        # another thread at a fork would stay held in the child, so none is used with pread)
        self._lock = threading.Lock() if _PREAD is None else None
        self._closer = weakref.finalize(self, _close_quietly, fd)
        # not closed by ``weakref``'s own exit hook: it runs before the hooks registered earlier (a
        # table's rewrite at exit still reads its entries); the process's end closes the file
        self._closer.atexit = False

    def read(self, start: int, stop: int) -> bytes:
        """The blob's bytes ``start:stop`` (fewer at the file's end; none once closed or unreadable)."""
        if stop <= start or not self._closer.alive:
            return b""
        try:
            if self._lock is None:
                return _read_at(self._fd, stop - start, self._base + start)
            with self._lock:
                return _read_at(self._fd, stop - start, self._base + start)
        except OSError:
            return b""

    def close(self) -> None:
        self._closer()


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def read_indexed(path: Path, kind: str) -> tuple[Any, Blob] | None:
    """The index stored at ``path`` as ``kind`` by :func:`write_indexed`, and its entries' :class:`Blob`;
    None as for :func:`read_payload`. Only the head is read here and checked (kind, Python, CRC); the
    caller checks each entry it reads (a CRC of each in its index), before it unmarshals any.

    Why not the whole file: a run reads a fraction of the record classes' entries; the file's 2.5 MB
    read whole cost ~1.5 ms and ~600 page faults at every start, before the plog scan's child forks."""
    opened = _open_trusted(path)
    if opened is None:
        return None
    fd, file_size = opened
    try:
        size = int.from_bytes(_read_at(fd, _HEAD_LEN, 0), "little")
        # a head no longer than the file: a damaged length must not make a read of that size
        data = _read_at(fd, size, _HEAD_LEN) if size <= file_size - _HEAD_LEN else b""
        if data and len(data) == size:
            body = _checked_body(marshal.loads(data), kind)
            if body is not None:
                return marshal.loads(body), Blob(fd, _HEAD_LEN + size)  # the file is the blob's now
    except Exception:  # as in read_payload: damaged input raises several kinds of error
        pass
    _close_quietly(fd)
    return None


def _source_mode() -> int:
    """The permission bits a table is created with: the read bits of this module's source, as
    importlib gives a ``.pyc``, writable by the owner only. A group-writable source (umask 002) must
    not make a table that :func:`_trusted` then refuses at every start."""
    try:
        mode = os.stat(__file__).st_mode
    except OSError:
        mode = 0o644
    return (mode & 0o644) | 0o200


def _head(kind: str, payload: Any) -> bytes:
    body = marshal.dumps(payload)
    return marshal.dumps((kind, magic(), zlib.crc32(body), body))


def write_payload(path: Path, kind: str, payload: Any) -> bool:
    """Write ``payload`` (any marshallable object) to ``path`` as ``kind``, atomically (a temporary
    file of this process beside it, then a rename); False, and nothing changed, when the folder cannot
    be written."""
    return _write_atomic(path, _head(kind, payload))


def write_indexed(path: Path, kind: str, index: Any, blob: bytes) -> bool:
    """Write ``index`` (any marshallable object, checked as :func:`write_payload`'s payload is) and
    ``blob`` (raw bytes, kept as they are) to ``path`` as ``kind``, as :func:`write_payload` writes.

    Why a second layout: a table most of whose entries a run never reads (the record classes' code,
    :mod:`skdbg.classcode`) is read and unmarshalled only in part; with everything in one marshalled
    payload, the whole file was read, its bytes copied twice and every entry made an object at every
    start."""
    head = _head(kind, index)
    return _write_atomic(path, len(head).to_bytes(_HEAD_LEN, "little") + head + blob)


def _write_atomic(path: Path, data: bytes) -> bool:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # one name a process: a killed write's is reused
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        fd = os.open(tmp, flags, _source_mode())  # the umask applies too, as for .pyc files
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


__all__ = ["Blob", "magic", "read_indexed", "read_payload", "store_path", "write_indexed", "write_payload"]
