"""The TUI explains codes with the glossary's words (issue 11 item 12): palette "Explain …",
"Explain a code…", F1's "Codes on this scene", the Overview tooltip and the Evidence row detail."""

from __future__ import annotations

from textual.widgets import DataTable, MarkdownViewer, Static
from tui_support import SIZE, scene, settle

from skdbg.tui.app import SkdbgApp
from skdbg.tui.commands import SkdbgCommands
from skdbg.tui.screens.dialogs import ExplainScreen, HelpScreen, codes_markdown, explain_markdown
from skdbg.tui.screens.evidence import EvidenceScreen

R5_TITLE = "R5 split at the dependency boundary"


async def test_palette_explains_the_codes_on_screen_and_any_code() -> None:
    """event-bound-split routes R5 with a dependency-aligned split: both are explainable."""
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        commands = {name: cb for name, cb, _ in SkdbgCommands(app.screen).commands()}
        assert f"Explain {R5_TITLE}" in commands
        assert "Explain C3 trace or unique PC, confirmed" in commands
        assert any(n.startswith("Explain T4 ") for n in commands)
        commands[f"Explain {R5_TITLE}"]()
        await settle(pilot)
        assert isinstance(app.screen, ExplainScreen) and app.screen.code == "R5"
        assert "whole dependent fragment" in explain_markdown("R5")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ExplainScreen)
        # any code, typed
        commands["Explain a code…"]()
        await settle(pilot)
        await pilot.press(*"t9", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ExplainScreen) and app.screen.code == "t9"


async def test_f1_lists_the_scene_codes_and_overview_tooltip_names_them() -> None:
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tip = str(app.screen.query_one("#overview", Static).tooltip)
        assert R5_TITLE in tip and "C3 trace or unique PC, confirmed" in tip
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert "R5" in app.screen.codes and "dependency_aligned_split" in app.screen.codes
        assert app.screen.query_one("#help", MarkdownViewer) is not None
    md = codes_markdown(["R5", "T4"])
    assert "## Codes on this scene" in md and "| `R5` | **split at the dependency boundary** —" in md


async def test_evidence_row_shows_its_trap_explained() -> None:
    """The high-single-stream chain has a T4 first-match quotation: selecting it explains T4."""
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, EvidenceScreen)
        chain = screen.query_one("#chain", DataTable)
        row = next(i for i, e in enumerate(app.state.analysis.verdict.evidence) if e.rule == "T4")  # type: ignore[union-attr]
        chain.move_cursor(row=row)
        await settle(pilot)
        detail = str(screen.query_one("#detail", Static).render())
        assert "L2 PC inside one child's code; T4 handler's first-match PC is only a quote" in detail
        assert "lowest index" in str(chain.tooltip)


def test_unknown_code_page_names_the_closest() -> None:
    assert "Closest: `R7`" in explain_markdown("R9")
