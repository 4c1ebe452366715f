"""Second reading of triage.md, rule by rule, on small scenes built with the scene builder.

Each test states a situation in its docstring and asserts the answer the specification gives for it,
written by hand from the rule text (never read back from skdbg's own output). The rules covered here
are the ones where skdbg's answer used to differ from the specification:

* G4/C1 — a handler block whose signature lines fit several *known* dialects is recognised;
* §9 item 4 / C0 / C6 / R2 — a hang without any fault line or handler output is low, not n/a;
* C1 / R3 — an SK instance that cannot be told apart routes R3 (correlate or narrow);
* §3.5 rule 2 / T6 — a task that cannot be tied to one fused node caps the grade at medium;
* §3.4 L2 — with no exception-core block, the runtime core report's PC is matched against the
  task-queue entries + ELF symbol sizes (and an entry-code PC makes a bystander, §3.6);
* §3.9 N1 — only a named scope can be split;
* G4 — with no handler output at all the dialect is not detectable: never above low;
* C2/X4 — another core whose own evidence excludes the named child is a conflict;
* G3/C6 — a wrong result with no fault line is low (narrowing), not n/a.
"""

from __future__ import annotations

from pathlib import Path

from skdbg.scenebuilder.scene import ALL_FILES, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.engine import analyze
from skdbg.triage.model import Analysis

THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]


def analysed(tmp_path: Path, spec: SceneSpec) -> Analysis:
    return analyze(build_scene(spec, tmp_path / "scene").root)


def step_ids(a: Analysis) -> list[str]:
    return [s.id for s in a.next_steps]


# ------------------------------------------------------------------ G4 / C1: dialect detection


def test_d3_block_without_pc_line_is_a_known_dialect(tmp_path: Path) -> None:
    """Situation: a D3 handler block from an op-trace build; the exception core captured PC 0, so
    (before D5) no PC block is printed, and D3 prints no COND line. The signature lines (opState
    counters, ``Origin function name``) fit D3 and D4 only — both known dialects, whose fields read the
    same. The core's trace says OP_LAUNCHED opId=2 (E1=2), the fused-node list confirms task 2 (E4).

    Spec: the dialect is recognised (G4 holds, C1 does not apply); C3 — E1 named 2 and E4(2) holds —
    gives ``high`` with child task 2 (nodeId 102, CastC_33)."""
    spec = SceneSpec(
        children=THREE,
        op_trace=True,
        dialect="D3",
        debug_options={"debug_op_exec_trace": 1},
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_LAUNCHED", 2))],
    )
    a = analysed(tmp_path, spec)
    assert a.gate.passed
    v = a.verdict
    assert (v.confidence, v.rule) == ("high", "C3")
    assert v.suspect is not None and (v.suspect.task_index, v.suspect.node_id) == (2, 102)
    g4 = [g.detail for g in a.gate.gaps if g.id == "G4"]
    assert not any("not recognised" in d for d in g4)


# ------------------------------------------------------------------ §9 item 4: silent hang


def test_hang_without_any_fault_line_is_low_r2_not_na(tmp_path: Path) -> None:
    """Situation: the candidate hung (run.json failure_phase hang); the plog of the process has no
    runtime fault line and no SK handler output; fresh sk_meta/<pid> holds exactly one SK.

    Spec §9 item 4: a hang with no DFX block is handled as ``low`` (X5/R2), not ``n/a``: the gate passes
    (G3 hang is this workflow), no child is named (C6), route R2, next steps D1 (exec trace), D2 (a hang:
    cross-core check and sync-all with the trace) and N1; no exclusion."""
    a = analysed(tmp_path, SceneSpec(children=THREE, fault="none", failure_phase="hang"))
    assert a.gate.passed
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert "R2" in a.routes
    steps = {(s.id, tuple(sorted(s.options.items()))) for s in a.next_steps}
    assert ("D1", (("debug_op_exec_trace", 1),)) in steps
    assert ("D2", (("debug_cross_core_sync_check", 1),)) in steps
    assert ("D2", (("debug_op_exec_trace", 1), ("debug_sync_all", 1))) in steps
    assert "N1" in step_ids(a)
    assert a.proposal.status == "none"


def test_clean_exit_without_fault_line_stays_na(tmp_path: Path) -> None:
    """Situation: a run that exited 0 with no fault line and no recorded failure phase (nothing failed).

    Spec: §3.2 — no SK fault, and not a hang either: C0 ``n/a``, no suspect, no R2."""
    spec = SceneSpec(
        children=THREE,
        fault="none",
        failure_phase="unknown",
        run={"exit": {"status": 0, "signal": None, "timeout": False}},
    )
    a = analysed(tmp_path, spec)
    assert (a.verdict.confidence, a.verdict.rule) == ("n/a", "C0")
    assert "R2" not in a.routes


