"""Fragment fixpoint F (triage.md §4.2 rules a–e) on hand-made node lists and on built scenes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.scenebuilder.scene import Event, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.fragment import (
    BarrierGroup,
    FNode,
    FragmentInput,
    attached_kernel,
    compute_fragment,
    fragment_input,
    partners,
)
from skdbg.triage.skview import SkInstance, instances_of


def K(nid: int, pos: int, stream: int = 0, name: str = "Add", collective: bool = False) -> FNode:
    return FNode(nid, pos, "kernel", stream, func_name=name, collective=collective)


def E(nid: int, pos: int, et: str, eid: int, stream: int = 0) -> FNode:
    kind = {"MemoryWrite": "memory_write", "MemoryWait": "memory_wait"}.get(et, "event")
    return FNode(nid, pos, kind, stream, event_type=et, event_id=eid)


def test_single_child_without_edges_is_alone() -> None:
    nodes = (K(10, 0), K(11, 1), K(12, 2))
    f = compute_fragment(FragmentInput(nodes, 11))
    assert f.members == (11,)
    assert f.single and f.collateral == () and f.edges == ()


def test_wait_attaches_to_next_kernel_on_its_stream_notify_to_previous() -> None:
    nodes = (
        K(10, 0),
        E(11, 1, "EventNotify", 1),
        K(12, 2, stream=1),
        E(13, 3, "EventWait", 2, stream=1),
        K(14, 4, 1),
    )
    assert attached_kernel(nodes, nodes[1]) is nodes[0]  # notify → previous kernel on stream 0
    assert attached_kernel(nodes, nodes[3]) is nodes[4]  # wait → next kernel on stream 1
    # a wait does not attach to the next kernel of another stream
    assert (
        attached_kernel((E(1, 0, "EventWait", 1, stream=0), K(2, 1, stream=1)), E(1, 0, "EventWait", 1))
        is None
    )


def test_rule_a_and_b_pull_partner_and_statements_between() -> None:
    # source: notify (line 20), unrelated kernel 15 (line 21), wait (line 22), child (line 23)
    nodes = (
        K(10, 0),
        E(11, 1, "EventNotify", 5),
        K(15, 2, stream=0, name="Mul"),
        E(12, 3, "EventWait", 5, stream=1),
        K(13, 4, stream=1, name="Rope"),
        K(14, 5),
    )
    lines = {10: 19, 11: 20, 15: 21, 12: 22, 13: 23, 14: 24}
    f = compute_fragment(FragmentInput(nodes, 13, lines=lines))
    assert set(f.members) == {11, 15, 12, 13}
    assert f.collateral == (11, 15, 12)
    rules = [(e.kind, e.rule) for e in f.edges]
    assert ("event", "a") in rules and ("event", "b") in rules and ("source", "b") in rules
    # the kernel the partner notify attaches to (10) is NOT added (§4.2 b)
    assert 10 not in f.members


def test_collateral_takes_unplaced_nodes_inside_the_span_by_position() -> None:
    """A compiler-inserted event (no source line) placed between F's members in fused-node order
    cannot be put outside the cut, so the (b) collateral takes it along; one outside stays out."""
    nodes = (
        K(10, 0),
        E(11, 1, "EventNotify", 5),
        E(20, 2, "EventReset", 9),  # no line, inside
        E(12, 3, "EventWait", 5, stream=1),
        K(13, 4, stream=1, name="Rope"),
        E(21, 5, "EventReset", 8),  # no line, outside
        K(14, 6),
    )
    lines = {10: 19, 11: 20, 12: 22, 13: 23, 14: 24}
    f = compute_fragment(FragmentInput(nodes, 13, lines=lines))
    assert f.members == (11, 20, 12, 13)
    (src,) = [e for e in f.edges if e.kind == "source"]
    assert src.added == (20,) and "without a line by fused-node position 1..4" in src.detail


def test_partners_pair_within_family_only() -> None:
    nodes = (
        E(1, 0, "EventNotify", 3),
        E(2, 1, "MemoryWait", 3),
        E(3, 2, "EventWait", 3),
        E(4, 3, "EventReset", 3),
    )
    assert [p.node_id for p in partners(nodes, nodes[0])] == [3, 4]
    assert partners(nodes, nodes[1]) == []


def test_reset_joins_through_its_pair() -> None:
    nodes = (
        K(1, 0),
        E(2, 1, "EventNotify", 7),
        E(3, 2, "EventWait", 7, 1),
        K(4, 3, 1),
        E(5, 4, "EventReset", 7, 1),
        K(6, 5),
    )
    f = compute_fragment(FragmentInput(nodes, 4))
    assert {2, 3, 5} <= set(f.members)
    assert 1 not in f.members and 6 not in f.members


def test_barrier_group_moves_as_a_unit() -> None:
    nodes = (K(1, 0), K(2, 1), K(3, 2), K(4, 3))
    g = BarrierGroup(frozenset({2, 3}), "ALL_SYNC", "ALL_SYNC between 2 and 3")
    f = compute_fragment(FragmentInput(nodes, 3, barrier_groups=(g,)))
    assert f.members == (2, 3)
    assert [e.kind for e in f.edges] == ["barrier"]
    # a group the child does not touch changes nothing
    assert compute_fragment(FragmentInput(nodes, 1, barrier_groups=(g,))).members == (1,)


def test_collective_pulled_in_by_an_attached_partner_event() -> None:
    nodes = (
        K(1, 0, name="MatmulAllReduce_1", collective=True),
        E(2, 1, "EventNotify", 4),
        E(3, 2, "EventWait", 4, 1),
        K(4, 3, 1, name="Rope"),
        K(5, 4),
    )
    f = compute_fragment(FragmentInput(nodes, 4))
    assert 1 in f.members  # (d) the whole collective moves with its attached event
    assert any(e.kind == "collective" and e.rule == "d" for e in f.edges)


def test_cache_writer_pulls_cross_stream_readers_only() -> None:
    nodes = (K(1, 0), K(2, 1, 0, "ScatterKv"), K(3, 2, 1, "Attn"), K(4, 3, 0, "Same"))
    f = compute_fragment(FragmentInput(nodes, 2, cache_writers={2: (3, 4)}))
    assert set(f.members) == {2, 3}  # 4 reads on the same stream: ordered by the stream itself
    # the reader as child pulls its writer
    g = compute_fragment(FragmentInput(nodes, 3, cache_writers={2: (3,)}))
    assert set(g.members) == {2, 3}
    assert [e.kind for e in g.edges] == ["cache"]


def test_cache_reader_not_pulled_when_an_event_pair_in_f_orders_it() -> None:
    """Writer 1 (stream 1) publishes eventId 5, waited on stream 0 right before reader 4: the pair
    joins F by (a)/(b) and keeps writer → reader ordering, so (e) adds nothing and says why."""
    nodes = (
        K(1, 0, 1, "ScatterKv"),
        E(2, 1, "EventNotify", 5, stream=1),
        E(3, 2, "EventWait", 5, stream=0),
        K(4, 3, 0, "Attn"),
        K(5, 4, 0, "OProj"),
    )
    f = compute_fragment(FragmentInput(nodes, 1, cache_writers={1: (4,)}))
    assert f.members == (1, 2, 3)
    (cache,) = [e for e in f.edges if e.kind == "cache"]
    assert (cache.rule, cache.added, cache.nodes) == ("e", (), (1, 2, 3, 4))
    assert "kept by the event pair(s) EventNotify(eventId=5) nodeId 2" in cache.detail


def test_cache_rule_is_evaluated_one_pair_at_a_time_at_the_fixpoint() -> None:
    """Writer 1 (stream 1) has readers 5 and 6 on stream 0 and no event of its own. Reader 5 must
    join (only SK-internal ordering); what it brings along — its wait 4, the notify 3 after kernel 2
    and kernel 2 between them — then orders the writer before reader 6 (stream order after 5), so
    reader 6 stays out. Pulling both at once would exclude 6 needlessly."""
    nodes = (
        K(1, 0, 1, "ScatterKv"),
        K(2, 1, 1, "Cast"),
        E(3, 2, "EventNotify", 7, stream=1),
        E(4, 3, "EventWait", 7, stream=0),
        K(5, 4, 0, "Attn"),
        K(6, 5, 0, "Attn2"),
        K(8, 6, 0, "OProj"),
    )
    f = compute_fragment(FragmentInput(nodes, 1, cache_writers={1: (5, 6)}))
    assert f.members == (1, 2, 3, 4, 5)
    lost, kept = [e for e in f.edges if e.kind == "cache"]
    assert lost.added == (5,) and "SK-internal" in lost.detail
    assert kept.added == () and 6 in kept.nodes and "kept by the event pair(s)" in kept.detail
    # the answer does not depend on the order run.json lists the readers in
    again = compute_fragment(FragmentInput(nodes, 1, cache_writers={1: (6, 5)}))
    assert again.members == (1, 2, 3, 4, 5)


def test_cache_pair_both_in_f_is_noted_without_adding() -> None:
    """Both writer and reader seeded (an edited excluded set): the edge is met, nothing is added."""
    nodes = (K(1, 0), K(2, 1, 0, "ScatterKv"), K(3, 2, 1, "Attn"), K(4, 3))
    f = compute_fragment(FragmentInput(nodes, 2, cache_writers={2: (3,)}), also=(3,))
    assert f.members == (2, 3)
    (cache,) = f.edges
    assert cache.added == () and "both leave the SK with the fragment" in cache.detail


# ------------------------------------------------------------------------------ closure property


@st.composite
def _graphs(draw: st.DrawFn) -> tuple[tuple[FNode, ...], int]:
    n = draw(st.integers(2, 12))
    nodes: list[FNode] = []
    for i in range(n):
        stream = draw(st.integers(0, 1))
        if draw(st.booleans()):
            nodes.append(K(100 + i, i, stream, collective=draw(st.integers(0, 5)) == 0))
        else:
            et = draw(
                st.sampled_from(["EventNotify", "EventWait", "EventReset", "MemoryWrite", "MemoryWait"])
            )
            nodes.append(E(100 + i, i, et, draw(st.integers(0, 2)), stream))
    kernels = [x for x in nodes if x.is_kernel]
    if not kernels:
        nodes[0] = K(100, 0)
        kernels = [nodes[0]]
    child = draw(st.sampled_from(kernels)).node_id
    return tuple(nodes), child


@settings(max_examples=150, deadline=None)
@given(_graphs())
def test_fragment_is_closed_under_rules_a_b_d(graph: tuple[tuple[FNode, ...], int]) -> None:
    nodes, child = graph
    f = compute_fragment(FragmentInput(nodes, child))
    members = set(f.members)
    assert child in members
    for n in nodes:
        if n.is_event:
            k = attached_kernel(nodes, n)
            if k is not None and k.node_id in members:
                assert n.node_id in members  # (a)
            if n.node_id in members:
                assert all(p.node_id in members for p in partners(nodes, n))  # (b)
                if k is not None and k.collective:
                    assert k.node_id in members  # (d)
    # the fixpoint is stable: recomputing from F's own closure adds nothing new
    again = compute_fragment(FragmentInput(nodes, child))
    assert again.members == f.members


# ------------------------------------------------------------------------------ from built scenes


def _instance(root: Path) -> SkInstance:
    ctx = open_context(root)
    return instances_of(ctx.evidence.model_evidence[0])[0]


def test_all_sync_task_makes_a_barrier_group(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=[
            Kernel("RmsNorm_5c1d"),
            Kernel("Add_11aa", sync_after=0),
            Kernel("Cast_22bb"),
            Kernel("Mul_33cc"),
        ]
    )
    b = build_scene(spec, tmp_path / "s")
    fin = fragment_input(_instance(b.root), b.node_ids[1])
    assert [sorted(g.members) for g in fin.barrier_groups] == [[b.node_ids[1], b.node_ids[2]]]
    assert fin.barrier_groups[0].src is not None  # cites the SYNC task
    f = compute_fragment(fin)
    assert f.members == (b.node_ids[1], b.node_ids[2])


def test_core_sync_kinds_other_than_all_sync_are_not_barrier_groups(tmp_path: Path) -> None:
    spec = SceneSpec(children=[Kernel("RmsNorm_5c1d"), Kernel("Add_11aa", sync_after=3), Kernel("Cast_22bb")])
    b = build_scene(spec, tmp_path / "s")
    assert fragment_input(_instance(b.root), b.node_ids[1]).barrier_groups == ()


def test_dcci_debug_bits_are_collected(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=[Kernel("RmsNorm_5c1d"), Kernel("ScatterKv_11aa", debug_options=0x4), Kernel("Cast_22bb")]
    )
    b = build_scene(spec, tmp_path / "s")
    fin = fragment_input(_instance(b.root), b.node_ids[1])
    assert set(fin.dcci) == {b.node_ids[1]}


def test_event_nodes_from_a_built_scene(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=[
            Kernel("RmsNorm_5c1d"),
            Event("EventNotify", event_id=1, stream=0),
            Event("EventWait", event_id=1, stream=1),
            Kernel("RopeCache_77", stream=1),
            Kernel("Add_99"),
        ]
    )
    b = build_scene(spec, tmp_path / "s")
    fin = fragment_input(_instance(b.root), b.node_ids[3], lines=b.source_lines)
    f = compute_fragment(fin)
    assert f.members == (b.node_ids[1], b.node_ids[2], b.node_ids[3])


def test_debug_sync_all_barrier_is_set_aside(tmp_path: Path) -> None:
    spec = SceneSpec(
        children=[
            Kernel("RmsNorm_5c1d"),
            Kernel("Add_11aa", sync_after=0, debug_options=0x2),
            Kernel("Cast_22bb"),
        ]
    )
    b = build_scene(spec, tmp_path / "s")
    fin = fragment_input(_instance(b.root), b.node_ids[1])
    assert fin.barrier_groups == () and len(fin.ignored_barriers) == 1
    assert compute_fragment(fin).members == (b.node_ids[1],)


@settings(max_examples=200, deadline=None)
@given(
    layout=st.lists(
        st.tuples(
            st.sampled_from(
                ["kernel", "EventNotify", "EventWait", "EventReset", "MemoryWrite", "MemoryWait"]
            ),
            st.integers(0, 2),
        ),
        max_size=14,
    )
)
def test_one_pass_attachment_equals_the_rule_per_event(layout: list[tuple[str, int]]) -> None:
    """The per-stream one-pass attachment map used by the fixpoint equals §4.2(a) applied per event."""
    from skdbg.triage.fragment import _attachments

    nodes = tuple(
        K(100 + pos, pos, stream) if what == "kernel" else E(100 + pos, pos, what, 1, stream)
        for pos, (what, stream) in enumerate(layout)
    )
    fast = _attachments(nodes)
    for ev in nodes:
        if ev.is_event:
            assert fast.get(ev.node_id) is attached_kernel(nodes, ev)
