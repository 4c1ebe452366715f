"""Which files of a scene may be read: regular files inside the scene, nothing else.

Why: scenes are copied from crashed machines and other people's jobs. A FIFO, or a link to
``/dev/zero``, in ``bin_files/`` made hashing block forever; a ``sk_fused_nodes.log`` linked to
``/etc/passwd`` was parsed and printed. Every discovery walk asks :func:`file_problem` about each
candidate and records a :class:`~skdbg.parsers.common.Gap` for a refused one, and every reader opens
through :func:`open_regular`, which checks the opened descriptor itself (no check-then-open race and
no blocking open of a FIFO).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skdbg.parsers.common import Gap, ParseError, ReadFailure, Source

_KIND_NAMES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

#: how a scene file is opened for reading: non-blocking (a FIFO with no writer must not block the open;
#: :func:`open_regular` makes the descriptor blocking again once it is known to be a regular file)
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

#: how to fix any refused file next time
_COLLECT = "copy the real file into the scene folder (cp -L), not a link or a special file"


def kind_name(mode: int) -> str:
    """What a file of ``mode`` is, for a message ("a directory", "a FIFO", …)."""
    for test, name in _KIND_NAMES:
        if test(mode):
            return name
    return "not a regular file"


@functools.lru_cache(maxsize=64)
def _inside(real_dir: Path, root: Path) -> bool:
    """``real_dir`` is ``root`` or below it (both resolved)."""
    return real_dir.is_relative_to(root)


def file_problem(
    path: Path, root: Path | None = None, *, real_dir: Path | None = None, regular: bool | None = None
) -> Gap | None:
    """None when ``path`` is a readable regular file (inside ``root`` if given); else the gap to record.

    ``root`` must be resolved. Links inside the scene are followed; a link whose target lies outside
    ``root`` is refused, as are dangling links, link loops and anything that is not a regular file.
    ``real_dir`` is ``path.parent`` already resolved by the caller (a folder of two thousand kernel
    ELFs): a plain regular file (no link) then needs one ``lstat`` instead of resolving its whole path.
    ``regular`` (with ``real_dir``) is what a directory listing already said of ``path``: a regular file
    and not a link (``DirEntry.is_file(follow_symlinks=False)``), which spares that ``lstat`` too; None
    asks ``lstat``. False (a link, a special file) takes the full check, as a failed ``lstat`` does.
    """
    if real_dir is not None:
        if regular is None:
            regular = _lstat_regular(path)
        if listed_file_ok(path, real_dir, root, regular=regular):
            return None
        # anything else (a link, a special file, trouble): the full check below names the problem
    src = Source(str(path))
    try:
        target = path.resolve(strict=True)
    except RuntimeError:
        return Gap("symlink_loop", f"{path}: symbolic link loop", src, _COLLECT)
    except FileNotFoundError:
        return Gap("dangling_symlink", f"{path}: link to a file that does not exist", src, _COLLECT)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Gap("symlink_loop", f"{path}: symbolic link loop", src, _COLLECT)
        return Gap("unreadable_file", f"{path}: {exc.strerror}", src, _COLLECT)
    if root is not None and not target.is_relative_to(root):
        return Gap("outside_scene", f"{path} points outside the scene: {target}", src, _COLLECT)
    try:
        mode = os.stat(target).st_mode
    except OSError as exc:
        return Gap("unreadable_file", f"{path}: {exc.strerror}", src, _COLLECT)
    if not stat.S_ISREG(mode):
        return Gap("not_regular_file", f"{path}: not a regular file ({kind_name(mode)})", src, _COLLECT)
    if not os.access(target, os.R_OK):
        return Gap("unreadable_file", f"{path}: permission denied", src, _COLLECT)
    return None


def listed_file_ok(path: str | os.PathLike[str], real_dir: Path, root: Path | None, *, regular: bool) -> bool:
    """True when :func:`file_problem` finds nothing wrong with ``path`` without resolving it: a plain
    regular file (``regular``, as its folder's listing or an ``lstat`` said) of a folder resolved to
    ``real_dir``, inside ``root``, that this process may read. False says only "not that": the full
    check then names the problem. ``path`` may be the path's text (a caller listing a folder of two
    thousand kernel ELFs spares a ``Path`` its string form)."""
    # real_dir/<name> lies inside root exactly when real_dir does: asked once per folder
    return regular and (root is None or _inside(real_dir, root)) and os.access(path, os.R_OK)


def _lstat_regular(path: Path) -> bool:
    """``path`` itself (not a link's target) is a regular file; False when ``lstat`` fails."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def real_path(path: str | os.PathLike[str], dirs: dict[str, Path] | None = None) -> Path:
    """``path`` resolved through its links, or made absolute when it cannot be (a link loop).

    ``Path.resolve`` raises ``RuntimeError`` on a loop before Python 3.13; citations and hash keys
    only need a stable absolute name, so a loop must not end the analysis.

    ``dirs`` is the caller's cache of resolved folders. A path that ``lstat`` finds and that is no link
    is then its folder's resolved path joined with its name: one ``lstat`` instead of one per component
    of the path (a thousand plogs of a scene, each cited). Anything else (a link, a path the kernel
    cannot walk, such as ``missing/../link``, where the full resolve goes on component by component) is
    resolved in full.
    """
    if dirs is not None:
        head, name = os.path.split(os.fspath(path))
        if head and name not in ("", ".", "..") and _plain_entry(path):
            folder = dirs.get(head)
            if folder is None:
                folder = dirs[head] = real_path(head)
            return folder / name
    p = Path(path)
    try:
        return p.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(p))


