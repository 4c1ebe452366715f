"""Issue 16 defect 2: an edit the re-plan can only block is refused — one message, set unchanged."""

from __future__ import annotations

from textual.widgets import Static

from skdbg.tui.app import SkdbgApp
from tests.support.tui_support import SIZE, scene, settle


async def test_noncontiguous_cut_is_refused_with_one_message() -> None:
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert app.state is not None
        before = app.state.proposal
        assert before.excluded == (102,)
        # Up, Up onto nodeId 100; adding it skips 101 between them in src/model.py
        await pilot.press("up", "up", "space")
        await settle(pilot)
        after = app.state.proposal
        assert after.excluded == (102,) and after.status == "proposed"
        assert after.collateral == before.collateral and after.blocked_reason is None
        check = str(app.screen.query_one("#cut-check", Static).render())
        assert check.startswith("refused (§4.4 rule 3): the fragment is not contiguous in source")
        assert "\n" not in check and "legal cut" not in check
        status = str(app.screen.query_one("#proposal-status", Static).render())
        assert "blocked" not in status and "collateral —" in status
        assert [n.title for n in app._notifications].count("illegal cut refused") == 1
