"""sk_prof_device_<d>.json streaming reader (artifacts.md §5; §7.5 rows 64, 65)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.sk_prof import (
    CHILD,
    MODEL,
    OTHER,
    SK,
    ProfEvent,
    ProfReader,
    child_summary,
    prof_device_id,
    prof_frame,
)
from skdbg.scenebuilder.jsonart import (
    SkProfWriter,
    prof_child_body,
    prof_sk_body,
    sk_prof_bytes,
    trace_events_json,
    write_sk_prof,
)

SKN = "sk_3_decoder_start_MatMul_1_end_Add_2"


@dataclass
class _Read:
    """A whole file read through the streaming reader (what the evidence layer does)."""

    reader: ProfReader
    events: list[ProfEvent]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)

    def to_frame(self) -> pd.DataFrame:
        return prof_frame(self.events)


def parse_sk_prof(path: Path) -> _Read:
    reader = ProfReader(path)
    events = list(reader)
    return _Read(reader, events)


def _bodies() -> list[str]:
    return [
        prof_child_body(0, 24, "MatMul_1", 0, 100.0, 6.5, node_id=1),
        prof_child_body(1, 24, "MatMul_1", 1, 100.5, 6.0, node_id=1),
        prof_child_body(0, 48, "Add_2", 25, 107.0, 3.25, node_id=3),
        prof_child_body(1, 48, "Add_2", 26, 107.5, 2.75, node_id=3),
        prof_sk_body(0, 24, SKN, 0, 99.0, 12.0),
        prof_sk_body(0, 48, "", 25, 99.0, 12.5, sk_id=4),
    ]


def _write_real(path: Path, bodies: list[str]) -> Path:
    with SkProfWriter(path) as w:
        for b in bodies:
            w.append(b)
    return path


def test_row64_real_append_shape(tmp_path: Path) -> None:
    """Row 64: real `[{…},\\n{…},\\n{}]` shape written with the recorder's seek-back append."""
    p = _write_real(tmp_path / "sk_meta" / "4242" / "sk_prof_device_0.json", _bodies())
    raw = p.read_bytes()
    assert raw.startswith(b'[{"ph":"X","name":"[0/24]MatMul_1","pid":"AIC","tid":0,"ts":100.000000,')
    assert raw.endswith(b'"skId":4}},\n{}]')
    assert raw.count(b"\n") == 6
    assert b"".join(sk_prof_bytes(_bodies())) == raw  # the bulk generator produces the same bytes
    res = parse_sk_prof(p)
    assert (res.shape, res.complete, res.device_id) == ("array", True, 0)
    assert res.gaps == [] and res.unrecognized == []
    assert [e.level for e in res.events] == [CHILD, CHILD, CHILD, CHILD, SK, SK]
    e = res.events[2]
    assert (e.name, e.func_name, e.block_idx, e.block_num) == ("[0/48]Add_2", "Add_2", 0, 48)
    assert (e.pid, e.tid, e.ts, e.dur, e.end) == ("AIV", 25, 107.0, 3.25, 110.25)
    assert (e.model_id, e.model_ri, e.sk_id, e.node_id) == ("48_1", None, 3, 3)
    assert e.src == Source(str(p), 3, "[2]")
    sk = res.events[4]
    assert (sk.name, sk.func_name, sk.node_id, sk.sk_id) == (f"[0/24] {SKN}", SKN, None, 3)
    empty_name = res.events[5]
    assert (empty_name.name, empty_name.func_name, empty_name.level) == ("[0/48] ", "", SK)
    assert empty_name.pid == "AIV" and empty_name.sk_id == 4


def test_row64_empty_file_seed_only(tmp_path: Path) -> None:
    """Row 64: `[{}]` (recorder started, no records) → no events, complete, no gaps."""
    p = _write_real(tmp_path / "sk_prof_device_1.json", [])
    assert p.read_bytes() == b"[{}]"
    res = parse_sk_prof(p)
    assert (res.events, res.complete, res.gaps, res.device_id) == ([], True, [], 1)


