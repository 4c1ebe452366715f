"""Small modal dialogs: a one-line prompt (block reason, export folder) and the F1 help.

Why modals: both need one answer and nothing else may happen meanwhile; ``dismiss(result)``
hands it back to the caller's callback.
"""

from __future__ import annotations

from importlib import resources
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, MarkdownViewer

from skdbg.tui.keymap import EXPORT_BINDINGS, HELP_BINDINGS


def help_markdown() -> str:
    """The F1 help, shipped as package data (skdbg/tui/help/keys.md)."""
    return resources.files("skdbg.tui").joinpath("help/keys.md").read_text(encoding="utf-8")


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line; Enter answers, Esc cancels (None)."""

    BINDINGS: ClassVar[list[BindingType]] = [*EXPORT_BINDINGS]

    def __init__(self, title: str, value: str, *, prompt_id: str) -> None:
        super().__init__(id=prompt_id)
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text)
            yield Input(self.value, id="prompt-input")
        yield Footer()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*HELP_BINDINGS]

    def compose(self) -> ComposeResult:
        yield MarkdownViewer(help_markdown(), show_table_of_contents=False, id="help")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["HelpScreen", "PromptScreen", "help_markdown"]
