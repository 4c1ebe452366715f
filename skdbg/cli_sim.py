"""``skdbg sim MODEL_DIR -o SCENE``: write an emulated failure scene (docs/sim.md).

Why a command: without an NPU at hand, a user (or a demo) gets a complete scene in the real formats
from a small model file, picks the fault, dialect and debug options, and runs ``skdbg analyze`` on it.
The emulator loads only when the command runs (``skdbg --help`` stays fast).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from skdbg.cli_errors import cli_errors, output_folder_option

SIM_HELP_EPILOG = """\b
Exit codes:
  0  scene written (whatever the emulated run's outcome)
  1  internal error (a bug in skdbg; rerun with SKDBG_DEBUG=1 for the traceback)
  2  usage error: -o exists and is not empty (use --force), a --debug value not KEY=VALUE
  3  bad model: the message names the file and the field (e.g. model.json: ops[3].stream: …)
stdout carries data; messages go to stderr."""


def _bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.sim import SimError

    return (SimError,)


def _debug(pairs: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--debug {pair!r}: expected KEY=VALUE, e.g. debug_op_exec_trace=1")
        v = value.strip()
        out[key.strip()] = int(v) if v.lstrip("-").isdigit() else v
    return out


def _fault(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    from skdbg.sim import SimError

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SimError(path, "", f"cannot read ({e})") from None
    except json.JSONDecodeError as e:
        raise SimError(path, "", f"line {e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise SimError(path, "", 'expected a fault object, e.g. {"kind": "fused", "op": "swiglu"}')
    return doc


@click.command("sim", epilog=SIM_HELP_EPILOG)
@click.argument("model_dir", type=click.Path(path_type=Path))
@output_folder_option("-o", "--output", "out_dir", what="Scene folder to write")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: same seed, same scene bytes.")
@click.option(
    "--dialect",
    type=click.Choice(["D0", "D1", "D2", "D3", "D4", "D5"]),
    default="D5",
    show_default=True,
    help="Handler dialect of the plog.",
)
@click.option("--debug", "debug", multiple=True, metavar="KEY=VAL", help="super_kernel_debug_options entry.")
@click.option("--fault", "fault_file", type=click.Path(path_type=Path), default=None, help="Fault spec JSON.")
@click.option(
    "--source", type=click.Path(path_type=Path), default=None, help="Edited copy of the marker file."
)
@click.option(
    "--profile", is_flag=True, help="Profile the SK (ASCEND_PROF_SK_ON): *_dump_profiling entries, sk_prof."
)
@click.option(
    "--sk-source",
    "sk_source",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the JIT generator's source of each SK here (never into the scene; docs/sim.md).",
)
@cli_errors(usage=(click.UsageError,), bad_input=_bad_input)
def sim(
    model_dir: Path,
    out_dir: Path,
    force: bool,
    seed: int,
    dialect: str,
    debug: tuple[str, ...],
    fault_file: Path | None,
    source: Path | None,
    sk_source: Path | None,
    profile: bool,
) -> None:
    """Emulate one run of the model in MODEL_DIR and write its failure scene to SCENE."""
    opts = {"super_kernel_debug_options": _debug(debug)}
    from skdbg.sim import load_model, write_scene

    model = load_model(model_dir, fault=_fault(fault_file), fault_path=fault_file)
    if sk_source is not None:  # refuse before anything is written, not after the scene
        from skdbg.atomic import ensure_fresh_dir

        ensure_fresh_dir(sk_source, force=force, what="SK source folder")
    res = write_scene(
        model,
        out_dir,
        source=source,
        seed=seed,
        options=opts,
        dialect=dialect,
        force=force,
        profiling=profile,
    )
    sks = "; ".join(" ".join(f) for f in res.fused) or "none"
    click.echo(f"{out_dir}: pid {res.pid}, {res.outcome}: {res.message}")
    click.echo(f"SKs: {sks}")
    if sk_source is not None:
        from skdbg.atomic import write_tree
        from skdbg.sim.api import emulate
        from skdbg.sim.sksource import sk_sources

        em = emulate(model, source=source, seed=seed, options=opts)
        for path in write_tree(sk_source, sk_sources(model, em.planned, res.pid), force=force):
            click.echo(f"SK source: {path}")
