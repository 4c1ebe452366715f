"""Map a function over many independent items on several cores, results in the items' order.

Why a module of its own: ``codegen adapt`` reads, adapts and re-checks every kernel file of an asset
on its own, and that per-file Python work is most of the command's time; one interpreter runs it on
one core. Here the items are cut into chunks that forked worker processes and the calling process
compute together, and the results come back in the order of the items, chunk by chunk as they are
done, so the caller can write the first ones while the rest are computed. The workers take chunks
from the front; the caller, while the chunk it needs next is not ready, computes the last chunk no
worker has taken. On a machine with two cores, one worker and the caller keep both busy, and the
caller's writing thread gets its share; two workers beside a computing caller were slower. The
caller's code is the same whether one process or several do the work, and the results are the same
values a serial map gives (pickled on the way back from a worker).

Why fork only, and only when no other thread runs: a forked child starts with the parent's imports
and data already in place (no interpreter start, no imports, no pickling of the shared context),
which is what makes a fraction of a second of work worth splitting. Forking a process in which
another thread runs can deadlock the child (a lock held by that thread stays held forever), so where
threads run, or where fork is not the platform's way (Windows, macOS), the map runs in this process.

A worker that dies (killed, out of memory) does not lose the run: the chunks not handed out yet are
computed in this process instead, with the same results. When the system refuses to start a worker,
the ones already started are ended and the whole map runs in this process. Ctrl-C is the caller's
alone (workers ignore it; see :func:`_adopt`), and a worker ends when the caller does.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Generic, TypeVar

from skdbg.forkstream import available_cpus, detach_from_parent, fork_allowed

if TYPE_CHECKING:  # multiprocessing and the pool are imported when workers are started, not before
    from concurrent.futures import Future, ProcessPoolExecutor

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

#: chunks per computing process: enough that the first results come back early and a slow chunk does
#: not leave the others idle at the end, few enough that the per-chunk round trip stays negligible
CHUNKS_PER_PROCESS = 4
#: the most processes ``jobs=0`` (automatic) computes with: past this, the caller's own serial work
#: (writing the results) is the limit, not the computing
MAX_AUTO_PROCESSES = 8

#: the shared context of the running map, in a worker process (set by :func:`_adopt` at its start)
_CONTEXT: object = None


def can_fork_workers() -> bool:
    """Forked workers are safe here and wanted (:func:`~skdbg.forkstream.fork_allowed`: Linux, no other
    thread, no ``SKDBG_NO_FORK=1``), and ``multiprocessing`` can fork them."""
    if not fork_allowed():
        return False
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def process_count(jobs: int, items: int, *, min_items_per_process: int) -> int:
    """How many processes, this one included, compute a map of ``items`` for ``jobs``.

    ``jobs`` > 0 is the user's number (never more processes than items); 0 picks one per available CPU,
    up to :data:`MAX_AUTO_PROCESSES`, each with at least ``min_items_per_process`` items (below that,
    starting a worker costs more than it saves). 1 means this process alone.
    """
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (automatic) or a positive number, not {jobs}")
    if jobs > 0:
        return max(1, min(jobs, items))
    return max(1, min(available_cpus(), MAX_AUTO_PROCESSES, items // max(1, min_items_per_process)))


def _adopt(context: object, parent: int) -> None:
    """Worker start: keep the map's context (inherited through the fork, never pickled), leave Ctrl-C
    to the caller, and end with the caller (:func:`~skdbg.forkstream.detach_from_parent`).

    Why Ctrl-C is ignored here too: a worker interrupted inside the pool's result queue can leave that
    queue's lock held, and the caller's shutdown would then wait for ever; the caller alone stops the
    pool."""
    detach_from_parent(parent)
    global _CONTEXT
    _CONTEXT = context


class WorkerTraceback(Exception):
    """The traceback, as text, of an exception a worker raised: the ``__cause__`` of that exception once
    it is raised again here (a pickled exception loses its own)."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""' if self.args else ""


#: a worker's answer for one chunk: the results up to the first item that raised, that exception and its
#: traceback as text (a pickled exception keeps neither its traceback nor its cause)
_ChunkResult = tuple[list[R], Exception | None, str]


def _compute(fn: Callable[[C, T], R], context: C, chunk: Sequence[T]) -> _ChunkResult[R]:
    """One chunk of the map, so that the caller hands out exactly what a serial map would."""
    done: list[R] = []
    try:
        for item in chunk:
            done.append(fn(context, item))
    except Exception as exc:
        return done, exc, "".join(traceback.format_exception(exc))
    return done, None, ""


def _run_chunk(fn: Callable[[C, T], R], chunk: Sequence[T]) -> _ChunkResult[R]:
    """A worker's chunk, with the map's context it kept at its start."""
    return _compute(fn, _CONTEXT, chunk)  # type: ignore[arg-type]  # set by _adopt


