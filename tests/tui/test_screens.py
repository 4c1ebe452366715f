"""Pilot-driven tests of every screen's main path (issue 4): overview, evidence jumps, log search,
scope, proposal editing with a refused illegal cut, accept/block, export."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static, TextArea
from tui_support import SIZE, scene, settle

from skdbg.tui.app import SkdbgApp
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.evidence import EvidenceScreen
from skdbg.tui.screens.log import LogScreen
from skdbg.tui.screens.proposal import ProposalScreen
from skdbg.tui.screens.scope import ScopeScreen
from skdbg.tui.screens.session_ref import SessionRef
from skdbg.tui.screens.source import SourceScreen

PLOG = "log/plog/plog-48213_20260610140058123.log"


def text_of(app: SkdbgApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_overview_and_every_screen_reachable_by_keys_and_mouse() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is not None
        text = text_of(app, "#overview")
        assert "passed" in text and "diagnostic attempt (F9 diagnostic mode recorded)" in text
        assert "kind sk" in text and "dialect D5" in text and "entry sk_entry_mix11_op_trace" in text
        assert "high (rule C3 trace or unique PC, confirmed)" in text
        assert "add_custom (task 1, nodeId 121)" in text
        assert "proposed via explicit_none_exclusion (mechanism A: wrap the child in a None scope)" in text
        assert "src/model.py:18 insert" in text
        # every screen is reachable by keys …
        for key, kind in (("2", EvidenceScreen), ("3", LogScreen), ("4", ScopeScreen), ("5", ProposalScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, kind)
        await pilot.press("1")
        await settle(pilot)
        # the footer keys are clickable: click "Scope"
        footer_keys = [k for k in app.screen.query("FooterKey") if getattr(k, "description", "") == "Scope"]
        assert footer_keys, "the Scope key is in the footer"
        await pilot.click(footer_keys[0])
        await settle(pilot)
        assert isinstance(app.screen, ScopeScreen)


async def test_evidence_items_jump_to_log_line_and_source_pane() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        chain = app.screen.query_one("#chain", DataTable)
        assert chain.has_focus
        first = app.state.analysis.verdict.evidence[0] if app.state else None
        assert first is not None and first.file == PLOG and first.line == 117
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogScreen) and screen.view is not None
        loc = screen.view.cursor_location()
        assert loc is not None and Path(loc[0]).name == Path(PLOG).name and loc[1] == 117
        assert text_of(app, "#log-status").startswith(f"{Path(PLOG).name}:117  │  row 117/")
        # a metadata citation opens the read-only source pane at its line
        await pilot.press("2")
        await settle(pilot)
        assert app.state is not None
        items = app.state.analysis.verdict.evidence
        row = next(i for i, e in enumerate(items) if e.file.endswith("sk_fused_nodes.log") and e.line == 3)
        chain = app.screen.query_one("#chain", DataTable)
        chain.move_cursor(row=row)
        await pilot.press("j")
        await settle(pilot)
        assert isinstance(app.screen, SourceScreen)
        area = app.screen.query_one("#source", TextArea)
        assert area.read_only
        assert area.cursor_location[0] == 2  # 0-based row of line 3
        assert "nodeId:121" in area.selected_text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)


async def test_log_search_moves_to_the_matching_line_and_faults_step() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LogScreen) and screen.view is not None
        await pilot.press("slash")
        await settle(pilot)
        await pilot.press(*"ParseAndPrintCondInfo", "enter")
        await settle(pilot)
        loc = screen.view.cursor_location()
        assert loc is not None and loc[1] == 262
        await pilot.press("E")
        await settle(pilot)
        before = screen.view.cursor_location()
        assert before is not None and before[1] < 262


async def test_scope_draws_the_cut_and_proposal_refuses_an_illegal_cut() -> None:
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        children = app.screen.query_one("#children", DataTable)
        cut = {str(children.get_row(k)[3]): str(children.get_row(k)[0]) for k in children.rows}
        assert cut == {"100": "", "101": "", "102": "✂", "103": "✂", "104": "◆✂", "105": "✂", "106": ""}
        edges = app.screen.query_one("#edges", DataTable)
        assert sorted(str(edges.get_row(k)[0]) for k in edges.rows) == ["cache", "event", "event"]
        assert app.screen.query_one("#unfused", DataTable).row_count == 2
        # Proposal: FlashAttentionScore_3b8e (the in-SK cache reader) cannot stay behind
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProposalScreen) and app.state is not None
        table = screen.query_one("#kernels", DataTable)
        table.move_cursor(row=3)  # FlashAttentionScore_3b8e, the in-SK cache reader
        assert screen.selected_node() == 105
        await pilot.press("space")
        await settle(pilot)
        assert screen.last_check is not None and not screen.last_check.ok
        assert screen.last_check.rule == "§4.2(e) cache"
        assert app.state.proposal.excluded == (102, 103, 104, 105)  # unchanged (F: events included, §4.1)
        shown = text_of(app, "#cut-check")
        assert "refused (§4.2(e) cache)" in shown and "sk_fused_nodes.log:6" in shown
        assert "[INFO] [sk_optimizer.cpp:33]" in shown  # cited text shown literally, not as markup
        assert any((n.title or "") == "illegal cut refused" for n in app._notifications)


async def test_proposal_mechanism_and_set_edits_replan_the_diff_by_keys_and_mouse(tmp_path: Path) -> None:
    app = SkdbgApp(scene("event-bound-split"), session=SessionRef(tmp_path / "ledger"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProposalScreen) and app.state is not None
        table = screen.query_one("#kernels", DataTable)
        table.move_cursor(row=4)  # Cast_9f3e21: legal to add
        await pilot.press("space")
        await settle(pilot)
        assert app.state.proposal.excluded == (102, 103, 104, 105, 106)
        assert screen.last_check is not None and screen.last_check.ok
        await pilot.press("m")  # dependency_aligned_split → explicit_none_exclusion
        await settle(pilot)
        assert app.state.proposal.mechanism == "explicit_none_exclusion"
        assert "super_kernel_scope_begin(None)" in app.state.proposal.diff
        await pilot.press("r")
        await settle(pilot)
        assert app.state.proposal == app.state.analysis.proposal
        # the same by mouse: click a mechanism, click Accept
        await pilot.click("#mech-close_reopen_exclusion")
        await settle(pilot)
        assert app.state.proposal.mechanism == "close_reopen_exclusion"
        assert app.state.proposal.excluded == (102, 103, 104, 105)
        await pilot.click("#accept")
        await settle(pilot)
        # no session yet: Accept asks which one (`new` by default) and records it there
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.accepted
        assert app.state.decision is not None and app.state.decision.round_id == "EX1-BASE-X1"


async def test_accept_block_and_export_the_report_folder(tmp_path: Path) -> None:
    out = tmp_path / "report"
    app = SkdbgApp(scene("aiv-fault-add-custom"), report_dir=out, session=SessionRef(tmp_path / "ledger"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert app.state is not None
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("enter")  # record it in a new session
        await settle(pilot)
        assert app.state.accepted
        assert "accepted" in text_of(app, "#proposal-status")
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one(Input).value == str(out)
        await pilot.press("enter")
        await settle(pilot)
        assert sorted(p.name for p in out.iterdir()) == sorted(
            [
                "FAILURE_SCENE.md",
                "REPORT_INDEX.md",
                "analysis.json",
                "evidence_index.json",
                "failure_isolation.json",
                "scope-graph.svg",
                "timeline.svg",
            ]
        )
        assert "explicit_none_exclusion" in (out / "analysis.json").read_text(encoding="utf-8")
        # a folder inside the (sealed) scene is refused, nothing is written
        inside = scene("aiv-fault-add-custom") / "report-here"
        app.report_dir = inside
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert not inside.exists()
        assert any((n.title or "") == "export failed" for n in app._notifications)
        # block with a reason: the proposal is blocked, route R6
        await pilot.press("b")
        await settle(pilot)
        await pilot.press(*"owner rejects", "enter")
        await settle(pilot)
        assert app.state.proposal.status == "blocked"
        assert app.state.proposal.blocked_reason == "owner rejects"
        await pilot.press("a")
        await settle(pilot)
        assert not app.state.accepted


def test_json_citation_is_located_by_its_last_key() -> None:
    from skdbg.tui.screens.source import locate_json_path

    lines = ['{"scopes": [', '  {"taskQueues": {"aiv": {"taskQue": {', '    "taskInfos": [1, 2]}}}}]}']
    assert locate_json_path(lines, "scopes[0].taskQueues.aiv.taskQue.taskInfos[1]") == 3
    assert locate_json_path(lines, "scopes[0].missing") is None
