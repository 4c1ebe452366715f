"""super_kernel.log offline facts (artifacts.md §3.3; rows 48-50 for its line layer)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.filelog import FORMAT_ERROR
from skdbg.parsers.super_kernel_log import SuperKernelLogResult, parse_super_kernel_log
from skdbg.scenebuilder.skmeta import (
    LogStyle,
    NodeSpec,
    render_node,
    reordered_nodes_msgs,
    super_kernel_log_lines,
    write_lines,
)

SYM = "_Z23sk_variant_matmulILi1ELi2EEvPv<int, float>"


def _records() -> list[tuple[str, str]]:
    recs = [
        ("InitSuperKernelBindMap", "binHdl=0x55d0c0a0b000, metaNum=2, payloadSize=52"),
        (
            "InitSuperKernelBindMap",
            "[0] cap=1, globalFunc=0x1000, skFunc[0]=0x2000, skFunc[1]=0x3000, skFunc[2]=0x2000, "
            "skFunc[3]=0x3000",
        ),
        (
            "InitKernelResolvedFuncs",
            "funcName=QuantBatchMatmulV3_a, binDevAddr=0x124080b00000, binDevSize=65536, "
            "aicAddr=0x124080b01000, aivAddr=0x124080b01800",
        ),
        ("InitKernelResolvedFuncs", "aicOffset=0x1000, aivOffset=0x1800"),
        ("InitSingleCoreFunc", f"split[0] AIC symbol={SYM}, size=0x3000, bind=GLOBAL"),
        (
            "InitKernelResolvedFuncs",
            "split[0] funcAddr[0]=0x124080b02000, funcAddr[1]=0x124080b03000, "
            "prefetchCnt[0]=0x6, prefetchCnt[1]=0x0, cap=1",
        ),
        ("InitKernelResolvedFuncs", "Function is not found in sk bind map for kernel Cast_b"),
        ("InitSuperKernelBindMap", "rtBinaryGetMetaNum unsuccessful, ret=507000"),
        ("InitSuperKernelBindMap", "metaNum is zero!"),
        (
            "InitSuperKernelBindMap",
            "InitSuperKernelBindMap: globalFunc=0x1000 is duplicated with different value",
        ),
        (
            "DumpKernelBinaries",
            "Dumped kernel binary: bin_files/QuantBatchMatmulV3_a_0x124080B00000.o, size=65536, "
            f"codeSegAddr={0x124080B00000}",
        ),
        (
            "DumpKernelBinaries",
            "Dumped SK entry binary: bin_files/sk_entry_0x124080C00000.o, size=4096, "
            f"codeSegAddr={0x124080C00000}",
        ),
        (
            "GenEntryInfo",
            "GenEntryInfo: enableDebug=0, enableProfiling=1, enableOpTrace=1, enableEarlyStart=0, "
            "useSimtEntry=0",
        ),
        (
            "ScheduleScope",
            "schedule scope: build finished, entryType=MIX_1_1, entryFuncHandle=0x55d0c0a0c000, "
            "skFuncName=sk_3_s_start_QuantBatchMatmulV3_a_end_Cast_b",
        ),
    ]
    nodes = [
        NodeSpec(18, func_name="QuantBatchMatmulV3_a"),
        NodeSpec(19, kind="event", event_type="EventWait"),
    ]
    recs += [("BuildTasks", m) for m in reordered_nodes_msgs(nodes)]
    recs += [
        ("BuildTasks", f"index=0, nodeType=KERNEL, nodeInfo={render_node(nodes[0])}"),
        (
            "ReorderTasks",
            "task reorder: place deferred wait node, waitNodeId=19, streamIdx=1, originalIdx=1, "
            "finalIdx=3, targetKernelIdx=2",
        ),
        ("SkEventRecorder", "[sk time profiling] core 3 buffer is full, stop dump the time of nodes"),
        ("DumpFusionFailReasons", "Fusion fail reasons summary:"),
        ("DumpFusionFailReasons", "  Total nodes: 40"),
        ("DumpFusionFailReasons", "  Fusible nodes: 37"),
        ("DumpFusionFailReasons", "  Unfusible nodes: 3"),
        ("DumpFusionFailReasons", "  Failure reason breakdown:"),
        ("DumpFusionFailReasons", "    OP_UNSUPPORT: 2 nodes"),
        ("DumpFusionFailReasons", "    NOT_IN_SCOPE: 1 nodes"),
        ("Process", "End aclskOptimize"),
        ("PrintDfxInfo", "=== SkDfxInfo (offset=2624, nodeCnt=4) ==="),
        (
            "IsSuperKernelException",
            "Exception is from superkernel function 'sk_entry_mix11_op_trace', op_trace=true",
        ),
    ]
    return recs


def _parse(tmp_path: Path, style: LogStyle | None = None) -> SuperKernelLogResult:
    lines = super_kernel_log_lines(_records(), style)
    return parse_super_kernel_log(write_lines(tmp_path / "super_kernel.log", lines))


def test_bind_map_and_child_binary_facts(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    assert res.unrecognized == [] and res.gaps == []
    h = res.bind_map_headers[0]
    assert (h.bin_hdl, h.meta_num, h.payload_size) == (0x55D0C0A0B000, 2, 52)
    r = res.bind_records[0]
    assert (r.bin_hdl, r.index, r.cap, r.global_func, r.sk_funcs) == (
        0x55D0C0A0B000,
        0,
        1,
        0x1000,
        (0x2000, 0x3000, 0x2000, 0x3000),
    )
    c = res.child_binaries[0]
    assert (
        c.func_name,
        c.bin_dev_addr,
        c.bin_dev_size,
        c.aic_addr,
        c.aiv_addr,
        c.aic_offset,
        c.aiv_offset,
    ) == (
        "QuantBatchMatmulV3_a",
        0x124080B00000,
        65536,
        0x124080B01000,
        0x124080B01800,
        0x1000,
        0x1800,
    )
    s = res.split_symbols[0]
    assert (s.func_name, s.split, s.core, s.symbol, s.size, s.bind) == (
        "QuantBatchMatmulV3_a",
        0,
        "AIC",
        SYM,
        0x3000,
        "GLOBAL",
    )
    a = res.split_func_addrs[0]
    assert (a.split, a.func_addr, a.prefetch_cnt, a.cap) == (0, (0x124080B02000, 0x124080B03000), (6, 0), 1)
    kinds = [(f.kind, f.kernel, f.ret, f.global_func) for f in res.bind_map_failures]
    assert kinds == [
        ("FUNC_NOT_FOUND", "Cast_b", None, None),
        ("META_NUM_FAILED", None, 507000, None),
        ("META_NUM_ZERO", None, None, None),
        ("GLOBAL_FUNC_DUPLICATED", None, None, 0x1000),
    ]


def test_dumped_binaries_entry_info_and_build(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    d = res.dumped_binaries
    assert [(x.kind, x.path, x.size, x.code_seg_addr) for x in d] == [
        ("kernel", "bin_files/QuantBatchMatmulV3_a_0x124080B00000.o", 65536, 0x124080B00000),
        ("entry", "bin_files/sk_entry_0x124080C00000.o", 4096, 0x124080C00000),
    ]
    e = res.entry_infos[0]
    assert (e.get("enableProfiling"), e.get("enableOpTrace"), e.get("useSimtEntry"), e.get("nope")) == (
        1,
        1,
        0,
        None,
    )
    b = res.scopes_built[0]
    assert (b.entry_type, b.entry_func_handle, b.sk_func_name) == (
        "MIX_1_1",
        "0x55d0c0a0c000",
        "sk_3_s_start_QuantBatchMatmulV3_a_end_Cast_b",
    )


def test_task_order_facts(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    ro = res.reordered[0]
    assert ro.complete and ro.index_to_node_id() == {0: 18, 1: 19}
    assert ro.nodes[1][1].event_type == "EventWait"
    t = res.task_index_nodes[0]
    assert (t.index, t.node_type, t.node.node_id) == (0, "KERNEL", 18)
    w = res.deferred_waits[0]
    assert (w.get("waitNodeId"), w.get("finalIdx"), w.get("targetKernelIdx")) == (19, 3, 2)


def test_profiling_buffer_full_and_fail_summary(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    s = res.fail_summaries[0]
    assert (s.total_nodes, s.fusible_nodes, s.unfusible_nodes, s.breakdown) == (
        40,
        37,
        3,
        (("OP_UNSUPPORT", 2), ("NOT_IN_SCOPE", 1)),
    )


def test_handler_and_plain_lines_are_counted_not_unrecognized(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    assert res.handler_lines == 2
    assert res.plain_text_lines == 1
    assert res.unrecognized == []


def test_frames(tmp_path: Path) -> None:
    res = _parse(tmp_path)
    frames = res.frames()
    assert list(frames["child_binaries"]["func_name"]) == ["QuantBatchMatmulV3_a"]
    assert list(frames["reordered"]["node_ids"]) == [[18, 19]]
    df = res.to_frame()
    assert df.iloc[0]["kind"] == "bind_map_headers" and {"file", "line", "summary"} <= set(df.columns)


def test_row48_49_50_line_layer(tmp_path: Path) -> None:
    """Rows 48-50 on super_kernel.log: CONT, FORMAT_ERROR, pid 0/WARN/long tid."""
    style = LogStyle(pid=0, tid=281473090270384, level="WARN")
    long_sym = "S" * 4100
    lines = super_kernel_log_lines(
        [
            ("InitSingleCoreFunc", f"split[1] AIV symbol={long_sym}, size=0x10, bind=WEAK"),
            ("X", FORMAT_ERROR),
        ],
        style,
    )
    raw = lines[0].encode()
    lines[0] = (raw[:4096] + b"[CONT:1] " + raw[4096:]).decode()
    res = parse_super_kernel_log(write_lines(tmp_path / "super_kernel.log", lines))
    s = res.split_symbols[0]
    assert (s.symbol, s.bind, s.pid, s.func_name) == (long_sym, "WEAK", 0, None)
    assert [(f.src.line, f.pid) for f in res.format_errors] == [(2, 0)]


@settings(max_examples=100)
@given(st.lists(st.text(max_size=120), max_size=8))
def test_arbitrary_text_never_raises(lines: list[str]) -> None:
    text = "reordered task nodes: node count=3\n" + "\n".join(lines) + "\nFusion fail reasons summary:\n"
    res = parse_super_kernel_log(iter_meta_text(text, "s.log"), file="s.log")
    assert res.lines_read >= 1
