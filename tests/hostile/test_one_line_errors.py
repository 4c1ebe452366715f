"""Issue 14 class 13 (second half): a value with a line break is printed escaped, on one line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main
from skdbg.show import one_line


def test_one_line_escapes_control_characters() -> None:
    assert one_line("bad name\nforged: line\r\x1b[31m") == "bad name\\nforged: line\\r\\x1b[31m"
    assert one_line("tab\tand ünïcode") == "tab\tand ünïcode"


def test_error_naming_a_file_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    scene = tmp_path / "scene\nskdbg: error: forged"
    res = CliRunner().invoke(main, ["analyze", str(scene)])
    assert res.exit_code == 3
    assert len(res.stderr.strip().splitlines()) == 1 and "scene\\nskdbg" in res.stderr