@pytest.mark.parametrize("cut", [2, 30, 60])
def test_row64_truncated_without_final_bracket(tmp_path: Path, cut: int) -> None:
    """Row 64: crash-truncated file → events so far kept + a `truncated` gap."""
    p = _write_real(tmp_path / "sk_prof_device_0.json", _bodies())
    raw = p.read_bytes()
    p.write_bytes(raw[:-cut])
    res = parse_sk_prof(p)
    assert res.complete is False
    assert [g.kind for g in res.gaps] == ["truncated"]
    assert len(res.events) == (6 if cut == 2 else 5)
    assert res.gaps[0].src is not None and res.gaps[0].src.file == str(p)
    assert f"{len(res.events)} event(s)" in res.gaps[0].detail


def test_row64_truncated_between_records(tmp_path: Path) -> None:
    """Row 64: file ends right after a `,\\n` (no `{}]`) → all records kept, truncated gap."""
    p = tmp_path / "sk_prof_device_0.json"
    p.write_bytes(b"".join(sk_prof_bytes(_bodies()[:3]))[:-3])
    res = parse_sk_prof(p)
    assert len(res.events) == 3 and res.complete is False
    assert res.gaps[0].kind == "truncated"


def test_row64_trace_events_fixture_shape(upstream: Path) -> None:
    """Row 64: the auto-tune `{"traceEvents":[…]}` fixture (no [b/n] prefix, no pid, int ts)."""
    p = upstream / "autotune-pipeline" / "sk_prof_device_0.json"
    res = parse_sk_prof(p)
    assert (res.shape, res.complete, res.gaps, res.unrecognized) == ("traceEvents", True, [], [])
    assert [(e.name, e.level, e.node_id, e.ts, e.dur, e.tid) for e in res.events] == [
        ("static_kernel_GroupedMatmul_hash", CHILD, 10, 0.0, 6.0, 1),
        ("static_kernel_VectorPost_hash", CHILD, 11, 6.0, 6.0, 2),
    ]
    assert res.events[0].src == Source(str(p), 3, "traceEvents[0]")
    assert res.events[0].pid is None and res.events[0].block_idx is None
    summary = child_summary(res.to_frame())
    assert list(summary.func_name) == ["static_kernel_GroupedMatmul_hash", "static_kernel_VectorPost_hash"]
    assert list(summary.total_dur) == [6.0, 6.0]


def test_row64_trace_events_with_other_members(tmp_path: Path) -> None:
    """Row 64: other members before/after traceEvents are skipped; events in the fixture shape."""
    ev = {"name": "[2/8]Foo", "ph": "X", "pid": "AIC", "tid": 2, "ts": 1.5, "dur": 2, "args": {"nodeId": 4}}
    text = '{"displayTimeUnit": "us", "meta": {"a": [1, 2]},\n' + trace_events_json([ev])[1:]
    p = tmp_path / "trace.json"
    p.write_text(text)
    res = parse_sk_prof(p)
    assert [(e.func_name, e.block_idx, e.block_num, e.node_id) for e in res.events] == [("Foo", 2, 8, 4)]
    assert res.complete and res.gaps == []


def test_row64_legacy_model_ri_and_old_file_name(tmp_path: Path) -> None:
    """Row 64: `args.modelRI` legacy, old file name `sk_event_dev_device_*.json`, extra legacy args,
    and the old recorder's `modelRI: N` model-level events after a leading `[{}`."""
    child = prof_child_body(3, 24, "MatMul_1", 3, 10.0, 1.0, node_id=1, legacy_model_ri=140233)[:-1]
    child += ',"nodeName":"MatMul_1","deviceId":2,"coreId":3}'
    model = (
        '"ph":"X","name":"modelRI: 140233","pid":"AIC","tid":3,"ts":9.0,"dur":5.0,"args":{"modelRI":140233}'
    )
    p = tmp_path / "sk_event_dev_device_2.json"
    p.write_bytes(b"[{},\n{" + model.encode() + b"},\n{" + child.encode() + b"},\n{}]")
    assert prof_device_id(p) == 2
    assert prof_device_id(tmp_path / "sk_event_dev_device_7.tmp.json") == 7
    assert prof_device_id(tmp_path / "other.json") is None
    res = parse_sk_prof(p)
    assert res.gaps == [] and res.unrecognized == []
    m, c = res.events
    assert (m.level, m.model_ri, m.model_id, m.index) == (MODEL, 140233, None, 1)
    assert (c.level, c.model_ri, c.model_id, c.node_id, c.core_id, c.device_id) == (
        CHILD,
        140233,
        None,
        1,
        3,
        2,
    )
    assert c.src.json_path == "[2]" and c.src.line == 3


