"""``validate``: the spec rule pack over an adapted asset (spec §1.18), findings with stable ids.

Rule ids are upstream's. One addition the issue asks for: ``sk.bind-mask-dcci-disabled`` warns when
an SK_BIND mask has bit 4 set, because the runtime reads that bit as *disable* DCCI although the
skill documents 4 as "the DCCI default".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skdbg.codegen.compat import compat_findings
from skdbg.codegen.kerneltype import KernelTypeError, map_kernel_type_for_sk
from skdbg.codegen.reader import read_source

RULE_PACKS = ("all", "spec", "contract", "compat")
SPEC_RULES = {
    "includes.kernel-operator-h": "warning",
    "sk.args-struct-alignas": "blocker",
    "sk.args-struct-required": "blocker",
    "sk.bind-mask-known": "warning",
    "sk.bind-mask-dcci-disabled": "warning",
    "sk.bind-max-splits": "blocker",
    "sk.global-preserved": "blocker",
    "sk.kernel-type-match": "warning",
    "sk.sys-args-api-current": "blocker",
    "sk.tpipe-destroy-without-pipe-all": "blocker",
}
_SUFFIXES = (".asc", ".cpp", ".cc", ".cxx", ".h", ".hpp")
_STRUCT_RE = re.compile(r"struct\s+(\w*Args)\s*(?:<[^{;]*>)?\s*\{([^{}]*)\}")
_SMALL_RE = re.compile(r"\b(?:u?int8_t|u?int16_t|bool)\b")
_SK_FN_RE = re.compile(r"__sk__\s+((?:__mix__\s*\([^)]*\)|\w+))\s+void\s+(\w+)\s*\(([^)]*)\)")
_BIND_RE = re.compile(r"\bSK_BIND\s*\(([^;]*)\)\s*;")
_FIRST_ARG_RE = re.compile(r"\s*const\s+[A-Za-z_]\w*\s*(?:<[^>]*>)?\s*\*\s*[A-Za-z_]\w*\s*\Z")
_TPIPE_RE = re.compile(r"\bTPipe\s+([A-Za-z_]\w*)\s*(?:;|=)")


def _finding(
    rule: str, rel: str, location: str, evidence: list[str], message: str, hint: dict[str, Any] | None = None
) -> dict[str, Any]:
    sig = hashlib.sha1(f"{rule}|{rel}|{location}|{'|'.join(evidence)}".encode()).hexdigest()[:12]
    return {
        "finding_id": f"{rule}:{sig}",
        "rule_id": rule,
        "severity": SPEC_RULES.get(rule, "blocker"),
        "category": "spec",
        "actionable_by": ["codegen.apply-remediation"] if hint else ["human"],
        "remediation_hint": hint or {"kind": "human-decision"},
        "evidence": evidence,
        "message": message,
        "file": rel,
        "location": location,
    }


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _line(text: str, pos: int) -> str:
    return str(text.count("\n", 0, pos) + 1)


def check_file(rel: str, text: str) -> Iterator[dict[str, Any]]:
    reading = read_source(text, rel)
    code = reading.code_text()
    has_global = re.search(r"__global__\b", code) is not None
    has_sk = "__sk__" in code or "SK_BIND(" in code
    kernel_file = Path(rel).suffix in {".asc", ".cpp", ".cc", ".cxx"} and (has_global or "__sk__" in code)
    if kernel_file and '"kernel_operator.h"' not in text:
        yield _finding(
            "includes.kernel-operator-h",
            rel,
            "1",
            ["kernel_operator.h"],
            f"{rel} has kernels but does not include kernel_operator.h.",
            {"kind": "add-include", "target_file": rel, "new_value": '#include "kernel_operator.h"'},
        )
    if has_sk and not has_global:
        yield _finding("sk.global-preserved", rel, "1", [rel], f"{rel} has SK code but no __global__ entry.")
    for m in _STRUCT_RE.finditer(code):
        for off, field_line in enumerate(m.group(2).split("\n")):
            stripped = field_line.strip()
            if stripped and _SMALL_RE.search(stripped) and "alignas" not in stripped:
                line = str(int(_line(code, m.start(2))) + off)
                yield _finding(
                    "sk.args-struct-alignas",
                    rel,
                    line,
                    [m.group(1), stripped],
                    f"{rel}:{line}: field '{stripped}' of {m.group(1)} needs alignas(4).",
                )
    globals_by_name = {e.name: e for e in reading.entries}
    for m in _SK_FN_RE.finditer(code):
        kt, name, params = m.group(1), m.group(2), m.group(3)
        line = _line(code, m.start())
        top = _split_top(params)
        if top and not _FIRST_ARG_RE.match(top[0]):
            yield _finding(
                "sk.args-struct-required",
                rel,
                line,
                [name, top[0]],
                f"{rel}:{line}: __sk__ {name} must take 'const <Args> *args' first, not '{top[0]}'.",
            )
        g = globals_by_name.get(name[:-3]) if name.endswith("_sk") else None
        if g is not None:
            try:
                want = map_kernel_type_for_sk(g.qualifiers)
            except KernelTypeError:
                want = ""
            if want and want.replace(" ", "") != kt.replace(" ", ""):
                yield _finding(
                    "sk.kernel-type-match",
                    rel,
                    line,
                    [name, kt, want],
                    f"{rel}:{line}: __sk__ {name} is {kt} but {g.name} maps to {want}.",
                )
        body_start = code.find("{", m.end())
        if body_start >= 0:
            depth, k = 0, body_start
            while k < len(code):
                depth += {"{": 1, "}": -1}.get(code[k], 0)
                if depth == 0:
                    break
                k += 1
            body = code[body_start:k]
            for tp in _TPIPE_RE.finditer(body):
                if f"{tp.group(1)}.DestroyWithoutPipeAll(" not in body:
                    yield _finding(
                        "sk.tpipe-destroy-without-pipe-all",
                        rel,
                        line,
                        [name, tp.group(1)],
                        f"{rel}:{line}: TPipe {tp.group(1)} in {name} lacks {tp.group(1)}.DestroyWithoutPipeAll().",
                    )
    for m in _BIND_RE.finditer(code):
        args = _split_top(m.group(1))
        line = _line(code, m.start())
        if len(args) >= 2 and args[1].isdigit():
            mask = int(args[1])
            if mask > 7:
                yield _finding(
                    "sk.bind-mask-known",
                    rel,
                    line,
                    [args[1]],
                    f"{rel}:{line}: SK_BIND mask {mask} is not in 0..7.",
                )
            elif mask & 4:
                yield _finding(
                    "sk.bind-mask-dcci-disabled",
                    rel,
                    line,
                    [args[1]],
                    f"{rel}:{line}: SK_BIND mask {mask} has bit 4 set; the runtime reads it as disable_dcci "
                    "(no post-kernel data-cache DCCI for this child), not as a DCCI default.",
                )
        if len(args) - 2 > 4:
            yield _finding(
                "sk.bind-max-splits",
                rel,
                line,
                [str(len(args) - 2)],
                f"{rel}:{line}: SK_BIND binds {len(args) - 2} functions; at most 4.",
            )
    for legacy, modern in (("skBlockNum", "skNumBlocks"), ("SkGetBlockNum", "SkGetNumBlocks")):
        m2 = re.search(rf"\b{legacy}\b", code)
        if m2:
            yield _finding(
                "sk.sys-args-api-current",
                rel,
                _line(code, m2.start()),
                [legacy],
                f"{rel}: legacy SkSystemArgs API '{legacy}'; rename to '{modern}'.",
                {"kind": "rename-symbol", "target_file": rel, "old_value": legacy, "new_value": modern},
            )


def _contract_findings(layout: Path | None, build: Path | None, verify: Path | None) -> list[dict[str, Any]]:
    out = []
    for rule, path, sev, what in (
        ("contract.asset-layout", layout, "blocker", "--layout"),
        ("contract.build-context", build, "blocker", "--build-context"),
        ("contract.verify-context", verify, "warning", "--verify-context"),
    ):
        if path is None or not path.is_file():
            msg = f"{what} {'not given' if path is None else f'not found: {path}'}"
            slug = re.sub(r"[^a-z0-9]+", "-", msg.lower()).strip("-")[:48]
            out.append(
                {
                    "finding_id": f"{rule}:{slug}",
                    "rule_id": rule,
                    "severity": sev,
                    "category": "contract",
                    "actionable_by": ["human"],
                    "remediation_hint": {"kind": "human-decision"},
                    "evidence": [what],
                    "message": msg,
                }
            )
    return out


def validate_asset(
    asset: Path,
    *,
    rule_pack: str = "spec",
    stage: str = "post-adapt",
    iteration_index: int = 0,
    layout: Path | None = None,
    build_context: Path | None = None,
    verify_context: Path | None = None,
    target_chip: str = "",
    target_cann: str = "",
) -> dict[str, Any]:
    if rule_pack not in RULE_PACKS:
        raise ValueError(f"unknown rule pack {rule_pack!r}")
    findings: list[dict[str, Any]] = []
    if rule_pack in {"all", "contract"}:
        findings.extend(_contract_findings(layout, build_context, verify_context))
    if rule_pack in {"all", "spec"}:
        paths = [asset] if asset.is_file() else sorted(p for p in asset.rglob("*") if p.suffix in _SUFFIXES)
        root = asset.parent if asset.is_file() else asset
        for path in paths:
            rel = path.relative_to(root).as_posix()
            findings.extend(check_file(rel, path.read_text(encoding="utf-8", errors="replace")))
    doc: dict[str, Any] = {
        "schema_version": 1,
        "skill_source": "operator-validate",
        "stage": stage,
        "iteration_index": iteration_index,
        "findings": findings,
    }
    if rule_pack == "compat":
        root = asset.parent if asset.is_file() else asset
        paths = [asset] if asset.is_file() else sorted(p for p in asset.rglob("*") if p.suffix in _SUFFIXES)
        sources = [
            (p.relative_to(root).as_posix(), p.read_text(encoding="utf-8", errors="replace")) for p in paths
        ]
        compat, meta = compat_findings(sources, target_chip, target_cann)
        findings.extend(compat)
        doc["metadata"] = {"compat": meta}
    return doc


def has_blocker(doc: dict[str, Any]) -> bool:
    return any(f["severity"] == "blocker" for f in doc["findings"])
