"""The general scene builder (skdbg.scenebuilder.scene): every built scene reads back through the real parsers.

Why: triage tests for each rule id stand on scenes this builder writes. If a built scene did not parse back
exactly as described (dialect, exception cores, DFX table, fused nodes, device args idx→nodeId, task queue,
PC → child through bin_files), a triage test could pass or fail for the wrong reason. Each test here reads a
built scene back with ``open_context(...).evidence`` and the SK view and compares it with ``BuiltScene`` facts.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from skdbg.parsers.cond import encode_cond
from skdbg.parsers.runtime_faults import DumpException, ErrorTracking, KernelFaultLine
from skdbg.scenebuilder.scene import (
    BuiltScene,
    Event,
    FaultCore,
    Kernel,
    SceneSpec,
    SkDef,
    build_scene,
)
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.skview import SkInstance, all_instances

DIALECTS = ("D0", "D1", "D2", "D3", "D4", "D5")


def _two_stream_children() -> list[Kernel | Event]:
    return [
        Kernel("RmsNorm_5c1d", "AIV_ONLY"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("RopeCache_77", "AIV_ONLY", stream=1),
        Kernel("QuantMatmul_5b21", "AIC_ONLY", shares_binary_with=1),
    ]


def _build(tmp_path: Path, name: str = "scene", **kw: object) -> tuple[BuiltScene, TriageContext]:
    kw.setdefault("children", _two_stream_children())
    built = build_scene(SceneSpec(**kw), tmp_path / name)  # type: ignore[arg-type]
    return built, open_context(built.root)


def _instance(ctx: TriageContext, scope_id: int = 7) -> SkInstance:
    found = [i for i in all_instances(ctx.evidence) if i.scope_id == scope_id]
    assert len(found) == 1, [i.scope_id for i in all_instances(ctx.evidence)]
    return found[0]


def _faults(ctx: TriageContext) -> list[KernelFaultLine]:
    return [f for p in ctx.evidence.plogs for f in p.faults if isinstance(f, KernelFaultLine)]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------ dialects


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_dialect_parses_back(tmp_path: Path, dialect: str) -> None:
    built, ctx = _build(
        tmp_path,
        dialect=dialect,
        op_trace=True,
        cores=[
            FaultCore(3, "AIC", pc=("child", 1), state=("OP_LAUNCHED", 1)),
            FaultCore(30, "AIV", pc=("child", 4), state=("OP_LAUNCHED", 4)),
        ],
    )
    ev = ctx.evidence
    assert not ev.gaps
    assert len(ev.incidents) == 1
    inc = ev.incidents[0]
    assert inc.dialect == dialect
    assert inc.entry == built.entry == "sk_entry_mix11_op_trace"
    assert inc.op_trace is True
    assert [c.core_id for c in inc.cores] == [3, 30]
    # the DFX table lists every task node (kernels and events) in task order, with origin names
    assert inc.dfx is not None and inc.dfx.node_cnt == 6
    names = [n.origin_name for n in inc.dfx.nodes]
    assert names[0] == "RmsNorm_5c1d" and names[4] == "RopeCache_77" and names[5] == "QuantMatmul_5b21"
    by_core = {c.core_id: c for c in inc.cores}
    if dialect == "D0":
        assert all(c.current_pc is None for c in inc.cores)  # D0: no PC→node match at all
    else:
        assert by_core[3].current_pc == built.current_pcs[3]
        assert by_core[3].node == 1  # T4: the handler's first match (node 1 and node 5 share the image)
        assert by_core[30].node == 4
    # counters carry the trace state of each exception core (op_trace)
    assert inc.counters is not None
    states = {e.core: (e.index, e.op_state) for e in inc.counters.entries}
    assert states[3] == (1, 2) and states[30] == (4, 2)
    if dialect in ("D4", "D5"):
        assert by_core[3].cond is not None and by_core[3].cond.value == built.cond[3]
        assert built.cond[3] == encode_cond(2, 1, 7, 0)
    # the SK instance joins fused nodes, device args and the task queue
    inst = _instance(ctx)
    assert [n.node_id for n in inst.nodes] == built.node_ids
    assert inst.index_to_node_id == dict(zip(built.task_index, built.node_ids, strict=True))
    assert {t.index for t in inst.tasks if t.type == "FUNC"} == {0, 1, 4, 5}
    assert {t.origin for t in inst.tasks} == {"task_queue"}
    assert inst.device_args is not None
    da = {(t.idx, t.node_id, t.type) for q in inst.device_args.queues for t in q.tasks}
    assert (1, 101, "FUNC") in da and (4, 104, "FUNC") in da and (2, 102, "EVENT_NOTIFY") in da
    # PC → child through bin_files; the shared image resolves to the first child's binary
    me = ev.model_evidence[0]
    assert me.images is not None
    loc = me.images.locate(built.current_pcs[30])
    assert loc.image is not None and loc.image.func_name == "RopeCache_77"
    assert me.images.locate(built.current_pcs[3]).image.func_name == "QuantMatmul_5b21"  # type: ignore[union-attr]


def test_core_pc_forms_entry_zero_addr(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        cores=[
            FaultCore(3, "AIC", pc=("entry",), state=("OP_FINISHED", 1)),
            FaultCore(31, "AIV", pc=("zero",)),
            FaultCore(32, "AIV", pc=("addr", 0x1234)),
        ],
    )
    assert built.current_pcs[31] == 0 and built.current_pcs[32] == 0x1234
    assert built.matches == {3: None, 31: None, 32: None}
    me = ctx.evidence.model_evidence[0]
    assert me.images is not None
    assert me.images.locate(built.current_pcs[3]).in_entry
    inc = ctx.evidence.incidents[0]
    assert {c.core_id: c.matched for c in inc.cores} == {3: False, 31: False, 32: False}


# ------------------------------------------------------------------------------------------ structure


def test_events_appear_in_fused_nodes_queues_and_source(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, cores=[FaultCore(30, "AIV", pc=("child", 4))])
    inst = _instance(ctx)
    ev_nodes = [n for n in inst.nodes if not n.is_kernel]
    assert [n.node_id for n in ev_nodes] == [102, 103]
    assert inst.streams() == [0, 1]
    types = {(t.queue, t.index, t.type) for t in inst.tasks}
    for queue in ("aic", "aiv"):
        assert (queue, 2, "EVENT_NOTIFY") in types
        assert (queue, 3, "EVENT_WAIT") in types
    assert inst.device_args is not None
    da = {(q.name, t.idx, t.node_id, t.type) for q in inst.device_args.queues for t in q.tasks}
    assert ("AIV", 2, 102, "EVENT_NOTIFY") in da and ("AIC", 3, 103, "EVENT_WAIT") in da
    queue_json = (built.model_dir / "sk_task_queue.json").read_text()
    assert '"EVENT_WAIT"' in queue_json and "nodeId" not in queue_json  # the JSON has no graph nodeId
    src = (built.root / "src" / "model.py").read_text().splitlines()
    assert src[built.source_lines[102] - 1].strip() == "ev1.record()"
    assert src[built.source_lines[103] - 1].strip() == "ev1.wait()"
    assert "super_kernel_scope_begin" in src[built.source_lines[100] - 2]
    assert json.loads((built.root / "source_sites.json").read_text()) == {
        str(k): v for k, v in built.source_lines.items()
    }


def test_reorder_moves_wait_node_task_index(tmp_path: Path) -> None:
    children = [
        Kernel("A_1"),
        Event("EventWait", event_id=2),
        Kernel("B_2"),
        Kernel("C_3"),
    ]
    built, ctx = _build(
        tmp_path,
        children=children,
        reorder={1: 3},
        dialect="D5",
        cores=[FaultCore(30, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],  # task 2 = C_3
    )
    assert built.task_index == [0, 3, 1, 2]
    inst = _instance(ctx)
    assert inst.reordered
    assert inst.deferred_waits
    assert inst.index_to_node_id == {0: 100, 1: 102, 2: 103, 3: 101}
    assert [n.position for n in inst.nodes if n.node_id == 103] == [3]  # fused position ≠ task index (T6)
    inc = ctx.evidence.incidents[0]
    assert inc.cores[0].node == 2  # the handler names the task index
    assert inc.dfx is not None and inc.dfx.nodes[3].origin_name is None  # event node at task 3
    assert inc.dfx.nodes[2].origin_name == "C_3"
    me = ctx.evidence.model_evidence[0]
    assert me.images is not None
    assert me.images.locate(built.current_pcs[30]).image.func_name == "C_3"  # type: ignore[union-attr]
    log = (built.model_dir / "super_kernel.log").read_text()
    assert (
        "task reorder: place deferred wait node, waitNodeId=101, streamIdx=0, originalIdx=1, finalIdx=3"
        in log
    )


def test_reorder_auto_defers_waits_to_their_kernel(tmp_path: Path) -> None:
    """auto_op_parallel CUSTOMIZE_QUEUE: a wait is placed right before the next kernel on its stream."""
    children = [
        Kernel("A_1"),
        Event("EventWait", event_id=3, stream=1),
        Kernel("B_2"),
        Kernel("C_3", stream=1),
    ]
    built, ctx = _build(
        tmp_path, children=children, reorder="auto", cores=[FaultCore(30, "AIV", pc=("child", 3))]
    )
    assert built.task_index == [0, 2, 1, 3]
    inst = _instance(ctx)
    assert inst.reordered and inst.index_to_node_id == {0: 100, 1: 102, 2: 101, 3: 103}


def test_no_reorder_logs_disabled(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, cores=[FaultCore(30, "AIV", pc=("child", 0))])
    assert not _instance(ctx).reordered
    log = (built.model_dir / "super_kernel.log").read_text()
    assert "task reorder disabled: auto_op_parallel is not CUSTOMIZE_QUEUE" in log
    assert "reordered task nodes: node count=6" in log


def test_files_subset_and_missing_side_files(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        files={"fused_nodes", "bin_files"},
        run=None,
        probe=None,
        source=False,
        cores=[FaultCore(30, "AIV", pc=("child", 0))],
    )
    me = ctx.evidence.model_evidence[0]
    assert me.fused_nodes is not None and me.images is not None
    assert me.device_args is None and me.task_queue is None and me.super_kernel_log is None
    assert me.scope_split is None and me.fail_reasons is None and me.node_detail is None
    assert ctx.run is None and ctx.probe is None
    assert not (built.root / "run.json").exists() and not (built.root / "src").exists()
    assert built.run_json is None and built.probe_json is None


def test_pid_overrides(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        pid=100,
        meta_pid=201,
        sk_meta_pid=202,
        plog_pid=203,
        cores=[FaultCore(30, "AIV", pc=("child", 0))],
    )
    assert built.model_dir.parent.name == "202"
    assert built.plog.name.startswith("plog-203_")
    assert ctx.evidence.incidents[0].pid == 203
    fused = (built.model_dir / "sk_fused_nodes.log").read_text().splitlines()[0]
    assert "[201:" in fused
    assert json.loads((built.root / "run.json").read_text())["pid"] == 100


def test_meta_prefix_false_writes_bare_lines_with_build_mtime(tmp_path: Path) -> None:
    ts = datetime(2026, 6, 10, 14, 1, 2)
    built, ctx = _build(
        tmp_path, meta_prefix=False, build_ts=ts, cores=[FaultCore(30, "AIV", pc=("child", 0))]
    )
    path = built.model_dir / "sk_fused_nodes.log"
    first = path.read_text().splitlines()[0]
    assert first.startswith("SK Function: ")
    assert int(os.stat(path).st_mtime) == int(ts.timestamp())
    inst = _instance(ctx)
    assert [n.node_id for n in inst.nodes] == built.node_ids
    assert inst.index_to_node_id == dict(zip(built.task_index, built.node_ids, strict=True))


# ------------------------------------------------------------------------------------------ fault kinds


def test_fault_line_device_and_diagnostic_defaults(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path, device=5, op_trace=True, debug_options=None, cores=[FaultCore(30, "AIV", pc=("child", 0))]
    )
    (fault,) = _faults(ctx)
    assert fault.device_id == 5 and fault.kernel_name == built.entry
    run = json.loads((built.root / "run.json").read_text())
    assert run["device"] == 5
    assert run["candidate"]["super_kernel_debug_options"] == {
        "debug_op_exec_trace": 1
    }  # consistent with entry
    other, ctx2 = _build(
        tmp_path, "b", fault_device=1, op_trace=True, cores=[FaultCore(30, "AIV", pc=("child", 0))]
    )
    assert _faults(ctx2)[0].device_id == 1
    # the default is a clean manifest even for an op_trace entry (F9 conflict scenes)
    assert json.loads((other.root / "run.json").read_text())["candidate"]["super_kernel_debug_options"] == {}


def test_fault_non_sk(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, fault="non_sk", non_sk_kernel="RopeCache_77_kernel0", cores=[FaultCore(30)])
    faults = _faults(ctx)
    assert [f.kernel_name for f in faults] == ["RopeCache_77_kernel0"]
    assert faults[0].kind == "non_sk"
    assert ctx.evidence.incidents == []
    assert built.model_dir.is_dir()  # the SK exists in the model, it just did not fault


def test_fault_ge_sk(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, fault="ge_sk", cores=[FaultCore(30, "AIV", pc=("child", 4))])
    faults = _faults(ctx)
    assert len(faults) == 1 and faults[0].kind == "ge_sk"
    assert faults[0].kernel_name.startswith("te_superkernel_")
    records = [f for p in ctx.evidence.plogs for f in p.faults]
    tracking = [r for r in records if isinstance(r, ErrorTracking)]
    assert tracking[0].origin_op_name == "sk_decoder.layer.0.mlp_start_RmsNorm_5c1d_end_QuantMatmul_5b21"
    dumps = [r for r in records if isinstance(r, DumpException)]
    assert dumps and dumps[0].symbol_name.startswith("RopeCache_77")
    assert not (built.root / "sk_meta").exists()
    assert ctx.evidence.incidents == []


def test_fault_none_is_a_timeout_with_anchor_only(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, fault="none", handler="anchor_only", op_trace=False)
    assert _faults(ctx) == []
    inc = ctx.evidence.incidents
    assert len(inc) == 1 and inc[0].entry == built.entry and inc[0].dfx is None and inc[0].header is None
    run = json.loads((built.root / "run.json").read_text())
    assert run["failure_phase"] == "timeout" and run["exit"]["timeout"] is True


def test_fault_none_default_has_no_handler(tmp_path: Path) -> None:
    _built, ctx = _build(tmp_path, fault="none")
    assert _faults(ctx) == [] and ctx.evidence.incidents == []


def test_dfx_false_aborts_before_the_dfx_table(tmp_path: Path) -> None:
    _built, ctx = _build(tmp_path, dfx=False, dialect="D5", cores=[FaultCore(30, "AIV", pc=("child", 0))])
    inc = ctx.evidence.incidents[0]
    assert inc.dfx is None and inc.abort is not None
    text = _built.plog.read_text()
    assert "Failed to extract SK entry args or task queue" in text
    assert [f.kernel_name for f in _faults(ctx)] == [_built.entry]


# ------------------------------------------------------------------------------------------ COND, T4, scopes


def test_cond_unavailable_and_explicit(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        dialect="D4",
        cores=[
            FaultCore(3, "AIC", pc=("child", 1), state=("OP_LAUNCHED", 1), cond="unavailable"),
            FaultCore(30, "AIV", pc=("child", 0), state=("OP_LAUNCHED", 0), cond=0x7_0001_0102),
        ],
    )
    by_core = {c.core_id: c for c in ctx.evidence.incidents[0].cores}
    assert by_core[3].cond is not None and by_core[3].cond.unavailable
    assert by_core[30].cond is not None and by_core[30].cond.value == 0x7_0001_0102 == built.cond[30]


def test_shared_binary_gives_identical_dfx_ranges(tmp_path: Path) -> None:
    built, ctx = _build(tmp_path, cores=[FaultCore(3, "AIC", pc=("child", 5))])
    assert built.entries[1] == built.entries[5] and built.bin_files[1] == built.bin_files[5]
    nodes = ctx.evidence.incidents[0].dfx.nodes  # type: ignore[union-attr]
    assert (nodes[1].bin_hdl, nodes[1].aic_size) == (nodes[5].bin_hdl, nodes[5].aic_size)
    assert built.matches[3] is not None and built.matches[3][0] == 1  # first match wins (T4)
    assert len(list((built.model_dir / "bin_files").glob("QuantMatmul*"))) == 1


def test_extra_sks_models_unfusible_and_scope_reasons(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        extra_sks=[SkDef(9, "decoder.layer.1.mlp", [Kernel("Foo_1"), Kernel("Bar_2", "AIC_ONLY")])],
        extra_models=["48_2"],
        unfusible=[(Kernel("Gather_3", node_id=300), "UNSUPPORT_EVENT_TYPE")],
        scope_reasons=["ISOLATED_EVENT"],
        cores=[FaultCore(30, "AIV", pc=("child", 0))],
    )
    insts = list(all_instances(ctx.evidence))
    assert sorted((i.model_id, i.scope_id) for i in insts) == [
        ("48_1", 7),
        ("48_1", 9),
        ("48_2", 7),
        ("48_2", 9),
    ]
    assert built.extra_model_dirs == [built.model_dir.parent / "model_48_2"]
    inst = [i for i in insts if i.model_id == "48_1" and i.scope_id == 7][0]
    assert any(u.node.node_id == 300 for u in inst.fail_reasons)
    fail = (built.model_dir / "sk_fusion_fail_reasons.log").read_text()
    assert "UNSUPPORT_EVENT_TYPE" in fail and "ISOLATED_EVENT" in fail
    assert "ISOLATED_EVENT" in (built.model_dir / "sk_scope_split.log").read_text()


@pytest.mark.parametrize(
    ("reasons", "brk", "fail"),
    [
        (["DEADLOCK_DETECTED"], "DEADLOCK_DETECTED", None),
        (["ISOLATED_EVENT"], "UNFUSIBLE_NODE", "ISOLATED_EVENT"),
        ([], "NONE", None),
    ],
)
def test_scope_reasons_become_break_info(
    tmp_path: Path, reasons: list[str], brk: str, fail: str | None
) -> None:
    """A scope-level reason is ``breakReason=``; a node-level one is ``fusionFailReason=`` (§3.7, §3.8)."""
    _built, ctx = _build(tmp_path, scope_reasons=reasons, cores=[FaultCore(30, "AIV", pc=("child", 0))])
    inst = _instance(ctx)
    final = inst.scope_snapshots()[-1]
    assert final.break_info is not None
    assert final.break_info.break_reason == brk and final.break_info.fusion_fail_reason == fail
    fused = inst.fused_scope
    assert fused is not None
    assert (fused.break_info is not None) == bool(reasons)
    if reasons:
        assert fused.break_info is not None and fused.break_info.break_reason == brk


def test_same_statement_and_custom_statement(tmp_path: Path) -> None:
    children = [
        Kernel("A_1", statement="y = fused_pair(x)"),
        Kernel("B_2", same_statement_as=0),
        Kernel("C_3"),
    ]
    built, _ctx = _build(tmp_path, children=children, cores=[FaultCore(30, "AIV", pc=("child", 2))])
    assert built.source_lines[100] == built.source_lines[101] != built.source_lines[102]
    src = (built.root / "src" / "model.py").read_text().splitlines()
    assert src[built.source_lines[100] - 1].strip() == "y = fused_pair(x)"


def test_run_and_probe_overrides(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path,
        run={"rank": 5, "candidate": {"source_revision": "abc"}},
        probe={"ready": False},
        debug_options={"debug_sync_all": 1},
        cache_writers={100: [104]},
        cores=[FaultCore(30, "AIV", pc=("child", 0))],
    )
    run = json.loads((built.root / "run.json").read_text())
    assert run["rank"] == 5 and run["candidate"]["source_revision"] == "abc"
    assert run["candidate"]["marker_file"] == "src/model.py"  # deep merge keeps the rest
    assert run["candidate"]["super_kernel_debug_options"] == {"debug_sync_all": 1}
    assert run["cache_writers"] == {"100": [104]}
    assert ctx.probe is not None and ctx.run is not None and ctx.run.rank == 5
    assert json.loads((built.root / "env" / "check_environment.json").read_text())["ready"] is False


def test_build_is_deterministic_and_small(tmp_path: Path) -> None:
    spec = dict(op_trace=True, cores=[FaultCore(30, "AIV", pc=("child", 4), state=("OP_LAUNCHED", 4))])
    a, _ = _build(tmp_path, "a", **spec)
    b, _ = _build(tmp_path, "b", **spec)
    assert _files(a.root) == _files(b.root)
    assert sum(len(v) for v in _files(a.root).values()) < 250_000


def test_mix_kernel_entries_and_locate(tmp_path: Path) -> None:
    children = [Kernel("Mix_1", "MIX_AIC_1_2"), Kernel("Tail_2")]
    built, ctx = _build(
        tmp_path,
        children=children,
        cores=[FaultCore(3, "AIC", pc=("child", 0)), FaultCore(30, "AIV", pc=("child", 0))],
    )
    assert built.entry == "sk_entry_mix12"
    aic, aiv = built.entries[0]
    assert all(aic) and all(aiv) and set(aic).isdisjoint(aiv)
    assert built.matches == {3: (0, 3), 30: (0, 2)}
    me = ctx.evidence.model_evidence[0]
    assert me.images is not None
    for core in (3, 30):
        assert me.images.locate(built.current_pcs[core]).image.func_name == "Mix_1"  # type: ignore[union-attr]


def test_bad_specs_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build_scene(SceneSpec([Kernel("A", "WEIRD")]), tmp_path / "a")
    with pytest.raises(ValueError):
        build_scene(SceneSpec([Kernel("A"), Kernel("B", shares_binary_with=3)]), tmp_path / "b")
    with pytest.raises(ValueError):
        build_scene(SceneSpec([Kernel("A")], dialect="D9"), tmp_path / "c")
    with pytest.raises(ValueError):
        build_scene(SceneSpec([Kernel("A")], files={"nope"}), tmp_path / "d")


def test_task_debug_options_sync_after_and_counters(tmp_path: Path) -> None:
    children = [Kernel("A_1", debug_options=0x12, sync_after=0), Kernel("B_2", "AIC_ONLY")]
    built, ctx = _build(
        tmp_path,
        children=children,
        op_trace=True,
        counters={31: ("OP_FINISHED", 0), 3: ("SK_ENTRY_FINISHED", 1)},
        cores=[FaultCore(30, "AIV", pc=("child", 0), state=("OP_LAUNCHED", 0))],
    )
    inst = _instance(ctx)
    aiv = [(t.type, t.index, t.args, t.debug_options) for t in inst.queue("aiv")]
    assert aiv == [("FUNC", 0, aiv[0][2], 0x12), ("SYNC", 0, 0, 0)]
    assert [t.type for t in inst.queue("aic")] == ["FUNC"]
    counters = ctx.evidence.incidents[0].counters
    assert counters is not None
    got = {e.core: (e.index, e.op_state) for e in counters.entries if e.core in (3, 30, 31, 32)}
    assert got == {3: (1, 4), 30: (0, 2), 31: (0, 3), 32: (0, 0)}
    assert built.entry == "sk_entry_mix11_op_trace"


def test_cond_index_wrap_scene_t5(tmp_path: Path) -> None:
    """More than 256 tasks: COND's opIndex is the task index mod 256 and high bits leak into the scope (T5)."""
    kids = [Kernel(f"K{i}_{i:04x}") for i in range(270)]
    built, ctx = _build(
        tmp_path,
        children=kids,
        scope_id=4,
        cores=[FaultCore(30, "AIV", pc=("child", 260), state=("OP_LAUNCHED", 260))],
    )
    core = ctx.evidence.incidents[0].cores[0]
    assert core.node == 260 and core.cond is not None
    assert core.cond.decoded.op_index == 260 % 256
    assert core.cond.decoded.scope_id == 4 | (260 >> 8)  # leaked index bit (printed SkScopeId is 4)
    assert built.cond[30] == encode_cond(2, 260, 4, 0)