def _chunks(items: Sequence[T], count: int) -> list[Sequence[T]]:
    """``items`` cut into ``count`` runs of near-equal length, in order (none empty)."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for k in range(count):
        end = start + size + (1 if k < extra else 0)
        out.append(items[start:end])
        start = end
    return out


class OrderedMap(Generic[C, T, R]):
    """``fn(context, item)`` for every item, iterated in the items' order; a context manager.

    ``processes`` compute, this one included: ``processes - 1`` workers are forked when the block is
    entered (so a thread the caller starts inside the block,
    such as a file writer, is never inside a fork) and stopped when it ends, however it ends. Chunks
    hold at most ``chunk_items`` items (when given), so the first results come back soon. While
    ``may_compute`` (when set) answers False, this process only waits for the workers' results.
    ``fn`` must be a module-level function (the workers find it by name); ``context`` reaches them
    through the fork. An exception ``fn`` raises is raised by the iteration at its item, as in a
    serial map; the items after it may have been computed, never handed out.
    """

    def __init__(
        self,
        fn: Callable[[C, T], R],
        context: C,
        items: Sequence[T],
        *,
        processes: int,
        chunk_items: int | None = None,
        may_compute: Callable[[], bool] | None = None,
    ) -> None:
        self.fn = fn
        self.context = context
        self.items = items
        self.processes = processes if processes > 1 and len(items) > 1 and can_fork_workers() else 1
        self.workers = self.processes - 1
        self.chunk_items = chunk_items
        self.may_compute = may_compute
        self._pool: ProcessPoolExecutor | None = None
        self._chunks: list[Sequence[T]] = []
        self._futures: list[Future[_ChunkResult[R]]] = []
        self._here: dict[int, _ChunkResult[R]] = {}  # results of the chunks this process computed
        self._head = 0  # the chunks before it are the pool's (``_futures``)
        self._tail = -1  # the chunks after it are this process's (``_here`` until handed out)

    def __enter__(self) -> OrderedMap[C, T, R]:
        if self.workers > 0:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            sys.stdout.flush()  # a forked child flushes its copy of these buffers when it ends: empty them
            sys.stderr.flush()
            count = self.processes * CHUNKS_PER_PROCESS
            if self.chunk_items is not None:
                count = max(count, -(-len(self.items) // max(1, self.chunk_items)))
            self._chunks = _chunks(self.items, count)
            self._tail = len(self._chunks) - 1
            import signal

            # no Ctrl-C while forking: CPython drops an exception raised in a fork hook (the run would
            # go on as if nothing was asked), and a worker must not get one before it ignores them
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:  # the first submit forks every worker, before the pool's own threads start
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_adopt,
                    initargs=(self.context, os.getpid()),
                )
                self._top_up(0)
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C that came meanwhile is raised now
            except OSError:  # the system refused a process (a process limit, no memory): no workers
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                self._abort_start()
            except BaseException:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                self._abort_start()
                raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()

    def _abort_start(self) -> None:
        """End the workers of a pool that could not be started whole (one fork failed after others
        worked): its manager thread may not run yet, so ``shutdown`` could not reach the workers already
        forked, and the interpreter's exit would wait for them. The map then runs in this process."""
        pool, self._pool = self._pool, None
        self._futures, self._head = [], 0
        if pool is None:
            return
        started = list((getattr(pool, "_processes", None) or {}).values())  # the pool's own record
        for process in started:
            process.terminate()
        for process in started:
            process.join()
        pool.shutdown(wait=False, cancel_futures=True)

    def _stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __iter__(self) -> Iterator[R]:
        if self.workers == 0:
            yield from (self.fn(self.context, item) for item in self.items)
            return
        for k in range(len(self._chunks)):
            part, failure, where = self._result(k)
            yield from part
            if failure is not None:
                if failure.__traceback__ is not None:  # computed here: its own traceback is intact
                    raise failure
                raise failure from WorkerTraceback(where)

    def _result(self, k: int) -> _ChunkResult[R]:
        """Chunk ``k``'s result, chunks being consumed in order.

        The workers take chunks from the front; this process, while the chunk it needs is not ready,
        computes the last chunk nobody has taken and keeps its result for its turn. Every core then
        stays busy, the caller's own process being one of them. A chunk is handed to the pool only
        when a worker is about to need it (two per worker at most are waiting or running), so what is
        left at the back is this process's to take."""
        from concurrent.futures.process import BrokenProcessPool

        while True:
            if k in self._here:
                return self._here.pop(k)
            if self._pool is None or k >= self._head:  # no pool (a worker died), or nobody took it
                self._head = max(self._head, k + 1)
                return _compute(self.fn, self.context, self._chunks[k])
            future = self._futures[k]
            try:
                self._top_up(k)
                if (
                    future.done()
                    or self._head > self._tail
                    or (self.may_compute is not None and not self.may_compute())
                ):
                    return future.result()
            except BrokenProcessPool:  # a worker died: what is not computed yet is computed here
                self._stop()
                continue
            self._here[self._tail] = _compute(self.fn, self.context, self._chunks[self._tail])
            self._tail -= 1

    def _top_up(self, k: int) -> None:
        """Hand the pool the next chunks from the front, up to two per worker waiting or running."""
        assert self._pool is not None
        busy = sum(1 for j in range(k, self._head) if not self._futures[j].done())
        while self._head <= self._tail and busy < 2 * self.workers:
            self._futures.append(self._pool.submit(_run_chunk, self.fn, self._chunks[self._head]))
            self._head += 1
            busy += 1


__all__ = [
    "CHUNKS_PER_PROCESS",
    "MAX_AUTO_PROCESSES",
    "OrderedMap",
    "WorkerTraceback",
    "available_cpus",
    "can_fork_workers",
    "process_count",
]
