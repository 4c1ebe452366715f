"""Runtime fault lines (artifacts.md §1.5, §7.1 row 11 and §7.2 rows 12–23)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.plog import read_plog, scan_plog
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.runtime_faults import (
    ApiErrCode,
    CoreErrorExtend,
    CoreErrorReport,
    DumpCallbackBegin,
    DumpException,
    DumpToFile,
    ErrorManagerLine,
    ErrorReportModule,
    ErrorTracking,
    FftsPlusFault,
    KernelFaultLine,
    KernelTaskError,
    RuntimeRecord,
    StreamSyncFailed,
    classify_message,
    classify_runtime,
    fault_kind,
    parse_error_manager_line,
    runtime_frame,
    split_sk_scope_name,
)
from skdbg.scenebuilder import plog as sb

TS = datetime(2026, 6, 10, 14, 3, 21, 518402)


def classify(line: str) -> RuntimeRecord | None:
    rec = parse_plog_line(line, Source("plog-48213_1.log", 5))
    assert rec is not None
    return classify_runtime(rec)


def kernel_fault(**kw: object) -> KernelFaultLine:
    r = classify(sb.runtime_line(TS, sb.kernel_fault_msg(**kw), func="PrintErrorInfoForDavinciTask", tags=""))  # type: ignore[arg-type]
    assert isinstance(r, KernelFaultLine)
    return r


def test_row12_old_kernel_fault() -> None:
    """Row 12: old `Aicore kernel execute failed … fault kernel info ext=none, program id=0, hash=…`."""
    r = kernel_fault(
        wording="old",
        stream_id=2,
        task_id=1,
        kernel_name="sk_entry_mix11_op_trace",
        program_id=0,
        hash_text="1104",
    )
    assert (r.wording, r.device_id, r.stream_id, r.report_stream_id, r.task_id, r.flip_num) == (
        "old",
        0,
        2,
        2,
        1,
        0,
    )
    assert (r.kernel_name_raw, r.info_ext, r.program_id, r.hash, r.ending) == (
        "sk_entry_mix11_op_trace",
        "none",
        0,
        "1104",
        None,
    )
    assert (r.kernel_name, r.kind, r.reporter) == (
        "sk_entry_mix11_op_trace",
        "sk",
        "PrintErrorInfoForDavinciTask",
    )


def test_row12_real_troubleshooting_line() -> None:
    """Row 12 on a verbatim line from the CANN troubleshooting guide (GetError, [INIT][DEFAULT] tags)."""
    line = (
        "[ERROR] RUNTIME(539029,python3):2024-03-25-11:22:02.462.346 [stream.cc:1512]539029 "
        "GetError:[INIT][DEFAULT]"
        "Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, "
        "fault kernel_name=Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000, "
        "fault kernel info ext=none, program id=0, hash=11042444066001143980."
    )
    r = classify(line)
    assert isinstance(r, KernelFaultLine)
    assert (r.wording, r.stream_id, r.task_id, r.hash, r.kind, r.reporter) == (
        "old",
        2,
        1,
        "11042444066001143980",
        "non_sk",
        "GetError",
    )
    assert r.kernel_name == "Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000"


def test_row13_new_and_hybrid_wording() -> None:
    """Row 13: `[DFX_INFO]AI Core kernel execution failed` and hybrid `[DFX_INFO]Aicore kernel execute …`.

    Both carry the same fields.
    """
    new = kernel_fault(wording="new", stream_id=7, report_stream_id=9, task_id=33, flip_num=2)
    hyb = kernel_fault(wording="hybrid", stream_id=7, report_stream_id=9, task_id=33, flip_num=2)
    for r, w in ((new, "new"), (hyb, "hybrid")):
        assert (r.wording, r.stream_id, r.report_stream_id, r.task_id, r.flip_num) == (w, 7, 9, 33, 2)
        assert (r.kernel_name, r.program_id, r.hash) == ("sk_entry_mix11_op_trace", 1, "9430089888170931922")


def test_row14_endings_without_hash() -> None:
    """Row 14: variants ending `program is NULL!` / `ctx is NULL!` / `module is nullptr!`."""
    for ending in ("program is NULL!", "ctx is NULL!", "module is nullptr!"):
        r = kernel_fault(wording="hybrid", ending=ending, kernel_name="none", info_ext="none")
        assert (r.ending, r.hash, r.program_id, r.kernel_name, r.wording) == (
            ending,
            None,
            None,
            "none",
            "hybrid",
        )


def test_row15_ext_preferred_as_kernel_name() -> None:
    """Row 15: `fault kernel info ext=<name>` not `none` → ext is the kernel name (MSA rule)."""
    r = kernel_fault(kernel_name="AddCustom_1", info_ext="add_custom_1f2e3d_mix_aiv")
    assert (r.kernel_name_raw, r.info_ext, r.kernel_name, r.kind) == (
        "AddCustom_1",
        "add_custom_1f2e3d_mix_aiv",
        "add_custom_1f2e3d_mix_aiv",
        "non_sk",
    )
    sk = kernel_fault(kernel_name="sk_entry_aiv", info_ext="sk_entry_aiv_ext")
    assert (sk.kernel_name, sk.kind) == ("sk_entry_aiv_ext", "sk")


def test_fault_kinds() -> None:
    assert fault_kind("sk_entry_mix11_op_trace") == "sk"
    assert fault_kind("sk_constant_entry_3") == "sk_constant"
    assert fault_kind("te_superkernel_911c") == "ge_sk"
    assert fault_kind("Add_ee98") == "non_sk"
    assert fault_kind(None) == "non_sk"


def test_row16_core_reports_aic_aiv_and_a5() -> None:
    """Row 16: device core report for AIC and AIV kinds and the A5 (`sc error info`) layout."""
    aiv = classify(
        sb.runtime_line(
            TS, sb.core_report_msg(kind="aivec error exception", core_id=30), func="ProcessStarsCoreErrorInfo"
        )
    )
    aic = classify(
        sb.runtime_line(
            TS,
            sb.core_report_msg(kind="aicore error exception", core_id=3, error_code="0x4", serial=9),
            func="ProcessStarsCoreErrorInfo",
        )
    )
    a5 = classify(
        sb.runtime_line(
            TS,
            sb.core_report_msg(
                kind="aivec error", core_id=0, error_code="286", a5=True, wording="the_error_is"
            ),
            func="PrintDavidCoreInfo",
        )
    )
    assert (
        isinstance(aiv, CoreErrorReport)
        and isinstance(aic, CoreErrorReport)
        and isinstance(a5, CoreErrorReport)
    )
    assert (aiv.core_type, aiv.core_id, aiv.error_code, aiv.pc_start, aiv.pc_current, aiv.para_base) == (
        "AIV",
        30,
        0x800000,
        0x124080A03C00,
        0x124080C07E58,
        0x12C100000080,
    )
    assert (aic.core_type, aic.core_id, aic.error_code, aic.serial, aic.a5_format) == ("AIC", 3, 4, 9, False)
    assert (a5.wording, a5.core_type, a5.error_code, a5.a5_format) == ("the_error_is", "AIV", 286, True)
    assert dict(a5.dump_info)["su error info"] == "0xeadbe7fe29c20051,0x80400000f800f7da"


def test_row16_real_core_report_and_extend() -> None:
    """Row 16 on verbatim troubleshooting-guide lines (typo `vec error infor`, `errorcode:` spelling)."""
    core = (
        "[ERROR]  RUNTIME(2237671,python3) :2024-01-02-11:47:52.260.832 [device_error_proc.cc:1166]2479231 "
        "ProcessStarsCoreErrorInfo:[EXEC][EXEC]The error from device(chipId:5, dieId:0), serial number is 4, "
        "there is an aivec error exception, core id is 4, error code = 0x800000, "
        "dump info: pc start: 0x1240c144412c, "
        "current: 0x1240c1444210, vec error infor 0x5104540702, mte error info: 0x1003000072, "
        "ifu error info: "
        "0x4289505b1ac00, ccu error info: 0x172d1b826001020, cube error info: 0, biu error info:0, "
        "aic error mask: 0x6500020bd000288, para base: 0x124100043000."
    )
    ext = (
        "[ERROR]  RUNTIME(2237671,python3) :2024-01-02-11:47:52.260.922 [device_error_proc.cc:1178]2479231 "
        "ProcessStarsCoreErrorInfo:[EXEC][EXEC]The extend info: errorcode:(0x800000, 0, 0) errorStr: The DDR "
        "address of the MTE instruction is out of range. fixp_error0 info: 0x3000072, "
        "fixp_error1: 0x10 fsmId:0, "
        "tslot:0, thread:0, ctxid:0, blk:0, sublk:0, subErrType:4"
    )
    c = classify(core)
    e = classify(ext)
    assert isinstance(c, CoreErrorReport) and isinstance(e, CoreErrorExtend)
    assert (c.chip_id, c.serial, c.core_id, c.pc_start, c.pc_current, c.para_base) == (
        5,
        4,
        4,
        0x1240C144412C,
        0x1240C1444210,
        0x124100043000,
    )
    assert e.errcodes == ("0x800000", "0", "0")
    assert e.error_str == "The DDR address of the MTE instruction is out of range."
    assert e.sub_err_type == 4 and ("fsmId", "0") in e.fields


def test_row17_several_core_reports(tmp_path: Path) -> None:
    """Row 17: several core reports in one incident (different serial numbers) → list in file order."""
    lines = [
        sb.runtime_line(TS, sb.core_report_msg(serial=s, core_id=c), func="ProcessStarsCoreErrorInfo")
        for s, c in ((11, 30), (12, 31), (13, 2))
    ]
    f = tmp_path / "plog-48213_20260610140321518.log"
    f.write_text("\n".join(lines) + "\n")
    cores = [r for r in read_plog(f).faults if isinstance(r, CoreErrorReport)]
    assert [(r.serial, r.core_id, r.src.line) for r in cores] == [(11, 30, 1), (12, 31, 2), (13, 2, 3)]


def test_row18_fftsplus_variant() -> None:
    """Row 18: `fftsplus task execute failed … pcStart=0x…, kernelName:…` (and the short form)."""
    r = classify(
        sb.runtime_line(
            TS, sb.ffts_fault_msg(kernel_name="sk_entry_mix_aic"), func="PrintAicAivErrorInfoForFftsPlusTask"
        )
    )
    assert isinstance(r, FftsPlusFault)
    assert (r.device_id, r.stream_id, r.task_id, r.context_id, r.thread_id, r.err_type, r.err_desc) == (
        0,
        2,
        1948,
        0,
        0,
        11,
        "fftsplus aicore error",
    )
    assert (r.pc_start, r.kernel_name, r.kind) == (0x124DBCE99914, "sk_entry_mix_aic", "sk")
    short = classify_message(
        "fftsplus task execute failed, dev_id=0, stream_id=2, task_id=1948, context_id=0, thread_id=0.",
        Source("f", 1),
    )
    assert isinstance(short, FftsPlusFault)
    assert (short.task_id, short.pc_start, short.kernel_name) == (1948, None, None)
    # FFTS+ kernel-identification form (MSA test data) is a KernelFaultLine
    ident = kernel_fault(wording="ffts", kernel_name="2_0_11_GatherV2")
    assert (ident.wording, ident.kernel_name) == ("ffts", "2_0_11_GatherV2")


def test_row19_errcode_table() -> None:
    """Row 19: `ErrCode=507015/507035/507018` → code table lookup; api from the plog function."""
    for code, word in ((507015, "AI Core exception"), (507035, "vector core"), (507018, "AI CPU")):
        r = classify(sb.runtime_line(TS, sb.errcode_msg(code=code), func="rtStreamSynchronize"))
        assert isinstance(r, ApiErrCode)
        assert (r.api, r.err_code, r.desc, r.inner_code) == (
            "rtStreamSynchronize",
            code,
            "vector core exception",
            0x715005E,
        )
        assert r.meaning is not None and word in r.meaning
    unknown = classify_message("aclrtSynchronizeStream: ErrCode=123, desc=[x]", Source("f", 1))
    assert isinstance(unknown, ApiErrCode)
    assert (unknown.api, unknown.meaning, unknown.inner_code) == ("aclrtSynchronizeStream", None, None)


def test_other_runtime_lines() -> None:
    kt = classify(sb.runtime_line(TS, sb.kernel_task_error_msg(new=False, ret_code=0x2A)))
    assert isinstance(kt, KernelTaskError) and (kt.wording, kt.ret_code, kt.reason) == (
        "old",
        0x2A,
        "vector core exception",
    )
    ss = classify_message(
        "Stream Synchronize failed,  stream_id = 2,  retcode=0x10f,  [fftsplus task exception].",
        Source("f", 1),
    )
    assert isinstance(ss, StreamSyncFailed) and (ss.stream_id, ss.ret_code, ss.reason) == (
        2,
        0x10F,
        "fftsplus task exception",
    )
    rm = classify(sb.runtime_line(TS, sb.report_module_msg(module_type=3, module_name="EE8888")))
    assert isinstance(rm, ErrorReportModule) and (rm.module_type, rm.module_name) == (3, "EE8888")
    assert rm.meaning is not None
    dt = classify(sb.idedd_line(TS, sb.dump_to_file_msg(device_id=1, file_name="Add.add.2.1.17")))
    assert isinstance(dt, DumpToFile) and (dt.device_id, dt.file_name) == (1, "Add.add.2.1.17")


def test_row20_dump_exception_hex() -> None:
    """Row 20: IDEDD `[Dump][Exception] … startPC=<hex no 0x>` → hex ints; offset check."""
    ok = classify(
        sb.idedd_line(
            TS,
            sb.dump_exception_msg(
                start_pc=0x12C044E03000,
                current_pc=0x12C044E098B8,
                symbol_name="k__kernel0",
                symbol_size=0x1914,
                symbol_offset=0x6800,
            ),
        )
    )
    assert isinstance(ok, DumpException)
    assert (ok.start_pc, ok.current_pc, ok.offset, ok.symbol_size, ok.symbol_offset) == (
        0x12C044E03000,
        0x12C044E098B8,
        0x68B8,
        0x1914,
        0x6800,
    )
    assert ok.offset_consistent and ok.symbol_contains_offset
    bad = classify(
        sb.idedd_line(
            TS,
            sb.dump_exception_msg(
                start_pc=0x1000,
                current_pc=0x1100,
                offset=0x200,
                symbol_name="s",
                symbol_size=0x10,
                symbol_offset=0x0,
            ),
        )
    )
    assert isinstance(bad, DumpException)
    assert (bad.offset_consistent, bad.symbol_contains_offset) == (False, False)


def test_row21_dump_callback_trailing_dot() -> None:
    """Row 21: `Begin to dump callback exception … kernelName=<name>.` → SK marker, dot stripped."""
    r = classify(sb.idedd_line(TS, sb.dump_callback_msg(kernel_name="sk_entry_mix11_op_trace")))
    assert isinstance(r, DumpCallbackBegin)
    assert (r.kernel_name, r.kind) == ("sk_entry_mix11_op_trace", "sk")


def test_row22_jit_sk_name_split() -> None:
    """Row 22: GE `origin_op_name [sk_sp1_start_X_end_Y]` → scope/start/end (rightmost `_end_`)."""
    r = classify(
        sb.ge_line(
            TS,
            sb.error_tracking_msg(origin_op_name="sk_sp1_start_TransQuantParamV2_end_QuantBatchMatmulV3_2"),
        )
    )
    assert isinstance(r, ErrorTracking)
    assert r.sk_name is not None
    assert (r.sk_name.scope, r.sk_name.first, r.sk_name.last) == (
        "sp1",
        "TransQuantParamV2",
        "QuantBatchMatmulV3_2",
    )
    assert (r.task_id, r.stream_id, r.error_no, r.error_desc) == (0, 70, "4294967295", "failed")
    tricky = split_sk_scope_name("sk_s2_start_a_end_b_end_c")
    assert tricky is not None and (tricky.scope, tricky.first, tricky.last) == ("s2", "a_end_b", "c")
    assert split_sk_scope_name("MatMul_1") is None
    assert split_sk_scope_name("sk_x_end_y") is None


def test_row23_torchair_fixture_end_to_end(upstream: Path) -> None:
    """Row 23: TA fixture → JIT incident: te_superkernel_ kernel, origin_op_name, dump symbol in range."""
    f = upstream / "torchair-sk-case-plog" / "plog_excerpt.log"
    res = read_plog(f, pid=1567697)
    assert len(res.records) == 4 and not res.unrecognized and not res.gaps
    kf = [r for r in res.faults if isinstance(r, KernelFaultLine)]
    assert [(r.reporter, r.wording, r.stream_id, r.report_stream_id, r.task_id, r.kind) for r in kf] == [
        ("PrintErrorInfoForDavinciTask", "hybrid", 70, 73, 0, "ge_sk"),
        ("GetError", "hybrid", 70, 73, 0, "ge_sk"),
    ]
    assert (
        kf[0].kernel_name == "te_superkernel_911c4c5214b52a01ea224923a6130b1ff609f8f8759f8dc118fe65b846e4573e"
    )
    assert kf[0].hash == "9430089888170931922"
    (et,) = [r for r in res.faults if isinstance(r, ErrorTracking)]
    assert et.origin_op_name == "sk_sp1_start_TransQuantParamV2_end_QuantBatchMatmulV3_2"
    assert et.sk_name is not None and et.sk_name.last == "QuantBatchMatmulV3_2"
    (de,) = [r for r in res.faults if isinstance(r, DumpException)]
    assert de.symbol_name.endswith("__kernel0_middle_split3")
    assert (de.core_id, de.offset, de.symbol_size, de.symbol_offset) == (3, 0x68B8, 0x1914, 0x6800)
    assert de.offset_consistent and de.symbol_contains_offset
    assert len(list(scan_plog(f))) == 4


def test_row11_error_manager_block(tmp_path: Path) -> None:
    """Row 11: `EZ9999: Inner Error!` + TraceBack + `[FUNC:…][FILE:…][LINE:…]` → recognised, fields kept."""
    block = sb.error_manager_block(
        [
            (
                sb.core_report_msg(core_id=11, serial=2),
                "ProcessStarsCoreErrorInfo",
                "device_error_proc.cc",
                1100,
            ),
            (
                sb.extend_info_msg(errcodes=("0x10", "0", "0")),
                "ProcessStarsCoreErrorInfo",
                "device_error_proc.cc",
                1112,
            ),
            (sb.kernel_fault_msg(wording="old", kernel_name="sk_entry_aiv"), "GetError", "stream.cc", 1467),
            (
                "rtStreamSynchronize execute failed, reason=[The model stream execute failed]",
                "FuncErrorReason",
                "error_message_manage.cc",
                50,
            ),
        ]
    )
    f = tmp_path / "stderr.log"
    f.write_text(
        "\n".join([*block, '(Please search "Ascend Error Message" for error code description)']) + "\n"
    )
    res = read_plog(f)
    em = res.error_manager
    assert [e.code for e in em] == ["EZ9999", "EZ9999", None, None, None, None]
    assert em[0].body == "Inner Error!" and em[0].record is None
    assert isinstance(em[1].record, CoreErrorReport) and em[1].record.core_id == 11
    assert (em[1].func, em[1].file, em[1].line_no) == (
        "ProcessStarsCoreErrorInfo",
        "device_error_proc.cc",
        1100,
    )
    assert em[2].traceback
    assert isinstance(em[3].record, CoreErrorExtend) and em[3].record.errcodes == ("0x10", "0", "0")
    assert isinstance(em[4].record, KernelFaultLine) and em[4].record.kind == "sk"
    assert em[5].record is None and em[5].func == "FuncErrorReason"
    assert [u.text for u in res.unrecognized] == [
        '(Please search "Ascend Error Message" for error code description)'
    ]
    # new-style header with pid and timestamp
    new = parse_error_manager_line(
        "EZ9999[PID: 2574461] 2026-03-01-10:00:00.000.000 (EZ9999):  " + sb.core_report_msg(a5=True),
        Source("f", 1),
    )
    assert isinstance(new, ErrorManagerLine) and (new.code, new.pid) == ("EZ9999", 2574461)
    assert isinstance(new.record, CoreErrorReport) and new.record.a5_format


def test_runtime_frame_columns() -> None:
    recs = [kernel_fault(), classify(sb.idedd_line(TS, sb.dump_callback_msg(kernel_name="x")))]
    frame = runtime_frame([r for r in recs if r is not None])
    assert {"type", "file", "line", "kernel_name", "kind"} <= set(frame.columns)
    assert list(frame["type"]) == ["KernelFaultLine", "DumpCallbackBegin"]
    assert list(runtime_frame([]).columns) == ["type", "file", "line"]


@settings(max_examples=200)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    src = Source("f", 1)
    classify_message(text, src)
    parse_error_manager_line(text, src)


@settings(max_examples=100)
@given(
    stream=st.integers(0, 2**16),
    task=st.integers(0, 2**16),
    name=st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,40}", fullmatch=True),
    wording=st.sampled_from(["old", "hybrid", "new"]),
)
def test_generated_kernel_fault_round_trip(stream: int, task: int, name: str, wording: str) -> None:
    r = kernel_fault(wording=wording, stream_id=stream, task_id=task, kernel_name=name)
    assert (r.stream_id, r.task_id, r.kernel_name, r.wording) == (stream, task, name, wording)
