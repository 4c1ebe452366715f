"""SVG snapshot of the Session screen on a built session (fixed ids and times, so the picture is
stable): a failed base attempt (negative evidence), a round with an invalid and a passing attempt,
and a failed exclusion round with its V1–V5 results."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from session_tui_support import wait_history
from textual.pilot import Pilot
from tui_support import SIZE, settle

from skdbg.sessions.attempts import canonical_sha256
from skdbg.sessions.store import Ledger, NewAttempt
from skdbg.tui.app import SkdbgApp
from skdbg.tui.screens.session_ref import SessionRef

PINNED = {"textual": "8.2.8", "pytest-textual-snapshot": "1.1.0"}
pytestmark = pytest.mark.skipif(
    any(version(name) != want for name, want in PINNED.items()),
    reason=f"SVG snapshots are recorded with {PINNED}",
)
T = "2026-12-03T05:00:00+00:00"
BASE = {
    "gate": {"passed": True},
    "fault": {"kind": "sk", "phase": "device_fault", "entry": "sk_entry_mix11_op_trace"},
    "verdict": {
        "confidence": "high",
        "rule": "C3",
        "suspect": {"func_name": "SwiGlu_41d9e0", "task_index": 2, "node_id": 102},
    },
    "proposal": {"status": "proposed", "mechanism": "explicit_none_exclusion", "excluded": [102]},
}
FIXED = {
    "gate": {"passed": True},
    "fault": {"kind": "none", "phase": "timeout"},
    "verdict": {"confidence": "n/a", "rule": "C0"},
    "proposal": {"status": "none", "excluded": []},
}


def _attempt(change: str, status: str, doc: dict[str, Any] | None, detail: str) -> NewAttempt:
    import json

    snaps = {"analysis.json": json.dumps(doc).encode()} if doc is not None else {}
    return NewAttempt(change, None, 48213, "none", [], status, detail, snaps, created=T)


def build(home: Path) -> None:
    with Ledger(home) as led:
        led.new_session("snapshot", session_id="S1", created=T)
        led.open_round("S1", "EX1-BASE", created=T)
        base = led.record_attempt(
            "S1",
            "EX1-BASE",
            _attempt("the candidate as launched (base round)", "failed", BASE, "sk fault (device_fault)"),
        )
        led.set_status("round", led.round("S1", "EX1-BASE").pk, "failed")
        body = BASE["proposal"]
        led.add_proposal(
            "S1", base, body, canonical_sha256(body), kind="exclusion", status="proposed", created=T
        )
        bad = led.record_attempt(
            "S1", "EX1-BASE-X1", _attempt("relaunch: 1 declared marker edit", "running", None, "")
        )
        led.record_gates(
            bad,
            [("V1", "failed", "markers unbalanced"), ("V2", "not_run", ""), ("V3", "not_run", "")],
            attempt_status="invalid",
            round_status=None,
            proposal_status=None,
            created=T,
        )
        good = led.record_attempt(
            "S1", "EX1-BASE-X1", _attempt("SwiGlu excluded (begin/end None)", "running", FIXED, "")
        )
        led.record_gates(
            good,
            [("V1", "passed", "ready"), ("V2", "passed", "exit 0"), ("V3", "passed", "SwiGlu unfused")]
            + [("V4", "not_run", ""), ("V5", "not_run", "")],
            attempt_status="passed",
            round_status=(led.round("S1", "EX1-BASE-X1").pk, "passed_gates(V1..V3)"),
            proposal_status=None,
            created=T,
        )
        led.add_note("S1", "kept for the parent controller", round_id="EX1-BASE", attempt_no=1, created=T)


def test_session_screen(snap_compare: Any, tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    build(home)
    app = SkdbgApp(None, start_mode="session", session=SessionRef(home, "S1"), missing="no scene")

    async def run(pilot: Pilot[Any]) -> None:
        await wait_history(pilot, 3)
        # from the newest attempt up to round EX1-BASE, open it, down to its failed attempt
        await pilot.press("up", "up", "up", "space", "down")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
