"""``super_kernel.log`` — the offline facts worth extracting from the free SK log (artifacts.md §3.3).

Why: besides repeating the dedicated files, super_kernel.log is the only place that says which
child binary sits at which device address (``funcName=…, binDevAddr=…``), which SK variant symbol
each split bound to, where binaries were dumped, which entry was selected, and whether task
order differs from the fused-node order (``reordered task nodes``, deferred WAIT placement).

super_kernel.log is free text: lines that are not one of the facts below are *counted* as plain
log text, not reported as unrecognized. Lines of the exception handler (source file
``sk_dfx_exception_handler.cpp`` or one of its functions) belong to the handler parser; they are
counted separately.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.filelog import FORMAT_ERROR, PIECE
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.skmeta_lines import (
    MetaLine,
    MetaResultBase,
    frame,
    raw_meta_line,
    record_row,
    to_meta_line,
)
from skdbg.parsers.textio import TextLine, iter_line_blocks

if TYPE_CHECKING:
    import pandas as pd

HANDLER_FILE = "sk_dfx_exception_handler.cpp"
# [SK] functions of sk_dfx_exception_handler.cpp (§1.4); their lines are the handler parser's.
HANDLER_FUNCS = frozenset(
    {
        "HandleException",
        "IsSuperKernelException",
        "ExtractSkDeviceEntryArgsPtr",
        "PrintSkHeaderInfo",
        "PrintTaskQueue",
        "PrintCounterInfo",
        "PrintDfxInfo",
        "ParseAndPrintSubKernelSymbols",
        "IdentifyErrorNodeByPC",
        "FindErrorNodeByPC",
        "PrintMatchedNodeBasicInfo",
        "PrintFuncSymbolInfo",
        "PrintNodeDevArgs",
        "PrintNoMatchInfo",
        "PrintCoreSymbols",
        "PrintAllCoreSymbols",
        "GetCondRegValue",
        "ParseAndPrintCondInfo",
        "PrintCondSubKernelInfo",
        "PrintModelIdIndexMap",
        "ExceptionDumpInfoCallBack",
        "ProcessExceptionDump",
        "FillExceptionDumpInfo",
    }
)

# Printers of the dedicated files whose lines super_kernel.log repeats (§3.2, §3.4–§3.9): none of the
# facts below comes from them, so their (many) lines are counted as plain text without the regex cascade.
OTHER_FILE_PRINTERS = frozenset(
    {
        "PrintSKNodesDetail",
        "DumpDeviceArgsDetail",
        "DumpTaskQueDetail",
        "PrintScopeDetails",
        "UpdateNodeScopeBitFlags",
    }
)

#: the file-logger prefix (filelog.PREFIX_RE) over undecoded bytes: group 1 = pid, 2 = source file,
#: 3 = function. A bytes match implies a match of the text regex with the same groups.
_PREFIX_B = re.compile(
    rb"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \[(\d+):\d+\] \[[A-Z]+\] \[([^\]]*?):\d+\] \[([^\]]*)\] ?"
)
_OTHER_FILE_PRINTERS_B = frozenset(f.encode() for f in OTHER_FILE_PRINTERS)
_HANDLER_FILE_B = HANDLER_FILE.encode()
_FORMAT_ERROR_B = FORMAT_ERROR.encode()


@dataclass(frozen=True, slots=True)
class RepeatedLine:
    """A super_kernel.log line printed by a dedicated file's printer (:data:`OTHER_FILE_PRINTERS`),
    left undecoded: its content is parsed from that file. Only its writer pid is read, for the
    file-logger provenance (gate F4/F7); :meth:`materialize` gives the full line when a block of
    super_kernel.log's own facts (reordered rows, fail summary) is open and must see it."""

    no: int
    pid: int
    raw: bytes
    file: str

    def materialize(self) -> MetaLine:
        return raw_meta_line(self.raw, self.no, self.file, check=False)


SkLogLine = MetaLine | RepeatedLine


