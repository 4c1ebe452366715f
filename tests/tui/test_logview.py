"""The plog viewer widget (skdbg.tui.logview.LogView) driven through Textual's Pilot (issue 4 "Log").

A tiny host App embeds the widget the way the Log screen does. Covered: goto a cited line (also
before indexing reaches it), search forward/backward with ``/``, ``n``, ``N``, fault navigation with
``e``/``E`` (incidents) and ``]``/``[`` (fault lines), the status bar and legend (issue 16), level/module/pid filters, time merge of two files, cancelling the index, and the issue's
test — a 200 MB generated plog shows its first screen before indexing finishes.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static
from textual.worker import WorkerCancelled
from tui_support import scene
from tui_support import settle as settle_app

from skdbg.parsers.lineindex import IndexProgress, LineIndex
from skdbg.parsers.plog_line import format_plog_ts
from skdbg.scenebuilder import plog as sb
from skdbg.tui.app import SkdbgApp
from skdbg.tui.logapp import LogApp
from skdbg.tui.logview import LogView, parse_filter
from skdbg.tui.prompt import PromptScreen

T0 = datetime(2026, 6, 10, 14, 0, 0)
SIZE = (120, 24)


class Host(App[None]):
    BINDINGS = [("escape", "app_escape", "Back")]

    def __init__(self, paths: Sequence[Path], merge: bool = True) -> None:
        super().__init__()
        self.paths = list(paths)
        self.merge = merge
        self.progress: list[LogView.Progress] = []
        self.selected: list[LogView.LineSelected] = []
        self.searches: list[LogView.SearchDone] = []
        self.escapes = 0

    def action_app_escape(self) -> None:
        self.escapes += 1

    def compose(self) -> ComposeResult:
        yield LogView(self.paths, merge=self.merge, id="log")

    def on_mount(self) -> None:
        self.query_one(LogView).focus()

    def on_log_view_progress(self, msg: LogView.Progress) -> None:
        self.progress.append(msg)

    def on_log_view_line_selected(self, msg: LogView.LineSelected) -> None:
        self.selected.append(msg)

    def on_log_view_search_done(self, msg: LogView.SearchDone) -> None:
        self.searches.append(msg)


async def until(pilot: Pilot[None], cond: Callable[[], bool], timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.01)


async def settle(app: Host, pilot: Pilot[None]) -> None:
    """Let every worker finish (or end cancelled) and the messages they posted be handled."""
    for _ in range(2):
        with contextlib.suppress(WorkerCancelled):
            await app.workers.wait_for_complete()
        await pilot.pause()


def screen_lines(view: LogView) -> list[str]:
    return [view.render_line(y).text for y in range(view.size.height)]


def plog(ts: datetime, pid: int, level: str, module: str, text: str) -> str:
    return f"[{level}] {module}({pid},python3):{format_plog_ts(ts)} [x.cc:1] {pid} Fn:{text}"


@pytest.fixture
def scene_plog(tmp_path: Path) -> Path:
    """3,000 noise lines with runtime fault incidents at lines 1001 and 2201 (1-based)."""
    rng = random.Random(11)
    lines = sb.noise_lines(rng, 3000, pid=7, start=T0)
    for at, sec in ((2200, 2), (1000, 1)):
        lines[at:at] = sb.runtime_incident_lines(T0 + timedelta(seconds=sec), pid=7)
    p = tmp_path / "plog-7_20260610140000000.log"
    p.write_text("\n".join(lines) + "\n")
    return p


async def test_goto_cited_line_scrolls_and_highlights(scene_plog: Path) -> None:
    app = Host([scene_plog])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        view.goto(scene_plog, 1002)  # may run before the index reaches it: applied when it does
        await settle(app, pilot)
        assert view.cursor_location() == (str(scene_plog), 1002)
        assert "ProcessStarsCoreErrorInfo" in view.cursor_text()
        top = view.scroll_offset.y
        assert top < view.cursor_row < top + view.size.height
        rows = screen_lines(view)
        at = view.cursor_row - top
        assert rows[at].lstrip().startswith("1002•") and "ProcessStarsCoreErrorInfo" in rows[at]
        await pilot.press("enter")
        await pilot.pause()
        assert [(s.path, s.line) for s in app.selected] == [(str(scene_plog), 1002)]
        assert "ProcessStarsCoreErrorInfo" in app.selected[0].text
        await pilot.press("ctrl+g")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"25", "enter")
        await pilot.pause()
        assert view.cursor_location() == (str(scene_plog), 25)


async def test_goto_waits_for_the_index_to_reach_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "plog-6_1.log"
    p.write_text("".join(f"line {i + 1}\n" for i in range(60_000)))
    gate = threading.Event()
    build = LineIndex.build

    def gated(self: LineIndex, *args: Any, **kwargs: Any) -> Iterator[IndexProgress]:
        for n, progress in enumerate(build(self, *args, **kwargs)):
            yield progress
            if n == 0:  # hold the indexer after its first batch until the test lets it go on
                gate.wait(10)

    monkeypatch.setattr(LineIndex, "build", gated)
    app = Host([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await until(pilot, lambda: view.row_count > 0)
        assert view.row_count < 50_000
        view.goto(p, 50_000)
        await pilot.pause()
        assert view.cursor_location() == (str(p), 1)  # pending: line 50000 is not indexed yet
        gate.set()
        await settle(app, pilot)
        assert view.cursor_location() == (str(p), 50_000)
        await until(pilot, lambda: "line 50000" in "".join(screen_lines(view)))


async def test_fault_navigation_with_e_and_E(scene_plog: Path) -> None:
    """``e``/``E`` stop once per incident; ``]``/``[`` stop at every fault line (issue 16 defect 5)."""
    app = Host([scene_plog])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.fault_count == 2  # two incidents (1 s apart) ...
        assert view.fault_line_count == 14  # ... of seven runtime fault lines each
        await pilot.press("e")
        assert view.cursor_location() == (str(scene_plog), 1001)
        await pilot.press("e")
        assert view.cursor_location() == (str(scene_plog), 2208)  # first line of the second incident
        await pilot.press("E")
        assert view.cursor_location() == (str(scene_plog), 1001)
        seen = []
        for _ in range(8):
            await pilot.press("right_square_bracket")
            seen.append(view.cursor_location())
        assert [loc[1] for loc in seen if loc] == [*range(1002, 1008), 2208, 2209]
        await pilot.press("left_square_bracket")
        assert view.cursor_location() == (str(scene_plog), 2208)
        await pilot.press("g")
        assert not view.prev_fault()
        await pilot.press("G")
        assert not view.next_fault()
        assert view.cursor_location() == (str(scene_plog), 3014)


async def test_search_forward_backward_and_repeat(scene_plog: Path) -> None:
    app = Host([scene_plog])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        await pilot.press("slash")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"kernel execute failed", "enter")
        await settle(app, pilot)
        assert view.cursor_location() == (str(scene_plog), 1006)
        assert app.searches[-1].found and app.searches[-1].line == 1006
        await pilot.press("n")
        await settle(app, pilot)
        assert view.cursor_location() == (str(scene_plog), 2213)
        await pilot.press("n")
        await settle(app, pilot)
        assert view.cursor_location() == (str(scene_plog), 2213)  # nothing further: cursor stays
        assert not app.searches[-1].found
        await pilot.press("N")
        await settle(app, pilot)
        assert view.cursor_location() == (str(scene_plog), 1006)
        assert view.search(r"AddTask\w+:\[EXEC\]", backwards=True)
        await settle(app, pilot)
        loc = view.cursor_location()
        assert loc is not None and loc[1] < 1006 and "AddTaskToStream" in view.cursor_text()
        assert not view.search("([unclosed")  # a bad regex is refused, not raised
        segments = list(view.render_line(view.cursor_row - view.scroll_offset.y))
        hit = [s for s in segments if s.text.startswith("AddTaskToStream:[EXEC]")]
        assert hit and hit[0].style is not None and hit[0].style.bgcolor is not None  # highlighted


async def test_filters_by_level_module_and_pid(tmp_path: Path) -> None:
    lines = []
    for i in range(300):
        level = ("INFO", "ERROR", "DEBUG")[i % 3]
        module = ("RUNTIME", "GE")[i % 2]
        lines.append(plog(T0 + timedelta(milliseconds=i), 100 + i % 5, level, module, f"m{i}"))
        if i == 4:
            lines.append("  continuation of m4")
    p = tmp_path / "plog-100_20260610140000000.log"
    p.write_text("\n".join(lines) + "\n")
    app = Host([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.row_count == 301
        view.goto(p, 5)
        view.set_filter(levels={"error"})
        await settle(app, pilot)
        assert view.row_count == 101  # i % 3 == 1, plus the continuation line of m4 (inherits ERROR)
        assert view.cursor_location() == (str(p), 5)  # the cursor stays on its line across a filter
        shown = [view.cursor_text()]
        for _ in range(3):
            await pilot.press("down")
            shown.append(view.cursor_text())
        assert [s.rsplit(":", 1)[-1] for s in shown] == ["m4", "  continuation of m4", "m7", "m10"]
        assert "[ERROR]" in shown[2]
        view.set_filter(levels={"INFO"}, modules={"RUNTIME"}, pids={100})
        await settle(app, pilot)
        # i % 3 == 0, i % 2 == 0, i % 5 == 0  ->  i % 30 == 0; line i=0 keeps nothing extra
        assert view.row_count == 10
        await pilot.press("g")
        assert view.cursor_location() == (str(p), 1)
        view.set_filter(modules={"RUNTIME"}, pids={104})
        await settle(app, pilot)
        # i % 2 == 0 and i % 5 == 4: i = 4, 14, ...; the continuation of m4 inherits m4's fields
        assert view.row_count == 31
        await pilot.press("f")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("ctrl+a", "ctrl+k", "enter")  # empty filter = all lines
        await settle(app, pilot)
        assert view.row_count == 301 and not view.filter.active


def test_parse_filter_text() -> None:
    flt = parse_filter("level=error,Info module=GE pid=1,2")
    assert flt.levels == {"ERROR", "INFO"} and flt.modules == {"GE"} and flt.pids == {1, 2}
    assert not parse_filter("").active
    with pytest.raises(ValueError, match="unknown field"):
        parse_filter("colour=red")
    with pytest.raises(ValueError, match="decimal"):
        parse_filter("pid=abc")
    with pytest.raises(ValueError, match="expected"):
        parse_filter("level")


async def test_merge_of_two_files_by_time(tmp_path: Path) -> None:
    a = [plog(T0 + timedelta(milliseconds=10 * i), 1, "INFO", "RUNTIME", f"a{i}") for i in range(50)]
    b = [plog(T0 + timedelta(milliseconds=10 * i + 5), 2, "INFO", "RUNTIME", f"b{i}") for i in range(50)]
    pa, pb = tmp_path / "plog-1_1.log", tmp_path / "plog-2_1.log"
    pa.write_text("\n".join(a) + "\n")
    pb.write_text("\n".join(b) + "\n")
    app = Host([pa, pb])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.row_count == 100
        order = []
        for _ in range(6):
            order.append(view.cursor_text().rsplit(":", 1)[-1])
            await pilot.press("down")
        assert order == ["a0", "b0", "a1", "b1", "a2", "b2"]
        view.goto(pb, 10)
        await pilot.pause()
        assert view.cursor_location() == (str(pb), 10) and view.cursor_row == 19
        first = screen_lines(view)[0]
        assert first.startswith(("1:", "2:"))  # rows carry the file number in the gutter
        assert view.search("a12$")  # search walks the merged row order
        await settle(app, pilot)
        assert view.cursor_location() == (str(pa), 13) and view.cursor_row == 24
        assert view.search(":b3$", backwards=True)
        await settle(app, pilot)
        assert view.cursor_location() == (str(pb), 4) and view.cursor_row == 7
    app = Host([pa, pb], merge=False)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        view.goto(pb, 1)
        await pilot.pause()
        assert view.cursor_row == 50  # concatenated, no merge


class SlowLogView(LogView):
    index_batch = 256 << 10


class CancelOnFirstProgress(Host):
    def compose(self) -> ComposeResult:
        yield SlowLogView(self.paths, id="log")

    def on_log_view_progress(self, msg: LogView.Progress) -> None:
        super().on_log_view_progress(msg)
        if len(self.progress) == 1:
            self.query_one(LogView).action_cancel_indexing()


async def test_cancelled_index_keeps_what_it_has(tmp_path: Path) -> None:
    p = tmp_path / "plog-3_1.log"
    total = write_big_plog(p, 48 << 20)  # ~190 batches of 256 KiB: cancelled long before the end
    app = CancelOnFirstProgress([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.indexing_cancelled and not view.indexing_done
        ix = view.indexes[0]
        assert not ix.done and 0 < ix.bytes_done < total
        assert not app.progress[-1].done and app.progress[-1].bytes_done < total
        assert view.row_count == ix.lines
        await pilot.press("G")
        await until(pilot, lambda: view.cursor_text().startswith("["), 5)
        assert view.cursor_location() == (str(p), ix.lines)
        assert not view.next_fault() and view.fault_count is None  # the scan follows a complete index
        view.set_filter(levels={"INFO"})  # a filter needs every line: it completes the index first
        await settle(app, pilot)
        assert ix.done and view.indexing_done and app.progress[-1].done
        assert app.progress[-1].bytes_done == total
        assert view.fault_count == 0  # noise only; the scan ran once the index was complete
        assert 0 < view.row_count < ix.lines


async def test_line_numbers_toggle_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("alpha\nbeta\x1b[31m red\tx\n")
    app = Host([p, tmp_path / "missing.log"])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert len(view.errors) == 1 and "missing.log" in view.errors[0]
        assert screen_lines(view)[0].split() == ["1", "alpha"]
        assert screen_lines(view)[1].split() == ["2", "beta\u241b[31m", "red", "x"]  # ESC shown, not sent
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert screen_lines(view)[0].rstrip() == "alpha"
        await pilot.press("escape")  # nothing to cancel: the key goes on to the app (e.g. "back")
        assert app.escapes == 1


class VanishingLogView(LogView):
    def on_mount(self) -> None:
        for ix in self.indexes:
            ix.path.unlink()  # gone between opening the view and indexing it
        super().on_mount()


class VanishingHost(Host):
    def compose(self) -> ComposeResult:
        yield VanishingLogView(self.paths, id="log")


async def _errors_shown(app: Host, *keys: str) -> tuple[list[str], int]:
    """Run ``app`` until its workers are done, then press ``keys``: the view's errors and row count
    (the app must still be running afterwards)."""
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        shown = (list(view.errors), view.row_count)
        await pilot.press(*keys)
        assert app.is_running
        return shown


async def test_a_file_that_vanishes_is_reported_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "plog-8_1.log"
    p.write_text("one\ntwo\n")
    # keys on an empty view do nothing harmful
    errors, rows = await _errors_shown(VanishingHost([p]), "e", "G", "slash", "escape")
    assert errors == [f"{p}: expected a log file (file does not exist)"]
    assert rows == 0


async def test_a_file_replaced_under_the_fault_scan_is_reported_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the indexed file cannot be reopened for the fault scan (replaced, on a system without
    ``/proc/self/fd``), the reader's ParseError is a message on the view, like a vanished file."""
    import skdbg.tui.logview as lv
    from skdbg.parsers.common import ParseError

    def replaced(ix: LineIndex, *args: object, **kwargs: object) -> None:
        raise ParseError(
            str(ix.path),
            "the file that was indexed (it was replaced, removed or rewritten since; open it again)",
        )

    monkeypatch.setattr(lv, "fault_lines", replaced)
    p = tmp_path / "plog-9_1.log"
    p.write_text("one\nEE9999 two\n")
    errors, rows = await _errors_shown(Host([p]), "e")  # no fault stops: "e" does nothing
    assert errors == [
        f"{p}: expected the file that was indexed (it was replaced, removed or rewritten since; open it again)"
    ]
    assert rows == 2


async def test_files_cut_while_open_leave_the_view_working(tmp_path: Path) -> None:
    """Both plogs of a merged view are cut after indexing (one to a third, one to nothing): moving,
    searching, filtering and fault keys go on; lines gone before they were shown show empty
    (docs/tui.md)."""
    paths = []
    for pid in (7, 8):
        lines = [
            plog(T0 + timedelta(milliseconds=10 * i + pid), pid, "INFO", "RUNTIME", f"m{pid}-{i}")
            for i in range(300)
        ]
        lines[250] = plog(
            T0 + timedelta(milliseconds=2500 + pid), pid, "ERROR", "RUNTIME", "EE9999 late fault"
        )
        p = tmp_path / f"plog-{pid}_20260610140000000.log"
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)
    app = Host(paths)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.row_count == 600 and view.fault_count == 2
        keep = paths[0].stat().st_size // 3
        with paths[0].open("r+b") as fh:
            fh.truncate(keep)
        paths[1].write_bytes(b"")
        await pilot.press("G", "g", "e", "e", "E")
        assert app.is_running
        await pilot.press("g")
        assert view.search("m7-1[0-9]$")  # a line still there
        await settle(app, pilot)
        assert view.cursor_text().endswith("m7-10")
        assert view.search("late fault")  # gone from both files: nothing found, the cursor stays
        await settle(app, pilot)
        assert not app.searches[-1].found and view.cursor_text().endswith("m7-10")
        view.set_filter(levels={"ERROR"})
        await settle(app, pilot)
        await pilot.press("g", "down", "G")
        assert app.is_running and view.cursor_text() == ""  # the kept ERROR rows are gone
        view.set_filter()
        await settle(app, pilot)
        assert view.row_count == 600 and not view.errors
        view.goto(paths[1], 5)  # a line shown before the cut keeps the text it had on screen
        await pilot.press("down", "end")
        assert app.is_running