# ------------------------------------------------------------------ C1 → R3


def test_same_sk_in_two_model_dirs_is_c1_and_routes_r3(tmp_path: Path) -> None:
    """Situation: dialect D3 (SkScopeId printed, no ModelId); sk_meta/<pid>/ holds model_48_1 and
    model_48_2 with the same scope 7 and the same child list; the PC is in child 2.

    Spec F5: without a ModelId the model dir is the one whose scope id and child list match — two do,
    so it stays ambiguous: C1 ``low``, no suspect, both SKs' task 2 listed; R3 (correlate opId/scopeId or
    narrow the scope) with D1 and N1."""
    spec = SceneSpec(
        children=THREE,
        dialect="D3",
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))],
        extra_models=["48_2"],
    )
    a = analysed(tmp_path, spec)
    v = a.verdict
    assert (v.confidence, v.rule, v.suspect) == ("low", "C1", None)
    assert sorted((c.model, c.task_index) for c in v.candidates) == [("48_1", 2), ("48_2", 2)]
    assert "R3" in a.routes
    assert "D1" in step_ids(a) and "N1" in step_ids(a)


# ------------------------------------------------------------------ §3.5 / T6 identity cap


def test_reordered_duplicate_names_cap_the_grade_at_medium(tmp_path: Path) -> None:
    """Situation: three kernels share funcName A_1 (positions 0, 3, 4); wait nodes were reordered (the
    super_kernel.log carries ``task reorder: place deferred wait node``) and there is no
    sk_device_args.log. The PC is in task 4's own code; task 4's queue entry holds that address.

    Spec §3.5 rule 2: several children have that funcName and a reorder happened, so task 4 cannot be
    tied to one fused node — the identity is ambiguous and caps the grade at ``medium`` (C3 would
    otherwise give high). No exact exclusion can be drawn for an untied node."""
    kids = [
        Kernel("A_1", "AIV_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("A_1", "AIV_ONLY", stream=1),
        Kernel("A_1", "AIV_ONLY"),
    ]
    spec = SceneSpec(
        children=kids,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 4))],
        reorder="auto",
        files=ALL_FILES - {"device_args"},
    )
    a = analysed(tmp_path, spec)
    v = a.verdict
    assert v.confidence == "medium"
    assert v.suspect is not None and v.suspect.task_index == 4 and v.suspect.node_id is None
    assert a.proposal.status != "proposed"


# ------------------------------------------------------------------ §3.4 L2 without a DFX table


def test_handler_aborted_before_dfx_uses_the_runtime_core_report(tmp_path: Path) -> None:
    """Situation: the SK handler aborted before PrintDfxInfo (``Failed to extract SK entry args or task
    queue``): no DFX table and no exception-core block. The runtime's own core error report names
    core 30 (aivec error) with its current PC inside task 2's code; sk_task_queue.json, bin_files and the
    fused-node list are fresh.

    Spec §3.4 L2: M(c) is recomputed from the task-queue entries + ELF symbol sizes when the DFX table
    is absent — M(30) = {2}, so E2 = 2; the task queue's FUNC task 2 holds the matched entry address,
    so C3 gives ``high`` for task 2 (nodeId 102, CastC_33)."""
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))],
        dfx=False,
        files=ALL_FILES - {"device_args"},
    )
    a = analysed(tmp_path, spec)
    v = a.verdict
    assert (v.confidence, v.rule) == ("high", "C3")
    assert v.suspect is not None and (v.suspect.task_index, v.suspect.node_id, v.suspect.func_name) == (
        2,
        102,
        "CastC_33",
    )
    core = next(c for c in a.fault.cores if c.core_id == 30)
    assert core.e2 == 2 and core.m == (2,)


def test_handler_aborted_core_in_entry_code_is_a_bystander(tmp_path: Path) -> None:
    """Situation: as above, but the runtime core report's PC lies in the SK entry's own code
    (bin_files/sk_entry_0x….o) — no child range contains it.

    Spec §3.6: a core with a non-zero PC outside every child range, confirmed in sk_entry by the ELF, is
    a bystander; with no child-level evidence C6 gives ``low`` and routes X5; nothing is excluded."""
    spec = SceneSpec(children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("entry",))], dfx=False)
    a = analysed(tmp_path, spec)
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert [c.role for c in a.fault.cores] == ["bystander"]
    assert "X5" in a.routes and a.proposal.status == "none"


