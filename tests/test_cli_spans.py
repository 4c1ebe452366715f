"""Spans of time on the command line (``skdbg/cli_types.py``): NaN, infinities, negatives and values no
``timedelta`` or timed wait can hold are usage errors (exit 2) naming the option, never internal errors.

Before: ``--skew nan`` passed the ``< 0`` check (every comparison with NaN is false) and ``timedelta``
failed inside as an internal error (exit 1); ``--timeout nan`` gave a re-launch a deadline that never
came, and its runner polled the job for ever.
"""

from __future__ import annotations

import math
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.cli_types import (
    MAX_WAIT_SECONDS,
    MAX_WINDOW_SECONDS,
    TIMEOUT_SECONDS,
    WINDOW_SECONDS,
    Span,
    span_ok,
)
from skdbg.loop.relaunch import RelaunchError, RelaunchRequest, relaunch
from skdbg.tui.screens.session_relaunch import parse_job

SCENE = str(Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream")
BAD = ["nan", "NaN", "inf", "-inf", "1e300", "-1", "-0.001", "abc", ""]


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.stderr


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["analyze", SCENE, "--no-cache"], "--skew"),
        (["analyze", SCENE, "--no-cache"], "--grace"),
        (["report", SCENE, "-o", "{out}"], "--skew"),
        (["scan", SCENE], "--skew-ms"),
        (["relaunch", "S", "R", "--sim", "{out}"], "--timeout"),
        (["bisect", "S", "R"], "--timeout"),
    ],
)
def test_a_span_that_is_no_finite_number_in_range_is_a_usage_error(
    tmp_path: Path, command: list[str], option: str, value: str
) -> None:
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    code, err = _run(*args, option, value)
    assert code == 2, err
    assert f"Invalid value for '{option}'" in err and "internal error" not in err
    assert not (tmp_path / "out").exists()  # refused before the command did anything


@pytest.mark.parametrize(
    ("option", "value"), [("--skew", "0"), ("--grace", "0"), ("--skew", "7.5"), ("--skew", "31536000")]
)
def test_windows_from_zero_to_a_year_are_accepted(option: str, value: str) -> None:
    code, err = _run("analyze", SCENE, "--no-cache", "--format", "json", option, value)
    assert code == 0, err


def test_the_widest_windows_go_through_the_whole_analysis() -> None:
    """A year each way keeps every time of the scene inside the calendar (the gate's window ends)."""
    year = str(int(MAX_WINDOW_SECONDS))
    code, err = _run("analyze", SCENE, "--no-cache", "--format", "json", "--skew", year, "--grace", year)
    assert code == 0, err
    code, err = _run("scan", SCENE, "--format", "json", "--skew-ms", str(int(MAX_WINDOW_SECONDS * 1000)))
    assert code == 0, err


@pytest.mark.parametrize(("option", "value"), [("--skew", "31536001"), ("--grace", "1e12")])
def test_a_window_over_a_year_is_refused(option: str, value: str) -> None:
    code, err = _run("analyze", SCENE, "--no-cache", option, value)
    assert code == 2 and "up to 31,536,000" in err


@pytest.mark.parametrize("skew_ms", [math.nan, math.inf, -1.0, 1e300])
def test_the_fleet_verdict_refuses_a_skew_out_of_range(skew_ms: float) -> None:
    from skdbg.fleet.verdict import MAX_SKEW_MS, decide

    with pytest.raises(ValueError, match="--skew-ms must be a finite number from 0 to"):
        decide([], skew_ms=skew_ms)
    assert decide([], skew_ms=MAX_SKEW_MS).skew_ms == MAX_SKEW_MS


