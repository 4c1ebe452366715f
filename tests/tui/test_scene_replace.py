"""A replaced scene's late messages change nothing — also when the new rank lives in the same folder.

Why: a scan lists one rank per (folder, pid), so two ranks can share a folder (``pids_in_folder`` > 1).
Enter on the second while the first one's analysis still runs replaces it (``SkdbgApp.open_scene``);
the first worker is only *asked* to stop (threads poll between stages), so it may still report
"cancelled" or even a finished analysis afterwards. Either must be ignored: the app shows the rank it
opened last. The first worker is held on an event here so the order is fixed, not timed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.worker import WorkerCancelled
from tui_support import SIZE, scene, settle

import skdbg.tui.app as app_mod
from skdbg.tui.app import SkdbgApp

FOLDER = scene("aiv-fault-add-custom")
OLD_PID, NEW_PID = 48213, 48214


async def _settle(pilot: Any) -> None:
    for _ in range(400):  # a cancelled worker makes settle() raise until it has ended
        try:
            await settle(pilot)
            return
        except WorkerCancelled:
            await pilot.pause(0.05)


@pytest.mark.parametrize("late", ["cancelled", "finished"])
async def test_the_replaced_ranks_late_report_is_ignored(monkeypatch: pytest.MonkeyPatch, late: str) -> None:
    release = threading.Event()
    calls: list[int] = []
    real = app_mod.run_analysis

    def held(scene_path: Path, progress: Any, cancelled: Any, *, ctx: Any = None) -> Any:
        calls.append(len(calls))
        if len(calls) == 1:  # the first rank's analysis: still running when the second rank opens
            release.wait(10)
            if late == "finished":  # its last stage ended after the cancel request
                return real(scene_path, progress, lambda: False, ctx=ctx)
        return real(scene_path, progress, cancelled, ctx=ctx)

    monkeypatch.setattr(app_mod, "run_analysis", held)
    app = SkdbgApp(None, start_mode="overview")
    async with app.run_test(size=SIZE) as pilot:
        app.open_scene(FOLDER, pid=OLD_PID, title="rank 0")
        for _ in range(200):
            if calls:
                break
            await pilot.pause(0.01)
        app.open_scene(FOLDER, pid=NEW_PID, title="rank 1")
        for _ in range(400):  # the second rank's analysis completes first …
            if app.state is not None:
                break
            await pilot.pause(0.02)
        new_state = app.state
        assert new_state is not None and app.status_text == "ready"
        release.set()  # … then the first one reports
        await _settle(pilot)
        assert app.pid == NEW_PID and app.sub_title == "rank 1"
        assert app.state is new_state
        assert app.status_text == "ready" and not app.analysis_stopped
        assert not any((n.title or "") == "analysis stopped" for n in app._notifications)
