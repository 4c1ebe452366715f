"""Helpers for the TUI tests: open a bundled scene in the app and wait until it settles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
SIZE = (120, 36)


def scene(name: str) -> Path:
    return SCENES / name


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for every worker (analysis, log indexing, re-plans) and the redraws they cause.

    Workers start workers (the log view indexes, then scans faults, then orders rows), so one
    ``wait_for_complete`` is not enough: wait until two consecutive rounds find nothing pending. A
    worker of an exclusive group (the log view's reads) is cancelled when a newer one replaces it;
    waiting on it then raises, and the round simply counts as busy."""
    quiet = 0
    for _ in range(100):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            quiet = 0
            await pilot.pause()
            continue
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        busy = any(not w.is_finished for w in pilot.app.workers)
        quiet = 0 if busy else quiet + 1
        if quiet >= 2:
            return
