"""The Ranks screen (issue 17 item 1): a scanned 64-rank job listed by groups, Enter opens a rank through
the app's scene path, ``e`` focuses its exception cores; ``skdbg scan --open`` and ``skdbg tui --scan``.

The job is tests/support/fleet_support.py's (the scan tests' fixture); every expectation below is written
from its layout constants (LEADER, FOLLOWERS, CLEAN, NO_EVIDENCE, INDEPENDENT), not from the screen code.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fleet_support import (
    CLEAN,
    FOLLOWERS,
    INDEPENDENT,
    LEADER,
    NO_EVIDENCE,
    Job,
    build_job,
    clean_lines,
    follower_lines,
    sk_fault_lines,
    write_plog,
)
from textual.widgets import DataTable, Static
from textual.worker import WorkerCancelled
from tui_support import SIZE, settle

from skdbg.cli import main
from skdbg.fleet import decide, discover, scan_all, scan_doc
from skdbg.tui.app import SkdbgApp
from skdbg.tui.screens.evidence import EvidenceScreen
from skdbg.tui.screens.log import LogScreen
from skdbg.tui.screens.overview import OverviewScreen
from skdbg.tui.screens.ranks import RanksScreen
from skdbg.tui.screens.ranks_open import scan_app


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    return build_job(tmp_path_factory.mktemp("ranks"))


def scan_of(*roots: Path | str) -> dict[str, Any]:
    found = discover([str(r) for r in roots])
    return scan_doc(
        decide(scan_all(found.ranks, workers=1)),
        roots=[str(r) for r in roots],
        problems=found.problems,
        engine="local pool, 1 workers",
    )


@pytest.fixture(scope="module")
def doc(job: Job) -> dict[str, Any]:
    return scan_of(job.root)


def rows(app: SkdbgApp, table_id: str) -> list[list[str]]:
    table = app.screen.query_one(f"#{table_id}", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def text(app: SkdbgApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def put_cursor_on(app: SkdbgApp, rank: int) -> None:
    table = app.screen.query_one("#ranks-table", DataTable)
    ranks = [r[1].strip() for r in rows(app, "ranks-table")]
    table.focus()
    table.move_cursor(row=ranks.index(str(rank)))


def plogs_of(folder: Path) -> list[Path]:
    return sorted(p.resolve() for p in folder.rglob("plog-*.log"))


async def test_the_ranks_screen_lists_the_groups_with_counts(job: Job, doc: dict[str, Any]) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RanksScreen)
        # the first failing rank's scene is open and analysed, as `skdbg tui SCENE` would
        assert app.scene == job.folders[LEADER]
        assert app.state is not None and app.state.scene == job.folders[LEADER]
        groups = {(r[0].strip(), r[1]) for r in rows(app, "ranks-groups")}
        # all 64; 40 followers; 18 clean; 2 without evidence; the leader alone; the 3 independent faults
        # (one emulator model, culprit k4) share a signature
        assert groups == {
            ("64", "all"),
            (str(len(FOLLOWERS)), "follower"),
            (str(len(CLEAN)), "clean"),
            (str(len(NO_EVIDENCE)), "no_evidence"),
            ("1", "fault (first)"),  # the group holding the first failing rank says so
            (str(len(INDEPENDENT)), "fault"),
        }
        # under "all", the first failing rank's group, then the largest first
        assert [r[1] for r in rows(app, "ranks-groups")][:3] == ["all", "fault (first)", "follower"]
        follower_row = next(r for r in rows(app, "ranks-groups") if r[1] == "follower")
        assert follower_row[2] == "only hccl_notify_timeout, hccl_task_timeout, task_abort"
        assert follower_row[3].startswith(",".join(str(r) for r in FOLLOWERS[:16]) + ",…")
        table = rows(app, "ranks-table")
        assert [int(r[1]) for r in table] == list(range(64))
        marked = [r for r in table if r[0] == "▶"]
        assert [(m[1].strip(), m[2]) for m in marked] == [(str(LEADER), "first_failing")]
        cursor = app.screen.query_one("#ranks-table", DataTable).cursor_row
        assert table[cursor][1].strip() == str(LEADER)
        summary = text(app, "#ranks-summary")
        assert "64 ranks: 1 first_failing, 3 own_fault, 40 follower, 18 clean, 2 no_evidence" in summary
        assert f"First failing: rank {LEADER} at 2026-06-10T14:05:0" in summary
        assert "clock skew ±1000 ms" in summary and "then lowest rank id — no tie" in summary
        assert f"No evidence (2): rank {NO_EVIDENCE[0]}, rank {NO_EVIDENCE[1]}" in summary
        opened = text(app, "#ranks-opened")
        assert f"Opened: rank {LEADER}" in opened and "QuantMatmul_" in opened and "core 2 AIC" in opened


async def test_a_followers_detail_cites_the_lines_that_made_it_one(job: Job, doc: dict[str, Any]) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rank = FOLLOWERS[0]
        put_cursor_on(app, rank)
        await settle(pilot)
        detail = text(app, "#ranks-detail")
        plog = next((job.folders[rank] / "debug" / "plog").glob("plog-*.log"))
        assert f"rank {rank} · follower" in detail
        assert "follower lines (4):" in detail
        assert f"{plog}:2 [hccl_task_timeout]" in detail and f"{plog}:5 [task_abort]" in detail
        assert "not a full scene — plog only (no sk_meta, no run.json)" in detail
        # hovering names the ids in the glossary's words; c copies the rank and its folder
        tip = str(app.screen.query_one("#ranks-table", DataTable).tooltip)
        assert "follower — follower rank" in tip and "task_abort — runtime task abort" in tip
        pid = int(plog.name.split("-")[1].split("_")[0])
        assert app.screen.copy_text() == f"rank {rank} (follower): {job.folders[rank]} pid {pid}"
        # rank 30 faulted on its own and timed out afterwards: never called a follower
        put_cursor_on(app, 30)
        await settle(pilot)
        assert "follow-up lines (not a follower: own fault)" in text(app, "#ranks-detail")


async def test_enter_opens_a_rank_and_its_analysis_runs(job: Job, doc: dict[str, Any]) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        leader_state = app.state
        rank = INDEPENDENT[0]
        put_cursor_on(app, rank)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, OverviewScreen)
        assert app.scene == job.folders[rank]
        st = app.state
        assert st is not None and st is not leader_state and st.scene == job.folders[rank]
        # the full analysis names the child the scan read from the handler block
        child = doc["ranks"][rank]["child"]
        assert st.analysis.verdict.suspect is not None and st.analysis.verdict.suspect.func_name == child
        assert child in text(app, "#overview")
        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, LogScreen) and app.screen.view is not None
        assert sorted(p.resolve() for p in app.plog_files or []) == plogs_of(job.folders[rank])
        await pilot.press("9")
        await settle(pilot)
        marked = [r[1].strip() for r in rows(app, "ranks-table") if r[0] == "▶"]
        assert marked == [str(rank)]
        assert f"Opened: rank {rank}" in text(app, "#ranks-opened")


async def test_a_plog_only_rank_opens_its_plogs_and_the_analysis_names_the_gaps(
    job: Job, doc: dict[str, Any]
) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rank = FOLLOWERS[0]
        put_cursor_on(app, rank)
        await pilot.press("o")
        await settle(pilot)
        st = app.state
        assert st is not None and st.scene == job.folders[rank]
        assert st.analysis.verdict.rule == "C0"  # no sk_meta, no run.json: the gate fails, no child named
        assert "F3" in text(app, "#overview")  # the gap naming the missing sk_meta/<pid>
        assert sorted(p.resolve() for p in app.plog_files or []) == plogs_of(job.folders[rank])
        assert any(
            (n.title or "") == f"opened rank {rank}" and "not a full scene" in n.message
            for n in app._notifications
        )


async def test_e_focuses_the_opened_ranks_exception_cores(job: Job, doc: dict[str, Any]) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")  # the cursor starts on the first failing rank, already open
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        cores = app.screen.query_one("#cores", DataTable)
        assert app.focused is cores
        # the emulator's leader: one exception core, core 2 (AIC), on task 2 (culprit k2)
        assert [[str(c) for c in cores.get_row_at(0)][:4]] == [["2", "AIC", "implicated", "2"]]
        # another rank, not yet open: e opens it first, then focuses its cores once analysed
        await pilot.press("9")
        put_cursor_on(app, INDEPENDENT[1])
        await pilot.press("e")
        await settle(pilot)
        assert app.scene == job.folders[INDEPENDENT[1]]
        assert isinstance(app.screen, EvidenceScreen)
        assert app.focused is app.screen.query_one("#cores", DataTable)


async def test_choosing_a_group_lists_its_ranks_and_a_lists_all(doc: dict[str, Any]) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        groups = app.screen.query_one("#ranks-groups", DataTable)
        groups.focus()
        labels = [r[1] for r in rows(app, "ranks-groups")]
        groups.move_cursor(row=labels.index("follower"))
        await pilot.press("enter")
        await settle(pilot)
        listed = rows(app, "ranks-table")
        assert [int(r[1]) for r in listed] == list(FOLLOWERS)
        assert app.scene is not None and app.scene.name == f"s{LEADER}"  # choosing a group opens nothing
        await pilot.press("f")  # the first failing rank is not in the group: every rank is listed again
        await settle(pilot)
        assert len(rows(app, "ranks-table")) == 64
        await pilot.press("a")
        assert len(rows(app, "ranks-table")) == 64


async def test_unreadable_ranks_are_listed_with_their_reason_and_not_opened(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    t0 = build_time()
    write_plog(root / "rank0", 8000, sk_fault_lines(8000, t0))
    write_plog(root / "rank1", 8001, follower_lines(8001, t0 + timedelta(seconds=1800), 1))
    binary = root / "rank2" / "plog-8002_20260610140058000.log"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    doc = scan_of(root, tmp_path / "nope")
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        summary = text(app, "#ranks-summary")
        assert "Unreadable (2):" in summary
        assert f"{tmp_path / 'nope'}: no such file or folder" in summary
        assert f"{root / 'rank2'}: {binary}" in summary
        # the first failing rank holds only a plog: it is opened all the same, and the screen says what it is
        assert app.scene == root / "rank0"
        table = app.screen.query_one("#ranks-table", DataTable)
        table.focus()
        table.move_cursor(row=[r[2] for r in rows(app, "ranks-table")].index("unreadable"))
        await settle(pilot)
        assert "Enter opens: cannot be opened: unreadable" in text(app, "#ranks-detail")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RanksScreen) and app.scene == root / "rank0"
        assert any((n.title or "") == "nothing to open" for n in app._notifications)


def build_time() -> Any:
    from datetime import datetime

    return datetime(2026, 6, 10, 14, 0, 58)


async def test_no_failing_rank_opens_the_ranks_screen_alone(tmp_path: Path) -> None:
    root = tmp_path / "calm"
    for rank in (0, 1):
        write_plog(root / f"rank{rank}", 9000 + rank, clean_lines(9000 + rank, build_time()))
    doc = scan_of(root)
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RanksScreen) and app.scene is None
        assert "First failing rank: none" in text(app, "#ranks-summary")
        assert "Opened: nothing" in text(app, "#ranks-opened")
        await pilot.press("1")
        await settle(pilot)
        assert "no rank opened" in text(app, "#waiting")
        await pilot.press("9")
        put_cursor_on(app, 1)
        await pilot.press("enter")
        await settle(pilot)
        assert app.scene == root / "rank1" and app.state is not None


async def test_without_a_scan_the_ranks_screen_says_how_to_get_one() -> None:
    from tui_support import scene

    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("9")
        await settle(pilot)
        assert isinstance(app.screen, RanksScreen)
        waiting = text(app, "#waiting")
        assert "No scan is open" in waiting and "skdbg scan ROOT --open" in waiting


# ---------------------------------------------------------------------------------------- CLI wiring


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[SkdbgApp]:
    """Patch the app's ``run`` (no real terminal) and the terminal check; collect the apps started."""
    started: list[SkdbgApp] = []

    def fake_run(self: SkdbgApp, *args: Any, **kwargs: Any) -> None:
        started.append(self)

    monkeypatch.setattr(SkdbgApp, "run", fake_run)
    monkeypatch.setattr("skdbg.cli_scan.interactive", lambda: True)
    return started


