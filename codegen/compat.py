"""Compat rule pack (spec §1.18): chip facts that may only fire when backed by an official source.

The shipped matrix records chips and CANN versions but no source-backed facts, so today no compat
rule fires and the verdict is ``not-verified`` — stated, never implied as "compatible". A matrix
directory can be overridden with ``SK_COMPAT_MATRIX_DIR`` (``*.json`` files of the same shape).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

OFFICIAL_HOSTS = ("hiascend.com", "support.huawei.com")
CHECKED_RULES = ("compat.forbidden-acl-api", "compat.mix-aic-aiv-unsupported", "compat.arch-alias-mismatch")
_MIX_RE = re.compile(r"__mix__\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_ALIAS_RE = re.compile(r"//\s*sk-arch:\s*([\w.\-]+)")


def load_matrix() -> dict[str, Any]:
    override = os.environ.get("SK_COMPAT_MATRIX_DIR")
    chips: dict[str, Any] = {}
    if override:
        for path in sorted(Path(override).glob("*.json")):
            chips.update(json.loads(path.read_text(encoding="utf-8")).get("chips", {}))
        return {"chips": chips}
    text = (
        resources.files("skdbg.codegen").joinpath("rules").joinpath("compat_ascend.json").read_text("utf-8")
    )
    return dict(json.loads(text))


def _source_backed(fact: Any) -> bool:
    urls = fact.get("official_sources", []) if isinstance(fact, dict) else []
    return any(
        isinstance(u, str) and u.startswith("https://") and any(h in u.split("/")[2] for h in OFFICIAL_HOSTS)
        for u in urls
    )


def _applies(fact: dict[str, Any], cann: str) -> bool:
    scope = fact.get("cann_versions")
    return not scope or not cann or cann in scope


def _finding(
    rule: str, severity: str, rel: str, evidence: list[str], message: str, hint: Any = None
) -> dict[str, Any]:
    import hashlib

    sig = hashlib.sha1(f"{rule}|{rel}|{'|'.join(evidence)}".encode()).hexdigest()[:12]
    return {
        "finding_id": f"{rule}:{sig}",
        "rule_id": rule,
        "severity": severity,
        "category": "compat",
        "actionable_by": ["codegen.apply-remediation"] if hint else ["human"],
        "remediation_hint": hint or {"kind": "human-decision"},
        "evidence": evidence,
        "message": message,
        "file": rel,
    }


def _check(rel: str, text: str, facts: dict[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    forbidden = facts.get("forbidden_acl_apis")
    if forbidden:
        for api in forbidden.get("value", []):
            if re.search(rf"\b{re.escape(api)}\s*\(", text):
                yield _finding(
                    "compat.forbidden-acl-api",
                    "blocker",
                    rel,
                    [api],
                    f"{rel} calls {api}, forbidden on this chip.",
                )
    mix = facts.get("mix_aic_aiv_supported")
    if mix and mix.get("value") is False:
        for m in _MIX_RE.finditer(text):
            if int(m.group(1)) > 0 and int(m.group(2)) > 0:
                yield _finding(
                    "compat.mix-aic-aiv-unsupported",
                    "blocker",
                    rel,
                    [m.group(0)],
                    f"{rel}: {m.group(0)} is not supported.",
                )
    alias = facts.get("arch_alias")
    if alias and alias.get("value"):
        for m in _ALIAS_RE.finditer(text):
            if m.group(1) != alias["value"]:
                hint = {
                    "kind": "replace-pattern",
                    "target_file": rel,
                    "old_value": re.escape(m.group(0)),
                    "new_value": f"// sk-arch: {alias['value']}",
                }
                yield _finding(
                    "compat.arch-alias-mismatch",
                    "warning",
                    rel,
                    [m.group(1)],
                    f"{rel}: arch alias {m.group(1)} should be {alias['value']}.",
                    hint,
                )


def compat_findings(
    sources: list[tuple[str, str]], target_chip: str, target_cann: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    chips = load_matrix().get("chips", {})
    key = target_chip.strip().lower()
    chip = chips.get(key)
    facts = chip.get("facts", {}) if chip else {}
    backed = sorted(f for f, v in facts.items() if _source_backed(v))
    applicable = {f: facts[f] for f in backed if _applies(facts[f], target_cann)}
    findings = [f for rel, text in sources for f in _check(rel, text, applicable)]
    if any(f["severity"] == "blocker" for f in findings):
        verdict = "incompatible"
    elif findings:
        verdict = "requires-adaptation"
    else:
        verdict = "not-verified"
    verification = (
        f"{len(applicable)} official-source-backed fact(s) checked; absence of findings does not verify compatibility."
        if applicable
        else "no official-source-backed checks apply to this chip/CANN; compatibility is not verified."
    )
    meta = {
        "rule_pack": "compat",
        "overall_verdict": verdict,
        "target_chip": target_chip,
        "target_cann": target_cann,
        "target_chip_known": chip is not None,
        "recorded_cann_versions": list(chip.get("cann_versions", [])) if chip else [],
        "source_backed_fields": backed,
        "applicable_source_backed_fields": sorted(applicable),
        "checked_rules": list(CHECKED_RULES),
        "verification": verification,
    }
    return findings, meta
