"""Timeline: the faulting SK's exception cores, each with its queue of tasks in order (mode ``8``).

What it shows (issue 16 item 3): per core, the tasks of the queue it runs — finished ones green, the
one COND / the op-trace state points at (▶), the tasks the faulting PC lies in (◆), a bystander's
blocking wait (‖), the verdict's suspect (★) — from the same records as the analysis JSON. Long
queues are compressed around the marks, and the picture says so.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll

from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.scopegraph import ScopeGraphWidget
from skdbg.tui.widgets.timeline import TimelineWidget


class TimelineScreen(TriageScreen):
    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="timeline-body"):
            yield TimelineWidget(id="timeline")
            yield ScopeGraphWidget(id="wait-graph")

    def populate(self, state: TriageState) -> None:
        a = state.analysis
        self._show_wait_graph(state)
        widget = self.query_one("#timeline", TimelineWidget)
        if state.instance is None and not a.fault.cores:
            widget.show(
                None, "No SK instance and no exception core for this fault: there is no timeline to draw."
            )
            return
        from skdbg.pictures.timeline import build_timeline  # loaded with the analysis, not at start-up

        widget.show(build_timeline(state.instance, a.fault, a.verdict))

    def _show_wait_graph(self, state: TriageState) -> None:
        """A hang's wait-for graph under the timeline (who waits for whom; hidden for other faults)."""
        graph = self.query_one("#wait-graph", ScopeGraphWidget)
        wf = state.analysis.wait_for
        graph.display = wf is not None
        if wf is not None:
            from skdbg.pictures.waitgraph import build_wait_graph

            graph.show(build_wait_graph(wf))

    def copy_text(self) -> str | None:
        text = self.query_one("#timeline", TimelineWidget).plain()
        return text or None


__all__ = ["TimelineScreen"]
