"""``skdbg demo`` end to end through the CLI (issue 15 item 4 and its acceptance).

Expectations from the issue: the default story fails, is analysed (high, C3, SwiGlu named), proposed,
regenerated, re-launched on the emulator and verified — the child unfused, the rest still fused;
``--bisect`` starts from a low-confidence failure and isolates the child within ⌈log2 n⌉ + 2 probes
first. A story whose exclusion cannot fix the run (an operator bug) ends saying so, not "verified".
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.sessions.store import Ledger

#: the demo model's kernels (skdbg/loop/demo_model.py): seven kernel children in one scope
KERNELS = 7


def _demo(tmp_path: Path, *args: str) -> dict:
    res = CliRunner().invoke(main, ["demo", str(tmp_path / "d"), "--format", "json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_default_demo_verifies_the_exclusion(tmp_path: Path) -> None:
    out = _demo(tmp_path)
    assert [s["title"] for s in out["steps"]] == [
        "failing run",
        "analyze",
        "propose",
        "codegen candidate",
        "relaunch",
        "verify",
    ]
    analyze = out["steps"][1]["lines"]
    assert any(ln.startswith("verdict: high by rule C3 — suspect SwiGlu_") for ln in analyze)
    assert out["outcome"] == "verified"
    assert out["gates"]["V1"] == out["gates"]["V2"] == out["gates"]["V3"] == "passed"
    # the ledger keeps the failed attempt as negative evidence and the passed exclusion round
    with Ledger(tmp_path / "d" / "ledger") as ledger:
        base = ledger.attempts(out["session"], "SIM-BASE")
        assert [a.status for a in base] == ["failed"]
        assert [a.status for a in ledger.attempts(out["session"], out["exclusion_round"])] == ["passed"]
    # the failing scene is unchanged: what the demo froze is what is on disk
    assert (tmp_path / "d" / "failed-run" / "run.json").is_file()


def test_demo_bisect_isolates_then_verifies(tmp_path: Path) -> None:
    out = _demo(tmp_path, "--bisect")
    narrowing = out["steps"][2]["lines"]
    result = next(ln for ln in narrowing if ln.startswith("result: "))
    assert result.startswith("result: isolated after ")
    probes = int(result.split("after ")[1].split(" ")[0])
    assert probes <= math.ceil(math.log2(KERNELS)) + 2
    assert out["outcome"] == "verified", out["summary"]


def test_an_operator_bug_is_not_reported_as_fixed(tmp_path: Path) -> None:
    out = _demo(tmp_path, "--fault", "operator")
    assert out["outcome"] == "still_failing"
    assert "operator bug" in out["summary"]


def test_demo_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep.txt").write_text("mine")
    res = CliRunner().invoke(main, ["demo", str(tmp_path / "d")])
    assert res.exit_code == 2
    assert "not empty" in res.stderr and (tmp_path / "d" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("story", ["nope"])
def test_unknown_story_is_a_usage_error(tmp_path: Path, story: str) -> None:
    res = CliRunner().invoke(main, ["demo", str(tmp_path / "d"), "--fault", story])
    assert res.exit_code == 2
