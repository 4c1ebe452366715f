"""Writers for the ``sk_meta/<pid>/model_*/*.log`` files (artifacts.md §3.2-§3.9).

Why: no real AOT sk_meta directory is public (§3.14), so parser tests, the example scene and
benchmarks render them here from small dataclass descriptions, in the real format (file-logger
prefix, indentation as printed by upstream) or the hand-written fixture format (no prefix, no
``[i]``/idx fields, as in the autotune-pipeline fixture). Every writer mirrors one upstream
printer, so a parser test is a round trip through the format specification.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.scenebuilder.lines import filelog_line

DEFAULT_TS = datetime(2026, 6, 10, 14, 1, 2, 345000)
DEFAULT_PID = 48213
DEFAULT_TID = 140425347876672


# --------------------------------------------------------------------------- descriptions


@dataclass
class NodeSpec:
    """A graph node as ``Format()`` prints it (§3.5).

    ``kind``: kernel, event, memory_write, memory_wait or default.
    """

    node_id: int
    kind: str = "kernel"
    stream_id: int = 0
    stream_idx: int = 0
    node_idx: int = 0
    func_name: str = "static_kernel_Add_hash"
    kernel_type: str = "AIV_ONLY"
    task_ratio: tuple[int, int] = (0, 1)
    cap: int = 0
    num_blocks: int = 1
    cube_num: int = 0
    vec_num: int = 1
    sche_mode: bool = False
    mix_split: bool = False
    simt: bool = False
    dyn_ubuf_size: int | None = None
    alloc_ubuf_size: int | None = None
    resolved_num: int = 1
    bin_hdl: int | None = None
    func_hdl: int | None = None
    launch_kernel_cfg: int | None = None
    dev_args: int | None = None
    event_type: str = "EventNotify"  # EventNotify/EventWait/EventReset/Unknown
    event_id: int = 0
    event_flag: int = 0
    event_task_flag: int = 0
    memory_value: int = 0
    memory_wait_flag: int = 0


@dataclass
class TaskSpec:
    """One TaskInfo of a device task queue (§3.9)."""

    type: str
    idx: int
    node_id: int | None = None  # None: legacy line without nodeId
    related_type: str | None = "AIV_ONLY"  # None: legacy line without relatedType
    blk: int = 1
    entries: Sequence[int] = ()
    args: int = 0
    debug_options: int = 0
    extra_info: int | None = 0  # None: legacy line without extraInfo


@dataclass
class DfxSpec:
    """One SkDfxInfo row (§3.9)."""

    bin: int = 0
    ori: int = 0
    aic_size: int = 0
    aiv_size: int = 0
    num_blocks: int | None = 1  # None: legacy line without the numBlocks… tail
    cube_num: int = 0
    vec_num: int = 1
    entry_aic: Sequence[int] = (0, 0, 0, 0)
    entry_aiv: Sequence[int] = (0, 0, 0, 0)


@dataclass
class SkSpec:
    """One scheduled SK scope: its children plus (optionally) the uploaded device args."""

    scope_id: int
    scope_name: str
    nodes: list[NodeSpec]
    aic_tasks: list[TaskSpec] = field(default_factory=list)
    aiv_tasks: list[TaskSpec] = field(default_factory=list)
    dfx: list[DfxSpec] = field(default_factory=list)
    aic_cap: int = 64
    aiv_cap: int = 64
    header_offsets: tuple[int, int, int, int, int] = (64, 1088, 2112, 2624, 4672)
    total_size: int = 8192
    ws_off: int | None = None  # legacy header field
    node_count: int | None = None  # override the printed Node Count (row 52 edge cases)

    @property
    def kernels(self) -> list[NodeSpec]:
        return [n for n in self.nodes if n.kind == "kernel"]

    @property
    def func_name(self) -> str:
        ks = self.kernels
        if not ks:
            return sk_func_name(self.scope_id, self.scope_name, None, None)
        return sk_func_name(self.scope_id, self.scope_name, ks[0].func_name, ks[-1].func_name)


def sk_func_name(scope_id: int, scope_name: str, first: str | None, last: str | None) -> str:
    """``GetSkFuncName`` (§3.4): ``sk_<id>_<scope>_start_<first>_end_<last>`` or the no-kernel form."""
    if first is None or last is None:
        return f"sk_{scope_id}_no_kernel_scope_{scope_name}"
    return f"sk_{scope_id}_{scope_name}_start_{first}_end_{last}"


# --------------------------------------------------------------------------- node Format()


def _bool(v: bool) -> str:
    return "1" if v else "0"


def render_kernel_infos(n: NodeSpec, *, fixture: bool = False) -> str:
    """``KernelInfos::Format`` (§3.5); ``fixture`` mimics the hand-written form (no ``cap``)."""
    parts = [
        f"funcName:{n.func_name}",
        f"kernelType:{n.kernel_type}",
        f"taskRatio:[{n.task_ratio[0]},{n.task_ratio[1]}]",
    ]
    if not fixture:
        parts.append(f"cap:{n.cap}")
    parts += [
        f"numBlocks:{n.num_blocks}",
        f"cubeNum:{n.cube_num}",
        f"vecNum:{n.vec_num}",
        f"isScheModeOn:{_bool(n.sche_mode)}",
        f"needMixKernelSplit:{_bool(n.mix_split)}",
    ]
    if n.simt:
        parts.append("isSimtOp:1")
    if n.dyn_ubuf_size is not None:
        parts.append(f"dynUbufSize:{n.dyn_ubuf_size}")
    if n.alloc_ubuf_size is not None:
        parts.append(f"allocUbufSize:{n.alloc_ubuf_size}")
    parts.append(f"resolvedNum:{n.resolved_num}")
    for key, value in (
        ("binHdl", n.bin_hdl),
        ("funcHdl", n.func_hdl),
        ("launchKernelCfg", n.launch_kernel_cfg),
        ("devArgs", n.dev_args),
    ):
        if value is not None and not fixture:
            parts.append(f"{key}:0x{value:x}")
    return "KernelInfos{" + ", ".join(parts) + "}"


def render_node(n: NodeSpec, *, form: str = "current") -> str:
    """A node as one of the ``Format()`` printers writes it: form current, fixture or legacy."""
    if form == "fixture":
        ids = f"[nodeId:{n.node_id}, streamId:{n.stream_id}"
    elif form == "legacy":
        ids = f"[nodeId:{n.node_id}, streamIdxInGraph:{n.stream_idx}, nodeIdxInStream:{n.node_idx}"
    else:
        ids = (
            f"[nodeId:{n.node_id}, streamId:{n.stream_id}, streamIdxInGraph:{n.stream_idx}, "
            f"nodeIdxInStream:{n.node_idx}"
        )
    if n.kind == "kernel":
        if form == "legacy":
            return f"{ids}] - Kernel:{n.func_name}"
        return f"{ids}] - {render_kernel_infos(n, fixture=form == 'fixture')}"
    if form == "legacy":
        if n.kind != "event":
            raise ValueError("the legacy printer knows kernel and event nodes only")
        short = n.event_type.removeprefix("Event")
        return f"{ids}] - Event:{short}(eventId:0x{n.event_id:x})"
    if n.kind == "event":
        return (
            f"{ids}, {n.event_type}(eventId:0x{n.event_id:x}, eventFlag:0x{n.event_flag:x}, "
            f"eventTaskFlag:0x{n.event_task_flag:x})]"
        )
    if n.kind == "memory_write":
        return f"{ids}, MemoryWrite(value:0x{n.memory_value:x}, eventId:0x{n.event_id:x})]"
    if n.kind == "memory_wait":
        return (
            f"{ids}, MemoryWait(flag:0x{n.memory_wait_flag:x}, value:0x{n.memory_value:x}, "
            f"eventId:0x{n.event_id:x})]"
        )
    if n.kind == "default":
        return f"{ids}, type: Default]"
    raise ValueError(f"unknown node kind {n.kind!r}")


# --------------------------------------------------------------------------- file-logger lines


@dataclass
class LogStyle:
    """How lines are rendered: ``real`` adds the §3.2 prefix; fixtures have none."""

    real: bool = True
    ts: datetime = DEFAULT_TS
    pid: int = DEFAULT_PID
    tid: int = DEFAULT_TID
    level: str = "INFO"
    src_file: str = "sk_optimizer.cpp"
    step: timedelta = timedelta(milliseconds=1)

    def render(self, func: str, msgs: Iterable[str], *, level: str | None = None) -> list[str]:
        out: list[str] = []
        for msg in msgs:
            if self.real:
                out.append(
                    filelog_line(
                        self.ts,
                        self.pid,
                        self.tid,
                        level or self.level,
                        func,
                        msg,
                        src_file=self.src_file,
                        src_line=33,
                    )
                )
                self.ts += self.step
            else:
                out.append(msg)
        return out


FIXTURE = LogStyle(real=False)


def write_lines(path: str | os.PathLike[str], lines: Sequence[str], *, append: bool = False) -> Path:
    """Write lines with LF endings (the file logger appends, so ``append`` models reruns)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a" if append else "w", encoding="utf-8", newline="\n") as fh:
        for line in lines:
            fh.write(line + "\n")
    return p


