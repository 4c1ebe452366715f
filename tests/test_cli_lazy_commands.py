"""The top-level group loads a command's module on first lookup (issue 18: analyze import CPU).

Why: ``skdbg.cli`` no longer imports the ten command modules of the other commands; each is added by
its loader in ``_LAZY_COMMANDS`` when click looks its name up. A loader that registers another name,
or a command missing from the table, would make the command unreachable or unlisted.
"""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from skdbg.cli import _LAZY_COMMANDS, main

#: every command of the CLI, as ``skdbg --help`` listed them before the group became lazy
ALL_COMMANDS = {
    "analyze",
    "bisect",
    "codegen",
    "collect",
    "demo",
    "diff",
    "explain",
    "inspect",
    "locate",
    "relaunch",
    "report",
    "scan",
    "session",
    "sim",
    "symbolize",
    "tui",
    "verify",
}


@pytest.mark.parametrize("name", sorted(_LAZY_COMMANDS))
def test_each_loader_adds_its_own_command(name: str) -> None:
    ctx = click.Context(main)
    cmd = main.get_command(ctx, name)
    assert cmd is not None and cmd.name == name


def test_codegen_keeps_its_subcommands() -> None:
    ctx = click.Context(main)
    codegen = main.get_command(ctx, "codegen")
    assert isinstance(codegen, click.Group)
    assert {"superkernel", "candidate"} <= set(codegen.list_commands(ctx))


def test_help_lists_every_command_in_a_fresh_interpreter() -> None:
    """A fresh process: no command module is loaded before ``--help`` asks the group for them."""
    out = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = out.split("Commands:", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line.split()]
    assert set(names) == ALL_COMMANDS
    assert names == sorted(names)


def test_a_mistyped_lazy_command_is_still_suggested() -> None:
    res = CliRunner().invoke(main, ["tu"])
    assert res.exit_code == 2
    assert "Did you mean 'tui'?" in res.output
