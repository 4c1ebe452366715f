"""Small modal dialogs: the F1 help and the explanation of one code (``Explain …`` in the palette —
the text ``skdbg explain`` prints). The one-line prompt lives in skdbg.tui.prompt.

Why a modal: nothing else may happen while the help is open; ``dismiss(result)``
hands it back to the caller's callback.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import ModalScreen
from textual.widgets import MarkdownViewer

from skdbg.glossary import closest, lookup
from skdbg.tui.keymap import EXPLAIN_BINDINGS, HELP_BINDINGS
from skdbg.tui.widgets.footer import Footer


def help_markdown() -> str:
    """The F1 help, shipped as package data (skdbg/tui/help/keys.md)."""
    return resources.files("skdbg.tui").joinpath("help/keys.md").read_text(encoding="utf-8")


def explain_markdown(code: str) -> str:
    """Markdown of every glossary entry for ``code`` (the same words as ``skdbg explain CODE``)."""
    found = lookup(code)
    if not found:
        near = ", ".join(f"`{c}`" for c in closest(code)) or "none"
        return f"# Unknown code `{code}`\n\nClosest: {near}. `skdbg explain` lists every id.\n"
    parts = [
        f"# {e.id} — {e.title}\n\n*{e.area}* · `skdbg explain {e.id}` · docs/{e.page}\n\n{e.text}\n\n"
        f"Where it appears: {e.where}\n"
        for e in found
    ]
    return "\n".join(parts)


def codes_markdown(codes: Sequence[str]) -> str:
    """The F1 section "Codes on this scene": each code shown by the screens, with its explanation."""
    if not codes:
        return ""
    rows = ["", "## Codes on this scene", "", "| code | meaning |", "|---|---|"]
    for code in codes:
        for e in lookup(code):
            text = f"**{e.title}** — {e.text}".replace("|", "\\|").replace("<", "&lt;")
            rows.append(f"| `{e.id}` | {text} |")
    return "\n".join(rows) + "\n"


class HelpScreen(ModalScreen[None]):
    """F1: every key, then (once a scene is analysed) every code its screens show, explained."""

    BINDINGS: ClassVar[list[BindingType]] = [*HELP_BINDINGS]

    def __init__(self, codes: Sequence[str] = ()) -> None:
        super().__init__()
        self.codes = tuple(codes)

    def compose(self) -> ComposeResult:
        text = help_markdown() + codes_markdown(self.codes)
        yield MarkdownViewer(text, show_table_of_contents=False, id="help")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


class ExplainScreen(ModalScreen[None]):
    """Codes explained (palette "Explain …", or ``?`` on a row naming several); Esc / F1 / q close it."""

    BINDINGS: ClassVar[list[BindingType]] = [*HELP_BINDINGS, *EXPLAIN_BINDINGS]

    def __init__(self, code: str, *more: str) -> None:
        super().__init__()
        self.code = code
        self.codes = (code, *more)

    def compose(self) -> ComposeResult:
        text = "\n---\n\n".join(explain_markdown(c) for c in self.codes)
        yield MarkdownViewer(text, show_table_of_contents=False, id="explain")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = [
    "ExplainScreen",
    "HelpScreen",
    "codes_markdown",
    "explain_markdown",
    "help_markdown",
]
