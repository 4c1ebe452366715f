"""The ``skdbg bisect`` command (see docs/bisect.md): automatic N1 narrowing across re-launches.

Why a module of its own: the command only wires the ledger, the production runner (``skdbg
relaunch`` with ``--sim MODEL_DIR`` or a user's ARGV) and the printing around
:func:`skdbg.loop.bisect.bisect`; all decisions live in :mod:`skdbg.loop`.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skdbg.cli_errors import EXIT_CODES_HELP, EXIT_USAGE, cli_errors, fail
from skdbg.cli_types import TIMEOUT_SECONDS
from skdbg.parsers.common import ParseError
from skdbg.sessions.errors import LedgerError

if TYPE_CHECKING:  # the ledger loads with the command that opens it: `skdbg analyze` never does
    from skdbg.sessions.store import Ledger


def _refusals() -> tuple[type[BaseException], ...]:
    """Exit-2 exceptions, imported only when a command fails (``skdbg --help`` loads no triage)."""
    from skdbg.loop.bisect import BisectError, BisectRefused

    return (BisectRefused, BisectError)


#: statuses that name a child (or set): everything else is a bisection that stopped without one
FOUND = ("isolated", "pair", "not_separable")


def _ledger(session_dir: Path | None) -> Ledger:
    from skdbg.sessions.location import session_home
    from skdbg.sessions.store import Ledger

    ledger = Ledger(session_home(session_dir))
    for warning in ledger.warnings:
        click.echo(f"skdbg: warning: {warning}", err=True)
    return ledger


def _attempt_ref(ref: str) -> tuple[str, int | None]:
    """``ROUND`` (its newest attempt) or ``ROUND/attempt-NNN`` (or ``ROUND/N``), as ``session propose``."""
    round_id, _, att = ref.partition("/")
    if not att:
        return round_id, None
    digits = att.removeprefix("attempt-")
    if not digits.isdigit():
        fail(f"expected ROUND or ROUND/attempt-NNN, got {ref!r}", EXIT_USAGE)
    return round_id, int(digits)


def _progress(line: str) -> None:
    click.echo(f"skdbg bisect: {line}", err=True)


@click.command("bisect", epilog=EXIT_CODES_HELP, context_settings={"ignore_unknown_options": False})
@click.argument("session_id", metavar="SESSION")
@click.argument("round_id", metavar="ROUND[/attempt-NNN]")
@click.argument("argv", nargs=-1, metavar="[-- ARGV...]")
@click.option(
    "--sim",
    "sim",
    type=click.Path(path_type=Path),
    default=None,
    help="Run probes on the emulator model MODEL_DIR.",
)
@click.option(
    "--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Runs per probe (majority)."
)
@click.option(
    "--timeout",
    type=TIMEOUT_SECONDS,
    default=None,
    help="Seconds per launch, above 0 (the process group is killed).",
)
@click.option("--cwd", type=click.Path(path_type=Path), default=None, help="Working directory of ARGV.")
@click.option(
    "--source",
    "source_root",
    type=click.Path(path_type=Path),
    default=None,
    help="Source tree of the marker file.",
)
@click.option("--force", is_flag=True, help="Bisect even when the verdict is high or n/a.")
@click.option("--session-dir", type=click.Path(path_type=Path), default=None, help="Ledger directory.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@cli_errors(usage=_refusals, bad_input=(ParseError, LedgerError))
def bisect_command(
    session_id: str,
    round_id: str,
    argv: tuple[str, ...],
    sim: Path | None,
    repeat: int,
    timeout: float | None,
    cwd: Path | None,
    source_root: Path | None,
    force: bool,
    session_dir: Path | None,
    fmt: str,
) -> None:
    """Narrow the failing SK of ROUND's newest attempt (or attempt NNN) across re-launches (N1, §3.9).

    Re-runs the baseline twice, then splits the scope into named halves at dependency-safe cuts,
    one narrowing round (-N<k>) per probe; a killed bisection resumes when re-run. Exit 0 when a
    child (or a minimal set) is isolated; 1 when it stopped without one (flaky, drift)."""
    if (sim is None) == (not argv):
        fail("give exactly one of --sim MODEL_DIR or -- ARGV...", EXIT_USAGE)
    round_id, no = _attempt_ref(round_id)
    from skdbg.loop.bisect import bisect, dumps, render_text
    from skdbg.loop.launcher import relaunch_runner

    with _ledger(session_dir) as ledger:
        runner = relaunch_runner(
            ledger,
            session_id,
            sim=sim,
            argv=list(argv),
            timeout=timeout,
            cwd=cwd,
            source_root=source_root,
            progress=_progress,
        )
        result = bisect(
            ledger,
            session_id,
            round_id,
            runner=runner,
            repeat=repeat,
            progress=_progress,
            force=force,
            no=no,
            source_root=source_root,
            launcher=f"--sim {sim}" if sim is not None else "-- " + shlex.join(argv),
        )
    click.echo(dumps(result) if fmt == "json" else render_text(result), nl=fmt != "json")
    if result.status not in FOUND:
        sys.exit(1)


__all__ = ["bisect_command"]
