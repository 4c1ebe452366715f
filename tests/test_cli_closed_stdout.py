"""``skdbg … | head``: stdout's reader goes away before everything is written.

A Unix filter then stops quietly (``cat`` dies of SIGPIPE, which the shell reports as 141). Before,
skdbg printed "skdbg: error: Broken pipe" with exit 3 (bad input) for CSV/JSON tables and exited 1
(the code of an skdbg bug) for rich tables. Each command runs as a real process writing into a pipe
whose reader is gone before it starts, so its first write fails (when a reader goes away in the
middle of a write, the kernel may accept the part that fits and Python then reports nothing).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from skdbg.cli_errors import EXIT_BAD_INPUT, EXIT_PIPE, cli_errors

REPO = Path(__file__).resolve().parent.parent
SCENE = REPO / "examples" / "scenes" / "high-single-stream"


def _run_into_closed_pipe(*args: str) -> tuple[int, bytes]:
    """Run ``skdbg ARGS`` with stdout a pipe that nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "skdbg.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=REPO,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("inspect", str(SCENE), "--table", "build-facts", "--format", "csv"),
        ("inspect", str(SCENE), "--table", "build-facts", "--format", "json"),
        ("inspect", str(SCENE), "--table", "device-args"),  # rich's table
        ("analyze", str(SCENE), "--format", "json", "--no-cache"),
        ("analyze", str(SCENE), "--no-cache"),
        ("explain", "--markdown"),  # a command without the error wrapper
        ("--help",),  # printed by click while it parses the top-level options
        ("--version",),
        ("inspect", "--help"),
    ],
)
def test_a_reader_that_went_away_stops_the_run_quietly(args: tuple[str, ...]) -> None:
    assert _run_into_closed_pipe(*args) == (EXIT_PIPE, b"")


@pytest.mark.parametrize(("gone", "code"), [(False, EXIT_BAD_INPUT), (True, EXIT_PIPE)])
def test_only_stdouts_own_broken_pipe_is_quiet(
    monkeypatch: pytest.MonkeyPatch, gone: bool, code: int
) -> None:
    """A pipe to another program that breaks (a launcher command that exits early) while stdout is
    fine is still an error with its message; the same error with stdout's reader gone stops quietly."""
    import skdbg.cli_errors as cli_errors_mod

    monkeypatch.setattr(cli_errors_mod, "stdout_gone", lambda: gone)
    monkeypatch.setattr(os, "dup2", lambda *args: None)  # keep this process's own stdout

    @click.command()
    @cli_errors()
    def writes_to_a_helper() -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    result = CliRunner().invoke(writes_to_a_helper, [])
    assert result.exit_code == code
    assert result.stderr == ("" if gone else f"skdbg: error: {os.strerror(errno.EPIPE)}\n")


def test_stdout_read_to_its_end_is_no_broken_pipe() -> None:
    """A reader that takes everything: the run ends normally (the poll sees no error on the pipe)."""
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "explain", "--markdown"],
        capture_output=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout == (REPO / "docs" / "glossary.md").read_bytes()
