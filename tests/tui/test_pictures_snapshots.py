"""SVG snapshots of the pictures in the TUI on bundled scenes (pytest-textual-snapshot).

The Timeline mode (``8``) and the Scope screen's graph (``4`` then ``g``), at the fixed size of the
other snapshots. Update with ``--snapshot-update`` after checking the HTML report; only meaningful
with the pinned Textual / plugin versions (other versions are skipped, as in test_snapshots.py).
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


def _press(*keys: str) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


@pytest.mark.parametrize("name", ["event-bound-split", "duplicate-symbol-medium"])
def test_timeline(snap_compare: Any, name: str) -> None:
    assert snap_compare(SkdbgApp(scene(name)), terminal_size=SIZE, run_before=_press("8"))


@pytest.mark.parametrize("name", ["event-bound-split", "high-single-stream"])
def test_scope_graph(snap_compare: Any, name: str) -> None:
    assert snap_compare(SkdbgApp(scene(name)), terminal_size=SIZE, run_before=_press("4", "g"))
