"""The shared frame of every mode screen: header, body, footer, and redraw-on-new-state.

Why: the analysis arrives from a worker after the screens exist, and the proposal changes while
other screens are hidden. Each screen remembers which state version it drew and redraws on resume
when the app's version moved on — no screen polls, none reads a half-built state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Header, Static, Tree

from skdbg.glossary import codes_in
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from skdbg.tui.app import SkdbgApp


class TriageScreen(Screen[None]):
    """A mode screen. Subclasses implement :meth:`compose_body` and :meth:`populate`."""

    _drawn: int = -1

    @property
    def skdbg(self) -> SkdbgApp:
        return cast("SkdbgApp", self.app)

    @property
    def state(self) -> TriageState | None:
        return self.skdbg.state

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("analysis running…", id="waiting", classes="waiting")
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> ComposeResult:
        raise NotImplementedError

    def on_mount(self) -> None:
        self.sync()

    def on_screen_resume(self) -> None:
        self.sync()

    def sync(self) -> None:
        """Redraw when the app's state version differs from the one drawn."""
        st = self.state
        waiting = self.query_one("#waiting", Static)
        if st is None:
            waiting.update(self.skdbg.status_text)
            waiting.display = True
            return
        waiting.display = False
        if self._drawn != self.skdbg.version:
            self._drawn = self.skdbg.version
            self.populate(st)

    def populate(self, state: TriageState) -> None:
        raise NotImplementedError

    def copy_text(self) -> str | None:
        """What ``c`` copies on this screen (None: nothing selected)."""
        return None

    def codes_here(self) -> list[str]:
        """The glossary ids ``?`` explains: those on the focused table row or tree node, else those in
        what ``c`` would copy (the screen's current item)."""
        codes = codes_in(focused_text(self.focused))
        return codes or codes_in(self.copy_text() or "")


def focused_text(widget: Widget | None) -> str:
    """The text of the row under the cursor of a focused table or tree ('' for other widgets)."""
    if isinstance(widget, DataTable) and widget.row_count:
        row = widget.get_row_at(min(max(widget.cursor_row, 0), widget.row_count - 1))
        return " ".join(str(cell) for cell in row)
    if isinstance(widget, Tree) and widget.cursor_node is not None:
        return str(widget.cursor_node.label)
    return ""


__all__ = ["TriageScreen", "focused_text"]
