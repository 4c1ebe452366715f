"""App-wide features: F1 help covers every binding, keymap override, palette, themes, copy, SVG
screenshot, cancel, the no-example case and the click command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static
from tui_support import SIZE, scene, settle

from skdbg.tui.app import SkdbgApp
from skdbg.tui.cli import example_scene, missing_example_text, tui
from skdbg.tui.keymap import ALL_BINDINGS, KeymapError, keymap_path, load_keymap
from skdbg.tui.screens.dialogs import HelpScreen, help_markdown
from skdbg.tui.screens.scope import ScopeScreen
from skdbg.tui.state import Cancelled, run_analysis


def test_help_explains_every_binding_id() -> None:
    text = help_markdown()
    ids = {b.id for b in ALL_BINDINGS}
    assert None not in ids, "every binding carries an id"
    missing = sorted(i for i in ids if i is not None and f"`{i}`" not in text)
    assert not missing, f"F1 help does not explain {missing}"
    # and the help names no id that does not exist (stale help)
    named = set(
        re.findall(r"`((?:app|screen|evidence|log|source|proposal|help|export|scope)\.[a-z_]+)`", text)
    )
    assert named <= ids


def test_keymap_file_loaded_from_env_and_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "keymap.toml"
    good.write_text('[keymap]\n"screen.scope" = "s"\n"log.next_fault" = "j,e"\n', encoding="utf-8")
    monkeypatch.setenv("SKDBG_KEYMAP", str(good))
    assert keymap_path() == good
    assert load_keymap() == {"screen.scope": "s", "log.next_fault": "j,e"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[keymap]\n"screen.nope" = "s"\n', encoding="utf-8")
    with pytest.raises(KeymapError, match="unknown binding id 'screen.nope'"):
        load_keymap(bad)
    bad.write_text("[keymap\n", encoding="utf-8")
    with pytest.raises(KeymapError, match="not a TOML keymap"):
        load_keymap(bad)
    monkeypatch.setenv("SKDBG_KEYMAP", str(tmp_path / "absent.toml"))
    with pytest.raises(KeymapError, match="not found"):
        load_keymap()
    monkeypatch.delenv("SKDBG_KEYMAP")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert load_keymap() == {}  # no file in the config dir: defaults


async def test_keymap_override_rebinds_a_screen_key() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"), keymap={"screen.scope": "s"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")  # the default key no longer switches
        await settle(pilot)
        assert not isinstance(app.screen, ScopeScreen)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, ScopeScreen)


async def test_bad_keymap_is_reported_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "k.toml"
    bad.write_text('[keymap]\n"screen.nope" = "s"\n', encoding="utf-8")
    monkeypatch.setenv("SKDBG_KEYMAP", str(bad))
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is not None
        assert any((n.title or "") == "keymap ignored" for n in app._notifications)


async def test_palette_context_commands_theme_and_screen() -> None:
    from skdbg.tui.commands import SkdbgCommands

    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        names = [c[0] for c in SkdbgCommands(app.screen).commands()]
        assert "Proposal: mechanism close_reopen_exclusion" in names
        assert "Proposal: export report" in names
        assert any(n.startswith("Jump: L3 log/plog/") for n in names)
        assert "Log: next fault" not in names
        await pilot.press("3")
        await settle(pilot)
        names = [c[0] for c in SkdbgCommands(app.screen).commands()]
        assert "Log: next fault" in names and "Proposal: export report" not in names
        # typed into the palette: a theme, then a screen
        assert app.theme != "nord"
        await pilot.press("ctrl+p", *"nord")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.theme == "nord"
        await pilot.press("ctrl+p", *"to scope")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ScopeScreen)


async def test_theme_key_copy_screenshot_and_help(tmp_path: Path) -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"), screenshot_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = app.theme
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.theme != before
        await pilot.press("c")
        await settle(pilot)
        assert app.clipboard.startswith("high (C3): add_custom (task 1, nodeId 121)")
        await pilot.press("f8")
        await settle(pilot)
        shots = list(tmp_path.glob("*.svg"))
        assert len(shots) == 1 and "<svg" in shots[0].read_text(encoding="utf-8")
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)


def test_analysis_can_be_cancelled_between_stages() -> None:
    seen: list[str] = []
    with pytest.raises(Cancelled, match="cancelled after localise"):
        run_analysis(
            scene("aiv-fault-add-custom"), lambda stage, d, t: seen.append(stage), lambda: len(seen) >= 2
        )
    assert seen == ["open scene", "localise"]


async def test_escape_cancels_a_running_analysis() -> None:
    app = SkdbgApp(scene("aiv-fault-add-custom"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await settle(pilot)
        # either it finished before the key arrived, or it stopped and says so
        if app.state is None:
            assert "cancelled" in app.status_text
        else:
            assert app.status_text == "ready"


async def test_without_a_scene_the_app_says_why() -> None:
    app = SkdbgApp(None, missing=missing_example_text())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = str(app.screen.query_one("#waiting", Static).render())
        assert "wheels ship no examples" in text
        await pilot.press("2")
        await settle(pilot)
        assert "wheels ship no examples" in str(app.screen.query_one("#waiting", Static).render())


async def test_bad_scene_reports_instead_of_crashing(tmp_path: Path) -> None:
    app = SkdbgApp(tmp_path / "nope")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state is None
        assert "cannot analyse" in app.status_text and "ctrl+r to retry" in app.status_text


def test_example_scene_found_in_the_checkout_and_cli_help() -> None:
    found = example_scene()
    assert found is not None and found.name == "aiv-fault-add-custom" and (found / "run.json").is_file()
    result = CliRunner().invoke(tui, ["--help"])
    assert result.exit_code == 0 and "SCENE" in result.output
    result = CliRunner().invoke(tui, ["/no/such/scene"])
    assert result.exit_code == 3
    assert "/no/such/scene" in result.output
