"""SVG snapshots of every screen at a fixed size on a bundled scene (pytest-textual-snapshot).

Deterministic by construction: bundled scenes, paths shown relative to the scene, no clock in the
header, every worker finished before the picture. Update with ``--snapshot-update`` after checking
the HTML report. Snapshots are only meaningful with the pinned Textual / plugin versions (memray's
policy, ecosystem.md §1.6); other versions are skipped, not failed.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_support import SIZE, scene, settle

from skdbg.tui.app import SkdbgApp

PINNED = {"textual": "8.2.8", "pytest-textual-snapshot": "1.1.0"}
pytestmark = pytest.mark.skipif(
    any(version(name) != want for name, want in PINNED.items()),
    reason=f"SVG snapshots are recorded with {PINNED}",
)


def _press_then_settle(*keys: str) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        await _repaint_scrollbars(pilot)

    return run


async def _repaint_scrollbars(pilot: Pilot[Any]) -> None:
    """A scroll made in the same frame as a layout can leave a scrollbar painted at its old
    position; repaint every scrollable's bars so the picture shows the settled state."""
    from textual.widget import Widget

    for widget in pilot.app.screen.query(Widget):
        if widget.show_vertical_scrollbar:
            widget.vertical_scrollbar.refresh()
        if widget.show_horizontal_scrollbar:
            widget.horizontal_scrollbar.refresh()
    await pilot.pause()


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("overview", ()),
        ("evidence", ("2",)),
        ("log", ("3",)),
        ("scope", ("4",)),
        ("proposal", ("5",)),
        ("help", ("f1",)),
    ],
)
def test_screen(snap_compare: Any, name: str, keys: tuple[str, ...]) -> None:
    app = SkdbgApp(scene("event-bound-split"))
    assert snap_compare(app, terminal_size=SIZE, run_before=_press_then_settle(*keys))


def test_proposal_refused_cut(snap_compare: Any) -> None:
    app = SkdbgApp(scene("event-bound-split"))

    async def run(pilot: Pilot[Any]) -> None:
        await _press_then_settle("5", "down", "down", "down")(pilot)
        await pilot.press("space")
        await settle(pilot)
        # the toast would time out at a wall-clock-dependent moment: take the picture without it
        pilot.app.clear_notifications()
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
