"""SK exception-handler parser (artifacts.md §1.4, §1.8; triage.md §3.1.3) — test matrix rows 24–47.

Inputs are rendered by :mod:`skdbg.scenebuilder.sk_incident` (a round trip through the spec) plus a few
literal lines for the formats the renderer does not produce (A3 non-AOT skips, unknown lines).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.cond import encode_cond
from skdbg.parsers.filelog import split_prefix
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.sk_handler import (
    NON_AOT_DETAIL,
    Incident,
    SkHandlerResult,
    SkMessage,
    cores_frame,
    counters_frame,
    dedupe_incidents,
    dfx_frame,
    incidents_frame,
    iter_filelog_messages,
    iter_plog_messages,
    parse_plog_file,
    parse_sk_messages,
    parse_super_kernel_log,
)
from skdbg.scenebuilder.lines import sk_plog_line
from skdbg.scenebuilder.sk_incident import (
    A14_VARIANTS,
    DIALECTS,
    CallbackBSpec,
    CoreSpec,
    DumpTensorSpec,
    IncidentSpec,
    NodeSpec,
    TaskSpec,
    example_incident,
    plog_lines,
    render,
    to_filelog_lines,
    to_plog_lines,
)

TS = datetime(2026, 6, 10, 14, 3, 21, 518402)


def messages_from_plog(lines: list[str], file: str = "plog-48213_1.log") -> list[SkMessage]:
    out = []
    for no, text in enumerate(lines, 1):
        pl = parse_plog_line(text, Source(file, no))
        if pl is not None and (m := SkMessage.from_plog(pl)) is not None:
            out.append(m)
    return out


def messages_from_filelog(
    lines: list[str], file: str = "sk_meta/48213/model_0/super_kernel.log"
) -> list[SkMessage]:
    out = []
    for no, text in enumerate(lines, 1):
        if text.strip():
            prefix, msg = split_prefix(text)
            out.append(SkMessage.from_filelog(prefix, msg, Source(file, no)))
    return out


def parse_spec(spec: IncidentSpec, level: str = "INFO") -> SkHandlerResult:
    return parse_sk_messages(messages_from_plog(to_plog_lines(spec, level=level)))


def only(spec: IncidentSpec, level: str = "INFO") -> Incident:
    r = parse_spec(spec, level)
    assert len(r.incidents) == 1, r.incidents
    assert r.unrecognized == [], r.unrecognized
    return r.incidents[0]


# --------------------------------------------------------------------------------------------- rows 24–26


def test_row24_full_incident_at_info_level() -> None:
    """Row 24: A5…A28 at INFO → header, queues, 75 counters, DfxInfo, matched core, COND, map, all-core."""
    inc = only(example_incident())
    assert (inc.entry, inc.op_trace, inc.dialect, inc.pid, inc.complete) == (
        "sk_entry_mix11_op_trace", True, "D5", 48213, True,
    )  # fmt: skip
    assert inc.anchor is not None and inc.anchor.line == 1
    assert (inc.args_dev, inc.args_len, inc.total_size, inc.reg_core_num) == (0x12C100400000, 7512, 7512, 1)
    h = inc.header
    assert h is not None
    assert (h.aic_que_offset, h.aiv_que_offset, h.counter_offset, h.dfx_offset, h.node_cnt, h.total_size) == (
        48, 944, 2176, 6976, 3, 7512,
    )  # fmt: skip
    assert (h.model_scope_value, h.model_idx, h.sk_scope_id, h.model_id) == (0x30000, 0, 3, "48_1")
    assert h.source_of("nodeCnt") is not None
    assert inc.aic_queue is not None and inc.aiv_queue is not None
    assert (inc.aic_queue.offset, inc.aic_queue.task_cnt, len(inc.aic_queue.tasks)) == (48, 3, 3)
    assert [(t.index, t.type, t.args) for t in inc.aiv_queue.tasks][1] == (1, "FUNC", 0x12C100412000)
    assert inc.counters is not None and len(inc.counters.entries) == 75
    assert (inc.counters.entries[30].index, inc.counters.entries[30].op_state) == (1, 2)
    assert inc.dfx is not None and (inc.dfx.offset, inc.dfx.node_cnt, len(inc.dfx.nodes)) == (6976, 3, 3)
    n1 = inc.dfx.nodes[1]
    assert (n1.bin_hdl, n1.aiv_size, n1.num_blocks, n1.vec_num, n1.origin_name, n1.is_func) == (
        0xAAAAF3D00A10, 0x1A2C, 48, 48, "add_custom", True,
    )  # fmt: skip
    assert n1.entry_aiv == (0x124080C01200, 0x124080C04300, 0x124080C07400, 0x124080C0A500)
    assert n1.entry_aic == (0, 0, 0, 0)
    (core,) = inc.cores
    assert (core.core_id, core.core_type, core.matched, core.node, core.entry) == (30, "AIV", True, 1, 2)
    assert (core.model_idx, core.model_id, core.sk_scope_id) == (0, "48_1", 3)
    assert (core.start_pc, core.current_pc, core.start_pc_label) == (
        0x124080A03C00,
        0x124080C07E58,
        "StartPC",
    )
    assert (core.entry_addr, core.end_addr, core.func_size, core.func_size_dec) == (
        0x124080C07400, 0x124080C08E2C, 0x1A2C, 6700,
    )  # fmt: skip
    assert (core.num_blocks, core.cube_num, core.vec_num, core.dev_args, core.error_node_idx) == (
        48, 0, 48, 0x12C100412000, 1,
    )  # fmt: skip
    assert core.trace is not None
    assert (core.trace.op_state, core.trace.op_id, core.trace.running, core.trace.core_type_guessed) == (
        2, 1, 1, False,
    )  # fmt: skip
    assert core.trace.symbols[0].function_name == "add_custom"
    assert core.trace.symbols[0].lookups == ("Loading function name for opId=1, funcHdl=0xaaaaf3d01c80",
                                             "Got function name for opId=1: add_custom")  # fmt: skip
    cond = core.cond
    assert cond is not None
    assert (cond.arch, cond.reg_low_idx, cond.reg_high_idx, cond.value, cond.message) == (
        "DAV_2201", 20, 21, 0x30102, "running",
    )  # fmt: skip
    assert cond.current_name == "add_custom"
    chk = inc.cond_check(core)
    assert chk is not None and chk.scope_match is True and chk.candidates == (1,)
    assert inc.model_map is not None and inc.model_map.entries == ((0, "48_1"),)
    assert inc.all_cores is not None and inc.all_cores.core_count == 75 and len(inc.all_cores.traces) == 75
    assert inc.all_cores.traces[0].last_finished == 0 and inc.all_cores.traces[0].next_op == 1


def test_row25_error_level_drops_info_lines_but_keeps_dfx_cores_cond() -> None:
    """Row 25: at ERROR level A7/A8/A12/A15–A18/A24 vanish; DfxInfo, cores, COND and map remain."""
    inc = only(example_incident(), level="ERROR")
    assert inc.header is None and inc.aic_queue is None and inc.aiv_queue is None and inc.counters is None
    assert inc.args_dev is None and inc.reg_core_num is None
    assert inc.dfx is not None and len(inc.dfx.nodes) == 3
    assert inc.cores[0].node == 1 and inc.cores[0].cond is not None and inc.cores[0].cond.value == 0x30102
    assert (
        inc.cores[0].trace is not None and inc.cores[0].trace.symbols[0].start_pc is None
    )  # I header dropped
    assert inc.model_map is not None and inc.dialect == "D5" and inc.complete


def test_row26_op_trace_false_no_trace_no_all_core_but_cond() -> None:
    """Row 26: entry sk_entry_aic → no §1.4.4 blocks, no A28; COND still parsed."""
    inc = only(example_incident(entry="sk_entry_aic"))
    assert inc.op_trace is False and inc.all_cores is None
    assert inc.cores[0].trace is None and inc.cores[0].cond is not None
    assert inc.cores[0].cond.decoded is not None and inc.cores[0].cond.decoded.state == 2


# --------------------------------------------------------------------------------------------- rows 27–34


def test_row27_bound_sk_symbol() -> None:
    """Row 27: node, entry, entry/end address, size, symbol, bind, symbol size."""
    c = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2), sk_bind="GLOBAL",
                                              sk_size=0x1A00),))).cores[0]  # fmt: skip
    assert (c.node, c.entry, c.entry_addr, c.end_addr, c.func_size) == (
        1,
        2,
        0x124080C07400,
        0x124080C08E2C,
        0x1A2C,
    )
    assert (c.sk_symbol, c.sk_symbol_bind, c.sk_symbol_size) == (
        "_Z13add_custom_skILj2EEvPK13AddCustomArgsPN2sk12SkSystemArgsE", "GLOBAL", 0x1A00,
    )  # fmt: skip
    assert c.source_of("sk_symbol") is not None and c.sk_symbol_failed_offset is None


def test_row28_computed_func_offset_fallback() -> None:
    """Row 28: INFO ``Computed funcOffset=… (binDevAddr=…)`` captured (and absent at ERROR level)."""
    spec = example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2),
                                            computed=(0x7400, 0x124080C00000)),))  # fmt: skip
    c = only(spec).cores[0]
    assert (c.computed_func_offset, c.bin_dev_addr, c.sk_symbol_bind) == (0x7400, 0x124080C00000, "WEAK")
    assert only(spec, "ERROR").cores[0].bin_dev_addr is None


def test_row29_failed_sk_symbol_keeps_offset() -> None:
    """Row 29: ``Failed to get SK symbol name … offset=0x…`` → no symbol, offset kept."""
    c = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2), symbol="failed",
                                              func_offset=0x6400),))).cores[0]  # fmt: skip
    assert c.sk_symbol is None and c.sk_symbol_failed_offset == 0x6400 and c.origin_name == "add_custom"


def test_row30_func_offset_zero_and_bin_buffer_failure() -> None:
    """Row 30: ``funcOffset is 0 …`` and ``Failed to get bin buffer …`` stop symbol resolution."""
    z = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2),
                                              symbol="offset_zero"),))).cores[0]  # fmt: skip
    assert z.func_offset_zero is True and z.sk_symbol is None and z.dev_args == 0x12C100412000
    b = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2),
                                              symbol="bin_buffer",
                                              bin_rt_ret=507899),))).cores[0]  # fmt: skip
    assert b.bin_buffer_error == (1, 507899) and b.sk_symbol is None and b.func_offset_zero is False


def test_row31_coreless_origin_name_failure_attributed_to_current_core() -> None:
    """Row 31: ``Failed to get origin function name for node[N], ret=…`` has no [Core] prefix."""
    inc = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2),
                                                origin_error_ret=107003),)))  # fmt: skip
    c = inc.cores[0]
    assert c.origin_name is None and c.origin_name_error == (1, 107003)
    src = c.source_of("origin_name_error")
    assert src is not None and src.line is not None and src.line > c.src.line  # type: ignore[operator]


def test_row32_no_match_block() -> None:
    """Row 32: ``startPC`` lower-case, matched=False, PCs parsed, errorNodeIdx_ = -1."""
    c = only(example_incident(cores=(CoreSpec(3, "AIC", 0x124080A03C00, 0x124080A03E10),))).cores[0]
    assert (c.matched, c.core_type, c.start_pc_label, c.start_pc, c.current_pc) == (
        False, "AIC", "startPC", 0x124080A03C00, 0x124080A03E10,
    )  # fmt: skip
    assert (c.error_node_idx, c.node, c.pc_unknown, c.model_id) == (-1, None, False, "48_1")


def test_row33_two_cores_matched_aiv_and_no_match_aic() -> None:
    """Row 33: positional lines (errorNodeIdx_, name failure, GetCondRegValue) land on the right core."""
    spec = example_incident(
        cores=(
            CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2), origin_error_ret=107001),
            CoreSpec(3, "AIC", 0x124080A03C00, 0x124080A03E10),
        )
    )
    inc = only(spec)
    a, b = inc.cores
    assert (a.core_id, a.matched, a.error_node_idx, a.origin_name_error) == (30, True, 1, (1, 107001))
    assert (b.core_id, b.matched, b.error_node_idx, b.origin_name_error) == (3, False, -1, None)
    assert a.cond is not None and b.cond is not None
    assert (a.cond.arch, b.cond.arch) == ("DAV_2201", "DAV_2201")
    assert b.cond.decoded is not None and (b.cond.decoded.state, b.cond.decoded.op_index) == (3, 0)
    assert b.trace is not None and b.trace.core_type == "AIC" and b.trace.last_finished == 0
    assert [c.order for c in inc.cores] == [0, 1]


def test_row34_three_cores_same_node_entry_is_core_mod_4() -> None:
    """Row 34: cores 29/30/31 run node 1 on entries 1/2/3 (j = coreId % 4) — consistent records."""
    node = example_incident().nodes[1]
    cores = tuple(
        CoreSpec(cid, "AIV", 0x1, node.entry_aiv[cid % 4] + 0x40, match=(1, cid % 4)) for cid in (29, 30, 31)
    )
    inc = only(example_incident(cores=cores))
    assert inc.dfx is not None
    for c in inc.cores:
        assert c.node == 1 and c.entry == c.core_id % 4
        assert c.entry_addr == inc.dfx.nodes[1].entry_aiv[c.core_id % 4]
        assert c.end_addr == (c.entry_addr or 0) + inc.dfx.nodes[1].aiv_size
        assert (c.entry_addr or 0) <= (c.current_pc or 0) < (c.end_addr or 0)


# --------------------------------------------------------------------------------------------- rows 35–41


def test_row35_cond_zero_driver_not_upgraded() -> None:
    """Row 35: COND = 0 → ``driver package not upgraded`` → cond unavailable."""
    inc = only(example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2), cond=0),)))
    cond = inc.cores[0].cond
    assert cond is not None and cond.unavailable is True and cond.value is None and cond.arch == "DAV_2201"
    chk = inc.cond_check(inc.cores[0])
    assert chk is not None and chk.flags == ("cond_unavailable",)


def test_row36_cond_each_state_and_unknown_state() -> None:
    """Row 36: COND states 0–4 and 7 → decoded, bits 16–47 compared with the header."""
    expected = {0: "origin", 1: "launched", 2: "running", 3: "finished", 4: "completed", 7: "unknown"}
    for state, message in expected.items():
        value = encode_cond(state, 1, 3, 0)
        inc = only(
            example_incident(cores=(CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2), cond=value),))
        )
        cond = inc.cores[0].cond
        assert cond is not None and cond.decoded is not None
        assert (cond.value, cond.printed_state, cond.decoded.state, cond.message) == (
            value,
            state,
            state,
            message,
        )
        assert (cond.decoded.scope_id, cond.decoded.model_idx) == (3, 0)
        chk = inc.cond_check(inc.cores[0])
        assert chk is not None and chk.scope_match is True and chk.model_match is True
        if state == 3:
            assert (cond.last_finished_name, cond.next_name) == ("add_custom", "Cast_9f3e21_2")
        if state == 1:
            assert cond.next_name == "add_custom"


def test_row37_cond_index_wrap_flagged() -> None:
    """Row 37: node index 260 → opIndex 4, scope bits polluted → cond_index_overflow, 260 recovered."""
    nodes = tuple(NodeSpec(0x1000 + k, 0x2000 + k, is_func=False, origin_name=None) for k in range(300))
    value = encode_cond(2, 260, 2, 0)
    spec = example_incident(
        scope_id=2, nodes=nodes, aic_tasks=(), aiv_tasks=(), counters=(),
        cores=(CoreSpec(40, "AIV", 0x1, 0x12408FF00000, cond=value),),
    )  # fmt: skip
    inc = only(spec, level="ERROR")
    core = inc.cores[0]
    assert core.cond is not None and core.cond.printed_index == 4 and core.sk_scope_id == 2
    chk = inc.cond_check(core)
    assert chk is not None and chk.cond_index_overflow is True
    assert chk.candidates == (4, 260) and chk.recovered_index == 260
    assert "cond_index_overflow" in chk.flags


def test_row38_finished_without_next_operator() -> None:
    """Row 38: state 3 on the last node → ``> No next operator (opId=N/N)``."""
    inc = only(example_incident(counters=((30, 2, 3),)))
    t = inc.cores[0].trace
    assert t is not None
    assert (t.op_state, t.state_name, t.last_finished, t.next_op, t.no_next) == (
        3,
        "OP_FINISHED",
        2,
        None,
        (2, 3),
    )
    assert [s.role for s in t.symbols] == ["last_finished"] and t.symbols[0].function_name == "Cast_9f3e21_2"


def test_finished_op_is_kept() -> None:
    """§1.4.4 OP_FINISHED: ``opId=N finished, checking current and next operators`` names the op the
    core finished; it is kept next to the ``> Last finished opId=`` line (it was once parsed, then dropped)."""
    inc = only(example_incident(counters=((30, 2, 3),)))
    t = inc.cores[0].trace
    assert t is not None and (t.finished_op, t.last_finished) == (2, 2)
    started = only(example_incident(counters=((30, 1, 2),))).cores[0].trace
    assert started is not None and started.finished_op is None  # OP_LAUNCHED prints no such line


def test_row39_core_id_exceeds_aicore_nums() -> None:
    """Row 39: ``coreId=… exceeds aicoreNums=…`` instead of a trace."""
    inc = only(example_incident(cores=(CoreSpec(80, "AIV", 0x1, 0x124080A03E10),)))
    c = inc.cores[0]
    assert (c.core_id, c.exceeds_aicore_nums, c.trace, c.matched) == (80, 75, None, False)


def test_row40_dfx_event_nodes_and_interleaved_entries() -> None:
    """Row 40: ``Node[N] is not a FUNC type`` and 1, 2, 4 non-zero entries interleaved Aic/Aiv."""
    nodes = (
        NodeSpec(0xA0, 0xB0, aic_size=0x100, origin_name="one", entry_aic=(0x1000, 0, 0, 0)),
        NodeSpec(0xA1, 0xB1, is_func=False),
        NodeSpec(0xA2, 0xB2, aic_size=0x100, aiv_size=0x80, origin_name="two",
                 entry_aic=(0x2000, 0, 0, 0), entry_aiv=(0x3000, 0, 0, 0)),
        NodeSpec(0xA3, 0xB3, aiv_size=0x80, origin_name="four", entry_aiv=(0x4000, 0x4100, 0x4200, 0x4300)),
    )  # fmt: skip
    tasks = (TaskSpec(0, "FUNC", 1, 0x10), TaskSpec(1, "EVENT_WAIT"), TaskSpec(2, "FUNC", 1, 0x20))
    spec = example_incident(nodes=nodes, aic_tasks=tasks, aiv_tasks=(TaskSpec(2, "FUNC", 1, 0x30),
                                                                     TaskSpec(3, "FUNC", 1, 0x40)),
                            cores=(CoreSpec(30, "AIV", 0x1, 0x4210, match=(3, 2)),))  # fmt: skip
    inc = only(spec)
    assert inc.dfx is not None
    kinds = [(n.name_kind, n.is_func) for n in inc.dfx.nodes]
    assert kinds == [("origin", True), ("not_func", False), ("origin", True), ("origin", True)]
    assert inc.dfx.nodes[0].entry_aic == (0x1000, 0, 0, 0)
    assert (inc.dfx.nodes[2].entry_aic, inc.dfx.nodes[2].entry_aiv) == ((0x2000, 0, 0, 0), (0x3000, 0, 0, 0))
    assert inc.dfx.nodes[3].entry_aiv == (0x4000, 0x4100, 0x4200, 0x4300)
    assert inc.cores[0].dev_args == 0x40 and inc.cores[0].entry_addr == 0x4200
    f = dfx_frame([inc])
    assert list(f["entry_aiv3"]) == [0, 0, 0, 0x4300] and list(f["is_func"]) == [True, False, True, True]


def test_row41_model_id_empty_and_map_missing_index() -> None:
    """Row 41: ModelIdIdx=1 not in the map → ``ModelId=`` empty, GetModelIdByIndex error recorded."""
    inc = only(example_incident(model_idx=1))
    c = inc.cores[0]
    assert (c.model_idx, c.model_id) == (1, "")
    assert inc.header is not None and inc.header.model_id == "" and inc.header.model_idx == 1
    assert inc.model_map is not None and inc.model_map.lookup(1) is None and inc.model_map.total == 1
    assert [(i, n) for i, n, _ in inc.model_id_errors] == [(1, 1), (1, 1)]
    chk = inc.cond_check(c)
    assert chk is not None and chk.model_match is True  # COND model bits follow the header (1)


# --------------------------------------------------------------------------------------------- rows 42–47


@pytest.mark.parametrize("abort", ["A9", "A10", "A11:temp_malloc", "A11:host_memcpy", "A13", "A23",
                                   *(f"A14:{v}" for v in A14_VARIANTS)])  # fmt: skip
def test_row42_abort_incidents_incomplete_with_reason(abort: str) -> None:
    """Row 42: A9, A10, A11, A13, each A14 variant, A23 → incident with anchor, incomplete, reason."""
    inc = only(example_incident(abort=abort))
    assert inc.complete is False and inc.abort is not None
    assert inc.abort.code == abort.split(":")[0]
    assert inc.incomplete_reason is not None and inc.incomplete_reason.startswith(abort.split(":")[0])
    assert inc.anchor is not None and inc.cores == ()
    if abort == "A23":
        assert inc.dfx is not None and inc.model_map is None and inc.all_cores is None
    else:
        assert inc.dfx is None
    if abort in ("A9", "A23", "A11:temp_malloc", "A11:host_memcpy"):
        assert inc.abort.ret == 507899


def test_row42_abort_variant_texts() -> None:
    """Each A14 variant has its own text; the A11 direct (AOT@index) form is recognised too."""
    reasons = {only(example_incident(abort=f"A14:{v}")).incomplete_reason for v in A14_VARIANTS}
    assert len(reasons) == len(A14_VARIANTS)
    idx = only(example_incident(abort="A11:temp_memcpy", variant="index"))
    assert idx.abort is not None and idx.abort.reason == "aclrtMemcpy for SkHeaderInfo failed, ret=507899"


def test_row43_callback_b_one_record_not_a_second_fault() -> None:
    """Row 43: the second A5 + dump-info array belong to the same incident."""
    extra = DumpTensorSpec(type="INPUT", tensor_size=64, shape=(4, 4))
    spec = example_incident(callback_b=CallbackBSpec(extra_tensors=(extra,)))
    inc = only(spec)
    b = inc.callback_b
    assert b is not None and b.anchor is not None and b.entry == inc.entry
    assert (b.array_count, len(b.records), b.fill_core_num, b.fill_valid_dump) == (1, 1, 1, 1)
    rec = b.records[0]
    assert (rec.get("coreId"), rec.get("coreType"), rec.get("kernelName"), rec.get("bin handle")) == (
        "30", "AIV", "add_custom", "0xaaaaf3d00a10",
    )  # fmt: skip
    assert (
        rec.get("kernelDisplayName") == "sk_entry_mix11_op_trace_scope3"
        and rec.get("argAddr") == "0x12c100412000"
    )
    assert [t.get("type") for t in rec.tensors] == ["WORKSPACE", "INPUT"]
    assert rec.tensors[0].get("tensorSize") == "7512 bytes" and rec.tensors[1].get("shape") == "[4, 4]"
    assert b.cores == () and inc.cores[0].core_id == 30


def test_row43_callback_b_two_records_and_skip_duplicate() -> None:
    """Row 43: two records (distinct binaries) and ``Skip duplicate …`` for a core on the same binary."""
    node = example_incident().nodes[1]
    cores = (
        CoreSpec(30, "AIV", 0x1, 0x124080C07E58, match=(1, 2)),
        CoreSpec(31, "AIV", 0x1, node.entry_aiv[3] + 0x10, match=(1, 3)),
        CoreSpec(3, "AIC", 0x124080A03C00, 0x124080A03E10),
    )
    for level in ("INFO", "ERROR"):
        r = parse_spec(example_incident(cores=cores, callback_b=CallbackBSpec()), level)
        assert len(r.incidents) == 1 and r.unrecognized == []
        inc = r.incidents[0]
        assert len(inc.cores) == 3 and inc.callback_b is not None
        if level == "INFO":
            b = inc.callback_b
            assert len(b.records) == 2 and b.array_count == 2
            assert [s.core_id for s in b.skipped_duplicates] == [31]
            assert b.skipped_duplicates[0].bin_handle == 0xAAAAF3D00A10
            assert b.records[1].get("kernelName") == "sk_entry_mix11_op_trace"


def test_row43_d4_callback_b_reprints_blocks_into_callback_b() -> None:
    """Row 43 (D4): the dump path re-prints the per-core block — kept under callback B, not as a new fault."""
    for level in ("INFO", "ERROR"):
        inc = only(example_incident(dialect="D4", callback_b=CallbackBSpec()), level)
        assert inc.dialect == "D4" and len(inc.cores) == 1 and inc.callback_b is not None
        assert [c.core_id for c in inc.callback_b.cores] == [30]
        assert inc.callback_b.cores[0].callback == "B" and inc.callback_b.cores[0].node == 1


def test_row44_two_incidents_in_one_plog() -> None:
    """Row 44: two scopes with different SkScopeId → two incidents (INFO and ERROR level)."""
    a = example_incident()
    b = example_incident(scope_id=4, start=datetime(2026, 6, 10, 14, 3, 25))
    for level in ("INFO", "ERROR"):
        r = parse_sk_messages(messages_from_plog(plog_lines([a, b], level=level)))
        assert [i.sk_scope_id for i in r.incidents] == [3, 4]
        assert all(i.callback_b is None and i.complete for i in r.incidents)
    # and with callback B after each: still two incidents, one B each
    a2, b2 = replace(a, callback_b=CallbackBSpec()), replace(b, callback_b=CallbackBSpec())
    r = parse_sk_messages(messages_from_plog(plog_lines([a2, b2], level="ERROR")))
    assert [(i.sk_scope_id, i.callback_b is not None) for i in r.incidents] == [(3, True), (4, True)]


def test_row45_non_aot_sk_reported_without_handler_data() -> None:
    """Row 45: A3 for ``sk_constant_entry_5`` / ``te_superkernel_…`` → "non-AOT SK, no handler data"."""
    lines = [
        sk_plog_line("DEBUG", 7, "python3", TS, "IsSuperKernelException",
                     "fault kernel_name 'sk_constant_entry_5' does not start with 'sk_entry', skipping"),
        sk_plog_line("DEBUG", 7, "python3", TS, "HandleException",
                     "Exception is not from sk_entry, skip handling."),
        sk_plog_line("DEBUG", 7, "python3", TS, "IsSuperKernelException",
                     "fault kernel_name 'te_superkernel_911c573e' does not start with 'sk_entry', skipping"),
        sk_plog_line("DEBUG", 7, "python3", TS, "IsSuperKernelException",
                     "fault kernel_name 'add_custom' does not start with 'sk_entry', skipping"),
    ]  # fmt: skip
    r = parse_sk_messages(messages_from_plog(lines))
    assert r.incidents == [] and r.unrecognized == []
    got = [(f.kind, f.kernel_name, f.family, f.detail) for f in r.non_aot]
    assert got[0] == ("non_aot_sk", "sk_constant_entry_5", "constant_codegen", NON_AOT_DETAIL)
    assert got[1] == ("non_aot_sk", "te_superkernel_911c573e", "jit_te_superkernel", NON_AOT_DETAIL)
    assert got[2][0] == "not_sk_entry" and len(r.non_aot) == 3
    assert len(r.non_aot[0].sources) == 2  # the A4 line joined its A3


@pytest.mark.parametrize("dialect", ["D0", "D1", "D2"])
def test_row46_legacy_formats(dialect: str) -> None:
    """Row 46: counters ``launch=/exit=``, DfxInfo ``Function name:``, ``[Core N] Function name:``."""
    inc = only(example_incident(dialect=dialect))
    assert inc.dialect == dialect
    assert inc.counters is not None and all(e.legacy for e in inc.counters.entries)
    assert (inc.counters.entries[30].op_state, inc.counters.entries[30].exit) == (2, 0)
    assert inc.dfx is not None and inc.dfx.nodes[1].name_kind == "legacy"
    assert inc.dfx.nodes[1].origin_name == "add_custom"
    c = inc.cores[0]
    assert c.trace is not None and (c.trace.op_state, c.trace.legacy_exit, c.trace.running) == (2, 0, 1)
    if dialect == "D0":
        assert c.matched is None and c.current_pc is None and inc.op_trace is True
        assert inc.header is not None and inc.header.ws_offset == 6976
    else:
        assert (c.matched, c.origin_name, c.origin_name_legacy) == (True, "add_custom", True)
    if dialect == "D1":
        assert c.start_pc_label == "startPC" and c.num_blocks is None and c.model_idx is None
        assert inc.dfx.nodes[0].num_blocks is None
    if dialect == "D2":
        assert (
            c.start_pc_label == "StartPC" and c.original_model_ri == 0xAAAAF3A5C000 and c.dev_args is not None
        )
        assert inc.model_map is not None and inc.model_map.kind == "modelRI"
    assert inc.all_cores is not None and inc.all_cores.core_type_guessed is True  # T7


def test_row47_same_incident_in_plog_and_super_kernel_log_deduplicated(tmp_path: Path) -> None:
    """Row 47: plog (ERROR level) + super_kernel.log copy → one incident keeping both sources."""
    for variant in ("mirror", "index"):
        spec = example_incident(variant=variant, callback_b=CallbackBSpec())
        plog = tmp_path / f"plog-48213_{variant}.log"
        skl = tmp_path / f"super_kernel_{variant}.log"
        plog.write_text("\n".join(to_plog_lines(spec, level="ERROR")) + "\n")
        skl.write_text("\n".join(to_filelog_lines(spec)) + "\n")
        rp, rf = parse_plog_file(str(plog)), parse_super_kernel_log(str(skl))
        assert rp.unrecognized == [] and rf.unrecognized == []
        assert rf.incidents[0].origins == ("filelog",)
        if variant == "index":
            assert rf.incidents[0].anchor is None and any(g.kind == "anchor_missing" for g in rf.gaps)
        merged = dedupe_incidents([*rp.incidents, *rf.incidents])
        assert len(merged) == 1
        m = merged[0]
        assert set(m.origins) == {"plog", "filelog"} and set(m.files) == {str(plog), str(skl)}
        assert m.anchor is not None and m.header is not None and m.counters is not None and m.dialect == "D5"
        assert len(m.merged_from) == 1


def test_dedupe_keeps_different_faults_apart() -> None:
    a = parse_spec(example_incident(), "ERROR").incidents[0]
    b = parse_spec(example_incident(cores=(CoreSpec(3, "AIC", 0x1, 0x124080A03E10),)), "ERROR").incidents[0]
    b = replace(b, files=("other.log",), origins=("filelog",))
    assert len(dedupe_incidents([a, b])) == 2


# --------------------------------------------------------------------------------------------- traps


def test_t9_pc_zero_distinct_from_missing_pc() -> None:
    """T9: D5 prints a no-match block with ``CurrentPC: 0x0``; D1–D4 print no block at all."""
    c5 = only(example_incident(cores=(CoreSpec(30, "AIV", 0x124080A03C00, 0),))).cores[0]
    assert (c5.matched, c5.current_pc, c5.pc_unknown) == (False, 0, True)
    inc4 = only(example_incident(dialect="D4", cores=(CoreSpec(30, "AIV", 0x124080A03C00, 0),)))
    c4 = inc4.cores[0]
    assert (c4.matched, c4.current_pc, c4.pc_unknown) == (None, None, False)
    assert c4.trace is not None and c4.cond is not None and inc4.dialect == "D4"


def test_t7_all_core_labels_guessed_before_d5() -> None:
    inc4 = only(example_incident(dialect="D4"))
    inc5 = only(example_incident(dialect="D5", arch="DAV_3510", aicore_nums=108))
    assert inc4.all_cores is not None and inc4.all_cores.core_type_guessed is True
    assert inc4.all_cores.traces[30].core_type == "AIV" and inc4.all_cores.traces[30].core_type_guessed
    assert inc5.all_cores is not None and inc5.all_cores.core_type_guessed is False
    assert [inc5.all_cores.traces[i].core_type for i in (17, 18, 60, 72)] == ["AIC", "AIV", "AIC", "AIV"]
    assert inc5.cores[0].cond is not None and inc5.cores[0].cond.reg_low_idx == 32


def test_t4_first_match_quotation_kept_verbatim() -> None:
    """T4: the handler's ``Found in node[k]`` is a quotation; the DfxInfo table is kept for recomputation."""
    n = example_incident().nodes
    shared = replace(n[2], entry_aiv=n[1].entry_aiv, aiv_size=n[1].aiv_size)
    inc = only(example_incident(nodes=(n[0], n[1], shared)))
    assert inc.cores[0].node == 1 and inc.dfx is not None
    assert inc.dfx.nodes[2].entry_aiv == inc.dfx.nodes[1].entry_aiv


