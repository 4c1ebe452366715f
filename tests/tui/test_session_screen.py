"""The Session screen (mode ``session``, key 6): the tree, verdicts and diff, and every action —
propose, note, export, candidate, relaunch with its live view and Esc — checked in the ledger."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from session_tui_support import SID, base_session, wait_history
from textual.widgets import DataTable, Input, RichLog, Static, Tree
from tui_support import SIZE, settle

from skdbg.sessions.store import Ledger
from skdbg.tui.app import SkdbgApp
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.session import SessionScreen
from skdbg.tui.screens.session_ref import SessionRef
from skdbg.tui.screens.session_relaunch import RelaunchScreen, parse_job


def _app(home: Path) -> SkdbgApp:
    """The Session screen on S1 with no scene behind the other screens (they are not under test)."""
    return SkdbgApp(None, start_mode="session", session=SessionRef(home, SID), missing="no scene")


def _text(app: SkdbgApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def _tree_lines(app: SkdbgApp) -> list[str]:
    tree: Tree[Any] = app.screen.query_one("#session-tree", Tree)
    out: list[str] = []

    def walk(node: Any, depth: int) -> None:
        out.append("  " * depth + str(node.label))
        if node.is_expanded:
            for child in node.children:
                walk(child, depth + 1)

    walk(tree.root, 0)
    return out


def _select(app: SkdbgApp, startswith: str) -> None:
    tree: Tree[Any] = app.screen.query_one("#session-tree", Tree)

    def find(node: Any) -> Any:
        if str(node.label).startswith(startswith):
            return node
        for child in node.children:
            hit = find(child)
            if hit is not None:
                return hit
        return None

    node = find(tree.root)
    assert node is not None, startswith
    tree.move_cursor(node)


async def test_tree_shows_rounds_attempts_gates_and_negative_evidence(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        lines = _tree_lines(app)
        assert lines[0] == "session S1"
        assert lines[1].strip() == "EX1-BASE (base) failed  1 attempt"
        assert lines[2].strip().startswith("EX1-BASE-X1 (exclusion) passed_gates(V1..V3)  1 attempt")
        # the round of the newest attempt is open on its attempt, with V1–V5 marks and the change
        assert (
            lines[3].strip() == "attempt-001 passed      V1✓ V2✓ V3✓ V4– V5– SwiGlu excluded (begin/end None)"
        )
        detail = _text(app, "#session-detail")
        assert "EX1-BASE-X1/attempt-001  passed" in detail
        assert "V2 passed" in detail and "change: SwiGlu excluded (begin/end None)" in detail
        # the failed base attempt: negative evidence, final, with its verdict and note
        _select(app, "EX1-BASE (base)")
        await pilot.press("space")  # expand round EX1-BASE
        await settle(pilot)
        _select(app, "attempt-001 failed")
        await settle(pilot)
        assert "attempt-001 failed      negative evidence the candidate as launched (base round)" in [
            line.strip() for line in _tree_lines(app)
        ]
        detail = _text(app, "#session-detail")
        assert "negative evidence — this attempt is final: it is never edited or re-verified" in detail
        assert "high (rule C3) — SwiGlu_41d9e0 (task 2, nodeId 102)" in detail
        assert "note: first look" in detail
        # the verdict history: both attempts, oldest first
        await wait_history(pilot, 2)
        table: DataTable[Any] = app.screen.query_one("#session-verdicts", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[:4] for r in rows] == [
            ["EX1-BASE/attempt-001", "failed", "C3", "high"],
            ["EX1-BASE-X1/attempt-001", "passed", "C0", "n/a"],
        ]


async def test_diff_of_two_verdicts(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d")  # A = EX1-BASE-X1/attempt-001 (the highlighted one)
        _select(app, "EX1-BASE (base)")
        await pilot.press("space")
        await settle(pilot)
        _select(app, "attempt-001 failed")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        detail = _text(app, "#session-detail").splitlines()
        assert detail[0] == "diff of verdicts A = EX1-BASE-X1/attempt-001, B = EX1-BASE/attempt-001"
        assert "status: A passed · B failed" in detail
        assert "verdict.rule: A C0 · B C3" in detail
        assert "verdict.suspect.func_name: A — · B SwiGlu_41d9e0" in detail
        assert not any(line.startswith("verdict.suspect.stream") for line in detail)


async def test_propose_note_and_export_write_what_the_cli_writes(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _select(app, "attempt-001 failed")
        await settle(pilot)
        await pilot.press("p")  # skdbg session propose S1 EX1-BASE/attempt-001
        await settle(pilot)
        with Ledger(home) as ledger:
            props = ledger.proposals(SID)
            frozen = ledger.snapshot_json(ledger.attempt(SID, "EX1-BASE", 1).pk, "analysis.json")
        assert [(p.round_id, p.status) for p in props] == [
            ("EX1-BASE-X1", "proposed"),
            ("EX1-BASE-X2", "proposed"),
        ]
        assert props[1].body == frozen["proposal"]  # the frozen analysis's proposal, as the CLI records it
        assert any(line.strip().startswith("EX1-BASE-X2 (exclusion) open") for line in _tree_lines(app))
        # a note about the highlighted attempt
        _select(app, "attempt-001 failed")
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"kept as negative evidence", "enter")
        await settle(pilot)
        with Ledger(home) as ledger:
            notes = ledger.notes(SID)
        assert notes[-1]["text"] == "kept as negative evidence"
        assert (notes[-1]["round_id"], notes[-1]["attempt_no"]) == ("EX1-BASE", 1)
        # export the session report folder
        out = tmp_path / "export"
        await pilot.press("x")
        await settle(pilot)
        field = app.screen.query_one(Input)
        field.value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        assert {"REPORT.md", "EXPERIMENT_REPORT.md", "session.json"} <= {p.name for p in out.iterdir()}
        assert any((n.title or "") == "exported" for n in app._notifications)


async def test_open_candidate_switches_or_says_how(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        if "candidate" in app.MODES:
            assert app.current_mode == "candidate"
        else:
            notes = [n for n in app._notifications if (n.title or "") == "no Candidate screen"]
            assert notes and "skdbg codegen candidate" in notes[0].message


async def test_relaunch_shows_the_job_live_and_esc_ends_it(tmp_path: Path) -> None:
    """The live view: the job's pid, its output, then Esc → SIGTERM to its group; the attempt is
    recorded `interrupted` (skdbg relaunch's own Ctrl-C path) and shown in the tree."""
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    script = tmp_path / "job.py"
    script.write_text("import time\nprint('job started', flush=True)\ntime.sleep(60)\n")
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _select(app, "EX1-BASE-X1")
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = f"{sys.executable} {script}"
        await pilot.press("enter")
        view = app.screen
        assert isinstance(view, RelaunchScreen)
        for _ in range(200):  # until the job has printed its line (a thread worker runs it)
            await pilot.pause(0.05)
            if view.pid is not None and view.query_one(RichLog).lines:
                break
        assert view.pid is not None and view.running
        assert "job started" in "".join(s.text for s in view.query_one(RichLog).lines)
        assert f"running pid {view.pid}" in str(view.query_one("#relaunch-state", Static).render())
        await pilot.press("escape")  # cancel: the runner ends the process group
        for _ in range(400):
            await pilot.pause(0.05)
            if not view.running:
                break
        assert not view.running
        assert view.result_lines[0].startswith("EX1-BASE-X1/attempt-001: interrupted")
        await pilot.press("escape")  # closes the view
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        with Ledger(home) as ledger:
            attempt = ledger.attempt(SID, "EX1-BASE-X1", 1)
        assert attempt.status == "interrupted"
        assert any(line.strip().startswith("attempt-001 interrupted") for line in _tree_lines(app))


def test_parse_job_reads_sim_options_and_argv() -> None:
    job = parse_job("--sim ~/models/mlp --seed 3")
    assert job.sim_model == Path("~/models/mlp").expanduser() and job.seed == 3 and job.argv is None
    job = parse_job("--timeout 9 -- python3 infer.py --config 'a b.yaml'")
    assert job.argv == ["python3", "infer.py", "--config", "a b.yaml"] and job.timeout == 9.0
    for bad, why in (
        ("", "no job given"),
        ("--sim", "--sim needs a value"),
        ("--sim m python3 x.py", "not both"),
        ("--frob 1 x", "unknown option --frob"),
        ("--seed x y", "--seed: expected a number"),
    ):
        try:
            parse_job(bad)
        except ValueError as exc:
            assert why in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")


async def test_large_round_shows_its_newest_page_and_more_on_enter(tmp_path: Path) -> None:
    """A round of 450 attempts: 200 nodes at first, "… 250 earlier" loads 200 more."""
    from skdbg.sessions.store import NewAttempt

    home = tmp_path / "ledger"
    with Ledger(home) as ledger:
        ledger.new_session("big", session_id=SID)
        ledger.open_round(SID, "R")
        for k in range(450):
            ledger.record_attempt(
                SID,
                "R",
                NewAttempt(f"change {k + 1}", None, None, "none", [], "failed" if k % 2 else "passed"),
            )
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree: Tree[Any] = app.screen.query_one("#session-tree", Tree)
        rnd = tree.root.children[0]
        labels = [str(c.label) for c in rnd.children]
        assert len(labels) == 201
        assert labels[0].startswith("… 250 earlier attempt(s) — Enter shows 200 more")
        assert labels[1].startswith("attempt-251 ") and labels[-1].startswith("attempt-450 ")
        assert str(tree.cursor_node.label).startswith("attempt-450") if tree.cursor_node else False
        tree.move_cursor(rnd.children[0])
        await pilot.press("enter")
        await settle(pilot)
        labels = [str(c.label) for c in rnd.children]
        assert len(labels) == 401 and labels[0].startswith("… 50 earlier attempt(s) — Enter shows 50 more")
        assert labels[1].startswith("attempt-051 ")


async def test_footer_keeps_copy_screenshot_quit_at_160_columns(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    app = _app(home)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        footer = app.screen.query_one("Footer")
        visible = [
            str(k.render()) for k in footer.query("FooterKey") if k.region.right <= footer.region.right
        ]
        text = " ".join(visible)
        assert "Propose" in text and "Relaunch" in text
        assert "Copy" in text and "SVG" in text and "Quit" in text, text


async def test_palette_lists_the_session_commands(tmp_path: Path) -> None:
    from textual.command import CommandPalette

    home = tmp_path / "ledger"
    base_session(home, verified=False)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"Session:")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        hits = {str(o.prompt).split("\n")[0] for o in app.screen.query_one("CommandList").options}
        for title in (
            "Session: propose",
            "Session: relaunch round",
            "Session: export report",
            "Session: add note",
        ):
            assert title in hits, hits


#: a job that writes what the fixed candidate's real job writes: its plog and sk_meta (built with the
#: scene builder, as tests/loop/test_relaunch.py's stand-in does), then exits 0
FIXED_JOB = r"""
import os, shutil, sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from skdbg.scenebuilder.examples import high_single_stream_fixed
from skdbg.scenebuilder.scene import build_scene

cwd, pid, t0 = Path.cwd(), os.getpid(), datetime.now()
spec = replace(high_single_stream_fixed(), run={}, pid=pid, seed=pid, run_start=t0,
               build_ts=t0 + timedelta(milliseconds=10), fault_ts=t0 + timedelta(milliseconds=20),
               run_end=t0 + timedelta(milliseconds=30))
built = build_scene(spec, cwd / "_build")
plog = Path(os.environ["ASCEND_PROCESS_LOG_PATH"]) / "debug" / "plog"
plog.mkdir(parents=True, exist_ok=True)
for p in (built.root / "log" / "plog").iterdir():
    shutil.move(str(p), plog / p.name)
shutil.move(str(built.root / "sk_meta" / str(pid)), cwd / "sk_meta" / str(pid))
shutil.rmtree(built.root)
print("step 7 done", flush=True)
"""


async def test_relaunch_to_the_end_shows_the_freeze_and_verify_result(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    job = tmp_path / "fixed_job.py"
    job.write_text(FIXED_JOB)
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _select(app, "EX1-BASE-X1")
        await pilot.press("r")
        await settle(pilot)
        app.screen.query_one(Input).value = f"{sys.executable} {job}"
        await pilot.press("enter")
        view = app.screen
        assert isinstance(view, RelaunchScreen)
        for _ in range(1200):
            await pilot.pause(0.05)
            if not view.running:
                break
        assert not view.running, view.state
        assert "step 7 done" in [s.text for s in view.query_one(RichLog).lines]
        result = view.result_lines
        assert result[0] == "EX1-BASE-X1/attempt-001: passed" or result[0].startswith(
            "EX1-BASE-X1/attempt-001: passed ("
        ), result
        assert "exit: status=0 signal=None timeout=False" in result
        assert any(line.startswith("  V1: passed") for line in result)
        assert any(line.startswith("  V3: passed") for line in result)
        assert result[-1].startswith("next: ")
        await pilot.press("escape")
        await settle(pilot)
        assert any(
            line.strip().startswith("attempt-001 passed      V1✓ V2✓ V3✓ V4– V5–")
            for line in _tree_lines(app)
        )
