"""`skdbg tui` refuses option combinations it would otherwise ignore silently (exit 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from tui_support import scene

from skdbg.cli import main


def plog(tmp: Path) -> Path:
    p = tmp / "plog-1_1.log"
    p.write_text(
        "[INFO] GE(1,python3):2026-06-10-14:00:00.000.000 [graph.cc:1] 1 Fn: hello\n", encoding="utf-8"
    )
    return p


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--screen", "log"], "--screen and --session-dir need a scene"),
        (["--session-dir", "LEDGER"], "--screen and --session-dir need a scene"),
    ],
)
def test_plog_files_with_scene_options_are_a_usage_error(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    args = [a.replace("LEDGER", str(tmp_path / "ledger")) for a in extra]
    res = CliRunner().invoke(main, ["tui", str(plog(tmp_path)), *args])
    assert res.exit_code == 2 and message in res.output


def test_diff_with_screen_is_a_usage_error() -> None:
    a, b = scene("high-single-stream"), scene("high-single-stream-fixed")
    res = CliRunner().invoke(main, ["tui", "--diff", str(a), str(b), "--screen", "log"])
    assert res.exit_code == 2 and "--screen and --session-dir do not apply" in res.output


def test_scan_with_session_dir_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["tui", "--scan", str(tmp_path), "--session-dir", str(tmp_path / "l")])
    assert res.exit_code == 2 and "--session-dir is the ledger of --session" in res.output
