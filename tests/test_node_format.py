"""Node Format() grammar (artifacts.md §3.5, row 54)."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.node_format import Node, match_node
from skdbg.scenebuilder.skmeta import NodeSpec, render_node

SRC = Source("sk_fused_nodes.log", 7)


def _p(text: str) -> Node:
    """The node that is the whole of ``text`` (as the fused-node log prints one per line)."""
    got = match_node(text, 0, SRC)
    assert got is not None
    node, end = got
    assert end == len(text)
    return node


def test_row54_kernel_all_optional_fields() -> None:
    spec = NodeSpec(
        42,
        stream_id=5,
        stream_idx=2,
        node_idx=9,
        func_name="static_kernel_MatMul_ab12",
        kernel_type="MIX_1_2",
        task_ratio=(1, 2),
        cap=3,
        num_blocks=24,
        cube_num=24,
        vec_num=48,
        sche_mode=True,
        mix_split=True,
        resolved_num=2,
        bin_hdl=0x1234,
        func_hdl=0xABC,
        launch_kernel_cfg=0x77,
        dev_args=0x12C100400000,
    )
    n = _p(render_node(spec))
    assert (n.kind, n.form, n.node_id, n.stream_id, n.stream_idx_in_graph, n.node_idx_in_stream) == (
        "kernel",
        "current",
        42,
        5,
        2,
        9,
    )
    assert n.func_name == "static_kernel_MatMul_ab12"
    assert n.kernel_type == "MIX_1_2"
    assert n.task_ratio == (1, 2) and n.cap == 3
    assert (n.num_blocks, n.cube_num, n.vec_num) == (24, 24, 48)
    assert n.is_sche_mode_on is True and n.need_mix_kernel_split is True
    assert n.resolved_num == 2
    assert (n.bin_hdl, n.func_hdl, n.launch_kernel_cfg, n.dev_args) == (0x1234, 0xABC, 0x77, 0x12C100400000)
    assert n.is_simt_op is False and n.dyn_ubuf_size is None


def test_row54_kernel_simt_fields() -> None:
    n = _p(render_node(NodeSpec(3, simt=True, dyn_ubuf_size=65536, alloc_ubuf_size=1024)))
    assert n.is_simt_op is True
    assert (n.dyn_ubuf_size, n.alloc_ubuf_size) == (65536, 1024)


@pytest.mark.parametrize("et", ["EventNotify", "EventWait", "EventReset", "Unknown"])
def test_row54_event_forms(et: str) -> None:
    n = _p(
        render_node(
            NodeSpec(7, kind="event", event_type=et, event_id=0xFFFD80CD2B00, event_flag=1, event_task_flag=2)
        )
    )
    assert (n.kind, n.event_type, n.event_id, n.event_flag, n.event_task_flag) == (
        "event",
        et,
        0xFFFD80CD2B00,
        1,
        2,
    )
    assert n.func_name is None


def test_row54_value_write_wait_default() -> None:
    w = _p(render_node(NodeSpec(8, kind="memory_write", memory_value=5, event_id=0xBEEF)))
    assert (w.kind, w.memory_value, w.event_id) == ("memory_write", 5, 0xBEEF)
    v = _p(render_node(NodeSpec(9, kind="memory_wait", memory_wait_flag=1, memory_value=6, event_id=0xF00)))
    assert (v.kind, v.memory_wait_flag, v.memory_value, v.event_id) == ("memory_wait", 1, 6, 0xF00)
    d = _p("[nodeId:10, streamId:-1, streamIdxInGraph:3, nodeIdxInStream:4, type: Default]")
    assert (d.kind, d.stream_id, d.node_idx_in_stream) == ("default", -1, 4)


def test_row54_legacy_kernel_and_event_forms() -> None:
    k = _p("[nodeId:123, streamIdxInGraph:0, nodeIdxInStream:5] - Kernel:static_kernel_Add_x")
    assert (k.kind, k.form, k.node_id, k.stream_id, k.node_idx_in_stream, k.func_name) == (
        "kernel",
        "legacy",
        123,
        None,
        5,
        "static_kernel_Add_x",
    )
    e = _p("[nodeId:0, streamIdxInGraph:2, nodeIdxInStream:0] - Event:Notify(eventId:0xfffd60cd0de0)")
    assert (e.kind, e.event_type, e.event_id, e.form) == ("event", "EventNotify", 0xFFFD60CD0DE0, "legacy")
    named = _p("[nodeId:0, streamId:11, streamIdxInGraph:2, nodeIdxInStream:0, Kernel name:static_kernel_Y]")
    assert (named.kind, named.func_name) == ("kernel", "static_kernel_Y")


def test_row54_fixture_form_without_idx_fields() -> None:
    line = (
        "[nodeId:10, streamId:1] - "
        "KernelInfos{funcName:static_kernel_GroupedMatmul_hash, kernelType:AIC_ONLY, "
        "taskRatio:[1,0], numBlocks:1, cubeNum:1, vecNum:0, isScheModeOn:0, "
        "needMixKernelSplit:0, resolvedNum:1}"
    )
    n = _p(line)
    assert (n.form, n.node_id, n.stream_id, n.stream_idx_in_graph, n.cap) == ("fixture", 10, 1, None, None)
    assert n.text == line


def test_row54_func_name_with_comma_and_brace_up_to_kernel_type() -> None:
    n = _p(render_node(NodeSpec(1, func_name="odd, name}x")))
    assert n.func_name == "odd, name}x"
    assert n.kernel_type == "AIV_ONLY"


@pytest.mark.parametrize(
    ("func", "marker"),
    [
        ("sk_scope_kernel_begin_dav_2201", "begin"),
        ("sk_scope_kernel_end_dav_3510", "end"),
        ("sk_placeholder_kernel_dav_2201", "placeholder"),
        ("static_kernel_Add", None),
    ],
)
def test_row54_scope_marker_kernels(func: str, marker: str | None) -> None:
    n = _p(render_node(NodeSpec(1, func_name=func)))
    assert n.scope_marker == marker
    assert n.is_scope_marker is (marker is not None)


def test_row54_old_kernel_type_spelling_is_kept() -> None:
    n = _p(render_node(NodeSpec(1, kernel_type="MIX_AIC_1_1")))
    assert n.kernel_type == "MIX_AIC_1_1"


def test_row54_embedded_node_reports_end() -> None:
    text = "Processed node " + render_node(NodeSpec(4)) + ": type=KERNEL"
    start = text.find("[nodeId:")
    got = match_node(text, start, SRC)
    assert got is not None
    node, end = got
    assert start == len("Processed node ") and text[end:] == ": type=KERNEL"
    assert node.node_id == 4


def test_row54_not_a_node_returns_none() -> None:
    assert match_node("SK Function: x", 0, SRC) is None
    assert match_node("xx[nodeId:1]", 0, SRC) is None


@pytest.mark.parametrize(
    "bad",
    [
        "[nodeId:1, streamId:2]",
        "[nodeId:1, streamId:2] - KernelInfos{funcName:a, kernelType:AIV_ONLY, numBlocks:zz}",
        "[nodeId:1, streamId:2] - KernelInfos{funcName:a, kernelType:AIV_ONLY",
        "[nodeId:1, streamId:2, Bogus(x:1)]",
        "[nodeId:1, streamId:2, streamIdxInGraph:0, nodeIdxInStream:0, EventWait(eventId:zz)]",
    ],
)
def test_row54_malformed_node_raises_parse_error_with_file_and_line(bad: str) -> None:
    with pytest.raises(ParseError) as ei:
        match_node(bad, 0, SRC)
    assert ei.value.file == "sk_fused_nodes.log" and ei.value.line == 7
    assert "sk_fused_nodes.log:7" in str(ei.value)


_LONG = "9" * 5000  # beyond int()'s 4,300 digits


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        # a letter after the digits: the line-level oversized check takes the run for part of a name
        (f"[nodeId:{_LONG}x, streamId:0] - KernelInfos{{funcName:a}}", "nodeId"),
        (f"[nodeId:1, streamId:{_LONG}_]", "streamId"),
        (
            "[nodeId:1, streamId:0] - KernelInfos{funcName:a, kernelType:AIV_ONLY, taskRatio:["
            + _LONG
            + ",1]}",
            "taskRatio",
        ),
        (
            "[nodeId:1, streamId:0] - KernelInfos{funcName:a, kernelType:AIV_ONLY, numBlocks:"
            + "9" * 21
            + "}",
            "numBlocks",
        ),
    ],
)
def test_a_number_no_runtime_prints_is_a_parse_error_of_the_node(bad: str, field: str) -> None:
    with pytest.raises(ParseError) as ei:
        match_node(bad, 0, SRC)
    assert f"at most 64 bits for node field {field!r}" in str(ei.value)
    assert "sk_fused_nodes.log:7" in str(ei.value)


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_row54_arbitrary_text_only_parse_error(text: str) -> None:
    for candidate in (text, "[nodeId:1" + text, "[nodeId:1, streamId:2] - KernelInfos{funcName:" + text):
        with contextlib.suppress(ParseError):
            match_node(candidate, 0, SRC)


_names = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters=",}"),
    min_size=1,
    max_size=30,
)
_u = st.integers(min_value=0, max_value=2**32)
_h = st.integers(min_value=0, max_value=2**64 - 1)


@st.composite
def node_specs(draw: st.DrawFn) -> NodeSpec:
    kind = draw(st.sampled_from(["kernel", "event", "memory_write", "memory_wait", "default"]))
    return NodeSpec(
        node_id=draw(st.integers(min_value=0, max_value=2**64 - 1)),
        kind=kind,
        stream_id=draw(st.integers(min_value=-(2**31), max_value=2**31 - 1)),
        stream_idx=draw(_u),
        node_idx=draw(_u),
        func_name=draw(_names),
        kernel_type=draw(st.sampled_from(["AIC_ONLY", "AIV_ONLY", "MIX_1_1", "MIX_1_2", "DEFAULT"])),
        task_ratio=(draw(_u), draw(_u)),
        cap=draw(_h),
        num_blocks=draw(_u),
        cube_num=draw(_u),
        vec_num=draw(_u),
        sche_mode=draw(st.booleans()),
        mix_split=draw(st.booleans()),
        simt=draw(st.booleans()),
        dyn_ubuf_size=draw(st.none() | _u),
        alloc_ubuf_size=draw(st.none() | _u),
        resolved_num=draw(st.integers(min_value=0, max_value=4)),
        bin_hdl=draw(st.none() | _h.filter(bool)),
        func_hdl=draw(st.none() | _h.filter(bool)),
        launch_kernel_cfg=draw(st.none() | _h.filter(bool)),
        dev_args=draw(st.none() | _h.filter(bool)),
        event_type=draw(st.sampled_from(["EventNotify", "EventWait", "EventReset", "Unknown"])),
        event_id=draw(_h),
        event_flag=draw(_u),
        event_task_flag=draw(_u),
        memory_value=draw(_h),
        memory_wait_flag=draw(_u),
    )


@settings(max_examples=200)
@given(node_specs())
def test_row54_generated_node_lines_round_trip(spec: NodeSpec) -> None:
    text = render_node(spec)
    n = _p(text)
    assert n.text == text
    assert (n.kind, n.node_id, n.stream_id, n.stream_idx_in_graph, n.node_idx_in_stream) == (
        spec.kind,
        spec.node_id,
        spec.stream_id,
        spec.stream_idx,
        spec.node_idx,
    )
    if spec.kind == "kernel":
        expect = replace(
            n,
            func_name=spec.func_name,
            kernel_type=spec.kernel_type,
            task_ratio=spec.task_ratio,
            cap=spec.cap,
            num_blocks=spec.num_blocks,
            cube_num=spec.cube_num,
            vec_num=spec.vec_num,
            is_sche_mode_on=spec.sche_mode,
            need_mix_kernel_split=spec.mix_split,
            is_simt_op=spec.simt,
            dyn_ubuf_size=spec.dyn_ubuf_size,
            alloc_ubuf_size=spec.alloc_ubuf_size,
            resolved_num=spec.resolved_num,
            bin_hdl=spec.bin_hdl,
            func_hdl=spec.func_hdl,
            launch_kernel_cfg=spec.launch_kernel_cfg,
            dev_args=spec.dev_args,
        )
        assert n == expect
    elif spec.kind == "event":
        assert (n.event_type, n.event_id, n.event_flag, n.event_task_flag) == (
            spec.event_type,
            spec.event_id,
            spec.event_flag,
            spec.event_task_flag,
        )
    elif spec.kind == "memory_write":
        assert (n.memory_value, n.event_id) == (spec.memory_value, spec.event_id)
    elif spec.kind == "memory_wait":
        assert (n.memory_wait_flag, n.memory_value, n.event_id) == (
            spec.memory_wait_flag,
            spec.memory_value,
            spec.event_id,
        )
