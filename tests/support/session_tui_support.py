"""Ledgers for the TUI Session screen tests: the bundled ``high-single-stream`` failure, its proposal,
and (optionally) the re-launched candidate verified V1–V3 — written through the same functions the
``skdbg session`` commands call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_support import FAILING, build_fixed_scene
from textual.pilot import Pilot

from skdbg.sessions.attempts import propose
from skdbg.sessions.store import Ledger
from skdbg.workflow import freeze, verify_round

SID = "S1"


def base_session(home: Path, *, verified: bool = True, scene: Path = FAILING) -> str:
    """Session ``S1``: EX1-BASE/attempt-001 (the failure, frozen), round EX1-BASE-X1 opened by its
    proposal and, when ``verified``, EX1-BASE-X1/attempt-001 (the fixed candidate, V1–V3 passed)."""
    with Ledger(home) as ledger:
        ledger.new_session("tui test", session_id=SID)
        freeze(ledger, SID, scene)
        rid, _ = propose(ledger, SID, "EX1-BASE", 1)
        if verified:
            body = ledger.proposal(SID, rid).body
            fixed = build_fixed_scene(home.parent / "fixed", rid, body)
            freeze(ledger, SID, fixed, change="SwiGlu excluded (begin/end None)")
            verify_round(ledger, SID, rid, 1)
        ledger.add_note(SID, "first look", round_id="EX1-BASE", attempt_no=1)
    return SID


async def wait_history(pilot: Pilot[Any], rows: int) -> None:
    """The verdict history fills in from a worker started just after the first paint: wait for it."""
    from textual.widgets import DataTable
    from tui_support import settle

    for _ in range(200):
        await settle(pilot)
        found = pilot.app.screen.query("#session-verdicts")
        if found and found.first(DataTable).row_count >= rows:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"the verdict history never reached {rows} rows")