def test_dialect_detection_never_assumes_newest() -> None:
    """An anchor-only abort cannot tell D1–D5 apart → unknown with candidates (triage §3.1.3)."""
    inc = only(example_incident(abort="A10"), "ERROR")
    assert inc.dialect == "unknown" and inc.dialect_candidates == ("D1", "D2", "D3", "D4", "D5")
    d3 = only(example_incident(dialect="D3", entry="sk_entry_aic"), "ERROR")
    assert d3.dialect == "D3"  # a PC block without COND lines caps at D3


def test_unknown_lines_kept_and_foreign_lines_counted() -> None:
    lines = to_plog_lines(example_incident(), level="ERROR")
    lines.insert(
        5, sk_plog_line("ERROR", 48213, "python3", TS, "PrintDfxInfo", "a brand-new message format 42")
    )
    lines.insert(
        6, sk_plog_line("INFO", 48213, "python3", TS, "ScheduleScope", "schedule scope: build finished")
    )
    r = parse_sk_messages(messages_from_plog(lines))
    assert len(r.incidents) == 1
    assert [u.text for u in r.unrecognized] == ["a brand-new message format 42"]
    assert r.unrecognized[0].src.line == 6 and r.foreign_lines == 1


def test_absurd_numbers_are_unrecognized_not_a_crash() -> None:
    huge = "9" * 5000
    msgs = [
        SkMessage(
            Source("x", 1),
            None,
            "ERROR",
            1,
            "PrintDfxInfo",
            f"=== SkDfxInfo (offset={huge}, nodeCnt=1) ===",
            "plog",
        ),
        SkMessage(
            Source("x", 2),
            None,
            "ERROR",
            1,
            "PrintCoreSymbols",
            f"[Core {huge}] Currently running opId=1",
            "plog",
        ),
    ]
    r = parse_sk_messages(msgs)
    assert [u.src.line for u in r.unrecognized] == [1, 2]


