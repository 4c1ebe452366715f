"""The scope graph's data: event pairing from hand-built nodes, and the bundled event-bound-split scene
against its description in examples/scenes/README.md (expected values written from that text)."""

from __future__ import annotations

from pathlib import Path

from skdbg.parsers.common import Source
from skdbg.parsers.node_format import Node
from skdbg.pictures.export import pictures_of
from skdbg.pictures.graph import row_order
from skdbg.pictures.scope import event_edges
from skdbg.triage.context import check_inputs, open_context
from skdbg.triage.engine import analyze_staged
from skdbg.triage.skview import SkNode

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
SRC = Source("sk_fused_nodes.log", 1)


def node(
    pos: int, nid: int, kind: str, stream: int, event_type: str | None = None, event_id: int | None = None
) -> SkNode:
    n = Node(SRC, kind, nid, stream, None, None, "current", "", event_type=event_type, event_id=event_id)
    return SkNode(pos, n, SRC)


def test_event_edges_pair_notify_to_wait_within_a_family() -> None:
    nodes = [
        node(0, 10, "kernel", 0),
        node(1, 11, "event", 0, "EventNotify", 7),
        node(2, 12, "event", 1, "EventWait", 7),
        node(3, 13, "memory_write", 0, None, 7),  # same id, other family: pairs only with 14
        node(4, 14, "memory_wait", 1, None, 7),
        node(5, 15, "event", 1, "EventWait", 8),  # no partner: no edge
        node(6, 16, "event", 0, "EventReset", 7),  # a reset is no notify
    ]
    got = [(e.src, e.dst, e.kind) for e in event_edges(nodes)]
    assert got == [("11", "12", "event"), ("13", "14", "event")]


def test_event_bound_split_scope_graph_matches_the_scene_description() -> None:
    ctx = open_context(SCENES / "event-bound-split")
    check_inputs(ctx)
    loc, analysis = analyze_staged(ctx)
    pics = pictures_of(ctx, loc.instance, analysis)
    g = pics.scope_graph
    assert g is not None
    assert g.lanes == ("stream 0", "stream 1")
    by_id = {n.id: n for n in g.nodes}
    assert sorted(by_id) == [str(i) for i in range(100, 107)]
    # suspect KvRopeCache_77a0 node 104 on stream 1; collateral 102, 103, 105; 100, 101, 106 stay
    assert (by_id["104"].lane, by_id["104"].mark, by_id["104"].style) == ("stream 1", "◆", "suspect")
    assert "KvRopeCache_77a0" in by_id["104"].label
    assert {i for i, n in by_id.items() if n.style == "collateral"} == {"102", "103", "105"}
    assert {i for i, n in by_id.items() if n.mark == ""} == {"100", "101", "106"}
    assert [(e.src, e.dst, e.kind) for e in g.edges] == [("102", "103", "event")]
    # the notify precedes its wait, and each stream keeps its fused-node order
    order = row_order(g)
    assert order.index("102") < order.index("103") < order.index("104")
    assert [i for i in order if by_id[i].lane == "stream 0"] == ["100", "101", "102", "105", "106"]
    assert set(g.focus) == {"102", "103", "104", "105"}
