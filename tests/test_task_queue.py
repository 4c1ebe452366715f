"""sk_task_queue.json parser (artifacts.md §3.10; §7.5 rows 60, 61, 62)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.jsonload import JsonSyntaxError
from skdbg.parsers.task_queue import decode_debug_options, parse_task_queue, task_queue_from_json
from skdbg.scenebuilder.jsonart import (
    QueueSpec,
    ScopeSpec,
    TaskSpec,
    task_queue_json,
    task_queue_root_json,
    write_task_queue,
)

E = (0x124080B04A00, 0x124080B07A00, 0x124080B0AA00, 0x124080B0DA00)


def _scope3() -> ScopeSpec:
    aic = QueueSpec(
        (
            TaskSpec(0, "PRELOAD", 24, 0x10, 0, E),
            TaskSpec(0, "FUNC", 24, 0x12C100400000, 32, E),
            TaskSpec(0, "SYNC", 0, 0x3, 0, ()),
        )
    )
    aiv = QueueSpec(
        (
            TaskSpec(1, "FUNC", 48, 0x12C100400100, 0, E[:2]),
            TaskSpec(2, "FUNC", 48, 0x12C100400200, 0x12, E[:1]),
            TaskSpec(2, "EVENT_NOTIFY", 0, 0x0, 0, ()),
            TaskSpec(3, "EVENT_WAIT", 0, 0x0, 0, ()),
        )
    )
    return ScopeSpec(3, aic, aiv)


def test_row60_single_scope_exact_values(tmp_path: Path) -> None:
    """Row 60: one scope; args hex → int, debugOptions decimal, entries hex → int, empty entries."""
    p = write_task_queue(tmp_path / "sk_task_queue.json", "48_1", [_scope3()])
    res = parse_task_queue(p)
    assert res.layout == "scopes"
    assert (res.version, res.model_id, res.scope_count) == ("1.0", "48_1", 1)
    assert res.gaps == [] and res.unrecognized == []
    s = res.scope(3)
    assert s is not None and s.aic is not None and s.aiv is not None
    assert (s.aic.num_blocks, s.aic.func_cnt, s.aic.task_cnt) == (24, 1, 3)
    assert (s.aiv.num_blocks, s.aiv.func_cnt, s.aiv.task_cnt) == (48, 2, 4)
    func = s.aic.tasks[1]
    assert (func.node_index, func.type, func.num_blocks, func.entry_cnt) == (0, "FUNC", 24, 4)
    assert func.args == 0x12C100400000
    assert func.debug_options == 32
    assert func.debug_flags == ("dcci_after_child",)
    assert func.entries == E
    assert func.src == Source(str(p), json_path="scopes[0].taskQueues.aic.taskQue.taskInfos[1]")
    sync = s.aic.tasks[2]
    assert (sync.type, sync.args, sync.entries, sync.entry_cnt) == ("SYNC", 3, (), 0)
    aiv2 = s.aiv.tasks[1]
    assert aiv2.debug_flags == ("debug_sync_all", "cross_core_sync_check")
    assert aiv2.entries == (E[0],)


def test_row60_three_scopes_unsorted_and_queue_without_taskque(tmp_path: Path) -> None:
    """Row 60: 3 scopes in non-sorted order are indexed by scopeId; a queue without taskQue."""
    s7 = ScopeSpec(7, QueueSpec((TaskSpec(5, "FUNC", 8, 0x20, 0, E[:1]),)), QueueSpec(None))
    s1 = ScopeSpec(1, QueueSpec((TaskSpec(0, "FUNC", 4, 0x30, 1, E[:4]),)), QueueSpec(None, num_blocks=0))
    p = write_task_queue(tmp_path / "q.json", "48_2", [s7, _scope3(), s1])
    res = parse_task_queue(p)
    assert [s.scope_id for s in res.scopes] == [7, 3, 1]
    assert sorted(k for k in res.by_scope if k is not None) == [1, 3, 7]
    s7r = res.scope(7)
    assert s7r is not None and s7r.aiv is not None
    assert s7r.aiv.has_task_que is False and s7r.aiv.task_cnt is None and s7r.aiv.tasks == ()
    assert (s7r.aiv.num_blocks, s7r.aiv.func_cnt) == (0, 0)
    s1r = res.scope(1)
    assert s1r is not None and s1r.aic is not None
    assert s1r.aic.tasks[0].debug_flags == ("disable_dcci",)
    assert s1r.aic.tasks[0].src.json_path == "scopes[2].taskQueues.aic.taskQue.taskInfos[0]"
    df = res.to_frame()
    assert len(df) == 3 + 4 + 1 + 1
    row = df[(df.scope_id == 7)].iloc[0]
    assert (row.queue, row.node_index, row.args, row.entry0) == ("aic", 5, 0x20, E[0])
    assert row.json_path == "scopes[0].taskQueues.aic.taskQue.taskInfos[0]"
    assert list(df.columns[:3]) == ["file", "line", "json_path"]


def test_row60_literal_upstream_shape(tmp_path: Path) -> None:
    """Row 60: the §3.10 sample written by hand (queue without numBlocks/funcCnt too)."""
    doc = {
        "version": "1.0",
        "description": "SuperKernel Task Queue Information",
        "modelId": "48_1",
        "scopeCount": 1,
        "scopes": [
            {
                "scopeId": 3,
                "taskQueues": {
                    "aic": {
                        "taskQue": {
                            "taskCnt": 1,
                            "taskInfos": [
                                {
                                    "nodeIndex": 0,
                                    "type": "FUNC",
                                    "numBlocks": 24,
                                    "entryCnt": 1,
                                    "args": "0x12c100400000",
                                    "debugOptions": 4,
                                    "entries": ["0x124080b04a00"],
                                }
                            ],
                        }
                    }
                },
            }
        ],
    }
    p = tmp_path / "sk_task_queue.json"
    p.write_text(json.dumps(doc))
    res = parse_task_queue(p)
    s = res.scope(3)
    assert s is not None and s.aiv is None and s.aic is not None
    assert (s.aic.num_blocks, s.aic.func_cnt, s.aic.task_cnt) == (None, None, 1)
    t = s.aic.tasks[0]
    assert (t.args, t.entries, t.debug_flags) == (0x12C100400000, (0x124080B04A00,), ("dcci_before_child",))


@pytest.mark.parametrize("scope_id", [5, None])
def test_row61_root_level_task_queues(tmp_path: Path, scope_id: int | None) -> None:
    """Row 61: root-level taskQueues, with and without scopeId."""
    p = tmp_path / "sk_task_queue.json"
    p.write_text(task_queue_root_json(_scope3().aic, QueueSpec(None), scope_id=scope_id))
    res = parse_task_queue(p)
    assert res.layout == "root"
    assert res.model_id is None and res.scope_count is None
    assert [s.scope_id for s in res.scopes] == [scope_id]
    s = res.scope(scope_id)
    assert s is not None and s.aic is not None
    assert [t.type for t in s.aic.tasks] == ["PRELOAD", "FUNC", "SYNC"]
    assert s.aic.tasks[1].src.json_path == "taskQueues.aic.taskQue.taskInfos[1]"
    assert s.aic.tasks[1].scope_id == scope_id


def test_row62_truncated_json_names_file_line_column(tmp_path: Path) -> None:
    """Row 62: a truncated file → ParseError (JsonSyntaxError) with file, line and column; a sibling
    artifact still loads."""
    good = write_task_queue(tmp_path / "a" / "sk_task_queue.json", "48_1", [_scope3()])
    text = good.read_text()
    bad = tmp_path / "b" / "sk_task_queue.json"
    bad.parent.mkdir()
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(JsonSyntaxError) as ei:
        parse_task_queue(bad)
    err = ei.value
    assert err.file == str(bad)
    assert err.line is not None and err.line > 10 and err.column >= 1
    assert str(err).startswith(f"{bad}:{err.line}: expected sk_task_queue.json as valid JSON (")
    assert f"column {err.column}" in str(err)
    assert parse_task_queue(good).scope(3) is not None  # the other artifact is unaffected


def test_row62_malformed_middle_reports_position(tmp_path: Path) -> None:
    """Row 62: a syntax error mid-file reports the exact line and column."""
    p = tmp_path / "q.json"
    p.write_text('{\n  "version": "1.0",\n  "scopes": [ {"scopeId": 3 "taskQueues": {}} ]\n}')
    with pytest.raises(JsonSyntaxError) as ei:
        parse_task_queue(p)
    assert (ei.value.line, ei.value.column) == (3, 29)


@pytest.mark.parametrize(
    ("mutate", "path", "expected"),
    [
        (lambda d: d["scopes"][0].__setitem__("scopeId", "3"), "scopes[0].scopeId", "an integer"),
        (
            lambda d: d["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskInfos"][1].__setitem__("args", 16),
            None,
            None,
        ),
        (
            lambda d: d["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskInfos"][1].__setitem__(
                "args", "16"
            ),
            "scopes[0].taskQueues.aic.taskQue.taskInfos[1].args",
            'a hex string "0x…"',
        ),
        (
            lambda d: d["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskInfos"][0].__setitem__(
                "debugOptions", "0x20"
            ),
            "scopes[0].taskQueues.aic.taskQue.taskInfos[0].debugOptions",
            "an integer",
        ),
        (
            lambda d: d["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskInfos"][0]["entries"].__setitem__(
                2, 7.5
            ),
            "scopes[0].taskQueues.aic.taskQue.taskInfos[0].entries[2]",
            'a hex string "0x…"',
        ),
        (
            lambda d: d["scopes"][0]["taskQueues"]["aiv"]["taskQue"]["taskInfos"][0].pop("nodeIndex"),
            "scopes[0].taskQueues.aiv.taskQue.taskInfos[0].nodeIndex",
            "an integer",
        ),
        (
            lambda d: d["scopes"][0]["taskQueues"].__setitem__("aic", []),
            "scopes[0].taskQueues.aic",
            "an object",
        ),
        (lambda d: d.__setitem__("scopes", {}), "scopes", "an array"),
        (lambda d: d["scopes"][0].__setitem__("taskQueues", None), "scopes[0].taskQueues", "an object"),
    ],
)
def test_wrong_types_name_json_path(tmp_path: Path, mutate, path, expected) -> None:  # type: ignore[no-untyped-def]
    """Wrong types → ParseError naming the JSON path and expected type (an int args is accepted)."""
    doc = json.loads(task_queue_json("48_1", [_scope3()]))
    mutate(doc)
    p = tmp_path / "q.json"
    p.write_text(json.dumps(doc))
    if path is None:
        assert parse_task_queue(p).scope(3).aic.tasks[1].args == 16  # type: ignore[union-attr]
        return
    with pytest.raises(ParseError) as ei:
        parse_task_queue(p)
    assert f"expected {path} to be {expected}" in str(ei.value)


def test_consistency_gaps_and_unknown_members(tmp_path: Path) -> None:
    """scopeCount/taskCnt/entryCnt mismatches → gaps; unknown keys and task types → Unrecognized."""
    doc = json.loads(task_queue_json("48_1", [_scope3(), _scope3()]))
    doc["scopeCount"] = 5
    doc["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskCnt"] = 9
    t = doc["scopes"][0]["taskQueues"]["aic"]["taskQue"]["taskInfos"][0]
    t["entryCnt"] = 2
    t["relatedType"] = "KERNEL"
    t["type"] = "FANCY"
    doc["scopes"][0]["taskQueues"]["cube"] = {}
    p = tmp_path / "q.json"
    p.write_text(json.dumps(doc))
    res = parse_task_queue(p)
    kinds = sorted((g.kind, g.src.json_path if g.src else None) for g in res.gaps)
    assert kinds == [
        ("count_mismatch", "scopeCount"),
        ("count_mismatch", "scopes[0].taskQueues.aic.taskQue.taskCnt"),
        ("count_mismatch", "scopes[0].taskQueues.aic.taskQue.taskInfos[0]"),
        ("duplicate_scope", "scopes[1]"),
    ]
    ctx = sorted((u.context, u.text) for u in res.unrecognized)
    assert ctx == [
        ("sk_task_queue:task", 'relatedType: "KERNEL"'),
        ("sk_task_queue:taskQueues", "cube: {}"),
        ("sk_task_queue:type", "FANCY"),
    ]


def test_decode_debug_options_bits() -> None:
    assert decode_debug_options(0) == ()
    assert decode_debug_options(0x3F) == (
        "disable_dcci",
        "debug_sync_all",
        "dcci_before_child",
        "dcci_after_child_requested",
        "cross_core_sync_check",
        "dcci_after_child",
    )
    assert decode_debug_options(0x42) == ("debug_sync_all", "bit_0x40")


def test_root_not_object_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "q.json"
    p.write_text("[1, 2]")
    with pytest.raises(ParseError, match="expected the document root to be an object"):
        parse_task_queue(p)
    p.write_text('{"version": "1.0"}')
    with pytest.raises(ParseError, match="'scopes' or 'taskQueues'"):
        parse_task_queue(p)
    with pytest.raises(ParseError, match="file does not exist"):
        parse_task_queue(tmp_path / "nope.json")
    with pytest.raises(ParseError, match="got an empty file"):
        (tmp_path / "e.json").write_text("  \n")
        parse_task_queue(tmp_path / "e.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_fuzz_bytes_only_parse_error(tmp_path: Path, data: bytes) -> None:
    """Arbitrary bytes never raise anything but ParseError."""
    p = tmp_path / "q.json"
    p.write_bytes(data)
    with contextlib.suppress(ParseError):
        parse_task_queue(p)


@settings(max_examples=200)
@given(json_values, st.sampled_from(["scopes", "taskQueues", "aic", "taskInfos", "args", "entries"]))
def test_fuzz_json_values_only_parse_error(value: object, where: str) -> None:
    """Arbitrary JSON values spliced into a valid document never raise anything but ParseError."""
    doc = json.loads(task_queue_json("48_1", [_scope3()]))
    aic = doc["scopes"][0]["taskQueues"]["aic"]
    target = {
        "scopes": (doc, "scopes"),
        "taskQueues": (doc["scopes"][0], "taskQueues"),
        "aic": (doc["scopes"][0]["taskQueues"], "aic"),
        "taskInfos": (aic["taskQue"], "taskInfos"),
        "args": (aic["taskQue"]["taskInfos"][0], "args"),
        "entries": (aic["taskQue"]["taskInfos"][0], "entries"),
    }[where]
    target[0][target[1]] = value
    for d in (doc, value):
        with contextlib.suppress(ParseError):
            task_queue_from_json(d, "q.json")


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 65535),
            st.lists(
                st.tuples(
                    st.integers(0, 300),
                    st.sampled_from(["FUNC", "SYNC", "PRELOAD", "EVENT_NOTIFY"]),
                    st.integers(0, 255),
                    st.integers(0, 2**64 - 1),
                    st.integers(0, 63),
                    st.lists(st.integers(0, 2**64 - 1), max_size=4),
                ),
                max_size=5,
            ),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t[0],
    )
)
def test_roundtrip_generated(
    scopes: list[tuple[int, list[tuple[int, str, int, int, int, list[int]]]]],
) -> None:
    """Generated well-formed files round-trip exactly through writer and parser."""
    specs = [
        ScopeSpec(sid, QueueSpec(tuple(TaskSpec(n, ty, b, a, d, tuple(e)) for n, ty, b, a, d, e in tasks)))
        for sid, tasks in scopes
    ]
    res = task_queue_from_json(json.loads(task_queue_json("9_1", specs)), "q.json")
    assert res.gaps == [] and res.unrecognized == []
    for (sid, tasks), s in zip(scopes, res.scopes, strict=True):
        assert s.scope_id == sid and s.aic is not None
        got = [
            (t.node_index, t.type, t.num_blocks, t.args, t.debug_options, list(t.entries))
            for t in s.aic.tasks
        ]
        assert got == [tuple(t) for t in tasks]
