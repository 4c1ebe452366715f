"""``skdbg diff SCENE_A SCENE_B``: what changed between two failure scenes (docs/diff.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from skdbg.cli_errors import EXIT_CODES_HELP, cli_errors

DIFF_FORMATS = ("text", "json", "md")

DIFF_HELP = (
    """\b
Exit status of diff:
  0  both scenes were analysed and compared, whether they differ or not
     (the output says which: `same` in JSON, the `diff:` line in text)
"""
    + "\n"
    + EXIT_CODES_HELP
)


def _bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.diffing import DiffInputError
    from skdbg.parsers.common import ParseError

    return (DiffInputError, ParseError)


@click.command("diff", epilog=DIFF_HELP)
@click.argument("scene_a", type=click.Path(path_type=Path))
@click.argument("scene_b", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(DIFF_FORMATS), default="text", show_default=True)
@click.option("--no-cache", is_flag=True, help="Analyse afresh; do not read or write the result cache.")
@cli_errors(bad_input=_bad_input)
def diff_command(scene_a: Path, scene_b: Path, fmt: str, no_cache: bool) -> None:
    """Compare two failure scenes: fault kind, SK entry and scope, suspect child, exception cores and
    their PCs relative to the child, COND states, error bits, fused sets (children matched by funcName
    and occurrence, never nodeId), break reasons, debug options, env probe and run identity. Both scenes
    are analysed in parallel. JSON is the skdbg.diff/1 contract."""
    from skdbg.diffing import diff_scenes
    from skdbg.diffing.render import render_markdown, render_text

    result = diff_scenes(scene_a, scene_b, use_cache=not no_cache)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    elif fmt == "md":
        click.echo(render_markdown(result), nl=False)
    else:
        click.echo(render_text(result), nl=False)


__all__ = ["diff_command"]
