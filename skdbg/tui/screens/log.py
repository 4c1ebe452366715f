"""Log: the scene's plog files merged by time in part 1's :class:`~skdbg.tui.logview.LogView`.

The viewer owns its keys (search, fault jumps, filter, go-to-line — see F1); this screen mounts it,
shows its status bar (file:line of the cursor, rows, % indexed, incident k of n, filter, search — the
viewer's :class:`~skdbg.tui.logview.LogView.StatusChanged`) and the legend of the merged files'
``1:``/``2:`` prefixes, and offers :meth:`goto` for the Evidence screen's jump. The plogs open as soon as the scene is inventoried — before the analysis, which
runs in its own worker — and the viewer indexes in its own worker, so the screen paints at once.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from skdbg.tui.logview import LogView
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState


class LogScreen(TriageScreen):
    def __init__(self) -> None:
        super().__init__()
        self.view: LogView | None = None
        self._pending: tuple[Path, int] | None = None

    def compose_body(self) -> ComposeResult:
        with Vertical(id="log-body"):
            yield Static(id="log-status", classes="section")
            yield Static(id="log-legend")

    def sync(self) -> None:
        """Open the plogs as soon as the scene is inventoried; the analysis only adds to the header."""
        super().sync()
        if self.view is None and self.skdbg.plog_files is not None:
            self.query_one("#waiting", Static).display = False
            self._open(self.skdbg.plog_files)

    def populate(self, state: TriageState) -> None:
        if self.view is None and self.skdbg.plog_files is not None:
            self._open(self.skdbg.plog_files)

    def _open(self, paths: list[Path]) -> None:
        status = self.query_one("#log-status", Static)
        if not paths:
            status.update("[b]no plog files[/] in this scene")
            return
        status.update(f"{len(paths)} plog file(s), merged by time — / search, e/E faults, f filter")
        self.view = LogView(paths, merge=True, id="logview")
        self.query_one("#log-body", Vertical).mount(self.view)
        self.view.focus()
        if self._pending is not None:
            path, line = self._pending
            self._pending = None
            self.goto(path, line)

    def goto(self, path: Path, line: int) -> None:
        """Show ``path:line`` (the Evidence screen's jump); applied once the viewer exists."""
        if self.view is None:
            self._pending = (path, line)
            return
        self.view.goto(path, line)
        self.view.focus()

    def on_log_view_status_changed(self, event: LogView.StatusChanged) -> None:
        """The status bar follows the viewer's cursor (never a stale jump target)."""
        self.query_one("#log-status", Static).update(Text(event.text))
        legend = self.query_one("#log-legend", Static)
        legend.update(Text(event.legend, style="dim"))
        legend.display = bool(event.legend)

    def action_next_fault(self) -> None:
        if self.view is not None:
            self.view.next_fault()

    def action_prev_fault(self) -> None:
        if self.view is not None:
            self.view.prev_fault()

    def action_search(self) -> None:
        if self.view is not None:
            self.view.action_search()

    def action_filter(self) -> None:
        if self.view is not None:
            self.view.action_filter_prompt()

    def copy_text(self) -> str | None:
        if self.view is None:
            return None
        loc = self.view.cursor_location()
        if loc is None:
            return None
        st = self.state
        where = st.ctx.relpath(loc[0]) if st is not None else loc[0]
        return f"{where}:{loc[1]}: {self.view.cursor_text()}"


__all__ = ["LogScreen"]
