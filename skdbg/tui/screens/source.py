"""A read-only source pane: a cited non-plog file shown at the cited line.

Why read-only: the scene is sealed evidence; the pane is for reading the cited context. JSON
citations carry a path (``scopes[0]…``) instead of a line; the pane then follows the whole path
(``skdbg.tui.jsonpath``) to the addressed key or element. Binary files (ELF images) are described, not dumped.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from skdbg.triage.model import EvidenceItem
from skdbg.tui.jsonpath import json_path_line
from skdbg.tui.keymap import SOURCE_BINDINGS
from skdbg.tui.widgets.footer import Footer
from skdbg.tui.widgets.text import escape

_MAX_BYTES = 8 << 20


def locate_json_path(lines: list[str], json_path: str) -> int | None:
    """1-based line where the whole ``json_path`` starts in the JSON ``lines``, else None."""
    return json_path_line("\n".join(lines), json_path)


class SourceScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*SOURCE_BINDINGS]

    def __init__(self, path: Path, item: EvidenceItem) -> None:
        super().__init__()
        self.path = path
        self.item = item
        self.line: int | None = item.line

    def compose(self) -> ComposeResult:
        yield Static(f"[b]{escape(self.item.where)}[/]  (read-only — Esc closes)", id="source-title")
        yield TextArea("", read_only=True, show_line_numbers=True, id="source")
        yield Footer()

    def on_mount(self) -> None:
        area = self.query_one("#source", TextArea)
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read(_MAX_BYTES)
        except OSError as exc:
            area.load_text(f"cannot read {self.path}: {exc}")
            return
        if b"\0" in raw[:4096]:
            area.load_text(
                f"{self.item.file} is a binary file ({self.path.stat().st_size} bytes).\n"
                f"cited at {self.item.where}:\n{self.item.excerpt}"
            )
            return
        text = raw.decode("utf-8", errors="replace")
        area.load_text(text)
        if self.line is None and self.item.json_path:
            self.line = locate_json_path(text.splitlines(), self.item.json_path)
        if self.line is not None:
            row = max(self.line - 1, 0)
            area.select_line(row)
            area.scroll_cursor_visible(center=True, animate=False)
        area.focus()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["SourceScreen", "locate_json_path"]
