"""Every fault kind, emulated and analysed: the verdict triage.md gives for that evidence.

Expectations are the spec's (triage.md §3.2 SK fault, §3.4 levels, §3.6 bystanders, §3.8 C0–C6,
§4.4 split vs single exclusion, §7 routes), written per kind from what the emulated device shows:

* a PC inside child X confirmed by the task queue → C3 ``high`` on X, single-stream child with no
  attached edge → single-child exclusion ``proposed`` (§4.4 rule 1);
* a fault of an unfused kernel → not an SK fault: C0 ``n/a``, route X3;
* hangs (unmatched wait, circular wait) and SK-entry faults → only bystander cores → C6 ``low``, X5
  (+ R2 "only sk_entry_* is known"), D2 offered, nothing proposed; a circular wait is flagged;
* a wrong result → no fault line at all → K = ∅ → C6 ``low`` with N1 narrowing offered;
* a clean run → not a run-time failure: the gate fails G3 → C0 ``n/a``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_support import model, node_of, scene


def _ids(a: object) -> list[str]:
    return [s.id for s in a.next_steps]


def test_none_is_a_clean_run_and_no_failure_scene(tmp_path: Path) -> None:
    m = model(tmp_path, 8, [], "none")
    res, a = scene(m, tmp_path / "s")
    assert (res.outcome, res.exit_status) == ("clean", 0)
    assert not a.gate.passed and "G3" in a.gate.failed
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("n/a", "C0", None)
    assert a.proposal.status != "proposed"


def test_fused_fault_in_a_mid_scope_child_is_high_with_a_single_exclusion(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 5, "fused")
    res, a = scene(m, tmp_path / "s")
    assert (res.outcome, res.exit_status, res.culprit) == ("device_fault", 1, "k5")
    assert a.fault.kind == "sk" and (a.fault.entry or "").startswith("sk_entry")
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None
    assert (a.verdict.suspect.node_id, a.verdict.suspect.task_index) == (node_of(m, "k5"), 5)
    assert [c.role for c in a.fault.cores] == ["implicated"]
    assert a.proposal.status == "proposed" and list(a.proposal.excluded) == [node_of(m, "k5")]
    assert list(a.proposal.collateral) == []


def test_fused_child_on_a_side_stream_is_event_bound_split_r5(tmp_path: Path) -> None:
    """k3 runs on stream 1 behind an event pair: F ⊋ {child} → split at the dependency edge (R5)."""
    m = model(tmp_path, 8, 3, "fused", streams=2)
    _res, a = scene(m, tmp_path / "s")
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == node_of(m, "k3")
    assert "R5" in a.routes
    assert node_of(m, "k3") in a.proposal.excluded and len(a.proposal.collateral) >= 1


def test_operator_fault_while_fused_is_the_same_sk_fault(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 2, "operator")
    _res, a = scene(m, tmp_path / "s")
    assert a.fault.kind == "sk" and (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == node_of(m, "k2")


@pytest.mark.parametrize("streams", [1, 2])
def test_unmatched_wait_hangs_with_bystanders(tmp_path: Path, streams: int) -> None:
    m = model(tmp_path, 8, 4, "unmatched_wait", streams=streams)
    res, a = scene(m, tmp_path / "s")
    wait = m.fault.op
    assert res.outcome == "hang" and res.exit_status == 1 and wait is not None
    assert a.fault.phase == "hang"
    assert a.fault.cores and all(c.role == "bystander" for c in a.fault.cores)
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert "X5" in a.routes and "D2" in _ids(a)
    assert a.proposal.status != "proposed"
    # X5: a bystander names the first blocking task after its last finished FUNC — an EVENT_WAIT
    for c in a.fault.cores:
        assert c.blocking is not None and "EVENT_WAIT" in c.blocking


def test_unmatched_wait_right_after_a_child_is_named_by_every_bystander(tmp_path: Path) -> None:
    """One stream: the only wait follows k3 directly, so on both queues the first blocking task after
    the last finished FUNC is exactly the unmatched wait (X5 names it and its notify edge)."""
    m = model(tmp_path, 8, 4, "unmatched_wait")
    _res, a = scene(m, tmp_path / "s")
    wait = m.op_named(m.fault.op or "")
    for c in a.fault.cores:
        assert c.blocking is not None
        assert f"EVENT_WAIT eventId={wait.event} (nodeId {wait.node_id}" in c.blocking


def test_circular_wait_is_flagged_across_cores(tmp_path: Path) -> None:
    m = model(tmp_path, 8, [2, 5], "circular_wait")
    res, a = scene(m, tmp_path / "s")
    assert res.outcome == "hang"
    assert "circular_wait" in a.verdict.flags
    assert sorted(c.core_type or "" for c in a.fault.cores) == ["AIC", "AIV"]
    assert all(c.role == "bystander" for c in a.fault.cores)
    assert (a.verdict.confidence, a.verdict.rule) == ("low", "C6") and "X5" in a.routes


def test_wrong_result_has_no_fault_line_and_asks_for_narrowing(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 3, "wrong_result")
    res, a = scene(m, tmp_path / "s")
    assert (res.outcome, res.exit_status) == ("wrong_result", 1)
    assert a.fault.kind == "none" and a.fault.phase == "correctness"
    assert (a.verdict.confidence, a.verdict.suspect) == ("low", None)
    assert "N1" in _ids(a) and a.proposal.status != "proposed"


def test_interaction_names_the_child_the_pc_is_in(tmp_path: Path) -> None:
    m = model(tmp_path, 8, [1, 6], "interaction")
    res, a = scene(m, tmp_path / "s")
    assert res.outcome == "device_fault" and res.culprit == "k6"
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == node_of(m, "k6")


def test_flaky_with_certain_probability_is_a_fused_fault(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 4, "flaky", probability=1.0)
    _res, a = scene(m, tmp_path / "s")
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == node_of(m, "k4")


def test_entry_fault_is_only_sk_entry_evidence(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 4, "entry")
    res, a = scene(m, tmp_path / "s")
    assert res.outcome == "device_fault" and res.culprit is None  # entry code, no child
    assert a.fault.kind == "sk" and a.fault.phase == "device_fault"
    assert [c.role for c in a.fault.cores] == ["bystander"]
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert "X5" in a.routes and "R2" in a.routes
    assert "D1" in _ids(a) and a.proposal.status != "proposed"


def test_analyze_cli_json_agrees(tmp_path: Path) -> None:
    """The same verdict through ``skdbg analyze --format json`` (the machine contract)."""
    import json

    from click.testing import CliRunner

    from skdbg.cli import main

    m = model(tmp_path, 8, 5, "fused")
    scene(m, tmp_path / "s")
    out = CliRunner().invoke(main, ["analyze", str(tmp_path / "s"), "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["fault"]["kind"] == "sk"
    assert (doc["verdict"]["confidence"], doc["verdict"]["rule"]) == ("high", "C3")
    assert doc["verdict"]["suspect"]["node_id"] == node_of(m, "k5")
    assert doc["proposal"]["status"] == "proposed"