def read_super_kernel_log(path: str | os.PathLike[str]) -> list[SkLogLine]:
    """super_kernel.log, split a chunk at a time in C: the lines of :data:`OTHER_FILE_PRINTERS` (about
    two thirds of the file) become :class:`RepeatedLine` without being decoded or split; every other
    line is the :class:`MetaLine` that :func:`~skdbg.parsers.skmeta_lines.iter_meta_lines` makes. A
    line is left undecoded only when nothing about it needs the text: prefixed, ASCII, not blank, not
    a FORMAT_ERROR body, whole (not cut, not CONT-joined, newline-terminated) and its chunk holds no
    oversized number."""
    file = str(path)
    out: list[SkLogLine] = []
    for block in iter_line_blocks(path, what="super_kernel.log"):
        if isinstance(block, TextLine):
            out.append(to_meta_line(block, file))
            continue
        check = block.check
        for no, raw in enumerate(block.lines, block.first_no):
            if not check and (pid := _repeat_pid(raw)) is not None:
                out.append(RepeatedLine(no, pid, raw, file))
            else:
                out.append(raw_meta_line(raw, no, file, check=check))
    return out


def _repeat_pid(raw: bytes) -> int | None:
    """The writer pid when ``raw`` (a whole line) can stay undecoded (see :func:`read_super_kernel_log`)."""
    if len(raw) >= PIECE or (m := _PREFIX_B.match(raw)) is None or m.group(3) not in _OTHER_FILE_PRINTERS_B:
        return None
    if m.group(2).rsplit(b"/", 1)[-1] == _HANDLER_FILE_B or not raw.isascii():
        return None
    body = raw[m.end() :].strip()
    return int(m.group(1)) if body and body != _FORMAT_ERROR_B else None


_H = r"0x(?P<{}>[0-9a-fA-F]+)"


def _h(name: str) -> str:
    return _H.format(name)


