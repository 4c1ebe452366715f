"""Generate one JIT SuperKernel: C++ source (with the ``.ascend.meta`` trailer), compiled JSON, flags.

Why: skdbg regenerates the fused scopes of a candidate re-launch and must produce exactly what the
upstream generator would (the 31 ST goldens, item 52), so a reviewer can diff a regenerated SK
against the original.  Entry point: :func:`generate_superkernel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skdbg.codegen.fusion.blocks import ChildBlocks, call_func, child_blocks, ind
from skdbg.codegen.fusion.model import (
    Child,
    FusionInputError,
    KernelType,
    SkModel,
    SkRequest,
    build_model,
    task_ration,
)
from skdbg.codegen.fusion.options import EarlyStart, PreloadCode
from skdbg.codegen.fusion.render import render
from skdbg.codegen.fusion.streams import StreamGraph, build_stream_graph

AIC_SYNC = "\nffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));\nwait_flag_dev(AscendC::SYNC_AIC_FLAG);\n"
AIV_SYNC = (
    "\nffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIV_ONLY_ALL));\n"
    "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);\n"
)


@dataclass(frozen=True)
class SkResult:
    """What one generation produces."""

    kernel_name: str
    source: str
    compiled_json: dict[str, Any]
    flags: tuple[str, ...]
    model: SkModel


def sync_by_type(kind: KernelType) -> str:
    """Kernel-type sync (used by reason2 barriers and debug-sync-all)."""
    if kind.device == "mix":
        return "AscendC::SyncAll<false>();\n\n"
    return AIC_SYNC if kind.device == "aic" else AIV_SYNC


def _es_config(pre: Child, cur: Child) -> int:
    cfg = {"aic": 0, "aiv": 1, "mix": 2}
    return (cfg[pre.kernel_type.device] << 2) | cfg[cur.kernel_type.device]


def _inter_ops_barrier(m: SkModel, pre: tuple[Child, ChildBlocks], cur: tuple[Child, ChildBlocks]) -> str:
    out = "// begin inter ops barrier\n"
    mode = m.options.early_start
    if mode is EarlyStart.DISABLE:
        return out + "// reason2: inter op barrier when EarlyStartDisable\n" + sync_by_type(m.kernel_type)
    out += pre[1].es_set
    wait = cur[1].es_wait
    if mode in (EarlyStart.V2, EarlyStart.V2_NO_SUB_KERNEL):
        value = _es_config(pre[0], cur[0])
        out += f"g_super_kernel_early_start_config = {value};\n"
        wait = wait.replace("__placehoder__earlay_config__", str(value))
    return out + wait


def _wait_extra_sync(pre: Child, cur: Child) -> str:
    pair = (pre.kernel_type.device, cur.kernel_type.device)
    if pair in (("aic", "aiv"), ("aic", "mix")):
        return "// extra sync for wait event\nAscendC::SyncAll<true>();\n\n"
    if pair == ("aiv", "aic"):
        return (
            "\n// extra sync for wait event\n"
            "ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));\n"
            "wait_flag_dev(AscendC::SYNC_AIC_FLAG);\n"
        )
    return ""


def _sync_and_events(m: SkModel, pre: tuple[Child, ChildBlocks], cur: tuple[Child, ChildBlocks]) -> str:
    out = ""
    if cur[0].recv_events and pre[0].send_events:
        out += ind(_inter_ops_barrier(m, pre, cur)) + ind(pre[1].notify)
        if cur[1].wait:
            out += (
                ind(cur[1].wait)
                + "// reason3: for continues notify/wait event\n"
                + ind(sync_by_type(m.kernel_type))
            )
        return out
    if cur[0].recv_events:
        out += ind(cur[1].wait) + ind(_wait_extra_sync(pre[0], cur[0]))
    out += ind(_inter_ops_barrier(m, pre, cur))
    if pre[0].send_events:
        out += ind(pre[1].notify)
    return out


def _feed_sync_init(m: SkModel, c: Child) -> tuple[str, bool]:
    if not m.options.feed_sync_all:
        return "", False
    if not _needs_feed_sync(m, c):
        return "AscendC::g_superKernelAutoSyncAllEnable = false;\n", False
    i, n = c.index, len(m.children)
    return (
        "\nAscendC::g_superKernelAutoSyncAllSyncIdx = 0;\nAscendC::g_superKernelAutoSyncAllEnable = true;\n"
        "if ASCEND_IS_AIC {\n"
        f"    AscendC::g_superKernelAutoSyncAllConfigGmAddr = AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr + {i} * 64;\n"
        "}\nif ASCEND_IS_AIV {\n"
        "    AscendC::g_superKernelAutoSyncAllConfigGmAddr = AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr + "
        f"{n} * 64 + {i} * 64;\n}}\n",
        True,
    )


def _needs_feed_sync(m: SkModel, c: Child) -> bool:
    if not c.with_sync_all:
        return False
    if m.block_num == c.block_num and m.kernel_type is c.kernel_type:
        return False
    if m.kernel_type in (KernelType.MIX_AIC_1_0, KernelType.MIX_AIV_1_0, KernelType.MIX_AIC_1_1):
        return c.block_num < m.block_num
    if c.kernel_type.device in ("aic", "mix"):
        return c.block_num < m.block_num
    return c.block_num < m.block_num * 2


def _clear_workspace(m: SkModel) -> str:
    if not m.options.feed_sync_all:
        return ""
    kind = {KernelType.MIX_AIC_1_0: "aic", KernelType.MIX_AIV_1_0: "aiv"}.get(m.kernel_type, "mix")
    size = m.workspace_size if m.kernel_type is KernelType.MIX_AIC_1_1 else m.workspace_size // 2
    if kind != "mix":
        size = m.workspace_size
    return render("feed_sync_clear.cpp.j2", kind=kind, size=size, c310=m.soc.chip == "c310")


def _profiling_record(m: SkModel, start: bool) -> str:
    if not m.options.profiling:
        return ""
    return f"RecordProfiling(0, 0, {'true' if start else 'false'});\n"


def _clear_wait_locks(m: SkModel) -> str:
    out = ""
    for c in m.children:
        for k, ev in enumerate(c.recv_events):
            if ev in m.inner_events:
                continue
            if c.kernel_type.device == "aic":
                out += ind("if ASCEND_IS_AIC {\n") + ind("    if (get_block_idx() == 0) {\n")
            else:
                out += ind("if ASCEND_IS_AIV {\n") + ind("    if (AscendC::GetBlockIdx() == 0) {\n")
            out += ind(
                f"        *(reinterpret_cast<__gm__ uint64_t*>(param_base[{c.wait_param_offset + k}])) = 0;\n"
            )
            out += ind("    }\n") + ind("}\n")
    return out


def _align_attr(m: SkModel) -> str:
    return f"__attribute__((aligned({m.options.func_align})))" if m.options.func_align else ""


def _prologue_head(m: SkModel) -> str:
    """Workspace, feed-sync base, dump and profiling setup lines of the entry."""
    p = len(m.params)
    out = ""
    ws_offset = p if m.soc.chip == "c310" and not m.two_stream else p + 1
    if m.timestamp or m.options.feed_sync_all:
        out += f"    GM_ADDR workspace = param_base[{ws_offset}];\n"
    if m.options.feed_sync_all:
        out += "    AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr = workspace;\n"
    prof = None
    if m.timestamp:
        is_mix = "true" if m.kernel_type.device == "mix" else "false"
        out += "    #if defined ASCENDC_DUMP || defined ASCENDC_TIME_STAMP_ON\n"
        out += "    constexpr uint32_t ASCENDC_DUMP_SIZE = 0;\n"
        out += f"    AscendC::InitDump({is_mix}, workspace + {m.workspace_size}, ASCENDC_DUMP_SIZE);\n"
        out += "    #endif\n"
        if m.options.profiling:
            prof = ws_offset + 1
    elif m.options.profiling:
        prof = p + 1
    if prof is not None:
        out += f"    GM_ADDR profilingPtr = param_base[{prof}];\n"
        out += f"    uint32_t taskId = *((__gm__ uint32_t*)(get_para_base() + 8 * {prof + 1}));\n"
        out += "    InitProfiling(taskId, profilingPtr);\n"
    return out


_FFTS = (
    "    GM_ADDR ffts_addr = param_base[0];\n    if (ffts_addr != nullptr) {\n"
    "        set_ffts_base_addr((uint64_t)ffts_addr);\n    }\n\n"
)


def _dynamic_locals(m: SkModel) -> str:
    if not any(c.dynamic for c in m.children):
        return ""
    out = "    uint64_t aiv_func_addr = 0;\n    uint64_t aic_func_addr = 0;\n    uint64_t dy_blockNum = 0;\n"
    for i in range(1, m.options.split_mode):
        out += f"    uint64_t aiv_func_addr_split{i} = 0;\n    uint64_t aic_func_addr_split{i} = 0;\n"
    return out


def _switch_call(m: SkModel, c: Child, b: ChildBlocks, first: bool) -> str:
    if not c.dynamic:
        return ""
    out = f"\n    {b.switch_call}\n"
    if m.kernel_type.device == "aiv":
        lines = [
            f"preload((const void *){v}, 8);\n" for v in _split_names("aiv_func_addr", m.options.split_mode)
        ]
        out = f"\n    {b.switch_call}\n{ind(call_func(c, lines, 'ASCEND_IS_AIV', 'AscendC::GetBlockIdx'))}\n"
    if first and not m.two_stream:
        out += ind("pipe_barrier(PIPE_ALL);\n")
        out += ind("AscendC::SyncAll<false>(); // reason3: dynamic gen_switch_case_block when no pre op\n")
    return out


def _split_names(name: str, split: int) -> list[str]:
    return [name] + [f"{name}_split{j}" for j in range(1, split)]


def _preloads(m: SkModel, items: list[tuple[Child, ChildBlocks]], i: int) -> str:
    out = ""
    if m.options.preload is PreloadCode.STEP_BY_STEP:
        out += ind(items[i][1].preload)
    if m.options.preload is PreloadCode.ADVANCE_STEP:
        if i == 0:
            out += ind(items[i][1].preload)
        if i + 1 < len(items):
            out += ind(items[i + 1][1].preload)
    return out


def _child_body(m: SkModel, c: Child, b: ChildBlocks, debug_sync: str) -> str:
    init, with_sync = _feed_sync_init(m, c)
    out = ind(init)
    if m.options.profiling:
        out += ind(f"RecordProfiling({c.index + 1}, 0x8, true);\n")
    out += ind(b.call_with_syncall if with_sync else b.call)
    if m.options.debug_dcci_all:
        out += ind("// op end debug dcci all.\npipe_barrier(PIPE_ALL);\n" + _dcci())
    out += ind(debug_sync)
    if m.options.profiling:
        out += ind(f"RecordProfiling({c.index + 1}, 0x8, false);\n")
    return out


def _dcci() -> str:
    return "dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT);\n\n"


def _single_stream(m: SkModel, items: list[tuple[Child, ChildBlocks]]) -> str:
    out: list[str] = [
        f'extern "C"  __global__ {_align_attr(m)} __aicore__ void auto_gen_{m.kernel_name}_kernel(void) {{\n'
    ]
    out.append("    GM_ADDR *param_base = (GM_ADDR *)get_para_base();\n")
    out.append(_prologue_head(m))
    if m.soc.has_ffts:
        out.append(_FFTS)
    out.append(ind(_clear_workspace(m)))
    out.append(_dynamic_locals(m))
    if m.options.preload is PreloadCode.WHOLE:
        out.append(ind("AscendC::PreLoad(8);\n"))
    out.append(ind(_profiling_record(m, True)))
    debug_sync = (
        "// op end debug sync all.\n" + sync_by_type(m.kernel_type) if m.options.debug_sync_all else ""
    )
    for i, (c, b) in enumerate(items):
        out.append(ind(f"//begin func call of sub operator {c.kernel_name}\n"))
        out.append(_switch_call(m, c, b, i == 0))
        out.append(_preloads(m, items, i))
        if i == 0 and c.recv_events:
            raise FusionInputError(
                f"first op of super kernel must not have any recv event, op:{c.kernel_name}, event_list:{c.recv_events}"
            )
        if i > 0:
            out.append(_sync_and_events(m, items[i - 1], (c, b)))
        out.append(_child_body(m, c, b, debug_sync))
        if i == len(items) - 1 and c.send_events:
            raise FusionInputError(
                f"last op of super kernel must not have any send event, op:{c.kernel_name}, event_list:{c.send_events}"
            )
    out.append(_clear_wait_locks(m))
    out.append(ind(_profiling_record(m, False)))
    out.append("}\n\n")
    return "".join(out)


# --- two-stream mode ---------------------------------------------------------------------------


def _send_code(m: SkModel, g: StreamGraph, c: Child, b: ChildBlocks, arch: str) -> str:
    if c.index == m.children[-1].index:
        return ""
    notify_for_last = c.is_last_op and bool(b.notify_aic or b.notify_aiv)
    need = False
    if arch == "aic":
        code = f"// Rule 1 : sync all {arch} must be insert behind each {arch} sub operator, when has real send info\n"
        code += f"// sync all C->C kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.send_info)}\n"
        code += "ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));\n"
        code += "wait_flag_dev(AscendC::SYNC_AIC_FLAG);\n\n"
        for value in c.send_info.values():
            pairs = value.split(";")
            if "cub:cub" in pairs or "vec:cub" in pairs:
                need = True
            if "cub:vec" in pairs:
                code += (
                    "// Rule 3.1 : sync all c2v must be insert when sendinfo has c2v, "
                    f"kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.send_info)}\n"
                )
                code += "// send sync of C->V;\n"
                code += "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x02, AscendC::SYNC_AIC_AIV_FLAG));\n\n"
                need = True
        last = g.cub[-1]
    else:
        code = f"// Rule 1 : sync all {arch} must be insert behind each {arch} sub operator, when has real send info\n"
        code += f"// sync all V->V kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.send_info)}\n"
        code += "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIV_ONLY_ALL));\n"
        code += "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);\n\n"
        for value in c.send_info.values():
            pairs = value.split(";")
            if "vec:vec" in pairs or "cub:vec" in pairs:
                need = True
            if "vec:cub" in pairs:
                code += (
                    "// Rule 3.1 : sync all v2c must be insert when sendinfo has v2c, "
                    f"kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.send_info)}\n"
                )
                code += "// send sync of V->C;\n"
                code += (
                    "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x02, AscendC::SYNC_AIV_FLAG));\n\n"
                )
                need = True
        last = g.vec[-1]
    if need or notify_for_last:
        return code
    if not c.send_info and c is not last:
        return "// insert pipe all for ops\n   pipe_barrier(PIPE_ALL);\n"
    return ""


def _pyrepr(d: dict[str, str]) -> str:
    return repr(d)


def _recv_code(c: Child, arch: str) -> str:
    out = ""
    for value in c.recv_info.values():
        pairs = value.split(";")
        if arch == "aic" and "vec:cub" in pairs:
            out += (
                "// Rule 3.2 : sync all v2c must be insert when recvinfo has v2c, "
                f"kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.recv_info)}\n"
                "// receive sync of V->C;\nwait_flag_dev(AscendC::SYNC_AIV_FLAG);\n"
            )
        if arch == "aiv" and "cub:vec" in pairs:
            out += (
                "// Rule 3.2 : sync all c2v must be insert when recvinfo has c2v, "
                f"kernel_name:{c.kernel_name}, send_info:{_pyrepr(c.recv_info)}\n"
                "// receive sync of C->V;\nwait_flag_dev(AscendC::SYNC_AIC_AIV_FLAG);\n"
            )
    return out


def _notify_for(b: ChildBlocks, arch: str) -> str:
    return b.notify_aic if arch == "aic" else b.notify_aiv


def _two_stream_sync(
    m: SkModel,
    g: StreamGraph,
    pre: tuple[Child, ChildBlocks] | None,
    cur: tuple[Child, ChildBlocks],
    arch: str,
) -> str:
    c, b = cur
    sync = (_send_code(m, g, pre[0], pre[1], arch) if pre else "") + _recv_code(c, arch)
    out = ind(sync)
    if pre is not None and pre[0].send_events:
        out += ind(_notify_for(pre[1], arch))
    if c.recv_events and pre is not None and b.wait:
        out += ind(b.wait)
        out += "// two stream when has wait event, add sync by current operator kernel type\n"
        if c.kernel_type.device == "mix":
            out += ind("AscendC::SyncAll<false>(); // reason3: for continues notify/wait event \n\n")
        elif c.kernel_type.device == "aic":
            out += "// reason3: for continues notify/wait event\n"
            out += "ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));\n"
            out += "wait_flag_dev(AscendC::SYNC_AIC_FLAG);\n\n"
        else:
            out += "// reason3: for continues notify/wait event\n"
            out += "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIV_ONLY_ALL));\n"
            out += "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);\n\n"
    return out


def _arch_debug_sync(m: SkModel, arch: str) -> str:
    if not m.options.debug_sync_all:
        return ""
    if arch == "aiv":
        return (
            "// op end debug sync all.\npipe_barrier(PIPE_ALL);\n"
            "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIV_ONLY_ALL));\n"
            "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);\n\n"
        )
    return (
        "// op end debug sync all.\npipe_barrier(PIPE_ALL);\n"
        "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));\n"
        "wait_flag_dev(AscendC::SYNC_AIC_FLAG);\n\n"
    )


def _arch_function(m: SkModel, g: StreamGraph, arch: str, items: list[tuple[Child, ChildBlocks]]) -> str:
    out: list[str] = [f"__aicore__ inline void auto_gen_{m.kernel_name}_kernel_{arch}(void) {{\n"]
    out.append("    GM_ADDR *param_base = (GM_ADDR *)get_para_base();\n")
    out.append(_dynamic_locals(m))
    if m.options.preload is PreloadCode.WHOLE:
        out.append(ind("AscendC::PreLoad(8);\n"))
    for i, (c, b) in enumerate(items):
        pre = items[i - 1] if i > 0 else None
        out.append(ind(f"//begin func call of sub operator {c.kernel_name}\n"))
        out.append(_switch_call(m, c, b, pre is None))
        out.append(_preloads(m, items, i))
        if pre is None and c.recv_events and c.index == 0:
            raise FusionInputError(
                f"first op of super kernel must not have any recv event, op:{c.kernel_name}, event_list:{c.recv_events}"
            )
        out.append(_two_stream_sync(m, g, pre, (c, b), arch))
        out.append(_child_body(m, c, b, _arch_debug_sync(m, arch)))
        if i == len(items) - 1:
            send = _send_code(m, g, c, b, arch)
            last_global = c.index == m.children[-1].index
            if last_global and send:
                raise FusionInputError(
                    f"last op of super kernel must not have any send info, op:{c.kernel_name}, event_list:{c.send_info}"
                )
            out.append(ind(send))
            if c.send_events:
                if last_global:
                    raise FusionInputError(
                        f"last op of super kernel must not have any send event, op:{c.kernel_name}, "
                        f"event_list:{c.send_events}"
                    )
                out.append(ind(_notify_for(b, arch)))
    out.append("}\n\n")
    return "".join(out)


def _two_stream(m: SkModel, items: list[tuple[Child, ChildBlocks]]) -> str:
    g = build_stream_graph(m.children, [b for _, b in items])
    by_child = {id(c): (c, b) for c, b in items}
    arch_items = {
        "aic": [by_child[id(c)] for c in g.cub],
        "aiv": [by_child[id(c)] for c in g.vec],
    }
    out: list[str] = [""]
    for arch in ("aic", "aiv"):
        if arch_items[arch]:
            out.append(_arch_function(m, g, arch, arch_items[arch]))
    out.append(
        f'extern "C"  __global__ {_align_attr(m)} __aicore__ void auto_gen_{m.kernel_name}_kernel(void) {{\n'
    )
    out.append("    GM_ADDR *param_base = (GM_ADDR *)get_para_base();\n")
    out.append(_prologue_head(m))
    out.append(_FFTS)
    out.append(ind(_profiling_record(m, True)))
    out.append(ind(_clear_workspace(m)))
    for arch in ("aic", "aiv"):
        if arch_items[arch]:
            out.append(ind(f"if ASCEND_IS_{arch.upper()} {{\n"))
            out.append(ind(f"    auto_gen_{m.kernel_name}_kernel_{arch}();\n"))
            out.append(ind("}\n"))
    out.append(_clear_wait_locks(m))
    out.append(ind(_profiling_record(m, False)))
    out.append("}\n\n")
    return "".join(out)


# --- whole file, trailer, compiled JSON, flags ------------------------------------------------------


def _meta_sections(m: SkModel) -> list[dict[str, str]]:
    kind = m.kernel_type
    if kind.device == "aiv":
        return [{"arch": "aiv", "guard": "", "ktype": "K_TYPE_MIX_AIV_MAIN", "ratio": "0, 1"}]
    if kind.device == "aic":
        return [{"arch": "aic", "guard": "", "ktype": "K_TYPE_MIX_AIC_MAIN", "ratio": "1, 0"}]
    ratio = "1, 1" if kind is KernelType.MIX_AIC_1_1 else "1, 2"
    return [
        {"arch": "aic", "guard": "__DAV_CUBE__", "ktype": "K_TYPE_MIX_AIC_MAIN", "ratio": ratio},
        {"arch": "aiv", "guard": "__DAV_VEC__", "ktype": "K_TYPE_MIX_AIC_MAIN", "ratio": ratio},
    ]


def meta_trailer(m: SkModel) -> str:
    """The ``.ascend.meta`` sections the external compile step appends (closes ``#if 1``)."""
    return render(
        "meta_trailer.cpp.j2", sections=_meta_sections(m), kernel_name=m.kernel_name, npu_arch=m.soc.npu_arch
    )


def compile_flags(m: SkModel) -> tuple[str, ...]:
    """The ``-D`` defines and extra options of the bisheng command (item 53)."""
    flags: list[str] = []
    if any(c.dynamic for c in m.children):
        flags.append("-D__SUPER_KERNEL_DYNAMIC_BLOCK_NUM__")
    mode = EarlyStart.DISABLE if m.two_stream else m.options.early_start
    if mode is not EarlyStart.DISABLE:
        flags += ["-D__ASCENDC_ENABLE_SET_NEXT_TASK_START", "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END"]
        flags.append(
            "-D__ASCENDC_SUPERKERNEL_EARLY_START_V1"
            if mode is EarlyStart.V1
            else "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2"
        )
    if m.options.feed_sync_all:
        flags.append("-D__ASCENDC_SUPERKERNEL_AUTO_SYNC_ALL__")
    flags.append("-DASCENDC_DUMP" if m.timestamp else "-DASCENDC_DUMP=0")
    flags += list(m.options.compile_options)
    return tuple(flags)


def compiled_json(m: SkModel) -> dict[str, Any]:
    """The SK compile-info JSON (golden ``expect_compiled_json.json`` minus the binary's sha256)."""
    doc: dict[str, Any] = {
        "binFileName": m.kernel_name,
        "binFileSuffix": ".o",
        "blockDim": m.block_num,
        "coreType": "MIX",
        "intercoreSync": 1,
        "kernelName": m.kernel_name,
        "magic": "RT_DEV_BINARY_MAGIC_ELF",
        "memoryStamping": [],
        "opParaSize": 8,
        "parameters": [],
        "taskRation": task_ration(m.kernel_type),
        "optionalInputMode": "gen_placeholder",
        "optionalOutputMode": "gen_placeholder",
        "supportSuperKernel": 1,
    }
    if m.timestamp:
        doc["debugOptions"] = m.debug_option
        doc["debugBufSize"] = m.debug_size
    if m.workspace_size:
        doc["workspace"] = {"num": 1, "size": [m.workspace_size], "type": [0]}
    kernels = []
    for c in m.children:
        entry: dict[str, Any] = {
            "func_name": c.kernel_name,
            "split_mode": c.split_mode_in_json,
            "blockDim": c.json_block_dim,
            "sub_operator_kernel_type": c.kernel_type.json_name,
            "sub_operator_early_start_set_flag": c.early_start_set,
            "sub_operator_early_start_wait_flag": c.early_start_wait,
            "sub_operator_call_dcci_before_kernel_start": c.json_dcci[0],
            "sub_operator_call_dcci_after_kernel_end": c.json_dcci[1],
            "streamid": c.stream_id,
            "send_event_list": list(c.send_events),
            "recv_event_list": list(c.recv_events),
            "arg_list": {
                "param_offset": c.param_offset,
                "notify_param_offset": c.notify_param_offset if c.send_events else None,
                "wait_param_offset": c.wait_param_offset if c.recv_events else None,
            },
        }
        if c.timestamp:
            entry["debug_option"] = c.debug_option
            entry["debug_size"] = c.debug_size
        kernels.append(entry)
    doc["SuperkernelInfo"] = {"kernelList": {"aicore": kernels}}
    return doc


def generate_from_model(m: SkModel) -> SkResult:
    """Assemble the source of an already built :class:`SkModel`."""
    items = [(c, child_blocks(m, c)) for c in m.children]
    src = render(
        "header.cpp.j2",
        split_mode=m.options.split_mode,
        aiv_sk=m.kernel_type.device == "aiv",
    )
    if m.options.profiling:
        src += render("profiling.cpp.j2")
    src += render("notify_wait.cpp.j2")
    declared: set[str] = set()
    for c, b in items:
        if c.kernel_name not in declared:
            src += b.declare + b.dynamic_impl
            declared.add(c.kernel_name)
    src += _two_stream(m, items) if m.two_stream else _single_stream(m, items)
    src += meta_trailer(m)
    return SkResult(m.kernel_name, src, compiled_json(m), compile_flags(m), m)


def generate_superkernel(request: SkRequest) -> SkResult:
    """Generate the SK of ``request``; raises :class:`FusionInputError` / ``OptionError`` on bad input."""
    return generate_from_model(build_model(request))
