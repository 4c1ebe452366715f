"""Scoped regeneration: a triage proposal → a candidate folder ready for a re-launch.

Why: after triage proposes an exclusion (triage.md §4), somebody must re-launch the model with the
edited markers and then prove the effect (§5, V1–V5). This module writes everything that round needs,
derived only from the failed scene and the proposal: the predicted SKs of the edited scope (one AOT
task-queue description per remaining fused range, event and barrier edges kept), the marker patch,
and ``candidate.json`` (what changed, fingerprints, re-launch env and options, the V1–V5 plan).
A blocked proposal is refused and nothing is written; the folder appears atomically or not at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skdbg.atomic import safe_name, write_tree
from skdbg.codegen.fusion.candidate_sk import describe_scope
from skdbg.codegen.fusion.plan import plan_scopes
from skdbg.codegen.fusion.plan_model import (
    REASON_IN_UNFUSIBLE_SCOPE,
    REASON_NOT_IN_SCOPE,
    OpDag,
    Plan,
    PlanError,
)
from skdbg.codegen.fusion.plan_scene import dag_from_model, models_of_scene
from skdbg.parsers.common import ParseError
from skdbg.parsers.discovery import ModelDir
from skdbg.parsers.markers import (
    EditError,
    MarkerEdit,
    apply_edits,
    materialised_problem,
    read_source,
    unified_diff,
)

SCHEMA = "skdbg.candidate/1"
MECHANISMS = ("explicit_none_exclusion", "close_reopen_exclusion", "dependency_aligned_split")
RELAUNCH_ENV = {"ASCEND_OP_COMPILE_SAVE_KERNEL_META": "1"}
#: reasons a V3 must not see newly for fragment nodes (triage.md §5.1 V3)
V3_FORBIDDEN = [
    "ISOLATED_EVENT",
    "EXIST_DEADLOCK",
    "DEADLOCK_DETECTED",
    "EXTERNAL_DEPEND",
    "UNSUPPORT_EVENT_TYPE",
]


class CandidateError(ValueError):
    """The proposal cannot be regenerated (blocked, malformed, or not matching the scene)."""


#: how the candidate folder is named in the refusal messages
CANDIDATE_WHAT = "candidate folder"


def load_proposal(path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(proposal, analysis document or None) from an ``analyze --format json`` file or a bare proposal."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CandidateError(f"{path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise CandidateError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise CandidateError(f"{path}: expected a JSON object (analysis or proposal)")
    if isinstance(doc.get("proposal"), dict):
        return doc["proposal"], doc
    if "status" in doc:
        return doc, None
    raise CandidateError(f'{path}: expected the skdbg.analysis/1 document or its "proposal" object')


def check_proposal(proposal: dict[str, Any], where: str) -> None:
    status = proposal.get("status")
    if status == "blocked":
        why = proposal.get("blocked_reason") or "no reason given"
        raise CandidateError(f"{where}: the proposal is blocked ({why}); nothing to regenerate")
    if status != "proposed":
        raise CandidateError(
            f'{where}: proposal status {status!r}; only a "proposed" exclusion can be regenerated'
        )
    if proposal.get("mechanism") not in MECHANISMS:
        raise CandidateError(
            f"{where}: mechanism {proposal.get('mechanism')!r}, expected one of {list(MECHANISMS)}"
        )
    for key in ("excluded", "before", "after", "marker_edits"):
        if not isinstance(proposal.get(key), list):
            raise CandidateError(f"{where}: proposal.{key} must be a list")
    if not proposal["excluded"] or not proposal["marker_edits"]:
        raise CandidateError(f"{where}: proposal has no excluded nodes or no marker edits")


def _model_for(scene: Path, proposal: dict[str, Any]) -> ModelDir:
    child = proposal.get("child") or {}
    wanted = set(proposal["excluded"])
    models = models_of_scene(scene)
    for m in models:
        if child.get("model") and m.model_id != child.get("model"):
            continue
        if wanted <= {n.node_id for n in dag_from_model(m).nodes}:
            return m
    raise CandidateError(f"{scene}: no sk_meta model holds the excluded nodeIds {sorted(wanted)}")


def candidate_dag(dag: OpDag, proposal: dict[str, Any]) -> tuple[OpDag, dict[str, str]]:
    """The graph the edited model source will produce, and the scope names of the changed flags."""
    removed = set(proposal["excluded"]) | set(proposal.get("collateral") or [])
    by_id = dag.by_id()
    child_id = (proposal.get("child") or {}).get("node_id", min(proposal["excluded"]))
    if child_id not in by_id:
        raise CandidateError(f"the child nodeId {child_id} is not in the scene graph")
    flags = by_id[child_id].scope_flags
    name = dag.scope_names.get(flags) or (proposal.get("child") or {}).get("scope_name") or "scope"
    mech = proposal["mechanism"]
    changes: dict[int, dict[str, object]] = {}
    names = {flags: name}
    if mech == "explicit_none_exclusion":
        for nid in removed:
            changes[nid] = {"fail_reason": REASON_IN_UNFUSIBLE_SCOPE}
    else:
        for nid in removed:
            changes[nid] = {"fail_reason": REASON_NOT_IN_SCOPE, "scope_flags": "0"}
    if mech == "dependency_aligned_split":
        order = {n.node_id: i for i, n in enumerate(dag.nodes)}
        lo = min(order[i] for i in removed)
        hi = max(order[i] for i in removed)
        pre, post = f"{flags}.pre", f"{flags}.post"
        names = {pre: f"{name}.pre", post: f"{name}.post"}
        for n in dag.nodes:
            if n.scope_flags != flags or n.node_id in removed:
                continue
            if order[n.node_id] < lo:
                changes[n.node_id] = {"scope_flags": pre}
            elif order[n.node_id] > hi:
                changes[n.node_id] = {"scope_flags": post}
            else:
                changes[n.node_id] = {"fail_reason": REASON_NOT_IN_SCOPE, "scope_flags": "0"}
    try:
        new = dag.with_changes(changes)
    except PlanError as e:
        raise CandidateError(str(e)) from None
    ids = dict(dag.scope_ids)
    if mech == "dependency_aligned_split":
        ids.pop(flags, None)  # the runtime numbers new named scopes itself
    return OpDag(new.nodes, ids, {**dag.scope_names, **names}), names


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _marker_patch(
    scene: Path, source_root: Path | None, proposal: dict[str, Any]
) -> tuple[str, str, str, str]:
    """(relative file, unified diff, sha of original, sha of patched); the edited file must stay balanced."""
    files = {e.get("file") for e in proposal["marker_edits"]}
    if len(files) != 1 or not isinstance(next(iter(files)), str):
        raise CandidateError(f"marker edits must name exactly one file, got {sorted(map(str, files))}")
    rel = str(next(iter(files)))
    path = (source_root or scene) / rel
    try:
        text = read_source(path, str(path))
    except ParseError as e:
        raise CandidateError(f"cannot read the marker file ({e}); pass --source-root") from None
    try:
        edits = [
            MarkerEdit(str(e["file"]), int(e["line"]), str(e["op"]), str(e["text"]))
            for e in proposal["marker_edits"]
        ]
    except (KeyError, TypeError, ValueError) as e:
        raise CandidateError(f"{path}: marker edits cannot be read ({e})") from None
    lines = text.splitlines()
    try:
        after = apply_edits(lines, edits)
    except EditError as e:
        raise CandidateError(f"{path}: marker edit {e.index} cannot be applied ({e.message})") from None
    patched = "\n".join(after) + ("\n" if text.endswith("\n") else "")
    # the one marker model decides whether the patch materialises the declared mechanism: it must parse,
    # balance, use the null literal, and change the markers the declared way (comments/strings never count)
    bad = materialised_problem(text, patched, str(proposal["mechanism"]), rel)
    if bad is not None:
        raise CandidateError(f"{path}: marker.patch does not materialise the proposal: {bad.detail}")
    diff = unified_diff(rel, lines, after) + "\n"
    return rel, diff, _sha(text.encode()), _sha(patched.encode())


@dataclass(frozen=True, slots=True)
class Candidate:
    """Everything written to the candidate folder (kept in memory so the write is all-or-nothing).

    ``baseline`` and ``predicted`` are the task-queue descriptions (:func:`describe_scope`) of the SKs
    of the edited scope before and after the edit, for viewers (the TUI's Candidate screen); only the
    ``predicted`` ones are written (``sk/*.json``). ``inputs`` are the folders the candidate was read
    from (scene, source root): :func:`write_candidate` never replaces a folder holding them."""

    files: dict[str, str]  # relative path → text
    manifest: dict[str, Any]
    baseline: tuple[dict[str, Any], ...] = ()
    predicted: tuple[dict[str, Any], ...] = ()
    inputs: tuple[Path, ...] = ()


def _expected_ranges(proposal: dict[str, Any], dag: OpDag) -> list[list[int]]:
    """The kernels of the proposal's before/after ranges (the ranges list event nodes too, §4.1)."""
    nodes = dag.by_id()
    out = [
        [i for i in r if i not in nodes or nodes[i].kind == "KERNEL"]
        for r in (proposal["before"], proposal["after"])
    ]
    return [r for r in out if r]


def _scope_plan(plan: Plan, touched: set[int]) -> list[int]:
    return [i for i, s in enumerate(plan.scopes) if touched & set(s.node_ids)]


def build_candidate(
    scene: Path, proposal: dict[str, Any], *, source_root: Path | None = None, where: str = "proposal"
) -> Candidate:
    """The candidate of ``proposal`` on ``scene`` (marker source under ``source_root``, default the scene).

    Raises :class:`CandidateError` (or ``ParseError`` for an unreadable sk_meta) naming ``where`` or
    the file at fault; ``skdbg codegen candidate`` and the TUI's Candidate screen both call this."""
    if not scene.is_dir():
        raise CandidateError(f"{scene}: not a scene directory")
    check_proposal(proposal, where)
    model = _model_for(scene, proposal)
    dag = dag_from_model(model)
    try:
        old_plan = plan_scopes(dag)
        new_dag, names = candidate_dag(dag, proposal)
        new_plan = plan_scopes(new_dag)
    except PlanError as e:
        raise CandidateError(f"{model.path}: cannot plan the scope ({e})") from None
    original = (
        set(proposal.get("original") or [])
        | set(proposal["excluded"])
        | set(proposal["before"])
        | set(proposal["after"])
    )
    scope_nodes = {
        n.node_id for n in dag.nodes if n.scope_flags == dag.by_id()[min(proposal["excluded"])].scope_flags
    }
    touched = (original | scope_nodes) - set(proposal["excluded"]) - set(proposal.get("collateral") or [])
    sk_indices = _scope_plan(new_plan, touched)
    removed = set(proposal["excluded"]) | set(proposal.get("collateral") or [])
    predicted = [list(new_plan.scopes[i].kernels(new_dag)) for i in sk_indices]
    expected = _expected_ranges(proposal, dag)
    differences = (
        []
        if predicted == expected
        else [f"planned fused kernel ranges {predicted}, proposal expects {expected}"]
    )
    leaked = sorted(removed & {n for i in sk_indices for n in new_plan.scopes[i].node_ids})
    if leaked:
        differences.append(f"excluded/collateral nodeIds {leaked} would still be fused")
    run = _run_json(scene)
    raw_cand = run.get("candidate")
    cand: dict[str, Any] = raw_cand if isinstance(raw_cand, dict) else {}
    debug_before = cand.get("super_kernel_debug_options") or {}
    baseline = tuple(
        describe_scope(
            old_plan, i, dag.scope_names.get(old_plan.scopes[i].scope_flags, "scope"), debug_before
        )
        for i in _scope_plan(old_plan, original | scope_nodes)
    )
    files: dict[str, str] = {}
    sks: list[dict[str, Any]] = []
    predicted_desc: list[dict[str, Any]] = []
    for k, i in enumerate(sk_indices):
        flags = new_plan.scopes[i].scope_flags
        desc = describe_scope(new_plan, i, new_dag.scope_names.get(flags, names.get(flags, "scope")), {})
        desc["sk_index"] = k
        predicted_desc.append(desc)
        # the index keeps names unique; the scope name (user text from the logs) stays inside the file
        rel = f"sk/sk_{k}_{safe_name(str(desc['scope_name']), fallback='scope')}.json"
        text = json.dumps(desc, indent=2) + "\n"
        files[rel] = text
        funcs = [new_dag.by_id()[n].func_name for n in desc["kernels"]]
        sks.append(
            {
                "file": rel,
                "sha256": _sha(text.encode()),
                "kernels": desc["kernels"],
                "functions": funcs,
                "entry": desc["entry"],
                "kernel_type": desc["kernel_type"],
                "break": desc["break"],
            }
        )
    marker_file, diff, src_sha, patched_sha = _marker_patch(scene, source_root, proposal)
    files["marker.patch"] = diff
    mech = proposal["mechanism"]
    expected_reason = REASON_IN_UNFUSIBLE_SCOPE if mech == "explicit_none_exclusion" else REASON_NOT_IN_SCOPE
    meta_files = {role: _sha(p.read_bytes()) for role, p in sorted(model.files.items())}
    manifest: dict[str, Any] = {
        "schema": SCHEMA,
        "scene": str(scene),
        "model": model.label,
        "change": {
            "mechanism": mech,
            "method": (proposal.get("declared_change") or {}).get("method"),
            "only_change": (proposal.get("declared_change") or {}).get("only_change"),
            "child": proposal.get("child"),
            "original": proposal.get("original") or [],
            "excluded": proposal["excluded"],
            "collateral": proposal.get("collateral") or [],
            "before": proposal["before"],
            "after": proposal["after"],
            "marker_file": marker_file,
            "marker_edits": proposal["marker_edits"],
            "safety": proposal.get("safety") or [],
        },
        "prediction": {
            "baseline_sks": [list(s.kernels(dag)) for s in old_plan.scopes],
            "candidate_sks": sks,
            "unfused": {str(k): v for k, v in sorted(new_plan.unfused.items()) if k in removed},
            "passes": list(new_plan.passes),
            "agrees_with_proposal": not differences,
            "differences": differences,
        },
        "fingerprints": {
            "marker_source": src_sha,
            "marker_source_patched": patched_sha,
            "marker_patch": _sha(diff.encode()),
            "proposal": _sha(json.dumps(proposal, sort_keys=True).encode()),
            "sk_meta": meta_files,
            "source_revision": cand.get("source_revision"),
            "config_fingerprint": cand.get("config_fingerprint"),
        },
        "relaunch": {
            "command": run.get("command"),
            "cwd": run.get("cwd"),
            "env": dict(RELAUNCH_ENV),
            "compile_options": {
                "backend": "npugraph_ex",
                "static_kernel_compile": True,
                "super_kernel_optimize": True,
                "super_kernel_optimize_options": cand.get("super_kernel_optimize_options") or {},
                "super_kernel_debug_options": {},
            },
            "dropped_debug_options": debug_before,
            "failing_path": run.get("failing_path"),
        },
        "verification_plan": _v_plan(proposal, expected_reason, sks, run.get("failing_path")),
    }
    files["candidate.json"] = json.dumps(manifest, indent=2) + "\n"
    inputs = (scene,) if source_root is None else (scene, source_root)
    return Candidate(files, manifest, baseline, tuple(predicted_desc), inputs)


def _v_plan(
    proposal: dict[str, Any], reason: str, sks: list[dict[str, Any]], failing_path: Any
) -> list[dict[str, Any]]:
    mech = proposal["mechanism"]
    child = proposal.get("child") or {}
    ident = f"{child.get('func_name')} (occurrence {child.get('occurrence', 0)})"
    fragment = sorted(set(proposal["excluded"]) | set(proposal.get("collateral") or []))
    probe = (
        " and env probe explicit_none_exclusion.accepted=true" if mech == "explicit_none_exclusion" else ""
    )
    return [
        {
            "gate": "V1",
            "check": f"env probe ready=true{probe}; apply marker.patch and check the markers are balanced "
            "and the mechanism in the source is "
            + mech
            + ' (no super_kernel_scope_begin("None") string, T8); freeze '
            "source/config fingerprints; super_kernel_debug_options={} (clean round)",
        },
        {
            "gate": "V2",
            "check": "the run completes on all ranks including the failing path "
            f"{json.dumps(failing_path) if failing_path else '(same workload and step as the failure)'}; "
            "the correctness oracle passes",
        },
        {
            "gate": "V3",
            "check": f"fresh sk_meta/<new pid> passing F1–F9; {ident} listed in sk_fusion_fail_reasons.log "
            f"with {reason} and in no SK Function; SKs with exactly the kernel funcName lists "
            f"{[s['functions'] for s in sks]} (matched by funcName + occurrence, not nodeId: "
            "plan_scene.compare_functions); no scope named None; "
            f"no new {'/'.join(V3_FORBIDDEN)} for the fragment nodes {fragment}",
            "expected_reason": reason,
            "expected_sks": [s["kernels"] for s in sks],
            "expected_functions": [s["functions"] for s in sks],
        },
        {
            "gate": "V4",
            "check": "only for multi-stream fragments: sk_prof_device_<dev>.json lanes complete, ordering "
            "consistent with the kept event edges listed in sk/*.json",
            "needed": any(s.get("kind") == "event" for s in proposal.get("safety") or []),
        },
        {
            "gate": "V5",
            "check": ">= 3 clean candidate processes vs the frozen baseline with diagnostics, profiler and "
            "metadata dump off; mean, P90 and standard deviation do not regress",
        },
    ]


def _run_json(scene: Path) -> dict[str, Any]:
    path = scene / "run.json"
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CandidateError(f"{path}: unreadable run manifest ({e})") from None
    return doc if isinstance(doc, dict) else {}


def write_candidate(
    candidate: Candidate, out: Path, *, force: bool = False, inputs: Sequence[Path] | None = None
) -> None:
    """Write atomically by the output-folder convention of :mod:`skdbg.atomic`: into a temporary
    sibling, then one rename; a non-empty ``out`` is refused unless ``force`` (never one holding
    ``inputs``, by default the scene and source root the candidate was built from)."""
    held = candidate.inputs if inputs is None else inputs
    write_tree(out, candidate.files, force=force, what=CANDIDATE_WHAT, inputs=held)
