"""Attribution L1–L4, bystanders and traps T1–T9 (triage.md §3.3–§3.7) on built scenes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from triage_support import make_loc

from skdbg.parsers.cond import encode_cond
from skdbg.scenebuilder.scene import ALL_FILES, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.attribution import Attribution, attribute
from skdbg.triage.context import open_context

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"

THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]


def run(spec: SceneSpec, tmp_path: Path, edit: dict[str, tuple[str, str]] | None = None) -> Attribution:
    built = build_scene(spec, tmp_path / "scene")
    for rel, (pat, rep) in (edit or {}).items():
        p = built.model_dir / rel
        p.write_text(re.sub(pat, rep, p.read_text()))
    ctx = open_context(built.root)
    return attribute(ctx, make_loc(ctx))


def core(att: Attribution, cid: int):  # type: ignore[no-untyped-def]
    return next(c for c in att.cores if c.core_id == cid)


# ------------------------------------------------------------------ example scene (eval 1 shape)


def test_example_scene_names_task_1_at_every_level() -> None:
    ctx = open_context(EXAMPLE)
    att = attribute(ctx, make_loc(ctx))
    c = core(att, 30)
    assert (c.core_type, c.role, c.e1, c.e2, c.e3, c.m) == ("AIV", "implicated", 1, 1, 1, (1,))
    assert att.K == (1,) and set(att.named_by[1]) == {"L1", "L2", "L3"}
    e4 = att.e4[1]
    assert e4.ok and e4.child.node_id == 121 and e4.child.func_name == "add_custom"
    assert att.entry_confirmed == (1,)
    assert att.symbols[1].startswith("_Z13add_custom_sk")
    # T4: the printed first match is a quotation; every item cites a file
    t4 = [e for e in att.evidence if e.rule == "T4"]
    assert t4 and all(e.agrees is None for e in t4)
    assert all(
        e.file and (e.line is not None or e.json_path or e.source == "bin_files") for e in att.evidence
    )


# ------------------------------------------------------------------ L1 / L2 / L3


def test_l1_needs_op_trace_and_a_func_task(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1), state=("OP_LAUNCHED", 1))],
        dialect="D3",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.e1 == 1 and c.e2 == 1 and c.e3 is None  # D3: no COND
    assert any(e.level == "L1" and e.task_index == 1 for e in att.evidence)


def test_no_l1_without_op_trace(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1), state=("OP_LAUNCHED", 1))],
        dialect="D5",
        op_trace=False,
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.e1 is None and c.e2 == 1 and c.e3 == 1
    assert any("debug_op_exec_trace" in m for m in att.missing)


def test_l2_is_recomputed_from_dfx_ranges_not_the_printed_node(tmp_path: Path) -> None:
    # T4: children 0 and 2 share one binary; the handler prints node[0] for a PC in child 2's code.
    kids = [
        Kernel("AddB_22", "AIV_ONLY"),
        Kernel("MulD_44", "AIV_ONLY"),
        Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
    ]
    spec = SceneSpec(
        children=kids, cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2))], dialect="D3"
    )
    att = run(spec, tmp_path)
    c = core(att, 31)
    assert c.m == (0, 2) and c.e2 is None and c.printed_node == 0
    assert att.K == () and att.e2_ambiguous == (0, 2)


def test_l3_cond_names_the_child_with_the_queue(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=3, core_type="AIC", pc=("zero",), state=("OP_LAUNCHED", 0))],
        dialect="D4",
    )
    att = run(spec, tmp_path)
    c = core(att, 3)
    assert c.e3 == 0 and c.e2 is None and c.cond_state == "OP_LAUNCHED"
    assert att.K == (0,) and att.named_by[0] == ("L3",)
    assert any(e.level == "L3" and e.source == "task_queue" for e in att.evidence)


def test_l3_without_task_queue_is_context_only(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=3, core_type="AIC", pc=("zero",), state=("OP_LAUNCHED", 0))],
        dialect="D4",
        files=ALL_FILES - {"task_queue", "device_args"},
    )
    att = run(spec, tmp_path)
    assert core(att, 3).e3 is None and att.K == ()
    assert any(m.startswith("L3") and "sk_task_queue" in m for m in att.missing)


def test_cond_unavailable_gives_no_l3(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=3, core_type="AIC", pc=("zero",), state=("OP_LAUNCHED", 0), cond="unavailable")
        ],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    assert core(att, 3).e3 is None and "cond_unavailable" in att.flags
    assert any("driver package" in m for m in att.missing)


def test_t5_cond_scope_leak_is_flagged(tmp_path: Path) -> None:
    # COND carrying a scope different from the printed SkScopeId (index bits leaked, T5).
    bad = encode_cond(2, 1, 7 | 0x100, 0)
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_LAUNCHED", 1), cond=bad)],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert "cond_index_overflow" in att.flags
    assert c.e3 is None and 1 in c.e3_candidates
    assert any(e.rule == "T5" for e in att.evidence)


# ------------------------------------------------------------------ L4


def test_l4_confirms_direct_identity(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], dialect="D5"
    )
    att = run(spec, tmp_path)
    r = att.e4[2]
    assert r.ok and not r.contradiction and r.child.identity == "direct" and r.child.node_id == 102


def test_l4_node_count_mismatch_is_a_contradiction(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], dialect="D5"
    )
    att = run(spec, tmp_path, {"sk_fused_nodes.log": (r"Node Count: 3", "Node Count: 4")})
    r = att.e4[2]
    assert not r.ok and r.contradiction and r.stale
    assert "possible_stale_metadata" in att.flags


def test_l4_child_listed_unfusible_is_a_contradiction(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1))],
        unfusible=[(Kernel("AddB_22", "AIV_ONLY", node_id=101), "NOT_IN_SCOPE")],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    r = att.e4[1]
    assert r.contradiction and any("unfusible" in d for d in r.detail)


def test_t6_reorder_uses_device_args_not_position(tmp_path: Path) -> None:
    kids = [
        Kernel("MatA_11", "AIC_ONLY"),
        Event("EventWait", event_id=1, stream=0),
        Kernel("AddB_22", "AIV_ONLY"),
        Kernel("CastC_33", "AIV_ONLY"),
    ]
    spec = SceneSpec(
        children=kids, reorder={1: 2, 2: 1}, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1))]
    )
    built = build_scene(spec, tmp_path / "scene")
    ctx = open_context(built.root)
    att = attribute(ctx, make_loc(ctx))
    k = built.task_index[2]
    assert k == 1  # the moved wait node took task 2 (T6): position 2 runs as task 1
    assert (k,) == att.K
    assert att.e4[k].child.node_id == built.node_ids[2] and att.e4[k].child.identity == "direct"


def test_t6_reorder_without_device_args_leaves_duplicates_ambiguous(tmp_path: Path) -> None:
    kids = [
        Kernel("AddB_22", "AIV_ONLY"),
        Event("EventWait", event_id=1, stream=0),
        Kernel("AddB_22", "AIV_ONLY"),
    ]
    spec = SceneSpec(
        children=kids,
        reorder={1: 2, 2: 1},
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1))],
        files=ALL_FILES - {"device_args"},
    )
    built = build_scene(spec, tmp_path / "scene")
    ctx = open_context(built.root)
    att = attribute(ctx, make_loc(ctx))
    k = built.task_index[2]
    assert (k,) == att.K
    assert att.e4[k].child.identity == "ambiguous" and not att.e4[k].ok


# ------------------------------------------------------------------ traps and roles


def test_t1_finished_child_is_never_named_and_core_is_a_bystander(tmp_path: Path) -> None:
    kids = [Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY")]
    spec = SceneSpec(
        children=kids,
        cores=[FaultCore(core_id=3, core_type="AIC", pc=("entry",), state=("OP_FINISHED", 0))],
        dialect="D5",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    c = core(att, 3)
    assert c.role == "bystander" and att.K == () and c.e1 is None and c.e3 is None
    assert "T1" in c.flags and any(e.rule == "T1" for e in att.evidence)
    assert c.blocking is not None and "SYNC" in c.blocking and "wait AIV→AIC" in c.blocking


def test_bystander_in_state_1_blocks_from_queue_head(tmp_path: Path) -> None:
    kids = [
        Event("EventNotify", event_id=4, stream=1),
        Kernel("AddB_22", "AIV_ONLY"),
        Event("EventWait", event_id=4, stream=0),
        Kernel("CastC_33", "AIV_ONLY"),
    ]
    spec = SceneSpec(
        children=kids,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("entry",), state=("SK_ENTRY_LAUNCHED", 0))],
        dialect="D5",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.role == "bystander"
    # the queue head is a FUNC; state 1 starts there, the first blocking task is the event wait
    assert c.blocking is not None and "EVENT_WAIT" in c.blocking and "eventId=4" in c.blocking
    assert "EventNotify nodeId 100" in c.blocking  # the edge it waits on


def test_circular_wait_across_cores(tmp_path: Path) -> None:
    kids = [Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY", sync_after=5)]
    spec = SceneSpec(
        children=kids,
        cores=[
            FaultCore(core_id=3, core_type="AIC", pc=("entry",), state=("OP_FINISHED", 0)),
            FaultCore(core_id=30, core_type="AIV", pc=("entry",), state=("OP_FINISHED", 1)),
        ],
        dialect="D5",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    assert "circular_wait" in att.flags
    assert all(c.role == "bystander" and "circular wait" in (c.blocking or "") for c in att.cores)


def test_t9_pc_zero_is_unknown_not_bystander(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_FINISHED", 1))],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.role == "unknown" and c.m == () and "T9" in c.flags
    assert any(e.rule == "T9" for e in att.evidence)


def test_t7_core_type_from_core_type_line(tmp_path: Path) -> None:
    # core 30 ≥ 25 would be guessed "AIV" by the D0–D4 listing; its own CoreType line says AIC.
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIC", pc=("child", 0), state=("OP_LAUNCHED", 0))],
        dialect="D4",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.core_type == "AIC" and c.e2 == 0 and c.e1 == 0


def test_t2_t3_names_are_context_only(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("entry",))], dialect="D5"
    )
    att = run(spec, tmp_path)
    # the SK name carries start_/end_ boundary names: cited as T3 context, never naming a child
    t3 = [e for e in att.evidence if e.rule == "T3"]
    assert t3 and all(e.agrees is None and e.task_index is None for e in t3)
    # the last DFX origin name printed right above the core block is T2 context, not a suspect
    t2 = [e for e in att.evidence if e.rule == "T2"]
    assert t2 and "CastC_33" in t2[0].excerpt and t2[0].task_index is None
    assert att.K == () and core(att, 30).role != "implicated"


def test_two_cores_naming_different_children_conflict(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=30, core_type="AIV", pc=("child", 1)),
            FaultCore(core_id=31, core_type="AIV", pc=("child", 2)),
        ],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    assert att.K == (1, 2) and att.conflicts


def test_no_incident_gives_empty_attribution(tmp_path: Path) -> None:
    spec = SceneSpec(children=THREE, fault="none", failure_phase="timeout")
    att = run(spec, tmp_path)
    assert att.cores == () and att.K == ()
    assert att.missing


@pytest.mark.parametrize("dialect", ["D1", "D2", "D3", "D4", "D5"])
def test_pc_match_in_every_dialect_with_pc_block(tmp_path: Path, dialect: str) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], dialect=dialect
    )
    att = run(spec, tmp_path)
    assert core(att, 30).e2 == 2


def _wide(n: int) -> list[Kernel]:
    return [Kernel(f"K{i}_aa", "AIV_ONLY") for i in range(n)]


def test_t5_index_recovered_from_leaked_scope_bits(tmp_path: Path) -> None:
    # scope 0 has zero bits where index>>8 leaks: the decoded scope 1 recovers task 257 (flagged).
    spec = SceneSpec(
        children=_wide(260),
        scope_id=0,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_LAUNCHED", 257))],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    assert core(att, 30).e3 == 257 and att.K == (257,)
    assert "cond_index_overflow" in att.flags


def test_t5_hidden_wrap_leaves_every_candidate(tmp_path: Path) -> None:
    # scope 7 already has bit 0 set: the leak is invisible, opIndex 1 may be task 1 or 257.
    spec = SceneSpec(
        children=_wide(260),
        scope_id=7,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",), state=("OP_LAUNCHED", 257))],
        dialect="D5",
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert c.e3 is None and c.e3_candidates == (1, 257)
    assert att.K == () and att.e3_ambiguous == (1, 257)


def test_d0_legacy_launch_counter_gives_l1_without_pc_match(tmp_path: Path) -> None:
    # D0 prints `launch=<st>` counters and no PC→node block: E1 only, core type unknown (T7: no guess).
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        dialect="D0",
        op_trace=True,
    )
    att = run(spec, tmp_path)
    c = core(att, 30)
    assert (c.e1, c.e2, c.m) == (2, None, ())
    assert att.K == (2,) and att.e4[2].ok


def _drop_dfx_table(*files: Path) -> None:
    """The handler's DFX table lines removed (plog and the super_kernel.log copy)."""
    for f in files:
        lines = f.read_text().splitlines(keepends=True)
        f.write_text("".join(x for x in lines if "PrintDfxInfo]" not in x))


