"""Attempt statuses that ``skdbg verify`` and the session ledger must agree on (issue 11 items 7 and 8).

Item 7 (triage.md §3.9, §6.3, R4): a re-launch of the *same* round with only a debug option added is a
diagnostic attempt; when it exits 0 it is ``passed`` as a diagnostic, routes R4 (the fault disappears
only under debug mode → retest clean) and the round stays ``failed``.
Item 8 (§6.3, R7): a launch whose model source is not the declared change is ``invalid`` (not
``failed``; the corrected launch is the next attempt of the same round), and evidence that is really
the failed attempt's routes R7 whatever V1–V3 say.

Every expectation below is written from the spec, not read back from skdbg's output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from session_support import FAILING, build_fixed_scene

from skdbg.cli import main
from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene
from skdbg.sessions.attempts import propose
from skdbg.sessions.errors import NotFound, StaleEvidenceError
from skdbg.sessions.store import Ledger
from skdbg.triage.schema import validate_verify
from skdbg.triage.verify import VerifyResult, verify_scenes
from skdbg.workflow import freeze, verify_round

KIDS = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Kernel("DequantSwiglu_9a", "AIV_ONLY"),
]
ROUND = "EX1-BASE"
CLEAN_EXIT = {"status": 0, "signal": None, "timeout": False}
TRACE = {"debug_op_exec_trace": 1}


def failed_round(dest: Path) -> Path:
    """OLD: round EX1-BASE attempt 1, no debug options; core 3 faults with its PC in SK-entry code (only the
    entry is known, a low verdict whose next step is an exec-trace re-run, D1); run.json exit status 1."""
    spec = SceneSpec(
        children=KIDS, cores=[FaultCore(3, "AIV", pc=("entry",))], debug_options={}, run={"round_id": ROUND}
    )
    return build_scene(spec, dest).root


def rerun(dest: Path, *, debug: dict[str, Any], fault: str = "none", pid: int = 50002, **run: Any) -> Path:
    """NEW: the same candidate (same source, options, config) re-launched as attempt 2 of round EX1-BASE with
    the given debug options; ``fault="none"`` = it exits 0 with no fault line."""
    doc: dict[str, Any] = {"round_id": ROUND, "attempt": 2, "failure_phase": None, **run}
    if fault == "none":
        doc.setdefault("exit", CLEAN_EXIT)
    cores = [FaultCore(3, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))] if fault == "sk" else []
    spec = SceneSpec(
        children=KIDS,
        cores=cores,
        pid=pid,
        fault=fault,
        op_trace="debug_op_exec_trace" in debug,
        debug_options=debug,
        run=doc,
    )
    return build_scene(spec, dest).root


def checked(res: VerifyResult) -> dict[str, Any]:
    doc = res.to_json()
    validate_verify(doc)
    return doc


def summary(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What must agree between ``skdbg verify`` and ``skdbg session verify``."""
    return (
        doc["routes"],
        [g["result"] for g in doc["verification"]],
        doc["round"]["status"],
        doc["attempt"]["status"],
        [e["status"] for e in doc["ledger"]],
    )


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def cli_json(*args: str) -> Any:
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------------------------------------------ item 7


def test_diagnostic_rerun_that_passes_is_r4_and_the_round_stays_failed(tmp_path: Path) -> None:
    """Situation: attempt 2 of the failed round EX1-BASE adds only debug_op_exec_trace=1 and exits 0 — the fault
    disappears under debug mode. Spec: passed as a diagnostic, R4, round failed, no candidate gate passed."""
    old, new = failed_round(tmp_path / "old"), rerun(tmp_path / "new", debug=TRACE)
    res = verify_scenes(old, new)
    doc = checked(res)
    assert doc["routes"] == ["R4"]
    assert doc["attempt"] == {
        "round_id": ROUND,
        "attempt": 2,
        "status": "passed",
        "note": doc["attempt"]["note"],
    }
    assert "R4" in doc["attempt"]["note"] and "debug_op_exec_trace=1" in doc["attempt"]["note"]
    assert doc["round"] == {"round_id": ROUND, "status": "failed"}
    # §5.2: a pass under a debug option proves nothing about the candidate: no gate may say passed
    assert [g["result"] for g in doc["verification"]] == ["not_run"] * 5
    assert all("diagnostic" in g["detail"] for g in doc["verification"])
    assert [(e["round_id"], e["attempt"], e["status"]) for e in doc["ledger"]] == [
        (ROUND, 1, "failed"),
        (ROUND, 2, "passed"),
    ]
    assert doc["diagnostic"] == {"debug_options_added": TRACE}


