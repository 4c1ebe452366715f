"""Routes R1–R6 / X1–X7 (triage.md §7) and next steps D1–D3 / N1 / clean retest (§3.9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from triage_support import make_loc

from skdbg.scenebuilder.scene import ALL_FILES, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.attribution import attribute
from skdbg.triage.confidence import grade
from skdbg.triage.context import open_context
from skdbg.triage.model import NO_PROPOSAL, GateResult, NextStep, Proposal
from skdbg.triage.routing import route

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"
PASS = GateResult(passed=True)
THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]
SHARED = [
    Kernel("AddB_22", "AIV_ONLY"),
    Kernel("MulD_44", "AIV_ONLY"),
    Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
]


def routed(
    spec: SceneSpec | Path,
    tmp_path: Path,
    *,
    gate: GateResult = PASS,
    kind: str = "sk",
    phase: str = "device_fault",
    proposal: Proposal = NO_PROPOSAL,
) -> tuple[tuple[str, ...], tuple[NextStep, ...], Any]:
    root = spec if isinstance(spec, Path) else build_scene(spec, tmp_path / "scene").root
    ctx = open_context(root)
    loc = make_loc(ctx, kind=kind, phase=phase)
    att = attribute(ctx, loc)
    v = grade(ctx, gate, loc, att)
    routes, steps = route(ctx, gate, loc, att, v, proposal)
    return routes, steps, v


def ids(steps: tuple[NextStep, ...]) -> list[str]:
    return [s.id for s in steps]


def opts(steps: tuple[NextStep, ...], sid: str) -> list[dict[str, Any]]:
    return [s.options for s in steps if s.id == sid]


# ------------------------------------------------------------------ high: nothing to route


def test_high_verdict_has_no_low_routes_or_steps(tmp_path: Path) -> None:
    routes, steps, v = routed(EXAMPLE, tmp_path)
    assert v.confidence == "high" and routes == () and steps == ()


def test_r5_r6_come_from_the_proposal(tmp_path: Path) -> None:
    r5, _, _ = routed(EXAMPLE, tmp_path, proposal=Proposal(status="proposed", route="R5"))
    r6, _, _ = routed(EXAMPLE, tmp_path, proposal=Proposal(status="blocked", route=None))
    assert r5 == ("R5",) and r6 == ("R6",)


# ------------------------------------------------------------------ R1 / X*


def test_r1_gate_failed(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))])
    routes, steps, v = routed(spec, tmp_path, gate=GateResult(passed=False, failed=("F3",)))
    assert routes == ("R1",) and steps == () and v.rule == "C0"


def test_x3_non_sk(tmp_path: Path) -> None:
    routes, steps, _ = routed(SceneSpec(children=THREE, fault="non_sk"), tmp_path, kind="non_sk")
    assert "X3" in routes and "R1" not in routes and steps == ()


def test_x6_ge_family(tmp_path: Path) -> None:
    """A GE-mode SK fault: the gate fails G2 by construction (no sk_meta/<pid>); that is not n/a (C0)
    but low by C5, and R1 (rerun under npugraph_ex) is the one next step."""
    gate = GateResult(passed=False, failed=("G2",))
    routes, steps, v = routed(SceneSpec(children=THREE, fault="ge_sk"), tmp_path, kind="ge_sk", gate=gate)
    assert routes == ("X6", "R1") and (v.confidence, v.rule) == ("low", "C5")
    assert ids(steps) == ["R1"] and "npugraph_ex" in steps[0].why


def test_x1_compile_failure(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, fault="none", failure_phase="compile")
    gate = GateResult(passed=False, failed=("G3",))
    routes, _, _ = routed(spec, tmp_path, kind="none", phase="compile", gate=gate)
    assert routes == ("X1",)


def test_x2_no_fusion(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, fault="none", failure_phase="execution", files=ALL_FILES - {"fused_nodes"}
    )
    gate = GateResult(passed=False, failed=("G3",))
    routes, _, _ = routed(spec, tmp_path, kind="none", phase="execution", gate=gate)
    assert routes == ("X2",)


def test_x7_environment_failure_before_start(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, fault="none", run={"failure_phase": "not_run"})
    gate = GateResult(passed=False, failed=("G1",))
    routes, steps, _ = routed(spec, tmp_path, kind="none", phase="unknown", gate=gate)
    assert routes == ("X7",) and steps == ()


def test_r4_clean_end_under_debug_options(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        fault="none",
        failure_phase="execution",
        debug_options={"debug_sync_all": 1},
        run={"exit": {"status": 0, "signal": None, "timeout": False}},
    )
    gate = GateResult(passed=False, failed=("G3",), diagnostic=True, diagnostic_reasons=("debug_sync_all=1",))
    routes, steps, _ = routed(spec, tmp_path, kind="none", phase="execution", gate=gate)
    assert routes == ("R4",)
    assert ids(steps)[0] == "RETEST" and steps[0].options == {}
    assert "N1" in ids(steps) and "D2" in ids(steps)


# ------------------------------------------------------------------ low verdicts: R2 / R3 / X4 / X5, D1–D3, N1


def test_eval2_r2_requests_trace_and_narrowing(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, handler="anchor_only", failure_phase="timeout")
    routes, steps, v = routed(spec, tmp_path, phase="timeout")
    assert v.confidence == "low" and "R2" in routes
    assert opts(steps, "D1") == [{"debug_op_exec_trace": 1}]
    assert {"debug_cross_core_sync_check": 1} in opts(steps, "D2")  # timeout → D2
    # sync-all does not switch the trace on (upstream options manager): the attempt names both
    assert {"debug_sync_all": 1, "debug_op_exec_trace": 1} in opts(steps, "D2")
    assert opts(steps, "N1") == [{"split_scope": "decoder.layer.0.mlp"}]
    assert all(s.accepted_by_probe is True for s in steps if s.id.startswith("D"))
    assert "D3" not in ids(steps)  # no MIX child, no EXCEED_CORE_MAX


def test_hang_without_fault_line_asks_for_d1_d2(tmp_path: Path) -> None:
    """A hang with no fault line and no handler output: triage.md §9 item 4 — low (C6), route R2."""
    spec = SceneSpec(children=THREE, fault="none", failure_phase="hang")
    routes, steps, v = routed(spec, tmp_path, kind="none", phase="hang")
    assert (v.confidence, v.rule) == ("low", "C6") and routes == ("R2",)
    assert ids(steps) == ["D1", "D2", "D2", "N1"]


def test_r3_medium_from_cond(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=SHARED,
        cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
    )
    routes, steps, v = routed(spec, tmp_path)
    assert v.rule == "C4" and routes == ("R3",) and steps == ()


def test_r3_low_ambiguous_pc_asks_for_d1_and_n1(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=SHARED, cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2))], dialect="D3"
    )
    routes, steps, v = routed(spec, tmp_path)
    assert v.rule == "C6" and "R3" in routes and "R2" not in routes
    assert ids(steps) == ["D1", "N1"]


def test_x4_conflict_asks_for_d2(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=30, core_type="AIV", pc=("child", 1)),
            FaultCore(core_id=31, core_type="AIV", pc=("child", 2)),
        ],
    )
    routes, steps, v = routed(spec, tmp_path)
    assert v.rule == "C2" and "X4" in routes
    assert {"debug_sync_all": 1, "debug_op_exec_trace": 1} in opts(steps, "D2") and "N1" in ids(steps)


def test_x5_bystander_only_asks_for_d2(tmp_path: Path) -> None:
    kids = [Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY")]
    spec = SceneSpec(
        children=kids,
        op_trace=True,
        cores=[FaultCore(core_id=3, core_type="AIC", pc=("entry",), state=("OP_FINISHED", 0))],
    )
    routes, steps, v = routed(spec, tmp_path)
    assert "X5" in routes and "R2" in routes
    assert {"debug_cross_core_sync_check": 1} in opts(steps, "D2")
    assert "D3" not in ids(steps)


def test_d3_for_mix_children(tmp_path: Path) -> None:
    kids = [Kernel("MixE_55", "MIX_AIC_1_2"), Kernel("AddB_22", "AIV_ONLY")]
    spec = SceneSpec(children=kids, cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",))])
    routes, steps, v = routed(spec, tmp_path)
    assert v.confidence == "low" and opts(steps, "D3") == [{"debug_per_op_max_core_num": 1}]


def test_d2_for_event_scope_reason(tmp_path: Path) -> None:
    kids = [Kernel("AddB_22", "AIV_ONLY"), Event("EventNotify", event_id=1), Kernel("CastC_33", "AIV_ONLY")]
    core = [FaultCore(core_id=30, core_type="AIV", pc=("zero",))]
    plain = SceneSpec(children=kids, cores=core)
    _, steps, v = routed(plain, tmp_path / "a")
    assert v.confidence == "low" and "D2" not in ids(steps)
    flagged = SceneSpec(children=kids, scope_reasons=["ISOLATED_EVENT"], cores=core)
    _, steps, v = routed(flagged, tmp_path / "b")
    assert v.confidence == "low" and "D2" in ids(steps)
    assert any("ISOLATED_EVENT" in s.why for s in steps if s.id == "D2")


def test_no_probe_says_assumed(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, handler="anchor_only", probe=None)
    _, steps, _ = routed(spec, tmp_path)
    d1 = [s for s in steps if s.id == "D1"][0]
    assert d1.accepted_by_probe is None and "assumed, not proven by a probe" in d1.why


def test_probe_rejection_is_reported(tmp_path: Path) -> None:
    probe = {
        "options": {"debug_options": {"debug_op_exec_trace": {"accepted_values": [], "rejected_values": [1]}}}
    }
    spec = SceneSpec(children=THREE, handler="anchor_only", probe=probe)
    _, steps, _ = routed(spec, tmp_path)
    d1 = [s for s in steps if s.id == "D1"][0]
    assert d1.accepted_by_probe is False and "NOT accepted" in d1.why


def test_gate_route_hints_are_taken_over(tmp_path: Path) -> None:
    gate = GateResult(passed=False, failed=("G3",), route_hints=("X7",))
    routes, steps, v = routed(SceneSpec(children=THREE, fault="none"), tmp_path, kind="none", gate=gate)
    assert routes == ("X7",) and steps == () and v.rule == "C0"


def test_d3_for_exceed_core_max(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        scope_reasons=["EXCEED_CORE_MAX"],
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",))],
    )
    _, steps, v = routed(spec, tmp_path)
    assert v.confidence == "low"
    d3 = [s for s in steps if s.id == "D3"]
    assert [s.options for s in d3] == [{"debug_per_op_max_core_num": 1}] and "EXCEED_CORE_MAX" in d3[0].why
