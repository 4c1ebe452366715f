"""``skdbg`` with no command and ``skdbg tui``: wiring in skdbg/cli.py (the TUI itself is tested by Pilot)."""

from __future__ import annotations

from click.testing import CliRunner

from skdbg.cli import main


def test_no_command_without_a_terminal_prints_help_instead_of_starting_a_ui() -> None:
    res = CliRunner().invoke(main, [])  # CliRunner's stdin/stdout are not terminals
    assert res.exit_code == 0
    assert "Commands:" in res.stdout and "tui" in res.stdout
    assert "no interactive terminal" in res.stderr


def test_tui_is_a_listed_command_and_refuses_a_missing_scene() -> None:
    runner = CliRunner()
    assert "Open SCENE in the interactive TUI" in runner.invoke(main, ["tui", "--help"]).stdout
    res = runner.invoke(main, ["tui", "/nonexistent/scene"])
    assert res.exit_code == 3 and "/nonexistent/scene" in res.stderr