@pytest.mark.parametrize(
    ("files", "origin"),
    [(ALL_FILES, "device_args"), (ALL_FILES - {"device_args"}, "task_queue+elf")],
)
def test_l2_ranges_fall_back_without_the_plog_dfx_table(
    tmp_path: Path, files: frozenset[str], origin: str
) -> None:
    spec = SceneSpec(
        children=THREE, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))], files=files
    )
    built = build_scene(spec, tmp_path / "scene")
    _drop_dfx_table(built.plog, built.model_dir / "super_kernel.log")
    ctx = open_context(built.root)
    loc = make_loc(ctx)
    assert loc.incident is not None and loc.incident.dfx is None
    from skdbg.triage.attribution import _ranges  # the range source actually used

    assert {r.origin for r in _ranges(loc.incident, loc.instance, "aiv")} == {origin}
    att = attribute(ctx, loc)
    assert core(att, 30).m == (2,) and att.K == (2,)


def test_attribution_runs_no_demangler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attribution resolves task entries and the faulting PC through the images (here every task entry,
    the sizes coming from the ELFs) and compares raw symbols only: it never starts ``c++filt`` (once
    per new name, that was a process per task entry)."""
    from skdbg.parsers import demangle

    started: list[object] = []

    def fake_run(args: object, **_: object) -> object:
        started.append(args)
        raise AssertionError("c++filt started")

    monkeypatch.setattr(demangle, "demangler_path", lambda: "/usr/bin/c++filt")
    monkeypatch.setattr(demangle.subprocess, "run", fake_run)
    monkeypatch.setattr(demangle, "_cache", {})
    spec = SceneSpec(
        children=THREE,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 2))],
        files=ALL_FILES - {"device_args"},
    )
    built = build_scene(spec, tmp_path / "scene")
    _drop_dfx_table(built.plog, built.model_dir / "super_kernel.log")
    ctx = open_context(built.root)
    att = attribute(ctx, make_loc(ctx))
    assert core(att, 30).m == (2,) and att.K == (2,)
    assert started == []


def test_the_child_ranges_are_made_once_a_queue_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three AIV exception cores and one AIC core, the ranges taken from the task queue and the ELFs (a
    pass over every task entry's image each time they are made): made once per queue type, and each
    core's PC still lands in its task's range."""
    import skdbg.triage.attribution as attribution_mod

    made: list[str | None] = []
    real = attribution_mod._ranges

    def counting(inc: object, inst: object, qtype: str | None) -> object:
        made.append(qtype)
        return real(inc, inst, qtype)  # type: ignore[arg-type]

    monkeypatch.setattr(attribution_mod, "_ranges", counting)
    spec = SceneSpec(
        children=THREE,
        cores=[
            FaultCore(core_id=30, core_type="AIV", pc=("child", 2)),
            FaultCore(core_id=31, core_type="AIV", pc=("child", 1)),
            FaultCore(core_id=32, core_type="AIV", pc=("child", 2)),
            FaultCore(core_id=3, core_type="AIC", pc=("child", 0)),
        ],
        files=ALL_FILES - {"device_args"},
    )
    built = build_scene(spec, tmp_path / "scene")
    _drop_dfx_table(built.plog, built.model_dir / "super_kernel.log")
    ctx = open_context(built.root)
    att = attribute(ctx, make_loc(ctx))
    assert sorted(made, key=str) == ["aic", "aiv"]
    assert [core(att, cid).m for cid in (30, 31, 32, 3)] == [(2,), (1,), (2,), (0,)]
