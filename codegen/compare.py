"""``compare``: a standalone baseline-vs-SK compare project for an aggregated package (spec §1.14).

Never a faked pass: without a resolvable NPU arch the manifest says ``needs-target-arch`` and no
CMakeLists.txt is written; an entry without a complete device plan (runtime fixture) is baked into the
program as ``skipped-insufficient-runtime-spec``; the program itself reports ``skipped-no-npu`` unless
it is told to run on a device.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skdbg.atomic import ensure_fresh_dir, staged_dir
from skdbg.codegen.adapt import ADAPTED_DIR, MANIFEST
from skdbg.codegen.arch import resolve_target_arch
from skdbg.codegen.render import render

VERIFY_DIR = "operator-sk-standalone-verify"
VERIFY_MANIFEST = "operator-sk-standalone-verify.json"
#: how the compare output folder is named in the refusal messages
COMPARE_WHAT = "standalone verify output"
FIXTURE = "operator-sk-runtime-fixture.json"
_DROP_INCLUDES = re.compile(
    r'^\s*#\s*include\s*[<"](?:pybind11/pybind11\.h|torch/extension\.h|limits|third_party/acl/inc/acl/acl_rt\.h|'
    r'torch_npu/csrc/core/npu/NPUStream\.h)[>"]\s*\n',
    re.MULTILINE,
)
_LITERAL_RE = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*\Z")
STATUS_ORDER = ("failed", "passed", "skipped-no-npu", "skipped-insufficient-runtime-spec")


class CompareError(ValueError):
    """The aggregate dir is not usable or the output exists (usage error)."""


def fixture_status(fixture_dir: Path | None, entry: dict[str, Any]) -> dict[str, Any]:
    """Whether ``<fixture>/<entry>/operator-sk-runtime-fixture.json`` is a complete device plan."""
    name = entry["entry_name"]
    base = fixture_dir / name if fixture_dir else None
    path = base / FIXTURE if base else None

    def insufficient(reason: str) -> dict[str, Any]:
        return {"status": "insufficient", "path": str(path or ""), "device_runnable": False, "reason": reason}

    if path is None or not path.is_file():
        if base is not None and base.is_dir():
            return insufficient(f"asset fixture copied but no {FIXTURE} device plan")
        return insufficient("runtime fixture does not include a device-runnable parameter plan")
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return insufficient(f"{FIXTURE} invalid JSON: {exc}")
    params = spec.get("parameters") if isinstance(spec, dict) else None
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        return insufficient(f"{FIXTURE} must contain a parameters list")
    by_name = {p.get("name"): p for p in params}
    missing = [p["name"] for p in entry["parameters"] if p["name"] not in by_name]
    if missing:
        return insufficient(f"{FIXTURE} missing parameters: {missing}")
    for p in params:
        kind = p.get("kind")
        if kind not in {"device_buffer", "scalar", "literal"}:
            return insufficient(f"{FIXTURE} has unsupported kind for {p.get('name')}: {kind}")
        if kind == "device_buffer":
            b = p.get("bytes")
            if not isinstance(b, int) or isinstance(b, bool) or b <= 0:
                return insufficient(f"{FIXTURE} has invalid byte size for {p.get('name')}")
            fill = p.get("fill", p.get("input_fill", 0))
            if not isinstance(fill, int) or not 0 <= fill <= 255:
                return insufficient(f"{FIXTURE} has invalid fill byte for {p.get('name')}")
        elif not _LITERAL_RE.match(str(p.get("value", ""))):
            return insufficient(f"{FIXTURE} value of {p.get('name')} is not a numeric literal")
    if not any(p.get("kind") == "device_buffer" and p.get("compare") is True for p in params):
        return insufficient(f"{FIXTURE} must mark at least one device buffer with compare=true")
    block_dim = spec.get("block_dim", 1)
    if not isinstance(block_dim, int) or block_dim <= 0:
        return insufficient(f"{FIXTURE} block_dim must be a positive integer")
    return {"status": "available", "path": str(path), "device_runnable": True, "spec": spec}


def _entry_plan(entry: dict[str, Any], fx: dict[str, Any]) -> dict[str, Any]:
    name = entry["entry_name"]
    plan: dict[str, Any] = {
        "name": name,
        "bind_target": entry["bind_target"],
        "runnable": fx["device_runnable"],
    }
    if not fx["device_runnable"]:
        plan["reason_literal"] = json.dumps(fx["reason"])
        return plan
    spec = {p["name"]: p for p in fx["spec"]["parameters"]}
    params, call, bufs, base_args, sk_args = [], [], [], [], []
    for p in entry["parameters"]:
        n, t, s = p["name"], p["c_type"], spec[p["name"]]
        if s["kind"] == "device_buffer":
            params.append({"decl": f"void *{n}"})
            call.append(f"({'uint8_t *' if 'GM_ADDR' in t else t.replace('__gm__', '').strip()})({n})")
            bufs.append(
                {
                    "name": n,
                    "bytes": s["bytes"],
                    "fill": s.get("fill", s.get("input_fill", 0)),
                    "compare": bool(s.get("compare")),
                }
            )
            base_args.append(f"{n}_base")
            sk_args.append(f"{n}_sk")
        else:
            params.append({"decl": f"{t} {n}"})
            call.append(n)
            base_args.append(f"({t})({s['value']})")
            sk_args.append(f"({t})({s['value']})")
    plan.update(
        params=params,
        call_args=", ".join(call),
        buffers=bufs,
        baseline_args=base_args,
        sk_args=sk_args,
        block_dim=fx["spec"].get("block_dim", 1),
    )
    return plan


def generate_compare(
    aggregate_dir: Path,
    out_dir: Path,
    *,
    fixture_dir: Path | None = None,
    target_chip: str = "",
    npu_arch: str = "",
    force: bool = False,
) -> dict[str, Any]:
    """Write the standalone compare project into ``out_dir`` (the :mod:`skdbg.atomic` convention)."""
    try:
        agg = json.loads((aggregate_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompareError(f"cannot read {aggregate_dir / MANIFEST}: {exc}") from exc
    if agg.get("pybind_layout") != "aclgraph-canonical":
        raise CompareError(f"{aggregate_dir} is not an aclgraph-canonical adaptation")
    ensure_fresh_dir(out_dir, force=force, what=COMPARE_WHAT, inputs=[aggregate_dir])
    entries = [e for f in agg["per_file"] for e in f.get("entries", [])]
    csrc = aggregate_dir / ADAPTED_DIR / "csrc"
    sources = sorted(p for p in csrc.glob("*.asc") if not p.name.startswith("pybind11"))
    resolution = resolve_target_arch(npu_arch, target_chip)
    files: dict[str, str] = {}
    copied, support, runtime_sources, entry_targets, fixtures = [], [], {}, {}, {}
    for src in sources:
        text = src.read_text(encoding="utf-8")
        kernel_only = _DROP_INCLUDES.sub("", text.split("\nnamespace ascendc_ops {", 1)[0])
        rel = f"csrc/{src.stem}/{src.name}"
        files[rel] = kernel_only
        copied.append(rel)
        if fixture_dir is not None and (fixture_dir / src.stem / "asset-support").is_dir():
            for p in sorted((fixture_dir / src.stem / "asset-support").rglob("*")):
                if p.is_file():
                    srel = f"csrc/{src.stem}/{p.relative_to(fixture_dir / src.stem / 'asset-support').as_posix()}"
                    files[srel] = p.read_text(encoding="utf-8", errors="replace")
                    support.append(srel)
        own = [e for e in entries if e.get("csrc_file") == f"csrc/{src.name}"]
        plans = []
        for e in own:
            fx = fixture_status(fixture_dir, e)
            fixtures[e["entry_name"]] = {k: v for k, v in fx.items() if k != "spec"}
            plans.append(_entry_plan(e, fx))
        target = "runtime_compare" if len(sources) == 1 else f"runtime_compare_{src.stem}"
        files[f"{target}.asc"] = render(
            "runtime_compare.asc.j2", sources=[src.name], kernel_includes=[rel], entries=plans
        )
        runtime_sources[target] = f"{target}.asc"
        for e in own:
            entry_targets[e["entry_name"]] = target
    if resolution.status == "resolved":
        files["CMakeLists.txt"] = render(
            "CMakeLists.txt.j2", targets=sorted(runtime_sources.items()), npu_arch=resolution.arch
        )
    manifest: dict[str, Any] = {
        "status": "generated" if resolution.status == "resolved" else "needs-target-arch",
        "aggregate_output_dir": str(aggregate_dir.resolve()),
        "standalone_verify_dir": str((out_dir / VERIFY_DIR).resolve()),
        "target_chip": target_chip,
        "npu_arch": resolution.arch,
        "target_arch_resolution": resolution.to_json(),
        "runtime_compare": sorted(runtime_sources.values()),
        "runtime_sources": runtime_sources,
        "entry_targets": entry_targets,
        "cmake": "CMakeLists.txt" if "CMakeLists.txt" in files else "",
        "copied_sources": copied,
        "copied_support": support,
        "entries": [e["entry_name"] for e in entries],
        "runtime_fixtures": fixtures,
    }
    if resolution.status != "resolved":
        manifest["reason"] = resolution.reason
        manifest["message"] = "pass --npu-arch or a --target-chip with a source-backed arch mapping"
    with staged_dir(out_dir, force=force, what=COMPARE_WHAT, inputs=[aggregate_dir]) as tmp:
        (tmp / VERIFY_DIR).mkdir()
        for rel, text in files.items():
            p = tmp / VERIFY_DIR / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        (tmp / VERIFY_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
