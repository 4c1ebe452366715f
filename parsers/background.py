"""One load run in a daemon thread, its result (or exception) handed to whoever asks first.

Why a thread: the caller goes on (parsing sk_meta) while the load waits on what is slow, and an
exception must reach the caller unchanged, with its traceback, so the CLI's exit codes stay the same.
The plog scan's load is such a thread: it scans the plogs itself, or, where a child process scans them
(:mod:`skdbg.parsers.plog_fork`), it waits on the child's pipe and files what the child sends. Why not
``concurrent.futures``: one load, no pool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class BackgroundLoad(Generic[T]):
    """Run ``load`` once in a daemon thread named ``name``; :meth:`result` joins it."""

    def __init__(self, load: Callable[[], T], *, name: str) -> None:
        self._load = load
        self._value: list[T] = []  # the value once loaded (a box: T itself may be None)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value.append(self._load())
        except BaseException as exc:  # handed to the caller of result(), which re-raises it
            self._error = exc

    def result(self) -> T:
        """The load's value; its exception is re-raised here, in the caller's thread."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value[0]
