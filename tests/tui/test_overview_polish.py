"""Issue 16 defect 6: footer fits at 160 columns, one Screenshot command, the theme is remembered,
F1 points at `skdbg locate`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette

from skdbg.tui.app import SkdbgApp
from tests.support.tui_support import scene, settle


async def test_footer_keeps_copy_screenshot_quit_at_160_columns() -> None:
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        for mode in ("1", "2", "4", "5"):
            await pilot.press(mode)
            await settle(pilot)
            footer = app.screen.query_one("Footer")
            visible = [
                str(k.render()) for k in footer.query("FooterKey") if k.region.right <= footer.region.right
            ]
            text = " ".join(visible)
            assert "Copy" in text and "SVG" in text and "Quit" in text, (mode, text)


async def test_palette_lists_screenshot_once() -> None:
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Screenshot" not in titles
        await pilot.press("ctrl+p", *"screenshot")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        hits = [str(o.prompt) for o in app.screen.query_one("CommandList").options]
        assert sum("Screenshot" in h for h in hits) == 1, hits


async def test_theme_is_remembered_across_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    first = SkdbgApp(scene("high-single-stream"))
    first.restore_theme()
    default = first.theme
    async with first.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        chosen = first.theme
    assert chosen != default
    assert (tmp_path / "skdbg" / "tui.json").is_file()
    second = SkdbgApp(scene("high-single-stream"))
    second.restore_theme()
    assert second.theme == chosen
    # without restore_theme (tests, embedders) nothing is read
    assert SkdbgApp(scene("high-single-stream")).theme == default


def test_help_points_at_skdbg_locate() -> None:
    text = (Path(__file__).resolve().parents[2] / "skdbg" / "tui" / "help" / "keys.md").read_text("utf-8")
    assert "python -c" not in text and "`skdbg locate`" in text


async def test_scope_explains_its_marks_and_says_when_there_are_no_edges() -> None:
    from textual.widgets import DataTable, Static

    for name, has_edges in (("high-single-stream", False), ("event-bound-split", True)):
        app = SkdbgApp(scene(name))
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("4")
            await settle(pilot)
            legend = str(app.screen.query_one("#scope-legend", Static).render())
            assert "◆ suspect child" in legend and "✂ leaves the SK" in legend
            empty = app.screen.query_one("#edges-empty", Static)
            edges = app.screen.query_one("#edges", DataTable)
            assert (edges.row_count > 0) == has_edges, name
            assert empty.display != has_edges and edges.display == has_edges
            if not has_edges:
                assert str(empty.render()) == "no event/barrier/collective edges in this SK"


async def test_overview_shows_the_first_lines_of_the_evidence_chain() -> None:
    from textual.widgets import Static

    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert app.state is not None
        evidence = app.state.analysis.verdict.evidence
        text = str(app.screen.query_one("#overview", Static).render())
        assert f"Evidence chain  ({len(evidence)} items; all on screen 2)" in text
        assert len(evidence) == 14  # the first ten are rows, the rest a pointer to screen 2
        for item in evidence[:10]:
            assert f"{item.level} {item.where}" in text
        assert "… 4 more: press 2" in text
