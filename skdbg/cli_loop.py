"""``skdbg relaunch``: the command line of :mod:`skdbg.loop.relaunch` (options, progress, the verdict).

Output contract (as every command): stdout carries data — the verdict lines, or the result document
with ``--format json`` — and stderr the progress: one live line on a terminal (rich), plain lines
otherwise. Exit 0 whatever the attempt's status (it is recorded); 3 for bad input, nothing recorded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from skdbg.cli_errors import EXIT_USAGE, cli_errors, fail
from skdbg.cli_types import TIMEOUT_SECONDS

RELAUNCH_EPILOG = """\b
Examples:
  skdbg relaunch S1 EX1-BASE-X1 -- python3 infer.py --config configs/e7.yaml
  skdbg relaunch S1 EX1-BASE-X1 --source ~/model --timeout 900 -- torchrun --nproc_per_node=1 infer.py
  skdbg relaunch S1 EX1-BASE-X1 --applied ~/model -- python3 infer.py
  skdbg relaunch S1 EX1-BASE-X1 --sim examples/models/mlp
\b
Exit codes:
  0  the attempt was run and recorded (its status says how it went: passed, failed, timed_out,
     interrupted, invalid)
  1  internal error (a bug in skdbg; rerun with SKDBG_DEBUG=1 for the traceback)
  2  usage error (unknown option)
  3  bad input, nothing recorded: unknown session or round, ARGV[0] not found or not executable,
     a missing folder, a malformed candidate
stdout carries data; progress and messages go to stderr."""


def _bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.loop.relaunch_source import RelaunchError
    from skdbg.loop.runner import RunnerError
    from skdbg.parsers.common import ParseError
    from skdbg.sessions.errors import LedgerError

    return (RelaunchError, RunnerError, LedgerError, ParseError)


@contextmanager
def _progress() -> Iterator[Callable[[str], None]]:
    """One live line on a terminal (rich, stderr), plain lines otherwise."""
    if not sys.stderr.isatty():
        yield lambda line: click.echo(f"skdbg: {line}", err=True)
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting") as status:

        def update(line: str) -> None:
            width = max(20, console.width - 4)
            status.update(line if len(line) <= width else line[: width - 1] + "…")

        yield update


def _debug_options(items: tuple[str, ...], candidate: Path | None) -> dict[str, Any]:
    """``--debug KEY=VAL`` → the options of the launch (integers stay integers)."""
    if candidate is not None:
        fail(
            "--debug and --candidate exclude each other (the candidate's options are a clean run)", EXIT_USAGE
        )
    debug: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            fail(f"--debug: expected KEY=VAL, got {item!r}", EXIT_USAGE)
        value: Any = int(raw) if raw.strip().lstrip("-").isdigit() else raw
        debug[key.strip()] = value
    return {"super_kernel_debug_options": debug}


@click.command("relaunch", epilog=RELAUNCH_EPILOG, context_settings={"ignore_unknown_options": False})
@click.argument("session_id", metavar="SESSION")
@click.argument("round_id", metavar="ROUND")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[-- ARGV...]")
@click.option(
    "--candidate",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="A `skdbg codegen candidate` folder of this round: its environment and compile options.",
)
@click.option(
    "--source",
    "source",
    type=click.Path(path_type=Path),
    default=None,
    help="The model source tree to copy and apply the round's marker edits to "
    "(default: the failed attempt's frozen marker file alone).",
)
@click.option(
    "--applied",
    "applied",
    type=click.Path(path_type=Path),
    default=None,
    help="The model source tree where the edits are already applied: checked, not copied.",
)
@click.option("--cwd", type=click.Path(path_type=Path), default=None, help="Working directory of the job.")
@click.option(
    "--timeout",
    type=TIMEOUT_SECONDS,
    default=None,
    help="Seconds before the job's process group is ended (above 0).",
)
@click.option(
    "--sim",
    "sim_model",
    type=click.Path(path_type=Path),
    default=None,
    help="Run the emulator on MODEL_DIR (python -m skdbg.sim job) instead of ARGV.",
)
@click.option("--seed", type=int, default=None, help="SKDBG_SIM_SEED for the job (the emulator's seed).")
@click.option(
    "--perf-runs",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="V5: after a clean run, time K clean baseline (SK fusion off) and K clean candidate processes "
    "(K >= 3; 0: V5 is not run).",
)
@click.option(
    "--debug",
    "debug",
    multiple=True,
    metavar="KEY=VAL",
    help="A super_kernel_debug_options entry for this launch (a diagnostic attempt, e.g. debug_op_exec_trace=1).",
)
@click.option(
    "--session-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Ledger directory (default: $SKDBG_HOME/sessions, else the platform state dir).",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@cli_errors(bad_input=_bad_input)
def relaunch(
    session_id: str,
    round_id: str,
    argv: tuple[str, ...],
    candidate: Path | None,
    source: Path | None,
    applied: Path | None,
    cwd: Path | None,
    timeout: float | None,
    sim_model: Path | None,
    seed: int | None,
    perf_runs: int,
    debug: tuple[str, ...],
    session_dir: Path | None,
    fmt: str,
) -> None:
    """Re-launch ROUND's candidate: apply its marker edits to a copy of the source (or check --applied),
    run ARGV without a shell in its own process group, collect the new pid's plog and sk_meta, freeze
    the attempt and verify V1–V5 against the failed attempt. Prints the verdict and the next step."""
    from skdbg.loop.relaunch import RelaunchRequest, verdict_lines
    from skdbg.loop.relaunch import relaunch as run_relaunch
    from skdbg.sessions.location import session_home
    from skdbg.sessions.store import Ledger

    if source is not None and applied is not None:
        fail(
            "--source and --applied exclude each other (copy and apply, or check what you applied)",
            EXIT_USAGE,
        )
    if argv and sim_model is not None:
        fail("give either --sim MODEL_DIR or the job after `--`, not both", EXIT_USAGE)
    if not argv and sim_model is None:
        fail("no job: pass the command after `--` (or --sim MODEL_DIR)", EXIT_USAGE)
    if 0 < perf_runs < 3:
        fail(f"--perf-runs: V5 needs at least 3 clean processes per side, got {perf_runs}", EXIT_USAGE)
    if perf_runs and debug:
        fail(
            "--perf-runs times clean runs: it cannot be combined with --debug (a diagnostic launch)",
            EXIT_USAGE,
        )
    options = _debug_options(debug, candidate) if debug else None
    with _progress() as progress:
        req = RelaunchRequest(
            session_id=session_id,
            round_id=round_id,
            argv=list(argv) if argv else None,
            sim_model=sim_model,
            source_root=applied if applied is not None else source,
            applied=applied is not None,
            cwd=cwd,
            timeout=timeout,
            seed=seed,
            options=options,
            progress=progress,
            candidate=candidate,
            perf_runs=perf_runs,
        )
        ledger = Ledger(session_home(session_dir))
        with ledger:
            for warning in ledger.warnings:
                click.echo(f"skdbg: warning: {warning}", err=True)
            result = run_relaunch(ledger, req)
            detail = ledger.status_history("attempt", result.attempt.pk)
    doc = result.to_json()
    doc["attempt"]["status_detail"] = detail[-1]["detail"] if detail else None
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(verdict_lines(doc)))


def register(main: click.Group) -> None:
    """Add ``relaunch`` to the top-level group."""
    main.add_command(relaunch)


__all__ = ["register", "relaunch"]
