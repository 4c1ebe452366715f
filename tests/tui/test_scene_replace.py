"""A replaced scene's late messages change nothing — also when the new rank lives in the same folder.

Why: a scan lists one rank per (folder, pid), so two ranks can share a folder (``pids_in_folder`` > 1).
Enter on the second while the first one's analysis still runs replaces it (``SkdbgApp.open_scene``);
the first worker is only *asked* to stop (threads poll between stages), so it may still report
"cancelled" or even a finished analysis afterwards. Either must be ignored: the app shows the rank it
opened last. The first worker is held on an event here so the order is fixed, not timed.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from fleet_support import _sim_scene
from textual.widgets import DataTable, Input, Static
from textual.worker import WorkerCancelled
from tui_support import SIZE, scene, settle

import skdbg.tui.app as app_mod
from skdbg.sessions.store import Ledger
from skdbg.tui.app import SkdbgApp
from skdbg.tui.screens.session_ref import SessionRef

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


async def test_after_opening_another_rank_accept_records_that_ranks_scene(tmp_path: Path) -> None:
    """Accept on rank A puts the app in a session whose attempt is A's frozen scene; after Enter on
    rank B (open_scene), Accept must take B's proposal from B's scene (frozen now), not from A's attempt."""
    home = tmp_path / "ledger"
    first, second = tmp_path / "rank0", tmp_path / "rank1"  # two ranks of one job: two processes
    _sim_scene(tmp_path / "models", first, 0, 11, 2)
    _sim_scene(tmp_path / "models", second, 1, 12, 4)
    run = json.loads((second / "run.json").read_text(encoding="utf-8"))
    run["round_id"] = "SIM-R1"  # its own attempt (the same name twice is R7's business, not this test's)
    (second / "run.json").write_text(json.dumps(run), encoding="utf-8")
    with Ledger(home) as ledger:
        ledger.new_session("ranks", session_id="S7")
    app = SkdbgApp(first, start_mode="proposal", session=SessionRef(home))
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await pilot.press("a")
        await _settle(pilot)
        app.screen.query_one(Input).value = "S7"
        await pilot.press("enter")
        await _settle(pilot)
        assert app.state is not None and app.state.accepted
        app.open_scene(second, title="rank 1")
        await _settle(pilot)
        assert app.state is not None and app.state.scene == second and not app.state.accepted
        # the Session screen no longer claims the other screens show rank A's attempt
        await pilot.press("6")
        await _settle(pilot)
        head = str(app.screen.query_one("#session-head", Static).render())
        assert "other screens show: the scene rank1, not an attempt of this session" in head
        await pilot.press("5")
        await pilot.press("a")
        await _settle(pilot)
        assert app.state.accepted and app.state.decision is not None
        second_round = app.state.decision.round_id
        assert app.state.decision.source_attempt == "SIM-R1/attempt-001"
    with Ledger(home) as ledger:
        by_round = {p.round_id: p for p in ledger.proposals("S7")}
        source = by_round[second_round]
        attempt = ledger.attempt("S7", source.source_round, source.source_attempt)
        assert attempt.scene_root == str(second)
        assert sorted(a.scene_root for a in ledger.attempts("S7")) == sorted([str(first), str(second)])


@pytest.mark.parametrize("key", ["o", "e", "f", "a"])
async def test_ranks_keys_without_a_scan_say_no_scan_is_open(key: str) -> None:
    """On a plain scene the Ranks screen's own keys answer "no scan", never "no failing rank in this scan"
    (there is no scan) and never silence."""
    app = SkdbgApp(scene("high-single-stream"), start_mode="ranks")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await pilot.press(key)
        await _settle(pilot)
        assert app.current_mode == "ranks" and app.scene == scene("high-single-stream")
        messages = [n.message for n in app._notifications]
        assert len(messages) == 1 and messages[0].startswith("no scan is open"), messages


async def test_a_replan_that_ends_after_the_scene_was_replaced_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edit's re-plan (a worker) of rank A that ends after Enter opened rank B must not become B's
    proposal: B's state keeps its own engine proposal and no edit in its history."""
    import skdbg.triage.edit as edit

    release = threading.Event()
    started = threading.Event()
    real = edit.replan

    def held(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(edit, "replan", held)
    first, second = scene("event-bound-split"), scene("high-single-stream")
    app = SkdbgApp(first, start_mode="proposal")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        screen = app.screen
        screen.query_one("#kernels", DataTable).move_cursor(row=4)  # a legal addition to the cut
        await pilot.press("space")
        for _ in range(200):
            if started.is_set():
                break
            await pilot.pause(0.01)
        assert started.is_set()
        app.action_show("ranks")
        await pilot.pause()
        app.open_scene(second, title="rank 1")
        for _ in range(400):
            if app.state is not None:
                break
            await pilot.pause(0.02)
        st = app.state
        assert st is not None and st.scene == second
        engine = st.analysis.proposal
        release.set()
        await _settle(pilot)
        assert app.state is st and st.proposal is engine and st.history == []


async def test_retry_on_a_scan_without_an_opened_rank_points_at_the_ranks_screen() -> None:
    doc: dict[str, Any] = {"ranks": [], "first_failing": None}  # only the app's own fields are read here
    app = SkdbgApp(None, scan=doc, start_mode="overview", missing="no rank opened")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await pilot.press("ctrl+r")
        await _settle(pilot)
        assert [n.message for n in app._notifications] == [
            "no scene to analyse: Enter on a rank (9) opens one"
        ]