def test_row64_name_forms_and_pid_strings(tmp_path: Path) -> None:
    """Row 64: `[b/n] name` SK-level (space) vs `[b/n]name` child; pid "AIC"/"AIV" strings."""
    bodies = [
        prof_child_body(255, 255, "Name With Space", 74, 1.0, 1.0, node_id=9),
        prof_sk_body(7, 8, "sk_1__start_a_end_b", 30, 1.0, 1.0),
        '"ph":"X","name":"plain","pid":"AIC","tid":0,"ts":1.0,"dur":1.0,"args":{}',
    ]
    p = _write_real(tmp_path / "sk_prof_device_0.json", bodies)
    a, b, c = parse_sk_prof(p).events
    assert (a.level, a.func_name, a.block_idx, a.pid) == (CHILD, "Name With Space", 255, "AIV")
    assert (b.level, b.func_name, b.block_idx, b.block_num, b.pid) == (SK, "sk_1__start_a_end_b", 7, 8, "AIV")
    assert (c.level, c.func_name, c.block_idx) == (OTHER, "plain", None)


def test_bad_records_kept_as_unrecognized(tmp_path: Path) -> None:
    """A record the recorder wrote with a raw quote in the name, and records of the wrong shape,
    are kept as Unrecognized; reading resynchronises on the next line."""
    bad = prof_child_body(0, 1, 'we"ird', 0, 1.0, 1.0, node_id=0)
    bodies = [
        prof_child_body(0, 1, "A", 0, 1.0, 1.0, node_id=0),
        bad,
        '"ph":"X","name":5,"ts":1,"dur":1',
        '"ph":"X","name":"x","ts":"1","dur":1',
        prof_child_body(0, 1, "B", 0, 2.0, 1.0, node_id=1),
    ]
    p = _write_real(tmp_path / "sk_prof_device_0.json", bodies)
    p.write_bytes(p.read_bytes()[:-3] + b"7,\n[1]\n,{}]")
    res = parse_sk_prof(p)
    assert [e.func_name for e in res.events] == ["A", "B"]
    assert res.complete and res.gaps == []
    got = [(u.src.line, u.src.json_path, u.context) for u in res.unrecognized]
    assert got == [
        (2, "[1]", "sk_prof"),
        (3, "[2]", "sk_prof:name missing or not a string"),
        (4, "[3]", "sk_prof:ts/dur missing or not numbers"),
        (6, "[5]", "sk_prof:not an object"),
        (7, "[6]", "sk_prof:not an object"),
    ]
    assert res.unrecognized[0].text.startswith('{"ph":"X","name":"[0/1]we"ird"')


def test_not_json_and_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "sk_prof_device_0.json"
    p.write_text("hello")
    with pytest.raises(ParseError, match="expected an SK profiling JSON array"):
        list(ProfReader(p))
    p.write_text("")
    res = parse_sk_prof(p)
    assert res.events == [] and [g.kind for g in res.gaps] == ["truncated"]
    with pytest.raises(ParseError, match="file does not exist"):
        parse_sk_prof(tmp_path / "missing.json")
    with pytest.raises(ParseError, match="binary data"):
        p.write_bytes(b"[{}\x00\x00]")
        parse_sk_prof(p)


