"""run.json, environment probe, source_sites.json (scene-layout.md; triage.md §1.1, §2.3) and the
profiler op-summary CSV (artifacts.md §3.14)."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.jsonload import JsonSyntaxError
from skdbg.parsers.run_identity import (
    FailurePhase,
    env_probe_from_json,
    parse_env_probe,
    parse_run_json,
    parse_source_sites,
    parse_time,
    run_from_json,
    source_sites_from_json,
)
from skdbg.scenebuilder.jsonart import (
    env_probe,
    example_run,
    write_env_probe,
    write_run_json,
    write_source_sites,
)


def test_run_json_documented_example(tmp_path: Path) -> None:
    """The scene-layout.md example: every field typed; nothing missing for G1/G4."""
    p = write_run_json(tmp_path / "run.json", example_run())
    res = parse_run_json(p)
    r = res.identity
    assert res.gaps == [] and res.unrecognized == []
    assert (r.experiment_id, r.round_id, r.attempt) == ("E7", "E7-BASE", 1)
    assert r.command == "torchrun --nproc_per_node=8 infer.py --config configs/e7.yaml"
    assert (r.rank, r.device, r.pid, r.cwd) == (3, 3, 48213, ".")
    assert r.start == datetime(2026, 8, 3, 14, 8, 50) and r.start.tzinfo is None
    assert r.end == datetime(2026, 8, 3, 14, 9, 40)
    assert r.start_text == "2026-08-03T14:08:50.000"
    assert r.exit is not None and (r.exit.status, r.exit.signal, r.exit.timeout) == (1, None, False)
    assert r.failure_phase == "device_fault" and r.phase is FailurePhase.DEVICE_FAULT
    c = r.candidate
    assert c is not None
    assert c.scope_names == ("decoder.layer.0.mlp",) and c.marker_file == "src/model.py"
    assert (c.source_revision, c.config_fingerprint) == ("9c1e77d", "sha256:5d0c9a7e")
    assert c.debug_options == {} and c.diagnostic is False
    assert r.failing_path == {"prompt_id": "p-0173", "step": 41}
    assert res.missing_fields() == []
    assert res.resolve(r.env_probe) == tmp_path / "env" / "check_environment.json"
    assert res.resolve(r.source_sites) == tmp_path / "source_sites.json"
    assert r.src == Source(str(p))
    df = res.to_frame()
    assert df.iloc[0].pid == 48213 and df.iloc[0].missing_fields == "" and df.iloc[0].file == str(p)


def test_missing_fields_for_gate(tmp_path: Path) -> None:
    """G1/G4: missing command, rank, pid, start, end and source_revision are listed in gate order."""
    doc = example_run(command=None, rank=None, pid=None, start=None, end=None, candidate={"scope_names": []})
    res = run_from_json(doc, "run.json")
    assert res.missing_fields() == ["command", "rank", "pid", "start", "end", "source_revision"]
    # an empty manifest lacks every G1/G4 field, in gate order (written out from triage.md §1.1)
    assert run_from_json({}, "run.json").missing_fields() == [
        "command",
        "rank",
        "device",
        "pid",
        "start",
        "end",
        "source_revision",
    ]


def test_invalid_fields_become_gaps_not_errors() -> None:
    """A wrong type is a gap (invalid_field, with its JSON path) and the field counts as missing."""
    doc = example_run(rank="three", start="yesterday", exit={"status": "1", "signal": "SIGSEGV"})
    doc["candidate"]["source_revision"] = 9
    res = run_from_json(doc, "run.json")
    paths = [(g.kind, g.src.json_path if g.src else None) for g in res.gaps]
    assert paths == [
        ("invalid_field", "start"),
        ("invalid_field", "exit.status"),
        ("invalid_field", "candidate.source_revision"),
        ("invalid_field", "rank"),
    ]
    assert 'expected an integer, got "three"' in res.gaps[3].detail
    assert res.missing_fields() == ["rank", "start", "source_revision"]
    assert res.identity.exit is not None and res.identity.exit.signal == "SIGSEGV"
    assert res.identity.start_text == "yesterday"


def test_unknown_failure_phase_kept_with_gap() -> None:
    res = run_from_json(example_run(failure_phase="oom"), "run.json")
    r = res.identity
    assert r.failure_phase == "oom" and r.phase is None
    assert [g.kind for g in res.gaps] == ["unknown_failure_phase"]
    compile_ = run_from_json(example_run(failure_phase="compile"), "run.json").identity
    assert compile_.phase is FailurePhase.COMPILE


def test_diagnostic_cache_writers_and_unknown_keys() -> None:
    doc = example_run(cache_writers={"120": [121, 122], "130": 131, "x": [1]}, launcher="slurm")
    doc["candidate"]["super_kernel_debug_options"] = {"debug_op_exec_trace": 1}
    res = run_from_json(doc, "run.json")
    assert res.identity.candidate is not None and res.identity.candidate.diagnostic is True
    assert res.identity.cache_writers == {120: (121, 122), 130: (131,)}
    assert [g.src.json_path for g in res.gaps if g.src] == ["cache_writers.x"]
    assert [(u.src.json_path, u.text) for u in res.unrecognized] == [("launcher", 'launcher: "slurm"')]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-08-03T14:08:50.000", datetime(2026, 8, 3, 14, 8, 50)),
        ("2026-08-03 14:08:50", datetime(2026, 8, 3, 14, 8, 50)),
        ("2026-08-03T14:08", datetime(2026, 8, 3, 14, 8)),
        ("2026-08-03T14:08:50.123456789", datetime(2026, 8, 3, 14, 8, 50, 123456)),
        ("2026-08-03T14:08:50.5Z", datetime(2026, 8, 3, 14, 8, 50, 500000, tzinfo=timezone.utc)),
        ("2026-08-03T14:08:50+08:00", datetime(2026, 8, 3, 14, 8, 50, tzinfo=timezone(timedelta(hours=8)))),
        (
            "2026-08-03T14:08:50-0530",
            datetime(2026, 8, 3, 14, 8, 50, tzinfo=timezone(-timedelta(hours=5, minutes=30))),
        ),
        ("2026-02-30T00:00:00", None),
        ("14:08:50", None),
        ("2026-08-03T14:08:50+25:00", None),
    ],
)
def test_parse_time_with_and_without_zone(text: str, expected: datetime | None) -> None:
    assert parse_time(text) == expected


def test_start_end_consistency_gaps() -> None:
    res = run_from_json(example_run(start="2026-08-03T14:10:00", end="2026-08-03T14:09:00"), "r")
    assert [g.kind for g in res.gaps] == ["invalid_field"] and "before start" in res.gaps[0].detail
    res = run_from_json(example_run(start="2026-08-03T14:10:00Z", end="2026-08-03T14:19:00"), "r")
    assert "mix zoned and zone-less" in res.gaps[0].detail


def test_run_json_malformed_and_non_object(tmp_path: Path) -> None:
    p = tmp_path / "run.json"
    p.write_text('{"pid": 1,\n "rank": }')
    with pytest.raises(JsonSyntaxError) as ei:
        parse_run_json(p)
    assert (ei.value.line, ei.value.column) == (2, 10)
    p.write_text("[]")
    with pytest.raises(ParseError, match="document root to be an object"):
        parse_run_json(p)


def test_env_probe_documented_example(tmp_path: Path) -> None:
    p = write_env_probe(tmp_path / "env" / "check_environment.json", env_probe())
    res = parse_env_probe(p)
    pr = res.probe
    assert res.gaps == []
    assert (pr.ready, pr.runtime_loaded, pr.option_probe_status) == (True, True, "completed")
    assert (pr.explicit_none_exclusion_accepted, pr.explicit_none_exclusion_status) == (True, "accepted")
    assert pr.explicit_none_semantic_validation == "not_proven_by_api_probe"
    assert pr.accepts("debug_op_exec_trace", 1) is True
    assert pr.accepts("debug_op_exec_trace", 2) is False
    assert pr.accepts("early_start", 1) is None
    df = res.to_frame()
    assert len(df) == 5 and df.iloc[0].json_path == "options.debug_options.debug_op_exec_trace"


def test_env_probe_rejected_none_exclusion() -> None:
    pr = env_probe_from_json(env_probe(explicit_none_accepted=False, debug_accepted={}), "p").probe
    assert pr.explicit_none_exclusion_accepted is False and pr.explicit_none_exclusion_status == "rejected"


def test_env_probe_autotune_fixture(upstream: Path) -> None:
    """The auto-tune environment.json: accepted flags, list-valued accepted values, no capabilities."""
    res = parse_env_probe(upstream / "autotune-pipeline" / "environment.json")
    pr = res.probe
    assert res.gaps == []
    assert pr.ready is True and pr.explicit_none_exclusion_accepted is None
    assert pr.accepts("auto_op_parallel", 0) is True
    assert pr.accepts("dcci_before_kernel_start", [".*GroupedMatmul.*"]) is True
    assert pr.accepts("dcci_before_kernel_start", [".*Other.*"]) is False
    agg = pr.option("aggressive_opt_strategies")
    assert agg is not None and agg.accepted is False and agg.kind == "optimize_options"
    assert pr.accepts("aggressive_opt_strategies", 1) is False


def test_env_probe_bad_values_are_gaps() -> None:
    doc = env_probe()
    doc["ready"] = "yes"
    doc["options"]["debug_options"]["debug_sync_all"] = [1]
    res = env_probe_from_json(doc, "p")
    assert sorted(g.src.json_path for g in res.gaps if g.src) == [
        "options.debug_options.debug_sync_all",
        "ready",
    ]
    assert res.probe.ready is None and res.probe.option("debug_sync_all") is None


def test_source_sites(tmp_path: Path) -> None:
    p = write_source_sites(tmp_path / "source_sites.json", {120: 41, 121: 42})
    res = parse_source_sites(p)
    assert res.by_node == {120: 41, 121: 42} and res.gaps == []
    assert res.sites[0].src == Source(str(p), json_path="120")
    assert list(res.to_frame().source_line) == [41, 42]
    bad = source_sites_from_json({"120": 0, "abc": 3, "²": 4, "7": "8", "9": 10}, "s")
    assert bad.by_node == {9: 10}
    assert [g.src.json_path for g in bad.gaps if g.src] == ["120", "abc", "²", "7"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=20,
)
RUN_KEYS = ["command", "rank", "pid", "start", "end", "exit", "candidate", "failure_phase", "cache_writers"]


@settings(max_examples=200)
@given(json_values, st.sampled_from(RUN_KEYS))
def test_fuzz_json_values_only_parse_error(value: object, key: str) -> None:
    """Arbitrary JSON values in any run.json/probe/sites position never raise anything but ParseError."""
    doc = example_run()
    doc[key] = value
    probe = env_probe()
    probe["options"]["debug_options"] = value
    for fn, d in (
        (run_from_json, doc),
        (run_from_json, value),
        (env_probe_from_json, probe),
        (env_probe_from_json, value),
        (source_sites_from_json, value),
        (source_sites_from_json, {"1": value}),
    ):
        with contextlib.suppress(ParseError):
            fn(d, "x.json")  # type: ignore[operator]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_fuzz_bytes_only_parse_error(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "x.json"
    p.write_bytes(data)
    for fn in (parse_run_json, parse_env_probe, parse_source_sites):
        with contextlib.suppress(ParseError):
            fn(p)


@settings(max_examples=100)
@given(
    st.integers(0, 2**31),
    st.integers(0, 7),
    st.text(min_size=1, max_size=30),
    st.sampled_from([p.value for p in FailurePhase]),
)
def test_roundtrip_generated(pid: int, rank: int, command: str, phase: str) -> None:
    doc = example_run(pid=pid, rank=rank, device=rank, command=command, failure_phase=phase)
    r = run_from_json(json.loads(json.dumps(doc)), "run.json")
    assert (r.identity.pid, r.identity.rank, r.identity.command, r.identity.failure_phase) == (
        pid,
        rank,
        command,
        phase,
    )
    assert r.gaps == [] and r.missing_fields() == []
