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


def read_payload(path: Path, kind: str) -> Any:
    """The object stored at ``path`` as ``kind``; None when the file is absent, unreadable, damaged, of
    another kind or Python, or not trusted (:func:`_trusted`). Never raises: a bad file must not stop
    the program. The caller checks the object's shape."""
    try:
        # O_NONBLOCK: a FIFO put there must not block the start (it is then refused as not regular)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not _trusted(os.fstat(fh.fileno())):
                return None
            data = fh.read()
    except OSError:
        return None
    try:  # marshal raises ValueError, EOFError, TypeError and SystemError on damaged input
        stored_kind, stored_magic, crc, payload = marshal.loads(data)
        if (
            stored_kind != kind
            or stored_magic != magic()
            or type(payload) is not bytes
            or zlib.crc32(payload) != crc
        ):
            return None
        return marshal.loads(payload)
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


def write_payload(path: Path, kind: str, payload: Any) -> bool:
    """Write ``payload`` (any marshallable object) to ``path`` as ``kind``, atomically (a temporary
    file of this process beside it, then a rename); False, and nothing changed, when the folder cannot
    be written."""
    body = marshal.dumps(payload)
    data = marshal.dumps((kind, magic(), zlib.crc32(body), body))
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


__all__ = ["magic", "read_payload", "store_path", "write_payload"]
