"""Tables of compiled things kept beside the package's bytecode, as Python keeps ``.pyc`` files.

Why a module of its own: two tables live there (the record classes' code, :mod:`skdbg.classcode`, and
the regular expressions' compiled form, :mod:`skdbg.regexcode`), and both must be found, trusted,
checked and written the same way.

Where: ``<stem>.<cache tag>[.opt-N].marshal`` in the package's ``__pycache__`` folder (under
``PYTHONPYCACHEPREFIX`` when that is set), next to the interpreter's ``.pyc`` files. A file names its
kind, the interpreter's bytecode magic number and a CRC-32 of its contents; a file of another kind or
Python, an unreadable, damaged or cut one, or one that neither this user nor root owns, or that group
or others may write, reads as absent. Files are written atomically, readable as the package's sources
are and writable by the owner only.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
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


def _read_trusted(path: Path) -> bytes | None:
    """The bytes of the table file at ``path``; None when it is absent, unreadable or not trusted
    (:func:`_trusted`)."""
    try:
        # O_NONBLOCK: a FIFO put there must not block the start (it is then refused as not regular)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not _trusted(os.fstat(fh.fileno())):
                return None
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


def read_indexed(path: Path, kind: str) -> tuple[Any, memoryview] | None:
    """The index and the blob stored at ``path`` as ``kind`` by :func:`write_indexed`; None as for
    :func:`read_payload`. The index is checked here (kind, Python, CRC); the blob is the file's own
    bytes, not copied and not checked: the caller checks each part it reads (a CRC of each in its
    index), before it unmarshals any."""
    data = _read_trusted(path)
    if data is None or len(data) < _HEAD_LEN:
        return None
    size = int.from_bytes(data[:_HEAD_LEN], "little")
    if size > len(data) - _HEAD_LEN:
        return None
    try:  # as in read_payload: damaged input raises several kinds of error
        body = _checked_body(marshal.loads(data[_HEAD_LEN : _HEAD_LEN + size]), kind)
        if body is None:
            return None
        return marshal.loads(body), memoryview(data)[_HEAD_LEN + size :]
    except Exception:
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
    :mod:`skdbg.classcode`) is read whole but unmarshalled only in part; with everything in one
    marshalled payload, its bytes were copied twice and every entry made an object at every start."""
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


__all__ = ["magic", "read_indexed", "read_payload", "store_path", "write_indexed", "write_payload"]
