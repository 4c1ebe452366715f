"""``skdbg tui``: errors before the UI, retry inside it, and the log viewer alone (issue 12 items 5, 6).

Expectations are hand-written from the issue: a scene `analyze` refuses is refused by `tui` with the
same one line and exit 3 before any UI starts; a failed or cancelled analysis is said on every
screen and ``ctrl+r`` (``app.retry``) runs it again; plog files open the viewer without a verdict.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import Static
from tui_support import SIZE, scene, settle

from skdbg.cli import main
from skdbg.tui import cli as tui_cli
from skdbg.tui.app import SkdbgApp
from skdbg.tui.logapp import LogApp
from skdbg.tui.logview import LogView
from skdbg.tui.screens.base import TriageScreen

NOT_A_SCENE = "not a failure scene: no plog, sk_meta or run.json found"


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Record which UI the command would start instead of starting it."""
    calls: list[tuple[str, object]] = []
    monkeypatch.setattr(
        tui_cli, "launch", lambda scene, ctx=None, screen="overview", **_: calls.append(("scene", scene))
    )
    monkeypatch.setattr(tui_cli, "launch_logs", lambda paths: calls.append(("logs", list(paths))))
    return calls


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "scene"
    shutil.copytree(scene("high-single-stream"), dst)
    return dst


def _both(*args: str) -> tuple[tuple[int, str], tuple[int, str]]:
    runner = CliRunner()
    a = runner.invoke(main, ["analyze", *args])
    t = runner.invoke(main, ["tui", *args])
    return (a.exit_code, a.stderr), (t.exit_code, t.stderr)


def test_malformed_run_json_is_refused_before_the_ui_like_analyze(
    tmp_path: Path, launched: list[tuple[str, object]]
) -> None:
    """run.json cut off after a key: analyze and tui exit 3 with the same line naming run.json:2."""
    s = _copy(tmp_path)
    (s / "run.json").write_text('{"pid":\n', encoding="utf-8")
    (a_code, a_err), (t_code, t_err) = _both(str(s))
    assert a_code == t_code == 3
    assert t_err == a_err and len(t_err.splitlines()) == 1
    assert "run.json:2" in t_err and "expected" in t_err
    assert launched == []


