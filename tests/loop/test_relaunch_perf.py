"""Gate V5 through ``skdbg relaunch --perf-runs K`` (triage.md §5.1 V5): K clean baseline and K clean
candidate processes, interleaved, measured into the scene's ``perf.json`` and judged by the gate.

The stand-in job is test_relaunch.py's; in a timed run (``SKDBG_PERF_ROLE`` set) it records what it was
given and prints an ``SKDBG_METRIC`` line with the value the test chose for its role.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from skdbg.loop.relaunch import RelaunchRequest, relaunch
from skdbg.sessions.store import Ledger

_spec = importlib.util.spec_from_file_location("relaunch_cases", Path(__file__).with_name("test_relaunch.py"))
assert _spec is not None and _spec.loader is not None
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
session = _cases.session  # the fixture: the bundled failure frozen, its exclusion round opened

TIMED = r"""
import json, os, sys
from pathlib import Path
role = os.environ.get("SKDBG_PERF_ROLE")
if role:
    opts = json.loads(Path(os.environ["SKDBG_NPUGRAPH_EX_OPTIONS"]).read_text())
    record = Path(sys.argv[2])
    with record.open("a") as fh:
        fh.write(json.dumps({"role": role, "options": opts,
                             "meta": os.environ.get("ASCEND_OP_COMPILE_SAVE_KERNEL_META"),
                             "prof": os.environ.get("ASCEND_PROF_SK_ON")}) + "\n")
    n = sum(1 for line in record.read_text().splitlines() if json.loads(line)["role"] == role)
    values = json.loads(sys.argv[3])[role]
    print(f"SKDBG_METRIC e2e_latency_us={values[(n - 1) % len(values)]} us", flush=True)
    sys.exit(0)
"""


def _job(tmp: Path, values: dict[str, list[float]]) -> list[str]:
    script = tmp / "timed_job.py"
    script.write_text(TIMED + _cases.STANDIN)
    return [sys.executable, str(script), "fixed", str(tmp / "timed.jsonl"), json.dumps(values)]


def _run(session: tuple[Path, str], tmp: Path, values: dict[str, list[float]], runs: int = 3) -> dict:
    home, sid = session
    with Ledger(home) as led:
        res = relaunch(
            led,
            RelaunchRequest(sid, _cases.ROUND, _job(tmp, values), None, None, perf_runs=runs, timeout=120),
        )
        assert res.verify is not None
        return {"res": res, "gates": {g["gate"]: g for g in res.verify["verification"]}}


def test_v5_passes_when_the_candidate_does_not_regress(session: tuple[Path, str], tmp_path: Path) -> None:
    out = _run(session, tmp_path, {"baseline": [100.0, 101.0, 99.0], "candidate": [80.0, 81.0, 79.5]})
    v5 = out["gates"]["V5"]
    assert v5["result"] == "passed", v5
    assert "e2e_latency_us" in v5["detail"] and "mean 80.17us" in v5["detail"]
    perf = json.loads((out["res"].scene / "perf.json").read_text())
    assert [r["value"] for r in perf["candidate"]["runs"]] == [80.0, 81.0, 79.5]
    # every timed run was clean; the baseline ran with SK fusion off; roles interleaved
    seen = [json.loads(ln) for ln in (tmp_path / "timed.jsonl").read_text().splitlines()]
    assert [s["role"] for s in seen] == ["baseline", "candidate"] * 3
    assert all(s["meta"] is None and s["prof"] is None for s in seen)
    assert all(s["options"]["super_kernel_debug_options"] == {} for s in seen)
    assert {s["role"] for s in seen if s["options"].get("super_kernel_optimize") is False} == {"baseline"}
    assert out["res"].status == "passed"


def test_v5_fails_on_a_slower_candidate(session: tuple[Path, str], tmp_path: Path) -> None:
    out = _run(session, tmp_path, {"baseline": [100.0, 100.5, 99.5], "candidate": [120.0, 121.0, 119.0]})
    v5 = out["gates"]["V5"]
    assert v5["result"] == "failed"
    assert v5["detail"].startswith("regression: mean 120us > 100us")


def test_v5_fails_on_a_noisier_candidate(session: tuple[Path, str], tmp_path: Path) -> None:
    out = _run(session, tmp_path, {"baseline": [100.0, 100.0, 100.0], "candidate": [60.0, 99.0, 60.0]})
    v5 = out["gates"]["V5"]
    assert v5["result"] == "failed"
    # faster on average and in the tail, but unstable: only the std criterion fails
    assert v5["detail"].startswith("regression: std 22.5us > 0us × 1.5 + 1% of the mean")


@pytest.mark.parametrize("runs", [0])
def test_without_perf_runs_v5_is_not_run(session: tuple[Path, str], tmp_path: Path, runs: int) -> None:
    out = _run(session, tmp_path, {"baseline": [1.0], "candidate": [1.0]}, runs=runs)
    assert out["gates"]["V5"]["result"] == "not_run"
    assert "--perf-runs 3" in out["gates"]["V5"]["detail"]
    assert not (out["res"].scene / "perf.json").exists()