def test_frames_have_plain_columns() -> None:
    incs = parse_spec(example_incident()).incidents
    f = incidents_frame(incs)
    assert list(f.columns)[:5] == ["incident", "file", "line", "entry", "dialect"] and len(f) == 1
    assert f.loc[0, "sk_scope_id"] == 3 and f.loc[0, "origins"] == "plog"
    c = cores_frame(incs)
    assert (c.loc[0, "core_id"], c.loc[0, "node"], c.loc[0, "cond_value"]) == (30, 1, 0x30102)
    assert len(counters_frame(incs)) == 75 and len(dfx_frame(incs)) == 3
    assert parse_sk_messages([]).to_frame().empty


def test_file_iterators_stream_plog_and_filelog(tmp_path: Path) -> None:
    p = tmp_path / "plog.log"
    p.write_text("garbage line\n" + "\n".join(to_plog_lines(example_incident(), level="ERROR")) + "\n")
    msgs = list(iter_plog_messages(str(p)))
    assert msgs[0].src.line == 2 and msgs[0].func == "IsSuperKernelException" and msgs[0].origin == "plog"
    f = tmp_path / "super_kernel.log"
    f.write_text("\n".join(to_filelog_lines(example_incident(callback_b=CallbackBSpec()))) + "\n")
    fm = list(iter_filelog_messages(str(f)))
    assert fm[0].pid == 48213 and fm[0].level == "ERROR" and fm[0].func == "IsSuperKernelException"
    with pytest.raises(ParseError):
        list(iter_plog_messages(str(tmp_path / "missing.log")))