def test_scan_open_starts_the_tui_on_the_first_failing_rank(job: Job, ran: list[SkdbgApp]) -> None:
    res = CliRunner().invoke(main, ["scan", str(job.root), "--workers", "1", "--open"])
    assert res.exit_code == 0, res.output
    assert f"first failing: rank {LEADER}" in res.stdout  # the summary is printed before the UI starts
    assert f"opening rank {LEADER} (first failing): {job.folders[LEADER]} — a full scene" in res.stderr
    (app,) = ran
    assert app.start_mode == "ranks"
    assert app.scene == job.folders[LEADER]
    assert app.scan is not None and app.scan["first_failing"]["rank"] == LEADER
    assert app.pid == int(next((job.folders[LEADER] / "log" / "plog").glob("plog-*.log")).name[5:10])


def test_scan_open_with_unreadable_ranks_opens_then_exits_3(tmp_path: Path, ran: list[SkdbgApp]) -> None:
    root = tmp_path / "job"
    write_plog(root / "rank0", 8000, sk_fault_lines(8000, build_time()))
    res = CliRunner().invoke(main, ["scan", str(root), str(tmp_path / "nope"), "--open"])
    assert res.exit_code == 3
    assert "not a full scene — plog only (no sk_meta, no run.json)" in res.stderr
    assert "1 rank(s) or roots unreadable" in res.stderr
    (app,) = ran
    assert app.scene == root / "rank0"


