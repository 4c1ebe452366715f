"""Scope planner: the split pipeline on hand-made DAGs, the bundled scenes and the upstream fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.codegen.fusion.plan import plan_scopes, wait_partners
from skdbg.codegen.fusion.plan_model import (
    PLANNER_BREAK_REASONS,
    BreakInfo,
    OpDag,
    OpNode,
    PlanError,
)
from skdbg.codegen.fusion.plan_scene import compare_plan, dag_from_model, models_of_scene, observed_scopes
from skdbg.parsers.sk_reasons import BREAK_REASONS, FUSION_FAIL_REASONS

ROOT = Path(__file__).resolve().parents[3]
SCENES = sorted(p for p in (ROOT / "examples" / "scenes").iterdir() if p.is_dir())
UPSTREAM = ROOT / "tests" / "data" / "upstream" / "autotune-pipeline"


def k(i: int, s: int = 0, **kw: object) -> OpNode:
    return OpNode(i, s, "KERNEL", func_name=f"K{i}", kernel_type="AIV_ONLY", num_blocks=8, vec_num=8, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("scene", SCENES, ids=lambda p: p.name)
def test_reproduces_bundled_scene_splits(scene: Path) -> None:
    for model in models_of_scene(scene):
        plan = plan_scopes(dag_from_model(model))
        observed = observed_scopes(model)
        assert observed, "every bundled scene has fused SKs"
        assert compare_plan(plan, observed) == []


def test_reproduces_upstream_autotune_fixture() -> None:
    (model,) = models_of_scene(UPSTREAM)
    plan = plan_scopes(dag_from_model(model))
    assert [s.node_ids for s in plan.scopes] == [(10, 11)]
    assert compare_plan(plan, observed_scopes(model)) == []


def test_compare_reports_a_different_split() -> None:
    scene = ROOT / "examples" / "scenes" / "high-single-stream"
    (model,) = models_of_scene(scene)
    dag = dag_from_model(model).with_changes({102: {"fail_reason": "IN_UNFUSIBLE_SCOPE"}})
    problems = compare_plan(plan_scopes(dag), observed_scopes(model))
    assert any("predicted 2 SK(s)" in p for p in problems)
    assert any("predicted nodes [100, 101]" in p for p in problems)


def test_unfusible_node_breaks_with_trigger() -> None:
    dag = OpDag((k(1), k(2), k(3, fail_reason="OP_UNSUPPORT"), k(4)))
    plan = plan_scopes(dag)
    assert [s.node_ids for s in plan.scopes] == [(1, 2), (4,)]
    brk = plan.scopes[0].break_info
    assert (brk.reason, brk.trigger_node, brk.trigger_stream) == ("UNFUSIBLE_NODE", 3, 0)
    assert brk.format().startswith("breakReason=UNFUSIBLE_NODE, triggerNode=3, triggerStream=0")
    assert plan.unfused == {3: "OP_UNSUPPORT"}


def test_named_scope_boundary_is_not_a_break() -> None:
    dag = OpDag(
        (k(1, scope_flags="01"), k(2, scope_flags="01"), k(3, scope_flags="10"), k(4, scope_flags="0"))
    )
    plan = plan_scopes(dag)
    assert [s.node_ids for s in plan.scopes] == [(1, 2), (3,)]
    assert all(s.break_info.reason == "NONE" for s in plan.scopes)
    assert plan.unfused == {4: "NOT_IN_SCOPE"}


def test_wait_suspends_until_notify_is_taken() -> None:
    # stream 1 starts with a wait whose notify (3) is later on stream 0: the wait must follow it
    dag = OpDag((OpNode(0, 1, "WAIT", event_id=5), k(1), k(2), OpNode(3, 0, "NOTIFY", event_id=5), k(4, 1)))
    (scope,) = plan_scopes(dag).scopes
    assert scope.node_ids.index(3) < scope.node_ids.index(0)
    assert wait_partners(dag) == {0: 3}


def test_wait_behind_unfusible_notify_stream_goes_to_next_scope() -> None:
    dag = OpDag(
        (
            k(1),
            k(2, fail_reason="OP_UNSUPPORT"),
            OpNode(3, 0, "NOTIFY", event_id=1),
            k(4, 0),
            OpNode(5, 1, "WAIT", event_id=1),
            k(6, 1),
        )
    )
    plan = plan_scopes(dag)
    assert [s.node_ids for s in plan.scopes] == [(1,), (3, 4, 5, 6)]
    assert plan.scopes[0].break_info.trigger_node == 2


def test_schemode_core_drop_and_rise() -> None:
    def v(i: int, vec: int, sche: bool = False) -> OpNode:
        return OpNode(i, 0, "KERNEL", func_name=f"K{i}", kernel_type="AIV_ONLY", vec_num=vec, sche_mode=sche)

    dag = OpDag((v(1, 48), v(2, 8, True), v(3, 48)))
    plan = plan_scopes(dag)
    assert [s.node_ids for s in plan.scopes] == [(1,), (2,), (3,)]
    drop, rise = plan.scopes[0].break_info, plan.scopes[1].break_info
    assert drop.reason == rise.reason == "SYNCALL_OP_DROP"
    assert drop.detail == "ScheMode core drop at node 2: merged(0,48) -> cur(0,8)"
    assert rise.detail == "ScheMode core rise at node 3: merged(0,8) -> cur(0,48)"
    assert rise.sync_all_nodes == (2,)


def test_event_only_stream_is_isolated() -> None:
    dag = OpDag((k(1), OpNode(2, 0, "NOTIFY", event_id=1), OpNode(3, 1, "WAIT", event_id=1), k(4)))
    plan = plan_scopes(dag)
    assert [s.node_ids for s in plan.scopes] == [(1, 2, 4)]
    assert plan.unfused == {3: "ISOLATED_EVENT"}


def test_per_op_max_core_one_kernel_per_scope() -> None:
    plan = plan_scopes(OpDag((k(1), OpNode(2, 0, "NOTIFY", event_id=1), k(3), k(4))), per_op_max_core=True)
    assert [s.node_ids for s in plan.scopes] == [(1,), (2, 3), (4,)]  # events go with the next kernel
    assert plan.scopes[0].break_info.reason == "DEBUG_PER_OP_MAX_CORE"


def test_cyclic_waits_are_a_plan_error() -> None:
    dag = OpDag(
        (
            OpNode(1, 0, "WAIT", event_id=2),
            OpNode(2, 0, "NOTIFY", event_id=1),
            OpNode(3, 1, "WAIT", event_id=1),
            OpNode(4, 1, "NOTIFY", event_id=2),
        )
    )
    with pytest.raises(PlanError, match="deadlock"):
        plan_scopes(dag)


def test_bad_dag_is_rejected() -> None:
    with pytest.raises(PlanError, match="duplicate"):
        OpDag((k(1), k(1)))
    with pytest.raises(PlanError, match="without an event id"):
        OpDag((OpNode(1, 0, "WAIT"),))


def test_reason_names_round_trip_with_the_parsers() -> None:
    """Item 67: the names the planner emits are exactly those the parsers recognise."""
    assert PLANNER_BREAK_REASONS == BREAK_REASONS
    for reason in ("ISOLATED_EVENT", "NOT_IN_SCOPE", "IN_UNFUSIBLE_SCOPE"):
        assert reason in FUSION_FAIL_REASONS
    from skdbg.parsers.common import Source
    from skdbg.parsers.scope_split import parse_break_info

    text = BreakInfo("SYNCALL_OP_DROP", 7, 1, "x", (7, 9)).format()
    parsed = parse_break_info(text, Source("t", 1))
    assert (parsed.break_reason, parsed.trigger_node, parsed.trigger_stream, parsed.sync_all_nodes) == (
        "SYNCALL_OP_DROP",
        7,
        1,
        (7, 9),
    )


@st.composite
def dags(draw: st.DrawFn) -> OpDag:
    """Acyclic multi-stream DAGs: a program order where every wait follows its notify."""
    n_streams = draw(st.integers(1, 3))
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, n_streams - 1), st.sampled_from(["k", "k", "u", "ev", "x"])),
            min_size=1,
            max_size=25,
        )
    )
    nodes: list[OpNode] = []
    event = 0
    for i, (s, what) in enumerate(steps):
        nid = len(nodes)
        if what == "ev":
            other = draw(st.integers(0, n_streams - 1))
            nodes.append(OpNode(nid, s, "NOTIFY", event_id=event))
            nodes.append(OpNode(nid + 1, other, "WAIT", event_id=event))
            event += 1
        else:
            nodes.append(
                OpNode(
                    nid,
                    s,
                    "KERNEL",
                    func_name=f"K{i}",
                    kernel_type="AIV_ONLY",
                    vec_num=draw(st.integers(1, 4)),
                    sche_mode=draw(st.booleans()),
                    fail_reason="OP_UNSUPPORT" if what == "u" else None,
                    scope_flags="0" if what == "x" else "1",
                )
            )
    return OpDag(tuple(nodes))


@settings(max_examples=150, deadline=None)
@given(dags())
def test_planned_scopes_never_cycle_or_break_event_pairs(dag: OpDag) -> None:
    plan = plan_scopes(dag)
    where = plan.scope_of()
    pos = {nid: (i, s.node_ids.index(nid)) for i, s in enumerate(plan.scopes) for nid in s.node_ids}
    # every node is fused once or unfused, never both
    assert set(where).isdisjoint(plan.unfused) and set(where) | set(plan.unfused) == {
        n.node_id for n in dag.nodes
    }
    # stream order is kept: along each stream the (scope, position) of fused nodes increases -> no cycle
    for seq in dag.streams().values():
        fused = [pos[n.node_id] for n in seq if n.node_id in pos]
        assert fused == sorted(fused)
    # an event pair is never inverted: the notify is in an earlier scope, or earlier in the same scope
    for wait, notify in wait_partners(dag).items():
        if wait in pos and notify in pos:
            assert pos[notify] < pos[wait]


def test_graph_origin_json_is_a_planner_source(tmp_path: Path) -> None:
    """Without sk_node_detail.log the planner reads sk_graph_origin.json (+ fail reasons) and still
    reproduces the event-bound scene's SK; scope marker kernels are not graph nodes for it."""
    import shutil

    from skdbg.scenebuilder.jsonart import GraphNodeSpec, kernel_params, write_graph_json

    src = ROOT / "examples" / "scenes" / "event-bound-split" / "sk_meta" / "48213" / "model_48_1"
    model_dir = tmp_path / "sk_meta" / "48213" / "model_48_1"
    model_dir.mkdir(parents=True)
    for name in ("sk_fused_nodes.log", "sk_fusion_fail_reasons.log", "sk_scope_split.log"):
        shutil.copy(src / name, model_dir / name)
    scope = "decoder.layer.0.mlp"

    def kern(
        nid: int, name: str, kt: str = "AIV_ONLY", scoped: bool = True, stream: int = 0
    ) -> GraphNodeSpec:
        params = kernel_params(name, func_handle=nid, bin_handle=nid, num_blocks=48, kernel_type=kt)
        return GraphNodeSpec(nid, params=params, scope_name=scope if scoped else None, stream_id=stream)

    def ev(nid: int, node_type: str, stream: int) -> GraphNodeSpec:
        kind = "eventRecordParams" if node_type == "NOTIFY" else "eventWaitParams"
        return GraphNodeSpec(
            nid,
            node_type=node_type,
            params_kind=kind,
            params={"eventId": "0x1", "eventFlag": 0},
            scope_name=scope,
            stream_id=stream,
        )

    marker = GraphNodeSpec(
        98,
        params=kernel_params("sk_scope_kernel_begin", func_handle=1, bin_handle=1),
        scope_name=scope,
        is_scope_begin=True,
    )
    s0 = [
        marker,
        kern(99, "static_kernel_RmsNorm_5c1d07aa", scoped=False),
        kern(100, "RmsNorm_5c1d07aa"),
        kern(101, "QuantBatchMatmulV3_8ab2c4f1", "AIC_ONLY"),
        ev(102, "NOTIFY", 0),
        kern(105, "FlashAttentionScore_3b8e"),
        kern(106, "Cast_9f3e21"),
        kern(107, "static_kernel_MatMulV3_e07b3c19", "AIC_ONLY", scoped=False),
    ]
    s1 = [ev(103, "WAIT", 1), kern(104, "KvRopeCache_77a0", stream=1)]
    write_graph_json(model_dir / "sk_graph_origin.json", "48_1", [s0, s1])
    (model,) = models_of_scene(tmp_path)
    dag = dag_from_model(model)
    assert 98 not in dag.by_id() and dag.by_id()[101].cube_num == 48
    plan = plan_scopes(dag)
    assert compare_plan(plan, observed_scopes(model)) == []
    assert plan.scopes[0].scope_id == 7 and plan.unfused == {99: "NOT_IN_SCOPE", 107: "NOT_IN_SCOPE"}
