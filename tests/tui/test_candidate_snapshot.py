"""SVG snapshots of the Candidate screen on bundled scenes (pytest-textual-snapshot), recorded like
tests/tui/test_snapshots.py: pinned versions, bundled scenes, every worker finished first."""

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


async def _candidate(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("7")
    await settle(pilot)


@pytest.mark.parametrize("name", ["event-bound-split", "non-sk-fault"])
def test_candidate_screen(snap_compare: Any, name: str) -> None:
    """event-bound-split: a split across an event pair (two streams before, two SKs after);
    non-sk-fault: no exclusion proposed, so the screen shows the CLI's refusal."""
    assert snap_compare(SkdbgApp(scene(name)), terminal_size=SIZE, run_before=_candidate)