def test_malformed_model_source_is_refused_before_the_ui_like_analyze(
    tmp_path: Path, launched: list[tuple[str, object]]
) -> None:
    """src/model.py that is not Python: exit 3 naming src/model.py and the line, before the UI."""
    s = _copy(tmp_path)
    (s / "src" / "model.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    (a_code, a_err), (t_code, t_err) = _both(str(s))
    assert a_code == t_code == 3
    assert t_err == a_err and "src/model.py:2" in t_err and "Python" in t_err
    assert launched == []


@pytest.mark.parametrize("content", ["empty", "random"])
@pytest.mark.parametrize("command", ["analyze", "inspect", "report", "tui"])
def test_a_folder_that_is_no_scene_is_exit_3(
    tmp_path: Path, launched: list[tuple[str, object]], command: str, content: str
) -> None:
    """An empty folder, or one full of unrelated files (text, binary, a stray .log, a sub folder)."""
    folder = tmp_path / "stuff"
    folder.mkdir()
    if content == "random":
        (folder / "notes.txt").write_text("hello\n")
        (folder / "blob.bin").write_bytes(bytes(range(256)))
        (folder / "build.log").write_text("make: *** [all] Error 2\n")
        (folder / "sub").mkdir()
        (folder / "sub" / "data.json").write_text("{}\n")
    argv = [command, str(folder)]
    if command == "report":
        argv += ["-o", str(tmp_path / "r")]
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 3
    assert res.stderr == f"skdbg: error: {folder}: {NOT_A_SCENE}\n"
    assert launched == [] and not (tmp_path / "r").exists()


def test_a_good_scene_is_handed_to_the_ui_opened(launched: list[tuple[str, object]]) -> None:
    res = CliRunner().invoke(main, ["tui", str(scene("high-single-stream"))])
    assert res.exit_code == 0, res.output
    assert launched == [("scene", scene("high-single-stream"))]


def test_plog_files_open_the_log_viewer_alone(tmp_path: Path, launched: list[tuple[str, object]]) -> None:
    plogs = sorted((scene("high-single-stream") / "log" / "plog").glob("*.log"))
    other = tmp_path / "plog-7_1.log"
    other.write_text("[ERROR] RUNTIME(7,python):2026-06-10-14:00:00.000.000 [x.cc:1]7 boom\n")
    runner = CliRunner()
    assert runner.invoke(main, ["tui", str(plogs[0])]).exit_code == 0
    assert runner.invoke(main, ["tui", str(plogs[0]), str(other)]).exit_code == 0
    assert launched == [("logs", [plogs[0]]), ("logs", [plogs[0], other])]


def test_log_mode_refuses_missing_files_and_mixed_folders(
    tmp_path: Path, launched: list[tuple[str, object]]
) -> None:
    plog = sorted((scene("high-single-stream") / "log" / "plog").glob("*.log"))[0]
    runner = CliRunner()
    res = runner.invoke(main, ["tui", str(plog), str(tmp_path / "gone.log")])
    assert res.exit_code == 3 and "gone.log" in res.stderr and len(res.stderr.splitlines()) == 1
    res = runner.invoke(main, ["tui", str(plog), str(scene("high-single-stream"))])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert launched == []


async def test_log_app_has_fault_stops_and_search_and_no_verdict() -> None:
    plog = sorted((scene("high-single-stream") / "log" / "plog").glob("*.log"))[0]
    app = LogApp([plog])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.query_one(LogView)
        assert not app.query(TriageScreen) and not app.query("#overview")
        assert "no verdict" in str(app.query_one("#log-summary", Static).render())
        await pilot.press("e")  # the first fault stop: the file's first [ERROR] line (18)
        await settle(pilot)
        assert view.cursor_location() == (str(plog), 18)
        assert view.cursor_text().startswith("[ERROR] RUNTIME")
        await pilot.press("slash", *"PrintCoreSymbols", "enter")
        await settle(pilot)
        assert "PrintCoreSymbols" in view.cursor_text()


async def test_failed_analysis_is_said_on_every_screen_and_ctrl_r_retries(tmp_path: Path) -> None:
    """run.json broken after the UI started (no pre-check): the screens say so; fixed, ctrl+r works."""
    s = _copy(tmp_path)
    good = (s / "run.json").read_text(encoding="utf-8")
    (s / "run.json").write_text("{", encoding="utf-8")
    app = SkdbgApp(s)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is None
        for key in ("1", "2", "3"):
            await pilot.press(key)
            await settle(pilot)
            text = str(app.screen.query_one("#waiting", Static).render())
            assert "analysis stopped" in text and "run.json" in text and "ctrl+r to retry" in text
        (s / "run.json").write_text(good, encoding="utf-8")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.state is not None and app.status_text == "ready"
        assert app.state.analysis.verdict.rule == "C3"


async def test_cancelled_analysis_can_be_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run is cancelled after its first stage (as Esc does); ctrl+r runs it to the end."""
    import skdbg.tui.app as app_mod

    real = app_mod.run_analysis
    runs: list[int] = []

    def first_cancelled(scene_path: Path, progress: Any, cancelled: Any, *, ctx: Any = None) -> Any:
        runs.append(1)
        if len(runs) == 1:
            return real(scene_path, progress, lambda: True, ctx=ctx)  # cancelled at the first check
        return real(scene_path, progress, cancelled, ctx=ctx)

    monkeypatch.setattr(app_mod, "run_analysis", first_cancelled)
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is None and app.analysis_stopped
        for key in ("1", "4"):
            await pilot.press(key)
            await settle(pilot)
            text = str(app.screen.query_one("#waiting", Static).render())
            assert "cancelled" in text and "ctrl+r to retry" in text
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.state is not None and app.status_text == "ready" and len(runs) == 2


def test_analyze_without_sk_evidence_says_so_and_exits_0(tmp_path: Path) -> None:
    """Only a run.json: no sk_meta, no plog. One line says there is no SK evidence; gaps follow."""
    s = tmp_path / "s"
    s.mkdir()
    shutil.copy(scene("high-single-stream") / "run.json", s / "run.json")
    res = CliRunner().invoke(main, ["analyze", str(s)])
    assert res.exit_code == 0
    notes = [ln for ln in res.stderr.splitlines() if "no SuperKernel evidence" in ln]
    assert len(notes) == 1
    assert "gap F3" in res.stdout and "sk_meta" in res.stdout
