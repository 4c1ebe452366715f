"""sk_node_detail.log (artifacts.md §3.6, row 56)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.node_detail import parse_node_detail, scope_indices
from skdbg.scenebuilder.skmeta import FIXTURE, NodeDetailSpec, NodeSpec, node_detail_lines, write_lines


def _rows() -> list[NodeDetailSpec]:
    return [
        NodeDetailSpec(
            NodeSpec(0, func_name="k0"), "KERNEL", scope_flags="0", is_fusible=False, stack_size=0
        ),
        NodeDetailSpec(
            NodeSpec(1, func_name="k1"), "KERNEL", scope_flags="0100", is_fusible=True, stack_size=2
        ),
        NodeDetailSpec(
            NodeSpec(2, kind="event", event_type="EventWait", event_id=0xAB), "WAIT", scope_flags="1101"
        ),
        NodeDetailSpec(NodeSpec(3, kind="memory_write", memory_value=1), "MEMORY_WRITE", scope_flags="0010"),
        NodeDetailSpec(NodeSpec(4, kind="default"), "DEFAULT", scope_flags="0000", is_fusible=False),
    ]


def test_row56_scope_flags_zero_and_multi_bit(tmp_path: Path) -> None:
    res = parse_node_detail(write_lines(tmp_path / "sk_node_detail.log", node_detail_lines(_rows())))
    assert res.unrecognized == [] and res.gaps == []
    got = [
        (d.node.node_id, d.node_type, d.scope_flags, d.scope_indices, d.is_fusible, d.stack_size)
        for d in res.nodes
    ]
    assert got == [
        (0, "KERNEL", "0", (), False, 0),
        (1, "KERNEL", "0100", (1,), True, 2),
        (2, "WAIT", "1101", (0, 1, 3), True, 0),
        (3, "MEMORY_WRITE", "0010", (2,), True, 0),
        (4, "DEFAULT", "0000", (), False, 0),
    ]
    assert res.nodes[0].in_named_scope is False and res.nodes[2].in_named_scope is True
    assert res.nodes[2].node.event_type == "EventWait"
    assert res.nodes[0].pid == 48213
    df = res.to_frame()
    assert list(df["scope_flags"]) == ["0", "0100", "1101", "0010", "0000"]
    assert df.loc[2, "scope_indices"] == [0, 1, 3]
    assert res.by_node_id()[1].scope_flags == "0100"


def test_row56_fixture_form_and_legacy_type_code() -> None:
    lines = node_detail_lines(_rows()[:2], FIXTURE)
    lines.append(
        "Processed node [nodeId:0, streamIdxInGraph:2, nodeIdxInStream:0] - "
        "Event:Wait(eventId:0xfffd60cd0de0): type=2"
    )
    res = parse_node_detail(iter_meta_text("\n".join(lines) + "\n", "d.log"), file="d.log")
    assert res.unrecognized == []
    assert res.nodes[0].node.form == "fixture"
    legacy = res.nodes[2]
    assert (legacy.node_type, legacy.node_type_raw, legacy.scope_flags, legacy.is_fusible) == (
        "WAIT",
        "2",
        None,
        None,
    )
    assert legacy.node.event_type == "EventWait"


def test_row56_scope_indices_helper() -> None:
    assert scope_indices("0") == ()
    assert scope_indices("1001") == (0, 3)


def test_row56_unknown_lines_kept() -> None:
    text = "Processed node [nodeId:1, streamId:0] - Kernel\nStarting UpdateNodeScopeBitFlags\n"
    res = parse_node_detail(iter_meta_text(text, "d.log"), file="d.log")
    assert [u.context.split(":")[:2] for u in res.unrecognized] == [
        ["sk_node_detail", "malformed_node"],
        ["sk_node_detail"],
    ]


@settings(max_examples=100)
@given(st.lists(st.text(max_size=100), max_size=6))
def test_row56_arbitrary_text_never_raises(lines: list[str]) -> None:
    parse_node_detail(iter_meta_text("\n".join("Processed node " + x for x in lines)), file="d.log")