# --------------------------------------------------------------------------- sk_fused_nodes.log


def fused_nodes_lines(sks: Sequence[SkSpec], style: LogStyle | None = None) -> list[str]:
    """``PrintSKNodes`` (§3.4): real = prefix + indentation + ``[i]``; fixture = bare lines."""
    st = style if style is not None else LogStyle(src_file="sk_optimizer.cpp")
    out: list[str] = []
    for sk in sks:
        count = sk.node_count if sk.node_count is not None else len(sk.nodes)
        if st.real:
            msgs = [f"  SK Function: {sk.func_name}, scope id: {sk.scope_id}, Node Count: {count}"]
            msgs += [f"    [{i}] {render_node(n)}" for i, n in enumerate(sk.nodes)]
        else:
            msgs = [f"SK Function: {sk.func_name}, scope id: {sk.scope_id}, Node Count: {count}"]
            msgs += [render_node(n, form="fixture") for n in sk.nodes]
        out += st.render("PrintSKNodesDetail", msgs)
    return out


# --------------------------------------------------------------------------- sk_node_detail.log


@dataclass
class NodeDetailSpec:
    node: NodeSpec
    node_type: str  # KERNEL NOTIFY WAIT RESET MEMORY_WRITE MEMORY_WAIT DEFAULT
    scope_flags: str = "0"
    is_fusible: bool = True
    stack_size: int = 0


