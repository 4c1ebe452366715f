"""Run a function over the two halves of a list, the second half in a forked child process.

Why: ``codegen adapt`` of a large asset spends most of its time reading, tokenizing and adapting
files one by one, each independent of the others, on machines with at least two cores. A forked
child inherits the loaded modules, so it starts in a few milliseconds where a ``multiprocessing``
pool would start a fresh interpreter (or pay for its own machinery); it sends its result back
pickled through a pipe.

It is used only where forking is the platform's process start method (Linux; never macOS, where
``multiprocessing`` spawns) and safe (no other thread running), with two usable CPUs. Otherwise —
and whenever the child fails in any way (dies, its result does not pickle) — the work is done in
this process, so the result never depends on the route taken.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def fork_usable() -> bool:
    """Fork is the start method here, no other thread runs, and two CPUs can be used."""
    if not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity") or sys.platform != "linux":
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False  # a fork copies held locks, never their owners
    if len(os.sched_getaffinity(0)) < 2:
        return False
    multiprocessing = sys.modules.get("multiprocessing")
    method: str
    if multiprocessing is not None:  # the program may have chosen a start method
        method = (
            multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
        )
    else:  # nobody chose one: the platform default, without importing multiprocessing (~5 ms)
        method = "fork" if sys.version_info < (3, 14) else "forkserver"  # 3.14 changed Linux's default
    return method == "fork"


def map_halves(fn: Callable[[Sequence[T]], R], items: Sequence[T], *, parallel: bool) -> list[R]:
    """``[fn(items)]``, or with ``parallel`` ``[fn(first half), fn(second half)]`` with the second
    half computed in a forked child (in this process if the child fails).

    ``fn`` must not print or leave state behind: the child's side effects are lost.
    """
    if not parallel or len(items) < 2:
        return [fn(items)]
    import pickle

    mid = (len(items) + 1) // 2
    first, second = items[:mid], items[mid:]
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare (limits, memory): all of it here
        os.close(read_fd)
        os.close(write_fd)
        return [fn(items)]
    if pid == 0:  # the child: compute, send, leave without running any exit handler
        try:
            os.close(read_fd)
            try:
                payload = pickle.dumps(fn(second), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                payload = b""  # the parent computes this half itself
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    reaped = False
    try:
        result = fn(first)
        while chunk := os.read(read_fd, 1 << 20):
            chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        reaped = True
    finally:
        os.close(read_fd)
        if not reaped:  # interrupted: the child's work is not wanted any more
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    data = b"".join(chunks)
    if status == 0 and data:
        try:
            return [result, pickle.loads(data)]
        except Exception:  # noqa: BLE001 - any undecodable result: compute it here instead
            pass
    return [result, fn(second)]


__all__ = ["fork_usable", "map_halves"]
