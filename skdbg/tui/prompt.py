"""The one-line prompt of the whole UI: block reason, export folder, log search, go-to and filter.

Why its own module: the log viewer (a widget) and the screens both ask through it, and the keymap
documents its binding; keeping it free of both avoids an import cycle between them.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from skdbg.tui.widgets.footer import Footer

#: Esc cancels any prompt (the id predates the log prompts; kept so user keymaps keep working)
EXPORT_BINDINGS: list[Binding] = [
    Binding("escape", "close", "Cancel", id="export.cancel"),
]


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line; Enter answers, Esc cancels (None). The one prompt of the whole UI: the
    proposal's block reason and export folder, and the log viewer's search, go-to and filter."""

    DEFAULT_CSS = "PromptScreen { align: center middle; }"
    BINDINGS: ClassVar[list[BindingType]] = [*EXPORT_BINDINGS]

    def __init__(self, title: str, value: str, *, prompt_id: str, placeholder: str = "") -> None:
        super().__init__(id=prompt_id)
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text)
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
        yield Footer()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["EXPORT_BINDINGS", "PromptScreen"]