def node_detail_lines(rows: Sequence[NodeDetailSpec], style: LogStyle | None = None) -> list[str]:
    """``UpdateNodeScopeBitFlags`` (§3.6)."""
    st = style if style is not None else LogStyle(src_file="sk_graph.cpp")
    form = "current" if st.real else "fixture"
    msgs = [
        f"Processed node {render_node(r.node, form=form)}: type={r.node_type}, "
        f"scopeFlags={r.scope_flags}, isFusible={_bool(r.is_fusible)}, stackSize={r.stack_size}"
        for r in rows
    ]
    return st.render("UpdateNodeScopeBitFlags", msgs)


# --------------------------------------------------------------------------- sk_scope_split.log


@dataclass
class ScopeSnapshotSpec:
    scope_id: int
    nodes: list[NodeSpec]
    scope_bit_flags: str = "1"
    scope_names: str = "none"
    break_info: str = ""  # the BreakInfo::Format() text
    streams: list[tuple[int, int, int, int]] = field(default_factory=list)  # streamIdx, head, tail, size

    @property
    def stream_count(self) -> int:
        return len(self.streams)


@dataclass
class PassSpec:
    name: str
    scopes: list[ScopeSnapshotSpec]
    old_header: bool = False  # ``Printing scope split results`` + ``Scope <i>:`` (no scopeId)


def scope_split_lines(
    iterations: Sequence[Sequence[PassSpec]], final: PassSpec | None = None, style: LogStyle | None = None
) -> list[str]:
    """``ScopeSplitPipeline`` (§3.7): iteration banners, per-pass snapshots, the final snapshot."""
    st = style if style is not None else LogStyle(src_file="sk_scope_split.cpp")
    msgs: list[str] = []
    for k, passes in enumerate(iterations):
        msgs.append(f"==========[ScopeSplitPipeline] iteration {k}==========")
        for p in passes:
            msgs.append(f"===========[ScopeSplitPipeline] running pass: {p.name}==========")
            msgs += _snapshot_msgs(p)
    if final is not None:
        msgs += _snapshot_msgs(final)
    return st.render("PrintScopeDetails", msgs)


