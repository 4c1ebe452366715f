"""``remediate``: apply auto-remediable findings to an asset (spec §1.15).

Only findings that name ``codegen.apply-remediation`` as actionable and carry one of four hint kinds are
touched; every other finding is escalated, and a target outside the asset is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

KINDS = ("remove-line-containing", "rename-symbol", "add-include", "replace-pattern")


class FindingsError(ValueError):
    """The findings document has no ``findings`` list (usage error)."""


def _apply(kind: str, text: str, old: str | None, new: str) -> str:
    if kind == "remove-line-containing":
        assert old is not None
        kept = [ln for ln in text.splitlines(keepends=True) if old not in ln]
        out = "".join(kept)
        return out + "\n" if text.endswith("\n") and out and not out.endswith("\n") else out
    if kind == "rename-symbol":
        assert old is not None
        return re.sub(rf"\b{re.escape(old)}\b", lambda _m: new, text)
    if kind == "add-include":
        if new in text:
            return text
        lines = text.splitlines(keepends=True)
        last = max((i for i, ln in enumerate(lines) if ln.startswith("#include")), default=-1)
        if last >= 0 and not lines[last].endswith("\n"):
            lines[last] += "\n"
        lines.insert(last + 1, new + "\n")
        return "".join(lines)
    assert old is not None
    return re.sub(old, new, text)


def _one(asset_dir: Path, finding: dict[str, Any]) -> dict[str, Any]:
    fid = str(finding.get("finding_id", ""))
    hint = finding.get("remediation_hint") or {}

    def result(status: str, reason: str, diff: str = "") -> dict[str, Any]:
        return {"finding_id": fid, "status": status, "reason": reason, "diff_summary": diff}

    kind = hint.get("kind")
    if "codegen.apply-remediation" not in (finding.get("actionable_by") or []) or kind not in KINDS:
        return result("escalated", "not_auto_remediable")
    target = hint.get("target_file")
    if not target:
        return result("failed", "missing_target_file")
    root = asset_dir.resolve()
    path = (root / str(target)).resolve()
    if path != root and root not in path.parents:
        return result("failed", "target_outside_asset")
    if not path.is_file():
        return result("failed", "target_not_found")
    old, new = hint.get("old_value"), str(hint.get("new_value") or "")
    if kind in {"rename-symbol", "remove-line-containing"} and not old:
        return result("failed", "missing_old_value")
    if kind == "replace-pattern":
        if not old:
            return result("failed", "missing_pattern")
        try:
            re.compile(str(old))
        except re.error as exc:
            return result("failed", f"invalid_regex:{exc}")
    text = path.read_text(encoding="utf-8")
    try:
        changed = _apply(str(kind), text, None if old is None else str(old), new)
    except re.error as exc:
        return result("failed", f"invalid_regex:{exc}")
    if changed == text:
        return result("skipped", "no_change")
    path.write_text(changed, encoding="utf-8")
    return result("applied", str(kind), f"size {len(text)} -> {len(changed)}")


def apply_remediation(asset_dir: Path, findings_doc: Any, findings_path: str = "") -> dict[str, Any]:
    if not isinstance(findings_doc, dict) or not isinstance(findings_doc.get("findings"), list):
        raise FindingsError("findings file must contain a 'findings' list at the top level")
    results = [_one(asset_dir, f if isinstance(f, dict) else {}) for f in findings_doc["findings"]]
    summary = {
        k: sum(r["status"] == k for r in results) for k in ("applied", "escalated", "failed", "skipped")
    }
    return {
        "status": "completed",
        "asset_dir": str(asset_dir.resolve()),
        "findings_path": findings_path,
        "summary": summary,
        "results": results,
    }
