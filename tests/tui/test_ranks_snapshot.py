"""SVG snapshot of the Ranks screen on the scanned 64-rank job (pytest-textual-snapshot).

Deterministic: the job is built by tests/support/fleet_support.py with fixed seeds and times, its
paths made relative to its parent folder (the test's working directory), and the picture is taken once the first
failing rank's analysis (opened at start) has finished. Same pinned versions as test_snapshots.py.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from fleet_support import build_job
from textual.pilot import Pilot
from tui_support import SIZE, settle

from skdbg.fleet import decide, discover, scan_all, scan_doc
from skdbg.tui.screens.ranks_open import scan_app

PINNED = {"textual": "8.2.8", "pytest-textual-snapshot": "1.1.0"}
pytestmark = pytest.mark.skipif(
    any(version(name) != want for name, want in PINNED.items()),
    reason=f"SVG snapshots are recorded with {PINNED}",
)


def test_ranks_screen(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_job(tmp_path)
    monkeypatch.chdir(tmp_path)
    found = discover(["job"])
    doc = scan_doc(
        decide(scan_all(found.ranks, workers=1)), roots=["job"], problems=[], engine="local pool, 1 workers"
    )
    # the paths of a scan saved and re-opened from the job's parent folder (skdbg tui --scan): relative
    doc = json.loads(json.dumps(doc).replace(f"{tmp_path}/", ""))
    assert doc["ranks"][17]["folder"] == "job/scenes/s17"
    app = scan_app(doc)

    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        assert app.state is not None  # the first failing rank's analysis is in the "Opened" line

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