def _snapshot_msgs(p: PassSpec) -> list[str]:
    msgs: list[str] = []
    if p.old_header:
        msgs.append(f"Printing scope split results, total scopes: {len(p.scopes)}")
    else:
        msgs.append(
            f"========== Scope split results begin: pass={p.name}, totalScopes={len(p.scopes)} =========="
        )
    for i, s in enumerate(p.scopes):
        sid = "" if p.old_header else f" (scopeId={s.scope_id})"
        msgs.append(
            f"Scope {i}{sid}: {len(s.nodes)} nodes, {s.stream_count} streams, "
            f"scopeBitFlags={s.scope_bit_flags}, scopeNames=[{s.scope_names}]"
        )
        msgs.append(f"  BreakInfo: {s.break_info}")
        msgs.append(f"  Scope {i} nodes: {len(s.nodes)}")
        msgs += [f"    [{j}] {render_node(n)}" for j, n in enumerate(s.nodes)]
        msgs += [
            f"  Scope {i} StreamInfo[{j}]: streamIdx={a}, headNode={b}, tailNode={c}, nodeSize={d}"
            for j, (a, b, c, d) in enumerate(s.streams)
        ]
    if not p.old_header:
        msgs.append(f"========== Scope split results end: pass={p.name} ==========")
    return msgs


# --------------------------------------------------------------------------- sk_fusion_fail_reasons.log


@dataclass
class UnfusibleSpec:
    node: NodeSpec
    reason: str
    sub: str | None = None
    detail: str | None = None


@dataclass
class OriginalScopeSpec:
    scope_id: int
    scope_flags: str
    scope_names: str
    node_ids: list[int]


@dataclass
class FusedScopeSpec:
    scope_id: int
    scope_bit_flag: str
    fused_node_ids: list[int]
    status: str = "SUCCESS"
    status_detail: str = ""
    break_info: str | None = None  # BreakInfo::Format() text; None: no breakReason line
    break_reason_detail: str = ""
    scope_names: str = "none"


def _batched(prefix: str, ids: Sequence[int], suffix: str, max_len: int, *, count_prefix: bool) -> list[str]:
    """``PrintNodeIdsInBatches``/``PrintFusedNodeIds`` (sk_dump_json.cpp): split with ``continued:``.

    Upstream computes the ``", "`` separator before flushing a full line and keeps it, so a
    continued line starts with ``", "`` (``    continued: , 812, 813]``); reproduced here.
    ``count_prefix``: the nodeIds printer counts the line prefix in its limit, the fused one not.
    """
    lines: list[str] = []
    lead, batch = prefix, ""
    for nid in ids:
        piece = ("" if not batch else ", ") + str(nid)
        used = (len(lead) if count_prefix else 0) + len(batch) + len(piece) + len(suffix)
        if used > max_len and batch:
            lines.append(lead + batch + suffix)
            lead, batch = "    continued: ", ""
        batch += piece
    if batch:
        lines.append(lead + batch + suffix)
    return lines


def fail_reasons_lines(
    unfusible: Sequence[UnfusibleSpec],
    original: Sequence[OriginalScopeSpec],
    fused: Sequence[FusedScopeSpec],
    *,
    per_op_max_core: bool = False,
    max_line_len: int = 4096,
    style: LogStyle | None = None,
) -> list[str]:
    """``DumpFusionFailReasons`` (§3.8) as written to sk_fusion_fail_reasons.log."""
    st = style if style is not None else LogStyle(src_file="sk_graph.cpp")
    msgs = ["unfusible kernel:"]
    for u in unfusible:
        reason = u.reason + (f" [{u.sub}]" if u.sub else "")
        tail = f", reasonDetail: {u.detail}" if u.detail is not None else ""
        msgs.append(f"Node {render_node(u.node)}: reason: {reason}{tail}")
    msgs.append("original scopes before fusion:")
    for o in original:
        msgs.append(
            f"  scopeId={o.scope_id}, scopeFlags={o.scope_flags}, scopeNames=[{o.scope_names}], "
            f"totalNodes={len(o.node_ids)}"
        )
        msgs += _batched("    nodeIds: [", o.node_ids, "]", max_line_len, count_prefix=True)
    msgs.append(
        "[PrintFusedScopes] scopes after fusion: DEBUG_PER_OP_MAX_CORE="
        + ("enabled" if per_op_max_core else "disabled")
    )
    for f in fused:
        msgs.append(f"  scopeId={f.scope_id}, scopeBitFlag={f.scope_bit_flag}")
        msgs += _batched("    fusedNodeIds=[", f.fused_node_ids, "];", max_line_len, count_prefix=False)
        if f.status == "SUCCESS":
            msgs.append("    scopeStatus=SUCCESS")
        else:
            msgs.append(f"    scopeStatus={f.status}, scopeStatusDetail={f.status_detail}")
        if f.break_info is not None:
            msgs.append(
                f"    breakReason=[{f.break_info}], breakReasonDetail={f.break_reason_detail}, "
                f"scopeName=[{f.scope_names}]"
            )
    return st.render("DumpFusionFailReasons", msgs)


