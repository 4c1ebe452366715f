"""Graph JSON parser (artifacts.md §3.11; §7.5 row 63)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError
from skdbg.parsers.graph_json import graph_from_json, parse_graph_json
from skdbg.parsers.jsonload import JsonSyntaxError
from skdbg.scenebuilder.jsonart import (
    GraphNodeSpec,
    graph_json,
    kernel_params,
    resolved_func,
    sk_option,
    skinfos,
    write_graph_json,
)

SK_NAME = "sk_3_decoder_start_MatMul_1_end_Add_2"


def _streams() -> list[list[GraphNodeSpec]]:
    rf = resolved_func(
        (0x124080B04A00, 0x124080B05A00), (0x4A00, 0x5A00), (4, 2), ("MatMul_1_aic", "MatMul_1_aiv")
    )
    return [
        [
            GraphNodeSpec(
                120,
                params=kernel_params(
                    "MatMul_1", func_handle=0xAA00, bin_handle=0xBB00, num_blocks=24, resolved_funcs=[rf]
                ),
                scope_name="decoder",
                is_scope_node=True,
            ),
            GraphNodeSpec(
                121,
                node_type="NOTIFY",
                task_type="EVENT_RECORD",
                task_type_int=1,
                params_kind="eventRecordParams",
                params={"eventId": "0x5000", "eventFlag": 0},
            ),
            GraphNodeSpec(
                130,
                params=kernel_params(
                    SK_NAME, func_handle=0xCC00, bin_handle=0xDD00, kernel_type="MIX_AIC_1_2"
                ),
                skinfos=skinfos(3, "decoder", "MatMul_1", "Add_2"),
            ),
        ],
        [
            GraphNodeSpec(
                200,
                node_type="MEMORY_WAIT",
                task_type="VALUE_WAIT",
                params_kind="valueWaitParams",
                params={"devAddr": "0x77", "value": "0x1", "flag": 0},
                stream_id=5,
            ),
            GraphNodeSpec(
                201, params=kernel_params("Add_2", func_handle=0xEE00, bin_handle=0xBB00), stream_id=5
            ),
            GraphNodeSpec(
                202,
                params=kernel_params("Solo", func_handle=0xEF00, bin_handle=0xBC00),
                skinfos=skinfos(4, None, "Solo", "Solo"),
                stream_id=5,
            ),
        ],
    ]


def test_row63_updated_graph_skinfos_none_and_null(tmp_path: Path) -> None:
    """Row 63: skinfos on the SK launch node; preNodeId "none"; scopeName null."""
    opts = {"debug_op_exec_trace": sk_option("debug_op_exec_trace", 1), "inner_options": {"x": 1}}
    p = write_graph_json(tmp_path / "sk_graph_updated.json", "48_1", _streams(), device_id=3, options=opts)
    g = parse_graph_json(p)
    assert g.gaps == [] and g.unrecognized == []
    assert (g.version, g.model_id, g.device_id, g.total_streams, g.total_nodes) == ("1.0", "48_1", 3, 2, 6)
    first = g.node(120)
    assert first is not None
    assert first.pre_node_id is None and first.next_node_id == 121
    assert first.scope_name == "decoder" and first.is_scope_node is True
    k = first.kernel
    assert k is not None
    assert (k.func_name, k.func_handle, k.bin_handle, k.num_blocks) == ("MatMul_1", 0xAA00, 0xBB00, 24)
    assert k.resolved_num == 1
    assert k.resolved_funcs[0].func_addr == (0x124080B04A00, 0x124080B05A00)
    assert k.resolved_funcs[0].func_offset == (0x4A00, 0x5A00)
    assert k.resolved_funcs[0].prefetch_cnt == (4, 2)
    assert k.resolved_funcs[0].symbol_bind == ("MatMul_1_aic", "MatMul_1_aiv")
    assert k.task_ratio == (1, 0) and k.need_mix_kernel_split is False
    ev = g.node(121)
    assert ev is not None and ev.scope_name is None and ev.kernel is None
    assert ev.tasks[0].params_kind == "eventRecordParams"
    assert ev.tasks[0].params == {"eventId": "0x5000", "eventFlag": 0}
    sk = g.node(130)
    assert sk is not None and sk.skinfo is not None
    assert (sk.skinfo.scope_id, sk.skinfo.scope_name) == (3, "decoder")
    assert (sk.skinfo.start_kernel_func_name, sk.skinfo.end_kernel_func_name) == ("MatMul_1", "Add_2")
    assert sk.next_node_id is None and sk.pre_node_id == 121
    assert sk.skinfo.src.json_path == "streams[0].nodes[2].skinfos"
    s4 = g.node(202)
    assert s4 is not None and s4.skinfo is not None and s4.skinfo.scope_name is None
    assert g.options_raw is not None and g.options_raw["inner_options"] == {"x": 1}
    w = g.node(200)
    assert w is not None and w.tasks[0].params_kind == "valueWaitParams" and w.tasks[0].stream_id == 5
    assert [s.node_ids for s in g.streams] == [(120, 121, 130), (200, 201, 202)]


def test_row63_literal_node_and_frame(tmp_path: Path) -> None:
    """Row 63 with a literal node as §3.11 prints it (eventParams spelling of the spec)."""
    doc = {
        "version": "1.0",
        "description": "SuperKernel Raw Task Information from modelRI",
        "modelId": "48_1",
        "deviceId": 0,
        "options": {"numOptions": 0, "options": []},
        "totalStreams": 1,
        "totalNodes": 1,
        "streams": [
            {
                "streamIdxInGraph": 0,
                "nodeCount": 1,
                "nodes": [
                    {
                        "nodeId": 7,
                        "streamIdxInGraph": 0,
                        "nodeIdxInStream": 0,
                        "nodeType": "WAIT",
                        "scopeName": None,
                        "isScopeNode": False,
                        "isScopeBegin": False,
                        "isScopeEnd": False,
                        "isScopePlaceholder": False,
                        "preNodeId": "none",
                        "nextNodeId": "none",
                        "taskInfo": [
                            {
                                "taskId": 7,
                                "streamId": 2,
                                "taskType": "EVENT_WAIT",
                                "taskTypeInt": 2,
                                "eventParams": {"event": "0x10", "eventFlag": 0},
                            }
                        ],
                    }
                ],
            }
        ],
    }
    p = tmp_path / "sk_graph_origin.json"
    p.write_text(json.dumps(doc, indent=2))
    g = parse_graph_json(p)
    n = g.node(7)
    assert n is not None
    assert (n.pre_node_id, n.next_node_id, n.scope_name, n.skinfo) == (None, None, None, None)
    assert n.tasks[0].params_kind == "eventParams" and n.tasks[0].task_type == "EVENT_WAIT"
    assert g.options == []
    df = g.to_frame()
    assert df.iloc[0].json_path == "streams[0].nodes[0]"
    assert df.iloc[0].task_type == "EVENT_WAIT" and df.iloc[0].file == str(p)


def test_frame_columns_and_sk_join(tmp_path: Path) -> None:
    p = write_graph_json(tmp_path / "g.json", "48_1", _streams())
    df = parse_graph_json(p).to_frame()
    assert len(df) == 6
    sk = df[df.sk_scope_id.notna()]
    assert list(sk.node_id) == [130, 202]
    assert list(sk.func_name) == [SK_NAME, "Solo"]
    assert df[df.node_id == 201].bin_handle.iloc[0] == 0xBB00


def test_count_mismatch_and_duplicates(tmp_path: Path) -> None:
    doc = json.loads(graph_json("48_1", _streams()))
    doc["totalNodes"] = 9
    doc["streams"][0]["nodeCount"] = 4
    doc["streams"][1]["nodes"][0]["nodeId"] = 120
    doc["streams"][1]["nodes"][0]["isFusible"] = True
    g = graph_from_json(doc, "g.json")
    assert sorted(x.kind for x in g.gaps) == ["count_mismatch", "count_mismatch", "duplicate_node"]
    assert [u.text for u in g.unrecognized] == ["isFusible: true"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["streams"][0]["nodes"][0].__setitem__("preNodeId", "first"),
            'streams[0].nodes[0].preNodeId to be an integer or "none"',
        ),
        (
            lambda d: d["streams"][0]["nodes"][2]["skinfos"].pop("scopeId"),
            "streams[0].nodes[2].skinfos.scopeId to be an integer",
        ),
        (
            lambda d: d["streams"][0]["nodes"][0]["taskInfo"][0]["kernelParams"].__setitem__(
                "binHandle", "bb00"
            ),
            "streams[0].nodes[0].taskInfo[0].kernelParams.binHandle to be a hex string",
        ),
        (
            lambda d: d["streams"][0]["nodes"][1].__setitem__("scopeName", 5),
            "streams[0].nodes[1].scopeName to be a string or null",
        ),
        (
            lambda d: d["streams"][0]["nodes"][0]["taskInfo"][0]["kernelParams"]["resolvedFuncs"][
                0
            ].__setitem__("funcAddr", ["0x1"]),
            "resolvedFuncs[0].funcAddr to be a two-element array",
        ),
        (lambda d: d.__setitem__("streams", {}), "streams to be an array"),
    ],
)
def test_wrong_types(mutate, message) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(graph_json("48_1", _streams()))
    mutate(doc)
    with pytest.raises(ParseError) as ei:
        graph_from_json(doc, "g.json")
    assert message in str(ei.value)


def test_truncated_graph_json(tmp_path: Path) -> None:
    """Row 62 for the graph JSON: truncated file → JsonSyntaxError with line and column."""
    text = graph_json("48_1", _streams())
    p = tmp_path / "sk_graph_updated.json"
    p.write_text(text[:-40])
    with pytest.raises(JsonSyntaxError) as ei:
        parse_graph_json(p)
    assert ei.value.line is not None and ei.value.column >= 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200)
@given(json_values, st.sampled_from(["streams", "nodes", "taskInfo", "kernelParams", "skinfos", "options"]))
def test_fuzz_json_values_only_parse_error(value: object, where: str) -> None:
    doc = json.loads(graph_json("48_1", _streams()))
    node = doc["streams"][0]["nodes"][2]
    holder, key = {
        "streams": (doc, "streams"),
        "nodes": (doc["streams"][0], "nodes"),
        "taskInfo": (node, "taskInfo"),
        "kernelParams": (node["taskInfo"][0], "kernelParams"),
        "skinfos": (node, "skinfos"),
        "options": (doc, "options"),
    }[where]
    holder[key] = value
    for d in (doc, value):
        with contextlib.suppress(ParseError):
            graph_from_json(d, "g.json")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_fuzz_bytes_only_parse_error(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "g.json"
    p.write_bytes(data)
    with contextlib.suppress(ParseError):
        parse_graph_json(p)