# --------------------------------------------------------------------------------------------- hypothesis


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from(["IsSuperKernelException", "PrintDfxInfo", "PrintCoreSymbols", None,
                                           "Other"]), st.text(max_size=80)), max_size=40))  # fmt: skip
def test_random_text_never_raises(items: list[tuple[str | None, str]]) -> None:
    """Any text: no exception, and nothing is invented — every line reported unrecognised is one of the
    input lines, reported once, and no more lines are reported than were fed."""
    msgs = [SkMessage(Source("x", i), None, "ERROR", 1, f, t, "plog") for i, (f, t) in enumerate(items, 1)]
    r = parse_sk_messages(msgs)
    lines = [u.src.line for u in r.unrecognized]
    assert len(lines) == len(set(lines)) and set(lines) <= set(range(1, len(msgs) + 1))
    assert len(lines) + r.foreign_lines <= len(msgs)


_HANDLER_FUNCS = ["IsSuperKernelException", "PrintDfxInfo", "PrintCoreSymbols"]


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from([*_HANDLER_FUNCS, None, "Other"]),
                          st.text(alphabet="qwxz _-.", max_size=80)), max_size=40))  # fmt: skip
def test_text_matching_no_catalogue_line_is_listed_not_dropped(items: list[tuple[str | None, str]]) -> None:
    """Text from an alphabet no handler message can be written in (no digits, ``=`` or ``:``) matches
    no catalogue line: no incident is made, every non-blank line tagged with a handler function is
    listed as unrecognised (nothing dropped silently), and every other non-blank SK line is counted as
    another component's output."""
    msgs = [SkMessage(Source("x", i), None, "ERROR", 1, f, t, "plog") for i, (f, t) in enumerate(items, 1)]
    r = parse_sk_messages(msgs)
    assert r.incidents == [] and r.non_aot == []
    handler = [i for i, (f, t) in enumerate(items, 1) if f in _HANDLER_FUNCS and t.strip()]
    assert sorted(u.src.line for u in r.unrecognized) == handler
    assert r.foreign_lines == sum(1 for f, t in items if f not in _HANDLER_FUNCS and t.strip())


