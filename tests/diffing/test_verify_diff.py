"""``skdbg verify OLD NEW --diff`` cites the diff; without the flag verify's contract is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
OLD, NEW = str(EXAMPLES / "high-single-stream"), str(EXAMPLES / "high-single-stream-fixed")


def test_verify_json_gains_a_diff_key_only_with_the_flag() -> None:
    runner = CliRunner()
    plain = json.loads(runner.invoke(main, ["verify", OLD, NEW, "--format", "json"]).stdout)
    res = runner.invoke(main, ["verify", OLD, NEW, "--format", "json", "--diff"])
    assert res.exit_code == 0, res.output
    cited = json.loads(res.stdout)
    assert "diff" not in plain
    assert cited.pop("diff")["schema"] == "skdbg.diff/1"
    assert cited == plain


def test_verify_text_appends_the_diff_summary() -> None:
    res = CliRunner().invoke(main, ["verify", OLD, NEW, "--diff"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert text.index("V3 ") < text.index("diff: ")
    assert "  ≠ suspect: SwiGlu_41d9e0#0 → —" in text
    assert "diff: " not in CliRunner().invoke(main, ["verify", OLD, NEW]).stdout
