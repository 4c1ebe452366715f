"""``skdbg codegen candidate`` — the thin CLI over :mod:`skdbg.codegen.fusion.candidate`.

Registered into the ``codegen`` group (created here when no other module made it first), so the
command works whether or not the fusion generator's CLI is installed alongside.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from skdbg.cli_codegen import OUTPUT_CODEGEN_HELP
from skdbg.cli_errors import cli_errors, output_folder_option
from skdbg.parsers.common import ParseError


def _bad_input() -> tuple[type[BaseException], ...]:
    """Resolved when the command runs: the generator (and jinja2) load only then, not for `--help`."""
    from skdbg.codegen.fusion.candidate import CandidateError

    return (CandidateError, ParseError)


@click.command("candidate", epilog=OUTPUT_CODEGEN_HELP)
@click.argument("scene", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--proposal",
    "proposal_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help='`skdbg analyze --format json` output, or its "proposal" object.',
)
@output_folder_option("-o", "--out", "out", what="Candidate folder to create")
@click.option(
    "--source-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the model source of the marker edits lives (default: the scene).",
)
@cli_errors(bad_input=_bad_input)
def candidate(scene: Path, proposal_path: Path, out: Path, force: bool, source_root: Path | None) -> None:
    """Regenerate the SKs of a proposed exclusion: predicted SK task queues, marker.patch, candidate.json.

    A blocked proposal or bad input is refused (exit 3) and nothing is written; an existing non-empty
    output folder is a usage error (exit 2) and is left untouched."""
    from skdbg.codegen.fusion.candidate import build_candidate, load_proposal, write_candidate

    proposal, _ = load_proposal(proposal_path)
    cand = build_candidate(scene, proposal, source_root=source_root, where=str(proposal_path))
    write_candidate(cand, out, force=force)
    pred = cand.manifest["prediction"]
    click.echo(
        json.dumps(
            {
                "out": str(out),
                "sks": [s["kernels"] for s in pred["candidate_sks"]],
                "agrees_with_proposal": pred["agrees_with_proposal"],
            }
        )
    )
    for d in pred["differences"]:
        click.echo(f"skdbg: warning: {d}", err=True)


def register(main: click.Group) -> None:
    """Add ``candidate`` under ``main``'s ``codegen`` group, creating the group if absent."""
    group = main.commands.get("codegen")
    if not isinstance(group, click.Group):
        group = click.Group("codegen", help="SuperKernel code generation and scoped regeneration.")
        main.add_command(group)
    group.add_command(candidate)