def _plain_entry(path: str | os.PathLike[str]) -> bool:
    """``lstat`` reaches ``path`` and it is no symbolic link (False for any error, a NUL in the name
    included)."""
    try:
        return not stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


#: reads that failed in this process so far (each :func:`read_error`): see :func:`failed_reads`
_failed_reads = 0


def failed_reads() -> int:
    """How many reads have failed in this process so far.

    Why a count: some readers turn a failure into a gap of their own (an ELF that cannot be read is a
    ``bad_elf`` gap of its image table) and nothing else keeps the exception; a triage context notes the
    count when it is made, and the result cache keeps no verdict built while it grew."""
    return _failed_reads


def count_failed_read() -> None:
    """Count one more failed read in :func:`failed_reads`: a :func:`read_error` here, or one that failed
    in a forked child and reached this process as its error (the child's count is its own). Not while
    the calling thread reads ahead (:func:`uncounted_reads`)."""
    global _failed_reads
    if not getattr(_ahead, "on", False):
        _failed_reads += 1


#: per thread: whether its reads are made ahead of the reader that will report them
_ahead = threading.local()


@contextlib.contextmanager
def uncounted_reads() -> Iterator[None]:
    """Reads of the calling thread that fail in this block are not counted in :func:`failed_reads`.

    For a read made ahead of the one that reports (a file parsed before the stage that asks for it,
    which drops what failed and reads the file again itself): that second read counts its failure, so
    a file no stage asks for leaves the count, and the result cache, as they were. Other threads'
    reads count as ever (a thread-local setting)."""
    was = getattr(_ahead, "on", False)
    _ahead.on = True
    try:
        yield
    finally:
        _ahead.on = was


def read_error(
    path: str | os.PathLike[str], what: str, exc: OSError, at: int = 0, *, count: bool = True
) -> ReadFailure:
    """The :class:`ReadFailure` of a read of ``path`` that failed; ``at``: the byte offset of a read
    past the file's start (0: its first read). Counted in :func:`failed_reads` (``count=False``: the
    same failure told again, counted once already)."""
    if count:
        count_failed_read()
    where = f" at byte {at}" if at else ""
    return ReadFailure(os.fsdecode(path), f"{what} (readable file: {exc.strerror or exc}{where})")


#: the plain read of :class:`_NamedReads` (tests put a failing read in its place)
_file_readinto = io.FileIO.readinto
_file_readall = io.FileIO.readall


class _NamedReads(io.FileIO):
    """The raw file under :func:`open_regular`'s buffered reader: a read that fails (a disk error, a
    network file system gone) raises the :class:`ReadFailure` naming the file and the byte offset,
    which a parser lets through and the evidence loader records as a gap, where a bare ``OSError``
    named neither and ended the whole analysis."""

    def __init__(self, fd: int, path: str | os.PathLike[str], what: str) -> None:
        super().__init__(fd, "rb")
        self._path = path
        self._what = what

    def readinto(self, buffer: Any) -> int | None:
        try:
            return _file_readinto(self, buffer)
        except OSError as exc:
            raise read_error(self._path, self._what, exc, self._offset()) from exc

    def readall(self) -> bytes:
        try:
            return _file_readall(self)
        except OSError as exc:
            raise read_error(self._path, self._what, exc, self._offset()) from exc

    def _offset(self) -> int:
        try:
            return self.tell()
        except OSError:
            return 0


def open_regular(path: str | os.PathLike[str], *, what: str) -> io.BufferedReader:
    """Open ``path`` for binary reading, refusing anything but a regular file with a :class:`ParseError`.

    The descriptor is opened non-blocking (a FIFO with no writer would otherwise block the open) and
    checked with ``fstat`` before any byte is read. A read that fails later raises
    :class:`ReadFailure` (file, what, byte offset), never a bare ``OSError``.
    """
    fd, _ = open_regular_fd(path, what=what)
    try:
        raw = _NamedReads(fd, path, what)
    except BaseException:
        os.close(fd)
        raise
    try:
        return io.BufferedReader(raw)
    except BaseException:
        raw.close()  # it owns the descriptor now
        raise


def open_regular_fd(path: str | os.PathLike[str], *, what: str) -> tuple[int, os.stat_result]:
    """:func:`open_regular`'s checks and errors, giving the blocking descriptor and its ``fstat``
    instead of a file object: the caller closes it. Why: a reader of a thousand small files that
    reads each into a buffer of its own needs no buffered file object (its creation asks the kernel
    three more things, each a release of the GIL another thread then holds)."""
    name = os.fsdecode(path)
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise ParseError(name, f"{what} (file does not exist)") from None
    except IsADirectoryError:
        raise ParseError(name, f"{what} (a file, got a directory)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ParseError(name, f"{what} (a file, got a symbolic link loop)") from None
        raise ParseError(name, f"{what} (readable file: {exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParseError(name, f"{what} (a regular file, got {kind_name(st.st_mode)})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], *, what: str) -> bytes:
    """The whole content of a regular file (see :func:`open_regular`)."""
    with open_regular(path, what=what) as fh:
        return fh.read()


__all__ = [
    "failed_reads",
    "file_problem",
    "listed_file_ok",
    "open_regular",
    "open_regular_fd",
    "read_error",
    "read_regular",
    "real_path",
    "uncounted_reads",
]