def test_duplicate_node_ids_within_one_sk_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build_scene(SceneSpec([Kernel("A", node_id=5), Kernel("B", node_id=5)]), tmp_path / "a")
    # across SKs / unfusible kernels a repeated id is allowed: contradiction scenes need it (E4)
    build_scene(
        SceneSpec([Kernel("A")], unfusible=[(Kernel("A", node_id=100), "NOT_IN_SCOPE")]), tmp_path / "b"
    )


def test_plog_level_error_drops_info_lines(tmp_path: Path) -> None:
    built, ctx = _build(
        tmp_path, plog_level="ERROR", dialect="D5", cores=[FaultCore(30, "AIV", pc=("child", 0))]
    )
    text = built.plog.read_text()
    assert "[INFO]" not in text and "[EVENT]" not in text
    inc = ctx.evidence.incidents[0]
    # the header (INFO) survives only in super_kernel.log (file logger, DEBUG and above), merged in
    assert inc.header is not None and inc.header.src.file.endswith("super_kernel.log")
    assert inc.dfx is not None and inc.dfx.src.file == str(built.plog)  # DFX rows are ERROR: in the plog
    assert inc.cores[0].current_pc == built.current_pcs[30]


def test_clocks_drive_every_timestamp(tmp_path: Path) -> None:
    from skdbg.parsers.plog_line import parse_plog_ts

    start, end = datetime(2026, 7, 1, 9, 0, 0), datetime(2026, 7, 1, 9, 10, 0)
    build_ts, fault_ts = datetime(2026, 7, 1, 9, 0, 20), datetime(2026, 7, 1, 9, 9, 0)
    built, _ctx = _build(
        tmp_path,
        run_start=start,
        run_end=end,
        build_ts=build_ts,
        fault_ts=fault_ts,
        cores=[FaultCore(30, "AIV", pc=("child", 0))],
    )
    run = json.loads((built.root / "run.json").read_text())
    assert (run["start"], run["end"]) == ("2026-07-01T09:00:00.000", "2026-07-01T09:10:00.000")
    assert built.plog.name == "plog-48213_20260701090000123.log"
    stamps = []
    for line in built.plog.read_text().splitlines():
        if line.startswith("["):
            ts_text = line.split("):", 1)[1].split(" ", 1)[0]
            stamps.append(parse_plog_ts(ts_text))
    assert stamps and all(start <= t <= end for t in stamps if t is not None)
    first_meta = (built.model_dir / "sk_node_detail.log").read_text().splitlines()[0]
    assert first_meta.startswith("2026-07-01 09:00:20.000 [48213:")
