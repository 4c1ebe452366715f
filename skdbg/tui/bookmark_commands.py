"""Palette entries for the log viewer's bookmarks: toggle one, and one "Bookmark: file:line" per mark.

Why a provider of its own: both the full UI (Log screen) and the log-only app host a
:class:`~skdbg.tui.logview.LogView`; each lists the bookmarks of the viewer on the screen it was
opened from, so a mark set with ``m`` is found again by name (lnav's bookmarks, in the palette).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from skdbg.tui.logview import LogView
from skdbg.tui.palette import Command, ListedCommands


def bookmark_commands(view: LogView) -> list[Command]:
    """Toggle/next/previous, then a jump per bookmark (``name:line  text``) in row order."""
    out: list[Command] = [
        ("Log: toggle bookmark", view.toggle_bookmark, "set or clear a bookmark on the cursor line (m)"),
        ("Log: next bookmark", view.next_bookmark, "jump to the next bookmark (')"),
        ("Log: previous bookmark", view.prev_bookmark, 'jump to the previous bookmark (")'),
    ]
    for path, line, text in view.bookmarks():
        name = f"Bookmark: {Path(path).name}:{line}"
        out.append((name, partial(view.goto, path, line), text.strip()[:80] or "(line not indexed yet)"))
    return out


class BookmarkCommands(ListedCommands):
    def commands(self) -> list[Command]:
        views = list(self.screen.query(LogView))
        return bookmark_commands(views[0]) if views else []


__all__ = ["BookmarkCommands", "bookmark_commands"]
