"""``skdbg tui FILE.log [FILE.log …]``: the log viewer alone, for a user who has only plogs.

Why a separate app: with no scene there is nothing to analyse — no verdict, no proposal — yet the
files still deserve the viewer's merge by time, fault stops (e/E), search (/), filter and go-to.
The keys are the full UI's (same ids, same keymap; F1 explains them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Header, Static

from skdbg.tui.appbase import SkdbgBaseApp
from skdbg.tui.bookmark_commands import BookmarkCommands
from skdbg.tui.keymap import APP_BINDINGS
from skdbg.tui.logview import LogView
from skdbg.tui.widgets.footer import Footer

#: the app keys that make sense without a scene (no screens to switch, no analysis to cancel)
_LOG_APP_IDS = {"app.help", "app.copy", "app.screenshot", "app.theme", "app.quit"}


class LogApp(SkdbgBaseApp):
    TITLE = "skdbg log"
    BINDINGS: ClassVar[list[BindingType]] = [b for b in APP_BINDINGS if b.id in _LOG_APP_IDS]
    COMMANDS = SkdbgBaseApp.COMMANDS | {BookmarkCommands}

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        keymap: dict[str, str] | None = None,
        screenshot_dir: Path | None = None,
    ) -> None:
        super().__init__(keymap=keymap, screenshot_dir=screenshot_dir)
        self.paths = list(paths)
        self.sub_title = ", ".join(p.name for p in self.paths)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._summary(), id="log-summary")
        yield Static(id="log-status", classes="section")
        yield Static(id="log-legend")
        yield LogView(self.paths, merge=True, id="logview")
        yield Footer()

    def _summary(self) -> str:
        merged = ", merged by time" if len(self.paths) > 1 else ""
        return f"{len(self.paths)} log file(s){merged}, no scene: no verdict — / search, e/E faults, f filter"

    def on_mount(self) -> None:
        self.apply_keymap()
        view = self.query_one(LogView)
        view.focus()
        for err in view.errors:
            self.notify(err, title="cannot open", severity="error", timeout=10)

    def on_log_view_status_changed(self, event: LogView.StatusChanged) -> None:
        """The status bar follows the viewer's cursor; the legend names the ``1:``/``2:`` prefixes."""
        self.query_one("#log-status", Static).update(Text(event.text))
        legend = self.query_one("#log-legend", Static)
        legend.update(Text(event.legend, style="dim"))
        legend.display = bool(event.legend)

    def action_copy(self) -> None:
        view = self.query_one(LogView)
        loc = view.cursor_location()
        if loc is None:
            self.notify("nothing selected to copy", severity="warning")
            return
        self.copy_text(f"{loc[0]}:{loc[1]}: {view.cursor_text()}")


__all__ = ["LogApp"]