REAL = [ln.text for ln in render(example_incident(callback_b=CallbackBSpec()))][:160]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(REAL) - 1), st.integers(0, 3), st.integers(0, 200),
                          st.text(alphabet="0123456789x-[]=:, ", max_size=3)),
                min_size=1, max_size=60))  # fmt: skip
def test_mutated_real_messages_never_raise(edits: list[tuple[int, int, int, str]]) -> None:
    """Truncated, spliced, digit-mangled and reordered handler lines never raise."""
    msgs = []
    for n, (i, op, pos, ins) in enumerate(edits, 1):
        t = REAL[i]
        if op == 1:
            t = t[: pos % (len(t) + 1)]
        elif op == 2:
            p = pos % (len(t) + 1)
            t = t[:p] + ins + t[p:]
        elif op == 3:
            t = t.replace("1", ins or "999999999999999999999")
        msgs.append(SkMessage(Source("m", n), None, "ERROR", 9, None, t, "filelog"))
    parse_sk_messages(msgs)


AIV_POOL = (25, 26, 29, 30, 31, 44, 70)
AIC_POOL = (0, 1, 3, 17)


@st.composite
def incident_specs(draw: st.DrawFn) -> tuple[IncidentSpec, str]:
    dialect = draw(st.sampled_from(DIALECTS))
    level = draw(st.sampled_from(["INFO", "ERROR"]))
    base = example_incident(dialect=dialect)
    entry = draw(
        st.sampled_from(["sk_entry_mix11_op_trace", "sk_entry_mix11", "sk_entry_aiv_debug_op_trace"])
    )
    ids = draw(st.lists(st.sampled_from(AIV_POOL + AIC_POOL), min_size=1, max_size=3, unique=True))
    cores = []
    counters = []
    for n, cid in enumerate(ids):
        aiv = cid in AIV_POOL
        kind = (
            draw(st.sampled_from(["match", "nomatch", "zero"]))
            if n
            else draw(st.sampled_from(["match", "nomatch"]))
        )
        if kind == "match":
            k = draw(st.sampled_from([1, 2])) if aiv else 0
            j = cid % 4
            node = base.nodes[k]
            entries, size = (node.entry_aiv, node.aiv_size) if aiv else (node.entry_aic, node.aic_size)
            pc = entries[j] + draw(st.integers(0, size - 1))
            core = CoreSpec(cid, "AIV" if aiv else "AIC", 0x124080A03C00, pc, match=(k, j))
        else:
            core = CoreSpec(
                cid, "AIV" if aiv else "AIC", 0x124080A03C00, 0 if kind == "zero" else 0x124080A03E10
            )
        if draw(st.booleans()):
            core = replace(
                core,
                cond=draw(
                    st.sampled_from([0, encode_cond(draw(st.integers(0, 7)), draw(st.integers(0, 2)), 3, 0)])
                ),
            )
        cores.append(core)
        counters.append((cid, draw(st.integers(0, 2)), draw(st.integers(0, 5))))
    cb = CallbackBSpec() if draw(st.booleans()) else None
    spec = replace(base, entry=entry, cores=tuple(cores), counters=tuple(counters), callback_b=cb)
    return spec, level


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(incident_specs())
def test_rendered_incidents_round_trip_every_dialect(case: tuple[IncidentSpec, str]) -> None:
    """Render → plog → parse gives back dialect, entry, nodes, cores, COND, trace, map, callback B."""
    spec, level = case
    d = spec.d
    r = parse_spec(spec, level)
    assert r.unrecognized == [] and len(r.incidents) == 1
    inc = r.incidents[0]
    assert inc.dialect == spec.dialect
    assert inc.entry == spec.entry and inc.op_trace == spec.op_trace
    assert inc.dfx is not None
    assert [(n.bin_hdl, n.origin_name) for n in inc.dfx.nodes] == [
        (n.bin_hdl, n.origin_name) for n in spec.nodes
    ]
    visible = [c for c in spec.cores if d == 0 or d >= 4 or c.current_pc != 0 or spec.op_trace]
    assert [c.core_id for c in inc.cores] == [c.core_id for c in visible]
    counter = {c: (i, s) for c, i, s in spec.counters}
    for want, got in zip(visible, inc.cores, strict=True):
        if d == 0 or (want.current_pc == 0 and d <= 4):
            assert got.matched is None and got.current_pc is None
        else:
            assert got.current_pc == want.current_pc
            assert got.matched is (want.match is not None and want.current_pc != 0)
            if got.matched:
                assert (got.node, got.entry) == want.match
        if d == 0 or spec.op_trace:
            assert got.trace is not None and (got.trace.op_id, got.trace.op_state) == counter[want.core_id]
        else:
            assert got.trace is None
        if d >= 4:
            assert got.cond is not None
            value = (
                want.cond
                if want.cond is not None
                else encode_cond(counter[want.core_id][1], counter[want.core_id][0], 3, 0)
            )
            assert (got.cond.value if not got.cond.unavailable else 0) == value
        else:
            assert got.cond is None
    if d >= 2:
        assert inc.model_map is not None and len(inc.model_map.entries) == 1
    else:
        assert inc.model_map is None
    assert (inc.callback_b is not None) == (spec.callback_b is not None and d >= 4)
    if level == "INFO":
        assert inc.counters is not None and len(inc.counters.entries) == spec.aicore_nums
    # the file-logger copy parses to the same structure and deduplicates with the plog copy
    rf = parse_sk_messages(messages_from_filelog(to_filelog_lines(spec)))
    assert rf.unrecognized == [] and len(rf.incidents) == 1
    fi = rf.incidents[0]
    assert [(c.core_id, c.matched, c.node) for c in fi.cores] == [
        (c.core_id, c.matched, c.node) for c in inc.cores
    ]
    assert len(dedupe_incidents([inc, fi])) == 1
