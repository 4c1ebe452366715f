"""Issue 16 item 4 (log bookmarks: ``m`` sets, ``'``/``"`` jump, the palette lists them, kept across
runs per unchanged file) and item 5 (``?`` explains the ids on the current row, in the glossary's
words)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from textual.worker import WorkerCancelled
from tui_support import SIZE, scene
from tui_support import settle as settle_app

from skdbg.glossary import codes_in
from skdbg.tui.app import SkdbgApp
from skdbg.tui.bookmark_commands import bookmark_commands
from skdbg.tui.logapp import LogApp
from skdbg.tui.logview import LogView
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.dialogs import ExplainScreen
from skdbg.tui.settings import save_bookmarks, saved_bookmarks


def write_plog(path: Path, n: int) -> Path:
    # hand-written plog lines (artifacts.md §1 shape), one second apart, no fault markers
    path.write_text(
        "".join(
            f"[INFO] GE(7,python3):2026-06-10-14:00:{i % 60:02d}.000.000 [graph.cc:{i + 1}] 7 Fn: step {i + 1}\n"
            for i in range(n)
        ),
        encoding="utf-8",
    )
    return path


async def settle(app: LogApp, pilot: Pilot[None]) -> None:
    for _ in range(3):
        with contextlib.suppress(WorkerCancelled):
            await app.workers.wait_for_complete()
        await pilot.pause()


def status(app: LogApp) -> str:
    return str(app.query_one("#log-status", Static).render())


def test_codes_in_finds_known_ids_in_order_once() -> None:
    text = "blocked: §4.4 rule 3 — T4 quote, C3; V2 not_run; T4 again; §4.2(a); §9.9 zz_top Q77 high"
    assert codes_in(text) == ["§4.4 rule 3", "T4", "C3", "V2", "not_run", "§4.2(a)"]
    # a section rule the glossary lacks falls back to its section
    assert codes_in("see §4.4 rule 9") == ["§4.4"]
    assert codes_in("nothing to explain here") == []


async def test_bookmarks_set_jump_wrap_list_and_mark_the_margin(tmp_path: Path) -> None:
    log = write_plog(tmp_path / "plog-7_1.log", 300)
    app = LogApp([log])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.query_one(LogView)
        for line in (40, 200):
            view.goto(log, line)
            await settle(app, pilot)
            await pilot.press("m")
            await settle(app, pilot)
        assert [(Path(p).name, n) for p, n, _ in view.bookmarks()] == [
            ("plog-7_1.log", 40),
            ("plog-7_1.log", 200),
        ]
        assert "bookmark 2/2" in status(app)
        view.goto(log, 1)
        await settle(app, pilot)
        await pilot.press("apostrophe")
        await settle(app, pilot)
        assert view.cursor_location() == (str(log), 40)
        assert "bookmark 1/2" in status(app)
        # the bookmarked line carries the mark in the margin
        row = view.cursor_row - view.scroll_offset.y
        assert "▸" in view.render_line(row).text
        await pilot.press("apostrophe")
        await settle(app, pilot)
        assert view.cursor_location() == (str(log), 200)
        await pilot.press("apostrophe")  # wraps to the first
        await settle(app, pilot)
        assert view.cursor_location() == (str(log), 40)
        await pilot.press("quotation_mark")  # backwards wraps to the last
        await settle(app, pilot)
        assert view.cursor_location() == (str(log), 200)
        # the palette names each bookmark with its text, and jumps there
        names = [name for name, _, _ in bookmark_commands(view)]
        assert names[-2:] == ["Bookmark: plog-7_1.log:40", "Bookmark: plog-7_1.log:200"]
        help_40 = [h for name, _, h in bookmark_commands(view) if name.endswith(":40")]
        assert help_40 and help_40[0].endswith("Fn: step 40")
        jump_40 = next(cb for name, cb, _ in bookmark_commands(view) if name.endswith(":40"))
        jump_40()
        await settle(app, pilot)
        assert view.cursor_location() == (str(log), 40)
        # m again clears it
        await pilot.press("m")
        await settle(app, pilot)
        assert [n for _, n, _ in view.bookmarks()] == [200]
        assert "▸" not in view.render_line(view.cursor_row - view.scroll_offset.y).text


async def test_no_bookmarks_says_how_to_set_one(tmp_path: Path) -> None:
    log = write_plog(tmp_path / "plog-7_1.log", 20)
    app = LogApp([log])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("apostrophe")
        await settle(app, pilot)
        assert any("no bookmarks: m sets one" in str(n.message) for n in app._notifications)


async def test_bookmarks_are_kept_across_runs_only_when_the_cli_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    log = write_plog(tmp_path / "plog-7_1.log", 100)
    first = LogApp([log])
    first.restore_choices()
    async with first.run_test(size=SIZE) as pilot:
        await settle(first, pilot)
        first.query_one(LogView).goto(log, 33)
        await settle(first, pilot)
        await pilot.press("m")
        await settle(first, pilot)
    assert saved_bookmarks(log) == [33]
    second = LogApp([log])
    second.restore_choices()
    async with second.run_test(size=SIZE) as pilot:
        await settle(second, pilot)
        assert [n for _, n, _ in second.query_one(LogView).bookmarks()] == [33]
    # without the CLI's restore (tests, embedders) nothing is read
    third = LogApp([log])
    async with third.run_test(size=SIZE) as pilot:
        await settle(third, pilot)
        assert third.query_one(LogView).bookmarks() == []


def test_saved_bookmarks_are_dropped_when_the_file_changed(tmp_path: Path) -> None:
    store = tmp_path / "tui.json"
    log = write_plog(tmp_path / "a.log", 10)
    save_bookmarks(log, [3, 7, 3], store)
    assert saved_bookmarks(log, store) == [3, 7]
    st = log.stat()
    with log.open("a", encoding="utf-8") as fh:  # appended: other size
        fh.write("one more line\n")
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert saved_bookmarks(log, store) == []
    save_bookmarks(log, [], store)  # an empty list forgets the file
    assert "a.log" not in store.read_text(encoding="utf-8")


async def test_question_mark_explains_the_selected_evidence_row() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle_app(pilot)
        await pilot.press("2")
        await settle_app(pilot)
        chain = app.screen.query_one("#chain", DataTable)
        assert chain.has_focus
        await pilot.press("question_mark")
        await settle_app(pilot)
        screen = app.screen
        # the first chain item is the plog fault line (level "fault", §3.2)
        assert isinstance(screen, ExplainScreen) and screen.codes[0] == "fault"
        await pilot.press("question_mark")  # ? again closes it
        await settle_app(pilot)
        assert not isinstance(app.screen, ExplainScreen)
        await pilot.press("1")
        await settle_app(pilot)
        await pilot.press("question_mark")
        await settle_app(pilot)
        screen = app.screen
        # the overview: the verdict's rule first (C3), then the other codes on the summary
        assert isinstance(screen, ExplainScreen) and screen.codes[0] == "C3"
        assert "explicit_none_exclusion" in screen.codes


async def test_question_mark_with_no_id_asks_for_one(tmp_path: Path) -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"), start_mode="log")
    async with app.run_test(size=SIZE) as pilot:
        await settle_app(pilot)
        for _ in range(500):
            view = getattr(app.screen, "view", None)
            if isinstance(view, LogView) and view.indexing_done and view.has_focus:
                break
            await pilot.pause(0.02)
        # the first plog line names no glossary id
        await pilot.press("g")
        await settle_app(pilot)
        await pilot.press("question_mark")
        await settle_app(pilot)
        assert isinstance(app.screen, PromptScreen)
