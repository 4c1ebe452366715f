"""bisect() over the ledger with frozen scene-builder scenes: isolation, resume after a kill, flaky
baseline, drift, majority, an interaction pair, refusal, and the CLI's argument checks."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from bisect_support import SCOPE, StandIn, failed_session
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.loop.bisect import BisectError, BisectRefused, bisect
from skdbg.parsers.markers import MarkerEdit, apply_edits_text, scan_text
from skdbg.sessions.attempts import materialised
from skdbg.sessions.store import Ledger
from skdbg.workflow import freeze

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def _source(ledger: Ledger, sid: str, rnd: str) -> str:
    with materialised(ledger, ledger.attempt(sid, rnd)) as scene:
        return (scene / "src" / "model.py").read_text()


def test_isolates_the_culprit_of_16_children(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 16)
    run = StandIn(ledger, sid, tmp_path, ks, {ks[11].func_name})
    r = bisect(ledger, sid, rnd, runner=run)
    assert r.status == "isolated"
    assert [c["func_name"] for c in r.children] == ["Op011_a000b"]
    # four halvings, then the complement probe: the failed attempt names no child (entry only), so the
    # isolated child must also be shown sufficient — every other child fused without it passes
    assert r.probes == 5 and r.probes <= math.ceil(math.log2(16)) + 2
    assert run.launches == 2 + 5  # two baseline re-runs + one run per probe
    last = r.steps[-1]
    assert (last.phase, last.outcome) == ("complement", "pass")
    assert r.verdict is not None and (r.verdict["confidence"], r.verdict["rule"]) == ("high", "N1")
    # the exclusion proposal excludes exactly that child and is an -X round of the failed attempt
    assert r.exclusion_round == "EX1-BASE-X1"
    xp = ledger.proposal(sid, "EX1-BASE-X1")
    assert xp.body["child"]["func_name"] == "Op011_a000b" and xp.body["status"] == "proposed"
    # every probe round carries marker edits that materialise its two named halves
    src = _source(ledger, sid, rnd)
    p1 = ledger.proposal(sid, "EX1-BASE-N2").body
    edited = apply_edits_text(src, [MarkerEdit(**e) for e in p1["marker_edits"]])
    names = [(m.kind, m.name) for m in scan_text(edited).markers]
    assert names == [
        ("begin", f"{SCOPE}.n1a"),
        ("end", f"{SCOPE}.n1a"),
        ("begin", f"{SCOPE}.n1b"),
        ("end", f"{SCOPE}.n1b"),
    ]
    assert p1["marker_file"] == "src/model.py" and p1["bisect"]["step"] == 1
    assert [len(g["children"]) for g in p1["bisect"]["groups"]] == [8, 8]


def test_a_killed_bisection_resumes_from_the_ledger(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 16)
    first = StandIn(ledger, sid, tmp_path, ks, {ks[5].func_name}, crash_after=4)
    with pytest.raises(KeyboardInterrupt):
        bisect(ledger, sid, rnd, runner=first)
    rounds_before = [r.round_id for r in ledger.rounds(sid)]
    second = StandIn(ledger, sid, tmp_path / "b", ks, {ks[5].func_name}, pids=itertools.count(61001))
    (tmp_path / "b").mkdir()
    r = bisect(ledger, sid, rnd, runner=second)
    assert r.status == "isolated" and [c["func_name"] for c in r.children] == ["Op005_a0005"]
    assert first.launches + second.launches == 7  # nothing launched twice (2 baseline + 5 probes)
    assert [x.round_id for x in ledger.rounds(sid)][: len(rounds_before)] == rounds_before
    # a third call only reads the ledger: no launch, same answer, no second exclusion
    third = StandIn(ledger, sid, tmp_path, ks, set(), crash_after=0)
    again = bisect(ledger, sid, rnd, runner=third)
    assert (again.status, again.exclusion_round, third.launches) == ("isolated", r.exclusion_round, 0)


def test_an_interrupted_launch_stops_and_is_never_counted(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 8)
    first = StandIn(ledger, sid, tmp_path, ks, {ks[4].func_name}, interrupt_at=3)  # probe 1's launch
    with pytest.raises(BisectError, match="interrupted"):
        bisect(ledger, sid, rnd, runner=first)
    second = StandIn(ledger, sid, tmp_path / "b", ks, {ks[4].func_name}, pids=itertools.count(61001))
    (tmp_path / "b").mkdir()
    r = bisect(ledger, sid, rnd, runner=second)
    assert r.status == "isolated" and [c["func_name"] for c in r.children] == ["Op004_a0004"]
    step1 = r.steps[1]
    assert [run["attempt"] for run in step1.runs] == ["attempt-002"]  # attempt-001 was interrupted


def test_a_baseline_that_does_not_reproduce_is_flaky(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 8)
    run = StandIn(ledger, sid, tmp_path, ks, {ks[2].func_name}, script=["fail", "pass"])
    r = bisect(ledger, sid, rnd, runner=run)
    assert r.status == "flaky" and r.probes == 0
    assert r.baseline["reproduced"] == 1 and r.baseline["rate"].startswith("2/3")
    assert "--repeat" in r.next_step


def test_baseline_re_runs_that_fail_differently_are_drift_not_flaky(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 8)
    run = StandIn(ledger, sid, tmp_path, ks, {ks[2].func_name}, script=["drift", "drift"])
    r = bisect(ledger, sid, rnd, runner=run)
    assert (r.status, r.probes, r.steps[0].outcome) == ("drift", 0, "drift")
    assert "fail differently" in r.detail and "error class sk/fault (baseline sk/hang)" in r.detail


def test_majority_over_repeat_runs_absorbs_one_dissent(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 8)
    # baseline 3 runs (one clean), then the first probe's first run is clean
    run = StandIn(ledger, sid, tmp_path, ks, {ks[6].func_name}, script=["fail", "pass", "fail", "pass"])
    r = bisect(ledger, sid, rnd, runner=run, repeat=3)
    assert r.status == "isolated" and [c["func_name"] for c in r.children] == ["Op006_a0006"]
    assert r.baseline["runs"] == 3 and r.baseline["reproduced"] == 2
    assert run.launches == 3 + 3 * r.probes


def test_a_drifting_probe_is_reported_not_followed(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 8)
    run = StandIn(ledger, sid, tmp_path, ks, {ks[1].func_name}, script=["fail", "fail", "drift"])
    r = bisect(ledger, sid, rnd, runner=run)
    assert r.status == "drift" and r.probes == 1 and r.children == [] and r.exclusion_round is None
    assert "error class" in r.detail and "not followed" in r.detail


def test_an_interaction_pair_is_the_minimal_set(tmp_path: Path) -> None:
    ledger, sid, rnd, ks = failed_session(tmp_path, 16)
    run = StandIn(ledger, sid, tmp_path, ks, {ks[3].func_name, ks[12].func_name})
    r = bisect(ledger, sid, rnd, runner=run)
    assert r.status == "pair"
    assert [c["func_name"] for c in r.children] == ["Op003_a0003", "Op012_a000c"]
    assert r.probes <= 4 * math.ceil(math.log2(16))


def test_a_high_verdict_is_refused(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "home")
    sid = ledger.new_session("high")
    att = freeze(ledger, sid, EXAMPLES / "high-single-stream")
    with pytest.raises(BisectRefused, match="low or medium"):
        bisect(ledger, sid, att.round_id, runner=lambda rid: pytest.fail("must not launch"))
    res = CliRunner().invoke(
        main, ["bisect", sid, att.round_id, "--sim", str(tmp_path), "--session-dir", str(tmp_path / "home")]
    )
    assert res.exit_code == 2 and "low or medium" in res.output


def test_cli_needs_exactly_one_launcher_and_a_well_formed_attempt(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["bisect", "S", "R", "--session-dir", str(tmp_path)])
    assert res.exit_code == 2 and "--sim MODEL_DIR or -- ARGV" in res.output
    res = CliRunner().invoke(
        main, ["bisect", "S", "R/attempt-x", "--sim", "m", "--session-dir", str(tmp_path)]
    )
    assert res.exit_code == 2 and "ROUND/attempt-NNN" in res.output
    res = CliRunner().invoke(
        main, ["bisect", "S", "R/attempt-001", "--sim", "m", "--session-dir", str(tmp_path)]
    )
    assert res.exit_code == 3 and "no round 'R' in session S" in res.output
