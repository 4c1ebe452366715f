"""Renderers for the CANN runtime / GE / adump lines around an AI Core fault (artifacts.md §1.5).

Why: no public plog of an SK failure exists (§3.14), so parser tests, the example scene and the
benchmarks render these lines from the spec's wording. Message builders (``*_msg``) return the
message body only, so the same text can be wrapped as a plog record (:func:`runtime_line`,
:func:`ge_line`, :func:`idedd_line`) or as error-manager text (:func:`error_manager_block`, row 11).
Wordings marked "real" are copied in shape from runtime source or CANN troubleshooting examples; the
``Begin to dump callback exception`` and ``dump exception to file`` bodies are constructed around the
fields the official analyser (MSA) extracts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta

from skdbg.scenebuilder.lines import plog_line, runtime_plog_line

PROC = "python3"


def kernel_fault_msg(
    *,
    wording: str = "hybrid",
    device_id: int = 0,
    stream_id: int = 2,
    report_stream_id: int | None = None,
    task_id: int = 1,
    flip_num: int = 0,
    kernel_name: str = "sk_entry_mix11_op_trace",
    info_ext: str | None = "none",
    program_id: int = 1,
    hash_text: str = "9430089888170931922",
    ending: str | None = None,
) -> str:
    """Kernel identification line (§1.5 item 4). ``wording``: old | hybrid | new | ffts.

    ``ending`` (``program is NULL!`` / ``ctx is NULL!`` / ``module is nullptr!``) replaces program id
    and hash.
    """
    phrase = {
        "old": "Aicore kernel execute failed",
        "hybrid": "[DFX_INFO]Aicore kernel execute failed",
        "new": "[DFX_INFO]AI Core kernel execution failed",
        "ffts": "fftsplus task execute failed",
    }[wording]
    rs = stream_id if report_stream_id is None else report_stream_id
    text = (
        f"{phrase}, device_id={device_id}, stream_id={stream_id}, report_stream_id={rs}, task_id={task_id}, "
        f"flip_num={flip_num}, fault kernel_name={kernel_name}"
    )
    if info_ext is not None:
        text += f", fault kernel info ext={info_ext}"
    if ending is not None:
        return f"{text}, {ending}"
    return f"{text}, program id={program_id}, hash={hash_text}."


def core_report_msg(
    *,
    chip_id: int = 0,
    die_id: int = 0,
    serial: int = 1,
    kind: str = "aivec error exception",
    core_id: int = 30,
    error_code: str = "0x800000",
    pc_start: int = 0x124080A03C00,
    pc_current: int = 0x124080C07E58,
    para_base: int = 0x12C100000080,
    a5: bool = False,
    wording: str = "there_is",
) -> str:
    """Device core report (§1.5 item 1). ``a5`` renders ProcessDavidStarsCoreErrorInfo's layout
    (``sc error info``, ``su error info: a,b``, ``l1 error info``, ``mte error``); ``wording="the_error_is"``
    renders the newer ``An error occurs on the device(…), the serial number is N, the error is <kind>``
    form."""
    if wording == "the_error_is":
        head = (
            f"An error occurs on the device(chipId:{chip_id}, dieId:{die_id}), "
            f"the serial number is {serial}, "
            f"the error is {kind}, core id is {core_id}, error code = {error_code}, dump info: "
        )
    else:
        head = (
            f"The error from device(chipId:{chip_id}, dieId:{die_id}), serial number is {serial}, "
            f"there is an {kind}, core id is {core_id}, error code = {error_code}, dump info: "
        )
    if a5:
        body = (
            f"pc start: {pc_start:#x}, current: {pc_current:#x}, sc error info: 0xffffffffffff, "
            "su error info: 0xeadbe7fe29c20051,0x80400000f800f7da, mte error info: 0x2f40000025969, "
            "vec error info: 0xbf7f93fe007efefa, cube error info: 0, l1 error info: 0, "
            "aic error mask: 0x395856, "
            f"para base: {para_base:#x}, mte error: 0."
        )
    else:
        body = (
            f"pc start: {pc_start:#x}, current: {pc_current:#x}, vec error info: 0x5104540702, "
            "mte error info: 0x1003000072, ifu error info: 0x4289505b1ac00, "
            "ccu error info: 0x172d1b826001020, "
            "cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd000288, "
            f"para base: {para_base:#x}."
        )
    return head + body


def extend_info_msg(
    *,
    errcodes: Sequence[str] = ("0x800000", "0", "0"),
    error_str: str = "",
    a5: bool = False,
    sub_err_type: int = 4,
) -> str:
    """``The extend info: errcode:(…) errorStr: …`` following a core report (§1.5 item 1)."""
    es = error_str or "The DDR address of the MTE instruction is out of range."
    codes = ", ".join(errcodes)
    if a5:
        return f"The extend info: errcode:({codes}) errorStr: {es} subErrType: {sub_err_type:#x}."
    return (
        f"The extend info: errcode:({codes}) errorStr: {es} fixp_error0 info: 0x3000072, fixp_error1: 0x10 "
        f"fsmId:0, tslot:0, thread:0, ctxid:0, blk:0, sublk:0, subErrType:{sub_err_type}"
    )


def kernel_task_error_msg(
    *, ret_code: int = 0x31, reason: str = "vector core exception", new: bool = True
) -> str:
    """§1.5 item 2 (old ``Kernel task happen error`` / new ``An error occurred in the kernel task``)."""
    phrase = "An error occurred in the kernel task" if new else "Kernel task happen error"
    return f"{phrase}, retCode={ret_code:#x}, [{reason}]."


def ffts_fault_msg(
    *,
    device_id: int = 0,
    stream_id: int = 2,
    task_id: int = 1948,
    context_id: int = 0,
    thread_id: int = 0,
    err_type: int = 11,
    err_desc: str = "fftsplus aicore error",
    pc_start: int = 0x124DBCE99914,
    kernel_name: str = "sk_entry_mix_aic",
) -> str:
    """FFTS+ fault (§1.5 item 2, row 18; shape from a CANN troubleshooting log)."""
    return (
        f"fftsplus task execute failed, dev_id={device_id}, stream_id={stream_id}, task_id={task_id}, "
        f"context_id={context_id}, thread_id={thread_id}, err_type={err_type}[{err_desc}], "
        f"pcStart={pc_start:#x}, kernelName:{kernel_name}"
    )


def stream_sync_failed_msg(
    *, stream_id: int = 2, ret_code: int = 0x31, reason: str = "vector core exception"
) -> str:
    """§1.5 item 3."""
    return f"Stream Synchronize failed, stream_id={stream_id}, retCode={ret_code:#x}, [{reason}]."


def errcode_msg(*, code: int = 507035, desc: str = "vector core exception", inner: int = 0x715005E) -> str:
    """§1.5 item 6 body; the ``<api>`` is the plog function (e.g. ``rtStreamSynchronize``)."""
    return f"ErrCode={code}, desc=[{desc}], InnerCode={inner:#x}"


def error_tracking_msg(
    *, origin_op_name: str, op_name: str | None = None, task_id: int = 0, stream_id: int = 70
) -> str:
    """GE ``ErrorTrackingCallback`` body (§1.5 item 7; shape from the TA fixture)."""
    op = origin_op_name if op_name is None else op_name
    return (
        f"ErrorNo: 4294967295(failed)Error happened, origin_op_name [{origin_op_name}], op_name [{op}], "
        f"task_id {task_id}, stream_id {stream_id}."
    )


def dump_exception_msg(
    *,
    core_id: int = 3,
    core_type: int = 0,
    start_pc: int,
    current_pc: int,
    symbol_name: str,
    symbol_size: int,
    symbol_offset: int,
    offset: int | None = None,
) -> str:
    """adump ``[Dump][Exception]`` (§1.5 item 8): hex without ``0x``.

    ``offset`` defaults to current − start.
    """
    off = current_pc - start_pc if offset is None else offset
    return (
        f"[Dump][Exception] coreId={core_id}, coreType={core_type}, startPC={start_pc:x}, "
        f"currentPC={current_pc:x}, "
        f"offset={off:x}, symbol name={symbol_name}, symbol size={symbol_size:x}, "
        f"symbol offset={symbol_offset:x}"
    )


def dump_callback_msg(*, kernel_name: str, stream_id: int = 2, task_id: int = 1) -> str:
    """``Begin to dump callback exception … kernelName=<name>.`` (constructed around MSA's regex)."""
    return (
        f"Begin to dump callback exception, stream_id={stream_id}, task_id={task_id}, "
        f"kernelName={kernel_name}."
    )


def dump_to_file_msg(*, device_id: int = 0, file_name: str = "Add.add_custom.2.1.1775000000000000") -> str:
    """``dump exception to file …`` with the ``extra-info/data-dump/<dev>/<name>`` path MSA extracts."""
    return f"dump exception to file /home/user/ascend/extra-info/data-dump/{device_id}/{file_name}"


def report_module_msg(*, module_type: int = 5, module_name: str = "EZ9999") -> str:
    return f"report error module_type={module_type}, module_name={module_name}"


def runtime_line(
    ts: datetime,
    msg: str,
    *,
    pid: int = 48213,
    proc: str = PROC,
    tid: int = 48301,
    func: str = "GetError",
    tags: str = "[INIT][DEFAULT]",
    level: str = "ERROR",
    src_file: str = "stream.cc",
    src_line: int = 1512,
) -> str:
    """A RUNTIME record ``<tid> <Function>:<tags><msg>`` (§1.2)."""
    return runtime_plog_line(
        level, pid, proc, ts, tid, func, tags + msg, src_file=src_file, src_line=src_line
    )


def ge_line(
    ts: datetime,
    msg: str,
    *,
    pid: int = 48213,
    proc: str = PROC,
    tid: int = 48301,
    func: str = "ErrorTrackingCallback",
    level: str = "ERROR",
    src_file: str = "error_tracking.cc",
    src_line: int = 177,
) -> str:
    """A GE record ``<tid> <Function>: <msg>`` (§1.2)."""
    return runtime_plog_line(
        level, pid, proc, ts, tid, func, " " + msg, module="GE", src_file=src_file, src_line=src_line
    )


def idedd_line(
    ts: datetime,
    msg: str,
    *,
    pid: int = 48213,
    proc: str = PROC,
    tid: int = 48301,
    level: str = "ERROR",
    src_file: str = "kernel_info_collector.cpp",
    src_line: int = 534,
) -> str:
    """An adump record ``[tid:<tid>] <msg>`` (§1.2)."""
    return plog_line(level, "IDEDD", pid, proc, ts, src_file, src_line, f"[tid:{tid}] {msg}")


def error_manager_block(
    entries: Sequence[tuple[str, str, str, int]], *, code: str = "EZ9999", indent: str = "        "
) -> list[str]:
    """User-facing error-manager text (§1.5 item 9, row 11).

    ``entries`` are ``(message, FUNC, FILE, LINE)``; the first is printed with the code prefix, the rest
    under an indented ``TraceBack (most recent call last):`` header, each with its ``[FUNC:…]`` suffix.
    """
    out = [f"{code}: Inner Error!"]
    for i, (msg, func, file, line) in enumerate(entries):
        suffix = f"[FUNC:{func}][FILE:{file}][LINE:{line}]"
        if i == 0:
            out.append(f"{code}: {msg}{suffix}")
            out.append(f"{indent}TraceBack (most recent call last):")
        else:
            out.append(f"{indent}{msg}{suffix}")
    return out


def runtime_incident_lines(
    ts: datetime,
    *,
    pid: int = 48213,
    kernel_name: str = "sk_entry_mix11_op_trace",
    core_id: int = 30,
    pc_start: int = 0x124080A03C00,
    pc_current: int = 0x124080C07E58,
    para_base: int = 0x12C100412000,
    stream_id: int = 2,
    task_id: int = 1,
) -> list[str]:
    """The runtime side of one AI Core fault, in the §1.5 order (items 1–4 and 6)."""
    step = timedelta(microseconds=37)

    def at(k: int) -> datetime:
        return ts + k * step

    def core_line(k: int, msg: str) -> str:
        return runtime_line(
            at(k),
            msg,
            pid=pid,
            func="ProcessStarsCoreErrorInfo",
            tags="[EXEC][EXEC]",
            src_file="device_error_proc.cc",
            src_line=1166,
        )

    return [
        core_line(0, report_module_msg()),
        core_line(
            1, core_report_msg(core_id=core_id, pc_start=pc_start, pc_current=pc_current, para_base=para_base)
        ),
        core_line(2, extend_info_msg()),
        runtime_line(
            at(3),
            kernel_task_error_msg(),
            pid=pid,
            func="PreCheckTaskErr",
            src_file="davinci_kernel_task.cc",
            src_line=1200,
        ),
        runtime_line(at(4), stream_sync_failed_msg(stream_id=stream_id), pid=pid, src_line=1509),
        runtime_line(
            at(5),
            kernel_fault_msg(kernel_name=kernel_name, stream_id=stream_id, task_id=task_id),
            pid=pid,
            func="PrintErrorInfoForDavinciTask",
            tags="",
            src_file="davinci_kernel_task.cc",
            src_line=1639,
        ),
        runtime_line(
            at(6),
            errcode_msg(),
            pid=pid,
            func="rtStreamSynchronize",
            src_file="api_c.cc",
            src_line=782,
        ),
    ]


_NOISE_OPS = ("Add", "MatMulV3", "RmsNorm", "Cast", "Transpose", "GatherV2", "Softmax", "FlashAttentionScore")


def noise_lines(rng: random.Random, n: int, *, pid: int = 48213, start: datetime | None = None) -> list[str]:
    """``n`` realistic non-fault lines (RUNTIME/GE/HCCL/PROFILING/ASCENDCL at INFO/DEBUG/EVENT/TRACE).

    They never contain a fault marker (``skdbg.parsers.plog.FAULT_MARKERS``), so a benchmark's marker
    count equals the number of incident lines it inserted.
    """
    ts = start or datetime(2026, 6, 10, 14, 0, 0)
    out: list[str] = []
    for _ in range(n):
        ts += timedelta(microseconds=rng.randrange(1, 400))
        tid = pid + rng.randrange(0, 40)
        k = rng.randrange(8)
        if k == 0:
            out.append(
                runtime_line(
                    ts,
                    f"stream_id={rng.randrange(128)}, task_id={rng.randrange(65536)}, task_type=0(kernel), "
                    f"sqe_pos={rng.randrange(1024)}, block_dim={rng.choice((24, 48, 20, 40))}",
                    pid=pid,
                    tid=tid,
                    func="AddTaskToStream",
                    tags="[EXEC][EXEC]",
                    level="INFO",
                    src_file="stream.cc",
                    src_line=rng.randrange(300, 3000),
                )
            )
        elif k == 1:
            out.append(
                runtime_line(
                    ts,
                    f"device_id=0, size={rng.randrange(1, 1 << 30)}, type=2, "
                    f"addr=0x12c{rng.randrange(1 << 36):09x}",
                    pid=pid,
                    tid=tid,
                    func="DevMemAlloc",
                    tags="[EXEC][EXEC]",
                    level="DEBUG",
                    src_file="npu_driver.cc",
                    src_line=rng.randrange(100, 2000),
                )
            )
        elif k == 2:
            op = rng.choice(_NOISE_OPS)
            out.append(
                ge_line(
                    ts,
                    f"[Launch] op {op}_{rng.randrange(999)} type {op} launched on stream "
                    f"{rng.randrange(64)}, "
                    f"iteration {rng.randrange(100000)}",
                    pid=pid,
                    tid=tid,
                    func="LaunchKernel",
                    level="INFO",
                    src_file="davinci_model.cc",
                    src_line=rng.randrange(100, 5000),
                )
            )
        elif k == 3:
            out.append(
                plog_line(
                    "INFO",
                    "HCCL",
                    pid,
                    PROC,
                    ts,
                    "hccl_communicator.cc",
                    rng.randrange(100, 3000),
                    f"[{tid}]Entry-HcclAllReduce:tag[AllReduce_10.0.0.1%eth0_60000_0_1], "
                    f"count[{rng.randrange(1 << 20)}], "
                    f"dataType[float16], op[sum], localRank[{rng.randrange(8)}], "
                    f"streamId[{rng.randrange(100)}]",
                )
            )
        elif k == 4:
            out.append(
                plog_line(
                    "EVENT",
                    "PROFILING",
                    pid,
                    PROC,
                    ts,
                    "msprof_callback_impl.cpp",
                    rng.randrange(50, 400),
                    f"{tid} MsprofReporterCallbackImpl:report data, module={rng.randrange(20)}, "
                    f"len={rng.randrange(4096)}",
                )
            )
        elif k == 5:
            out.append(
                plog_line(
                    "INFO",
                    "ASCENDCL",
                    pid,
                    PROC,
                    ts,
                    "acl_rt.cpp",
                    rng.randrange(50, 900),
                    f"{tid} aclrtLaunchKernelWithConfig: start to launch kernel, "
                    f"blockDim={rng.randrange(1, 49)}, "
                    f"stream={rng.randrange(1 << 40):#x}",
                )
            )
        elif k == 6:
            out.append(
                ge_line(
                    ts,
                    f"Graph {rng.randrange(16)} run finished, session {rng.randrange(4)}, "
                    f"cost {rng.randrange(100000)} us",
                    pid=pid,
                    tid=tid,
                    func="RunGraphAsync",
                    level="TRACE",
                    src_file="graph_manager.cc",
                    src_line=rng.randrange(100, 4000),
                )
            )
        else:
            out.append(
                runtime_line(
                    ts,
                    f"Stream synchronize succeeded, stream_id={rng.randrange(128)}, "
                    f"cost={rng.randrange(10000)}us",
                    pid=pid,
                    tid=tid,
                    func="StreamSynchronize",
                    tags="[EXEC][EXEC]",
                    level="INFO",
                    src_file="logger.cc",
                    src_line=488,
                )
            )
    return out