def test_scan_open_without_failing_rank_or_ranks(tmp_path: Path, ran: list[SkdbgApp]) -> None:
    calm = tmp_path / "calm"
    write_plog(calm / "rank0", 9000, clean_lines(9000, build_time()))
    res = CliRunner().invoke(main, ["scan", str(calm), "--open"])
    assert res.exit_code == 0
    assert (
        "no failing rank in this scan" in res.stderr
        and "opening the Ranks screen without a scene" in res.stderr
    )
    (app,) = ran
    assert app.scene is None and app.start_mode == "ranks" and app.scan is not None
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(main, ["scan", str(tmp_path / "empty"), "--open"])
    assert res.exit_code == 3
    assert "no rank found" in res.stderr and "nothing to open" in res.stderr
    assert len(ran) == 1  # no UI for an empty scan


def test_scan_open_needs_a_terminal(job: Job, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(SkdbgApp, "run", lambda self, *a, **k: started.append(self))
    res = CliRunner().invoke(main, ["scan", str(job.root), "--open"])  # CliRunner: no terminal
    assert res.exit_code == 2
    assert "--open needs an interactive terminal" in res.stderr
    assert started == []


def test_tui_scan_reopens_a_saved_scan(job: Job, tmp_path: Path, ran: list[SkdbgApp]) -> None:
    out = tmp_path / "scan"
    assert CliRunner().invoke(main, ["scan", str(job.root), "-o", str(out), "--workers", "1"]).exit_code == 0
    res = CliRunner().invoke(main, ["tui", "--scan", str(out)])
    assert res.exit_code == 0, res.output
    (app,) = ran
    assert app.scan == json.loads((out / "scan.json").read_text())
    assert app.start_mode == "ranks" and app.scene == job.folders[LEADER]
    # --screen still picks the first screen (the Ranks screen stays one key away)
    res = CliRunner().invoke(main, ["tui", "--scan", str(out / "scan.json"), "--screen", "overview"])
    assert res.exit_code == 0, res.output
    assert ran[1].start_mode == "overview" and ran[1].scan == ran[0].scan


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "scan.json:1: expected JSON"),
        ('{"schema": "skdbg.diff/1"}', 'expected "skdbg.scan/1" at schema'),
    ],
)
def test_tui_scan_refuses_a_bad_file(tmp_path: Path, ran: list[SkdbgApp], content: str, message: str) -> None:
    bad = tmp_path / "scan.json"
    bad.write_text(content, encoding="utf-8")
    res = CliRunner().invoke(main, ["tui", "--scan", str(bad)])
    assert res.exit_code == 3
    assert message in res.stderr and "Traceback" not in res.output
    assert ran == []


