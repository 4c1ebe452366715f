"""sk_fusion_fail_reasons.log (artifacts.md §3.8, row 58)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.fail_reasons import parse_fail_reasons, split_break_line
from skdbg.scenebuilder.skmeta import (
    FIXTURE,
    FusedScopeSpec,
    NodeSpec,
    OriginalScopeSpec,
    UnfusibleSpec,
    fail_reasons_lines,
    write_lines,
)

DETAIL = "Failed to resolve SuperKernel bind map for the operator, function not found in bind map"


def _scene(max_len: int = 4096) -> list[str]:
    unf = [
        UnfusibleSpec(NodeSpec(5, func_name="k5"), "OP_UNSUPPORT", "FUNC_NOT_FOUND", DETAIL),
        UnfusibleSpec(NodeSpec(6, func_name="k6"), "SCOPE_FUSE_PART", "RESOURCE_INSUFFICIENT"),
        UnfusibleSpec(
            NodeSpec(7, func_name="k7"),
            "NOT_IN_SCOPE",
            None,
            "The user actively marked that this operator is not fused",
        ),
        UnfusibleSpec(NodeSpec(8, func_name="k8"), "BRAND_NEW_REASON", "ODD_SUB"),
    ]
    orig = [
        OriginalScopeSpec(0, "1000", "decoder.layer.0", list(range(100, 160))),
        OriginalScopeSpec(1, "0100", "mlp", []),
    ]
    fused = [
        FusedScopeSpec(3, "1000", list(range(100, 140))),
        FusedScopeSpec(
            4,
            "1000",
            list(range(141, 160)),
            status="RESOURCE_INSUFFICIENT",
            status_detail="Insufficient stream task slots or event memory resources",
            break_info=(
                "breakReason=UNFUSIBLE_NODE, triggerNode=140, triggerStream=0, "
                'syncAllNodes=[1,2], detail="x, y"'
            ),
            break_reason_detail="There exists unfusible node in scope",
            scope_names="decoder.layer.0",
        ),
    ]
    return fail_reasons_lines(unf, orig, fused, per_op_max_core=True, max_line_len=max_len)


def test_row58_unfusible_reasons_sub_and_detail(tmp_path: Path) -> None:
    res = parse_fail_reasons(write_lines(tmp_path / "sk_fusion_fail_reasons.log", _scene()))
    assert res.unrecognized == []
    got = [
        (u.node.node_id, u.reason, u.sub_reason, u.reason_detail, u.reason_known, u.sub_known)
        for u in res.unfusible
    ]
    assert got == [
        (5, "OP_UNSUPPORT", "FUNC_NOT_FOUND", DETAIL, True, True),
        (6, "SCOPE_FUSE_PART", "RESOURCE_INSUFFICIENT", None, True, True),
        (7, "NOT_IN_SCOPE", None, "The user actively marked that this operator is not fused", True, True),
        (8, "BRAND_NEW_REASON", "ODD_SUB", None, False, False),
    ]
    # enum validation keeps unknown reasons but flags them
    assert [g.kind for g in res.gaps] == ["unknown_fail_reason"]
    # the NOT_IN_SCOPE / IN_UNFUSIBLE_SCOPE detail-text swap quirk is noted on the record
    assert res.unfusible[2].detail_text_swapped and not res.unfusible[0].detail_text_swapped
    assert res.per_op_max_core is True
    df = res.to_frame()
    assert list(df["reason"]) == ["OP_UNSUPPORT", "SCOPE_FUSE_PART", "NOT_IN_SCOPE", "BRAND_NEW_REASON"]


def test_row58_node_ids_over_continued_lines(tmp_path: Path) -> None:
    lines = _scene(max_len=60)
    assert any(
        x.endswith("continued: , 112, 113, 114, 115, 116, 117, 118, 119, 120]") or "continued: , " in x
        for x in lines
    )
    assert any(x.rstrip().endswith("];") and "continued:" in x for x in lines)
    res = parse_fail_reasons(write_lines(tmp_path / "f.log", lines))
    assert res.unrecognized == [] and [g.kind for g in res.gaps] == ["unknown_fail_reason"]
    o = res.original_scopes[0]
    assert o.node_ids == tuple(range(100, 160)) and o.pieces > 1 and not o.count_mismatch
    assert (o.scope_id, o.scope_flags, o.scope_names, o.total_nodes) == (0, "1000", "decoder.layer.0", 60)
    assert res.original_scopes[1].node_ids == () and res.original_scopes[1].pieces == 0
    f = res.fused_scopes[0]
    assert f.fused_node_ids == tuple(range(100, 140)) and f.pieces > 1 and f.status == "SUCCESS"


def test_row58_scope_status_both_forms_and_break_line(tmp_path: Path) -> None:
    res = parse_fail_reasons(write_lines(tmp_path / "f.log", _scene()))
    ok, bad = res.fused_scopes
    assert (ok.status, ok.status_detail, ok.break_info, ok.status_key) == (
        "SUCCESS",
        None,
        None,
        "scopeStatus",
    )
    assert (bad.status, bad.status_detail, bad.status_known) == (
        "RESOURCE_INSUFFICIENT",
        "Insufficient stream task slots or event memory resources",
        True,
    )
    assert bad.break_info is not None
    assert (
        bad.break_info.break_reason,
        bad.break_info.trigger_node,
        bad.break_info.sync_all_nodes,
        bad.break_info.detail,
    ) == (
        "UNFUSIBLE_NODE",
        140,
        (1, 2),
        "x, y",
    )
    assert (bad.break_reason_detail, bad.scope_names) == (
        "There exists unfusible node in scope",
        "decoder.layer.0",
    )
    fdf = res.fused_frame()
    assert list(fdf["status"]) == ["SUCCESS", "RESOURCE_INSUFFICIENT"]
    assert list(res.original_frame()["total_nodes"]) == [60, 0]


def test_row58_legacy_forms() -> None:
    text = (
        "\n".join(
            [
                "unfusible kernel:",
                "Node [nodeId:3, streamId:0, streamIdxInGraph:0, nodeIdxInStream:1] - "
                "KernelInfos{funcName:k3, "
                "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:1, cubeNum:0, "
                "vecNum:1, isScheModeOn:0, "
                "needMixKernelSplit:0, resolvedNum:0}: reason: The operator does not "
                "support the operation of fusing "
                "SuperKernel [BINDMAP_INIT_EMPTY]",
                "scopes after fusion:",
                "  scopeId=2, scopeBitFlag=10",
                "    fusedNodeIds=[1, 2];",
                "    fusionStatus=NO_TARGET_NODE, failReason=No target node remains after filtering",
                "    breakReason=breakReason=DEADLOCK_DETECTED, triggerNode=4, "
                "triggerStream=1, scopeName=[a_b]",
            ]
        )
        + "\n"
    )
    res = parse_fail_reasons(iter_meta_text(text, "f.log"), file="f.log")
    assert res.unrecognized == []
    u = res.unfusible[0]
    assert (u.reason, u.sub_reason, u.reason_known, u.sub_known) == (
        "OP_UNSUPPORT",
        "BINDMAP_INIT_EMPTY",
        True,
        True,
    )
    f = res.fused_scopes[0]
    assert (f.status, f.status_key, f.status_detail, f.scope_names) == (
        "NO_TARGET_NODE",
        "fusionStatus",
        "No target node remains after filtering",
        "a_b",
    )
    assert f.break_info is not None and (f.break_info.break_reason, f.break_info.trigger_node) == (
        "DEADLOCK_DETECTED",
        4,
    )
    assert res.per_op_max_core is None


def test_row58_fixture_stub(upstream: Path) -> None:
    res = parse_fail_reasons(upstream / "autotune-pipeline/sk_meta/1/model_48_1/sk_fusion_fail_reasons.log")
    assert (
        res.unfusible == []
        and res.original_scopes == []
        and res.fused_scopes == []
        and res.unrecognized == []
    )
    assert [c.text for c in res.comments] == ["# no failures"]


def test_row58_fixture_style_rendering_same_records(tmp_path: Path) -> None:
    real = parse_fail_reasons(write_lines(tmp_path / "a.log", _scene()))
    unf = [UnfusibleSpec(NodeSpec(5, func_name="k5"), "OP_UNSUPPORT", "FUNC_NOT_FOUND", DETAIL)]
    bare_lines = fail_reasons_lines(unf, [OriginalScopeSpec(0, "1", "s", [1, 2])], [], style=FIXTURE)
    bare = parse_fail_reasons(iter_meta_text("\n".join(bare_lines) + "\n", "b.log"), file="b.log")
    assert bare.unrecognized == [] and bare.gaps == []
    assert (bare.unfusible[0].reason, bare.unfusible[0].reason_detail) == (real.unfusible[0].reason, DETAIL)
    assert bare.original_scopes[0].node_ids == (1, 2) and bare.original_scopes[0].src.line == 4
    assert real.original_scopes[0].src.line == 7 and real.original_scopes[0].pieces == 1


def test_row58_split_break_line() -> None:
    assert split_break_line('[breakReason=X, detail="a], b"], breakReasonDetail=t, u, scopeName=[n_m]') == (
        'breakReason=X, detail="a], b"',
        "t, u",
        "n_m",
    )
    assert split_break_line("[breakReason=X], scopeName=[none]") == ("breakReason=X", None, "none")


def test_row58_continued_without_list_is_unrecognized() -> None:
    res = parse_fail_reasons(iter_meta_text("    continued: 1, 2]\nfoo\n", "f.log"), file="f.log")
    assert [u.context for u in res.unrecognized] == [
        "sk_fusion_fail_reasons:continued",
        "sk_fusion_fail_reasons",
    ]


@settings(max_examples=100)
@given(
    st.lists(st.text(max_size=100), max_size=6),
    st.sampled_from(["Node ", "    continued: ", "  scopeId=", "    breakReason="]),
)
def test_row58_arbitrary_text_never_raises(lines: list[str], lead: str) -> None:
    text = "unfusible kernel:\n  scopeId=1, scopeBitFlag=1\n" + "\n".join(lead + x for x in lines)
    parse_fail_reasons(iter_meta_text(text, "f.log"), file="f.log")
