"""Ranks: the result of ``skdbg scan`` — first failing rank, signature groups, followers, ranks without
evidence, unreadable ranks — and the way into one rank's scene.

Why a screen of its own (issue 17): a multi-rank job is triaged rank → core → task. The scan (headless,
:mod:`skdbg.fleet`, run before the UI starts) says which rank to look at; Enter on a rank opens its folder
through the app's own scene-opening path (:meth:`SkdbgApp.open_scene`), so the Overview, Evidence and Log
screens fill in exactly as for ``skdbg tui SCENE``; ``e`` goes on to that rank's exception cores on the
Evidence screen (each with its task). Everything shown comes from the ``skdbg.scan/1`` document, the same
one ``scan.json`` holds, so ``skdbg tui --scan scan.json`` shows the same screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Static

from skdbg.glossary import lookup
from skdbg.tui.keymap import RANKS_BINDINGS
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.text import escape

NO_SCAN = (
    "No scan is open. The Ranks screen lists the ranks of a multi-rank job: run "
    "`skdbg scan ROOT --open`, or `skdbg tui --scan scan.json` on a saved scan (skdbg scan -o DIR)."
)
#: statuses in the order the summary counts them (docs/scan.md)
STATUS_ORDER = ("first_failing", "own_fault", "follower", "clean", "no_evidence", "unreadable")
STATUS_STYLE = {
    "first_failing": "bold red",
    "own_fault": "red",
    "follower": "yellow",
    "clean": "green",
    "no_evidence": "dim",
    "unreadable": "bold magenta",
}
#: how many follower lines / unreadable entries the text panes list before "+N more"
SHOW_LINES = 6


def _hhmmss(iso: str | None) -> str:
    """The time of day of an ISO timestamp (the date is in the detail pane)."""
    return "" if not iso else iso.split("T", 1)[-1]


def fault_text(r: dict[str, Any]) -> str:
    """One line saying what went wrong on a rank (its own fault, its follow-ups, or why it is listed)."""
    status = r["status"]
    if status in ("first_failing", "own_fault") and r["fault_kind"] is not None:
        return " ".join(x for x in (r["fault_kind"], r["error_class"], r["error_code"]) if x)
    if r["follower_lines"]:
        counts: dict[str, int] = {}
        for c in r["follower_lines"]:
            counts[c["pattern"]] = counts.get(c["pattern"], 0) + 1
        return "follow-up: " + ", ".join(f"{k}×{n}" if n > 1 else k for k, n in counts.items())
    if status == "unreadable":
        return f"unreadable: {r['reason']}"
    if status == "no_evidence":
        return "no plog"
    return ""


def group_label(key: list[Any]) -> tuple[str, str]:
    """(status family, signature) of a group key (``["fault", kind, class, code, entry, scope, child]``,
    ``["follower", "pat1,pat2"]`` or ``[status]``)."""
    family = str(key[0]) if key else "?"
    rest = [str(k) for k in key[1:] if k]
    if family == "follower":
        return "follower", "only " + (rest[0].replace(",", ", ") if rest else "follow-up errors")
    return family, " ".join(rest)


def explain_rank(doc: dict[str, Any] | None, index: int) -> str:
    """The glossary text of a rank's status, gate and follow-up pattern ids (``skdbg explain`` words)."""
    if doc is None:
        return ""
    r = doc["ranks"][index]
    codes = [r["status"], r["gate"], *dict.fromkeys(c["pattern"] for c in r["follower_lines"])]
    return "\n\n".join(e.render() for c in codes for e in lookup(str(c)) if e.area == "scan")