def test_tui_scan_refuses_a_bad_rank_index(doc: dict[str, Any], tmp_path: Path, ran: list[SkdbgApp]) -> None:
    broken = json.loads(json.dumps(doc))
    broken["first_failing"]["index"] = 64
    bad = tmp_path / "scan.json"
    bad.write_text(json.dumps(broken), encoding="utf-8")
    res = CliRunner().invoke(main, ["tui", "--scan", str(bad)])
    assert res.exit_code == 3
    assert f"{bad}: expected an index into ranks (0..63) at first_failing.index" in res.stderr
    res = CliRunner().invoke(main, ["tui", "--scan", str(bad), str(tmp_path)])
    assert res.exit_code == 2 and "--scan opens a saved scan alone" in res.stderr


async def test_opening_another_rank_mid_analysis_keeps_only_the_last_ones_results(
    job: Job, doc: dict[str, Any]
) -> None:
    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first, second = INDEPENDENT[0], INDEPENDENT[2]
        screen = app.screen
        assert isinstance(screen, RanksScreen)
        index = {r["rank"]: i for i, r in enumerate(doc["ranks"])}
        screen.open_rank(index[first])
        await pilot.pause(0.05)  # the first rank's analysis has started, and is still running …
        screen.open_rank(index[second])  # … when the second rank replaces it
        for _ in range(400):  # the replaced worker is cancelled: settle() refuses to wait on it until it ends
            try:
                await settle(pilot)
                break
            except WorkerCancelled:
                await pilot.pause(0.05)
        # the replaced analysis (cancelled, or finished late) changed nothing
        assert app.scene == job.folders[second] and not app.analysis_stopped
        assert app.state is not None and app.state.scene == job.folders[second]
        assert sorted(p.resolve() for p in app.plog_files or []) == plogs_of(job.folders[second])
        assert app.status_text == "ready"
        assert not any((n.title or "") == "analysis stopped" for n in app._notifications)


async def test_the_palette_offers_the_ranks_actions(doc: dict[str, Any]) -> None:
    from skdbg.tui.commands import SkdbgCommands

    app = scan_app(doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        groups = app.screen.query_one("#ranks-groups", DataTable)
        groups.focus()
        labels = [r[1] for r in rows(app, "ranks-groups")]
        groups.move_cursor(row=labels.index("follower"))
        await pilot.press("enter")
        await settle(pilot)
        assert len(rows(app, "ranks-table")) == len(FOLLOWERS)
        commands = {c[0]: c[1] for c in SkdbgCommands(app.screen).commands()}
        assert {"Ranks: open rank", "Ranks: exception cores", "Ranks: first failing rank"} <= set(commands)
        commands["Ranks: all ranks"]()
        await settle(pilot)
        assert len(rows(app, "ranks-table")) == 64
