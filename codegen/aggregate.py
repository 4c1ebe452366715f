"""``aggregate``: several completed adapt outputs → one canonical package (spec §1.13).

Each input must be a completed aclgraph-canonical adaptation with at least one entry; entry names
must be unique across inputs. The package directory is the safe identifier of the wheel name (so
``my-wheel`` imports as ``my_wheel``), the pybind module ``<package>_lib``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skdbg.atomic import ensure_fresh_dir, write_tree
from skdbg.codegen.adapt import ADAPTED_DIR, MANIFEST
from skdbg.codegen.canonical import AdaptedFile, SupportConflictError, build_canonical, safe_identifier
from skdbg.codegen.forms import read_file_text


class AggregateError(ValueError):
    """An input is not aggregatable (usage error)."""


def _load(d: Path) -> dict[str, Any]:
    path = d / MANIFEST
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AggregateError(f"cannot read {path}: {exc}") from exc
    if m.get("status") != "completed":
        raise AggregateError(f"adapted output is not completed: {d}")
    if m.get("pybind_layout") != "aclgraph-canonical":
        raise AggregateError(f"adapted output is not aclgraph-canonical: {d}")
    if not any(f.get("entries") for f in m.get("per_file", [])):
        raise AggregateError(f"adapted output has no kernel entries: {d}")
    return dict(m)


def aggregate(
    inputs: list[Path], out_dir: Path, wheel_name: str, version: str, *, force: bool = False
) -> dict[str, Any]:
    """Merge completed adapt outputs into ``out_dir`` (the :mod:`skdbg.atomic` output-folder convention)."""
    ensure_fresh_dir(out_dir, force=force, inputs=inputs)
    manifests = [_load(d) for d in inputs]
    seen: dict[str, Path] = {}
    adapted: list[AdaptedFile] = []
    per_file: list[dict[str, Any]] = []
    for d, m in zip(inputs, manifests, strict=True):
        label = Path(m["asset_path"]).name
        for f in m["per_file"]:
            for e in f.get("entries", []):
                if e["entry_name"] in seen:
                    raise AggregateError(f"duplicate kernel entry across adapted outputs: {e['entry_name']}")
                seen[e["entry_name"]] = d
            src = d / ADAPTED_DIR / f["file"]
            if f["status"] == "adapted" and f.get("entries"):
                adapted.append(AdaptedFile(f"{label}/{f['file']}", read_file_text(src), src, f["entries"]))
            per_file.append({**f, "file": f"{label}/{f['file']}", "source_asset": m["asset_path"]})
    package = safe_identifier(wheel_name)
    try:
        files, layout = build_canonical(adapted, wheel_name, version, module=f"{package}_lib")
    except SupportConflictError as exc:
        raise AggregateError(f"conflicting support files across adapted outputs: {exc}") from exc
    for a in adapted:
        files[a.rel] = a.text
    manifest = {
        "status": "completed",
        "aggregate": True,
        "asset_paths": [m["asset_path"] for m in manifests],
        "adapted_dir": str((out_dir / ADAPTED_DIR).resolve()),
        **layout,
        "per_file": per_file,
        "escalations": [],
    }
    tree: dict[str, str | bytes] = {f"{ADAPTED_DIR}/{rel}": text for rel, text in files.items()}
    tree[MANIFEST] = json.dumps(manifest, indent=2) + "\n"
    write_tree(out_dir, tree, force=force, inputs=inputs)
    return manifest
