"""The generic lane graph: row order, networkx input, and the drawn arcs (hand-built graphs)."""

from __future__ import annotations

import io

import networkx as nx
from rich.console import Console

from skdbg.pictures.graph import GraphEdge, GraphNode, GraphPicture, LegendItem, from_digraph, row_order
from skdbg.pictures.render import GraphView


def plain(view: GraphView, width: int = 80) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(view)
    out = console.file
    assert isinstance(out, io.StringIO)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def pic(nodes: list[GraphNode], edges: list[GraphEdge] = (), **kw: object) -> GraphPicture:  # type: ignore[assignment]
    lanes = tuple(dict.fromkeys(n.lane for n in nodes))
    return GraphPicture("t", lanes, tuple(nodes), tuple(edges), **kw)  # type: ignore[arg-type]


def test_rows_follow_edges_and_keep_each_lane_in_order() -> None:
    # lane a: a1 (order 0), a2 (order 3); lane b: b1 (order 1), b2 (order 2); edge a2 -> b1 forces a2 up
    nodes = [
        GraphNode("a1", "a", "a1", order=0),
        GraphNode("b1", "b", "b1", order=1),
        GraphNode("b2", "b", "b2", order=2),
        GraphNode("a2", "a", "a2", order=3),
    ]
    assert row_order(pic(nodes)) == ["a1", "b1", "b2", "a2"]
    assert row_order(pic(nodes, [GraphEdge("a2", "b1", "event")])) == ["a1", "a2", "b1", "b2"]


def test_a_cycle_falls_back_to_the_given_order() -> None:
    nodes = [GraphNode("x", "core 1", "x", order=0), GraphNode("y", "core 2", "y", order=1)]
    edges = [GraphEdge("x", "y", "waits-on"), GraphEdge("y", "x", "waits-on")]
    assert row_order(pic(nodes, edges)) == ["x", "y"]


def test_from_digraph_reads_node_and_edge_attributes() -> None:
    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_node("core 5", lane="AIC", label="core 5 SYNC wait", style="blocked", mark="‖")
    g.add_node("core 30", lane="AIV")
    g.add_edge("core 5", "core 30", kind="waits-on", style="cycle")
    p = from_digraph(
        g, title="wait-for", legend=[LegendItem("‖", "blocked", "blocked core")], focus=["core 5"]
    )
    assert p.lanes == ("AIC", "AIV")
    assert [(n.id, n.lane, n.label, n.style, n.mark, n.order) for n in p.nodes] == [
        ("core 5", "AIC", "core 5 SYNC wait", "blocked", "‖", 0),
        ("core 30", "AIV", "core 30", "", "", 1),
    ]
    assert [(e.src, e.dst, e.kind, e.style) for e in p.edges] == [("core 5", "core 30", "waits-on", "cycle")]
    assert p.focus == ("core 5",)


def test_arc_runs_in_the_gutter_from_source_to_target() -> None:
    nodes = [
        GraphNode("1", "s0", "n1", order=0),
        GraphNode("2", "s0", "n2", order=1),
        GraphNode("3", "s1", "n3", order=2),
    ]
    lines = plain(GraphView(pic(nodes, [GraphEdge("1", "3", "event")])))
    # lane widths: label + 1 + 2 = 5 each; then a connector column, then one gutter track
    assert lines[1:5] == [
        "s0   s1    edges",
        "n1─────────┐",
        "n2   ┊     │",
        "┊    n3◀───┘",
    ]


def test_overlapping_arcs_take_separate_tracks_and_cross() -> None:
    nodes = [GraphNode(str(i), "s", f"n{i}", order=i) for i in range(4)]
    edges = [GraphEdge("0", "2", "event"), GraphEdge("1", "3", "barrier")]
    lines = plain(GraphView(pic(nodes, edges)))
    assert lines[2:6] == [
        "n0────┐",
        "n1────┼┐",
        "n2◀───┘│",
        "n3◀────┘",
    ]


def test_tall_graph_is_windowed_around_the_focus_and_says_so() -> None:
    nodes = [GraphNode(str(i), "s", f"n{i}", order=i) for i in range(100)]
    lines = plain(GraphView(pic(nodes, focus=("50",)), max_rows=10))
    assert "… 45 rows above not shown" in lines
    assert "n45" in lines and "n54" in lines and "n44" not in lines and "n55" not in lines
    assert "… 45 rows below not shown" in lines
    assert any("rows 46–55 of 100" in line for line in lines)