# ------------------------------------------------------------------ N1 needs a named scope


def test_n1_is_not_offered_for_an_automatic_sk(tmp_path: Path) -> None:
    """Situation: an automatic-AOT SK (no named scope: the runtime prints its scope name as ``none``);
    only a bystander core in entry code, so the verdict is low.

    Spec §3.9: N1 splits *the named scope* into two named halves; there is no named scope, so no N1 step
    names a scope ``none``. D1 (default for any low verdict) is still offered."""
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("entry",))], scope_name="none"
    )
    a = analysed(tmp_path, spec)
    assert a.verdict.confidence == "low"
    assert "N1" not in step_ids(a) and "D1" in step_ids(a)


# ------------------------------------------------------------------ G4: no handler output at all


def test_runtime_fault_without_handler_output_is_never_above_low(tmp_path: Path) -> None:
    """Situation: the runtime fault line names ``sk_entry_mix11`` and its core error report gives core 30
    with a PC inside task 2's code, but the SK handler printed nothing (no anchor, no DFX, no core block);
    the task queue and bin_files would resolve the PC to task 2.

    Spec G4: the plog dialect cannot be detected, so skdbg MUST NOT grade above low — C1 (first match,
    before C3) gives ``low`` with no suspect and no exclusion; R2 (attribution cannot be claimed) with D1."""
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], handler="none"
    )
    a = analysed(tmp_path, spec)
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C1", None)
    assert [c.task_index for c in a.verdict.candidates] == [2]
    assert "R2" in a.routes and "D1" in step_ids(a)
    assert a.proposal.status == "none"
    assert "None" not in a.verdict.reason


def test_wrong_result_without_fault_line_is_low_with_narrowing(tmp_path: Path) -> None:
    """Situation: the candidate ran to the end with a wrong result (failure_phase correctness, exit 1);
    no runtime fault line, no SK handler output; fresh sk_meta/<pid> holds the one SK.

    Spec G3: correctness is this workflow, so the gate passes; nothing names a child (C6) — ``low``,
    route R2, D1 (default for any low verdict) and N1 (narrow the named scope); no D2 (not a hang)."""
    spec = SceneSpec(
        children=THREE,
        fault="none",
        failure_phase="correctness",
        run={"exit": {"status": 1, "signal": None, "timeout": False}},
    )
    a = analysed(tmp_path, spec)
    assert a.gate.passed
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert "R2" in a.routes
    assert step_ids(a) == ["D1", "N1"]


# ------------------------------------------------------------------ F5 without a ModelId


def test_d3_scope_whose_child_list_differs_fails_f5(tmp_path: Path) -> None:
    """Situation: dialect D3 (SkScopeId 7 printed, no ModelId); the only model dir holds scope 7, but its
    fused-node list names CastX_99 where the DFX table prints CastC_33 for node 2.

    Spec F5: without a ModelId the model dir is the one holding scope 7 *with a child list equal to the
    DFX origin-name list*; none does, so F5 fails, G2 fails and the verdict is C0 ``n/a`` (no suspect),
    route R1 (collect fresh metadata)."""
    built = build_scene(
        SceneSpec(
            children=THREE, dialect="D3", cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))]
        ),
        tmp_path / "scene",
    )
    fused = built.model_dir / "sk_fused_nodes.log"
    fused.write_text(fused.read_text().replace("funcName:CastC_33", "funcName:CastX_99"))
    a = analyze(built.root)
    assert "F5" in a.gate.failed and "G2" in a.gate.failed
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("n/a", "C0", None)
    assert "R1" in a.routes


# ------------------------------------------------------------------ D2 on event-edge reasons


def test_external_dependency_reason_asks_for_d2(tmp_path: Path) -> None:
    """Situation: low verdict (the only exception core captured PC 0, D3, no trace); the scope's
    BreakInfo records EXTERNAL_DEPEND (an event edge from outside the SK).

    Spec §3.9 D2 is for event/barrier suspicion, and §4.3 lists EXTERNAL_DEPEND among the
    deadlock-sensitive event reasons: the next steps are D1, D2 (cross-core check; sync-all with the
    exec trace) and N1."""
    spec = SceneSpec(
        children=THREE,
        dialect="D3",
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",))],
        scope_reasons=["EXTERNAL_DEPEND"],
    )
    a = analysed(tmp_path, spec)
    assert a.verdict.confidence == "low"
    assert step_ids(a) == ["D1", "D2", "D2", "N1"]
