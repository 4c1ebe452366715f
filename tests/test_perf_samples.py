"""``perf.json`` (skdbg.perf/1) and gate V5's comparison, on documents written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.perf_samples import judge, p90, read_perf


def _doc(base: list[float], cand: list[float], **over: object) -> dict:
    doc = {
        "schema": "skdbg.perf/1",
        "metric": {"name": "e2e_latency_us", "unit": "us", "source": "job line SKDBG_METRIC"},
        "criteria": {"mean": 0.0, "p90": 0.02, "std": 0.5},
        "conditions": {"kernel_meta": False, "profiling": False, "debug_options": {}},
        "baseline": {
            "what": "SK off",
            "runs": [{"value": v, "exit": 0, "pid": 10 + i} for i, v in enumerate(base)],
        },
        "candidate": {
            "what": "clean",
            "runs": [{"value": v, "exit": 0, "pid": 20 + i} for i, v in enumerate(cand)],
        },
    }
    doc.update(over)
    return doc


def _write(tmp: Path, doc: object) -> Path:
    p = tmp / "perf.json"
    p.write_text(json.dumps(doc))
    return p


def test_nearest_rank_p90() -> None:
    assert p90([5, 1, 3]) == 5
    assert p90(list(range(1, 11))) == 9
    assert p90([7.0]) == 7.0


def test_equal_series_pass_and_numbers_are_shown(tmp_path: Path) -> None:
    v = judge(read_perf(_write(tmp_path, _doc([10, 10, 10], [10, 10, 10]))))
    assert v.passed is True
    assert v.detail.startswith("no regression: e2e_latency_us: candidate n=3 mean 10us P90 10us std 0us")


def test_a_one_percent_slower_mean_fails_the_zero_tolerance(tmp_path: Path) -> None:
    v = judge(read_perf(_write(tmp_path, _doc([100, 100, 100], [101, 101, 101]))))
    assert v.passed is False and "mean 101us > 100us × 1" in v.detail


def test_p90_tolerance_is_applied(tmp_path: Path) -> None:
    # means equal (100) but the candidate's tail is 10% worse: P90 110 > 105 × 1.02
    v = judge(read_perf(_write(tmp_path, _doc([95, 100, 105], [90, 100, 110]))))
    assert v.passed is False and "P90 110us > 105us × 1.02" in v.detail


def test_too_few_runs_cannot_decide(tmp_path: Path) -> None:
    v = judge(read_perf(_write(tmp_path, _doc([1, 1], [1, 1]))))
    assert v.passed is None and "V5 needs >= 3" in v.detail


def test_dirty_or_failed_runs_fail(tmp_path: Path) -> None:
    dirty = _doc([1, 1, 1], [1, 1, 1], conditions={"kernel_meta": True, "debug_options": {}})
    assert judge(read_perf(_write(tmp_path, dirty))).passed is False
    crashed = _doc([1, 1, 1], [1, 1, 1])
    crashed["candidate"]["runs"][1]["exit"] = 1
    v = judge(read_perf(_write(tmp_path, crashed)))
    assert v.passed is False and "did not exit 0 (pid 21)" in v.detail


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"schema": "skdbg.perf/0"}, '"schema": "skdbg.perf/1"'),
        ({"criteria": {"mean": -1}}, "criteria.mean"),
        ({"criteria": {"median": 0.1}}, "a criterion among"),
        ({"candidate": {"runs": [{"value": "fast", "exit": 0}]}}, "candidate.runs[0].value"),
        ({"baseline": {"runs": [{"value": 1.0}]}}, "baseline.runs[0].exit"),
    ],
)
def test_bad_fields_name_their_path(tmp_path: Path, change: dict, where: str) -> None:
    with pytest.raises(ParseError) as exc:
        read_perf(_write(tmp_path, _doc([1, 1, 1], [1, 1, 1], **change)))
    assert where in str(exc.value) and "perf.json" in str(exc.value)
