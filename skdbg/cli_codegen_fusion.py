"""``skdbg codegen superkernel OPS.json -o DIR`` — the thin CLI over :mod:`skdbg.codegen.fusion.generate`.

Writes ``DIR/<kernel_name>_kernel.cpp`` (the SK source with its ``.ascend.meta`` trailer) and
``DIR/<kernel_name>.json`` (the compiled JSON), prints the compile flags one per line on stdout.
Bad input (unreadable OPS.json or child json, bad options, refused event layout) exits 3 with one
line on stderr; the lead registers the command into the ``codegen`` group.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from skdbg.cli_codegen import OUTPUT_CODEGEN_HELP
from skdbg.cli_errors import cli_errors, output_folder_option


def _bad_input() -> tuple[type[BaseException], ...]:
    """Resolved when the command runs: the generator (and jinja2) load only then, not for `--help`."""
    from skdbg.codegen.fusion.model import FusionInputError
    from skdbg.codegen.fusion.options import OptionError

    return (FusionInputError, OptionError)


#: how the superkernel output folder is named in the refusal messages
SUPERKERNEL_WHAT = "superkernel output folder"


@click.command("superkernel", epilog=OUTPUT_CODEGEN_HELP)
@click.argument("ops_json", metavar="OPS.json", type=click.Path(path_type=Path, dir_okay=False))
@output_folder_option("-o", "--out", "out", what="Output folder")
@cli_errors(bad_input=_bad_input)
def superkernel(ops_json: Path, out: Path, force: bool) -> None:
    """Generate one JIT SuperKernel from OPS.json (children's compile-info jsons, events, options).

    \b
    OPS.json: {"kernel_name": …, "options": "k=v:…", "soc": "Ascend910_9391", "vector_core_cnt": 48,
               "ops": [{"json": "inputs/x.json", "stream_id": 1, "send_event_list": [],
                        "recv_event_list": [], "task_type": "normal", "text_size": 4096}, …]}
    `json` paths are relative to OPS.json; text_size (the child's .text bytes) gives the preload pages
    ceil(min(size, 16384) / 2048); vector_core_cnt / ai_core_cnt default per SoC (dynamic children).
    """
    from skdbg.atomic import write_tree  # here: every command loads this module, only this one writes
    from skdbg.codegen.fusion.generate import generate_superkernel
    from skdbg.codegen.fusion.model import load_ops_json

    result = generate_superkernel(load_ops_json(ops_json))
    files: dict[str, str | bytes] = {
        f"{result.kernel_name}_kernel.cpp": result.source,
        f"{result.kernel_name}.json": json.dumps(result.compiled_json, indent=2) + "\n",
    }
    write_tree(out, files, force=force, what=SUPERKERNEL_WHAT, inputs=[ops_json.parent])
    for flag in result.flags:
        click.echo(flag)
