"""The CLI's one error contract: exit codes, the one-line message, and the output-folder convention.

Why one module: every command (triage, sessions, codegen, TUI start-up, collect) must answer the
same failure the same way — a non-empty output folder is exit 2 everywhere, malformed input exit 3,
a bug exit 1 — and the ``--force`` option and its ``--help`` text are defined here once. Only click
is imported at module level, so ``skdbg --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from skdbg.show import one_line

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
#: 128 + SIGPIPE: the status a shell reports for ``cat`` or ``grep`` when their reader went away
EXIT_PIPE = 141

EXIT_CODES_HELP = """\b
Exit codes:
  0  done
  1  internal error (a bug in skdbg; rerun with SKDBG_DEBUG=1 for the traceback)
  2  usage error (unknown option, unknown table, bad PC syntax, an existing non-empty output folder)
  3  unreadable or malformed input (missing path, binary file, wrong ELF, not a failure scene)
  141  stdout closed before everything was written (`| head`): stopped quietly, as cat does
stdout carries data; messages go to stderr."""

#: the epilog paragraph of every command that writes a folder (README "Output folders" says the same)
OUTPUT_FOLDER_HELP = """\b
Output folder (-o):
  absent or empty      written; it appears whole or not at all (a failed run leaves nothing)
  existing, not empty  refused with exit 2 and left untouched
  --force              replaced atomically, only once the new folder is complete"""

F = TypeVar("F", bound=Callable[..., Any])
#: exception classes, or a function naming them (so a command's core modules load only when it runs)
ExcTypes = tuple[type[BaseException], ...] | Callable[[], tuple[type[BaseException], ...]]

force_option = click.option(
    "--force",
    is_flag=True,
    help="Replace an existing non-empty output folder (atomically, once the new one is complete).",
)


def output_folder_option(*decls: str, what: str) -> Callable[[F], F]:
    """``-o DIR`` plus ``--force``: the output-folder option of every command, declared once.

    ``decls`` are the option's names (``"-o", "--output", "out_dir"``); ``what`` describes DIR.
    """
    option = click.option(
        *decls,
        type=click.Path(path_type=Path),
        required=True,
        help=f"{what} (absent or empty; see --force).",
    )

    def decorate(func: F) -> F:
        return option(force_option(func))

    return decorate


def fail(message: str, code: int) -> NoReturn:
    """The one-line error every command prints: ``skdbg: error: <message>`` on stderr, then exit."""
    click.echo(f"skdbg: error: {one_line(message)}", err=True)
    sys.exit(code)


def stdout_gone() -> bool:
    """Whether stdout is a pipe or socket whose reader went away (``skdbg inspect … | head`` after
    ``head`` exited): a write to it fails with ``BrokenPipeError``, and that is no error of the input.

    Why ``poll``: a broken pipe from another pipe (a launcher's stdin) must still be reported; only
    stdout's own state tells them apart. Its write end polls as POLLERR once no reader is left."""
    try:
        import select

        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
        if fd < 0:
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, ValueError, OSError):  # no poll here, or stdout is no file
        return False


def stop_for_closed_stdout() -> NoReturn:
    """Stop quietly with :data:`EXIT_PIPE` because stdout's reader went away, as ``cat`` stops.

    stdout is pointed at ``/dev/null`` first: what is still buffered is then flushed there at exit
    instead of failing again (the recipe of the Python docs' "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        os.close(devnull)
    except (OSError, ValueError):
        pass  # nothing left to protect: the exit's flush is all that could still fail
    sys.exit(EXIT_PIPE)


@contextmanager
def quiet_if_stdout_closes() -> Iterator[None]:
    """Run a command's body, then flush stdout; should stdout's reader go away meanwhile (``| head``),
    stop with :func:`stop_for_closed_stdout`. Any other ``BrokenPipeError`` goes on (an error).

    Why the flush inside: a reader gone by the end is seen here, not by the exit's flush (which Python
    would report as an ignored exception and exit 120)."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        if stdout_gone():
            stop_for_closed_stdout()
        raise


def _os_message(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else ""
    return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)


def _types(spec: ExcTypes) -> tuple[type[BaseException], ...]:
    return spec if isinstance(spec, tuple) else spec()


def _output_not_empty(exc: Exception) -> bool:
    """Whether ``exc`` is :class:`skdbg.atomic.OutputNotEmptyError`.

    Why imported here, when something went wrong: importing it for an ``except`` clause cost every
    command (``analyze`` writes no folder) ~1.4 ms of ``tempfile`` and :mod:`skdbg.atomic` itself.
    """
    from skdbg.atomic import OutputNotEmptyError

    return isinstance(exc, OutputNotEmptyError)


def cli_errors(*, usage: ExcTypes = (), bad_input: ExcTypes = ()) -> Callable[[F], F]:
    """Map a command's exceptions to the exit-code contract with one line on stderr.

    :class:`OutputNotEmptyError` and ``usage`` are exit 2; ``bad_input`` and filesystem trouble
    (``OSError``: unreadable input, a full disk or a name too long while writing) are exit 3;
    anything else is a bug: exit 1 (``SKDBG_DEBUG=1`` re-raises for the traceback).
    """

    def decorate(func: F) -> F:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                with quiet_if_stdout_closes():
                    return func(*args, **kwargs)
            except Exception as exc:
                # the types are resolved only when something went wrong: a callable spec may import
                # heavy modules (the triage stack) that a command's fast path never loads
                if _output_not_empty(exc):
                    fail(str(exc), EXIT_USAGE)
                if isinstance(exc, _types(usage)):
                    fail(str(exc), EXIT_USAGE)
                if isinstance(exc, _types(bad_input)):
                    fail(str(exc), EXIT_BAD_INPUT)
                if isinstance(exc, OSError):
                    fail(_os_message(exc), EXIT_BAD_INPUT)
                if os.environ.get("SKDBG_DEBUG"):
                    raise
                fail(
                    f"internal error: {type(exc).__name__}: {exc} (rerun with SKDBG_DEBUG=1 for the traceback)",
                    EXIT_INTERNAL,
                )

        return wrapper  # type: ignore[return-value]

    return decorate


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CODES_HELP",
    "EXIT_INTERNAL",
    "EXIT_PIPE",
    "EXIT_OK",
    "EXIT_USAGE",
    "OUTPUT_FOLDER_HELP",
    "cli_errors",
    "fail",
    "force_option",
    "output_folder_option",
    "quiet_if_stdout_closes",
    "stdout_gone",
    "stop_for_closed_stdout",
]