async def test_a_line_that_cannot_be_read_shows_empty_and_is_reported_once(tmp_path: Path) -> None:
    """An index that keeps no descriptor (past the open-file limit, or closed) reads by name; when the
    name now holds another file, its lines show empty and the view says why, once."""
    p = tmp_path / "plog-5_1.log"
    p.write_text("".join(f"line {i}\n" for i in range(200)))
    app = Host([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        view.indexes[0].close()
        (tmp_path / "other.log").write_text("not the indexed file\n")
        (tmp_path / "other.log").replace(p)
        view._text_cache.clear()
        await pilot.press("G", "g", "down", "down")
        await settle(app, pilot)
        assert view.cursor_text() == "" and app.is_running
        assert view.errors == [
            f"{p}: expected the file that was indexed (it was replaced, removed or rewritten since; open it again)"
        ]


async def test_a_read_that_fails_once_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed read (too many open files) is not kept as the line's text: the next look reads it."""
    p = tmp_path / "plog-6_1.log"
    p.write_text("".join(f"line {i}\n" for i in range(300)))  # line 250 is not on the first pages
    app = Host([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        real = LineIndex.raw_line
        failures = iter([OSError(24, "Too many open files", str(p))])

        def flaky(self: LineIndex, i: int, max_bytes: int | None = None) -> bytes:
            exc = next(failures, None)
            if exc is not None:
                raise exc
            return real(self, i, max_bytes)

        monkeypatch.setattr(LineIndex, "raw_line", flaky)
        assert view._text(0, 250) == ""
        assert view._text(0, 250) == "line 250"
        await settle(app, pilot)
        assert view.errors == [f"{p}: cannot read (Too many open files)"]


def write_big_plog(path: Path, size: int) -> int:
    """``size`` bytes of realistic plog noise from repeated pre-rendered blocks (fast: ~0.2 s/200 MB)."""
    rng = random.Random(4)
    block = ("\n".join(sb.noise_lines(rng, 4000, pid=5, start=T0)) + "\n").encode()
    reps = size // len(block) + 1
    with path.open("wb") as fh:
        for _ in range(reps):
            fh.write(block)
    return reps * len(block)


async def test_200mb_plog_shows_first_screen_before_indexing_finishes(tmp_path: Path) -> None:
    p = tmp_path / "plog-5_20260610140000000.log"
    total = write_big_plog(p, 200 << 20)
    first = p.open("rb").readline().decode().rstrip("\n")
    try:
        app = Host([p])
        async with app.run_test(size=SIZE) as pilot:
            view = app.query_one(LogView)
            await until(pilot, lambda: view.first_paint is not None, 10)
            assert view.first_paint is not None
            assert not view.first_paint.done
            assert view.first_paint.bytes_done < total // 2
            assert first[:80] in screen_lines(view)[0]
            await pilot.press("escape")  # cancel: do not index 200 MB just to end the test
            await settle(app, pilot)
            assert view.indexing_cancelled and not view.indexes[0].done
            assert app.escapes == 0  # while indexing, escape belongs to the log view
    finally:
        p.unlink()


# -- issue 16 defects 4 and 5: the status bar, the legend, incidents ---------------------------------

HIGH = scene("high-single-stream") / "log" / "plog" / "plog-48213_20260610140058123.log"


class StatusHost(Host):
    def __init__(self, paths: list[Path]) -> None:
        super().__init__(paths)
        self.status: list[LogView.StatusChanged] = []

    def on_log_view_status_changed(self, msg: LogView.StatusChanged) -> None:
        self.status.append(msg)


async def test_high_single_stream_is_one_incident_of_many_fault_lines() -> None:
    # By hand: every fault-marker line of this plog (18 … 334) is pid 48213 within 14:03:21.518–.527:
    # the runtime's error report followed by the SK exception-handler block — one incident.
    app = LogApp([HIGH])
    async with app.run_test(size=SIZE) as pilot:
        await settle_app(pilot)
        view = app.query_one(LogView)
        assert view.fault_count == 1
        assert view.fault_line_count is not None and view.fault_line_count > 8
        await pilot.press("e")
        assert view.cursor_location() == (str(HIGH), 18)
        assert not view.next_fault()  # one press reached the only incident; no second stop
        await pilot.press("right_square_bracket")
        assert view.cursor_location() == (str(HIGH), 19)  # "there is an aivec error exception"
        await pilot.pause()
        bar = str(app.query_one("#log-status", Static).render())
        assert f"{HIGH.name}:19" in bar and "row 19/334" in bar and "incident 1/1" in bar
        assert not app.query_one("#log-legend", Static).display  # one file: no legend
        marks = {r.lstrip().split("[", 1)[0].strip(): r for r in screen_lines(view) if r.strip()}
        assert "18◆" in marks and "19•" in marks and "17" in marks  # incident start, fault line, plain


def _incident(ts: Any, pid: int) -> list[str]:
    return sb.runtime_incident_lines(ts, pid=pid)


async def test_incidents_in_a_merged_view_follow_the_time_order(tmp_path: Path) -> None:
    # File a (pid 1): incidents at +1 s and +3 s; file b (pid 2): one at +1.5 s. Merged by time the
    # stops are a@1s, b@1.5s, a@3s — three incidents of seven fault lines each.
    noise_a = [plog(T0 + timedelta(milliseconds=100 * i), 1, "INFO", "RUNTIME", f"a{i}") for i in range(40)]
    noise_b = [
        plog(T0 + timedelta(milliseconds=100 * i + 5), 2, "INFO", "RUNTIME", f"b{i}") for i in range(40)
    ]
    a = noise_a[:10] + _incident(T0 + timedelta(seconds=1, milliseconds=1), 1)
    a += noise_a[10:30] + _incident(T0 + timedelta(seconds=3, milliseconds=1), 1) + noise_a[30:]
    b = noise_b[:15] + _incident(T0 + timedelta(seconds=1, milliseconds=506), 2) + noise_b[15:]
    pa, pb = tmp_path / "plog-1_1.log", tmp_path / "plog-2_1.log"
    pa.write_text("\n".join(a) + "\n")
    pb.write_text("\n".join(b) + "\n")
    app = StatusHost([pa, pb])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        assert view.fault_count == 3 and view.fault_line_count == 21
        stops = []
        for _ in range(3):
            await pilot.press("e")
            stops.append(view.cursor_location())
        assert stops == [(str(pa), 11), (str(pb), 16), (str(pa), 38)]
        await pilot.pause()
        last = app.status[-1]
        assert last.text.startswith(f"1:{pa.name}:38") and "incident 3/3" in last.text
        assert last.legend == f"1: {pa.name}  2: {pb.name}"
        await pilot.press("E")
        assert view.cursor_location() == (str(pb), 16)
        await pilot.press("left_square_bracket")  # the last fault line of a's first incident
        assert view.cursor_location() == (str(pa), 17)
        await pilot.pause()
        assert "incident 1/3" in app.status[-1].text


async def test_status_follows_the_cursor_filter_and_search(tmp_path: Path) -> None:
    lines = [
        plog(T0 + timedelta(seconds=i), 5, "ERROR" if i % 10 == 0 else "INFO", "RUNTIME", f"x{i}")
        for i in range(100)
    ]
    p = tmp_path / "plog-5_1.log"
    p.write_text("\n".join(lines) + "\n")
    app = StatusHost([p])
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        await settle(app, pilot)
        view.goto(p, 65)
        await pilot.pause()
        assert app.status[-1].text.startswith(f"{p.name}:65  │  row 65/100")
        await pilot.press("down", "down")
        await pilot.pause()
        text = app.status[-1].text
        assert text.startswith(f"{p.name}:67") and ":65" not in text  # not the last jump
        assert "no fault incidents" in text and "filter" not in text and "search" not in text
        view.set_filter(levels=["ERROR"])
        await settle(app, pilot)
        text = app.status[-1].text
        assert "filter: level=ERROR" in text and "/10" in text  # 10 ERROR rows of 100 lines
        assert view.search("x3")
        await settle(app, pilot)
        assert "search: /x3/" in app.status[-1].text


async def test_e_while_indexing_says_how_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "plog-6_1.log"
    p.write_text("".join(f"line {i + 1}\n" for i in range(60_000)))
    gate = threading.Event()
    build = LineIndex.build

    def gated(self: LineIndex, *args: Any, **kwargs: Any) -> Iterator[IndexProgress]:
        for n, progress in enumerate(build(self, *args, **kwargs)):
            yield progress
            if n == 0:
                gate.wait(10)

    monkeypatch.setattr(LineIndex, "build", gated)
    app = StatusHost([p])
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(LogView)
        monkeypatch.setattr(view, "notify", lambda message, **_: notes.append(message))
        await until(pilot, lambda: view.row_count > 0)
        await pilot.pause()
        done = view._progress()
        pct = done.bytes_done * 100 // done.bytes_total
        assert 0 <= pct < 100
        await pilot.press("e")
        assert notes and f"{pct}% indexed" in notes[-1]
        assert f"indexed {pct}%" in app.status[-1].text
        gate.set()
        await settle(app, pilot)
        assert "indexed" not in app.status[-1].text and "no fault incidents" in app.status[-1].text


async def test_log_screen_header_follows_the_cursor_not_the_jump() -> None:
    app = SkdbgApp(scene("high-single-stream").parent / "high-single-stream")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await settle_app(pilot)
        screen = app.screen
        screen.goto(HIGH, 165)
        await settle_app(pilot)
        bar = screen.query_one("#log-status", Static)
        assert f"{HIGH.name}:165" in str(bar.render())
        await pilot.press("down")
        await settle_app(pilot)
        assert f"{HIGH.name}:166" in str(bar.render()) and ":165" not in str(bar.render())
