"""``skdbg tui --diff A B``: the diff of two scenes as a table, one row per differing field.

Why an app of its own: a diff has no single scene to open the triage screens on; the reader scans the
differing fields, and the row under the cursor shows why the field matters, where each side's value
came from (file:line) and which fields of its group are equal. The analyses run before the UI starts
(the same ``skdbg.diffing.diff_scenes`` as ``skdbg diff``).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import DataTable, Header, Static

from skdbg.diffing import DiffResult
from skdbg.diffing.render import show_value
from skdbg.tui.appbase import SkdbgBaseApp
from skdbg.tui.keymap import APP_BINDINGS
from skdbg.tui.widgets.footer import Footer

#: the app keys that make sense on one table (no screens to switch, no analysis to cancel)
_DIFF_APP_IDS = {"app.help", "app.copy", "app.screenshot", "app.theme", "app.quit"}


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class DiffApp(SkdbgBaseApp):
    TITLE = "skdbg diff"
    BINDINGS: ClassVar[list[BindingType]] = [b for b in APP_BINDINGS if b.id in _DIFF_APP_IDS]

    def __init__(self, result: DiffResult, *, keymap: dict[str, str] | None = None) -> None:
        super().__init__(keymap=keymap)
        self.result = result
        self.sub_title = f"A {result.a.scene}  ·  B {result.b.scene}"

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"diff: {self.result.summary()}", id="diff-summary", classes="section")
        yield DataTable(id="diff-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="diff-detail", classes="section")
        yield Footer()

    def on_mount(self) -> None:
        self.apply_keymap()
        table = self.query_one(DataTable)
        table.add_columns("", "field", "A", "B")
        for i, d in enumerate(self.result.differences):
            mark = "~" if d.identity else "≠"
            table.add_row(mark, d.field, _short(show_value(d.a)), _short(show_value(d.b)), key=str(i))
        table.focus()
        self._show(0)

    def detail(self, index: int) -> str:
        """What the detail pane says for difference ``index`` (the equal fields when none differ)."""
        diffs = self.result.differences
        if not diffs:
            return "the scenes agree on every compared field: " + ", ".join(self.result.equal)
        d = diffs[index]
        lines = [f"{d.field}: {d.why}", f"A: {show_value(d.a)}", f"B: {show_value(d.b)}"]
        for side, cites in (("A", d.cites_a), ("B", d.cites_b)):
            if cites:
                lines.append(f"{side} at: {', '.join(cites)}")
        equal = [f for f in self.result.equal if f.split(".")[0].split("[")[0] == d.group]
        if equal:
            lines.append(f"equal in this group: {', '.join(equal)}")
        return "\n".join(lines)

    def _show(self, index: int) -> None:
        self.query_one("#diff-detail", Static).update(self.detail(index))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show(int(event.row_key.value))

    def action_copy(self) -> None:
        table = self.query_one(DataTable)
        if not self.result.differences:
            self.notify("no difference to copy", severity="warning")
            return
        self.copy_text(self.detail(table.cursor_row))


__all__ = ["DiffApp"]
