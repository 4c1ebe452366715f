"""What every skdbg app shares: the keymap override, F1 help, SVG screenshot, themes and copy.

Why a base class: the full triage UI (:mod:`skdbg.tui.app`) and the log viewer alone
(:mod:`skdbg.tui.logapp`) must answer the same keys the same way, remappable through the same
``[keymap]`` table; written once here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.screen import Screen

from skdbg.tui.keymap import KeymapError, load_keymap
from skdbg.tui.settings import save_theme, saved_theme


class SkdbgBaseApp(App[None]):
    CSS_PATH = "app.tcss"

    def __init__(self, *, keymap: dict[str, str] | None = None, screenshot_dir: Path | None = None) -> None:
        super().__init__()
        self.screenshot_dir = screenshot_dir
        self._user_keymap = keymap
        self.keymap_in_use: dict[str, str] = {}
        self.remember_theme = False
        self.remember_bookmarks = False  # the log viewers read and write tui.json's bookmarks

    def restore_theme(self) -> None:
        """Use the theme chosen in an earlier run, and remember the user's next choice.

        Called by the command-line entry only, so tests (and embedders) never read or write the
        user's settings unless they ask to."""
        name = saved_theme()
        if name is not None and name in self.available_themes:
            self.theme = name
        self.remember_theme = True

    def restore_choices(self) -> None:
        """The command-line entry's start: the remembered theme, and log bookmarks kept across runs."""
        self.restore_theme()
        self.remember_bookmarks = True

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        # our palette has "Screenshot (SVG)" (into --screenshot-dir); Textual's own is a duplicate
        return (c for c in super().get_system_commands(screen) if c.title != "Screenshot")

    def watch_theme(self, name: str) -> None:
        # every way of changing the theme (ctrl+t, the palette's theme picker) ends here
        if self.remember_theme:
            save_theme(name)

    def apply_keymap(self) -> None:
        """Load the user's keymap (an unreadable one is reported, never fatal) and apply it."""
        try:
            keymap = self._user_keymap if self._user_keymap is not None else load_keymap()
        except KeymapError as exc:
            keymap = {}
            self.notify(str(exc), title="keymap ignored", severity="error", timeout=10)
        if keymap:
            self.set_keymap(keymap)
        self.keymap_in_use = keymap

    def key_for(self, binding_id: str, default: str) -> str:
        """The key(s) bound to ``binding_id`` now (the user's remap, else ``default``), for messages."""
        return self.keymap_in_use.get(binding_id, default)

    def action_help(self) -> None:
        from skdbg.tui.screens.dialogs import HelpScreen  # textual's Markdown: loaded on first F1

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def copy_text(self, text: str) -> None:
        self.copy_to_clipboard(text)
        self.notify(f"copied {len(text)} characters", timeout=3)

    def action_svg_screenshot(self) -> None:
        where = self.screenshot_dir or Path.cwd()
        path = self.save_screenshot(path=str(where))
        self.notify(f"screenshot saved: {path}", timeout=5)

    def action_next_theme(self) -> None:
        names = sorted(self.available_themes)
        current = names.index(self.theme) if self.theme in names else -1
        self.set_theme(names[(current + 1) % len(names)])

    def set_theme(self, name: str) -> None:
        self.theme = name
        self.notify(f"theme: {name}", timeout=2)


__all__ = ["SkdbgBaseApp"]
