"""A Textual widget showing a lane graph (:class:`skdbg.pictures.graph.GraphPicture`).

Why generic: it draws whatever graph description it is given — the scope graph of the Scope screen
today, the wait-for graph of a hang (``skdbg.pictures.graph.from_digraph``) tomorrow. Tall graphs are
windowed around the picture's focus nodes (``max_rows``); the picture says what it left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

if TYPE_CHECKING:  # the picture stack loads when a graph is first shown, not when the UI starts
    from skdbg.pictures.graph import GraphPicture

#: rows drawn in the TUI before windowing (a 2,000-child SK has 2,500 rows)
TUI_ROWS = 200


class ScopeGraphWidget(Static):
    """A lane graph; :meth:`show` replaces it (None: nothing to draw, with why)."""

    DEFAULT_CSS = """
    ScopeGraphWidget {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None, max_rows: int | None = TUI_ROWS) -> None:
        super().__init__("", id=id)
        self.picture: GraphPicture | None = None
        self.max_rows = max_rows

    def show(self, picture: GraphPicture | None, why: str = "no graph") -> None:
        from skdbg.pictures.render import GraphView

        self.picture = picture
        self.update(why if picture is None else GraphView(picture, max_rows=self.max_rows))


__all__ = ["TUI_ROWS", "ScopeGraphWidget"]