def test_zero_filled_tail_after_crash(tmp_path: Path) -> None:
    """A crash can leave NUL bytes after the last flushed record: records before them are kept."""
    p = _write_real(tmp_path / "sk_prof_device_0.json", _bodies())
    p.write_bytes(p.read_bytes()[:-3] + b"\x00" * 4096)
    for chunk in (64, 1 << 20):
        reader = ProfReader(p, chunk_chars=chunk)
        assert len(list(reader)) == 6
        assert [g.kind for g in reader.gaps] == ["zero_filled", "truncated"]
        assert reader.complete is False


def test_small_chunks_same_result(tmp_path: Path) -> None:
    """Element boundaries falling across chunk edges do not change the result (line numbers too)."""
    p = _write_real(tmp_path / "sk_prof_device_0.json", _bodies() * 3)
    ref = list(ProfReader(p))
    for chunk in (1, 7, 64):
        got = list(ProfReader(p, chunk_chars=chunk))
        assert got == ref


def test_prof_frame_and_summaries(tmp_path: Path) -> None:
    """Per-child aggregation on the frame of every event (the `inspect` child table)."""
    p = _write_real(tmp_path / "sk_prof_device_0.json", _bodies())
    df = parse_sk_prof(p).to_frame()
    assert list(df.columns[:3]) == ["file", "line", "json_path"]
    assert len(df) == 6
    cs = child_summary(df)
    rows = cs[["func_name", "node_id", "events", "cores", "aic_events", "aiv_events", "total_dur", "max_dur"]]
    assert rows.values.tolist() == [
        ["MatMul_1", 1, 2, 2, 2, 0, 12.5, 6.5],
        ["Add_2", 3, 2, 2, 0, 2, 6.0, 3.25],
    ]
    assert list(cs.first_ts) == [100.0, 107.0] and list(cs.last_end) == [106.5, 110.25]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_fuzz_bytes_only_parse_error(tmp_path: Path, data: bytes) -> None:
    """Arbitrary bytes never raise anything but ParseError."""
    p = tmp_path / "sk_prof_device_0.json"
    p.write_bytes(data)
    with contextlib.suppress(ParseError):
        parse_sk_prof(p)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(json_values, max_size=6), st.booleans(), st.integers(0, 40))
def test_fuzz_json_elements(tmp_path: Path, elems: list[object], wrap: bool, cut: int) -> None:
    """Arbitrary JSON elements in either shape, optionally truncated, only yield events,
    Unrecognized or gaps — never another exception."""
    text = json.dumps({"traceEvents": elems}) if wrap else json.dumps(elems)
    p = tmp_path / "sk_prof_device_0.json"
    p.write_text(text[: max(1, len(text) - cut)])
    try:
        res = parse_sk_prof(p)
    except ParseError:
        return
    assert len(res.events) <= len(elems)
    if cut == 0:
        assert res.complete


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 255),
            st.integers(1, 255),
            st.text(
                st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters='"\\'), max_size=20
            ),
            st.integers(0, 74),
            st.floats(0, 1e9, allow_nan=False),
            st.floats(0, 1e6, allow_nan=False),
            st.integers(0, 300),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_roundtrip_generated(
    tmp_path: Path, recs: list[tuple[int, int, str, int, float, float, int, bool]]
) -> None:
    """Generated recorder records round-trip (µs values at the recorder's 6-decimal precision)."""
    bodies = [
        prof_sk_body(b, n, name, core, ts, dur, sk_id=node)
        if sk
        else prof_child_body(b, n, name, core, ts, dur, node_id=node)
        for b, n, name, core, ts, dur, node, sk in recs
    ]
    p = write_sk_prof(tmp_path / "sk_prof_device_0.json", bodies)
    res = parse_sk_prof(p)
    assert res.complete and res.gaps == [] and res.unrecognized == []
    assert len(res.events) == len(recs)
    for ev, (b, n, name, core, ts, dur, node, sk) in zip(res.events, recs, strict=True):
        assert (ev.block_idx, ev.block_num, ev.func_name, ev.tid) == (b, n, name, core)
        assert ev.level == (SK if sk else CHILD)
        assert ev.ts == pytest.approx(ts, abs=1e-6) and ev.dur == pytest.approx(dur, abs=1e-6)
        assert (ev.sk_id if sk else ev.node_id) == node
