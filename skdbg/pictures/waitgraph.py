"""The wait-for graph of a hang (:class:`skdbg.triage.waitfor.WaitFor`) as a lane graph picture.

Why here and not in triage: triage names the hang (unmatched wait, circular wait, SyncAll count
mismatch) and keeps the graph as data; drawing it is the pictures layer's job, with the same generic
renderer as the scope graph, so the TUI and the report folder show one picture of both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skdbg.pictures.graph import GraphPicture, LegendItem, from_digraph

if TYPE_CHECKING:
    from skdbg.triage.waitfor import WaitFor

#: what the wait-for picture's styles mean (the edge kinds are printed on the arcs' lines)
WAIT_LEGEND = (
    LegendItem("■", "cycle", "in the circular wait"),
    LegendItem("■", "blocked", "the blocking wait or notifier the finding names"),
    LegendItem("─", "event", "event edge (EVENT_WAIT → EVENT_NOTIFY of the same event)"),
    LegendItem("─", "barrier", "SYNC / SyncAll edge (wait kind → the cores it waits for)"),
)


def build_wait_graph(wf: WaitFor) -> GraphPicture:
    """The picture: lanes are cores, streams or queues; each finding is a note under the title."""
    from skdbg.triage.waitfor import to_digraph

    notes = [f"{f.kind}{f' across {f.across}' if f.across else ''}: {f.detail}" for f in wf.findings]
    if not wf.findings:
        notes.append("none: no core is blocked on a wait (no blocking edge)")
    focus = [n for f in wf.findings for n in f.nodes]
    return from_digraph(
        to_digraph(wf),
        title=f"wait-for graph — {wf.kind}",
        legend=WAIT_LEGEND,
        notes=notes,
        focus=focus,
    )


__all__ = ["WAIT_LEGEND", "build_wait_graph"]
