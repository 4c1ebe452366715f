"""``skdbg codegen``: operator SK adaptation commands (thin click layer over :mod:`skdbg.codegen`).

Unlike upstream, a result that needs a human is not exit 0: the JSON still carries every detail,
but scripts can rely on the exit code (see CODEGEN_EXIT_HELP).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from skdbg.cli_errors import OUTPUT_FOLDER_HELP, cli_errors, output_folder_option

EXIT_NEEDS_HUMAN = 4
EXIT_NEEDS_TARGET_ARCH = 5

CODEGEN_EXIT_HELP = """\b
Exit codes:
  0  done (adapt: completed; validate: no blocker; remediate: nothing failed)
  1  validate found a blocker / remediate had a failed finding / internal error
     (SKDBG_DEBUG=1 for the traceback)
  2  usage error (bad option, unusable IO contract, existing non-empty output folder, no kernel source)
  3  unreadable input, or a file with no kernel definition
  4  needs-human: adapt escalated something (details in operator-sk-adapted.json)
  5  needs-target-arch: compare could not resolve an NPU arch (no CMakeLists.txt written)
stdout carries data (JSON); messages go to stderr."""

#: the epilog of a codegen command that writes a folder: the output-folder convention, then exit codes
OUTPUT_CODEGEN_HELP = OUTPUT_FOLDER_HELP + "\n\n" + CODEGEN_EXIT_HELP


def _usage_types() -> tuple[type[BaseException], ...]:
    from skdbg.codegen.aggregate import AggregateError
    from skdbg.codegen.block import AdaptError
    from skdbg.codegen.catalog import TemplateError
    from skdbg.codegen.compare import CompareError
    from skdbg.codegen.contract import ContractError
    from skdbg.codegen.forms import AssetError
    from skdbg.codegen.remediate import FindingsError

    return (AssetError, ContractError, AdaptError, TemplateError, FindingsError, AggregateError, CompareError)


def _bad_input_types() -> tuple[type[BaseException], ...]:
    from skdbg.codegen.forms import UnreadableSourceError

    return (UnreadableSourceError,)


#: core ValueErrors that describe bad input/options are exit 2, an unreadable source exit 3 (and an
#: existing output folder exit 2, as in every command: skdbg.cli_errors)
_usage_errors = cli_errors(usage=_usage_types, bad_input=_bad_input_types)


def _dump(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2))


@click.group(epilog=CODEGEN_EXIT_HELP)
def codegen() -> None:
    """Kernel-source code generation for SuperKernels, in two halves.

    Operator SK adaptation (detect, adapt, validate, remediate, templates): read AscendC
    __global__ kernels, add the Args struct / __sk__ function / SK_BIND block after each one
    (the original stays byte for byte), check the result with the spec rule pack and apply
    the auto-remediable fixes. SK generation (the fused SuperKernel source) lives in its own
    subcommands of this group.
    """


@codegen.command(epilog=CODEGEN_EXIT_HELP)
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output-dir", type=click.Path(path_type=Path), default=None, help="Also write the JSON here."
)
@_usage_errors
def detect(path: Path, output_dir: Path | None) -> None:
    """Classify each kernel source as none / current-sk-bind / partial / unknown (overall: or mixed)."""
    from skdbg.codegen.forms import detect as run

    doc = run(path)
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "operator-sk-form-analysis.json").write_text(json.dumps(doc, indent=2) + "\n")
    _dump(doc)


@codegen.command(epilog=OUTPUT_CODEGEN_HELP)
@click.argument("source", type=click.Path(path_type=Path))
@output_folder_option("-o", "--output-dir", what="Adapted output folder")
@click.option("--io-contract", type=click.Path(path_type=Path), default=None, help="IO contract JSON.")
@click.option(
    "--mask", type=int, default=4, show_default=True, help="SK_BIND mask 0..7 (bit 4 = disable DCCI)."
)
@click.option("--num-splits", type=int, default=4, show_default=True, help="SK functions bound, 1..4.")
@click.option(
    "--with-sys-args", type=click.Choice(("auto", "always", "never")), default="auto", show_default=True
)
@click.option(
    "--package-name", default="op_extension", show_default=True, help="Python package = its safe identifier."
)
@click.option("--package-version", default="0.1.0", show_default=True)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Processes that read and adapt the files, this one included; 0 = one per CPU (up to 8), "
    "this one alone for a small asset. The output is the same for any number.",
)
@_usage_errors
def adapt(
    source: Path,
    output_dir: Path,
    io_contract: Path | None,
    mask: int,
    num_splits: int,
    with_sys_args: str,
    package_name: str,
    package_version: str,
    jobs: int,
    force: bool,
) -> None:
    """Add the SK adaptation block to every __global__ of SOURCE (file or directory) under OUTPUT_DIR."""
    from skdbg.codegen.adapt import AdaptOptions, adapt_asset
    from skdbg.codegen.contract import load_contract

    contract = load_contract(io_contract) if io_contract is not None else None
    manifest = adapt_asset(
        source,
        output_dir,
        AdaptOptions(mask, num_splits, with_sys_args, contract, package_name, package_version),
        force=force,
        jobs=jobs,
    )
    _dump({"status": manifest["status"], "escalations": len(manifest["escalations"])})
    if manifest["status"] == "needs-human":
        click.echo("skdbg: needs-human: see operator-sk-adapted.json escalations", err=True)
        sys.exit(EXIT_NEEDS_HUMAN)


@codegen.command(epilog=OUTPUT_CODEGEN_HELP)
@click.argument("adapted_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@output_folder_option("-o", "--output-dir", what="Aggregated package folder")
@click.option(
    "--wheel-name", default="op_extension", show_default=True, help="Python package = its safe identifier."
)
@click.option("--package-version", default="0.1.0", show_default=True)
@_usage_errors
def aggregate(
    adapted_dirs: tuple[Path, ...], output_dir: Path, force: bool, wheel_name: str, package_version: str
) -> None:
    """Merge several completed adapt outputs (ADAPTED_DIRS) into one canonical package."""
    from skdbg.codegen.aggregate import aggregate as run

    m = run(list(adapted_dirs), output_dir, wheel_name, package_version, force=force)
    entries = sum(len(f.get("entries", [])) for f in m["per_file"])
    _dump(
        {
            "status": m["status"],
            "package_name": wheel_name,
            "package_version": package_version,
            "entries": entries,
        }
    )


@codegen.command(epilog=OUTPUT_CODEGEN_HELP)
@click.argument("aggregate_dir", type=click.Path(path_type=Path))
@output_folder_option("-o", "--output-dir", what="Compare project folder")
@click.option("--runtime-fixture-dir", type=click.Path(path_type=Path), default=None)
@click.option("--target-chip", default="", help="e.g. Ascend910B2 (source-backed mappings only).")
@click.option("--npu-arch", default="", help="e.g. dav-2201 (wins over --target-chip).")
@_usage_errors
def compare(
    aggregate_dir: Path,
    output_dir: Path,
    force: bool,
    runtime_fixture_dir: Path | None,
    target_chip: str,
    npu_arch: str,
) -> None:
    """Write a standalone baseline-vs-SK compare project for an adapted/aggregated package."""
    from skdbg.codegen.compare import generate_compare

    m = generate_compare(
        aggregate_dir,
        output_dir,
        fixture_dir=runtime_fixture_dir,
        target_chip=target_chip,
        npu_arch=npu_arch,
        force=force,
    )
    _dump({"status": m["status"], "entries": m["entries"], "reason": m.get("reason", "")})
    if m["status"] == "needs-target-arch":
        click.echo(f"skdbg: needs-target-arch: {m['reason']}", err=True)
        sys.exit(EXIT_NEEDS_TARGET_ARCH)


@codegen.command(epilog=CODEGEN_EXIT_HELP)
@click.argument("asset", type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", type=click.Path(path_type=Path), default=None)
@click.option(
    "--rule-pack", type=click.Choice(("all", "spec", "contract", "compat")), default="spec", show_default=True
)
@click.option("--stage", default="post-adapt", show_default=True)
@click.option("--iteration-index", type=int, default=0, show_default=True)
@click.option("--layout", type=click.Path(path_type=Path), default=None)
@click.option("--build-context", type=click.Path(path_type=Path), default=None)
@click.option("--verify-context", type=click.Path(path_type=Path), default=None)
@click.option("--target-chip", default="", help="compat pack: chip key, e.g. ascend-910b.")
@click.option("--target-cann", default="", help="compat pack: CANN version, e.g. 8.2.0.")
@_usage_errors
def validate(
    asset: Path,
    output_dir: Path | None,
    rule_pack: str,
    stage: str,
    iteration_index: int,
    layout: Path | None,
    build_context: Path | None,
    verify_context: Path | None,
    target_chip: str,
    target_cann: str,
) -> None:
    """Run the rule pack over ASSET; findings JSON on stdout (and in OUTPUT_DIR); exit 1 on a blocker."""
    from skdbg.codegen.forms import AssetError
    from skdbg.codegen.validate import has_blocker, validate_asset

    if not asset.exists():
        raise AssetError(f"asset not found: {asset}")
    doc = validate_asset(
        asset,
        rule_pack=rule_pack,
        stage=stage,
        iteration_index=iteration_index,
        layout=layout,
        build_context=build_context,
        verify_context=verify_context,
        target_chip=target_chip,
        target_cann=target_cann,
    )
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "operator-validation-findings.json").write_text(json.dumps(doc, indent=2) + "\n")
    _dump(doc)
    if has_blocker(doc):
        sys.exit(1)


@codegen.command(epilog=CODEGEN_EXIT_HELP)
@click.argument("asset_dir", type=click.Path(path_type=Path, file_okay=False))
@click.argument("findings_json", type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", type=click.Path(path_type=Path), default=None, help="Default: ASSET_DIR.")
@_usage_errors
def remediate(asset_dir: Path, findings_json: Path, output_dir: Path | None) -> None:
    """Apply the auto-remediable findings (rename-symbol, remove-line-containing, add-include, replace-pattern)."""
    from skdbg.codegen.remediate import FindingsError, apply_remediation

    if not asset_dir.is_dir():
        raise FindingsError(f"asset directory not found: {asset_dir}")
    try:
        doc = json.loads(findings_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FindingsError(f"{findings_json}: cannot read findings JSON: {exc}") from exc
    result = apply_remediation(asset_dir, doc, str(findings_json.resolve()))
    out = output_dir or asset_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "operator-sk-remediation.json").write_text(json.dumps(result, indent=2) + "\n")
    _dump(result)
    if result["summary"]["failed"]:
        sys.exit(1)


@codegen.group()
def templates() -> None:
    """Clean kernel assets to start from (jinja2 templates shipped with skdbg)."""


@templates.command("list")
def templates_list() -> None:
    """Print the template catalog as JSON."""
    from skdbg.codegen.catalog import list_templates

    _dump({"templates": list_templates()})


@templates.command("render", epilog=OUTPUT_CODEGEN_HELP)
@click.argument("template_id")
@click.option("--param", "params", multiple=True, metavar="K=V", help="Template parameter (repeatable).")
@output_folder_option("-o", "--output-dir", what="Folder to render into")
@_usage_errors
def templates_render(template_id: str, params: tuple[str, ...], output_dir: Path, force: bool) -> None:
    """Render TEMPLATE_ID into OUTPUT_DIR (absent or empty; see --force)."""
    from skdbg.codegen.catalog import TemplateError, render_template

    given: dict[str, str] = {}
    for p in params:
        if "=" not in p:
            raise TemplateError(f"--param must be K=V, got {p!r}")
        k, v = p.split("=", 1)
        given[k] = v
    _dump(render_template(template_id, given, output_dir, force=force))
