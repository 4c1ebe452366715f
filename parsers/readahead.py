"""Ask the kernel to read a sequential reader's next bytes while the current block is worked on.

Why: the plog scan reads a file of hundreds of MB block by block and spends about as long on each
block's CPU work as the disk takes to deliver it. The kernel's own read-ahead window is a few hundred
KB, so on a file not yet in the page cache (a scene just copied over) each block read waited for the
disk, and the scan's time was the disk's time *plus* its CPU time. ``posix_fadvise(WILLNEED)`` on the
bytes just ahead starts their reads asynchronously, so the disk works while the block is scanned.

The window ahead is bounded (:data:`WINDOW`): a file larger than memory does not push the page cache
out for bytes that will be read much later. On a warm file the advice is a cheap no-op system call per
window; where ``posix_fadvise`` does not exist (macOS, Windows) nothing is asked.
"""

from __future__ import annotations

import os

#: bytes asked for ahead of the reader: a few blocks of the plog scan (8 MiB each)
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
