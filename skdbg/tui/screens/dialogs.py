"""Small modal dialogs: the F1 help (the one-line prompt lives in skdbg.tui.prompt).

Why a modal: nothing else may happen while the help is open; ``dismiss(result)``
hands it back to the caller's callback.
"""

from __future__ import annotations

from importlib import resources
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import ModalScreen
from textual.widgets import Footer, MarkdownViewer

from skdbg.tui.keymap import HELP_BINDINGS


def help_markdown() -> str:
    """The F1 help, shipped as package data (skdbg/tui/help/keys.md)."""
    return resources.files("skdbg.tui").joinpath("help/keys.md").read_text(encoding="utf-8")


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*HELP_BINDINGS]

    def compose(self) -> ComposeResult:
        yield MarkdownViewer(help_markdown(), show_table_of_contents=False, id="help")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["HelpScreen", "help_markdown"]
