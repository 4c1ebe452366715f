"""``skdbg codegen superkernel OPS.json -o DIR`` — the thin CLI over :mod:`skdbg.codegen.fusion.generate`.

Writes ``DIR/<kernel_name>_kernel.cpp`` (the SK source with its ``.ascend.meta`` trailer) and
``DIR/<kernel_name>.json`` (the compiled JSON), prints the compile flags one per line on stdout.
Bad input (unreadable OPS.json or child json, bad options, refused event layout) exits 3 with one
line on stderr; the lead registers the command into the ``codegen`` group.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 3


def _fail(message: str, code: int) -> None:
    click.echo(f"skdbg: {message}", err=True)
    sys.exit(code)


@click.command("superkernel")
@click.argument("ops_json", metavar="OPS.json", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Output folder.",
)
def superkernel(ops_json: Path, out: Path) -> None:
    """Generate one JIT SuperKernel from OPS.json (children's compile-info jsons, events, options).

    \b
    OPS.json: {"kernel_name": …, "options": "k=v:…", "soc": "Ascend910_9391", "vector_core_cnt": 48,
               "ops": [{"json": "inputs/x.json", "stream_id": 1, "send_event_list": [],
                        "recv_event_list": [], "task_type": "normal", "text_size": 4096}, …]}
    `json` paths are relative to OPS.json; text_size (the child's .text bytes) gives the preload pages
    ceil(min(size, 16384) / 2048); vector_core_cnt / ai_core_cnt default per SoC (dynamic children).
    """
    # the generator (and jinja2) load only when this command runs: `skdbg --help` stays fast
    from skdbg.codegen.fusion.generate import generate_superkernel
    from skdbg.codegen.fusion.model import FusionInputError, load_ops_json
    from skdbg.codegen.fusion.options import OptionError

    try:
        result = generate_superkernel(load_ops_json(ops_json))
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{result.kernel_name}_kernel.cpp").write_text(result.source, encoding="utf-8")
        (out / f"{result.kernel_name}.json").write_text(
            json.dumps(result.compiled_json, indent=2) + "\n", encoding="utf-8"
        )
    except (FusionInputError, OptionError) as exc:
        _fail(str(exc), EXIT_BAD_INPUT)
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc}", EXIT_BAD_INPUT)
    except Exception as exc:
        if os.environ.get("SKDBG_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (rerun with SKDBG_DEBUG=1 for the traceback)",
            EXIT_INTERNAL,
        )
    for flag in result.flags:
        click.echo(flag)
