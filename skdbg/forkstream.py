"""Compute a sequence of values in one forked child process and read them here as they come.

Why a module of its own: an analysis's plog scan is numpy passes, SHA-256 and the building of tens of
thousands of marker-line records. In a thread beside the main thread's sk_meta parsing, every record
built and every hand-back of the GIL after a numpy pass waited on that parsing, and the two took turns
on one interpreter (issue 18). A forked child has an interpreter of its own: it starts with the
parent's imports and data in place (no start-up, nothing pickled on the way in), computes on the other
core, and sends each value back as soon as it is made, so the parent can file the first ones while the
rest are computed.

What the caller gets: :class:`ForkedStream`, an iterator over the values the producer yields in the
child, in order, each pickled through a pipe. A stream that ends before the producer finished (the
child was killed, ran out of memory, or the producer raised) raises :class:`ChildLost` with the number
of values received: the caller computes the rest itself, so no value is lost and none comes twice.

Why fork only, only on Linux, and only when no other thread runs: see :func:`can_fork_child`.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, Generic, TypeVar

T = TypeVar("T")

#: Linux's prctl option that sends a signal to this process when its parent ends
PR_SET_PDEATHSIG = 1
#: bytes of a frame's length field; a frame of length 0 ends the stream (the producer finished)
_LEN = 8
#: what the child's exit status says when it wrote every value and the end frame
_DONE = 0


class ChildLost(Exception):
    """The child's stream ended before its producer finished; ``received`` values were read."""

    def __init__(self, received: int, why: str) -> None:
        super().__init__(f"forked child lost after {received} values: {why}")
        self.received = received


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one: a container's
    or ``taskset``'s limit, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def fork_allowed() -> bool:
    """This process may fork a child that computes: Linux (fork is its way of starting processes;
    macOS's system libraries are not fork-safe, Windows has no fork), no other thread runs (a lock
    another thread holds at the fork stays held in the child for ever), and the user did not say
    ``SKDBG_NO_FORK=1`` (all work then stays in this process: the plog scan, :mod:`skdbg.forkmap`'s
    workers)."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and os.environ.get("SKDBG_NO_FORK", "") in ("", "0")
        and threading.active_count() == 1
    )


def can_fork_child() -> bool:
    """:func:`fork_allowed`, and a second CPU to run the child on: with one, the child would only take
    turns with this process, and pay the pickling on top."""
    return fork_allowed() and available_cpus() >= 2


def detach_from_parent(parent: int) -> None:
    """In a freshly forked child: leave Ctrl-C to the parent and end with it.

    Why Ctrl-C is ignored: the parent alone decides what an interrupt stops; it ends, and its children
    with it (below). Why the death signal: a child whose parent ended (Ctrl-C, out of memory, SIGKILL)
    would otherwise compute on, for no one, until its next write failed. SIGINT must be blocked
    around the fork (:class:`ForkedStream` does so): one sent meanwhile is then dropped here, when the
    child unblocks it with the handler already set to ignore."""
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # one sent during the fork is dropped too (blocked)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    with contextlib.suppress(OSError, AttributeError):  # no prctl: the check below still runs
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before the death signal was asked for
        os._exit(1)


def _child(produce: Callable[[], Iterable[object]], write_fd: int, parent: int) -> None:
    """The child's whole life: every value of ``produce()`` as a frame, then the end frame; never
    returns (``os._exit``: no atexit handler, no flush of the parent's buffers, no ``finally`` of the
    parent's frames runs here)."""
    status = 1
    try:
        detach_from_parent(parent)
        with open(write_fd, "wb", buffering=1 << 20) as out:  # a buffered writer: no short writes
            for value in produce():
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                out.write(len(data).to_bytes(_LEN, "little"))
                out.write(data)
                out.flush()  # each value reaches the parent as soon as it is made
            out.write((0).to_bytes(_LEN, "little"))
        status = _DONE
    except BaseException:  # noqa: S110 - the parent sees the stream end early and computes the rest
        pass
    finally:
        os._exit(status)


class ForkedStream(Generic[T]):
    """The values ``produce()`` yields, computed in a forked child and read here in order.

    Iterate it once. :class:`ChildLost` is raised by the iteration when the stream ends early;
    :meth:`close` (also on leaving a ``with``) ends the child if it still runs and reaps it. Start it
    only when :func:`can_fork_child` says so; ``OSError`` from ``fork`` or ``pipe`` is the caller's to
    handle (the system refused a process: compute in this one)."""

    def __init__(self, produce: Callable[[], Iterable[T]]) -> None:
        read_fd, write_fd = os.pipe()
        parent = os.getpid()
        sys.stdout.flush()  # a child must not write out its copies of these buffers: empty them first
        sys.stderr.flush()
        # no Ctrl-C between the fork and the child's ignoring it: raised there, it would run the
        # parent's handlers (click's "Aborted!", finally blocks, atexit) in the child
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(read_fd)
            os.close(write_fd)
            raise
        if pid == 0:  # the child: never returns, whatever happens in it
            try:
                os.close(read_fd)
                _child(produce, write_fd, parent)
            finally:
                os._exit(1)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C that came meanwhile is raised now
        os.close(write_fd)
        self.pid: int | None = pid
        self.received = 0
        self._pipe: BinaryIO = open(read_fd, "rb", buffering=1 << 20)  # noqa: SIM115 - closed by close()
        self._finished = False

    def __iter__(self) -> Iterator[T]:
        while True:
            head = self._pipe.read(_LEN)
            if len(head) != _LEN:
                self._reap()
                raise ChildLost(self.received, "the stream ended without its end frame")
            size = int.from_bytes(head, "little")
            if size == 0:
                self._finished = True
                self._reap()
                return
            data = self._pipe.read(size)
            if len(data) != size:
                self._reap()
                raise ChildLost(self.received, f"a frame of {size} bytes ended after {len(data)}")
            value: T = pickle.loads(data)
            self.received += 1
            yield value

    def drain(self) -> bool:
        """Read the stream to its end and reap the child; True when the producer finished (the end
        frame came), False when the stream ended without it. For a caller that knows how many values
        it wants: after the last one, the child exits and is reaped now, not when it is closed."""
        if self._pipe.closed:
            return self._finished
        try:
            for _ in self:
                pass
        except ChildLost:
            return False
        return True

    def _reap(self) -> None:
        """Wait for the child's exit (it has written all it will: the pipe is at its end)."""
        pid, self.pid = self.pid, None
        if pid is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)

    def close(self) -> None:
        """End the child if it still runs (a stream abandoned part-way), reap it, close the pipe."""
        if self.pid is not None and not self._finished:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self._reap()
        self._pipe.close()  # a second close does nothing

    def __enter__(self) -> ForkedStream[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
