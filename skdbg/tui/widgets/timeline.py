"""A Textual widget showing the core × task timeline (:mod:`skdbg.pictures.timeline`).

Why a thin wrapper: the picture is a Rich renderable built headless, the same one ``skdbg report``
exports as ``timeline.svg``; the widget only holds it and redraws at its own width (a ``Static``
re-renders the renderable on resize, so the queue cells re-wrap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from textual.widgets import Static

if TYPE_CHECKING:  # the picture stack loads when a timeline is first shown, not when the UI starts
    from skdbg.pictures.timeline import Timeline


class TimelineWidget(Static):
    """The timeline of one SK; :meth:`show` replaces it (None: nothing to draw, with why)."""

    DEFAULT_CSS = """
    TimelineWidget {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.timeline: Timeline | None = None

    def show(self, timeline: Timeline | None, why: str = "no timeline") -> None:
        from skdbg.pictures.render import TimelineView

        self.timeline = timeline
        self.update(why if timeline is None else TimelineView(timeline))

    def plain(self, width: int = 120) -> str:
        """The picture as plain text (what ``c`` copies)."""
        if self.timeline is None:
            return ""
        from skdbg.pictures.render import TimelineView

        console = Console(width=width, record=True, file=None, color_system=None)
        with console.capture() as cap:
            console.print(TimelineView(self.timeline))
        return cap.get()


__all__ = ["TimelineWidget"]
