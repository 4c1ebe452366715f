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
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.filelog import MILLIS, prefix_ts, second_of, ts_from_bytes
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.sk_log_outline import DEFERRED_TEXT
from skdbg.parsers.sklog_runs import (
    FACT_LINE,
    HANDLER_FILE,
    HANDLER_FUNCS,
    OTHER_FILE_PRINTERS,
    HandlerRun,
    OtherRun,
    PlainRun,
    SkLog,
    SkLogItem,
    read_super_kernel_log,
)
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase, frame, record_row

__all__ = [
    "DEFERRED_TEXT",
    "HANDLER_FILE",
    "HANDLER_FUNCS",
    "OTHER_FILE_PRINTERS",
    "SkLog",
    "SkLogItem",
    "SuperKernelLogResult",
    "is_handler_line",
    "parse_super_kernel_log",
    "read_super_kernel_log",
]

if TYPE_CHECKING:
    import pandas as pd

_H = r"0x(?P<{}>[0-9a-fA-F]+)"


def _h(name: str) -> str:
    return _H.format(name)


_BIND_HDR = regexcode.compile(rf"^binHdl={_h('bin')}, metaNum=(?P<n>\d+), payloadSize=(?P<p>\d+)$")
_BIND_REC = regexcode.compile(
    rf"^\[(?P<i>\d+)\] cap=(?P<cap>\d+), globalFunc={_h('g')}, skFunc\[0\]={_h('s0')}, "
    rf"skFunc\[1\]={_h('s1')}, skFunc\[2\]={_h('s2')}, skFunc\[3\]={_h('s3')}$"
)
_CHILD = regexcode.compile(
    rf"^funcName=(?P<f>.*), binDevAddr={_h('dev')}, binDevSize=(?P<size>\d+), aicAddr={_h('aic')}, "
    rf"aivAddr={_h('aiv')}$"
)
_OFFSETS = regexcode.compile(rf"^aicOffset={_h('aic')}, aivOffset={_h('aiv')}$")
_SPLIT_SYM = regexcode.compile(
    rf"^split\[(?P<i>\d+)\] (?P<core>AIC|AIV) symbol=(?P<sym>.*), size={_h('size')}, bind=(?P<bind>\w*)$"
)
_SPLIT_ADDR = regexcode.compile(
    rf"^split\[(?P<i>\d+)\] funcAddr\[0\]={_h('a0')}, funcAddr\[1\]={_h('a1')}, "
    rf"prefetchCnt\[0\]={_h('p0')}, prefetchCnt\[1\]={_h('p1')}, cap=(?P<cap>\d+)$"
)
_FAILURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("FUNC_NOT_FOUND", regexcode.compile(r"^Function is not found in sk bind map for kernel (?P<k>.*)$")),
    ("BINDMAP_INIT_EMPTY", regexcode.compile(r"^bindMap is empty for kernel (?P<k>.*)$")),
    ("META_NUM_FAILED", regexcode.compile(r"^rtBinaryGetMetaNum unsuccessful, ret=(?P<ret>-?\d+)$")),
    ("META_INFO_FAILED", regexcode.compile(r"^rtBinaryGetMetaInfo failed, ret=(?P<ret>-?\d+)$")),
    ("META_NUM_ZERO", regexcode.compile(r"^metaNum is zero!$")),
    (
        "GLOBAL_FUNC_DUPLICATED",
        regexcode.compile(
            rf"^InitSuperKernelBindMap: globalFunc={_h('g')} is duplicated with different value$"
        ),
    ),
    ("BINHDL_NULL", regexcode.compile(r"^binHdl is null for kernel (?P<k>.*)$")),
    ("FUNCHDL_NULL", regexcode.compile(r"^funcHdl is null for kernel (?P<k>.*)$")),
    (
        "BINDMAP_ENTRY_CONFLICT",
        regexcode.compile(
            rf"^Invalid sk bind map for globalFunc={_h('g')}, kernel (?P<k>.*) "
            r"has duplicated entries with different values$"
        ),
    ),
    (
        "BINDMAP_CAP_INCONSISTENT",
        regexcode.compile(r"^Invalid sk bind map for kernel (?P<k>.*), cap is inconsistent$"),
    ),
    (
        "BIN_DEV_ADDR_GET_FAILED",
        regexcode.compile(r"^Failed to get binary device address for kernel (?P<k>.*), ret=(?P<ret>-?\d+)$"),
    ),
    (
        "FUNC_ADDR_GET_FAILED",
        regexcode.compile(r"^Failed to get function address for kernel (?P<k>.*), ret=(?P<ret>-?\d+)$"),
    ),
    (
        "BIN_HOST_ADDR_GET_FAILED",
        regexcode.compile(r"^split\[\d+\] rtGetBinBuffer failed for (?:AIC|AIV), ret=(?P<ret>-?\d+)$"),
    ),
)
_DUMPED = regexcode.compile(
    r"^Dumped (?P<kind>kernel|SK entry) binary: (?P<path>.*), size=(?P<size>\d+), codeSegAddr=(?P<addr>\d+)$"
)
_GEN_ENTRY = regexcode.compile(r"^GenEntryInfo: (?P<kv>\w+=-?\d+(?:, \w+=-?\d+)*)$")
_BUILT = regexcode.compile(
    r"^schedule scope: build finished, entryType=(?P<et>.*?), entryFuncHandle=(?P<h>\S+), "
    r"skFuncName=(?P<n>.*)$"
)
_REORDERED = regexcode.compile(r"^reordered task nodes: node count=(?P<n>\d+)$")
_REORDERED_ROW = regexcode.compile(r"^\[(?P<i>\d+)\]\s+(?=\[nodeId:)")
_INDEX_NODE = regexcode.compile(r"^index=(?P<i>-?\d+), nodeType=(?P<t>\w+), nodeInfo=(?=\[nodeId:)")
_DEFERRED = regexcode.compile(r"^task reorder: place deferred wait node, (?P<kv>\w+=\d+(?:, \w+=\d+)*)$")
#: every line :data:`_DEFERRED` takes holds :data:`DEFERRED_TEXT` (what the outline looks for)
assert DEFERRED_TEXT in _DEFERRED.pattern
_SUMMARY = regexcode.compile(r"^Fusion fail reasons summary:$")
_SUM_ITEM = regexcode.compile(r"^(?P<k>Total nodes|Fusible nodes|Unfusible nodes): (?P<n>\d+)$")
_SUM_BREAKDOWN = regexcode.compile(r"^Failure reason breakdown:$")
_SUM_REASON = regexcode.compile(r"^(?P<r>.+): (?P<n>\d+) nodes$")


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


