"""``skdbg codegen candidate`` — the thin CLI over :mod:`skdbg.codegen.fusion.candidate`.

Registered into the ``codegen`` group (created here when no other module made it first), so the
command works whether or not the fusion generator's CLI is installed alongside.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

EXIT_USAGE = 2
EXIT_BAD_INPUT = 3


@click.command("candidate")
@click.argument("scene", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--proposal",
    "proposal_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help='`skdbg analyze --format json` output, or its "proposal" object.',
)
@click.option(
    "-o", "--out", "out", required=True, type=click.Path(path_type=Path), help="Candidate folder to create."
)
@click.option(
    "--source-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the model source of the marker edits lives (default: the scene).",
)
def candidate(scene: Path, proposal_path: Path, out: Path, source_root: Path | None) -> None:
    """Regenerate the SKs of a proposed exclusion: predicted SK task queues, marker.patch, candidate.json.

    A blocked proposal or bad input is refused (exit 3) and nothing is written; an existing non-empty
    output folder is a usage error (exit 2) and is left untouched."""
    # the generator (and jinja2) load only when this command runs: `skdbg --help` stays fast
    from skdbg.codegen.fusion.candidate import (
        CandidateError,
        OutputExistsError,
        build_candidate,
        load_proposal,
        write_candidate,
    )

    try:
        if not scene.is_dir():
            raise CandidateError(f"{scene}: not a scene directory")
        proposal, _ = load_proposal(proposal_path)
        cand = build_candidate(scene, proposal, source_root=source_root, where=str(proposal_path))
        write_candidate(cand, out)
    except CandidateError as e:
        click.echo(f"skdbg: error: {e}", err=True)
        sys.exit(EXIT_USAGE if isinstance(e, OutputExistsError) else EXIT_BAD_INPUT)
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
