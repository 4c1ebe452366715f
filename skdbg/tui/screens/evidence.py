"""Evidence: per exception core, and the evidence chain L1–L4 with agree/conflict marks.

Every row is a cited fact; Enter (or ``j``, or a click on the highlighted row) jumps to it: plog
lines open in the Log screen at that line, other files in a read-only source pane. The selected
row's level and trap ids are explained under the table and in the table's tooltip.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from skdbg.glossary import lookup, titled
from skdbg.triage.model import CoreFinding, EvidenceItem
from skdbg.tui.keymap import EVIDENCE_BINDINGS
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.text import cells, escape, item_codes, item_line, mark


def _hex(v: int | None) -> str:
    return "" if v is None else f"0x{v:x}"


def _levels(c: CoreFinding) -> str:
    return " ".join(f"{k}={'-' if v is None else v}" for k, v in (("L1", c.e1), ("L2", c.e2), ("L3", c.e3)))


def _short(where: str, width: int = 56) -> str:
    """The table keeps the start of long locators (ELF citations); the detail line shows all of it."""
    return where if len(where) <= width else where[: width - 1] + "…"


class EvidenceScreen(TriageScreen):
    BINDINGS: ClassVar[list[BindingType]] = [*EVIDENCE_BINDINGS]

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[str, list[EvidenceItem]] = {"cores": [], "chain": []}

    def compose_body(self) -> ComposeResult:
        with Vertical(id="evidence-body"):
            yield Static("[b]Exception cores[/]", classes="section")
            yield DataTable(id="cores", cursor_type="row", zebra_stripes=True)
            yield Static(id="rule", classes="section")
            yield DataTable(id="chain", cursor_type="row", zebra_stripes=True)
            yield Static(id="detail", classes="detail")

    def populate(self, state: TriageState) -> None:
        a = state.analysis
        cores = self.query_one("#cores", DataTable)
        cores.clear(columns=True)
        cores.add_columns(
            "core", "type", "role", "task", "PC", "PC location", "levels", "matches", "COND", "state", "flags"
        )
        self._items["cores"] = []
        for c in a.fault.cores:
            cores.add_row(
                *cells(
                    str(c.core_id),
                    c.core_type or "?",
                    c.role,
                    "" if c.task_index is None else str(c.task_index),
                    _hex(c.current_pc),
                    c.pc_location or "",
                    _levels(c),
                    ",".join(map(str, c.m)) or "-",
                    f"{_hex(c.cond_value)} {c.cond_state or ''}".strip(),
                    f"{c.op_state} {c.state_name or ''}".strip() if c.op_state is not None else "",
                    " ".join(c.flags),
                )
            )
            first = next(iter(c.evidence), None)
            if first is None:
                first = EvidenceItem(
                    level="core", source="none", file="", line=None, excerpt=c.pc_location or ""
                )
            self._items["cores"].append(first)
        v = a.verdict
        self.query_one("#rule", Static).update(
            f"[b]Evidence chain[/] — rule [b]{escape(titled(v.rule))}[/] fired: {escape(v.reason)}   "
            "[dim](+ agrees, ✗ conflicts, · context)[/]"
        )
        chain = self.query_one("#chain", DataTable)
        chain.clear(columns=True)
        chain.add_columns(" ", "level", "rule", "source", "where", "excerpt")
        self._items["chain"] = list(v.evidence)
        for e in v.evidence:
            chain.add_row(*cells(mark(e), e.level, e.rule or "", e.source, _short(e.where), e.excerpt[:120]))
        chain.focus()

    def _current(self) -> EvidenceItem | None:
        table = self.focused if isinstance(self.focused, DataTable) else self.query_one("#chain", DataTable)
        items = self._items.get(table.id or "", [])
        row = table.cursor_row
        return items[row] if 0 <= row < len(items) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        items = self._items.get(event.data_table.id or "", [])
        row = event.cursor_row
        item = items[row] if 0 <= row < len(items) else None
        text = "" if item is None else f"[b]{escape(item.where)}[/]\n{escape(item.excerpt)}"
        codes = [] if item is None else item_codes(item)
        if codes:  # the selected row's level / trap, in the glossary's words
            text += "\n[dim]" + escape("; ".join(titled(c) for c in codes)) + "[/]"
        self.query_one("#detail", Static).update(text)
        event.data_table.tooltip = "\n\n".join(e.render() for c in codes for e in lookup(c)) or None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
        item = self._current()
        if item is None or not item.file:
            self.notify("this row cites no file", severity="warning")
            return
        self.skdbg.jump_to(item)

    def copy_text(self) -> str | None:
        item = self._current()
        return None if item is None else item_line(item)

    def codes_here(self) -> list[str]:
        """The selected item's level and rule first, then any other id its row names."""
        item = self._current()
        first = [] if item is None else item_codes(item)
        return list(dict.fromkeys([*first, *super().codes_here()]))


__all__ = ["EvidenceScreen"]