#: which fact a message can be, by its start (after strip): each regex above starts with one of these
#: literals, so a message tries only the regexes of its start; one that starts with none of them (and
#: holds no ``buffer is full``) is plain text
_KEYS = regexcode.compile(
    r"(?P<hdr>binHdl=)|(?P<rec>\[\d+\] cap=)|(?P<child>funcName=)|(?P<off>aicOffset=)|(?P<split>split\[)|"
    r"(?P<dumped>Dumped )|(?P<gen>GenEntryInfo: )|(?P<built>schedule scope: )|"
    r"(?P<reorder>reordered task nodes: )|(?P<index>index=)|(?P<defer>task reorder: )|"
    r"(?P<summary>Fusion fail reasons summary:)|"
    r"(?P<fail>Function is not found |bindMap is empty |rtBinaryGetMeta|metaNum is zero!|"
    r"InitSuperKernelBindMap: |binHdl is null |funcHdl is null |Invalid sk bind map |Failed to get )"
)


_HS = r"0x([0-9a-fA-F]+)"
#: a run line's prefix (ts, pid) and the blanks before its body. Possessive where ``re`` knows the form
#: (Python 3.11+; 3.10 gets the same matches with plain repeats): a field's ``[^\]\n]*`` is followed
#: by its ``]``, and every body below starts with a non-blank, so giving characters back never matches.
_P = "+" if sys.version_info >= (3, 11) else ""
_FAST_PREFIX = r"(.{23}) \[([0-9]+):[^\]\n]*%s\] \[[^\]\n]*%s\] \[[^\]\n]*%s\] \[[^\]\n]*%s\] ?%s[ \t]*%s" % (
    (_P,) * 6
)
#: the most frequent facts straight from a run's text (a run line is printable ASCII, so each branch
#: matches exactly when its regex above matches the stripped message: `` ?[ \t]*`` and ``[ \t]*\n``
#: stand for the strip, ``[^\n]`` for ``.``, ``[0-9]`` for ``\d``); each branch is the first regex its
#: start (``_KEYS``) tries, so the cascade would pick it too. Any other line matches the last group
#: (``line``, without its newline); ``finditer`` names the branch of each line (``lastgroup``).
#: :data:`_FAST_PREFIX` with the stamp as its second and its milliseconds (two groups, not one): a
#: fact's time is made from both, so the stamp is not sliced per line
_FAST_HEAD = _FAST_PREFIX.replace("(.{23})", "(.{19}).(.{3})", 1)
_CHILD_TEXT = (
    r"funcName=([^\n]*), binDevAddr=" + _HS + r", binDevSize=([0-9]+), aicAddr=" + _HS + r", aivAddr=" + _HS
)
_OFFSETS_TEXT = r"aicOffset=" + _HS + r", aivOffset=" + _HS
_FAST = regexcode.compile(
    _FAST_HEAD + r"(?:"
    r"(?P<sym>split\[([0-9]+)\] (AIC|AIV) symbol=([^\n]*), size=" + _HS + r", bind=(\w*))"
    # a child kernel's line, with the offsets line that completes it when that comes next (the usual
    # pair): one record built once, not built and rebuilt (see offsets)
    r"|(?P<child>" + _CHILD_TEXT + r"(?:[ \t]*\n" + _FAST_PREFIX + _OFFSETS_TEXT + r")?)"
    r"|(?P<off>" + _OFFSETS_TEXT + r")"
    r"|(?P<hdr>binHdl=" + _HS + r", metaNum=([0-9]+), payloadSize=([0-9]+))"
    r"|(?P<rec>\[([0-9]+)\] cap=([0-9]+), globalFunc="
    + _HS
    + r", skFunc\[0\]="
    + _HS
    + r", skFunc\[1\]="
    + _HS
    + r", skFunc\[2\]="
    + _HS
    + r", skFunc\[3\]="
    + _HS
    + r")"
    r"|(?P<dumped>Dumped (kernel|SK entry) binary: ([^\n]*), size=([0-9]+), codeSegAddr=([0-9]+))"
    # the message up to its last non-blank (the strip); the empty group marks where the node starts
    r"|(?P<index>index=(-?[0-9]+), nodeType=(\w+), nodeInfo=()(?=\[nodeId:)[^\n]*(?<![ \t]))"
    r")[ \t]*\n|(?P<line>[^\n]*)\n",
    re.ASCII,
)
_SYM, _CHILD_F, _OFF, _HDR, _REC, _DUMPED_F = (
    tuple(range(_FAST.groupindex[name] + 1, _FAST.groupindex[name] + 1 + count))
    for name, count in (("sym", 5), ("child", 5), ("off", 2), ("hdr", 3), ("rec", 7), ("dumped", 4))
)
#: the offsets of a child line's pair: the child branch's last two groups, the ones just before the
#: ``off`` branch that follows it; None when no offsets line came with it
_CHILD_OFF = (_FAST.groupindex["off"] - 2, _FAST.groupindex["off"] - 1)
_INDEX_I, _INDEX_T, _INDEX_AT = (_FAST.groupindex["index"] + k for k in (1, 2, 3))
#: a run line as ``(ts, pid, body)``, the body without its leading blanks (the run regex checked its
#: prefix already, so a field is just up to its ``]``)
_LINE = regexcode.compile(_FAST_PREFIX + r"([^\n]*)")