_BIND_HDR = re.compile(rf"^binHdl={_h('bin')}, metaNum=(?P<n>\d+), payloadSize=(?P<p>\d+)$")
_BIND_REC = re.compile(
    rf"^\[(?P<i>\d+)\] cap=(?P<cap>\d+), globalFunc={_h('g')}, skFunc\[0\]={_h('s0')}, "
    rf"skFunc\[1\]={_h('s1')}, skFunc\[2\]={_h('s2')}, skFunc\[3\]={_h('s3')}$"
)
_CHILD = re.compile(
    rf"^funcName=(?P<f>.*), binDevAddr={_h('dev')}, binDevSize=(?P<size>\d+), aicAddr={_h('aic')}, "
    rf"aivAddr={_h('aiv')}$"
)
_OFFSETS = re.compile(rf"^aicOffset={_h('aic')}, aivOffset={_h('aiv')}$")
_SPLIT_SYM = re.compile(
    rf"^split\[(?P<i>\d+)\] (?P<core>AIC|AIV) symbol=(?P<sym>.*), size={_h('size')}, bind=(?P<bind>\w*)$"
)
_SPLIT_ADDR = re.compile(
    rf"^split\[(?P<i>\d+)\] funcAddr\[0\]={_h('a0')}, funcAddr\[1\]={_h('a1')}, "
    rf"prefetchCnt\[0\]={_h('p0')}, prefetchCnt\[1\]={_h('p1')}, cap=(?P<cap>\d+)$"
)
_FAILURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("FUNC_NOT_FOUND", re.compile(r"^Function is not found in sk bind map for kernel (?P<k>.*)$")),
    ("BINDMAP_INIT_EMPTY", re.compile(r"^bindMap is empty for kernel (?P<k>.*)$")),
    ("META_NUM_FAILED", re.compile(r"^rtBinaryGetMetaNum unsuccessful, ret=(?P<ret>-?\d+)$")),
    ("META_INFO_FAILED", re.compile(r"^rtBinaryGetMetaInfo failed, ret=(?P<ret>-?\d+)$")),
    ("META_NUM_ZERO", re.compile(r"^metaNum is zero!$")),
    (
        "GLOBAL_FUNC_DUPLICATED",
        re.compile(rf"^InitSuperKernelBindMap: globalFunc={_h('g')} is duplicated with different value$"),
    ),
    ("BINHDL_NULL", re.compile(r"^binHdl is null for kernel (?P<k>.*)$")),
    ("FUNCHDL_NULL", re.compile(r"^funcHdl is null for kernel (?P<k>.*)$")),
    (
        "BINDMAP_ENTRY_CONFLICT",
        re.compile(
            rf"^Invalid sk bind map for globalFunc={_h('g')}, kernel (?P<k>.*) "
            r"has duplicated entries with different values$"
        ),
    ),
    (
        "BINDMAP_CAP_INCONSISTENT",
        re.compile(r"^Invalid sk bind map for kernel (?P<k>.*), cap is inconsistent$"),
    ),
    (
        "BIN_DEV_ADDR_GET_FAILED",
        re.compile(r"^Failed to get binary device address for kernel (?P<k>.*), ret=(?P<ret>-?\d+)$"),
    ),
    (
        "FUNC_ADDR_GET_FAILED",
        re.compile(r"^Failed to get function address for kernel (?P<k>.*), ret=(?P<ret>-?\d+)$"),
    ),
    (
        "BIN_HOST_ADDR_GET_FAILED",
        re.compile(r"^split\[\d+\] rtGetBinBuffer failed for (?:AIC|AIV), ret=(?P<ret>-?\d+)$"),
    ),
)
_DUMPED = re.compile(
    r"^Dumped (?P<kind>kernel|SK entry) binary: (?P<path>.*), size=(?P<size>\d+), codeSegAddr=(?P<addr>\d+)$"
)
_GEN_ENTRY = re.compile(r"^GenEntryInfo: (?P<kv>\w+=-?\d+(?:, \w+=-?\d+)*)$")
_BUILT = re.compile(
    r"^schedule scope: build finished, entryType=(?P<et>.*?), entryFuncHandle=(?P<h>\S+), "
    r"skFuncName=(?P<n>.*)$"
)
_REORDERED = re.compile(r"^reordered task nodes: node count=(?P<n>\d+)$")
_REORDERED_ROW = re.compile(r"^\[(?P<i>\d+)\]\s+(?=\[nodeId:)")
_INDEX_NODE = re.compile(r"^index=(?P<i>-?\d+), nodeType=(?P<t>\w+), nodeInfo=(?=\[nodeId:)")
_DEFERRED = re.compile(r"^task reorder: place deferred wait node, (?P<kv>\w+=\d+(?:, \w+=\d+)*)$")
_SUMMARY = re.compile(r"^Fusion fail reasons summary:$")
_SUM_ITEM = re.compile(r"^(?P<k>Total nodes|Fusible nodes|Unfusible nodes): (?P<n>\d+)$")
_SUM_BREAKDOWN = re.compile(r"^Failure reason breakdown:$")
_SUM_REASON = re.compile(r"^(?P<r>.+): (?P<n>\d+) nodes$")


