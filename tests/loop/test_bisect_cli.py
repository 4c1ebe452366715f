"""End to end through the CLI on the emulator: ``skdbg bisect SESSION ROUND --sim MODEL_DIR`` runs every
probe through ``skdbg relaunch`` (a ``python -m skdbg.sim job`` process per launch) and isolates the
child of a low-confidence wrong result (no fault line, no SK named) within ⌈log2 n⌉ + 2 probes; the
exclusion it records then passes V1–V3 when relaunched."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main
from skdbg.sessions.errors import NotFound
from skdbg.sessions.store import Ledger
from skdbg.sim import load_model, write_scene
from skdbg.workflow import freeze

_spec = importlib.util.spec_from_file_location("bisect_sim", Path(__file__).with_name("test_bisect_sim.py"))
assert _spec is not None and _spec.loader is not None
_sim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sim)


def test_cli_bisect_on_the_emulator_isolates_a_wrong_result(tmp_path: Path) -> None:
    _sim.make_model(tmp_path / "model", 11)
    doc = json.loads((tmp_path / "model" / "model.json").read_text())
    doc["fault"] = {"kind": "wrong_result", "op": "op11"}
    (tmp_path / "model" / "model.json").write_text(json.dumps(doc))
    write_scene(load_model(tmp_path / "model"), tmp_path / "failed", seed=1, pid=40001)
    home = tmp_path / "home"
    with Ledger(home) as ledger:
        sid = ledger.new_session("e2e")
        base = freeze(ledger, sid, tmp_path / "failed")
        assert ledger.snapshot_json(base.pk, "analysis.json")["verdict"]["confidence"] == "low"
    args = ["bisect", sid, base.round_id, "--sim", str(tmp_path / "model"), "--session-dir", str(home)]
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "isolated"
    assert [c["func_name"].split("_")[0] for c in out["children"]] == ["Op11"]
    assert out["probes"] <= math.ceil(math.log2(16)) + 2
    assert out["verdict"]["confidence"] == "high" and out["exclusion_round"] == "SIM-BASE-X1"
    # the failed attempt is unchanged and still the newest attempt of its round
    with Ledger(home) as ledger:
        assert [a.no for a in ledger.attempts(sid, base.round_id)] == [1]
        assert ledger.proposal(sid, "SIM-BASE-X1").body["child"]["func_name"].startswith("Op11")
    # the recorded exclusion closes the loop: relaunch it, V1–V3 pass against the failed attempt
    rel = CliRunner().invoke(
        main, ["relaunch", sid, "SIM-BASE-X1", "--sim", str(tmp_path / "model"), "--session-dir", str(home)]
    )
    assert rel.exit_code == 0, rel.output
    for gate in ("V1", "V2", "V3"):
        assert f"{gate}: passed" in rel.output
    assert "differs from the recorded one" not in rel.output
    # re-running the finished bisection launches nothing and answers the same
    again = CliRunner().invoke(main, [*args, "--format", "json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["steps"] == out["steps"]


def test_kill_9_during_a_bisection_and_the_rerun_resumes(tmp_path: Path) -> None:
    """A real ``kill -9`` of the ``skdbg bisect`` process while it launches probe 3; re-running the
    command finishes the bisection without re-launching any frozen run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    _sim.make_model(tmp_path / "model", 11)
    doc = json.loads((tmp_path / "model" / "model.json").read_text())
    doc["fault"] = {"kind": "wrong_result", "op": "op11"}
    (tmp_path / "model" / "model.json").write_text(json.dumps(doc))
    write_scene(load_model(tmp_path / "model"), tmp_path / "failed", seed=1, pid=40001)
    home = tmp_path / "home"
    with Ledger(home) as ledger:
        sid = ledger.new_session("kill")
        base = freeze(ledger, sid, tmp_path / "failed")
    args = ["bisect", sid, base.round_id, "--sim", str(tmp_path / "model"), "--session-dir", str(home)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "skdbg.cli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def frozen(rid: str) -> int:
        with Ledger(home, read_only=True) as led:
            try:
                return len(led.attempts(sid, rid))
            except NotFound:
                return 0

    try:
        deadline = time.monotonic() + 120
        while frozen("SIM-BASE-N3") < 1:  # probe 2 frozen: the process is now launching probe 3
            assert proc.poll() is None, "the bisection ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {r: frozen(r) for r in ("SIM-BASE-N1", "SIM-BASE-N2", "SIM-BASE-N3")}
    assert before == {"SIM-BASE-N1": 2, "SIM-BASE-N2": 1, "SIM-BASE-N3": 1}
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "isolated" and out["children"][0]["func_name"].startswith("Op11_")
    assert {r: frozen(r) for r in before} == before  # nothing frozen before the kill ran again
