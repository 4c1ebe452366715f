"""The acceptance loop of issue 5: failed attempt → proposal → new round -X1 → passing attempt → export
→ import → export, plus R7 refusal, tamper detection, dedupe and the TUI read API."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from session_support import FAILING, build_fixed_scene

from skdbg.atomic import OutputNotEmptyError
from skdbg.scenebuilder.examples import high_single_stream
from skdbg.scenebuilder.scene import build_scene
from skdbg.sessions.attempts import check_attempt, materialised, propose
from skdbg.sessions.blobs import hash_file
from skdbg.sessions.errors import LedgerError, StaleEvidenceError, TamperError
from skdbg.sessions.exchange import import_session
from skdbg.sessions.store import Ledger
from skdbg.sessions.views import diff_verdicts, verdict_history
from skdbg.workflow import export_session, freeze, verify_round

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Loop:
    ledger: Ledger
    home: Path
    sid: str
    new_round: str
    fixed: Path
    failed_hashes: dict[str, str]
    verify_doc: dict[str, object]


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> Loop:
    tmp = tmp_path_factory.mktemp("loop")
    scene_hashes = {
        p.relative_to(FAILING).as_posix(): hash_file(p).sha256 for p in FAILING.rglob("*") if p.is_file()
    }
    ledger = Ledger(tmp / "home")
    sid = ledger.new_session("acceptance")
    failed = freeze(ledger, sid, FAILING)
    new_round, status = propose(ledger, sid, failed.round_id)
    fixed = build_fixed_scene(tmp / "fixed", new_round, ledger.proposal(sid, new_round).body)
    freeze(ledger, sid, fixed)
    doc = verify_round(ledger, sid, new_round)
    assert status == "proposed"
    return Loop(ledger, tmp / "home", sid, new_round, fixed, scene_hashes, doc)


def test_loop_passes_and_keeps_the_failure(loop: Loop) -> None:
    led, sid = loop.ledger, loop.sid
    assert loop.new_round == "EX1-BASE-X1"
    assert [g["result"] for g in loop.verify_doc["verification"]] == [
        "passed",
        "passed",
        "passed",
        "not_run",
        "not_run",
    ]  # type: ignore[index]
    failed = led.attempt(sid, "EX1-BASE", 1)
    passed = led.attempt(sid, loop.new_round, 1)
    assert (failed.status, passed.status) == ("failed", "passed")
    assert led.round(sid, "EX1-BASE").status == "failed"
    rnd = led.round(sid, loop.new_round)
    assert rnd.status == "passed_gates(V1..V3)"
    assert rnd.derived_from == {
        "round": "EX1-BASE",
        "attempt": "attempt-001",
        "proposal_sha256": led.proposal(sid, loop.new_round).sha256,
    }
    assert [h["status"] for h in led.status_history("proposal", led.proposal(sid, loop.new_round).pk)] == [
        "proposed",
        "applied",
        "verified",
    ]
    # the failed attempt and its scene are intact: same files, same hashes, frozen copy checks out
    check_attempt(led, failed)
    frozen = {a.relpath: a.sha256 for a in led.artifacts(failed.pk)}
    assert {k: v for k, v in frozen.items()} == {k: loop.failed_hashes[k] for k in frozen}
    now = {p.relative_to(FAILING).as_posix(): hash_file(p).sha256 for p in FAILING.rglob("*") if p.is_file()}
    assert now == loop.failed_hashes
    with materialised(led, failed) as root:
        assert hash_file(root / "run.json").sha256 == loop.failed_hashes["run.json"]


def test_export_import_round_trip(loop: Loop, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_session(loop.ledger, loop.sid, out)
    report = (out / "REPORT.md").read_text()
    assert "| EX1/EX1-BASE/1 | device_fault | `EX1-BASE.attempt-001/FAILURE_SCENE.md`" in report
    assert "EX1-BASE-X1" not in report  # the passing attempt is not a failure
    exp = (out / "EXPERIMENT_REPORT.md").read_text()
    assert exp.index("Round EX1-BASE (base)") < exp.index("Round EX1-BASE-X1 (exclusion)")
    for item in ("1. Identity and phase", "4. Scene artifacts", "8. Next localisation entry"):
        assert f"#### {item}" in exp or f"##### {item}" in exp
    record = json.loads((out / "EX1-BASE.attempt-001" / "failure_isolation.json").read_text())
    assert json.dumps(record["suspect_child"], ensure_ascii=False, indent=2) in exp  # bound verbatim
    assert "| V3 fresh metadata shows the exclusion | passed |" in exp
    with Ledger(tmp_path / "other") as other:
        sid = import_session(other, out)
        assert sid == loop.sid
        assert other.attempt(sid, "EX1-BASE", 1).status == "failed"
        export_session(other, sid, tmp_path / "again")
        with pytest.raises(LedgerError, match="already exists"):
            import_session(other, out)
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    second = {
        p.relative_to(tmp_path / "again"): p.read_bytes()
        for p in (tmp_path / "again").rglob("*")
        if p.is_file()
    }
    assert first == second


def test_export_in_chinese(loop: Loop, tmp_path: Path) -> None:
    export_session(loop.ledger, loop.sid, tmp_path / "zh", lang="zh")
    assert "失败索引" in (tmp_path / "zh" / "REPORT.md").read_text()
    exp = (tmp_path / "zh" / "EXPERIMENT_REPORT.md").read_text()
    assert "轮次 EX1-BASE" in exp and "1. 身份与阶段" in exp
    assert (tmp_path / "zh" / "EX1-BASE.attempt-001" / "en" / "FAILURE_SCENE.md").is_file()
    with pytest.raises(OutputNotEmptyError, match="not empty"):
        export_session(loop.ledger, loop.sid, tmp_path / "zh")


def test_import_refuses_an_edited_export(loop: Loop, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_session(loop.ledger, loop.sid, out)
    target = out / "EX1-BASE.attempt-001" / "failure_isolation.json"
    target.write_text(target.read_text().replace("high", "low"))
    with Ledger(tmp_path / "other") as other, pytest.raises(TamperError, match="failure_isolation.json"):
        import_session(other, out)
    with Ledger(tmp_path / "other") as other:
        assert other.sessions() == []


def test_verdict_history_and_diff(loop: Loop) -> None:
    hist = verdict_history(loop.ledger, loop.sid)
    assert [(h["round_id"], h["status"], h["verdict.rule"]) for h in hist] == [
        ("EX1-BASE", "failed", "C3"),
        ("EX1-BASE-X1", "passed", "C0"),
    ]
    diff = {
        d["field"]: (d["a"], d["b"])
        for d in diff_verdicts(loop.ledger, loop.sid, ("EX1-BASE", 1), (loop.new_round, None))
    }
    assert diff["status"] == ("failed", "passed")
    assert diff["verdict.suspect.func_name"] == ("SwiGlu_41d9e0", None)
    assert "gate.passed" not in diff


def test_r7_refuses_stale_evidence(loop: Loop, tmp_path: Path) -> None:
    led, sid = loop.ledger, loop.sid
    before = len(led.attempts(sid))
    with pytest.raises(StaleEvidenceError, match="pid 48213 is the process of EX1-BASE/attempt-001"):
        freeze(led, sid, FAILING, round_id=loop.new_round)
    with pytest.raises(StaleEvidenceError):
        freeze(led, sid, FAILING, round_id="EX1-OTHER")
    assert "EX1-OTHER" not in {r.round_id for r in led.rounds(sid)}  # a refused attempt opens nothing
    # the failed attempt's plog slipped into a new process's scene
    scene = build_fixed_scene(
        tmp_path / "mixed", loop.new_round, led.proposal(sid, loop.new_round).body, pid=50003
    )
    plog = next((FAILING / "log" / "plog").glob("*.log"))
    shutil.copy(plog, scene / "log" / "plog" / plog.name)
    with pytest.raises(
        StaleEvidenceError,
        match=rf"log/plog/{plog.name}: evidence of pid 48213, but this attempt is pid 50003",
    ):
        freeze(led, sid, scene, round_id=loop.new_round)
    assert len(led.attempts(sid)) == before


def test_r7_refuses_a_byte_identical_artifact(loop: Loop, tmp_path: Path) -> None:
    led, sid = loop.ledger, loop.sid
    scene = build_fixed_scene(
        tmp_path / "again", loop.new_round, led.proposal(sid, loop.new_round).body, pid=50002
    )
    run = json.loads((scene / "run.json").read_text())
    run["attempt"] = 2
    (scene / "run.json").write_text(json.dumps(run))
    frozen_fail = FAILING / "sk_meta/48213/model_48_1/sk_fusion_fail_reasons.log"
    target = next(scene.rglob("sk_fusion_fail_reasons.log"))
    shutil.copy(frozen_fail, target)
    with pytest.raises(
        StaleEvidenceError, match="byte-identical to sk_meta/48213/model_48_1/sk_fusion_fail_reasons.log"
    ):
        freeze(led, sid, scene)


def test_tamper_detection_names_the_file(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(FAILING, scene)
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session()
        ref = freeze(led, sid, scene, storage="reference")
        check_attempt(led, ref)
        plog = next((scene / "log" / "plog").glob("*.log"))
        plog.write_text(plog.read_text() + "appended after freezing\n")
        with pytest.raises(TamperError, match=r"log/plog/plog-48213_.*\.log: .* was modified after freezing"):
            check_attempt(led, ref)


def test_copy_storage_dedupes_and_detects_tampered_objects(tmp_path: Path) -> None:
    spec = high_single_stream()
    a = build_scene(replace(spec, name="a", pid=111), tmp_path / "a").root
    b = build_scene(
        replace(spec, name="b", pid=222, run={"round_id": "EX1-BASE", "attempt": 2}), tmp_path / "b"
    ).root
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session()
        first = freeze(led, sid, a)
        second = freeze(led, sid, b, change="debug_op_exec_trace kept, new process")
        assert (first.round_id, second.round_id, second.no) == ("EX1-BASE", "EX1-BASE", 2)
        shas = [x.sha256 for att in (first, second) for x in led.artifacts(att.pk) if x.sha256]
        blobs = led.connection.execute(
            "SELECT COUNT(*) FROM blobs b JOIN artifacts a ON a.sha256 = b.sha256"
        ).fetchone()
        stored = {p.name for p in (tmp_path / "home" / "objects").rglob("*") if p.is_file()}
        assert set(shas) <= stored and len(set(shas)) < len(shas)  # kernel images etc. stored once
        assert blobs[0] == len(shas)
        victim = next(x for x in led.artifacts(first.pk) if x.role == "run_json")
        obj = led.objects.path(str(victim.sha256))
        obj.chmod(0o644)
        obj.write_text("{}")
        with pytest.raises(TamperError, match=r"EX1-BASE/attempt-001: run.json"):
            check_attempt(led, first)


def test_narrowing_round_for_a_low_verdict(tmp_path: Path) -> None:
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session()
        a = freeze(led, sid, REPO / "examples" / "scenes" / "non-sk-fault")
        with pytest.raises(LedgerError, match="no exclusion"):
            propose(led, sid, a.round_id)
        rid, status = propose(led, sid, a.round_id, kind="narrowing")
        assert rid == f"{a.round_id}-N1" and status == "proposed"
        assert propose(led, sid, a.round_id, kind="narrowing")[0] == f"{a.round_id}-N2"
        assert led.round(sid, rid).kind == "narrowing"