@pytest.mark.parametrize(
    ("start", "end"), [("0001-01-01T00:00:01.000", None), (None, "9999-12-31T23:59:00.000")]
)
def test_run_times_at_the_calendar_ends_keep_the_window_inside_it(
    tmp_path: Path, start: str | None, end: str | None
) -> None:
    """A run.json time near year 1 or 9999 (a bad clock, a hand-edited file): the gate's window ends are
    held at the calendar's first and last day instead of failing the arithmetic (was an internal error
    with the default windows)."""
    import json
    import shutil

    scene = tmp_path / "scene"
    shutil.copytree(SCENE, scene)
    run = json.loads((scene / "run.json").read_text(encoding="utf-8"))
    run["start"] = start or run["start"]
    run["end"] = end or run["end"]
    (scene / "run.json").write_text(json.dumps(run), encoding="utf-8")
    code, err = _run("analyze", str(scene), "--no-cache", "--format", "json", "--skew", "31536000")
    assert code == 0, err
    assert "internal error" not in err


def test_the_options_hold_the_window_at_the_calendar_ends() -> None:
    from datetime import datetime, timedelta, timezone

    from skdbg.triage.context import TriageOptions

    opts = TriageOptions(skew=timedelta(days=2), grace=timedelta(days=2))
    assert opts.earliest(datetime(1, 1, 1, 12)) == datetime.min
    assert opts.latest(datetime(9999, 12, 31)) == datetime.max
    aware = datetime(9999, 12, 31, tzinfo=timezone.utc)
    assert opts.latest(aware) == datetime.max.replace(tzinfo=timezone.utc)
    assert opts.earliest(datetime(2026, 6, 10)) == datetime(2026, 6, 8)
    assert opts.latest(datetime(2026, 6, 10)) == datetime(2026, 6, 12)


def test_the_relaunch_api_refuses_a_grace_that_is_no_finite_number(tmp_path: Path) -> None:
    req = RelaunchRequest(
        session_id="S", round_id="R", argv=["true"], sim_model=None, source_root=None, grace=math.nan
    )
    with pytest.raises(RelaunchError, match="grace: expected a finite number of seconds"):
        relaunch(None, req)  # type: ignore[arg-type]


def test_the_bounds_of_each_kind_of_span() -> None:
    assert WINDOW_SECONDS.convert("0", None, None) == 0.0
    assert WINDOW_SECONDS.convert(str(MAX_WINDOW_SECONDS), None, None) == MAX_WINDOW_SECONDS
    assert TIMEOUT_SECONDS.convert("0.5", None, None) == 0.5
    assert TIMEOUT_SECONDS.convert(repr(MAX_WAIT_SECONDS), None, None) == MAX_WAIT_SECONDS
    for span, value in (
        (WINDOW_SECONDS, MAX_WINDOW_SECONDS * 2),
        (TIMEOUT_SECONDS, 0.0),
        (TIMEOUT_SECONDS, MAX_WAIT_SECONDS * 2),
    ):
        with pytest.raises(click.BadParameter):
            span.convert(repr(value), None, None)
    assert not span_ok(math.nan) and not span_ok(math.inf) and not span_ok(-0.5)
    assert span_ok(0.0) and not span_ok(0.0, positive=True) and span_ok(1e-9, positive=True)
    assert Span("milliseconds").name == "milliseconds"  # what the help shows as the option's metavar


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-3", "1e300"])
def test_the_workbench_job_line_refuses_a_timeout_that_is_no_finite_positive_number(value: str) -> None:
    with pytest.raises(ValueError, match="--timeout: expected a finite number of seconds above 0"):
        parse_job(f"--timeout {value} -- python3 infer.py")
    assert parse_job("--timeout 9 -- python3 infer.py").timeout == 9.0


@pytest.mark.parametrize("timeout", [math.nan, math.inf, 0.0, -1.0])
def test_the_relaunch_api_refuses_the_same_timeouts(tmp_path: Path, timeout: float) -> None:
    """The library call refuses them too (the TUI and the loop call it without click), before any
    ledger is read or job run."""
    req = RelaunchRequest(
        session_id="S", round_id="R", argv=["true"], sim_model=None, source_root=None, timeout=timeout
    )
    with pytest.raises(RelaunchError, match="--timeout: expected a finite number of seconds above 0"):
        relaunch(None, req)  # type: ignore[arg-type]
