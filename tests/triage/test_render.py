"""Terminal and markdown renderings of an Analysis (``skdbg analyze --format text|md``)."""

from __future__ import annotations

from dataclasses import replace

from skdbg.triage.model import (
    Analysis,
    ChildRef,
    CoreFinding,
    EvidenceItem,
    FaultInfo,
    GateGap,
    GateResult,
    MarkerEdit,
    NextStep,
    Proposal,
    SafetyNote,
    SceneInfo,
    Verdict,
)
from skdbg.triage.render import render_markdown, render_text

CHILD = ChildRef(2, 122, "DequantSwiglu_9a", "AIV_ONLY", 0, 7, "decoder.layer.0.mlp", "48_1", occurrence=0)
ALT = ChildRef(1, 121, "QuantMatmul_5b21", "AIC_ONLY", 0, 7)
DIFF = "--- a/src/model.py\n+++ b/src/model.py\n@@ -12 +12,2 @@\n+        torch.npu.super_kernel_scope_begin(None)\n"


def analysis() -> Analysis:
    ev = (
        EvidenceItem("L2", "plog", "log/plog/plog-48213_1.log", 17, "[Core 3] CurrentPC: 0x12c0", True),
        EvidenceItem("L1", "plog", "log/plog/plog-48213_1.log", 20, "last finished node[1]", None, rule="T1"),
        EvidenceItem(
            "L4",
            "task_queue",
            "sk_meta/48213/model_48_1/sk_task_queue.json",
            None,
            "FUNC",
            True,
            json_path="$.scopes[0]",
        ),  # fmt: skip
    )
    return Analysis(
        scene=SceneInfo(".", 48213, 3, 3),
        gate=GateResult(True, gaps=(GateGap("G4", "no env probe", "archive check_environment.json"),)),
        fault=FaultInfo(
            "sk",
            "device_fault",
            entry="sk_entry_aiv",
            dialect="D5",
            scope_id=7,
            model="48_1",
            cores=(CoreFinding(3, "AIV", 0x10, 0x12C0, "implicated", task_index=2),),
        ),  # fmt: skip
        verdict=Verdict("high", "C3", "E2 PC inside task 2", CHILD, (CHILD, ALT), ("t4_checked",), ev),
        routes=("R3",),
        next_steps=(NextStep("D1", {"debug_op_exec_trace": 1}, "confirm the child with an exec trace"),),
        proposal=Proposal(
            status="proposed",
            mechanism="explicit_none_exclusion",
            child=CHILD,
            excluded=(122,),
            before=(120, 121),
            after=(123,),
            marker_edits=(
                MarkerEdit("src/model.py", 12, "insert", "        torch.npu.super_kernel_scope_begin(None)"),
            ),
            diff=DIFF,
            safety=(SafetyNote("stream", "single stream", "sk_fused_nodes.log:2"),),
        ),
    )


def test_text_has_every_section_with_rule_ids_and_citations() -> None:
    t = render_text(analysis())
    assert "gate:     passed" in t
    assert "gap G4 wrapper and log dialect known: no env probe — collect: archive check_environment.json" in t
    assert "fault:    sk / device_fault, entry sk_entry_aiv, dialect D5, scope 7, model 48_1" in t
    assert "core 3 AIV pc=0x12c0 role=implicated task=2" in t
    assert "verdict:  high (C3 trace or unique PC, confirmed) — E2 PC inside task 2" in t
    assert "suspect:  DequantSwiglu_9a (task 2, nodeId 122)" in t
    assert "candidate: QuantMatmul_5b21 (task 1, nodeId 121)" in t
    assert "+ [L2] log/plog/plog-48213_1.log:17: [Core 3] CurrentPC: 0x12c0" in t
    assert "[L1 T1] log/plog/plog-48213_1.log:20" in t
    assert "sk_task_queue.json:$.scopes[0]" in t
    assert "routes:   R3 repeated symbol or ambiguous PC" in t
    assert "D1 rerun with the child execution trace (debug_op_exec_trace=1): confirm the child" in t
    assert "proposal: proposed via explicit_none_exclusion (mechanism A: wrap the child in a None scope)" in t
    assert "excluded 122; collateral —; before 120, 121; after 123" in t
    assert "codes: L2 PC inside one child's code; L1 child execution trace; T1 last finished child" in t
    assert "edit src/model.py:12 insert: torch.npu.super_kernel_scope_begin(None)" in t
    assert "    +        torch.npu.super_kernel_scope_begin(None)" in t
    assert "\x1b" not in t  # plain, terminal-friendly


def test_text_low_verdict_without_suspect() -> None:
    a = analysis()
    a = replace(
        a,
        verdict=Verdict("low", "C6", "only sk_entry known", missing=("L2: no PC",)),
        proposal=Proposal(status="none", reason="no suspect child"),
        routes=("R2",),
        next_steps=(),
    )
    t = render_text(a)
    assert "verdict:  low (C6 no child-level evidence) — only sk_entry known" in t
    assert "suspect:  none" in t
    assert "missing: L2: no PC" in t
    assert "proposal: none — no suspect child" in t
    assert "excluded" not in t


def test_markdown() -> None:
    md = render_markdown(analysis())
    assert md.startswith("# skdbg analysis")
    assert "**high** (C3 trace or unique PC, confirmed)" in md
    assert "- routes: R3 repeated symbol or ambiguous PC" in md
    assert "- D1 rerun with the child execution trace `debug_op_exec_trace=1` — confirm" in md
    assert "## Evidence chain" in md and "`log/plog/plog-48213_1.log:17`" in md
    assert "```diff\n" + DIFF.rstrip("\n") in md
    assert (
        "## Proposal: proposed via explicit_none_exclusion (mechanism A: wrap the child in a None scope)"
        in md
    )
    assert "- excluded: 122; collateral: —; before: 120, 121; after: 123" in md
    blocked = replace(
        analysis(), proposal=Proposal(status="blocked", blocked_reason="R6: event attached", excluded=(122,))
    )
    assert "blocked: R6: event attached" in render_markdown(blocked)


def test_no_python_repr_in_text_or_markdown() -> None:
    """Absent values print as —, option maps as key=value, node lists without brackets — never
    None, {'…': …} or [..] (issue 11 item 12)."""
    a = analysis()
    child = ChildRef(2, None, None, None, None, None)
    a = replace(
        a,
        fault=FaultInfo(
            "sk", "timeout", entry=None, dialect=None, cores=(CoreFinding(5, None, None, None, "unknown"),)
        ),
        verdict=replace(a.verdict, suspect=child, candidates=()),
        next_steps=(
            NextStep("D2", {"debug_sync_all": 1, "debug_op_exec_trace": 1}, "conflicting cores"),
            NextStep("RETEST", {}, "clean retest"),
        ),
        proposal=replace(a.proposal, collateral=(), before=(), diff=""),
    )
    t = render_text(a)
    assert "core 5 — pc=— role=unknown task=—" in t
    assert "type —, stream —, scope —, occurrence —, identity direct" in t
    assert "D2 rerun with sync checks (debug_sync_all=1, debug_op_exec_trace=1): conflicting cores" in t
    assert "RETEST (retest clean): clean retest" in t
    assert "excluded 122; collateral —; before —; after 123" in t
    md = render_markdown(a)
    assert "entry `—`, dialect `—`, scope `—`, model `—`" in md
    for out in (t, md):
        body = out.replace("scope_begin(None)", "").replace("a None scope", "")
        assert "None" not in body and "{'" not in body and "[]" not in body