class RanksScreen(TriageScreen):
    BINDINGS: ClassVar[list[BindingType]] = [*RANKS_BINDINGS]
    DEFAULT_CSS = """
    RanksScreen #ranks-top { height: auto; max-height: 30%; }
    RanksScreen #ranks-summary { padding: 0 1; height: auto; }
    RanksScreen #ranks-opened { padding: 0 1; height: auto; max-height: 3; }
    RanksScreen #ranks-groups { height: auto; max-height: 7; }
    RanksScreen.-short #ranks-groups { max-height: 4; }
    RanksScreen #ranks-table { height: 1fr; min-height: 4; }
    RanksScreen #ranks-detail { padding: 0 1; height: auto; }
    RanksScreen #ranks-detail-scroll { height: auto; max-height: 7; }
    RanksScreen.-short #ranks-detail-scroll { max-height: 3; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._filled = False
        self._shown: list[int] = []  # indices into doc["ranks"] of the rows of the ranks table
        self._group: int | None = None  # the group the ranks table is filtered to (None: all)
        self._marked: int | None = None  # the row marked as opened
        self._cores_timer: Timer | None = None

    # ------------------------------------------------------------------ layout and drawing

    def compose_body(self) -> ComposeResult:
        with Vertical(id="ranks-body"):
            with VerticalScroll(id="ranks-top"):  # a long summary scrolls, the tables keep their rows
                yield Static(id="ranks-summary")
            yield Static(id="ranks-opened", classes="section")
            yield Static(
                "[b]Groups[/] by signature — Enter lists a group's ranks, a all ranks", classes="section"
            )
            yield DataTable(id="ranks-groups", cursor_type="row", zebra_stripes=True)
            yield Static(id="ranks-title", classes="section")
            yield DataTable(id="ranks-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="ranks-detail-scroll"):
                yield Static(id="ranks-detail", classes="detail")

    def on_resize(self) -> None:
        """A short terminal keeps rows for the ranks table: groups and detail get fewer lines."""
        self.set_class(self.size.height < 32, "-short")

    @property
    def doc(self) -> dict[str, Any] | None:
        return self.skdbg.scan

    def sync(self) -> None:
        """Draw the scan once; the "opened" line follows the app's scene and its analysis."""
        doc = self.doc
        waiting = self.query_one("#waiting", Static)
        body = self.query_one("#ranks-body", Vertical)
        if doc is None:
            waiting.update(NO_SCAN)
            waiting.display, body.display = True, False
            return
        waiting.display, body.display = False, True
        if not self._filled:
            self._filled = True
            self._fill(doc)
        self._show_opened(doc)

    def populate(self, state: TriageState) -> None:  # pragma: no cover - sync() draws this screen
        pass

    def _fill(self, doc: dict[str, Any]) -> None:
        self.query_one("#ranks-summary", Static).update(self._summary(doc))
        groups = self.query_one("#ranks-groups", DataTable)
        groups.add_columns("ranks", "status", "signature", "rank ids")
        groups.add_row(
            Text(str(len(doc["ranks"])), justify="right"),
            Text("all"),
            Text("every rank"),
            Text(""),
            key="all",
        )
        # the first failing rank's group first (it is what the user came for), then largest first
        order = sorted(range(len(doc["groups"])), key=lambda k: not self._holds_first(doc, doc["groups"][k]))
        for k in order:
            g = doc["groups"][k]
            family, sig = group_label(g["key"])
            ids = [str(x) if x is not None else "?" for x in g["ranks"]]
            shown = ",".join(ids[:16]) + (f",… (+{len(ids) - 16})" if len(ids) > 16 else "")
            holds_first = self._holds_first(doc, g)
            style = STATUS_STYLE.get("first_failing" if holds_first else family, "")
            groups.add_row(
                Text(str(g["count"]), justify="right"),
                Text(f"{family} (first)" if holds_first else family, style=style),
                Text(sig),
                Text(shown),
                key=str(k),
            )
        table = self.query_one("#ranks-table", DataTable)
        table.add_column(" ", key="open", width=1)
        for name in (
            "rank",
            "status",
            "first error",
            "what",
            "SK entry",
            "child",
            "cores",
            "evidence",
            "folder",
        ):
            table.add_column(name, key=name)
        self._list(None)
        first = doc["first_failing"]
        if first is not None:  # once laid out, so the table scrolls to it
            self.call_after_refresh(self._goto, first["index"])
        table.focus()

    @staticmethod
    def _holds_first(doc: dict[str, Any], g: dict[str, Any]) -> bool:
        first = doc["first_failing"]
        return first is not None and first["index"] in g["indices"]

    def _summary(self, doc: dict[str, Any]) -> str:
        from skdbg.fleet.scandoc import rank_name  # the scan package loads with a scan, not at start-up

        ranks = doc["ranks"]
        c = doc["counts"]
        counts = ", ".join(
            f"[{STATUS_STYLE[k]}]{c[k]} {k}[/]" for k in STATUS_ORDER if isinstance(c.get(k), int) and c[k]
        )
        skew = f"{doc['skew_ms']:g}"
        engine = f" · engine {escape(str(doc['engine']))}" if doc.get("engine") else ""
        out = [f"[b]{len(ranks)} ranks[/]: {counts or 'none'}{engine}"]
        first = doc["first_failing"]
        if first is None:
            out.append(
                "[b]First failing rank: none[/] — no rank shows a fault or a follow-up error "
                "(Enter still opens any rank)"
            )
        else:
            r = ranks[first["index"]]
            what = fault_text(r) or "follow-up error"
            where = ", ".join(
                f"{k} {r[k]}" for k in ("sk_entry", "scope", "child", "cores") if r[k] is not None
            )
            out.append(
                f"[b]First failing: {escape(rank_name(r))}[/] at {escape(str(first['time']))} — "
                f"{escape(what)}" + (f" ({escape(where)})" if where else "")
            )
            if not first.get("own_fault", True):
                out.append(
                    "  [yellow]no rank shows a fault of its own[/]: every failing rank only timed out waiting "
                    "for a peer — the stuck rank may be a clean or no-evidence one"
                )
            tie = first.get("tie") or []
            tie_text = (
                f"tie: ranks {escape(', '.join('?' if x is None else str(x) for x in tie))}, "
                f"decided by {escape(str(first.get('tie_rule')))}"
                if tie
                else "no tie"
            )
            out.append(f"  line {escape(str(first.get('at')))}")
            out.append(
                f"  clock skew ±{skew} ms: ranks failing within it tie; own fault before follow-up error, "
                f"then lowest rank id — {tie_text}"
            )
        if doc["no_evidence"]:
            names = [rank_name(ranks[i]) for i in doc["no_evidence"]]
            out.append(
                f"[dim]No evidence ({len(names)}):[/] "
                + escape(", ".join(names[:12]) + (f", … (+{len(names) - 12})" if len(names) > 12 else ""))
            )
        bad = doc["unreadable"]
        if bad:
            out.append(f"[{STATUS_STYLE['unreadable']}]Unreadable ({len(bad)}):[/]")
            for u in bad[:SHOW_LINES]:
                out.append(f"  {escape(str(u['folder']))}: {escape(str(u['reason']))}")
            if len(bad) > SHOW_LINES:
                out.append(f"  … {len(bad) - SHOW_LINES} more (status unreadable in the table)")
        return "\n".join(out)

    def _list(self, group: int | None) -> None:
        """Fill the ranks table with every rank (None) or one group's ranks."""
        doc = self.doc
        assert doc is not None
        ranks = doc["ranks"]
        self._group = group
        self._shown = list(range(len(ranks))) if group is None else list(doc["groups"][group]["indices"])
        table = self.query_one("#ranks-table", DataTable)
        table.clear()
        opened = self.opened_index()
        self._marked = opened
        for i in self._shown:
            r = ranks[i]
            table.add_row(
                Text("▶" if i == opened else ""),
                Text("?" if r["rank"] is None else str(r["rank"]), justify="right"),
                Text(r["status"], style=STATUS_STYLE.get(r["status"], "")),
                Text(_hhmmss(r["fault_time"] if r.get("fault_time") else r["first_error"])),
                Text(fault_text(r)),
                Text(r["sk_entry"] or ""),
                Text(r["child"] or ""),
                Text("" if r["cores"] is None else str(r["cores"]), justify="right"),
                Text(str(r["evidence"])),
                Text(str(r["folder"])),
                key=str(i),
            )
        if group is None:
            title = f"[b]Ranks[/] — all {len(ranks)}; Enter opens a rank, e its exception cores, f the first failing"
        else:
            family, sig = group_label(doc["groups"][group]["key"])
            title = f"[b]Ranks[/] — group {escape(family)} {escape(sig)}: {len(self._shown)} (a: all ranks)"
        self.query_one("#ranks-title", Static).update(title)

    def _goto(self, index: int) -> bool:
        """Put the ranks table's cursor on rank ``index`` (False: not in the listed rows)."""
        if index not in self._shown:
            return False
        table = self.query_one("#ranks-table", DataTable)
        row = self._shown.index(index)
        table.move_cursor(row=row, scroll=False)
        # a few rows of context above it, once the table has its final height
        self.call_after_refresh(table.scroll_to, y=max(0, row - 2), animate=False)
        self._detail(index)
        return True

    # ------------------------------------------------------------------ the opened rank

    def opened_index(self) -> int | None:
        """The rank whose folder (and pid) the app has open, if it is one of the scan's."""
        doc, scene = self.doc, self.skdbg.scene
        if doc is None or scene is None:
            return None
        for i, r in enumerate(doc["ranks"]):
            if Path(r["folder"]) == scene and (r["pid"] is None or r["pid"] == self.skdbg.pid):
                return i
        return None

    def _show_opened(self, doc: dict[str, Any]) -> None:
        from skdbg.fleet.scandoc import rank_name  # the scan package loads with a scan, not at start-up

        i = self.opened_index()
        if i != self._marked:
            table = self.query_one("#ranks-table", DataTable)
            for j, mark in ((self._marked, ""), (i, "▶")):
                if j is not None and j in self._shown:
                    table.update_cell(str(j), "open", Text(mark))
            self._marked = i
        line = self.query_one("#ranks-opened", Static)
        app = self.skdbg
        if app.scene is None:
            line.update("[b]Opened:[/] nothing — Enter on a rank opens its folder")
            return
        who = escape(rank_name(doc["ranks"][i])) if i is not None else escape(str(app.scene))
        st = app.state
        if st is None:
            line.update(f"[b]Opened: {who}[/] — {escape(app.status_text)}")
            return
        v = st.analysis.verdict
        suspect = v.suspect.label() if v.suspect is not None else "no suspect child"
        cores = st.analysis.fault.cores
        core_text = (
            ", ".join(
                f"core {c.core_id} {c.core_type or '?'} {c.role}"
                + ("" if c.task_index is None else f" task {c.task_index}")
                for c in cores[:4]
            )
            + (f", +{len(cores) - 4} more" if len(cores) > 4 else "")
            if cores
            else "no exception core"
        )
        line.update(
            f"[b]Opened: {who}[/] — {escape(v.confidence)} ({escape(v.rule)}): {escape(suspect)}; "
            f"{escape(core_text)} — e: cores, 1 Overview, 3 Log"
        )

    # ------------------------------------------------------------------ events and actions

    def _row_index(self) -> int | None:
        table = self.query_one("#ranks-table", DataTable)
        row = table.cursor_row
        return self._shown[row] if 0 <= row < len(self._shown) else None

    def _detail(self, index: int | None) -> None:
        from skdbg.fleet.scandoc import (
            open_note,
            rank_name,
        )  # the scan package loads with a scan, not at start-up

        doc = self.doc
        pane = self.query_one("#ranks-detail", Static)
        if doc is None or index is None:
            pane.update("")
            return
        r = doc["ranks"][index]
        out = [
            f"[b]{escape(rank_name(r))}[/] · [{STATUS_STYLE.get(r['status'], '')}]{r['status']}[/]"
            + (f" · pid {r['pid']}" if r["pid"] is not None else "")
            + (f" · device {r['device']} ({r.get('device_source')})" if r.get("device") is not None else "")
            + (f" · rank id from {r.get('rank_source')}" if r.get("rank_source") else ""),
            f"folder {escape(r['folder'])} · evidence {escape(str(r['evidence']))} (gate {escape(str(r['gate']))})",
            f"[dim]Enter opens: {escape(open_note(r))}[/]",
        ]
        if r.get("fault_time"):
            where = ", ".join(
                f"{k} {r[k]}" for k in ("sk_entry", "scope", "child", "cores") if r[k] is not None
            )
            out.append(
                f"fault {escape(str(r['fault_time']))} at {escape(str(r['fault_at']))} — "
                f"{escape(fault_text(r))}" + (f" ({escape(where)})" if where else "")
            )
        lines = r["follower_lines"]
        if lines:
            head = (
                "follower lines"
                if r["status"] == "follower"
                else "follow-up lines (not a follower: own fault)"
            )
            out.append(f"{head} ({len(lines)}):")
            for c in lines[:SHOW_LINES]:
                out.append(
                    f"  {escape(c['at'])} \\[{escape(c['pattern'])}] {escape(str(c.get('time') or ''))}"
                )
            if len(lines) > SHOW_LINES:
                out.append(f"  … {len(lines) - SHOW_LINES} more")
        if r["reason"]:
            out.append(f"reason: {escape(str(r['reason']))}")
        for note in r.get("notes") or []:
            out.append(f"[dim]note: {escape(str(note))}[/]")
        pane.update("\n".join(out))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "ranks-table":
            i = self._row_index()
            self._detail(i)
            # hovering the table explains the highlighted rank's ids in the glossary's words
            event.data_table.tooltip = None if i is None else (explain_rank(self.doc, i) or None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "ranks-groups":
            key = event.row_key.value
            self._list(None if key in (None, "all") else int(key))
            table = self.query_one("#ranks-table", DataTable)
            table.focus()
            self._detail(self._row_index())
        else:
            self.action_open_rank()

    def open_rank(self, index: int) -> bool:
        """Open rank ``index``'s folder in the app (False: unreadable, nothing opened)."""
        from skdbg.fleet.scandoc import (
            is_openable,
            open_note,
            rank_name,
        )  # the scan package loads with a scan, not at start-up

        doc = self.doc
        assert doc is not None
        r = doc["ranks"][index]
        name = rank_name(r)
        if not is_openable(r):
            self.notify(f"{name}: {open_note(r)}", title="nothing to open", severity="error")
            return False
        if self.opened_index() == index:
            return True
        self.skdbg.open_scene(Path(r["folder"]), pid=r["pid"], title=f"{name} · {Path(r['folder']).name}")
        self.notify(f"{r['folder']}: {open_note(r)}", title=f"opened {name}", timeout=6)
        return True

    def _no_scan(self) -> bool:
        """True (and says so) when no scan is open: the keys of this screen have nothing to act on."""
        if self.doc is not None:
            return False
        self.notify(
            "no scan is open: `skdbg scan ROOT --open`, or `skdbg tui --scan scan.json`", severity="warning"
        )
        return True

    def action_open_rank(self) -> None:
        """Open the highlighted rank and show its Overview (as ``skdbg tui SCENE`` starts)."""
        if self._no_scan():
            return
        i = self._row_index()
        if i is not None and self.open_rank(i):
            self.skdbg.action_show("overview")

    def action_cores(self) -> None:
        """Open the highlighted rank (if it is not open) and focus its exception cores on the Evidence
        screen — each core names its task; Enter there jumps to the core's evidence line."""
        if self._no_scan():
            return
        i = self._row_index()
        if i is None or not self.open_rank(i):
            return
        if self._cores_timer is not None:
            self._cores_timer.stop()
        self.skdbg.action_show("evidence")
        if self.skdbg.state is None:
            self.notify("analysis running: the cores appear when it is ready", timeout=4)
        self._cores_timer = self.app.set_interval(0.05, self._focus_cores)

    def _focus_cores(self) -> None:
        """Once the Evidence screen has drawn this scene's analysis, focus its cores table."""
        from skdbg.tui.screens.evidence import EvidenceScreen

        app = self.skdbg
        screen = app.screen
        if app.current_mode != "evidence" or app.analysis_stopped:
            self._stop_cores()  # the user went elsewhere, or the analysis stopped: nothing to focus
            return
        st = app.state
        if st is None or not isinstance(screen, EvidenceScreen):
            return
        cores = screen.query_one("#cores", DataTable)
        if cores.row_count != len(st.analysis.fault.cores):
            return
        self._stop_cores()
        if cores.row_count == 0:
            self.notify("no exception core in this rank's analysis", severity="warning")
            return
        cores.focus()
        cores.move_cursor(row=0)

    def _stop_cores(self) -> None:
        if self._cores_timer is not None:
            self._cores_timer.stop()
            self._cores_timer = None

    def action_first(self) -> None:
        """Put the cursor on the first failing rank (listing all ranks if a group hides it)."""
        doc = self.doc
        if doc is None:
            self._no_scan()
            return
        first = doc["first_failing"]
        if first is None:
            self.notify("no failing rank in this scan", severity="warning")
            return
        if not self._goto(first["index"]):
            self._list(None)
            self._goto(first["index"])
        self.query_one("#ranks-table", DataTable).focus()

    def action_all(self) -> None:
        if self._no_scan():
            return
        if self._group is not None:
            current = self._row_index()
            self._list(None)
            if current is not None:
                self._goto(current)

    def copy_text(self) -> str | None:
        from skdbg.fleet.scandoc import rank_name

        doc, i = self.doc, self._row_index()
        if doc is None or i is None:
            return None
        r = doc["ranks"][i]
        return f"{rank_name(r)} ({r['status']}): {r['folder']}" + (f" pid {r['pid']}" if r["pid"] else "")


__all__ = ["NO_SCAN", "RanksScreen", "explain_rank", "fault_text", "group_label"]
