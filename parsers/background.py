"""One load run in a daemon thread, its result (or exception) handed to whoever asks first.

Why a thread: the caller goes on (parsing sk_meta) while the load waits on what is slow, and an
exception must reach the caller unchanged, with its traceback, so the CLI's exit codes stay the same.
The plog scan's load is such a thread: it scans the plogs itself, or, where a child process scans them
(:mod:`skdbg.parsers.plog_fork`), it waits on the child's pipe and files what the child sends. Why not
``concurrent.futures``: one load, no pool.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class BackgroundLoad(Generic[T]):
    """Run ``load`` once in a daemon thread named ``name``; :meth:`result` waits for its value. Then,
    in the same thread, ``after`` runs: work that must not hold up the value (a forked scan's child
    handing over the other artifacts' hashes and a log it read ahead, for readers that wait for them);
    an exception it raises is dropped (it must leave its work for others to do, and let those readers
    go on: the forked scan's ``finish`` settles them whatever happens)."""

    def __init__(self, load: Callable[[], T], *, name: str, after: Callable[[], None] | None = None) -> None:
        self._load = load
        self._after = after
        self._value: list[T] = []  # the value once loaded (a box: T itself may be None)
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value.append(self._load())
        except BaseException as exc:  # handed to the caller of result(), which re-raises it
            self._error = exc
        finally:
            self._done.set()
        if self._after is not None:
            with contextlib.suppress(Exception):
                self._after()

    def ready(self) -> bool:
        """The load has ended (:meth:`result` returns at once)."""
        return self._done.is_set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the load to end; True when it has."""
        return self._done.wait(timeout)

    def result(self) -> T:
        """The load's value; its exception is re-raised here, in the caller's thread."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value[0]
