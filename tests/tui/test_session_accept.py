"""Defect 3 (issue 16): Accept on the Proposal screen records the proposal, with the user's edits, in
the session ledger as ``skdbg session propose`` does, and the Proposal screen's export shows it.

Before the fix Accept only set a flag on screen: nothing reached the ledger and the exported
analysis.json carried no trace of the acceptance."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from session_support import FAILING
from session_tui_support import SID, base_session
from textual.widgets import DataTable, Input
from tui_support import SIZE, scene, settle

from skdbg.sessions.attempts import canonical_sha256, propose
from skdbg.sessions.store import Ledger
from skdbg.triage.engine import analyze
from skdbg.triage.model import Decision
from skdbg.triage.schema import SchemaError, validate_analysis
from skdbg.tui.app import SkdbgApp
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.proposal import ProposalScreen
from skdbg.tui.screens.session_ref import SessionRef, session_scene
from skdbg.workflow import freeze


async def _export(pilot: Any, app: SkdbgApp, out: Path) -> dict[str, Any]:
    await pilot.press("x")
    await settle(pilot)
    app.screen.query_one(Input).value = str(out)
    await pilot.press("enter")
    await settle(pilot)
    doc: dict[str, Any] = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    return doc


async def test_accept_records_the_edited_proposal_in_the_session_and_export_shows_it(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    with Ledger(home) as ledger:
        ledger.new_session("accept", session_id=SID)
        freeze(ledger, SID, scene("event-bound-split"))
    with session_scene(SessionRef(home, SID)) as (ref, root, why):
        assert why is None and ref.attempt == ("EX1-BASE", 1)
        app = SkdbgApp(root, start_mode="proposal", session=ref)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ProposalScreen) and app.state is not None
            screen.query_one("#kernels", DataTable).move_cursor(row=4)  # Cast_9f3e21: a legal addition
            await pilot.press("space")
            await settle(pilot)
            assert app.state.proposal.excluded == (102, 103, 104, 105, 106)
            await pilot.press("a")  # the session is known: recorded at once, no prompt
            await settle(pilot)
            assert not isinstance(app.screen, PromptScreen)
            with Ledger(home) as ledger:
                props = ledger.proposals(SID)
                rounds = [(r.round_id, r.kind, r.status) for r in ledger.rounds(SID)]
            assert rounds == [("EX1-BASE", "base", "failed"), ("EX1-BASE-X1", "exclusion", "open")]
            assert len(props) == 1
            body = props[0].body
            assert body["excluded"] == [102, 103, 104, 105, 106]  # the user's edit, not the engine's cut
            assert (props[0].source_round, props[0].source_attempt, props[0].status) == (
                "EX1-BASE",
                1,
                "proposed",
            )
            assert props[0].sha256 == canonical_sha256(body)
            status = str(app.screen.query_one("#proposal-status").render())
            assert "recorded in session S1 as round EX1-BASE-X1 (from EX1-BASE/attempt-001" in status
            doc = await _export(pilot, app, tmp_path / "report")
    validate_analysis(doc)  # the decision is part of the skdbg.analysis/1 schema
    proposal = doc["proposal"]
    assert proposal["status"] == "proposed" and proposal["excluded"] == [102, 103, 104, 105, 106]
    assert proposal["decision"] == {
        "status": "accepted",
        "session": SID,
        "round_id": "EX1-BASE-X1",
        "proposal_sha256": props[0].sha256,
        "ledger_status": "proposed",
        "source_attempt": "EX1-BASE/attempt-001",
        "edits": ["toggle nodeId 106"],
    }


async def test_unedited_accept_is_the_same_ledger_row_as_session_propose(tmp_path: Path) -> None:
    """Same frozen attempt, once through `skdbg session propose`, once through Accept: same body, same sha."""
    cli_home, tui_home = tmp_path / "cli" / "ledger", tmp_path / "tui" / "ledger"
    base_session(cli_home, verified=False)
    with Ledger(cli_home) as ledger:
        rid, _ = propose(ledger, SID, "EX1-BASE", 1)
        by_cli = ledger.proposal(SID, rid)
    with Ledger(tui_home) as ledger:
        ledger.new_session("tui", session_id=SID)
        freeze(ledger, SID, FAILING)
    with session_scene(SessionRef(tui_home, SID)) as (ref, root, _why):
        app = SkdbgApp(root, start_mode="proposal", session=ref)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("a")
            await settle(pilot)
    with Ledger(tui_home) as ledger:
        by_tui = ledger.proposals(SID)
    # the CLI session has X1 from base_session and X2 from the propose above: compare bodies and hashes
    assert [p.round_id for p in by_tui] == ["EX1-BASE-X1"]
    assert by_tui[0].body == by_cli.body and by_tui[0].sha256 == by_cli.sha256


async def test_without_a_session_accept_asks_and_esc_records_nothing(tmp_path: Path) -> None:
    home = tmp_path / "ledger"
    root = scene("aiv-fault-add-custom")
    app = SkdbgApp(root, start_mode="proposal", session=SessionRef(home))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is not None
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one(Input).value == "new"
        await pilot.press("escape")
        await settle(pilot)
        assert not app.state.accepted and app.state.decision is None
        warning = [n for n in app._notifications if (n.title or "") == "no session"]
        assert warning and warning[0].message.startswith("not accepted, nothing recorded")
        assert f"skdbg analyze {root} --session ID" in warning[0].message
        assert not (home / "ledger.db").exists()
        # an unknown session id: refused, nothing accepted
        await pilot.press("a")
        await settle(pilot)
        app.screen.query_one(Input).value = "no-such-session"
        await pilot.press("enter")
        await settle(pilot)
        assert not app.state.accepted
        failed = [n for n in app._notifications if (n.title or "") == "accept failed"]
        assert failed and "no session 'no-such-session'" in failed[0].message
        # an existing session: the scene is frozen into it, then the proposal recorded
        with Ledger(home) as ledger:
            ledger.new_session("mine", session_id="S9")
        await pilot.press("a")
        await settle(pilot)
        app.screen.query_one(Input).value = "S9"
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.accepted and app.state.decision is not None
        assert (app.state.decision.session, app.state.decision.round_id) == ("S9", "EX1-BASE-X1")
        assert app.session == SessionRef(home, "S9", ("EX1-BASE", 1))
        # pressing a again does not open a second round
        await pilot.press("a")
        await settle(pilot)
    with Ledger(home) as ledger:
        assert [p.round_id for p in ledger.proposals("S9")] == ["EX1-BASE-X1"]
        assert [a.scene_root for a in ledger.attempts("S9")] == [str(root)]


def test_the_schema_refuses_a_malformed_decision() -> None:
    """The optional `decision` is checked like the rest of the proposal (a wrong status is refused)."""
    analysis = analyze(scene("high-single-stream"))
    good = Decision(
        "accepted", "S1", "EX1-BASE-X1", "0" * 64, "proposed", "EX1-BASE/attempt-001", ("toggle nodeId 1",)
    )
    body = replace(analysis, proposal=replace(analysis.proposal, decision=good)).to_json()
    validate_analysis(body)
    assert body["proposal"]["decision"]["round_id"] == "EX1-BASE-X1"
    body["proposal"]["decision"]["status"] = "rejected"
    try:
        validate_analysis(body)
    except SchemaError as exc:
        assert "/proposal/decision/status" in str(exc)
    else:
        raise AssertionError("a decision with status 'rejected' was accepted by the schema")
    # and without a decision the proposal is what the engine wrote (no key added)
    assert "decision" not in analysis.to_json()["proposal"]
