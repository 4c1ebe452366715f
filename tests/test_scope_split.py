"""sk_scope_split.log (artifacts.md §3.7, row 57)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.common import Source
from skdbg.parsers.scope_split import parse_break_info, parse_scope_split
from skdbg.scenebuilder.skmeta import (
    FIXTURE,
    NodeSpec,
    PassSpec,
    ScopeSnapshotSpec,
    scope_split_lines,
    write_lines,
)

SRC = Source("s.log", 1)


def _scope(sid: int, brk: str, n: int = 2) -> ScopeSnapshotSpec:
    nodes = [NodeSpec(100 * sid + j, func_name=f"k{sid}_{j}") for j in range(n)]
    return ScopeSnapshotSpec(
        sid,
        nodes,
        scope_bit_flags="0100",
        scope_names="decoder.layer.0_mlp",
        break_info=brk,
        streams=[(0, nodes[0].node_id, nodes[-1].node_id, n)],
    )


def test_row57_iterations_passes_and_final(tmp_path: Path) -> None:
    it0 = [
        PassSpec(
            "InitialScopeSplitPass",
            [_scope(1, ""), _scope(2, "breakReason=UNFUSIBLE_NODE, triggerNode=7, triggerStream=1")],
        ),
        PassSpec("DeadlockRefinePass", [_scope(1, "")]),
    ]
    it1 = [
        PassSpec("ScheModeKernelSplitPass", [_scope(3, ", triggerNode=9, triggerStream=0, parentScope=1")])
    ]
    final = PassSpec("ScopeSplitPipelineFinal", [_scope(3, "", n=3)])
    res = parse_scope_split(
        write_lines(tmp_path / "sk_scope_split.log", scope_split_lines([it0, it1], final))
    )
    assert res.unrecognized == [] and res.gaps == []
    assert [(s.iteration, s.pass_name, s.total_scopes, s.complete) for s in res.snapshots] == [
        (0, "InitialScopeSplitPass", 2, True),
        (0, "DeadlockRefinePass", 1, True),
        (1, "ScheModeKernelSplitPass", 1, True),
        (1, "ScopeSplitPipelineFinal", 1, True),
    ]
    assert res.iterations() == [0, 1]
    fin = res.final_snapshot()
    assert fin is not None and fin.final and fin.scopes[0].scope_id == 3 and len(fin.scopes[0].nodes) == 3
    sc = res.snapshots[0].scopes[1]
    assert (sc.ordinal, sc.scope_id, sc.node_count, sc.stream_count, sc.scope_bit_flags, sc.scope_names) == (
        1,
        2,
        2,
        1,
        "0100",
        "decoder.layer.0_mlp",
    )
    assert sc.declared_nodes == 2 and [n.node.node_id for n in sc.nodes] == [200, 201]
    assert sc.streams[0].head_node == 200 and sc.streams[0].tail_node == 201 and sc.streams[0].node_size == 2
    assert sc.break_info is not None
    assert (sc.break_info.break_reason, sc.break_info.trigger_node, sc.break_info.trigger_stream) == (
        "UNFUSIBLE_NODE",
        7,
        1,
    )
    assert res.snapshots[0].scopes[0].break_info is not None and res.snapshots[0].scopes[0].break_info.empty
    lead = res.snapshots[2].scopes[0].break_info
    assert lead is not None and lead.leading_comma and lead.break_reason is None and lead.parent_scope == 1
    df = res.to_frame()
    assert len(df) == 5 and list(df["pass_name"])[-1] == "ScopeSplitPipelineFinal"
    assert len(res.nodes_frame()) == 2 + 2 + 2 + 2 + 3


def test_row57_breakinfo_variants() -> None:
    b = parse_break_info(
        "breakReason=SYNCALL_OP_DROP, triggerNode=12, triggerStream=3, "
        'syncAllNodes=[4,5], detail="a, b, c=1"',
        SRC,
    )
    assert (b.break_reason, b.trigger_node, b.sync_all_nodes, b.detail) == (
        "SYNCALL_OP_DROP",
        12,
        (4, 5),
        "a, b, c=1",
    )
    assert b.unknown_fields == () and b.break_reason_known
    f = parse_break_info(
        "breakReason=UNFUSIBLE_NODE, triggerNode=1, triggerStream=0, "
        "fusionFailReason=OP_UNSUPPORT [FUNC_NOT_FOUND]",
        SRC,
    )
    assert (f.fusion_fail_reason, f.fusion_fail_sub, f.fusion_fail_known) == (
        "OP_UNSUPPORT",
        "FUNC_NOT_FOUND",
        True,
    )
    # older builds print sentences (with commas) instead of enum names (sk_scope_info.h @d9d8ff19)
    old = parse_break_info(
        "breakReason=There exists an operator for full kernel synchronization, "
        "and the number of kernels of this "
        "operator is less than the maximum number of kernels of the fused "
        "superkernel, triggerNode=5, triggerStream=2, "
        "fusionFailReason=The operator does not support the operation of "
        "fusing SuperKernel [BINDMAP_INIT_EMPTY], "
        'detail="split"',
        SRC,
    )
    assert (old.break_reason, old.trigger_node, old.fusion_fail_reason, old.fusion_fail_sub, old.detail) == (
        "SCHEMODE_CORE_DROP",
        5,
        "OP_UNSUPPORT",
        "BINDMAP_INIT_EMPTY",
        "split",
    )
    unk = parse_break_info("breakReason=NEW_REASON, triggerNode=3", SRC)
    assert (unk.break_reason, unk.trigger_node, unk.break_reason_known) == ("NEW_REASON", 3, False)
    # only known keys split the list (values may hold commas): an unknown key stays in the value
    odd = parse_break_info("breakReason=NEW_REASON, weird=1", SRC)
    assert (odd.break_reason_raw, odd.break_reason, odd.break_reason_known) == (
        "NEW_REASON, weird=1",
        None,
        False,
    )
    lone = parse_break_info("weird=1", SRC)
    assert lone.unknown_fields == (("weird", "1"),)


def test_row57_fusion_fail_reason_field_in_scope_line(tmp_path: Path) -> None:
    brk = (
        "breakReason=UNFUSIBLE_NODE, triggerNode=11, triggerStream=6, "
        'fusionFailReason=NOT_IN_SCOPE, detail="break"'
    )
    res = parse_scope_split(
        write_lines(
            tmp_path / "s.log", scope_split_lines([[PassSpec("InitialScopeSplitPass", [_scope(7, brk)])]])
        )
    )
    b = res.snapshots[0].scopes[0].break_info
    assert b is not None and (b.fusion_fail_reason, b.detail, b.trigger_node) == ("NOT_IN_SCOPE", "break", 11)


def test_row57_old_headers_without_scope_id(tmp_path: Path) -> None:
    old = PassSpec("InitialScopeSplitPass", [_scope(1, ""), _scope(2, "")], old_header=True)
    nxt = PassSpec("DeadlockRefinePass", [_scope(1, "")])
    res = parse_scope_split(write_lines(tmp_path / "s.log", scope_split_lines([[old, nxt]])))
    assert res.unrecognized == [] and res.gaps == []
    s0 = res.snapshots[0]
    assert (s0.old_format, s0.pass_name, s0.total_scopes, s0.complete) == (
        True,
        "InitialScopeSplitPass",
        2,
        True,
    )
    assert [sc.scope_id for sc in s0.scopes] == [None, None] and [sc.ordinal for sc in s0.scopes] == [0, 1]
    assert res.snapshots[1].scopes[0].scope_id == 1


def test_row57_fixture_stub(upstream: Path) -> None:
    res = parse_scope_split(upstream / "autotune-pipeline/sk_meta/1/model_48_1/sk_scope_split.log")
    assert res.snapshots == [] and res.unrecognized == []
    assert [c.text for c in res.comments] == ["# no scope breaks"]
    assert res.final_snapshot() is None


def test_row57_fixture_format_and_missing_end_is_gap() -> None:
    lines = scope_split_lines([[PassSpec("InitialScopeSplitPass", [_scope(1, "")])]], style=FIXTURE)
    res = parse_scope_split(iter_meta_text("\n".join(lines[:-1]) + "\n", "s.log"), file="s.log")
    assert res.snapshots[0].complete is False
    assert [g.kind for g in res.gaps] == ["incomplete_snapshot"]


def test_row57_lines_outside_scope_are_unrecognized() -> None:
    res = parse_scope_split(
        iter_meta_text("  BreakInfo: x\n    [0] [nodeId:1, streamId:0, Zz]\nhello\n", "s.log"), file="s.log"
    )
    assert [u.context for u in res.unrecognized] == [
        "sk_scope_split:breakinfo_outside_scope",
        "sk_scope_split:node_outside_scope",
        "sk_scope_split",
    ]


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_row57_breakinfo_never_raises(text: str) -> None:
    b = parse_break_info(text, SRC)
    assert b.raw == text


@settings(max_examples=100)
@given(
    st.sampled_from(
        ["NONE", "UNFUSIBLE_NODE", "DEADLOCK_DETECTED", "SYNCALL_OP_DROP", "DEBUG_PER_OP_MAX_CORE"]
    ),
    st.integers(0, 2**40),
    st.integers(0, 64),
    st.lists(st.integers(0, 10**6), max_size=4),
    st.text(
        alphabet=st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters='"'), max_size=40
    ),
)
def test_row57_generated_breakinfo_round_trip(
    reason: str, node: int, stream: int, sync: list[int], detail: str
) -> None:
    parts = [] if reason == "NONE" else [f"breakReason={reason}"]
    text = ", ".join(parts)
    text += f", triggerNode={node}, triggerStream={stream}"
    if sync:
        text += ", syncAllNodes=[" + ",".join(map(str, sync)) + "]"
    if detail:
        text += f', detail="{detail}"'
    b = parse_break_info(text, SRC)
    assert b.break_reason == (None if reason == "NONE" else reason)
    assert (b.trigger_node, b.trigger_stream) == (node, stream)
    assert b.sync_all_nodes == (tuple(sync) if sync else None)
    assert b.detail == (detail if detail else None)
    assert b.unknown_fields == ()