#: the fast facts come by the thousand (one per child kernel, four split symbols each): their records
#: and sources are built without the frozen ``__init__`` (see :mod:`skdbg.parsers.bulk`)
_build_split_symbol = frozen_builder(SplitSymbol)
_build_child_binary = frozen_builder(ChildBinary)
_build_bind_header = frozen_builder(BindMapHeader)
_build_bind_record = frozen_builder(BindRecord)
_build_dumped = frozen_builder(DumpedBinary)
_build_task_index_node = frozen_builder(TaskIndexNode)


def parse_super_kernel_log(
    source: str | os.PathLike[str] | SkLog | Iterable[SkLogItem], *, file: str | None = None
) -> SuperKernelLogResult:
    """Extract the §3.3 facts; other lines are counted (free text), never Unrecognized."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    items: Iterable[SkLogItem] = (
        read_super_kernel_log(source) if isinstance(source, (str, os.PathLike)) else source
    )
    parser = _FactParser(SuperKernelLogResult(fname), items.file if isinstance(items, SkLog) else fname)
    for item in items:
        if isinstance(item, MetaLine):
            parser.meta_line(item)
        elif isinstance(item, OtherRun):
            parser.other_run(item)
        elif isinstance(item, PlainRun):
            parser.plain_run(item)
        else:
            parser.handler_run(item)
    return parser.finish()


_Where = tuple[Source, datetime | None, int | None]


class _FactParser:
    """The §3.3 fact state machine over lines in file order: ``binHdl=`` and ``funcName=`` lines give
    context to the records after them; ``reordered task nodes`` and the fail summary open blocks that
    see every following line until one does not belong."""

    def __init__(self, res: SuperKernelLogResult, file: str) -> None:
        self.res = res
        self.file = file  # of the runs' lines (a MetaLine carries its own)
        self.bin_hdl: int | None = None
        self.child: str | None = None
        self.reorder: tuple[_Where, int, list[tuple[int, Node]]] | None = None
        self.summary: dict[str, object] | None = None
        self.summary_at: _Where = (Source(file), None, None)  # the open summary's first line

    # ------------------------------------------------------------------ the kinds of items

    def meta_line(self, ml: MetaLine) -> None:
        """A line read one by one (any edge case): the generic path."""
        res = self.res
        if res.note_common(ml):
            return
        if is_handler_line(ml):
            res.handler_lines += 1
            return
        if (
            ml.prefix is not None
            and ml.prefix.func in OTHER_FILE_PRINTERS
            and self.reorder is None
            and self.summary is None
        ):
            res.plain_text_lines += 1
            return
        self.step(ml.src, ml.ts, ml.pid, ml.message.strip())

    def handler_run(self, run: HandlerRun) -> None:
        """Handler lines never touch the facts nor an open block: counted only."""
        self.res.lines_read += run.count
        self.res.handler_lines += run.count

    def plain_run(self, run: PlainRun) -> None:
        """Repeats of the dedicated files: plain text, unless a block is open and must see them."""
        res = self.res
        if self.reorder is None and self.summary is None:
            res.lines_read += run.count
            res.plain_text_lines += run.count
            return
        for no, (ts, pid, body) in enumerate(FACT_LINE.findall(run.data), run.first_no):
            res.lines_read += 1
            if self.reorder is None and self.summary is None:
                res.plain_text_lines += 1
            else:
                self.step(Source(self.file, no), ts_from_bytes(ts), int(pid), body.decode().strip())

    def other_run(self, run: OtherRun) -> None:
        """Other prefixed lines: the frequent facts straight from the run's text (:data:`_FAST`); the
        rest only when they may be a fact. While a block is open every line goes to :meth:`step`."""
        self.res.lines_read += run.count
        text, no, pos = run.data.decode("ascii"), run.first_no, 0
        # a position into the run, not the rest sliced off: a run with a block every few lines would
        # otherwise be copied once per block opened or closed
        while pos < len(text):
            if self.reorder is None and self.summary is None:
                pos, no = self.fast_lines(text, pos, no)
            else:
                pos, no = self.block_lines(text, pos, no)

    def block_lines(self, text: str, pos: int, no: int) -> tuple[int, int]:
        """Lines of a run (``text`` from ``pos``, that line numbered ``no``) inside an open block, one
        by one until the block is closed; returns where the rest of the run starts and its first line
        number. A row of a reordered block is taken without its time (:meth:`row`, what :meth:`step`
        does first)."""
        end = len(text)
        while pos < end:
            m = _LINE.match(text, pos)
            assert m is not None  # a run line
            pos = m.end() + 1
            ts, pid, rest = m.groups()
            msg = rest.rstrip()  # the prefix took the blanks before the body: body.strip()
            src = self.source(no)
            no += 1
            if self.reorder is not None:
                if self.row(src, msg):
                    continue  # a row of the open block (no stamp needed): the block stays open
                self.close_reorder()  # what step() would do first, without asking row() again
            self.step(src, prefix_ts(ts), int(pid), msg)
            if self.reorder is None and self.summary is None:
                break
        return pos, no

    def fast_lines(self, text: str, pos: int, no: int) -> tuple[int, int]:
        """Lines of a run (``text`` from ``pos``, that line numbered ``no``) outside blocks: one
        ``finditer`` gives each line's fact fields, records are built from them (what :meth:`keyed`
        makes of the message); other lines go to :meth:`general_line`. Stops after a line that opens a
        block and returns where the rest of the run starts and its first line number (``len(text)``
        when the run is done)."""
        res, file, child = self.res, self.file, self.child
        add_symbol = res.split_symbols.append  # the most frequent fact (four per child kernel)
        last_second, base = "", None
        last_pid, p = "", 0  # a run's lines come from a few writers: int() once per change
        # the k-th match starts at line no + k; each child line with its offsets
        # line (two lines in one match) moves the rest on
        for k, m in enumerate(_FAST.finditer(text, pos)):
            kind = m.lastgroup
            if kind == "line":
                self.child = child
                if self.general_line(m[kind], no + k):
                    return m.end(), no + k + 1
                child = self.child
                continue
            src = build_source(file, no + k, None)
            second, ms, pid = m.group(1, 2, 3)
            if pid != last_pid:
                last_pid, p = pid, int(pid)
            if second != last_second:
                last_second = second
                base = second_of(second)
            t = None if base is None else base + MILLIS[int(ms)]
            if kind == "sym":
                i, core, symbol, size, bind = m.group(*_SYM)
                add_symbol(_build_split_symbol(src, t, p, child, int(i), core, symbol, int(size, 16), bind))
            elif kind == "child":
                child, dev, size, aic, aiv = m.group(*_CHILD_F)
                aic_off, aiv_off = m.group(*_CHILD_OFF)
                paired = aic_off is not None  # the record offsets would make of the two lines
                res.child_binaries.append(
                    _build_child_binary(
                        src,
                        t,
                        p,
                        child,
                        int(dev, 16),
                        int(size),
                        int(aic, 16),
                        int(aiv, 16),
                        int(aic_off, 16) if paired else None,
                        int(aiv_off, 16) if paired else None,
                    )
                )
                if paired:
                    no += 1
            elif kind == "off":
                aic, aiv = m.group(*_OFF)
                self.offsets(src, int(aic, 16), int(aiv, 16), m[kind])
            elif kind == "hdr":
                hdl, meta_num, payload = m.group(*_HDR)
                self.bin_hdl = int(hdl, 16)
                res.bind_map_headers.append(
                    _build_bind_header(src, t, p, self.bin_hdl, int(meta_num), int(payload))
                )
            elif kind == "rec":
                i, cap, gfunc, s0, s1, s2, s3 = m.group(*_REC)
                funcs = (int(s0, 16), int(s1, 16), int(s2, 16), int(s3, 16))
                res.bind_records.append(
                    _build_bind_record(src, t, p, self.bin_hdl, int(i), int(cap), int(gfunc, 16), funcs)
                )
            elif kind == "index":
                msg = m[kind]
                at = m.start(_INDEX_AT) - m.start(kind)
                self.index_node(src, t, p, msg, at, m[_INDEX_I], m[_INDEX_T])
            else:  # dumped
                what, path, size, addr = m.group(*_DUMPED_F)
                what = "kernel" if what == "kernel" else "entry"
                res.dumped_binaries.append(_build_dumped(src, t, p, what, path, int(size), int(addr)))
        self.child = child
        return len(text), no

    def general_line(self, line: str, no: int) -> bool:
        """A run line outside blocks that is none of the :data:`_FAST` facts; True when it opened a
        block."""
        m = _LINE.match(line)
        assert m is not None  # a run line
        ts, pid, body = m.groups()
        msg = body.strip()
        if (k := _KEYS.match(msg)) is not None:
            key, src, t, p = k.lastgroup, self.source(no), prefix_ts(ts), int(pid)
            if not self.keyed(key, src, t, p, msg):  # type: ignore[arg-type]
                self.unkeyed(src, t, p, msg, key)
            return self.reorder is not None or self.summary is not None
        if "buffer is full" in msg:
            self.fact(self.source(no), prefix_ts(ts), int(pid), msg, None)
        else:
            self.res.plain_text_lines += 1
        return False

    def source(self, no: int) -> Source:
        return build_source(self.file, no, None)

    def index_node(
        self, src: Source, t: datetime | None, pid: int | None, msg: str, pos: int, index: str, node_type: str
    ) -> None:
        """``index=…, nodeType=…, nodeInfo=<node>`` (``msg``, the node at ``pos``): a task index node,
        an unrecognized line when the node text does not parse, plain text when it is no node."""
        res = self.res
        try:
            got = match_node(msg, pos, src)
        except ParseError as exc:
            res.unrecognized.append(Unrecognized(src, msg, f"super_kernel:index_node: {exc}"))
            return
        if got is None:
            res.plain_text_lines += 1
            return
        res.task_index_nodes.append(_build_task_index_node(src, t, pid, int(index), node_type, got[0]))

    def offsets(self, src: Source, aic: int, aiv: int, msg: str) -> None:
        """``aicOffset=…, aivOffset=…`` (matched ``msg``): completes the child binary before it, or is
        left unrecognized when there is none without offsets. Rare on the fast path, which reads a
        child's line and the offsets line after it as one match; the general path's facts come here too."""
        res = self.res
        if res.child_binaries and res.child_binaries[-1].aic_offset is None:
            res.child_binaries[-1] = replace(res.child_binaries[-1], aic_offset=aic, aiv_offset=aiv)
        else:
            res.unrecognized.append(Unrecognized(src, msg, "super_kernel:offsets_without_funcName"))

    # ------------------------------------------------------------------ blocks

    def close_reorder(self) -> None:
        if self.reorder is None:
            return
        (src, ts, pid), n, rows = self.reorder
        rec = ReorderedNodes(src, ts, pid, n, tuple(rows))
        if not rec.complete:
            self.res.gaps.append(
                Gap("incomplete_block", f"reordered task nodes: {n} announced, {len(rows)} rows", src=src)
            )
        self.res.reordered.append(rec)
        self.reorder = None

    def close_summary(self) -> None:
        summary = self.summary
        if summary is None:
            return
        src, ts, pid = self.summary_at
        bd = summary["breakdown"]
        assert isinstance(bd, list)
        self.res.fail_summaries.append(
            FusionFailSummary(
                src,
                ts,
                pid,
                _opt_int(summary.get("Total nodes")),
                _opt_int(summary.get("Fusible nodes")),
                _opt_int(summary.get("Unfusible nodes")),
                tuple(bd),
            )
        )
        self.summary = None

    def finish(self) -> SuperKernelLogResult:
        self.close_reorder()
        self.close_summary()
        return self.res

    # ------------------------------------------------------------------ one message

    def row(self, src: Source, msg: str) -> bool:
        """A stripped message while a reordered block is open: True when it is one of its rows (taken,
        or unrecognized when its node does not parse); False leaves it to close the block."""
        reorder = self.reorder
        assert reorder is not None
        rm = _REORDERED_ROW.match(msg)
        if rm is not None and len(reorder[2]) < reorder[1]:
            try:
                got = match_node(msg, rm.end(), src)
            except ParseError as exc:
                self.res.unrecognized.append(Unrecognized(src, msg, f"super_kernel:reordered_row: {exc}"))
                return True
            if got is not None:
                reorder[2].append((int(rm.group("i")), got[0]))
                return True
        return False

    def step(self, src: Source, t: datetime | None, pid: int | None, msg: str) -> None:
        """One stripped message that is not blank, a format error, a handler line nor a plain repeat."""
        if self.reorder is not None:
            if self.row(src, msg):
                return
            self.close_reorder()
        summary = self.summary
        if summary is not None:
            if (m := _SUM_ITEM.match(msg)) is not None:
                summary[m.group("k")] = int(m.group("n"))
                return
            if _SUM_BREAKDOWN.match(msg):
                summary["in_breakdown"] = True
                return
            if summary.get("in_breakdown") and (m := _SUM_REASON.match(msg)) is not None:
                bd = summary["breakdown"]
                assert isinstance(bd, list)
                bd.append((m.group("r"), int(m.group("n"))))
                return
            self.close_summary()
        k = _KEYS.match(msg)
        self.fact(src, t, pid, msg, k.lastgroup if k is not None else None)

    def fact(self, src: Source, t: datetime | None, pid: int | None, msg: str, key: str | None) -> None:
        """A message outside blocks, by its start (``_KEYS`` group, None for none of them)."""
        if key is None or not self.keyed(key, src, t, pid, msg):
            self.unkeyed(src, t, pid, msg, key)

    def unkeyed(self, src: Source, t: datetime | None, pid: int | None, msg: str, key: str | None) -> None:
        """A message no fact regex of its start took: the checks that follow them in the cascade."""
        res = self.res
        if "buffer is full" in msg:
            res.profiling_buffer_full.append(ProfilingBufferFull(src, t, pid, msg))
        elif key == "summary" and _SUMMARY.match(msg):
            self.summary = {"breakdown": []}
            self.summary_at = (src, t, pid)
        elif (key == "fail" or key == "split") and (failure := _failure(msg)) is not None:
            kind, fm = failure
            gd = fm.groupdict()
            res.bind_map_failures.append(
                BindMapFailure(
                    src,
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

    def keyed(self, key: str, src: Source, t: datetime | None, pid: int | None, msg: str) -> bool:
        """The facts of one message start (``_KEYS``), in the order they are tried; True when one took
        the message (a fact, an unrecognized line or a counted plain line)."""
        res = self.res
        if key == "hdr":
            if (m := _BIND_HDR.match(msg)) is None:
                return False
            hdl, n, payload = m.groups()
            self.bin_hdl = int(hdl, 16)
            res.bind_map_headers.append(BindMapHeader(src, t, pid, self.bin_hdl, int(n), int(payload)))
        elif key == "rec":
            if (m := _BIND_REC.match(msg)) is None:
                return False
            i, cap, g, s0, s1, s2, s3 = m.groups()
            res.bind_records.append(
                BindRecord(
                    src,
                    t,
                    pid,
                    self.bin_hdl,
                    int(i),
                    int(cap),
                    int(g, 16),
                    (int(s0, 16), int(s1, 16), int(s2, 16), int(s3, 16)),
                )
            )
        elif key == "child":
            if (m := _CHILD.match(msg)) is None:
                return False
            f, dev, size, aic, aiv = m.groups()
            self.child = f
            res.child_binaries.append(
                ChildBinary(src, t, pid, f, int(dev, 16), int(size), int(aic, 16), int(aiv, 16))
            )
        elif key == "off":
            if (m := _OFFSETS.match(msg)) is None:
                return False
            self.offsets(src, int(m.group("aic"), 16), int(m.group("aiv"), 16), msg)
        elif key == "split":
            if (m := _SPLIT_SYM.match(msg)) is not None:
                i, core, sym, size, bind = m.groups()
                res.split_symbols.append(
                    SplitSymbol(src, t, pid, self.child, int(i), core, sym, int(size, 16), bind)
                )
            elif (m := _SPLIT_ADDR.match(msg)) is not None:
                i, a0, a1, p0, p1, cap = m.groups()
                res.split_func_addrs.append(
                    SplitFuncAddr(
                        src,
                        t,
                        pid,
                        self.child,
                        int(i),
                        (int(a0, 16), int(a1, 16)),
                        (int(p0, 16), int(p1, 16)),
                        int(cap),
                    )
                )
            else:
                return False
        elif key == "dumped":
            if (m := _DUMPED.match(msg)) is None:
                return False
            kind, path, size, addr = m.groups()
            res.dumped_binaries.append(
                DumpedBinary(
                    src, t, pid, "kernel" if kind == "kernel" else "entry", path, int(size), int(addr)
                )
            )
        elif key == "gen":
            if (m := _GEN_ENTRY.match(msg)) is None:
                return False
            res.entry_infos.append(EntryInfo(src, t, pid, tuple(_kv(m.group("kv")).items())))
        elif key == "built":
            if (m := _BUILT.match(msg)) is None:
                return False
            res.scopes_built.append(ScopeBuilt(src, t, pid, m.group("et"), m.group("h"), m.group("n")))
        elif key == "reorder":
            if (m := _REORDERED.match(msg)) is None:
                return False
            self.reorder = ((src, t, pid), int(m.group("n")), [])
        elif key == "index":
            if (m := _INDEX_NODE.match(msg)) is None:
                return False
            self.index_node(src, t, pid, msg, m.end(), *m.group("i", "t"))
        elif key == "defer":
            if (m := _DEFERRED.match(msg)) is None:
                return False
            res.deferred_waits.append(DeferredWait(src, t, pid, tuple(_kv(m.group("kv")).items())))
        else:
            return False
        return True


def _failure(msg: str) -> tuple[str, re.Match[str]] | None:
    for kind, rx in _FAILURES:
        m = rx.match(msg)
        if m is not None:
            return kind, m
    return None


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) else None
