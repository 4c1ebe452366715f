"""Ask the kernel to read a sequential reader's next bytes while the current block is worked on.

Why: the plog scan reads a file of hundreds of MB block by block and spends about as long on each
block's CPU work as the disk takes to deliver it. The kernel's own read-ahead window is a few hundred
KB, so on a file not yet in the page cache (a scene just copied over) each block read waited for the
disk, and the scan's time was the disk's time *plus* its CPU time. ``posix_fadvise(WILLNEED)`` on the
bytes just ahead starts their reads asynchronously, so the disk works while the block is scanned.

The window ahead is bounded (:data:`WINDOW`): a file larger than memory does not push the page cache
out for bytes that will be read much later. On a warm file the advice is a cheap no-op system call per
window; where ``posix_fadvise`` does not exist (macOS, Windows) nothing is asked.

:class:`FilesAhead` does the same for a reader that goes through many files in turn: the hasher reads a
scene's two thousand kernel ELFs of a few KB each, and cold, each ``read`` waited for one disk round
trip before the next file was even opened. Asked ahead, the disk fetches dozens of files at once.
Warm, though, asking costs four system calls a file, each a hand-over of the GIL between the reader's
thread and the main thread's parsing; so :class:`FilesAhead` first asks the page cache, every
:data:`PROBE_EVERY` files, whether the file about to be read is there (a one-byte ``preadv`` with
``RWF_NOWAIT``, Linux, at its first and last byte), and asks for files ahead only once one is not.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from typing import Literal

from skdbg.parsers.fsguard import READ_FLAGS

#: bytes asked for ahead of the reader: a few blocks of the plog scan (4 MiB each)
WINDOW = 32 << 20

_ADVISE = getattr(os, "posix_fadvise", None)
_WILLNEED = getattr(os, "POSIX_FADV_WILLNEED", 0)


class ReadAhead:
    """The read-ahead state of one open file: how far the kernel has been asked to read.

    Call :meth:`reached` with the file offset the reader has read up to; once the bytes already asked
    for run lower than half a window ahead of it, the next window is asked for."""

    __slots__ = ("fd", "asked", "window", "enabled")

    def __init__(self, fd: int, window: int | None = None) -> None:
        self.fd = fd
        self.window = WINDOW if window is None else window
        self.asked = 0  # bytes [0, asked) have been asked for
        self.enabled = _ADVISE is not None and self.window > 0
        self.reached(0)

    def reached(self, offset: int) -> None:
        """The reader has read the file up to ``offset``: keep ``window`` bytes asked for ahead of it."""
        if not self.enabled or self.asked - offset > self.window // 2:
            return
        start = max(self.asked, offset)
        try:
            _ADVISE(self.fd, start, self.window, _WILLNEED)  # type: ignore[misc]
        except OSError:  # a file system that refuses the advice: read as before, without it
            self.enabled = False
            return
        self.asked = start + self.window


#: files asked for ahead of a reader of many files (:class:`FilesAhead`)
FILES_AHEAD = 128

#: while every file probed was in the page cache, one file in this many is probed (:class:`FilesAhead`)
PROBE_EVERY = 16

_PREADV = getattr(os, "preadv", None)
_NOWAIT = getattr(os, "RWF_NOWAIT", None)


#: what a probe of one file found (:func:`_residency`)
Residency = Literal["cached", "cold", "unknown", "unopened"]


def _residency(path: str | os.PathLike[str]) -> Residency:
    """Whether ``path`` is in the page cache, judged by its first and last bytes: ``cached``; ``cold``
    when reading either would wait for the disk; ``unknown`` when this platform or file system cannot
    tell (no ``RWF_NOWAIT`` reads: macOS, tmpfs, a directory); ``unopened`` for a file that does not
    open (its reader reports it). Why both ends: a file whose head alone was read (the plog sniffing
    of a ``.log`` file reads 4 KB) is cached there and cold after it."""
    if _PREADV is None or _NOWAIT is None:
        return "unknown"
    try:
        fd = os.open(path, READ_FLAGS)  # non-blocking: a FIFO must not hang the reader
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return "unopened"
    try:
        size = os.fstat(fd).st_size
        probe = [bytearray(1)]
        for offset in (0, size - 1) if size > 1 else (0,):
            _PREADV(fd, probe, offset, _NOWAIT)
    except BlockingIOError:
        return "cold"
    except OSError:  # EOPNOTSUPP, EINVAL (a file system or kernel without RWF_NOWAIT reads), EISDIR, ...
        return "unknown"
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return "cached"


class FilesAhead:
    """The read-ahead of a reader that reads a list of files in order, each from its start.

    Call :meth:`reached` with the index of the file about to be read. From that file on, files are asked
    for while fewer than :data:`FILES_AHEAD` of them (the one being read included) and fewer than
    :data:`WINDOW` bytes are in flight; the last file asked for may take the bytes over the window by
    its own share, so at most twice the window is ever in flight. Of a file larger than the window only
    its first window is asked for; its reader's own sequential reads then get the kernel's read-ahead.
    Each file is asked for once, by one ``open``/``fstat``/``posix_fadvise``/``close``. A file that
    cannot be opened is skipped; its reader reports the error when it gets there.

    Nothing is asked while the files are warm: the file being reached is probed (:func:`_residency`) at
    the first call and then every :data:`PROBE_EVERY` files, and the first probe that finds a file not
    in the page cache at either end (or cannot tell) starts the asking, for good, from that file on; a
    file that does not open is no answer, and the next one is probed. A warm scene of ten thousand
    kernel ELFs then costs ~600 probes (five system calls each) instead of 40,000 calls."""

    __slots__ = ("paths", "asked", "done", "heads", "in_flight", "window", "files", "enabled", "next_probe")

    def __init__(
        self, paths: Sequence[str | os.PathLike[str]], *, window: int | None = None, files: int | None = None
    ) -> None:
        self.paths = paths
        self.window = WINDOW if window is None else window
        self.files = FILES_AHEAD if files is None else files
        self.asked = 0  # files [0, asked) have been asked for
        self.done = 0  # files [0, done) have been passed by the reader: no longer in flight
        self.heads: list[int] = []  # bytes asked for of each file asked for
        self.in_flight = 0  # bytes asked for of the files [done, asked)
        self.enabled = _ADVISE is not None and self.window > 0 and self.files > 0
        self.next_probe: int | None = 0  # the index of the next file probed; None: cold, asking

    def reached(self, index: int) -> None:
        """The reader is about to read file ``index``: keep the files after it asked for (an index past
        the list asks for nothing)."""
        if not self.enabled or index >= len(self.paths):
            return
        if self.next_probe is not None:
            if index < self.next_probe:
                return
            found = _residency(self.paths[index])
            if found == "cached":
                self.next_probe = index + PROBE_EVERY
                return
            if found == "unopened":  # nothing learnt: the next file reached is probed
                return
            self.next_probe = None  # cold (or no way to tell): ask ahead from here on
        heads = self.heads
        while self.done < index and self.done < self.asked:
            self.in_flight -= heads[self.done]
            self.done += 1
        if self.asked <= index:  # the reader caught up (or skipped ahead): resume from it
            heads.extend([0] * (index - self.asked))
            self.asked = self.done = index
            self.in_flight = 0
        limit = min(len(self.paths), index + self.files)
        while self.asked < limit and self.in_flight < self.window:
            head = self._advise(self.paths[self.asked])
            if head < 0:  # the file system refuses the advice: the reader reads as it did without it
                self.enabled = False
                return
            heads.append(head)
            self.in_flight += head
            self.asked += 1

    def _advise(self, path: str | os.PathLike[str]) -> int:
        """Ask for ``path``'s first window; the bytes asked for: 0 for anything but a regular file that
        opens, -1 for an advice refused."""
        try:
            fd = os.open(path, READ_FLAGS)  # non-blocking: a FIFO among the files must not hang the reader
        except (OSError, ValueError):  # ValueError: a NUL in the name; its reader reports it
            return 0
        try:
            st = os.fstat(fd)
            head = min(st.st_size, self.window) if stat.S_ISREG(st.st_mode) else 0
            if head:
                _ADVISE(fd, 0, head, _WILLNEED)  # type: ignore[misc]
        except OSError:
            return -1
        finally:
            with contextlib.suppress(OSError):  # a failed close of a read-only descriptor loses nothing
                os.close(fd)
        return head
