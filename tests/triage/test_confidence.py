"""Confidence C0–C6 (triage.md §3.8), first matching rule wins; evals 1–2 of §8.1."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from triage_support import make_loc

from skdbg.scenebuilder.scene import ALL_FILES, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.attribution import attribute
from skdbg.triage.confidence import grade
from skdbg.triage.context import open_context
from skdbg.triage.model import GateResult, Verdict
from skdbg.triage.skview import all_instances

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"
PASS = GateResult(passed=True)
THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]


def verdict_of(
    spec: SceneSpec,
    tmp_path: Path,
    *,
    gate: GateResult = PASS,
    kind: str = "sk",
    edit: tuple[str, str, str] | None = None,
) -> Verdict:
    built = build_scene(spec, tmp_path / "scene")
    if edit is not None:
        p = built.model_dir / edit[0]
        p.write_text(re.sub(edit[1], edit[2], p.read_text()))
    ctx = open_context(built.root)
    loc = make_loc(ctx, kind=kind)
    return grade(ctx, gate, loc, attribute(ctx, loc))


# ------------------------------------------------------------------ eval 1 / C3


def test_eval1_example_scene_is_high_c3() -> None:
    ctx = open_context(EXAMPLE)
    loc = make_loc(ctx)
    v = grade(ctx, PASS, loc, attribute(ctx, loc))
    assert (v.confidence, v.rule) == ("high", "C3")
    s = v.suspect
    assert s is not None and (s.task_index, s.node_id, s.func_name) == (1, 121, "add_custom")
    assert s.symbol is not None and s.symbol.startswith("_Z13add_custom_sk")
    assert s.scope_id == 3 and s.kernel_type == "AIV_ONLY"
    assert [c.task_index for c in v.candidates] == [1]
    assert any(e.agrees is True and e.level == "L1" for e in v.evidence)
    assert v.to_json()["rule"] == "C3" and v.reason


def test_c3_from_pc_and_queue_entry_without_cond(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], dialect="D3"
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule) == ("high", "C3")
    assert v.suspect is not None and v.suspect.node_id == 102


def test_diagnostic_attempt_is_flagged_with_residual_risk(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], dialect="D5"
    )
    gate = GateResult(passed=True, diagnostic=True, diagnostic_reasons=("debug_op_exec_trace=1",))
    v = verdict_of(spec, tmp_path, gate=gate)
    assert v.confidence == "high" and "diagnostic_attempt" in v.flags
    assert any(r.startswith("F9") for r in v.residual_risk)


# ------------------------------------------------------------------ C0 / C1


def test_c0_gate_failed(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))])
    v = verdict_of(spec, tmp_path, gate=GateResult(passed=False, failed=("F3",)))
    assert (v.confidence, v.rule, v.suspect) == ("n/a", "C0", None)


def test_c0_non_sk_fault(tmp_path: Path) -> None:
    v = verdict_of(SceneSpec(children=THREE, fault="non_sk"), tmp_path, kind="non_sk")
    assert (v.confidence, v.rule, v.suspect) == ("n/a", "C0", None)


def test_c1_unknown_dialect(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))])
    built = build_scene(spec, tmp_path / "scene")
    ctx = open_context(built.root)
    loc = make_loc(ctx)
    loc.dialect_known = False
    loc.fault = replace(loc.fault, dialect="unknown")
    v = grade(ctx, PASS, loc, attribute(ctx, loc))
    assert (v.confidence, v.rule, v.suspect) == ("low", "C1", None)
    assert [c.task_index for c in v.candidates] == [2]


def test_c1_ambiguous_instance_lists_candidates_per_sk(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], extra_models=["48_2"]
    )
    built = build_scene(spec, tmp_path / "scene")
    ctx = open_context(built.root)
    loc = make_loc(ctx)
    loc.instance_candidates = [i for i in all_instances(ctx.evidence) if i.scope_id == 7]
    assert len(loc.instance_candidates) == 2
    loc.instance = None
    loc.instance_rule = "ambiguous"
    v = grade(ctx, PASS, loc, attribute(ctx, loc))
    assert (v.confidence, v.rule, v.suspect) == ("low", "C1", None)
    assert sorted({c.model for c in v.candidates}) == ["48_1", "48_2"]


# ------------------------------------------------------------------ C2


def test_c2_two_cores_conflict(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=30, core_type="AIV", pc=("child", 1)),
            FaultCore(core_id=31, core_type="AIV", pc=("child", 2)),
        ],
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C2", None)
    assert sorted(c.task_index for c in v.candidates) == [1, 2]


def test_c2_e4_contradiction_flags_stale_metadata(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))])
    v = verdict_of(spec, tmp_path, edit=("sk_fused_nodes.log", r"Node Count: 3", "Node Count: 4"))
    assert (v.confidence, v.rule) == ("low", "C2")
    assert "possible_stale_metadata" in v.flags and "Node Count" in v.reason


# ------------------------------------------------------------------ C4 / C5 / C6


def test_c4_cond_resolves_a_shared_binary(tmp_path: Path) -> None:
    kids = [
        Kernel("AddB_22", "AIV_ONLY"),
        Kernel("MulD_44", "AIV_ONLY"),
        Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
    ]
    spec = SceneSpec(
        children=kids,
        cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        dialect="D5",
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule) == ("medium", "C4")
    assert v.suspect is not None and v.suspect.task_index == 2 and v.suspect.node_id == 102
    assert v.residual_risk and v.residual_risk[0].startswith("medium")
    # the PC matches tasks 0 and 2 (shared binary); COND rules task 0 out (issue 11 item 3)
    assert [c.task_index for c in v.candidates] == [2]


def test_c6_shared_binary_without_cond(tmp_path: Path) -> None:
    kids = [
        Kernel("AddB_22", "AIV_ONLY"),
        Kernel("MulD_44", "AIV_ONLY"),
        Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
    ]
    spec = SceneSpec(
        children=kids, cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2))], dialect="D3"
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C6", None)
    assert sorted(c.task_index for c in v.candidates) == [0, 2]


def test_c5_pc_match_without_metadata(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))],
        files=ALL_FILES - {"fused_nodes", "task_queue", "device_args"},
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C5", None)


def test_eval2_timeout_with_only_the_entry_is_low(tmp_path: Path) -> None:
    # Only the anchor line: no DFX, no trace, no task queue. The revision cannot be narrowed (D1–D5)
    # but nothing field-dependent was printed, so this is C6 (only the SK entry), not C1.
    spec = SceneSpec(
        children=THREE, handler="anchor_only", failure_phase="timeout", files=ALL_FILES - {"task_queue"}
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C6", None)
    assert v.candidates == ()
    assert any(m.startswith("L1") for m in v.missing) and any(m.startswith("L2") for m in v.missing)


def test_c6_no_child_level_evidence(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_LAUNCHED", 1), cond="unavailable")
        ],
        dialect="D5",
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C6", None)
    assert "no child-level evidence" in v.reason
    assert any("driver package" in m for m in v.missing)


def test_c6_bystander_only(tmp_path: Path) -> None:
    kids = [Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY")]
    spec = SceneSpec(
        children=kids,
        op_trace=True,
        cores=[FaultCore(core_id=3, core_type="AIC", pc=("entry",), state=("OP_FINISHED", 0))],
    )
    v = verdict_of(spec, tmp_path)
    assert (v.confidence, v.rule, v.suspect) == ("low", "C6", None)
    assert "bystander" in v.reason
    # T1: the finished child is not even a candidate
    assert v.candidates == ()
