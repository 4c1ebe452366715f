"""``skdbg collect``: the command line of :mod:`skdbg.collect` (listing, picking a pid, the messages).

Output contract (as every command): stdout carries data — the failed processes when listing, the written
files when collecting — and stderr the messages: what is missing, under the gate's ids, and how to get it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from skdbg.cli_errors import EXIT_USAGE, cli_errors, fail
from skdbg.parsers.common import ParseError

_MESSAGE_WIDTH = 160

COLLECT_HELP_EPILOG = """\b
Exit codes:
  0  scene written (or, without --pid, the failed processes listed and one picked)
  1  internal error (a bug in skdbg; rerun with SKDBG_DEBUG=1 for the traceback)
  2  usage error: no --pid and no terminal to ask (use --latest), -o missing, -o exists and is not empty
     (use --force to replace it)
  3  unreadable input: the log folder does not exist, nothing of the pid found
stdout carries data; messages go to stderr."""


def _stdin_is_terminal() -> bool:
    """Separate so tests can stand in for a terminal."""
    return sys.stdin.isatty()


def _usage(message: str) -> NoReturn:
    fail(message, EXIT_USAGE)


def _short(text: str) -> str:
    return text if len(text) <= _MESSAGE_WIDTH else text[: _MESSAGE_WIDTH - 3] + "..."


def _list(procs: list[object], log_dir: Path) -> None:
    from skdbg.collect.machine import ProcessLogs

    click.echo(f"failed processes under {log_dir}, newest first:")
    for p in procs:
        assert isinstance(p, ProcessLogs)
        f = p.fault
        assert f is not None
        where = f"{Path(f.src.file).name}:{f.src.line}"
        click.echo(f"  {p.pid:<8} {f.ts_text:<26} {where}  {_short(f.message)}")


@click.command("collect", epilog=COLLECT_HELP_EPILOG)
@click.option("--pid", type=int, default=None, help="The failed process. Without it: list the failed pids.")
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Scene folder to write (must be absent or empty unless --force).",
)
@click.option(
    "--log-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="CANN log root holding {run,debug}/plog/ and debug/device-<id>/ "
    "(default: $ASCEND_PROCESS_LOG_PATH, else $ASCEND_WORK_PATH, else ~/ascend/log).",
)
@click.option(
    "--sk-meta",
    type=click.Path(path_type=Path),
    default=None,
    help="The run's working directory, its sk_meta/ or sk_meta/<pid> (default: ./sk_meta).",
)
@click.option(
    "--source-root",
    type=click.Path(path_type=Path),
    default=None,
    help="The model source's git checkout: revision and marker file.",
)
@click.option(
    "--command", "command", default=None, help="The exact command line of the run (run.json command)."
)
@click.option("--exit-status", type=int, default=None, help="The run's exit status ($? of the launcher).")
@click.option("--rank", type=int, default=None, help="The rank of the process (launcher env RANK).")
@click.option("--latest", is_flag=True, help="Without --pid: take the newest failed process.")
@click.option(
    "--link", is_flag=True, help="Hard-link the files instead of copying them (copied where that fails)."
)
@click.option("--force", is_flag=True, help="Replace an existing -o folder (atomically, once complete).")
@cli_errors(bad_input=(ParseError,))
def collect(
    pid: int | None,
    out_dir: Path | None,
    log_dir: Path | None,
    sk_meta: Path | None,
    source_root: Path | None,
    command: str | None,
    exit_status: int | None,
    rank: int | None,
    latest: bool,
    link: bool,
    force: bool,
) -> None:
    """Build a scene from a failure on this machine: exactly the files of process PID (its plogs, its
    device logs of the same time window, sk_meta/<pid>/, the marker file of --source-root) and a run.json
    with what the evidence establishes; then say what is missing and how to record it next time, under
    the entry gate's ids (G1–G5, F1–F9). Without --pid: list the failed processes, newest first, and ask
    (on a terminal) or take the newest (--latest)."""
    from skdbg.collect.build import CollectRequest
    from skdbg.collect.build import collect as run_collect
    from skdbg.collect.machine import default_log_dir, read_log_folder

    root = log_dir if log_dir is not None else default_log_dir()
    if pid is not None and latest:
        _usage("--latest picks a pid: give either --pid or --latest")
    if out_dir is None and (pid is not None or latest):
        _usage("-o SCENE is required to collect")
    if pid is None:
        procs = read_log_folder(root).failed()
        if not procs:
            _usage(
                f"no failed process under {root} (no fault line in any plog): pass --pid PID to collect one"
            )
        _list(list(procs), root)
        if latest:
            pid = procs[0].pid
            click.echo(f"skdbg: --latest: collecting pid {pid}", err=True)
        elif out_dir is None:
            _usage("to collect one, rerun with --pid PID -o SCENE (or --latest -o SCENE for the newest)")
        elif _stdin_is_terminal():
            choices = [str(p.pid) for p in procs]
            pid = int(
                click.prompt("collect which pid", type=click.Choice(choices), default=choices[0], err=True)
            )
        else:
            _usage("no --pid and no terminal to ask: rerun with --pid PID (listed above) or --latest")
    assert pid is not None and out_dir is not None
    req = CollectRequest(
        pid=pid,
        out=out_dir,
        log_dir=root,
        sk_meta=sk_meta,
        source_root=source_root,
        command=command,
        exit_status=exit_status,
        rank=rank,
        link=link,
        force=force,
    )
    result = run_collect(req)
    for rel in result.files:
        click.echo(str(result.out / rel))
    click.echo(f"skdbg: collected process {pid} into {result.out} ({len(result.files)} files)", err=True)
    for note in result.notes:
        word = "missing" if note.missing else "note"
        click.echo(f"skdbg: {word} [{note.about}] {note.detail} — now: {note.hint}", err=True)
    for gap in result.gaps:
        where = f" ({gap.file}:{gap.line})" if gap.file and gap.line else f" ({gap.file})" if gap.file else ""
        click.echo(f"skdbg: gate {gap.id}: {gap.detail}{where} — next time: {gap.collect}", err=True)
    click.echo(f"skdbg: next: skdbg analyze {result.out}", err=True)


__all__ = ["collect"]
