"""``skdbg demo``: the command line of :mod:`skdbg.loop.demo` (printing each step as it happens).

Output contract: stdout carries the steps (text) or one JSON document (``--format json``); the
progress of the launches goes to stderr. Exit 0 when the story ran to its end — also when that end is
an honest "the exclusion did not fix it" — 2 for a usage error (unknown story, folder in the way).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from skdbg.cli_errors import EXIT_CODES_HELP, EXIT_USAGE, cli_errors, fail

#: the stories of skdbg.loop.demo_model (repeated here so `--help` needs no import of the loop)
STORY_NAMES = ("fused", "operator", "interaction", "flaky", "hang", "circular", "wrong-result", "entry")


def _bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.parsers.common import ParseError
    from skdbg.sessions.errors import LedgerError
    from skdbg.sim import SimError

    return (ParseError, LedgerError, SimError)


@click.command("demo", epilog=EXIT_CODES_HELP)
@click.argument("folder", metavar="[DIR]", required=False, type=click.Path(path_type=Path))
@click.option(
    "--fault",
    "story",
    type=click.Choice(STORY_NAMES),
    default=None,
    help="The story: the fault the emulated device injects (default: fused; with --bisect: wrong-result).",
)
@click.option("--bisect", "use_bisect", is_flag=True, help="Start from a low-confidence failure and bisect.")
@click.option("--tui", "open_tui", is_flag=True, help="Open the TUI on the failing scene at the end.")
@click.option("--force", is_flag=True, help="Empty DIR first when it is not empty.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@cli_errors(bad_input=_bad_input)
def demo(
    folder: Path | None, story: str | None, use_bisect: bool, open_tui: bool, force: bool, fmt: str
) -> None:
    """Run the whole loop on the SK emulator, offline, printing each step: a failing run, analyze,
    propose, codegen candidate, relaunch (on the emulator) and verify (V1–V5).

    DIR (default: a new temporary folder) receives the model, the failing scene, the session ledger
    and the candidate; the commands printed with each step reproduce it by hand."""
    from skdbg.loop.demo import DemoError, DemoStep, run_demo

    if folder is None:
        import tempfile  # here: every command loads this module (tempfile ~1 ms), only demo uses it

        folder = Path(tempfile.mkdtemp(prefix="skdbg-demo-"))

    def say(step: DemoStep) -> None:
        if fmt != "text":
            return
        click.secho(f"{step.number}. {step.title}", bold=True)
        for line in step.lines:
            click.echo(f"   {line}")
        if step.command:
            click.secho(f"   $ {step.command}", dim=True)

    def progress(line: str) -> None:
        click.secho(f"   · {line}", dim=True, err=True)

    try:
        result = run_demo(folder, story, use_bisect=use_bisect, force=force, say=say, progress=progress)
    except DemoError as exc:
        fail(str(exc), EXIT_USAGE)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        click.secho(f"demo finished: {result.outcome} — {result.summary}", bold=True)
        click.echo(f"everything is in {folder}; the session: skdbg session show {result.session_id} "
                   f"--session-dir {folder / 'ledger'}")  # fmt: skip
    if open_tui:
        from skdbg.tui.cli import launch

        launch(folder / "failed-run")


__all__ = ["STORY_NAMES", "demo"]
