"""Part 3 items of issue 7 not owned by the generator's own test list: 61 (entry names and declarations)
and 67 (reason names round-trip; the planner's side is in test_plan.py)."""

from __future__ import annotations

from sk_st_cases import case_request

from skdbg.codegen.fusion.generate import generate_superkernel
from skdbg.parsers.sk_reasons import (
    BREAK_REASONS,
    FUSION_FAIL_REASONS,
    classify_break_reason,
    classify_fusion_fail,
)


def test_item_61_entry_names_and_single_declaration() -> None:
    three = generate_superkernel(case_request("test_sk_1_stream_3_ops_default_aic_only")).source
    assert "void auto_gen_te_superkernel_1_stream_3_ops_kernel(" in three
    # the 3-op case runs is_inf twice but declares it once
    decl = 'extern "C"  __aicore__ void is_inf__kernel0_middle(uint64_t args_offset);'
    assert three.count(decl) == 1
    assert three.count("is_inf__kernel0_middle(") >= 3  # one declaration + at least two calls
    two = generate_superkernel(case_request("test_sk_2_stream_2_ops_default_aic_1_1")).source
    assert "auto_gen_te_superkernel_2_stream_2_ops_kernel(" in two
    assert "auto_gen_te_superkernel_2_stream_2_ops_kernel_aic(" in two
    assert "auto_gen_te_superkernel_2_stream_2_ops_kernel_aiv(" in two


def test_item_67_reason_names_round_trip() -> None:
    """Every name of codegen.md §2.11/§2.12 classifies to itself (what the parsers match in the logs)."""
    names_2_11 = [
        "CAN_FUSE",
        "OP_UNSUPPORT",
        "DYNAMIC_TASK_UNSUPPORT",
        "NOT_IN_SCOPE",
        "IN_UNFUSIBLE_SCOPE",
        "EXCEED_CORE_MAX",
        "RESET_TYPE_NODE",
        "ISOLATED_EVENT",
        "EXIST_DEADLOCK",
        "SCOPE_FUSE_PART",
        "EXTERNAL_DEPEND",
        "UNSUPPORT_EVENT_TYPE",
        "MEMORY_WAIT_NODE_ONLY",
        "MEMORY_WRITE_NODE_ONLY",
        "DEFAULT_NODE",
        "SIMT_OP_UNSUPPORT",
        "KERNEL_ATTR_GET_FAILED",
        "EXCEED_SCOPE_MAX",
    ]
    assert set(names_2_11) == FUSION_FAIL_REASONS
    for name in names_2_11:
        assert classify_fusion_fail(name)[0] == name
    for name in ("NONE", "UNFUSIBLE_NODE", "DEADLOCK_DETECTED", "SYNCALL_OP_DROP", "DEBUG_PER_OP_MAX_CORE"):
        assert name in BREAK_REASONS and classify_break_reason(name) == name
