"""The loop end to end through the CLI on the emulator: a fusion-induced fault in ``swiglu`` →
``session add-attempt`` → ``session propose`` → ``skdbg relaunch --sim`` → V1–V3 passed (V4 not
needed on one stream, V5 needs three clean runs), ``swiglu`` unfused and the rest still fused.
The emulator runs as a process (``python -m skdbg.sim job``), through the same path as a user's job.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main
from skdbg.sessions.blobs import hash_file

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "models" / "mlp_fused"


def _cli(*args: str) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def _hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hash_file(p).sha256 for p in root.rglob("*") if p.is_file()}


def test_fused_fault_relaunched_on_the_emulator_verifies(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    assert json.loads((model / "model.json").read_text())["fault"] == {"kind": "fused", "op": "swiglu"}
    home = str(tmp_path / "home")
    scene = tmp_path / "failed"
    _cli("sim", str(model), "-o", str(scene))
    before = _hashes(scene)
    sid = _cli("session", "new", "--session-dir", home).strip()
    added = json.loads(
        _cli("session", "add-attempt", sid, str(scene), "--session-dir", home, "--format", "json")
    )
    assert added["status"] == "failed"
    prop = json.loads(
        _cli("session", "propose", sid, added["round_id"], "--session-dir", home, "--format", "json")
    )
    rid = prop["round_id"]
    assert (rid, prop["status"]) == (f"{added['round_id']}-X1", "proposed")
    doc = json.loads(
        _cli("relaunch", sid, rid, "--sim", str(model), "--session-dir", home, "--format", "json")
    )
    assert doc["status"] == "passed"
    assert doc["exit"] == {"status": 0, "signal": None, "timeout": False}
    gates = {g["gate"]: g["result"] for g in doc["verify"]["verification"]}
    assert gates == {"V1": "passed", "V2": "passed", "V3": "passed", "V4": "not_run", "V5": "not_run"}
    v3 = next(g for g in doc["verify"]["verification"] if g["gate"] == "V3")
    assert "SwiGlu" in v3["detail"] and "IN_UNFUSIBLE_SCOPE" in v3["detail"]
    # the emulator ran as its own process and said which SKs it built: swiglu in none of them
    log = (Path(doc["scene"]).parent / "runner.log").read_text()
    assert "clean" in log and "swiglu" not in log.split("SKs", 1)[1]
    # the failed attempt's scene is untouched, and its frozen copy intact
    assert _hashes(scene) == before
    _cli("session", "check", sid, "--session-dir", home)
    text = _cli("relaunch", sid, rid, "--sim", str(model), "--session-dir", home, "--seed", "3")
    assert f"{rid}/attempt-002: passed" in text


def test_operator_fault_persists_unfused_and_is_routed_to_operator_debugging(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    doc = json.loads((model / "model.json").read_text())
    doc["fault"] = {"kind": "operator", "op": "swiglu"}
    (model / "model.json").write_text(json.dumps(doc))
    home = str(tmp_path / "home")
    scene = tmp_path / "failed"
    _cli("sim", str(model), "-o", str(scene))
    sid = _cli("session", "new", "--session-dir", home).strip()
    added = json.loads(
        _cli("session", "add-attempt", sid, str(scene), "--session-dir", home, "--format", "json")
    )
    prop = json.loads(
        _cli("session", "propose", sid, added["round_id"], "--session-dir", home, "--format", "json")
    )
    out = json.loads(
        _cli(
            "relaunch", sid, prop["round_id"], "--sim", str(model), "--session-dir", home, "--format", "json"
        )
    )
    # swiglu faults on its own too: not the fusion; V2 stops the verification
    assert out["status"] == "failed"
    assert out["exit"]["status"] == 1
    gates = {g["gate"]: g["result"] for g in out["verify"]["verification"]}
    assert (gates["V1"], gates["V2"], gates["V3"]) == ("passed", "failed", "not_run")
    assert "operator bug" in out["next_step"] and "X3" in out["next_step"]
