"""Hash the bytes a reader has just read in a second thread, while the reader goes on with them.

Why: gate G5 needs the SHA-256 of every plog, and the plog scan computes it from its own reads so no
file is read twice. Done inline, SHA-256 (~0.6 ns a byte here) and the scan's numpy passes (~1.4 ns a
byte) took turns on one core: a GB plog's scan took 2 s. Both release the GIL, so the hash of a block
can run on the other core while the same block is searched: the scan's thread hands each read to a
:class:`HashLane` and, before it writes into that buffer again, waits for the lane to *settle* (the
hash of those bytes is done). The bytes hashed, and their order per hasher, are the same as inline.

A lane's one thread takes the submissions in their order, so each hasher sees its bytes in file order.
A lane holds a view of the reader's buffer until it settles: the buffer must not be resized or written
before (``bytearray`` refuses a resize while a view exists).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:  # loaded on a lane's first feed: a small scene's scan (inline hashes) never needs it
    from concurrent.futures import Future, ThreadPoolExecutor


class Hasher(Protocol):
    """What a scan feeds the bytes it reads to (a ``hashlib`` object)."""

    def update(self, data: bytes | memoryview, /) -> None: ...


class CountingSha256:
    """A SHA-256 that also counts the bytes fed (the size the digest is of)."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.size = 0

    def update(self, data: bytes | memoryview, /) -> None:
        self.sha.update(data)
        self.size += len(data)

    def hexdigest(self) -> str:
        return self.sha.hexdigest()


class Sha256Done(NamedTuple):
    """A :class:`CountingSha256` once fed its whole file: what a scan in a child process sends back
    (:mod:`skdbg.parsers.plog_fork`)."""

    size: int
    sha256: str

    def hexdigest(self) -> str:
        return self.sha256


def _update(hasher: Hasher, view: memoryview) -> None:
    """``hasher.update(view)``, then the view let go (the reader may then resize its buffer)."""
    try:
        hasher.update(view)
    finally:
        view.release()


class HashLane:
    """Hashes fed by one reader, done behind it: :meth:`settle` before the fed bytes change.

    A context manager: its thread starts on the first :meth:`feed` and is gone after the ``with``
    (no thread outlives a scan: ``skdbg verify --diff`` forks its worker only from a process that runs
    no other thread, and a forked child would wait forever on a pool whose thread did not follow it)."""

    __slots__ = ("_pending", "_pool")

    def __init__(self) -> None:
        self._pending: list[Future[None]] = []
        self._pool: ThreadPoolExecutor | None = None

    def feed(self, hasher: Hasher, data: bytes | memoryview) -> None:
        """Have ``hasher`` take ``data`` in the lane's thread; ``data`` must stay unchanged until :meth:`settle`."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skdbg-hash-behind")
        with memoryview(data) as whole:
            view = whole[:]  # the thread's own view (released there), not the caller's
        self._pending.append(self._pool.submit(_update, hasher, view))

    def to(self, hasher: Hasher) -> Hasher:
        """A hasher whose ``update`` feeds ``hasher`` through this lane."""
        return _Fed(self, hasher)

    def settle(self) -> None:
        """Return once every byte fed so far is hashed; a hash's exception is raised here."""
        pending, self._pending = self._pending, []
        failure: BaseException | None = None
        for done in pending:  # every one waited for: none may still hold a view of the buffer
            exc = done.exception()
            failure = failure or exc
        if failure is not None:
            raise failure

    def close(self) -> None:
        """:meth:`settle`, then stop the lane's thread (a later :meth:`feed` starts another)."""
        try:
            self.settle()
        finally:
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown()

    def __enter__(self) -> HashLane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Fed:
    """:meth:`HashLane.to`'s hasher."""

    __slots__ = ("_lane", "_hasher")

    def __init__(self, lane: HashLane, hasher: Hasher) -> None:
        self._lane = lane
        self._hasher = hasher

    def update(self, data: bytes | memoryview, /) -> None:
        self._lane.feed(self._hasher, data)


__all__ = ["CountingSha256", "HashLane", "Hasher", "Sha256Done"]