def test_diagnostic_rerun_where_the_fault_stays_is_failed_without_r4(tmp_path: Path) -> None:
    """Situation: the exec-trace re-run of round EX1-BASE faults again (SK fault, exit 1). Spec: the diagnostic
    attempt failed (it is localisation evidence, not R4: the fault did not disappear); round failed."""
    old = failed_round(tmp_path / "old")
    new = rerun(
        tmp_path / "new", debug=TRACE, fault="sk", exit={"status": 1, "signal": None, "timeout": False}
    )
    doc = checked(verify_scenes(old, new))
    assert doc["routes"] == []
    assert (doc["attempt"]["status"], doc["round"]["status"]) == ("failed", "failed")
    assert doc["diagnostic"] == {"debug_options_added": TRACE}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"candidate": {"source_revision": "0000000"}}, "the source revision changed: another candidate"),
        (
            {"candidate": {"super_kernel_optimize_options": {"auto_op_parallel": 1}}},
            "an optimize option changed",
        ),
        ({"round_id": "EX1-BASE-X1"}, "another round"),
    ],
)
def test_not_a_diagnostic_rerun_when_more_than_a_debug_option_changed(
    tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    """Situation: NEW adds debug_op_exec_trace=1 but also changes the candidate identity or the round. Spec: not a
    diagnostic attempt of the round (§6.3), so never R4 and never 'passed as diagnostic'."""
    old = failed_round(tmp_path / "old")
    new = rerun(tmp_path / "new", debug=TRACE, **change)
    doc = checked(verify_scenes(old, new))
    assert "R4" not in doc["routes"], why
    assert doc["diagnostic"] is None, why
    assert doc["attempt"]["status"] != "passed", why


def test_clean_rerun_without_debug_options_is_not_diagnostic(tmp_path: Path) -> None:
    """Situation: attempt 2 of EX1-BASE re-launches the same candidate with no debug option at all. Spec: nothing
    was added, so it is not a diagnostic attempt and does not route R4."""
    old = failed_round(tmp_path / "old")
    doc = checked(verify_scenes(old, rerun(tmp_path / "new", debug={})))
    assert doc["diagnostic"] is None and "R4" not in doc["routes"]


def test_session_add_attempt_and_session_verify_agree_with_verify(tmp_path: Path) -> None:
    """Situation: the failed attempt and its exec-trace re-run (exit 0) are frozen in one session. Spec: the ledger
    records attempt 2 passed (diagnostic, R4) with the round still failed, and ``session verify`` gives the same
    routes/statuses as ``skdbg verify OLD NEW``."""
    old, new = failed_round(tmp_path / "old"), rerun(tmp_path / "new", debug=TRACE)
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session("diag")
        first = freeze(led, sid, old)
        second = freeze(led, sid, new)
        assert (first.round_id, first.status) == (ROUND, "failed")
        assert (second.round_id, second.no, second.status) == (ROUND, 2, "passed")
        assert second.change == "diagnostic: adds debug_op_exec_trace=1 (candidate unchanged)"
        detail = led.status_history("attempt", second.pk)[-1]["detail"]
        assert "R4" in detail and "diagnostic" in detail
        assert led.round(sid, ROUND).status == "failed"
        session_doc = verify_round(led, sid, ROUND, 2)
        assert led.round(sid, ROUND).status == "failed"
        assert led.attempt(sid, ROUND, 2).status == "passed"
    direct = checked(verify_scenes(old, new))
    assert (
        summary(session_doc)
        == summary(direct)
        == (
            ["R4"],
            ["not_run"] * 5,
            "failed",
            "passed",
            ["failed", "passed"],
        )
    )


def test_cli_verify_and_cli_session_agree(tmp_path: Path) -> None:
    """Situation: as above, through the command line. Spec: ``skdbg verify`` and ``skdbg session add-attempt`` /
    ``session verify`` report the same status (passed), route (R4) and round status (failed)."""
    old, new = failed_round(tmp_path / "old"), rerun(tmp_path / "new", debug=TRACE)
    direct = cli_json("verify", str(old), str(new))
    d = ["--session-dir", str(tmp_path / "s")]
    sid = cli_json("session", "new", *d)["id"]
    cli_json("session", "add-attempt", sid, str(old), *d)
    added = cli_json("session", "add-attempt", sid, str(new), *d)
    assert (added["round_id"], added["attempt"], added["status"]) == (ROUND, "attempt-002", "passed")
    via_session = cli_json("session", "verify", sid, f"{ROUND}/attempt-002", *d)
    assert summary(direct) == summary(via_session)
    assert direct["routes"] == ["R4"] and direct["attempt"]["status"] == "passed"
    code, out, _ = cli("verify", str(old), str(new))
    assert code == 0 and "routes: R4" in out and f"round {ROUND}: failed" in out


def test_session_verify_of_a_base_attempt_that_is_no_rerun_says_why(tmp_path: Path) -> None:
    """Situation: ``session verify`` on the only attempt of a base round (no proposal opened it, nothing earlier to
    compare with). Spec: nothing to revalidate — a clear refusal, no gate recorded."""
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session("base")
        freeze(led, sid, failed_round(tmp_path / "old"))
        with pytest.raises(NotFound, match="not a diagnostic re-run"):
            verify_round(led, sid, ROUND, 1)
        assert led.gates(led.attempt(sid, ROUND, 1).pk) == []


# ------------------------------------------------------------------------------------------ item 8


def _string_none(path: Path) -> None:
    """The materialisation error of T8: the string "None" where the declared edit has the None literal."""
    text = path.read_text()
    assert "super_kernel_scope_begin(None)" in text
    path.write_text(
        text.replace("super_kernel_scope_begin(None)", 'super_kernel_scope_begin("None")').replace(
            "super_kernel_scope_end(None)", 'super_kernel_scope_end("None")'
        )
    )


def _set_exit(root: Path, exit: dict[str, Any]) -> None:
    run = root / "run.json"
    doc = json.loads(run.read_text())
    doc["exit"] = exit
    run.write_text(json.dumps(doc))


def test_string_none_candidate_is_invalid_in_verify_and_in_the_ledger(tmp_path: Path) -> None:
    """Situation: the bundled high-single-stream failure is proposed for exclusion (round EX1-BASE-X1); the launch
    of X1 carries ``super_kernel_scope_begin("None")`` — a string — instead of the declared ``None`` literal, and
    crashes (exit 1). Spec: the attempt is ``invalid`` (materialisation mismatch), not ``failed``, in ``verify`` and
    in the ledger; the round is not failed, so the corrected launch is attempt 2 of the same round and passes."""
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session("t8")
        freeze(led, sid, FAILING)
        x1, _ = propose(led, sid, ROUND)
        body = led.proposal(sid, x1).body
        bad = build_fixed_scene(tmp_path / "bad", x1, body, pid=50001)
        _string_none(bad / "src" / "model.py")
        _set_exit(bad, {"status": 1, "signal": None, "timeout": False})
        direct = checked(verify_scenes(FAILING, bad))
        assert direct["attempt"]["status"] == "invalid"
        assert direct["round"]["status"] == "open"
        assert direct["verification"][0]["result"] == "failed"
        assert "materialisation mismatch" in direct["verification"][0]["detail"]
        assert "T8" in direct["verification"][0]["detail"]
        assert direct["verification"][0]["evidence"][0]["file"] == "src/model.py"

        recorded = freeze(led, sid, bad)
        assert recorded.status == "invalid"
        assert "materialisation mismatch" in (led.status_history("attempt", recorded.pk)[-1]["detail"] or "")
        assert led.round(sid, x1).status == "open"  # an invalid launch never fails the round
        session_doc = verify_round(led, sid, x1, 1)
        assert summary(session_doc) == summary(direct)
        assert led.attempt(sid, x1, 1).status == "invalid"
        assert led.round(sid, x1).status == "open"

        good = build_fixed_scene(tmp_path / "good", x1, body, pid=50003)
        json_run = json.loads((good / "run.json").read_text())
        json_run["attempt"] = 2
        (good / "run.json").write_text(json.dumps(json_run))
        corrected = freeze(led, sid, good)
        assert (corrected.no, corrected.status) == (2, "running")
        assert verify_round(led, sid, x1, 2)["round"]["status"] == "passed_gates(V1..V3)"
        assert led.round(sid, x1).status == "passed_gates(V1..V3)"
        assert [a.status for a in led.attempts(sid, x1)] == ["invalid", "passed"]


def test_stale_evidence_routes_r7_even_when_v1_fails(tmp_path: Path) -> None:
    """Situation: the X1 launch of the high-single-stream exclusion carries the failed attempt's own plog (a
    byte-identical copy) and its environment probe says ready=false, so V1 fails first. Spec (analysis-json.md
    verify example): R7 whatever V1–V3 say, the copied plog listed as refused, the attempt invalid."""
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    proposal = analyze_context(open_context(FAILING)).proposal.to_json()
    new = build_fixed_scene(tmp_path / "new", "EX1-BASE-X1", proposal)
    plog = next((FAILING / "log" / "plog").glob("plog-*.log"))
    shutil.copy(plog, new / "log" / "plog" / plog.name)
    probe = new / "env" / "check_environment.json"
    doc = json.loads(probe.read_text())
    doc["ready"] = False
    probe.write_text(json.dumps(doc))
    res = checked(verify_scenes(FAILING, new))
    assert res["verification"][0]["result"] == "failed" and "ready" in res["verification"][0]["detail"]
    assert res["routes"] == ["R7"]
    assert res["attempt"]["status"] == "invalid"
    assert [r["path"] for r in res["refused_evidence"]] == [f"log/plog/{plog.name}"]
    # the ledger refuses the same evidence outright: it never becomes an attempt
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session("r7")
        freeze(led, sid, FAILING)
        with pytest.raises(StaleEvidenceError, match="R7"):
            freeze(led, sid, new)
        assert len(led.attempts(sid)) == 1


def test_diagnostic_rerun_of_a_wrongly_materialised_launch_stays_invalid(tmp_path: Path) -> None:
    """Situation: X1's launch carries the string "None" (invalid) and crashes; attempt 2 re-runs that same wrong
    source with only debug_op_exec_trace=1 added and exits 0. Spec: it is still not the declared change (§6.3),
    so invalid — never 'passed' with R4 — in the ledger and in ``session verify``."""
    with Ledger(tmp_path / "home") as led:
        sid = led.new_session("t8-diag")
        freeze(led, sid, FAILING)
        x1, _ = propose(led, sid, ROUND)
        body = led.proposal(sid, x1).body
        bad = build_fixed_scene(tmp_path / "bad", x1, body, pid=50001)
        _string_none(bad / "src" / "model.py")
        _set_exit(bad, {"status": 1, "signal": None, "timeout": False})
        assert freeze(led, sid, bad).status == "invalid"
        again = build_fixed_scene(tmp_path / "again", x1, body, pid=50005)
        _string_none(again / "src" / "model.py")
        run = json.loads((again / "run.json").read_text())
        run["attempt"] = 2
        run["candidate"]["super_kernel_debug_options"] = TRACE
        (again / "run.json").write_text(json.dumps(run))
        second = freeze(led, sid, again)
        assert (second.no, second.status) == (2, "invalid")
        doc = verify_round(led, sid, x1, 2)
        assert doc["attempt"]["status"] == "invalid" and "R4" not in doc["routes"]
        assert doc["diagnostic"] == {"debug_options_added": TRACE}
        assert led.attempt(sid, x1, 2).status == "invalid"


def test_contract_rejects_r4_with_a_passed_gate(tmp_path: Path) -> None:
    """The verify contract's cross-field rule: R4 (a pass only under debug mode) never comes with a passed gate
    and always names the diagnostic options (§5.2)."""
    from skdbg.triage.schema import SchemaError

    doc = verify_scenes(failed_round(tmp_path / "old"), rerun(tmp_path / "new", debug=TRACE)).to_json()
    validate_verify(doc)
    doc["verification"][0] = {**doc["verification"][0], "result": "passed"}
    with pytest.raises(SchemaError, match="R4"):
        validate_verify(doc)
    doc["verification"][0]["result"] = "not_run"
    doc["diagnostic"] = None
    with pytest.raises(SchemaError, match="R4"):
        validate_verify(doc)
