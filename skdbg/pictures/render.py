"""Rich renderables for the timeline and the lane graph, drawn with plain cells.

Why Rich cells: the same renderable paints in the terminal, in a Textual ``Static`` and in an SVG
(``Console(record=True).export_svg``), so the TUI, the report folder and the snapshot tests agree.
Every mark also has a glyph (◆ ▶ ‖ ★ ✂), so the pictures read without colour.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from skdbg.pictures.graph import STYLES, GraphPicture, LegendItem, row_order
from skdbg.pictures.timeline import GapCell, TaskCell, Timeline

#: glyph and style per timeline mark (drawing priority: the first present picks the background)
MARK_GLYPH = {"pc": "◆", "cond": "▶", "blocking": "‖", "suspect": "★"}
MARK_STYLE = {
    "pc": "bold white on red",
    "cond": "bold black on yellow",
    "blocking": "bold black on dark_orange",
    "suspect": "bold underline",
    "finished": "green",
}
TIMELINE_LEGEND = (
    LegendItem("f12", "green", "finished (before the task the core's trace points at)"),
    LegendItem("▶f12", MARK_STYLE["cond"], "task COND / the op-trace state points at"),
    LegendItem(
        "◆f12", MARK_STYLE["pc"], "task the faulting PC lies in (all matches when a binary is shared)"
    ),
    LegendItem("‖w13", MARK_STYLE["blocking"], "bystander's blocking wait (X5)"),
    LegendItem("★f12", MARK_STYLE["suspect"], "the verdict's suspect child"),
    LegendItem("f s w n p r", "", "FUNC SYNC EVENT_WAIT EVENT_NOTIFY PRELOAD EVENT_RESET + task index"),
)


def _style(name: str) -> str:
    return STYLES.get(name, name)


def cell_text(cell: TaskCell | GapCell) -> Text:
    """One timeline cell (text and style), without the separating space."""
    if isinstance(cell, GapCell):
        return Text(f"«…{cell.hidden}…»", style="green dim" if cell.finished else "dim")
    glyphs = "".join(g for m, g in MARK_GLYPH.items() if m in cell.marks)
    style = next((MARK_STYLE[m] for m in ("pc", "cond", "blocking") if m in cell.marks), "")
    if "finished" in cell.marks and not style:
        style = MARK_STYLE["finished"]
    if "suspect" in cell.marks:
        style = f"{style} underline".strip()
    return Text(glyphs + cell.label, style=style)


def legend_text(items: tuple[LegendItem, ...]) -> Text:
    out = Text("legend: ", style="bold")
    for i, item in enumerate(items):
        if i:
            out.append("   ")
        out.append(item.sample, style=_style(item.style))
        out.append(f" {item.text}")
    return out


@dataclass
class TimelineView:
    """The core × task timeline: a summary line per core, then its queue's cells, wrapped."""

    timeline: Timeline

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines(options.max_width)

    def lines(self, width: int) -> Iterator[Text]:
        tl = self.timeline
        yield Text(tl.title, style="bold")
        for row in tl.rows:
            yield Text(row.summary, style="bold" if row.role == "implicated" else "")
            yield from _wrap([cell_text(c) for c in row.cells], width, indent=4)
        for note in tl.notes:
            yield Text(note, style="italic")
        yield legend_text(TIMELINE_LEGEND)


def _wrap(cells: list[Text], width: int, *, indent: int) -> Iterator[Text]:
    line = Text(" " * indent)
    used = indent
    if not cells:
        yield Text(" " * indent + "(no tasks)", style="dim")
        return
    for c in cells:
        w = c.cell_len + 1
        if used + w > width and used > indent:
            yield line
            line, used = Text(" " * indent), indent
        line.append(c)
        line.append(" ")
        used += w
    yield line


# ------------------------------------------------------------------------------ lane graph

LANE_MAX = 30
MAX_TRACKS = 16


