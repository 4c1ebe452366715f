"""Helpers for the TUI tests: open a bundled scene in the app and wait until it settles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
SIZE = (120, 36)


def scene(name: str) -> Path:
    return SCENES / name


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for every worker (analysis, log indexing, re-plans) and the resulting redraws."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
