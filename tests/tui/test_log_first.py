"""The Log screen does not wait for the analysis (issue 18 item 7), and the stages run once.

Expectations from the issue: with the analysis still running (held here on an event), the Log screen
already shows the scene's plog lines; when the analysis ends, the Overview fills in. The engine runs
each stage exactly once and reports it to the progress callback.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tui_support import SIZE, scene, settle

import skdbg.tui.app as app_mod
from skdbg.triage import engine
from skdbg.triage.context import check_inputs, open_context
from skdbg.tui.app import SkdbgApp
from skdbg.tui.logview import LogView
from skdbg.tui.state import run_analysis


@pytest.mark.parametrize("opened_by_cli", [True, False])
async def test_log_lines_show_while_the_analysis_runs(
    monkeypatch: pytest.MonkeyPatch, opened_by_cli: bool
) -> None:
    release = threading.Event()
    real = app_mod.run_analysis

    def held(scene_path: Path, progress: Any, cancelled: Any, *, ctx: Any = None) -> Any:
        assert release.wait(30), "the test never released the analysis"
        return real(scene_path, progress, cancelled, ctx=ctx)

    monkeypatch.setattr(app_mod, "run_analysis", held)
    root = scene("high-single-stream")
    ctx = None
    if opened_by_cli:
        ctx = open_context(root)
        check_inputs(ctx)
    app = SkdbgApp(root, ctx=ctx)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")  # the Log mode
        for _ in range(200):
            await pilot.pause(0.02)
            views = list(app.screen.query(LogView))
            if views and views[0].row_count > 0 and views[0].cursor_text():
                break
        assert app.state is None, "the analysis finished before the log was shown: the test proves nothing"
        view = app.screen.query_one(LogView)
        plog = next((root / "log" / "plog").glob("plog-*.log"))
        lines = plog.read_text(encoding="utf-8").splitlines()
        assert view.row_count == len(lines)
        assert view.cursor_text() == lines[0]
        release.set()
        await settle(pilot)
        assert app.state is not None and app.state.analysis.verdict.rule == "C3"


def test_every_stage_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[str, int] = {}
    for name in ("localize", "draft_gate", "attribute", "grade", "propose", "route"):
        real = getattr(engine, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*args, **kw)

        monkeypatch.setattr(engine, name, counted)
    seen: list[tuple[str, int, int]] = []
    state = run_analysis(scene("high-single-stream"), lambda *a: seen.append(a), lambda: False)
    assert calls == {n: 1 for n in ("localize", "draft_gate", "attribute", "grade", "propose", "route")}
    assert [s[0] for s in seen] == [
        "open scene",
        "localise",
        "gate",
        "attribute",
        "grade",
        "propose",
        "route",
        "done",
    ]
    assert [s[1] for s in seen] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert state.analysis.verdict.rule == "C3"


async def test_screen_option_opens_the_log_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """`skdbg tui SCENE --screen log` starts on the Log screen (what bench/tui_open.py times)."""
    from click.testing import CliRunner

    from skdbg.cli import main
    from skdbg.tui import cli as tui_cli

    started: list[tuple[Path | None, str]] = []
    monkeypatch.setattr(
        tui_cli, "launch", lambda scene, ctx=None, screen="overview", **_: started.append((scene, screen))
    )
    root = scene("high-single-stream")
    res = CliRunner().invoke(main, ["tui", str(root), "--screen", "log"])
    assert res.exit_code == 0, res.output
    assert started == [(root, "log")]
    bad = CliRunner().invoke(main, ["tui", str(root), "--screen", "nowhere"])
    assert bad.exit_code == 2
    app = SkdbgApp(root, start_mode="log")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.current_mode == "log"
        assert app.screen.query_one(LogView).row_count > 0