@dataclass
class GraphView:
    """A lane graph: one node per row in its lane column, edges as arcs in a gutter on the right.

    Rows follow :func:`~skdbg.pictures.graph.row_order`. ``max_rows`` windows a tall graph around its
    ``focus`` nodes (the picture says how many rows it hid)."""

    picture: GraphPicture
    max_rows: int | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines()

    def lines(self) -> Iterator[Text]:
        pic = self.picture
        nodes = pic.node_map()
        order = row_order(pic)
        lo, hi = _window(order, pic.focus, self.max_rows)
        shown = order[lo:hi]
        row_of = {nid: i for i, nid in enumerate(shown)}
        lanes = list(pic.lanes) or sorted({n.lane for n in pic.nodes})
        lane_ix = {ln: i for i, ln in enumerate(lanes)}
        widths = [
            min(
                LANE_MAX,
                max([len(ln)] + [len(n.mark) + len(n.label) + 1 for n in pic.nodes if n.lane == ln]) + 2,
            )
            for ln in lanes
        ]
        edges = [e for e in pic.edges if e.src in row_of and e.dst in row_of and e.src != e.dst]
        tracks, dropped = _tracks([(row_of[e.src], row_of[e.dst]) for e in edges])
        ntracks = max(tracks, default=-1) + 1
        yield Text(pic.title, style="bold")
        header = Text()
        for ln, w in zip(lanes, widths, strict=True):
            header.append(ln[: w - 1].ljust(w), style="bold underline")
        if ntracks:
            header.append(" edges", style="bold underline")
        yield header
        if lo > 0:
            yield Text(f"… {lo} rows above not shown", style="dim italic")
        # per row: gutter cells (track → (char, style)) and whether the row's connector runs right
        gutter: list[dict[int, tuple[str, str]]] = [{} for _ in shown]
        reach: list[int] = [-1 for _ in shown]  # farthest track the row's horizontal connector reaches
        reach_style: list[str] = ["" for _ in shown]
        arrow: list[str | None] = [None for _ in shown]
        for e, t in zip(edges, tracks, strict=True):
            if t < 0:
                continue
            a, b = row_of[e.src], row_of[e.dst]
            top, bot = min(a, b), max(a, b)
            st = _style(e.style or e.kind)
            for r in range(top + 1, bot):
                gutter[r].setdefault(t, ("│", st))
            gutter[top][t] = ("┐", st)
            gutter[bot][t] = ("┘", st)
            for r in (top, bot):
                if t > reach[r]:
                    reach[r], reach_style[r] = t, st
            arrow[row_of[e.dst]] = st
        for i, nid in enumerate(shown):
            node = nodes[nid]
            li = lane_ix.get(node.lane, 0)
            line = Text()
            for j, w in enumerate(widths):
                if j == li:
                    label = (f"{node.mark} " if node.mark else "") + node.label
                    if len(label) > w - 2:
                        label = label[: w - 3] + "…"
                    line.append(label, style=_style(node.style))
                    tail = w - len(label)
                    if reach[i] >= 0:
                        head = "◀" if arrow[i] is not None else "─"
                        line.append(head + "─" * (tail - 1), style=arrow[i] or reach_style[i])
                    else:
                        line.append(" " * tail)
                elif j > li and reach[i] >= 0:
                    line.append("─" * w, style=reach_style[i])
                else:
                    line.append("┊".ljust(w), style="dim")
            if ntracks:
                line.append("─" if reach[i] >= 0 else " ", style=reach_style[i])
                for t in range(ntracks):
                    ch, st = gutter[i].get(t, ("", ""))
                    if not ch:
                        ch, st = ("─", reach_style[i]) if t < reach[i] else (" ", "")
                    elif ch == "│" and t < reach[i]:
                        ch = "┼"
                    line.append(ch, style=st)
            yield line
        if hi < len(order):
            yield Text(f"… {len(order) - hi} rows below not shown", style="dim italic")
        notes = list(pic.notes)
        if lo > 0 or hi < len(order):
            notes.append(
                f"tall graph windowed around the highlighted nodes: rows {lo + 1}–{hi} of {len(order)}"
            )
        hidden_edges = len(pic.edges) - len(edges)
        if hidden_edges:
            notes.append(f"{hidden_edges} edge(s) to nodes outside the window not drawn")
        if dropped:
            notes.append(f"{dropped} edge(s) not drawn: more than {MAX_TRACKS} overlapping arcs")
        for note in notes:
            yield Text(note, style="italic")
        if pic.legend:
            yield legend_text(pic.legend)


def _window(order: list[str], focus: tuple[str, ...], max_rows: int | None) -> tuple[int, int]:
    if max_rows is None or len(order) <= max_rows:
        return 0, len(order)
    where = {nid: i for i, nid in enumerate(order)}
    spots = sorted(where[f] for f in focus if f in where)
    if not spots:
        return 0, max_rows
    mid = (spots[0] + spots[-1]) // 2
    lo = max(0, min(mid - max_rows // 2, len(order) - max_rows))
    if spots[0] < lo:
        lo = spots[0]
    return lo, lo + max_rows


def _tracks(spans: list[tuple[int, int]]) -> tuple[list[int], int]:
    """Greedy interval colouring: each arc gets the lowest gutter track free over its rows (-1 when
    every one of ``MAX_TRACKS`` is taken; the count of those is returned)."""
    order = sorted(range(len(spans)), key=lambda i: (min(spans[i]), max(spans[i])))
    busy_until: list[int] = []
    out = [-1] * len(spans)
    dropped = 0
    for i in order:
        top, bot = min(spans[i]), max(spans[i])
        for t, until in enumerate(busy_until):
            if until < top:
                busy_until[t] = bot
                out[i] = t
                break
        else:
            if len(busy_until) < MAX_TRACKS:
                busy_until.append(bot)
                out[i] = len(busy_until) - 1
            else:
                dropped += 1
    return out, dropped


__all__ = [
    "MARK_GLYPH",
    "MARK_STYLE",
    "TIMELINE_LEGEND",
    "GraphView",
    "TimelineView",
    "cell_text",
    "legend_text",
]
