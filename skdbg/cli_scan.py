"""``skdbg scan``: which rank of a multi-rank job failed first, and which only followed it.

A thin CLI over :mod:`skdbg.fleet` (discover → scan each rank in parallel → decide → print / write).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from skdbg.cli_errors import EXIT_BAD_INPUT, EXIT_USAGE, cli_errors, fail, force_option
from skdbg.cli_types import WINDOW_MILLISECONDS

SCAN_EPILOG = """\b
Each ROOT is a folder (or a quoted glob) holding rank folders: one folder per rank or host,
ASCEND_PROCESS_LOG_PATH per rank ({run,debug}/plog/plog-<pid>_<stamp>.log), or scene folders.
The rank id comes from run.json, else HCCL's init line in the plog, else the folder name
(rank3, rank_3, node1/rank3); the output says which.

\b
First failing rank: the earliest fault of a rank's own. Ranks whose first error lies within
--skew-ms of it tie; a tie goes to an SK/device fault over a follow-up error, then to the
lowest rank id. Followers: ranks whose only errors are follow-ups of another rank's fault
(HCCL EI0002/EI0006 timeouts, ERR02005, task abort 107022, heartbeat lost...).

\b
--open: after the scan, start the TUI on the first failing rank's folder (its analysis runs in
the background) with the Ranks screen (key 9) listing this scan; Enter there opens another rank.
With no failing rank the Ranks screen opens alone. The exit code is the scan's (below).

\b
Output folder (-o): scan.json (skdbg.scan/1) and ranks.csv, written atomically;
an existing non-empty folder is refused (exit 2) unless --force.

\b
Exit codes:
  0  every rank was read
  1  internal error (a bug in skdbg; rerun with SKDBG_DEBUG=1 for the traceback)
  2  usage error (bad option, --dask without the dask extra, an existing output folder,
     --open without an interactive terminal)
  3  some rank (or ROOT) was unreadable, or no rank was found; the scan still reports the rest
stdout carries data; messages go to stderr."""


def interactive() -> bool:
    """Whether a TUI can draw here (a terminal on both ends; a pipe or CI has none)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _dask_errors() -> tuple[type[BaseException], ...]:
    from skdbg.fleet.run import DaskFailed

    return (DaskFailed,)


@click.command("scan", epilog=SCAN_EPILOG)
@click.argument("roots", nargs=-1, required=True, metavar="ROOT|GLOB...")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Write scan.json and ranks.csv into this folder (absent or empty; see --force).")  # fmt: skip
@force_option
@click.option(
    "--format", "fmt", type=click.Choice(("table", "json", "csv")), default="table", show_default=True
)
@click.option("--dask", "dask_address", metavar="ADDRESS", default=None,
              help="Run the per-rank scan on this dask.distributed scheduler (tcp://host:8786); "
              "needs pip install 'skdbg[dask]' and the ranks on storage the workers see.")  # fmt: skip
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Local worker processes (default: the CPUs this process may use).")  # fmt: skip
@click.option("--skew-ms", type=WINDOW_MILLISECONDS, default=None,
              help="Clock-skew tolerance between ranks' plog clocks, in ms (default 1000; 0 to a year).")  # fmt: skip
@click.option("--open", "open_tui", is_flag=True,
              help="Then open the TUI: the first failing rank's scene, and the Ranks screen (9) with this scan.")  # fmt: skip
@cli_errors(bad_input=_dask_errors)
def scan(
    roots: tuple[str, ...],
    out_dir: Path | None,
    force: bool,
    fmt: str,
    dask_address: str | None,
    workers: int | None,
    skew_ms: float | None,
    open_tui: bool,
) -> None:
    """Scan the ranks of a multi-rank job: the first failing rank, its followers, signature groups."""
    from skdbg.atomic import ensure_fresh_dir, write_tree
    from skdbg.fleet import DEFAULT_SKEW_MS, csv_text, decide, discover, scan_all, scan_doc, summary_lines
    from skdbg.fleet.run import DaskUnavailable, default_workers

    if open_tui and not interactive():
        fail("--open needs an interactive terminal (the TUI draws on it); scan without --open, "
             "then run `skdbg tui --scan DIR` on the -o folder", EXIT_USAGE)  # fmt: skip
    if out_dir is not None:
        ensure_fresh_dir(out_dir, force=force, what="scan output folder", inputs=roots)
    found = discover(list(roots))
    try:
        sigs = scan_all(found.ranks, workers=workers, dask=dask_address)
    except DaskUnavailable as exc:
        fail(str(exc), EXIT_USAGE)
    verdict = decide(sigs, skew_ms=DEFAULT_SKEW_MS if skew_ms is None else skew_ms)
    engine = f"dask {dask_address}" if dask_address else f"local pool, {workers or default_workers()} workers"
    doc = scan_doc(verdict, roots=list(roots), problems=found.problems, engine=engine)
    if out_dir is not None:
        write_tree(
            out_dir,
            {"scan.json": json.dumps(doc, indent=1) + "\n", "ranks.csv": csv_text(doc)},
            force=force,
            what="scan output folder",
            inputs=roots,
        )
    if fmt == "json":
        click.echo(json.dumps(doc, indent=1))
    elif fmt == "csv":
        click.echo(csv_text(doc), nl=False)
    else:
        for line in summary_lines(doc):
            click.echo(line)
    if not doc["ranks"]:
        click.echo(
            "skdbg: error: no rank found: no plog-<pid>_<stamp>.log under "
            + " ".join(roots)
            + ("; nothing to open" if open_tui else ""),
            err=True,
        )
        sys.exit(EXIT_BAD_INPUT)
    if open_tui:
        from skdbg.tui.screens.ranks_open import launch_scan, opening_message

        click.echo(f"skdbg: {opening_message(doc)}", err=True)
        launch_scan(doc)
    if doc["unreadable"]:
        click.echo(
            f"skdbg: error: {len(doc['unreadable'])} rank(s) or roots unreadable (listed above)", err=True
        )
        sys.exit(EXIT_BAD_INPUT)


__all__ = ["interactive", "scan"]
