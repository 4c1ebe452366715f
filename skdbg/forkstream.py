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
import errno
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, Generic, TypeVar

T = TypeVar("T")

#: Linux's prctl option that sends a signal to this process when its parent ends
PR_SET_PDEATHSIG = 1
#: bytes of a frame's length field; a frame of length 0 ends the stream (the producer finished)
_LEN = 8
#: what the child's exit status says when it wrote every value and the end frame
_DONE = 0
#: the size asked for a stream's pipe and a standby child's work pipe (the most an unprivileged process
#: may ask by default): the bench scene's work (plog paths and two thousand artifacts to hash) is
#: ~0.2 MB, and its scan sends batches of rows of several MB, over the default 64 KiB a pipe holds
_PIPE_BYTES = 1 << 20


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


def _widen(fd: int) -> None:
    """Make the pipe of ``fd`` hold :data:`_PIPE_BYTES` where the system allows (Linux, within
    ``/proc/sys/fs/pipe-max-size`` and the user's pipe quota); else it keeps its size (64 KiB).

    Why: a value of several MB (a batch of plog rows, a standby child's work) crosses a 64 KiB pipe in
    hundreds of reads, and the reading thread here takes the interpreter lock back after each, waiting
    up to a switch interval for the busy main thread every time; the child's writing waits as long.
    The memory is taken only as the pipe fills; while the pipe lives, its 256 pages count against the
    user's soft quota of pipe pages (``pipe-user-pages-soft``, 16,384 by default): an analysis holds
    two such pipes, for a second or so."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, OSError, AttributeError):
        pass


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

    def __init__(self, produce: Callable[[], Iterable[T]], *, child_closes: Iterable[int] = ()) -> None:
        """Fork now; ``child_closes``: descriptors of this process the child closes first (the ends of
        other pipes the child must not hold, as :class:`StandbyChild`'s work pipe)."""
        read_fd, write_fd = os.pipe()
        _widen(write_fd)
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
                for fd in child_closes:
                    os.close(fd)
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


class WorkNotSent(Exception):
    """A standby child's work could not be pickled (the child is ended): compute it here."""


class StandbyChild(Generic[T]):
    """A child forked before its work is known: it gets ready (``ready()``: imports, say) while this
    process goes on, then waits for the work :meth:`start` sends, and streams its values back as a
    :class:`ForkedStream` does.

    Why: a child forked when its work is known starts cold. The plog scan's child spent its first
    ~0.08 s importing numpy, the last stretch of an analysis on the bench scene, while this process
    was still importing and opening the scene with the second CPU idle. Forked first, it imports
    beside those steps and starts scanning the moment its files are known.

    The work comes pickled through a pipe (its length first): a module-level function and its
    arguments, which must be picklable. The child reads it in a thread while it gets ready, and the
    pipe is made to hold a MiB where the system allows, so :meth:`start` seldom waits for the child.
    The child sees this process's modules as they were at the fork: a pickled function is looked up
    by name there. :meth:`dismiss` ends a child that will get no work (it is killed: getting ready has
    no effect outside it). Create one only when :func:`can_fork_child` says so; ``OSError`` from
    ``fork`` or ``pipe`` is the caller's, as for :class:`ForkedStream`."""

    def __init__(self, ready: Callable[[], object]) -> None:
        work_r, work_w = os.pipe()
        _widen(work_w)
        try:
            self._stream: ForkedStream[T] = ForkedStream(
                lambda: _standby(ready, work_r), child_closes=(work_w,)
            )
        except BaseException:
            os.close(work_r)
            os.close(work_w)
            raise
        os.close(work_r)
        self._work: int | None = work_w

    def start(self, produce: Callable[..., Iterable[T]], *args: object) -> ForkedStream[T]:
        """Send the work, ``produce(*args)``, and return the stream of its values. Once only.

        Raises :class:`WorkNotSent` when the work cannot be pickled, the child ended first. A child
        lost meanwhile shows as the stream's :class:`ChildLost` with nothing received: the caller
        computes everything itself. Interrupted while sending (Ctrl-C), the child is ended too."""
        if self._work is None:
            raise RuntimeError("a standby child's work is sent once")
        try:
            data = pickle.dumps((produce, args), protocol=pickle.HIGHEST_PROTOCOL)
            out = open(self._work, "wb")  # noqa: SIM115 - closed below; owns the descriptor from here on
        except Exception as exc:
            self.dismiss()
            raise WorkNotSent(f"the work could not be sent to the child: {exc}") from exc
        except BaseException:
            self.dismiss()
            raise
        self._work = None
        try:
            with out:
                out.write(len(data).to_bytes(_LEN, "little"))
                out.write(data)
        except OSError:  # BrokenPipeError: the child is gone (its stream says so)
            pass
        except BaseException:
            self._stream.close()
            raise
        return self._stream

    def dismiss(self) -> None:
        """No work will come: end the child now and reap it (nothing it did leaves it). Killed, not
        told: another process forked meanwhile may hold the work pipe open."""
        fd, self._work = self._work, None
        if fd is not None:
            os.close(fd)
        self._stream.close()


def _standby(ready: Callable[[], object], work_fd: int) -> Iterator[Any]:
    """The standby child's producer: ``ready()`` while a thread reads the work (its length, then its
    pickle: no wait for the pipe's end, which another process forked meanwhile may hold open), then
    the work's values. A pipe that ends before the work ends the child without the end frame: the
    parent sees it lost, never a finished stream of no values."""
    box: list[bytes] = []

    def read() -> None:
        with open(work_fd, "rb") as pipe:
            head = pipe.read(_LEN)
            if len(head) == _LEN:
                box.append(pipe.read(int.from_bytes(head, "little")))

    reader = threading.Thread(target=read, name="skdbg-child-work", daemon=True)
    reader.start()
    with contextlib.suppress(Exception):  # the work imports what it needs all the same
        ready()
    reader.join()
    if not box or not box[0]:
        raise RuntimeError("a standby child got no work")
    produce, args = pickle.loads(box[0])
    yield from produce(*args)


class SharedClaims:
    """The numbers ``0 … n-1`` in chunks, each chunk handed to whichever process asks first: this one
    or a child it forks after making this (the child inherits the pipe they travel in).

    Why: some work either side can do (hashing the artifacts gate G5 needs, reading a log ahead) is best
    done by the side that is idle. The forked scan's child does it after its scan, and the parent while it waits for
    the scan; neither knows beforehand which finishes first (a cold disk slows the child, a large
    sk_meta the parent). No lock is needed between the processes (one guards this process's threads
    and the close): the chunks are records of a fixed size, written at once
    (:meth:`offer`, in one write of at most ``PIPE_BUF`` bytes, which a pipe never splits), and every
    read takes exactly one record from a pipe that never blocks (:meth:`claim`), so each chunk goes
    to exactly one reader. A process that dies with chunks it claimed loses them: the caller's work
    must be such that what no one reports is done later (a digest computed when first asked for)."""

    #: bytes of a chunk's record: its first and its end number
    _RECORD = 8

    def __init__(self) -> None:
        import select

        #: chunks at most: their records must fit one atomic pipe write (``PIPE_BUF``: 4,096 bytes on
        #: Linux, 512 records)
        self.max_chunks = max(1, select.PIPE_BUF // self._RECORD)
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self.closed = False
        self._lock = threading.Lock()  # a claim and the close never overlap (no read of a closed fd)

    def __reduce__(self) -> tuple[Callable[..., SharedClaims], tuple[int, int, int]]:
        """Pickled for a child forked after this was made (a :class:`StandbyChild`'s work): its
        descriptors, which that child inherited under the same numbers. Meaningless anywhere else."""
        return _claims_at, (self._read, self._write, self.max_chunks)

    def offer(self, n: int, *, alone: int = 0) -> None:
        """Put ``0 … n-1`` up for claiming, in at most :attr:`max_chunks` chunks of consecutive
        numbers (once); the first ``alone`` numbers each in a chunk of its own, claimed first.

        Why alone: a unit that is much more work than the others, and whose result a reader waits
        for (a whole log read ahead), is taken by one side and never drags a chunk of others along."""
        if n <= 0:
            return
        alone = max(0, min(alone, n, self.max_chunks - 1))
        size = max(1, -(-(n - alone) // (self.max_chunks - alone)))
        bounds = [(i, i + 1) for i in range(alone)]
        bounds += [(start, min(start + size, n)) for start in range(alone, n, size)]
        records = b"".join(start.to_bytes(4, "little") + end.to_bytes(4, "little") for start, end in bounds)
        with self._lock:
            if self.closed:
                raise OSError(errno.EBADF, "offer on closed claims")
            written = os.write(self._write, records)  # fits an empty pipe: never blocks, never short
        if written != len(records):
            raise OSError(f"the claims pipe took {written} of {len(records)} bytes")

    def claim(self) -> range | None:
        """The next chunk no process has claimed, or None when none is left (or none was offered)."""
        with self._lock:
            if self.closed:
                return None
            try:
                record = os.read(self._read, self._RECORD)
            except BlockingIOError:
                return None
        if len(record) != self._RECORD:
            return None
        return range(int.from_bytes(record[:4], "little"), int.from_bytes(record[4:], "little"))

    def pending(self) -> bool:
        """Some chunk is still unclaimed (at the time of asking: another process may take it next).

        Why: a process that must prepare before it can do any of the work (load it, say) asks this
        first, and spares the preparation when every chunk is gone."""
        import select

        with self._lock:
            if self.closed:
                return False
            ready, _, _ = select.select([self._read], [], [], 0)
        return bool(ready)

    def claimed(self) -> Iterator[int]:
        """Each number of each chunk this process claims, claiming the next chunk when one is done."""
        while (chunk := self.claim()) is not None:
            yield from chunk

    def close(self) -> None:
        """Close this process's ends of the pipe (a second call does nothing)."""
        with self._lock:
            if not self.closed:
                self.closed = True
                os.close(self._read)
                os.close(self._write)


def _claims_at(read_fd: int, write_fd: int, max_chunks: int) -> SharedClaims:
    """The :class:`SharedClaims` of inherited descriptors (its pickle, in the child)."""
    claims = SharedClaims.__new__(SharedClaims)
    claims._read, claims._write, claims.max_chunks, claims.closed = read_fd, write_fd, max_chunks, False
    claims._lock = threading.Lock()
    return claims