# --------------------------------------------------------------------------- sk_device_args.log


def _task_line(i: int, t: TaskSpec) -> list[str]:
    parts = [f"[{i}] type={t.type}", f"idx={t.idx}"]
    if t.node_id is not None:
        parts.append(f"nodeId={t.node_id}")
    if t.related_type is not None:
        parts.append(f"relatedType={t.related_type}")
    parts += [
        f"blk={t.blk}",
        f"entries={len(t.entries)}",
        f"args=0x{t.args:x}",
        f"debugOptions=0x{t.debug_options:x}",
    ]
    if t.extra_info is not None:
        parts.append(f"extraInfo=0x{t.extra_info:x}")
    return [", ".join(parts)] + [f"   entry[{j}]=0x{e:x}" for j, e in enumerate(t.entries)]


def device_args_lines(
    sks: Sequence[SkSpec], *, dfx_one_per_line: bool = False, style: LogStyle | None = None
) -> list[str]:
    """``DumpDeviceArgsDetail`` (§3.9, DEBUG level) incl. the empty line after the header."""
    st = style if style is not None else LogStyle(src_file="sk_task_builder.cpp", level="DEBUG")
    out: list[str] = []
    for sk in sks:
        a, v, c, d, e = sk.header_offsets
        ws = f"wsOff={sk.ws_off}, " if sk.ws_off is not None else ""
        out += st.render("DumpDeviceArgsDetail", [f"Dumping device args for function: {sk.func_name}"])
        out += st.render(
            "DumpDeviceArgsDetail",
            [
                f"SkHeaderInfo: aicOff={a}, aivOff={v}, counterOff={c}, {ws}dfxOff={d}, eventConfigOff={e}, "
                f"nodeCnt={len(sk.dfx)}, totalSize={sk.total_size}"
            ],
        )
        out.append("")  # the format ends with \n (§3.2)
        for name, cap, tasks in (("AIC", sk.aic_cap, sk.aic_tasks), ("AIV", sk.aiv_cap, sk.aiv_tasks)):
            msgs = [f"{name} TaskQue: cap={cap}, tasks={len(tasks)}"]
            for i, t in enumerate(tasks):
                msgs += _task_line(i, t)
            out += st.render("DumpTaskQueDetail", msgs)
        msgs = []
        for i, x in enumerate(sk.dfx):
            tail = (
                f", numBlocks={x.num_blocks}, cubeNum={x.cube_num}, vecNum={x.vec_num}"
                if x.num_blocks is not None
                else ""
            )
            msgs.append(
                f"dfx[{i}]: bin=0x{x.bin:x}, ori=0x{x.ori:x}, aicSize=0x{x.aic_size:x}, "
                f"aivSize=0x{x.aiv_size:x}{tail}"
            )
            for label, values in (("entryAic", x.entry_aic), ("entryAiv", x.entry_aiv)):
                items = [f"{label}[{j}]=0x{val:x}" for j, val in enumerate(values)]
                if dfx_one_per_line:
                    msgs += [f"  {it}" for it in items]
                else:
                    msgs.append("  " + ", ".join(items))
        out += st.render("DumpDeviceArgsDetail", msgs)
    return out


# --------------------------------------------------------------------------- super_kernel.log


def super_kernel_log_lines(records: Sequence[tuple[str, str]], style: LogStyle | None = None) -> list[str]:
    """Free super_kernel.log text: ``(Function, message)`` pairs rendered one per line."""
    st = style if style is not None else LogStyle(src_file="sk_node.cpp")
    out: list[str] = []
    for func, msg in records:
        out += st.render(func, [msg])
    return out


def reordered_nodes_msgs(nodes: Sequence[NodeSpec]) -> list[str]:
    """``reordered task nodes`` block of super_kernel.log (§3.3)."""
    return [f"reordered task nodes: node count={len(nodes)}"] + [
        f"  [{i}] {render_node(n)}" for i, n in enumerate(nodes)
    ]
