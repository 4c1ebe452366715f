"""Scope: the SK's children and dependency edges, with the proposal's cut drawn on them.

The cut column marks ``✂`` for nodes leaving the SK (kernels excluded and the events that move
with them), ``◆`` for the suspect; the edges table lists every §4.2 edge the fragment rules met for
the current excluded set; unfused neighbours come from the fusion fail reasons. ``g`` switches to
the scope graph: the same children in stream lanes joined by their event/barrier/collective edges,
the cut and its collateral highlighted (:mod:`skdbg.pictures.scope`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from skdbg.show import show
from skdbg.tui.keymap import SCOPE_BINDINGS
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.scopegraph import ScopeGraphWidget
from skdbg.tui.widgets.text import cells, escape

if TYPE_CHECKING:  # the triage stack loads with the analysis, not before the UI paints
    from skdbg.triage.fragment import Fragment
    from skdbg.triage.model import Proposal
    from skdbg.triage.skview import SkInstance

LEGEND = (
    "[b]◆[/] suspect child   [b]✂[/] leaves the SK with the cut "
    "(excluded kernels, their collateral and the events that move with them)"
)
NO_EDGES = "[dim]no event/barrier/collective edges in this SK[/]"
NO_CUT = "[dim]no cut: the proposal excludes nothing, so no §4.2 edge was followed[/]"


class ScopeScreen(TriageScreen):
    BINDINGS: ClassVar[list[BindingType]] = [*SCOPE_BINDINGS]
    #: what the graph is drawn from (SK, proposal, fragment), kept until the graph is shown
    _graph_input: tuple[SkInstance, Proposal, Fragment | None] | None = None
    _graph_stale = False

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="scope-graph-view"):
            yield ScopeGraphWidget(id="scope-graph")
        with Vertical(id="scope-body"):
            yield Static(id="scope-title", classes="section")
            yield DataTable(id="children", cursor_type="row", zebra_stripes=True)
            yield Static(LEGEND, id="scope-legend")
            yield Static("[b]Edges[/] (§4.2: event, barrier, collective, cache, source)", classes="section")
            yield Static(id="edges-empty")
            yield DataTable(id="edges", cursor_type="row")
            yield Static("[b]Unfused neighbours[/] (fusion fail reasons)", classes="section")
            yield DataTable(id="unfused", cursor_type="row")

    def populate(self, state: TriageState) -> None:
        inst = state.instance
        title = self.query_one("#scope-title", Static)
        children = self.query_one("#children", DataTable)
        edges = self.query_one("#edges", DataTable)
        unfused = self.query_one("#unfused", DataTable)
        for t in (children, edges, unfused):
            t.clear(columns=True)
        graph = self.query_one("#scope-graph", ScopeGraphWidget)
        if inst is None:
            title.update("[b]No SK instance[/] was resolved for this fault: there is no scope to draw.")
            self._graph_input = None
            graph.show(None, "No SK instance was resolved for this fault: there is no scope to draw.")
            return
        p = state.proposal
        moving: set[int] = set(p.excluded) | set(p.collateral)
        found = None
        if p.excluded:
            from skdbg.triage.edit import closure  # loaded with the analysis, not before the UI

            try:
                found = closure(state.ctx, inst, p.excluded)
            except ValueError:
                found = None
        if found is not None:
            moving |= set(found.members)
        suspect = p.child.node_id if p.child is not None else None
        self._graph_input = (inst, p, found)
        self._graph_stale = True
        if self.query_one("#scope-graph-view").display:
            self._draw_graph()
        else:
            graph.show(None, "")  # drawn when shown (g): a 2,000-child graph costs nothing until then
        title.update(
            f"[b]SK[/] {escape(inst.sk_name or '?')}  scope {inst.scope_id} ({escape(inst.scope_name or 'automatic')})  "
            f"model {inst.model_label}  streams {inst.streams()}  — cut: {p.status}"
            + (f" {p.mechanism}" if p.mechanism else "")
        )
        task_of: dict[int, int] = {}
        for task in inst.tasks:
            if task.node_id is not None:
                task_of.setdefault(task.node_id, task.index)
        for k, nid in inst.index_to_node_id.items():
            task_of.setdefault(nid, k)
        children.add_columns("cut", "pos", "task", "nodeId", "funcName / event", "kernel type", "stream")
        for n in inst.nodes:
            cut = "✂" if n.node_id in moving else ""
            if n.node_id == suspect:
                cut = "◆" + cut
            what = n.func_name if n.is_kernel else (n.node.event_type or n.node.kind)
            if n.node.event_id is not None:
                what = f"{what}(eventId={n.node.event_id})"
            children.add_row(
                *cells(
                    cut,
                    str(n.position),
                    str(task_of.get(n.node_id, "")),
                    str(n.node_id),
                    what or "",
                    n.node.kernel_type or "",
                    "" if n.stream_id is None else str(n.stream_id),
                ),
                key=str(n.node_id),
            )
        edges.add_columns("kind", "rule", "nodes", "adds", "detail")
        for e in found.edges if found is not None else ():
            edges.add_row(*cells(e.kind, f"§4.2({e.rule})", e.nodes, e.added, e.detail))
        empty = self.query_one("#edges-empty", Static)
        empty.update(NO_CUT if found is None else NO_EDGES)
        empty.display = edges.row_count == 0
        edges.display = edges.row_count > 0
        unfused.add_columns("nodeId", "reason", "detail", "where")
        for u in inst.fail_reasons:
            unfused.add_row(
                *cells(
                    str(u.node.node_id),
                    u.reason or u.reason_raw,
                    u.reason_detail or "",
                    f"{state.ctx.relpath(u.src.file)}:{u.src.line}",
                )
            )

    def on_mount(self) -> None:
        self.query_one("#scope-graph-view").display = False
        super().on_mount()

    def action_toggle_graph(self) -> None:
        """Switch between the tables and the scope graph (the same data, drawn)."""
        view = self.query_one("#scope-graph-view")
        view.display = not view.display
        self.query_one("#scope-body").display = not view.display
        if view.display:
            self._draw_graph()

    def _draw_graph(self) -> None:
        if self._graph_input is None or not self._graph_stale:
            return
        inst, p, found = self._graph_input
        from skdbg.pictures.scope import build_scope_graph

        self.query_one("#scope-graph", ScopeGraphWidget).show(build_scope_graph(inst, p, found))
        self._graph_stale = False

    def copy_text(self) -> str | None:
        st = self.state
        if st is None:
            return None
        return f"excluded {show(st.proposal.excluded)}; collateral {show(st.proposal.collateral)}"


__all__ = ["ScopeScreen"]
