"""The end of a batch command's process without the interpreter's teardown.

Why: once a one-scene command (``analyze``, ``inspect``, ``report``, ``verify``) has written its output,
the interpreter still tears itself down before the process ends: it clears every module (hundreds, with
numpy's) and frees each object they hold, one reference count at a time, memory the system takes back
at once anyway. On the 232 MB bench scene that was ~7 ms of a first run's last, single-threaded
stretch (bench/README, thirty-third round). mypy ends its runs the same way (its ``fast_exit``).

What still happens, as in a normal exit: every ``atexit`` handler runs (skdbg's code and pattern caches
are written, a temporary folder's finalizer removes it), then stdout and stderr are flushed, and the
exit status is the one ``sys.exit`` was given. What is skipped: the modules' teardown and the final
collection. The normal exit runs instead whenever this one could differ from it: a thread that is not
a daemon still runs (the normal exit waits for it), the exit code is not an integer (Python prints it),
a flush fails (Python reports it and exits 120), or this Python has no ``atexit`` runner to call.

Only the console script ends this way (:func:`skdbg.cli.run`), and only after a command asked for it
(:func:`end_without_teardown`): a test that runs the commands in its own process never does.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

_ASKED = False


def end_without_teardown() -> None:
    """Ask that the process end without the interpreter's teardown once its command is done (a batch
    command that reads one scene, then ends; see the module docstring)."""
    global _ASKED
    _ASKED = True


def asked() -> bool:
    """Whether a command of this process asked for it."""
    return _ASKED


def _status(code: object) -> int | None:
    """The exit status of ``sys.exit(code)`` when it is a plain number (None: the normal exit decides)."""
    if code is None:
        return 0
    if isinstance(code, int) and -(2**31) <= code < 2**31:  # (a larger one: Python's own handling)
        return code
    return None


def _others_running() -> bool:
    """A thread other than this one that the normal exit would wait for (not a daemon) still runs."""
    me = threading.current_thread()
    return any(t is not me and not t.daemon and t.is_alive() for t in threading.enumerate())


def end_process(code: object) -> None:
    """End the process now with ``code``'s status, when a command asked for it and nothing differs from
    a normal exit (see the module docstring); otherwise return, for the caller to exit normally."""
    if not _ASKED:
        return
    status = _status(code)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if status is None or run_exit_handlers is None or _others_running():
        return
    run_exit_handlers()  # (each runs once: the list is empty after, should the normal exit follow)
    with _interrupts_held():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the normal exit meets it again and reports it as Python does
            return
        os._exit(status)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT held back while the output is flushed and the process ends: a Ctrl-C in that last instant
    ends nothing more than the command already did, where it raised a KeyboardInterrupt in the middle of
    the exit (a traceback, status 130). Released, and delivered, should the normal exit follow. A no-op
    where the system has no signal masks (Windows)."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:
        yield
        return
    previous = block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        block(signal.SIG_SETMASK, previous)


__all__ = ["asked", "end_process", "end_without_teardown"]
