"""The pictures of one analysed scene, and their SVG form for the report folder.

Why here: ``skdbg report`` (CLI) and the session freeze (workflow) both sit above this package and
call :func:`report_pictures`; the triage report writer only receives the finished files, so triage
never depends on the pictures.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich.console import Console, RenderableType

from skdbg.pictures.graph import GraphPicture
from skdbg.pictures.render import GraphView, TimelineView
from skdbg.pictures.scope import build_scope_graph
from skdbg.pictures.timeline import Timeline, build_timeline
from skdbg.pictures.waitgraph import build_wait_graph
from skdbg.triage.context import TriageContext
from skdbg.triage.edit import closure
from skdbg.triage.fragment import Fragment
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis, Proposal
from skdbg.triage.skview import SkInstance

#: report file names (REPORT_INDEX.md links them)
TIMELINE_SVG = "timeline.svg"
SCOPE_GRAPH_SVG = "scope-graph.svg"
WAIT_FOR_SVG = "wait-for.svg"  # only for a hang whose analysis built a wait-for graph
SVG_WIDTH = 140
#: the report's scope graph shows at most this many rows (windowed around the cut)
REPORT_GRAPH_ROWS = 80


@dataclass(frozen=True, slots=True)
class Pictures:
    timeline: Timeline
    scope_graph: GraphPicture | None  # None: no SK instance, no scope to draw


def cut_fragment(ctx: TriageContext, inst: SkInstance, proposal: Proposal) -> Fragment | None:
    """The §4.2 fragment of the proposal's excluded set (None when nothing is excluded or the
    set names no child of this SK)."""
    if not proposal.excluded:
        return None
    try:
        return closure(ctx, inst, proposal.excluded)
    except ValueError:
        return None


def pictures_of(ctx: TriageContext, inst: SkInstance | None, analysis: Analysis) -> Pictures:
    tl = build_timeline(inst, analysis.fault, analysis.verdict)
    graph = None
    if inst is not None:
        graph = build_scope_graph(inst, analysis.proposal, cut_fragment(ctx, inst, analysis.proposal))
    return Pictures(tl, graph)


def to_svg(renderable: RenderableType, title: str, *, width: int = SVG_WIDTH) -> str:
    """Render into a recording console of fixed ``width`` (no terminal involved) and export SVG."""
    console = Console(
        record=True, width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True
    )
    console.print(renderable)
    return console.export_svg(title=title)


def faulting_instance(ctx: TriageContext) -> SkInstance | None:
    """The SK the fault names, resolved as the engine's localisation stage does (for callers that
    hold only the :class:`Analysis`, e.g. a session freeze; the parsed evidence is reused)."""
    return localize(ctx).instance


def report_pictures(ctx: TriageContext, inst: SkInstance | None, analysis: Analysis) -> dict[str, str]:
    """``timeline.svg`` and ``scope-graph.svg`` (the latter says so when there is no SK to draw), and
    ``wait-for.svg`` when the analysis has a wait-for graph (a hang with blocked bystander cores)."""
    pics = pictures_of(ctx, inst, analysis)
    graph: RenderableType
    if pics.scope_graph is None:
        graph = "No SK instance was resolved for this fault: there is no scope to draw."
    else:
        graph = GraphView(pics.scope_graph, max_rows=REPORT_GRAPH_ROWS)
    out = {
        TIMELINE_SVG: to_svg(TimelineView(pics.timeline), "skdbg — core × task timeline"),
        SCOPE_GRAPH_SVG: to_svg(graph, "skdbg — scope graph"),
    }
    if analysis.wait_for is not None:
        wait = build_wait_graph(analysis.wait_for)
        out[WAIT_FOR_SVG] = to_svg(GraphView(wait, max_rows=REPORT_GRAPH_ROWS), "skdbg — wait-for graph")
    return out


__all__ = [
    "REPORT_GRAPH_ROWS",
    "SCOPE_GRAPH_SVG",
    "SVG_WIDTH",
    "TIMELINE_SVG",
    "WAIT_FOR_SVG",
    "Pictures",
    "cut_fragment",
    "faulting_instance",
    "pictures_of",
    "report_pictures",
    "to_svg",
]
