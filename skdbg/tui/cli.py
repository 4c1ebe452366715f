"""``skdbg tui SCENE``, ``skdbg tui PLOG…`` (the log viewer alone) and ``skdbg`` with no arguments
(the bundled example scene).

Why here and not in skdbg/cli.py: the TUI's entry points import textual; the headless CLI wires
these in lazily so ``skdbg analyze`` never pays for (or depends on) the UI.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skdbg.cli_errors import EXIT_CODES_HELP, EXIT_USAGE, cli_errors, fail
from skdbg.parsers.common import ParseError

if TYPE_CHECKING:
    from skdbg.triage.context import TriageContext

EXAMPLE = "aiv-fault-add-custom"


def example_scene() -> Path | None:
    """The bundled example scene in a source checkout (wheels ship no examples): None if absent."""
    here = Path(__file__).resolve()
    for base in here.parents:
        candidate = base / "examples" / "scenes" / EXAMPLE
        if (candidate / "run.json").is_file():
            return candidate
    return None


def missing_example_text() -> str:
    return (
        f"the bundled example scene examples/scenes/{EXAMPLE} is not installed (wheels ship no examples): "
        "run `skdbg tui SCENE` on a failure scene, or use a source checkout"
    )


#: the screens ``skdbg tui --screen`` may open first (the app's modes)
SCREENS = ("overview", "evidence", "log", "scope", "proposal", "session", "candidate", "timeline", "ranks")


def launch(
    scene: Path | None,
    *,
    ctx: TriageContext | None = None,
    screen: str = "overview",
    session_dir: Path | None = None,
) -> None:
    """Run the TUI on ``scene``; None opens the bundled example (or says clearly it is missing).

    ``ctx`` is the scene already opened and checked by the command (the UI does not open it twice).
    """
    from skdbg.tui.app import SkdbgApp
    from skdbg.tui.screens.session_ref import SessionRef

    missing: str | None = None
    if scene is None:
        scene = example_scene()
        if scene is None:
            missing = missing_example_text()
            click.echo(f"skdbg: {missing}", err=True)
    session = SessionRef.default(session_dir)
    app = SkdbgApp(scene, ctx=ctx, missing=missing, start_mode=screen, session=session)
    app.restore_choices()
    app.run()


def launch_session(session_id: str, session_dir: Path | None, screen: str) -> None:
    """``skdbg tui --session ID``: the Session screen, the other screens on the newest attempt's scene.

    An unknown session or a missing ledger is refused before the UI starts (LedgerError: exit 3)."""
    from skdbg.tui.app import SkdbgApp
    from skdbg.tui.screens.session_ref import SessionRef, session_scene

    ref = SessionRef.default(session_dir)
    with session_scene(SessionRef(ref.home, session_id)) as (session, scene, why):
        if why is not None:
            click.echo(f"skdbg: {why}", err=True)
        app = SkdbgApp(scene, missing=why, start_mode=screen, session=session)
        app.sub_title = f"session {session_id}" + (f" · {session.attempt_ref}" if session.attempt_ref else "")
        app.restore_choices()
        app.run()


def launch_logs(paths: Sequence[Path]) -> None:
    """Run the log viewer alone on ``paths`` (plog files): fault stops and search, no analysis."""
    from skdbg.tui.logapp import LogApp

    log_app = LogApp(paths)
    log_app.restore_choices()
    log_app.run()


def _check_logs(paths: Sequence[Path]) -> None:
    """Every path must be a readable regular file (ParseError / OSError: exit 3, one line)."""
    from skdbg.parsers.lineindex import LineIndex

    for p in paths:
        if not p.exists():
            raise ParseError(str(p), "a scene folder or a plog file (path does not exist)")
        LineIndex(p)  # the viewer's own check: a regular file
        with p.open("rb"):
            pass  # readable (permission)


def _tui_bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.diffing import DiffInputError
    from skdbg.sessions.errors import LedgerError

    return (ParseError, DiffInputError, LedgerError)


@click.command("tui", epilog=EXIT_CODES_HELP)
@click.argument("paths", metavar="[SCENE | PLOG...]", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--screen",
    type=click.Choice(SCREENS),
    default=None,
    help="The screen shown first [default: overview; session with --session; ranks with --scan] (log: the plogs open at "
    "once, while the analysis runs).",
)
@click.option(
    "--session",
    "session_id",
    default=None,
    metavar="ID",
    help="Open the ledger session ID on the Session screen; the other screens show its newest attempt.",
)
@click.option(
    "--session-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Ledger directory (default: $SKDBG_HOME/sessions, else the platform state dir).",
)
@click.option(
    "--diff",
    "diff_mode",
    is_flag=True,
    help="Given two scene folders A B: open their diff (skdbg diff A B) as a table, one row per field.",
)
@click.option(
    "--scan",
    "scan_file",
    metavar="SCAN.json",
    type=click.Path(path_type=Path),
    default=None,
    help="A saved scan (skdbg scan -o DIR: DIR or DIR/scan.json): open the first failing rank's folder and "
    "start on the Ranks screen (9), which lists the scan (--screen picks another first screen).",
)
@cli_errors(bad_input=_tui_bad_input)
def tui(
    paths: tuple[Path, ...],
    screen: str | None,
    session_id: str | None,
    session_dir: Path | None,
    diff_mode: bool,
    scan_file: Path | None,
) -> None:
    """Open SCENE in the interactive TUI (no SCENE: the bundled example scene). Given one or more plog
    files instead, open the log viewer alone: merged by time, fault stops (e/E) and search (/), no
    verdict. With --diff and two scene folders A B, open their diff (skdbg diff A B) instead.

    A scene that cannot be analysed — a missing path, a folder that is not a failure scene, a
    malformed run.json or model source — is refused before the UI starts with the same one-line
    message as `skdbg analyze` (exit 3). With --session ID, open that ledger session on the Session
    screen (an unknown id: exit 3); with --scan, a saved scan on the Ranks screen."""
    if session_id is not None and scan_file is not None:
        fail("--session and --scan open different things: give one of them", EXIT_USAGE)
    if session_id is not None:
        if paths or diff_mode:
            fail(
                "--session opens the session's newest attempt: give no SCENE, PLOG or --diff with it",
                EXIT_USAGE,
            )
        launch_session(session_id, session_dir, screen or "session")
        return
    if scan_file is not None:
        if paths or diff_mode:
            fail("--scan opens a saved scan alone: give no SCENE, PLOG or --diff with it", EXIT_USAGE)
        if session_dir is not None:
            fail("--session-dir is the ledger of --session or of a scene's Accept, not of --scan", EXIT_USAGE)
        from skdbg.fleet.scandoc import load_scan_doc
        from skdbg.tui.screens.ranks_open import launch_scan

        launch_scan(load_scan_doc(scan_file), screen=screen or "ranks")
        return
    if diff_mode:
        if len(paths) != 2:
            fail(f"--diff needs two scene folders A B, got {len(paths)} path(s)", EXIT_USAGE)
        if screen is not None or session_dir is not None:
            fail("--diff opens the diff view alone: --screen and --session-dir do not apply", EXIT_USAGE)
        from skdbg.diffing import diff_scenes
        from skdbg.tui.diffapp import DiffApp

        diff_app = DiffApp(diff_scenes(paths[0], paths[1]))
        diff_app.restore_choices()
        diff_app.run()
        return
    screen_given = screen is not None
    screen = screen or "overview"
    if not paths:
        launch(None, screen=screen, session_dir=session_dir)
        return
    folders = [p for p in paths if p.is_dir()]
    if folders and len(paths) > 1:
        fail(
            f"give one scene folder or plog files, not {len(paths)} paths with folders among them", EXIT_USAGE
        )
    if folders:
        from skdbg.triage.context import check_inputs, open_context

        ctx = open_context(folders[0])
        check_inputs(ctx)  # the checks `skdbg analyze` makes, before the UI starts
        launch(folders[0], ctx=ctx, screen=screen, session_dir=session_dir)
        return
    if screen_given or session_dir is not None:
        fail("plog files open in the log viewer alone: --screen and --session-dir need a scene", EXIT_USAGE)
    _check_logs(paths)
    launch_logs(paths)


__all__ = [
    "EXAMPLE",
    "SCREENS",
    "example_scene",
    "launch",
    "launch_logs",
    "launch_session",
    "missing_example_text",
    "tui",
]