def _kv(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", text)}


@dataclass(frozen=True, slots=True)
class BindMapHeader:
    src: Source
    ts: datetime | None
    pid: int | None
    bin_hdl: int
    meta_num: int
    payload_size: int


@dataclass(frozen=True, slots=True)
class BindRecord:
    """``[i] cap=…, globalFunc=…, skFunc[0..3]=…`` — offsets inside the child binary (§4.5)."""

    src: Source
    ts: datetime | None
    pid: int | None
    bin_hdl: int | None  # of the preceding ``binHdl=`` line
    index: int
    cap: int
    global_func: int
    sk_funcs: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class ChildBinary:
    """``funcName=…, binDevAddr=…`` (+ the following ``aicOffset=…`` line): child name ↔ binDevAddr."""

    src: Source
    ts: datetime | None
    pid: int | None
    func_name: str
    bin_dev_addr: int
    bin_dev_size: int
    aic_addr: int
    aiv_addr: int
    aic_offset: int | None = None
    aiv_offset: int | None = None


@dataclass(frozen=True, slots=True)
class SplitSymbol:
    """``split[i] AIC|AIV symbol=…, size=…, bind=…``: the SK variant symbol bound per split."""

    src: Source
    ts: datetime | None
    pid: int | None
    func_name: str | None  # child of the preceding ``funcName=`` line
    split: int
    core: str
    symbol: str
    size: int
    bind: str


@dataclass(frozen=True, slots=True)
class SplitFuncAddr:
    src: Source
    ts: datetime | None
    pid: int | None
    func_name: str | None
    split: int
    func_addr: tuple[int, int]
    prefetch_cnt: tuple[int, int]
    cap: int


@dataclass(frozen=True, slots=True)
class BindMapFailure:
    src: Source
    ts: datetime | None
    pid: int | None
    kind: str  # BindmapFailReason-like name
    kernel: str | None
    ret: int | None
    global_func: int | None
    text: str


@dataclass(frozen=True, slots=True)
class DumpedBinary:
    src: Source
    ts: datetime | None
    pid: int | None
    kind: str  # kernel / entry
    path: str
    size: int
    code_seg_addr: int  # printed in decimal


@dataclass(frozen=True, slots=True)
class EntryInfo:
    """``GenEntryInfo: enableDebug=…, …`` — which SK entry variant was selected."""

    src: Source
    ts: datetime | None
    pid: int | None
    flags: tuple[tuple[str, int], ...]

    def get(self, key: str) -> int | None:
        return dict(self.flags).get(key)


@dataclass(frozen=True, slots=True)
class ScopeBuilt:
    src: Source
    ts: datetime | None
    pid: int | None
    entry_type: str
    entry_func_handle: str
    sk_func_name: str


@dataclass(frozen=True, slots=True)
class ReorderedNodes:
    """``reordered task nodes: node count=N`` + ``[i] <node>`` rows: the task (device index) order."""

    src: Source
    ts: datetime | None
    pid: int | None
    node_count: int
    nodes: tuple[tuple[int, Node], ...]

    @property
    def complete(self) -> bool:
        return len(self.nodes) == self.node_count

    def index_to_node_id(self) -> dict[int, int]:
        return {i: n.node_id for i, n in self.nodes}


@dataclass(frozen=True, slots=True)
class TaskIndexNode:
    """``index=…, nodeType=…, nodeInfo=<node>`` (task index → node during build)."""

    src: Source
    ts: datetime | None
    pid: int | None
    index: int
    node_type: str
    node: Node


@dataclass(frozen=True, slots=True)
class DeferredWait:
    """``task reorder: place deferred wait node, …``: task indices ≠ fused-node positions."""

    src: Source
    ts: datetime | None
    pid: int | None
    fields: tuple[tuple[str, int], ...]

    def get(self, key: str) -> int | None:
        return dict(self.fields).get(key)


@dataclass(frozen=True, slots=True)
class ProfilingBufferFull:
    """``… buffer is full …``: the profiling lanes are incomplete — reject the profile."""

    src: Source
    ts: datetime | None
    pid: int | None
    text: str


@dataclass(frozen=True, slots=True)
class FusionFailSummary:
    src: Source
    ts: datetime | None
    pid: int | None
    total_nodes: int | None
    fusible_nodes: int | None
    unfusible_nodes: int | None
    breakdown: tuple[tuple[str, int], ...]


@dataclass
class SuperKernelLogResult(MetaResultBase):
    bind_map_headers: list[BindMapHeader] = field(default_factory=list)
    bind_records: list[BindRecord] = field(default_factory=list)
    child_binaries: list[ChildBinary] = field(default_factory=list)
    split_symbols: list[SplitSymbol] = field(default_factory=list)
    split_func_addrs: list[SplitFuncAddr] = field(default_factory=list)
    bind_map_failures: list[BindMapFailure] = field(default_factory=list)
    dumped_binaries: list[DumpedBinary] = field(default_factory=list)
    entry_infos: list[EntryInfo] = field(default_factory=list)
    scopes_built: list[ScopeBuilt] = field(default_factory=list)
    reordered: list[ReorderedNodes] = field(default_factory=list)
    task_index_nodes: list[TaskIndexNode] = field(default_factory=list)
    deferred_waits: list[DeferredWait] = field(default_factory=list)
    profiling_buffer_full: list[ProfilingBufferFull] = field(default_factory=list)
    fail_summaries: list[FusionFailSummary] = field(default_factory=list)
    plain_text_lines: int = 0
    handler_lines: int = 0

    def frames(self) -> dict[str, pd.DataFrame]:
        """One table per fact kind (plain columns incl. file/line)."""
        out: dict[str, pd.DataFrame] = {}
        for name in _FACT_LISTS:
            records: list[object] = getattr(self, name)
            rows = []
            for r in records:
                row = record_row(r)
                if isinstance(r, (TaskIndexNode,)):
                    row.update({"node_id": r.node.node_id, "func_name": r.node.func_name})
                if isinstance(r, ReorderedNodes):
                    row["node_ids"] = [n.node_id for _, n in r.nodes]
                rows.append(row)
            out[name] = frame(rows, ["file", "line"])
        return out

    def to_frame(self) -> pd.DataFrame:
        """All facts in one table: ``kind``, ``file``, ``line``, ``ts`` and a ``summary`` string."""
        rows = []
        for name in _FACT_LISTS:
            for r in getattr(self, name):
                rows.append(
                    {"kind": name, "file": r.src.file, "line": r.src.line, "ts": r.ts, "summary": _summary(r)}
                )
        rows.sort(key=lambda x: x["line"] or 0)
        return frame(rows, ["kind", "file", "line", "ts", "summary"])


_FACT_LISTS = (
    "bind_map_headers",
    "bind_records",
    "child_binaries",
    "split_symbols",
    "split_func_addrs",
    "bind_map_failures",
    "dumped_binaries",
    "entry_infos",
    "scopes_built",
    "reordered",
    "task_index_nodes",
    "deferred_waits",
    "profiling_buffer_full",
    "fail_summaries",
)


def _summary(r: object) -> str:
    row = record_row(r, skip=("ts", "pid"))
    row.pop("file", None)
    row.pop("line", None)
    return ", ".join(f"{k}={_value(v)}" for k, v in row.items())


def _value(v: object) -> str:
    """A summary value for people: a parsed node as its nodeId, sequences joined, absent as ``—``
    (never a Python repr with absolute paths)."""
    if v is None:
        return "—"
    node_id = getattr(v, "node_id", None)
    if node_id is not None and not isinstance(v, (str, int)):
        return f"nodeId {node_id}"
    if isinstance(v, tuple):
        return ":".join(_value(x) for x in v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def is_handler_line(ml: MetaLine) -> bool:
    p = ml.prefix
    return p is not None and (p.src_file == HANDLER_FILE or p.func in HANDLER_FUNCS)


def parse_super_kernel_log(
    source: str | os.PathLike[str] | Iterable[SkLogLine], *, file: str | None = None
) -> SuperKernelLogResult:
    """Extract the §3.3 facts; other lines are counted (free text), never Unrecognized."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = SuperKernelLogResult(fname)
    bin_hdl: int | None = None
    child: str | None = None
    reorder: tuple[MetaLine, int, list[tuple[int, Node]]] | None = None
    summary: dict[str, object] | None = None

    def close_reorder() -> None:
        nonlocal reorder
        if reorder is None:
            return
        ml, n, rows = reorder
        rec = ReorderedNodes(ml.src, ml.ts, ml.pid, n, tuple(rows))
        if not rec.complete:
            res.gaps.append(
                Gap("incomplete_block", f"reordered task nodes: {n} announced, {len(rows)} rows", src=ml.src)
            )
        res.reordered.append(rec)
        reorder = None

    def close_summary() -> None:
        nonlocal summary
        if summary is None:
            return
        ml = summary["ml"]
        assert isinstance(ml, MetaLine)
        bd = summary["breakdown"]
        assert isinstance(bd, list)
        res.fail_summaries.append(
            FusionFailSummary(
                ml.src,
                ml.ts,
                ml.pid,
                _opt_int(summary.get("Total nodes")),
                _opt_int(summary.get("Fusible nodes")),
                _opt_int(summary.get("Unfusible nodes")),
                tuple(bd),
            )
        )
        summary = None

    lines: Iterable[SkLogLine] = (
        read_super_kernel_log(source) if isinstance(source, (str, os.PathLike)) else source
    )
    for item in lines:
        if isinstance(item, RepeatedLine):
            if reorder is None and summary is None:
                _note_repeated(res, item)
                res.plain_text_lines += 1
                continue
            item = item.materialize()
        ml = item
        if res.note_common(ml):
            continue
        if is_handler_line(ml):
            res.handler_lines += 1
            continue
        if (
            ml.prefix is not None
            and ml.prefix.func in OTHER_FILE_PRINTERS
            and reorder is None
            and summary is None
        ):
            res.plain_text_lines += 1
            continue
        msg = ml.message.strip()
        t, pid = ml.ts, ml.pid
        if reorder is not None:
            rm = _REORDERED_ROW.match(msg)
            if rm is not None and len(reorder[2]) < reorder[1]:
                try:
                    got = match_node(msg, rm.end(), ml.src)
                except ParseError as exc:
                    res.unrecognized.append(Unrecognized(ml.src, msg, f"super_kernel:reordered_row: {exc}"))
                    continue
                if got is not None:
                    reorder[2].append((int(rm.group("i")), got[0]))
                    continue
            close_reorder()
        if summary is not None:
            if (m := _SUM_ITEM.match(msg)) is not None:
                summary[m.group("k")] = int(m.group("n"))
                continue
            if _SUM_BREAKDOWN.match(msg):
                summary["in_breakdown"] = True
                continue
            if summary.get("in_breakdown") and (m := _SUM_REASON.match(msg)) is not None:
                bd = summary["breakdown"]
                assert isinstance(bd, list)
                bd.append((m.group("r"), int(m.group("n"))))
                continue
            close_summary()
        if (m := _BIND_HDR.match(msg)) is not None:
            bin_hdl = int(m.group("bin"), 16)
            res.bind_map_headers.append(
                BindMapHeader(ml.src, t, pid, bin_hdl, int(m.group("n")), int(m.group("p")))
            )
        elif (m := _BIND_REC.match(msg)) is not None:
            res.bind_records.append(
                BindRecord(
                    ml.src,
                    t,
                    pid,
                    bin_hdl,
                    int(m.group("i")),
                    int(m.group("cap")),
                    int(m.group("g"), 16),
                    (
                        int(m.group("s0"), 16),
                        int(m.group("s1"), 16),
                        int(m.group("s2"), 16),
                        int(m.group("s3"), 16),
                    ),
                )
            )
        elif (m := _CHILD.match(msg)) is not None:
            child = m.group("f")
            res.child_binaries.append(
                ChildBinary(
                    ml.src,
                    t,
                    pid,
                    child,
                    int(m.group("dev"), 16),
                    int(m.group("size")),
                    int(m.group("aic"), 16),
                    int(m.group("aiv"), 16),
                )
            )
        elif (m := _OFFSETS.match(msg)) is not None:
            if res.child_binaries and res.child_binaries[-1].aic_offset is None:
                res.child_binaries[-1] = replace(
                    res.child_binaries[-1],
                    aic_offset=int(m.group("aic"), 16),
                    aiv_offset=int(m.group("aiv"), 16),
                )
            else:
                res.unrecognized.append(Unrecognized(ml.src, msg, "super_kernel:offsets_without_funcName"))
        elif (m := _SPLIT_SYM.match(msg)) is not None:
            res.split_symbols.append(
                SplitSymbol(
                    ml.src,
                    t,
                    pid,
                    child,
                    int(m.group("i")),
                    m.group("core"),
                    m.group("sym"),
                    int(m.group("size"), 16),
                    m.group("bind"),
                )
            )
        elif (m := _SPLIT_ADDR.match(msg)) is not None:
            res.split_func_addrs.append(
                SplitFuncAddr(
                    ml.src,
                    t,
                    pid,
                    child,
                    int(m.group("i")),
                    (int(m.group("a0"), 16), int(m.group("a1"), 16)),
                    (int(m.group("p0"), 16), int(m.group("p1"), 16)),
                    int(m.group("cap")),
                )
            )
        elif (m := _DUMPED.match(msg)) is not None:
            res.dumped_binaries.append(
                DumpedBinary(
                    ml.src,
                    t,
                    pid,
                    "kernel" if m.group("kind") == "kernel" else "entry",
                    m.group("path"),
                    int(m.group("size")),
                    int(m.group("addr")),
                )
            )
        elif (m := _GEN_ENTRY.match(msg)) is not None:
            res.entry_infos.append(EntryInfo(ml.src, t, pid, tuple(_kv(m.group("kv")).items())))
        elif (m := _BUILT.match(msg)) is not None:
            res.scopes_built.append(ScopeBuilt(ml.src, t, pid, m.group("et"), m.group("h"), m.group("n")))
        elif (m := _REORDERED.match(msg)) is not None:
            reorder = (ml, int(m.group("n")), [])
        elif (m := _INDEX_NODE.match(msg)) is not None:
            try:
                got = match_node(msg, m.end(), ml.src)
            except ParseError as exc:
                res.unrecognized.append(Unrecognized(ml.src, msg, f"super_kernel:index_node: {exc}"))
                continue
            if got is None:
                res.plain_text_lines += 1
                continue
            res.task_index_nodes.append(
                TaskIndexNode(ml.src, t, pid, int(m.group("i")), m.group("t"), got[0])
            )
        elif (m := _DEFERRED.match(msg)) is not None:
            res.deferred_waits.append(DeferredWait(ml.src, t, pid, tuple(_kv(m.group("kv")).items())))
        elif "buffer is full" in msg:
            res.profiling_buffer_full.append(ProfilingBufferFull(ml.src, t, pid, msg))
        elif _SUMMARY.match(msg):
            summary = {"ml": ml, "breakdown": []}
        elif (failure := _failure(msg)) is not None:
            kind, fm = failure
            gd = fm.groupdict()
            res.bind_map_failures.append(
                BindMapFailure(
                    ml.src,
                    t,
                    pid,
                    kind,
                    gd.get("k"),
                    int(gd["ret"]) if gd.get("ret") is not None else None,
                    int(gd["g"], 16) if gd.get("g") is not None else None,
                    msg,
                )
            )
        else:
            res.plain_text_lines += 1
    close_reorder()
    close_summary()
    return res


def _note_repeated(res: SuperKernelLogResult, line: RepeatedLine) -> None:
    """:meth:`MetaResultBase.note_common` for an undecoded line (prefixed, not blank, no oversized number)."""
    res.lines_read += 1
    if res.first_prefix is None:
        ml = line.materialize()
        assert ml.prefix is not None  # a bytes prefix match is a text prefix match
        res.first_prefix = (ml.prefix.ts, ml.prefix.pid, line.no)
    if line.pid not in res.pid_first_line:
        res.pid_first_line[line.pid] = line.no


def _failure(msg: str) -> tuple[str, re.Match[str]] | None:
    for kind, rx in _FAILURES:
        m = rx.match(msg)
        if m is not None:
            return kind, m
    return None


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) else None
