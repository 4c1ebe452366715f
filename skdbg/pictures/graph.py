"""A generic lane graph: nodes in lanes, typed edges, styles — the input of the graph renderable.

Why generic: the scope graph (children in stream lanes, event/barrier/collective edges) and the
wait-for graph of a hang (cores and tasks waiting on each other) are the same picture — boxes in
lanes joined by arcs. Anything that can say "this node sits in that lane, with this label and this
style, and waits on / pairs with that node" can be drawn by :mod:`skdbg.pictures.render`.
:func:`from_digraph` takes a networkx ``DiGraph`` whose nodes carry ``lane``/``label``/``style`` and
whose edges carry ``kind``/``style`` attributes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # networkx loads when a graph is ordered, not when the TUI starts
    import networkx as nx

#: Rich styles by name, so pictures carry intent ("cut") and the renderer owns the colours
STYLES: dict[str, str] = {
    "": "",
    "plain": "",
    "dim": "dim",
    "kernel": "bold",
    "event": "cyan",
    "suspect": "bold white on red",
    "cut": "bold red",
    "collateral": "bold yellow",
    "collective": "magenta",
    "barrier": "blue",
    "finished": "green",
    "blocked": "bold yellow",
    "cycle": "bold red",
}


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One box. ``id`` is unique in the graph; ``order`` sorts nodes when the edges leave a choice
    (e.g. SK position); ``mark`` is a one-character prefix (◆ suspect, ✂ cut) readable without colour."""

    id: str
    lane: str
    label: str
    style: str = ""
    order: int = 0
    mark: str = ""


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One arc from ``src`` to ``dst``. ``kind`` names it in the legend (event, barrier, waits-on…)."""

    src: str
    dst: str
    kind: str
    style: str = ""
    label: str = ""


@dataclass(frozen=True, slots=True)
class LegendItem:
    """A legend entry: ``sample`` drawn in ``style``, then what it means."""

    sample: str
    style: str
    text: str


@dataclass(frozen=True, slots=True)
class GraphPicture:
    """Everything the graph renderable draws. ``lanes`` fixes the lane order (left to right);
    ``focus`` names the nodes a window must keep in view when the graph is too tall."""

    title: str
    lanes: tuple[str, ...]
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...] = ()
    legend: tuple[LegendItem, ...] = ()
    notes: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()

    def node_map(self) -> dict[str, GraphNode]:
        return {n.id: n for n in self.nodes}


def row_order(pic: GraphPicture) -> list[str]:
    """Node ids top to bottom: a topological order of (lane sequence + edges) when one exists, ties
    broken by ``order``; otherwise (a cycle, e.g. a deadlock) plain ``order``. The lane sequence edge
    keeps each lane's nodes in their given order, so a picture never reorders a stream."""
    nodes = sorted(pic.nodes, key=lambda n: (n.order, n.id))
    key = {n.id: (n.order, n.id) for n in nodes}
    if all(key[e.src] < key[e.dst] for e in pic.edges if e.src in key and e.dst in key and e.src != e.dst):
        # every edge already points down the given order: that order is the lexicographic topological one
        return [n.id for n in nodes]
    import networkx as nx

    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_nodes_from(key)
    last: dict[str, str] = {}
    for n in nodes:
        prev = last.get(n.lane)
        if prev is not None:
            g.add_edge(prev, n.id)
        last[n.lane] = n.id
    for e in pic.edges:
        if e.src in key and e.dst in key and e.src != e.dst:
            g.add_edge(e.src, e.dst)
    try:
        return list(nx.lexicographical_topological_sort(g, key=lambda i: key[i]))
    except nx.NetworkXUnfeasible:
        return [n.id for n in nodes]


#: a graph's node type (networkx graphs are invariant in it: a DiGraph[str] is no DiGraph[Hashable])
N = TypeVar("N", bound=Hashable)


def from_digraph(
    g: nx.DiGraph[N],
    *,
    title: str,
    legend: Iterable[LegendItem] = (),
    notes: Iterable[str] = (),
    focus: Iterable[N] = (),
) -> GraphPicture:
    """A :class:`GraphPicture` from a networkx graph. Node attributes: ``lane`` (default "·"),
    ``label`` (default ``str(node)``), ``style``, ``mark``, ``order`` (default insertion order);
    edge attributes: ``kind`` (default "edge"), ``style``, ``label``. Lanes keep first-seen order."""
    nodes: list[GraphNode] = []
    lanes: dict[str, None] = {}
    for i, n in enumerate(g.nodes):
        data = g.nodes[n]
        lane = str(data.get("lane", "·"))
        lanes.setdefault(lane, None)
        nodes.append(
            GraphNode(
                id=str(n),
                lane=lane,
                label=str(data.get("label", n)),
                style=str(data.get("style", "")),
                order=int(data.get("order", i)),
                mark=str(data.get("mark", "")),
            )
        )
    edges = tuple(
        GraphEdge(
            str(u),
            str(v),
            str(d.get("kind", "edge")),
            str(d.get("style", "")),
            str(d.get("label", "")),
        )
        for u, v, d in g.edges(data=True)
    )
    return GraphPicture(
        title=title,
        lanes=tuple(lanes),
        nodes=tuple(nodes),
        edges=edges,
        legend=tuple(legend),
        notes=tuple(notes),
        focus=tuple(str(f) for f in focus),
    )


__all__ = ["STYLES", "GraphEdge", "GraphNode", "GraphPicture", "LegendItem", "from_digraph", "row_order"]
