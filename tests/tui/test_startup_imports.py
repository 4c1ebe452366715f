"""`skdbg tui SCENE --screen log` paints the log before the triage stack loads (issue 18 item 7, bench
tui_open).

Expectations from the issue and the coordinator's note: the app's own modules do not import the triage
engine or the artifact parsers (they load in the analysis worker); the input check of `skdbg tui` stays
before the UI but needs only the scene inventory and the two checked files; and when the app opens on the
Log screen, the analysis starts only after the first log line was painted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tui_support import SIZE, scene, settle

import skdbg.tui.app as app_mod
from skdbg.tui.app import SkdbgApp
from skdbg.tui.logview import LogView

REPO = Path(__file__).resolve().parents[2]

#: modules that only the analysis needs: the engine stages and the parsers of the big artifacts
HEAVY = (
    "skdbg.triage.engine",
    "skdbg.triage.attribution",
    "skdbg.triage.localize",
    "skdbg.triage.proposal",
    "skdbg.parsers.sk_handler",
    "skdbg.parsers.super_kernel_log",
    "skdbg.parsers.device_args",
    "skdbg.parsers.binfiles",
    "skdbg.parsers.task_queue",
    # the new screens' stacks load when first used: pictures, the scan package, graphs, codegen
    "skdbg.pictures.render",
    "skdbg.pictures.timeline",
    "skdbg.fleet.run",
    "skdbg.fleet.scandoc",
    "networkx",
    "skdbg.codegen.fusion.candidate",
)

_PROBE = """
import json, sys
import skdbg.tui.app
from skdbg.triage.context import check_inputs, open_context
ctx = open_context(sys.argv[1])
check_inputs(ctx)
print(json.dumps(sorted(m for m in sys.modules if m in set(sys.argv[2:]))))
"""


def test_app_import_and_input_check_leave_the_analysis_stack_unloaded() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(scene("high-single-stream")), *HEAVY],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


async def test_on_the_log_screen_the_analysis_starts_after_the_first_painted_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[float] = []
    real = app_mod.run_analysis

    def noted(scene_path: Path, progress: Any, cancelled: Any, *, ctx: Any = None) -> Any:
        started.append(time.perf_counter())
        return real(scene_path, progress, cancelled, ctx=ctx)

    monkeypatch.setattr(app_mod, "run_analysis", noted)
    app = SkdbgApp(scene("high-single-stream"), start_mode="log")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(LogView)
        assert app.state is not None and app.state.analysis.verdict.rule == "C3"
        assert view.first_paint_time is not None and len(started) == 1
        assert view.first_paint_time <= started[0]
