"""sk_fused_nodes.log (artifacts.md §3.4; rows 48-53, 55)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.filelog import FORMAT_ERROR
from skdbg.parsers.fused_nodes import FusedNodesResult, parse_fused_nodes, split_sk_func_name
from skdbg.scenebuilder.skmeta import (
    FIXTURE,
    LogStyle,
    NodeSpec,
    SkSpec,
    fused_nodes_lines,
    write_lines,
)

FIXTURE_REL = Path("autotune-pipeline/sk_meta/1/model_48_1/sk_fused_nodes.log")


def upstream_like_sk() -> SkSpec:
    """The SK of the autotune-pipeline fixture, as a scene description."""
    return SkSpec(
        1,
        "decoder.layer.0.mlp",
        [
            NodeSpec(
                10,
                stream_id=1,
                func_name="static_kernel_GroupedMatmul_hash",
                kernel_type="AIC_ONLY",
                task_ratio=(1, 0),
                cube_num=1,
                vec_num=0,
            ),
            NodeSpec(11, stream_id=2, func_name="static_kernel_VectorPost_hash"),
        ],
    )


def _semantic(res: FusedNodesResult) -> list[tuple[object, ...]]:
    """Block content without provenance/print form (what both formats must agree on)."""
    out: list[tuple[object, ...]] = []
    for b in res.blocks:
        nodes = tuple(
            (
                fn.node.kind,
                fn.node.node_id,
                fn.node.stream_id,
                fn.node.func_name,
                fn.node.kernel_type,
                fn.node.task_ratio,
                fn.node.num_blocks,
                fn.node.cube_num,
                fn.node.vec_num,
                fn.node.resolved_num,
            )
            for fn in b.nodes
        )
        out.append((b.sk_func_name, b.scope_id, b.node_count, b.name, b.count_mismatch, nodes))
    return out


def test_row51_upstream_fixture_equals_real_format(upstream: Path, tmp_path: Path) -> None:
    """Row 51: the hand-written fixture (no prefix) and the real rendering give the same blocks."""
    fixture = parse_fused_nodes(upstream / FIXTURE_REL)
    real = parse_fused_nodes(
        write_lines(tmp_path / "sk_fused_nodes.log", fused_nodes_lines([upstream_like_sk()]))
    )
    assert fixture.unrecognized == [] and real.unrecognized == []
    assert _semantic(fixture) == _semantic(real)
    b = fixture.blocks[0]
    assert (b.scope_id, b.node_count, b.name.scope_name) == (1, 2, "decoder.layer.0.mlp")
    assert (b.name.first_func, b.name.last_func) == (
        "static_kernel_GroupedMatmul_hash",
        "static_kernel_VectorPost_hash",
    )
    assert [fn.position for fn in b.nodes] == [None, None]
    assert [fn.position for fn in real.blocks[0].nodes] == [0, 1]
    assert real.blocks[0].pid == 48213 and fixture.blocks[0].pid is None
    # our fixture-format writer reproduces the upstream file byte for byte
    assert (upstream / FIXTURE_REL).read_text().splitlines() == fused_nodes_lines(
        [upstream_like_sk()], FIXTURE
    )


def test_row52_node_count_includes_event_nodes_sets_count_mismatch(tmp_path: Path) -> None:
    sk = SkSpec(
        3,
        "s",
        [
            NodeSpec(1, func_name="k1"),
            NodeSpec(2, kind="event", event_type="EventNotify", event_id=0x10),
            NodeSpec(3, kind="event", event_type="EventWait", event_id=0x10),
            NodeSpec(4, func_name="k2"),
        ],
    )
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([sk])))
    b = res.blocks[0]
    assert (b.node_count, len(b.nodes), b.kernel_count) == (4, 4, 2)
    assert b.count_mismatch is True and b.incomplete is False
    assert res.gaps == [] and res.unrecognized == []
    assert [n.node_id for n in b.kernels] == [1, 4]
    df = res.blocks_frame()
    assert df.loc[0, "count_mismatch"] and df.loc[0, "kernel_count"] == 2


def test_row52_fewer_lines_than_header_is_incomplete_gap(tmp_path: Path) -> None:
    sk = SkSpec(3, "s", [NodeSpec(1, func_name="k1")], node_count=3)
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([sk])))
    assert res.blocks[0].incomplete
    assert [g.kind for g in res.gaps] == ["incomplete_block"]


@pytest.mark.parametrize(
    ("name", "hints", "expect"),
    [
        ("sk_3__start_A_end_B", (None, None), (3, "", "A", "B", False, False)),
        ("sk_4_no_kernel_scope_layer.1", (None, None), (4, "layer.1", None, None, True, False)),
        (
            "sk_5_decoder.layer.0.mlp_start_x.y_end_z.w",
            (None, None),
            (5, "decoder.layer.0.mlp", "x.y", "z.w", False, False),
        ),
        # child names containing the markers: the node list decides
        (
            "sk_6_sc_start_op_start_x_end_op_end_y",
            ("op_start_x", "op_end_y"),
            (6, "sc", "op_start_x", "op_end_y", False, False),
        ),
        (
            "sk_6_sc_start_op_start_x_end_op_end_y",
            (None, None),
            (6, "sc_start_op", "x_end_op", "y", False, True),
        ),
        ("sk_7_a_start_b_end_c", ("b", None), (7, "a", "b", "c", False, False)),
    ],
)
def test_row53_sk_func_name_rightmost_safe_split(
    name: str, hints: tuple[str | None, str | None], expect: tuple[object, ...]
) -> None:
    s = split_sk_func_name(name, *hints)
    assert (s.scope_id, s.scope_name, s.first_func, s.last_func, s.no_kernel, s.ambiguous) == expect


def test_row53_block_uses_node_list_to_disambiguate(tmp_path: Path) -> None:
    sk = SkSpec(6, "sc", [NodeSpec(1, func_name="op_start_x"), NodeSpec(2, func_name="op_end_y")])
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([sk])))
    n = res.blocks[0].name
    assert (n.scope_name, n.first_func, n.last_func, n.resolved_by_nodes, n.ambiguous) == (
        "sc",
        "op_start_x",
        "op_end_y",
        True,
        False,
    )


def test_row53_no_kernel_scope_block(tmp_path: Path) -> None:
    sk = SkSpec(9, "decoder.layer.3", [NodeSpec(1, kind="event")])
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([sk])))
    n = res.blocks[0].name
    assert (n.no_kernel, n.scope_name, n.first_func) == (True, "decoder.layer.3", None)


def test_row55_appended_rerun_is_versioned_and_deduplicated(tmp_path: Path) -> None:
    p = tmp_path / "sk_fused_nodes.log"
    a = SkSpec(1, "s1", [NodeSpec(1, func_name="k1")])
    b = SkSpec(2, "s2", [NodeSpec(2, func_name="k2")])
    write_lines(p, fused_nodes_lines([a, b]))
    b2 = SkSpec(2, "s2", [NodeSpec(2, func_name="k2", num_blocks=8)])
    write_lines(p, fused_nodes_lines([a, b2], LogStyle(ts=datetime(2026, 6, 11, 9, 0, 0))), append=True)
    res = parse_fused_nodes(p)
    assert [(x.scope_id, x.occurrence) for x in res.blocks] == [(1, 0), (2, 0), (1, 1), (2, 1)]
    latest = res.latest()
    assert [(x.scope_id, x.occurrence) for x in latest] == [(1, 1), (2, 1)]
    assert latest[1].nodes[0].node.num_blocks == 8
    assert res.by_scope(2) is latest[1]


def _cont_splice(line: str) -> str:
    """What the file logger writes for a record longer than 4096 bytes (§3.2, one marker)."""
    raw = line.encode()
    return (raw[:4096] + b"[CONT:1] " + raw[4096:]).decode()


def test_row48_cont_marker_mid_line_is_rejoined(tmp_path: Path) -> None:
    long_name = "static_kernel_" + "X" * 5000
    sk = SkSpec(1, "s", [NodeSpec(1, func_name=long_name)])
    lines = fused_nodes_lines([sk])
    assert len(lines[0].encode()) > 4096 and len(lines[1].encode()) > 4096
    spliced = [_cont_splice(x) for x in lines]
    assert "[CONT:1] " in spliced[1]
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", spliced))
    assert res.unrecognized == []
    assert res.blocks[0].nodes[0].node.func_name == long_name
    assert res.blocks[0].name.first_func == long_name


def test_row49_format_error_kept_as_opaque_record(tmp_path: Path) -> None:
    lines = fused_nodes_lines([upstream_like_sk()])
    lines.insert(1, LogStyle().render("PrintSKNodesDetail", [FORMAT_ERROR])[0])
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", lines))
    assert len(res.format_errors) == 1
    fe = res.format_errors[0]
    assert (fe.src.line, fe.text, fe.pid) == (2, FORMAT_ERROR, 48213)
    assert res.unrecognized == []
    assert len(res.blocks[0].nodes) == 2


def test_row50_prefix_pid0_warn_and_15_digit_tid(tmp_path: Path) -> None:
    style = LogStyle(pid=0, tid=281473090270384, level="WARN")
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([upstream_like_sk()], style)))
    b = res.blocks[0]
    assert b.pid == 0
    assert b.ts == datetime(2026, 6, 10, 14, 1, 2, 345000)
    ml = next(
        iter_meta_text(
            fused_nodes_lines([upstream_like_sk()], LogStyle(pid=0, tid=281473090270384, level="WARN"))[0]
        )
    )
    assert ml.prefix is not None
    assert (ml.prefix.level, ml.prefix.tid, ml.prefix.pid) == ("WARN", 281473090270384, 0)


def test_orphan_and_malformed_lines_kept_unrecognized(tmp_path: Path) -> None:
    lines = [
        "[nodeId:1, streamId:0] - KernelInfos{funcName:a}",
        "SK Function: sk_1_x_start_a_end_a, scope id: 1, Node Count: 1",
        "[0] [nodeId:1, streamId:0, Bad(x:1)]",
        "random words",
        "# a comment",
    ]
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", lines))
    assert [u.context.split(":")[0:2] for u in res.unrecognized] == [
        ["sk_fused_nodes", "node_outside_block"],
        ["sk_fused_nodes", "malformed_node"],
        ["sk_fused_nodes"],
    ]
    assert [c.text for c in res.comments] == ["# a comment"]
    assert res.blocks[0].incomplete


def test_frames_have_plain_columns(tmp_path: Path) -> None:
    res = parse_fused_nodes(write_lines(tmp_path / "f.log", fused_nodes_lines([upstream_like_sk()])))
    df = res.to_frame()
    assert list(df["node_id"]) == [10, 11]
    assert {"file", "line", "scope_id", "position", "func_name", "kernel_type"} <= set(df.columns)
    empty = parse_fused_nodes(write_lines(tmp_path / "e.log", []))
    assert list(empty.to_frame().columns)[:2] == ["file", "line"] and empty.to_frame().empty


def test_missing_and_binary_file_raise_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError):
        parse_fused_nodes(tmp_path / "nope.log")
    (tmp_path / "b.log").write_bytes(b"\x00\x01\x02" * 10)
    with pytest.raises(ParseError):
        parse_fused_nodes(tmp_path / "b.log")


@settings(max_examples=100)
@given(st.lists(st.text(max_size=120), max_size=8))
def test_arbitrary_lines_never_raise(lines: list[str]) -> None:
    text = "\n".join(lines)
    res = parse_fused_nodes(iter_meta_text(text, "f.log"), file="f.log")
    assert res.file == "f.log"


def test_block_content_ignores_provenance() -> None:
    res = parse_fused_nodes(iter_meta_text("\n".join(fused_nodes_lines([upstream_like_sk()]))))
    b = res.blocks[0]
    moved = replace(b, src=Source("other", 99), occurrence=3)
    assert moved.content() == b.content()
