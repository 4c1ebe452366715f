"""``skdbg tui SCENE`` and ``skdbg`` with no arguments (the bundled example scene).

Why here and not in skdbg/cli.py: the TUI's entry points import textual; the headless CLI wires
these in lazily so ``skdbg analyze`` never pays for (or depends on) the UI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

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


def launch(scene: Path | None) -> None:
    """Run the TUI on ``scene``; None opens the bundled example (or says clearly it is missing)."""
    from skdbg.tui.app import SkdbgApp

    missing: str | None = None
    if scene is None:
        scene = example_scene()
        if scene is None:
            missing = missing_example_text()
            click.echo(f"skdbg: {missing}", err=True)
    SkdbgApp(scene, missing=missing).run()


#: the project's exit code for unreadable or malformed input (skdbg/cli.py)
EXIT_BAD_INPUT = 3


@click.command("tui")
@click.argument("scene", type=click.Path(path_type=Path), required=False)
def tui(scene: Path | None) -> None:
    """Open SCENE in the interactive TUI (no SCENE: the bundled example scene).

    A scene that cannot be opened is refused before the UI starts (exit 3, one line on stderr)."""
    if scene is not None:
        from skdbg.parsers.common import ParseError
        from skdbg.scene import open_scene

        try:
            open_scene(scene)
        except ParseError as exc:
            click.echo(f"skdbg: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    launch(scene)


__all__ = ["EXAMPLE", "EXIT_BAD_INPUT", "example_scene", "launch", "missing_example_text", "tui"]
