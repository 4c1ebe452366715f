"""The scope graph of the faulting SK as a :class:`~skdbg.pictures.graph.GraphPicture`.

Why: the Scope screen's tables list children and edges separately; the picture puts the children in
their stream lanes in SK (fused-node) order and joins them with the edges that decide a cut — event
pairs (same eventId, notify → wait), full-core barrier groups and collectives — with the proposal's
excluded children and their collateral highlighted, so "why does this cut drag that node along" is
one look. Built from the same records the analysis JSON has (fused nodes, the proposal, the §4.2
fragment the proposal stage computed).
"""

from __future__ import annotations

from collections.abc import Iterable

from skdbg.pictures.graph import GraphEdge, GraphNode, GraphPicture, LegendItem
from skdbg.triage.fragment import Fragment, barrier_groups_of
from skdbg.triage.model import Proposal
from skdbg.triage.skview import SkInstance, SkNode

LEGEND = (
    LegendItem("◆", "suspect", "suspect child (the verdict's)"),
    LegendItem("✂", "cut", "excluded child: leaves the SK with the cut"),
    LegendItem("↳", "collateral", "collateral: moves with the cut (§4.2 fragment)"),
    LegendItem("◀┘", "event", "event pair: notify → wait (same eventId; ◀ marks the target)"),
    LegendItem("◀┘", "barrier", "barrier group (ALL_SYNC / syncAllNodes): moves as a unit"),
    LegendItem("◀┘", "collective", "collective and the nodes attached to it"),
)


def node_id(n: int) -> str:
    return str(n)


def lane_of(n: SkNode) -> str:
    return "stream ?" if n.stream_id is None else f"stream {n.stream_id}"


def _label(n: SkNode) -> str:
    nd = n.node
    if n.is_kernel:
        return f"{n.node_id} {n.func_name or '?'}"
    what = nd.event_type or nd.kind
    ev = f"#{nd.event_id}" if nd.event_id is not None else ""
    return f"{n.node_id} {what}{ev}"


def event_edges(nodes: Iterable[SkNode]) -> list[GraphEdge]:
    """notify → wait for every pair of the same family and eventId (MemoryWrite → MemoryWait too)."""
    notifies: dict[tuple[str, int], list[SkNode]] = {}
    waits: list[SkNode] = []
    for n in nodes:
        nd = n.node
        if nd.event_id is None or n.is_kernel:
            continue
        family = "memory" if nd.kind.startswith("memory") else "event"
        if nd.kind == "memory_write" or nd.event_type == "EventNotify":
            notifies.setdefault((family, nd.event_id), []).append(n)
        elif nd.kind == "memory_wait" or nd.event_type == "EventWait":
            waits.append(n)
    out = []
    for w in waits:
        family = "memory" if w.node.kind.startswith("memory") else "event"
        assert w.node.event_id is not None
        for src in notifies.get((family, w.node.event_id), []):
            out.append(
                GraphEdge(node_id(src.node_id), node_id(w.node_id), "event", "event", f"#{w.node.event_id}")
            )
    return out


def build_scope_graph(inst: SkInstance, proposal: Proposal, fragment: Fragment | None = None) -> GraphPicture:
    """Children in stream lanes (lanes in first-seen order, nodes in fused-node order)."""
    excluded = set(proposal.excluded)
    collateral = set(proposal.collateral)
    if fragment is not None:
        collateral |= set(fragment.members) - excluded
    suspect = proposal.child.node_id if proposal.child is not None else None
    lanes: dict[str, None] = {}
    nodes: list[GraphNode] = []
    ids = {n.node_id for n in inst.nodes}
    collective = {n.node_id for n in inst.nodes if n.is_collective}
    pos = {n.node_id: n.position for n in inst.nodes}
    for n in inst.nodes:
        lane = lane_of(n)
        lanes.setdefault(lane, None)
        style, mark = ("kernel" if n.is_kernel else "event"), ""
        if n.node_id in collective:
            style = "collective"
        if n.node_id in excluded:
            style, mark = "cut", "✂"
        if n.node_id in collateral:  # a proposal's excluded list holds its collateral too
            style, mark = "collateral", "↳"
        if n.node_id == suspect:
            style, mark = "suspect", "◆"
        nodes.append(GraphNode(node_id(n.node_id), lane, _label(n), style, n.position, mark))
    edges = event_edges(inst.nodes)
    for g in barrier_groups_of(inst):
        members = sorted((m for m in g.members if m in ids), key=lambda m: pos.get(m, 1 << 30))
        for a, b in zip(members, members[1:], strict=False):
            edges.append(GraphEdge(node_id(a), node_id(b), "barrier", "barrier", g.origin))
    if fragment is not None:
        seen = {(e.src, e.dst) for e in edges}
        for fe in fragment.edges:
            if fe.kind != "collective":
                continue
            ns = sorted((m for m in fe.nodes if m in ids), key=lambda m: pos.get(m, 1 << 30))
            for a, b in zip(ns, ns[1:], strict=False):
                if (node_id(a), node_id(b)) not in seen:
                    edges.append(GraphEdge(node_id(a), node_id(b), "collective", "collective"))
    cut = f"cut: {proposal.status}" + (f" {proposal.mechanism}" if proposal.mechanism else "")
    title = f"scope graph — SK {inst.sk_name or '?'} scope {inst.scope_id} ({inst.scope_name or 'automatic'}) — {cut}"
    notes: list[str] = []
    if not inst.nodes:
        notes.append("no fused-node list (sk_fused_nodes.log) for this SK: no node to draw")
    if not edges:
        notes.append("no event/barrier/collective edges in this SK")
    focus = tuple(
        node_id(n) for n in sorted(excluded | collateral | ({suspect} if suspect is not None else set()))
    )
    return GraphPicture(
        title=title,
        lanes=tuple(lanes),
        nodes=tuple(nodes),
        edges=tuple(edges),
        legend=LEGEND,
        notes=tuple(notes),
        focus=focus,
    )


__all__ = ["LEGEND", "build_scope_graph", "event_edges"]
