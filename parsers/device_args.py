"""``sk_device_args.log`` — ``DumpDeviceArgsDetail`` of ``sk_task_builder.cpp`` (§3.9, row 59).

Why it matters: it is the device args exactly as uploaded for each SK, and the **only**
artifact that maps a task/node index (the ``opIndex``/``opId`` of COND and counters, plog
``node[N]``) directly to a graph ``nodeId`` — see :meth:`DeviceArgsResult.task_index_to_node_id`.
It also carries the full ``SkDfxInfo`` table even when plog was at ERROR level.

Variants accepted: header with ``wsOff=`` (legacy), the empty line after the header (the format
ends in ``\\n``), task lines with/without ``nodeId``/``relatedType``/``extraInfo`` (the stored
upstream revision 5450320f prints neither), ``nodeId=18446744073709551615`` = index out of range,
dfx lines with/without the ``numBlocks…`` tail, entry addresses four per line or one per line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, cast

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder, kept_records
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.fused_nodes import SkFuncName, split_sk_func_name, too_long_gap
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase
from skdbg.parsers.skmeta_scan import NEXT_PREFIX, FastScan, fast_pattern

if TYPE_CHECKING:
    import pandas as pd

NODE_ID_OUT_OF_RANGE = 18446744073709551615
TASK_TYPES = frozenset({"FUNC", "SYNC", "PRELOAD", "EVENT_NOTIFY", "EVENT_WAIT", "EVENT_RESET", "UNKNOWN"})
SYNC_KINDS = {
    0: "ALL_SYNC",
    1: "AIC_TO_AIC",
    2: "AIV_TO_AIV",
    3: "SET_AIC_TO_AIV",
    4: "SET_AIV_TO_AIC",
    5: "WAIT_AIC_TO_AIV",
    6: "WAIT_AIV_TO_AIC",
    7: "SYNC_NONE",
}
WAIT_FLAGS = {0: "GEQ", 1: "EQ", 2: "AND", 3: "NOR"}
# §2: per-task debug bits.
DEBUG_OPTION_BITS = (
    (0x1, "DISABLE_DCCI"),
    (0x2, "DEBUG_SYNC_ALL"),
    (0x4, "DCCI_BEFORE_CHILD"),
    (0x8, "DCCI_AFTER_CHILD_REQUESTED"),
    (0x10, "CROSS_CORE_SYNC_CHECK"),
    (0x20, "DCCI_AFTER_CHILD"),
)
PRELOAD_COUNTS = {0x10: "max AIC", 0x8: "max AIV", 0: "none"}


def decode_debug_options(value: int) -> tuple[str, ...]:
    """Names of the set §2 debug bits; unknown bits as ``BIT_0x…``."""
    names = [name for bit, name in DEBUG_OPTION_BITS if value & bit]
    rest = value & ~sum(bit for bit, _ in DEBUG_OPTION_BITS)
    if rest:
        names.append(f"BIT_0x{rest:x}")
    return tuple(names)


_FUNC = regexcode.compile(r"^\s*Dumping device args for function: (?P<name>.*?)\s*$")
_HEADER = regexcode.compile(
    r"^\s*SkHeaderInfo: aicOff=(?P<aic>\d+), aivOff=(?P<aiv>\d+), counterOff=(?P<cnt>\d+), "
    r"(?:wsOff=(?P<ws>\d+), )?dfxOff=(?P<dfx>\d+), eventConfigOff=(?P<ev>\d+), nodeCnt=(?P<n>\d+), "
    r"totalSize=(?P<tot>\d+)\s*$"
)
_QUEUE = regexcode.compile(r"^\s*(?P<q>AIC|AIV) TaskQue: cap=(?P<cap>\d+), tasks=(?P<n>\d+)\s*$")
_HEX = r"0x[0-9a-fA-F]+"
_TASK = regexcode.compile(
    r"^\s*\[(?P<i>\d+)\] type=(?P<type>[A-Z_]+), idx=(?P<idx>\d+)"
    r"(?:, nodeId=(?P<nid>\d+))?(?:, relatedType=(?P<rt>\w+))?"
    rf", blk=(?P<blk>\d+), entries=(?P<ent>\d+), args=(?P<args>{_HEX}), debugOptions=(?P<dbg>{_HEX})"
    rf"(?:, extraInfo=(?P<extra>{_HEX}))?\s*$"
)
_ENTRY = regexcode.compile(rf"^\s*entry\[(?P<j>\d+)\]=(?P<v>{_HEX})\s*$")
_DFX = regexcode.compile(
    rf"^\s*dfx\[(?P<i>\d+)\]: bin=(?P<bin>{_HEX}), ori=(?P<ori>{_HEX}), aicSize=(?P<aic>{_HEX}), "
    rf"aivSize=(?P<aiv>{_HEX})(?:, numBlocks=(?P<nb>\d+), cubeNum=(?P<cube>\d+), vecNum=(?P<vec>\d+))?\s*$"
)
_DFX_ENTRIES = regexcode.compile(rf"^\s*(?:entryAi[cv]\[[0-3]\]={_HEX}(?:, |\s*$))+$")
_DFX_ITEM = regexcode.compile(rf"entryAi(?P<c>[cv])\[(?P<j>[0-3])\]=(?P<v>{_HEX})")


@dataclass(frozen=True, slots=True)
class SkHeader:
    """The block's ``SkHeaderInfo:`` line: where each region of the uploaded args starts (byte offsets),
    the node count and the total size."""

    src: Source
    aic_off: int
    aiv_off: int
    counter_off: int
    ws_off: int | None  # legacy field
    dfx_off: int
    event_config_off: int
    node_cnt: int
    total_size: int


@dataclass(frozen=True, slots=True)
class Task:
    """One TaskInfo row. ``node_id`` None when the build did not print it (or out of range)."""

    src: Source
    queue: str  # AIC / AIV
    position: int
    type: str
    idx: int
    node_id_raw: int | None
    related_type: str | None
    blk: int
    entries_declared: int
    args: int
    debug_options: int
    extra_info: int | None
    entries: tuple[int, ...]

    @property
    def node_id_out_of_range(self) -> bool:
        return self.node_id_raw == NODE_ID_OUT_OF_RANGE

    @property
    def node_id(self) -> int | None:
        return None if self.node_id_out_of_range else self.node_id_raw

    @property
    def sync_kind(self) -> str | None:
        """SYNC tasks: ``args`` is the ``SkCoreSyncType`` (§3.9)."""
        if self.type != "SYNC":
            return None
        return SYNC_KINDS.get(self.args, f"UNKNOWN({self.args})")

    @property
    def wait_flag(self) -> str | None:
        """EVENT_* tasks: ``extraInfo`` is the wait flag (GEQ/EQ/AND/NOR)."""
        if not self.type.startswith("EVENT_") or self.extra_info is None:
            return None
        return WAIT_FLAGS.get(self.extra_info, f"UNKNOWN({self.extra_info})")

    @property
    def debug_option_names(self) -> tuple[str, ...]:
        return decode_debug_options(self.debug_options)

    @property
    def entries_complete(self) -> bool:
        return len(self.entries) == self.entries_declared


@dataclass(frozen=True, slots=True)
class TaskQueue:
    """One AIC or AIV task queue of a block: its capacity, the task count it declares and the
    :class:`Task` rows printed."""

    src: Source
    name: str
    cap: int
    tasks_declared: int
    #: the rows; those the fast branch read are made records when first read
    #: (:class:`~skdbg.parsers.bulk.LazyRecords`: an analysis reads them only in its wait-for analysis,
    #: to cite a task or read its blk, or where no task queue JSON names the tasks; the table export
    #: reads them all), else a tuple
    tasks: Sequence[Task]
    #: each row's ``(idx, node_id_raw)``, in order: what the index map and its conflicts read, without
    #: a record of each task. Derived from ``tasks`` by the parser: a queue made with other tasks must
    #: be given their pairs
    index_nodes: tuple[tuple[int, int | None], ...]


@dataclass(frozen=True, slots=True)
class DfxEntry:
    """One ``SkDfxInfo`` row of a block: the child's binary and original function handles, its code
    sizes, block and core counts and entry addresses per core type (four each; None where not printed)."""

    src: Source
    index: int
    bin: int
    ori: int
    aic_size: int
    aiv_size: int
    num_blocks: int | None
    cube_num: int | None
    vec_num: int | None
    entry_aic: tuple[int | None, int | None, int | None, int | None]
    entry_aiv: tuple[int | None, int | None, int | None, int | None]


@dataclass(frozen=True, slots=True)
class DeviceArgsBlock:
    """One ``Dumping device args for function: <skFuncName>`` block."""

    src: Source
    ts: datetime | None
    pid: int | None
    sk_func_name: str
    name: SkFuncName
    header: SkHeader | None
    queues: tuple[TaskQueue, ...]
    #: the SkDfxInfo rows; those the fast branch read are made records when first read
    #: (:class:`~skdbg.parsers.bulk.LazyRecords`: an analysis reads them only when the exception block
    #: prints no DfxInfo table of its own, or to place a deferred wait's kernel), else a tuple
    dfx: Sequence[DfxEntry]
    occurrence: int

    @property
    def scope_id(self) -> int | None:
        return self.name.scope_id

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(t for q in self.queues for t in q.tasks)

    def queue(self, name: str) -> TaskQueue | None:
        for q in self.queues:
            if q.name == name:
                return q
        return None

    def task_index_to_node_id(self) -> dict[int, int | None]:
        """Node index → graph nodeId (None = out of range sentinel); tasks without nodeId skipped."""
        out: dict[int, int | None] = {}
        # per queue, its rows' (idx, nodeId) kept at the parse: no record of a task is made (5,000
        # tasks on the bench scene, read once per analysis)
        for q in self.queues:
            for idx, raw in q.index_nodes:
                if raw is not None and idx not in out:
                    out[idx] = None if raw == NODE_ID_OUT_OF_RANGE else raw
        return out

    def index_conflicts(self) -> dict[int, set[int | None]]:
        """Indices whose tasks name different nodeIds (should never happen; a corrupt dump)."""
        first: dict[int, int | None] = {}  # idx -> the nodeId its first task names
        conflicts: dict[int, set[int | None]] = {}
        for q in self.queues:
            for idx, raw in q.index_nodes:
                if raw is None:
                    continue
                nid = None if raw == NODE_ID_OUT_OF_RANGE else raw
                if idx not in first:
                    first[idx] = nid
                elif first[idx] != nid:
                    conflicts.setdefault(idx, {first[idx]}).add(nid)
        # in the order the indices first appear
        return {k: conflicts[k] for k in first if k in conflicts} if conflicts else {}


#: the block columns every task/dfx row starts with (after file/line)
_BLOCK_COLS = (Col("sk_func_name"), Col("scope_id"), Col("occurrence"))
TASK_COLS = (
    *SRC_COLS,
    *_BLOCK_COLS,
    Col("queue"),
    Col("position"),
    Col("type"),
    Col("idx"),
    Col("node_id"),
    Col("node_id_out_of_range"),
    Col("related_type"),
    Col("blk"),
    Col("entries_declared"),
    Col("entries", lambda t: list(t.entries)),
    Col("args"),
    Col("debug_options"),
    Col("debug_option_names", lambda t: list(t.debug_option_names)),
    Col("extra_info"),
    Col("sync_kind"),
    Col("wait_flag"),
)
DFX_COLS = (
    *SRC_COLS,
    *_BLOCK_COLS,
    Col("index"),
    Col("bin"),
    Col("ori"),
    Col("aic_size"),
    Col("aiv_size"),
    Col("num_blocks"),
    Col("cube_num"),
    Col("vec_num"),
    Col("entry_aic", lambda d: list(d.entry_aic)),
    Col("entry_aiv", lambda d: list(d.entry_aiv)),
)
TASK_COLUMNS = [c.name for c in TASK_COLS]
DFX_COLUMNS = [c.name for c in DFX_COLS]


@dataclass
class DeviceArgsResult(MetaResultBase):
    """Every block of ``sk_device_args.log`` in file order (a rerun appends a newer block of the same
    scope)."""

    blocks: list[DeviceArgsBlock] = field(default_factory=list)

    def block_for(self, scope: int | str) -> DeviceArgsBlock | None:
        """The latest block of a scope id or skFuncName (a rerun appends a newer one)."""
        found = [
            b
            for b in self.blocks
            if (isinstance(scope, int) and b.scope_id == scope)
            or (isinstance(scope, str) and b.sk_func_name == scope)
        ]
        return found[-1] if found else None

    def task_index_to_node_id(self, scope: int | str) -> dict[int, int | None]:
        """The only direct task index → nodeId map (§3.9); empty if the scope or nodeIds are absent."""
        b = self.block_for(scope)
        return b.task_index_to_node_id() if b is not None else {}

    def to_frame(self) -> pd.DataFrame:
        """One row per task."""
        return records_frame(
            ((_block_context(b), t) for b in self.blocks for t in b.tasks),
            TASK_COLS,
        )

    def dfx_frame(self) -> pd.DataFrame:
        return records_frame(((_block_context(b), d) for b in self.blocks for d in b.dfx), DFX_COLS)


def _block_context(b: DeviceArgsBlock) -> dict[str, object]:
    return {"sk_func_name": b.sk_func_name, "scope_id": b.scope_id, "occurrence": b.occurrence}


_build_task = frozen_builder(Task)
_build_dfx = frozen_builder(DfxEntry)
_TASK_GROUPS = ("i", "type", "idx", "nid", "rt", "blk", "ent", "args", "dbg", "extra")
_DFX_GROUPS = ("i", "bin", "ori", "aic", "aiv", "nb", "cube", "vec")
_NO_ENTRIES: tuple[int | None, int | None, int | None, int | None] = (None, None, None, None)


def _task(src: Source, queue: str, values: Sequence[str | None], entries: tuple[int, ...]) -> Task:
    """The task of a task line's groups (position, type, idx, nodeId, relatedType, blk, entries, args,
    debugOptions, extraInfo) and the entries read so far: the general branch's, built when the line is
    read (a later entry line rebuilds it, :func:`_with_entry`). The fast branch keeps the row, with the
    entry lines its match took, and :func:`_task_of` makes the same record from it when first read."""
    i, typ, idx, nid, rt, blk, ent, args, dbg, extra = values
    assert i is not None and typ is not None and idx is not None and blk is not None
    assert ent is not None and args is not None and dbg is not None
    return _build_task(
        src,
        queue,
        int(i),
        typ,
        int(idx),
        int(nid) if nid is not None else None,
        rt,
        int(blk),
        int(ent),
        int(args, 16),
        int(dbg, 16),
        int(extra, 16) if extra is not None else None,
        entries,
    )


def _with_entry(t: Task, value: int) -> Task:
    """``t`` with one more ``entry[j]`` value (an entry line the task's own match did not take)."""
    return _build_task(
        t.src,
        t.queue,
        t.position,
        t.type,
        t.idx,
        t.node_id_raw,
        t.related_type,
        t.blk,
        t.entries_declared,
        t.args,
        t.debug_options,
        t.extra_info,
        (*t.entries, value),
    )


#: a task row the fast branch read, its record not made yet: its line, its queue's name, its 14 groups of
#: :data:`_FAST` (position, type, idx, nodeId, relatedType, blk, entries, args, debugOptions, extraInfo,
#: then the values of the entry lines its match took) and how many entry lines it took (0 to 4)
_TaskRow = tuple[int, str, tuple[str | None, ...], int]


def _entry_count(task: Task | _TaskRow) -> int:
    """How many entry values a task (its record, or its row) holds so far."""
    return task[3] if type(task) is tuple else len(cast("Task", task).entries)


def _task_of(file: str, row: Task | _TaskRow) -> Task:
    """The record of a task row of ``file``: the one the branches made when they read the line, before
    rows were kept (:func:`_task` of its groups and of the entry lines its match took). No conversion
    fails: the pattern took ASCII digits only, and a line with a number too wide for the record never
    reaches the fast branch (an oversized number goes the line layer's way,
    :mod:`~skdbg.parsers.skmeta_scan`)."""
    if isinstance(row, Task):
        return row
    no, queue, groups, listed = row
    entries = tuple([int(v, 16) for v in cast("tuple[str, ...]", groups[10 : 10 + listed])])
    return _task(build_source(file, no, None), queue, groups[:10], entries)


def _dfx(
    src: Source,
    values: Sequence[str | None],
    entry_aic: tuple[int | None, int | None, int | None, int | None] = _NO_ENTRIES,
    entry_aiv: tuple[int | None, int | None, int | None, int | None] = _NO_ENTRIES,
) -> DfxEntry:
    """The dfx row of a dfx line's groups (index, bin, ori, aicSize, aivSize, numBlocks, cubeNum, vecNum)
    and the entry values read with it: none in the general branch (its entry lines rebuild the row,
    :func:`_dfx_items`). The fast branch keeps the row, with the entry values its match took, and
    :func:`_dfx_entry` makes the same record from it when the block's rows are first read."""
    i, bin_, ori, aic_size, aiv_size, nb, cube, vec = values
    assert i is not None and bin_ is not None and ori is not None
    assert aic_size is not None and aiv_size is not None
    return _build_dfx(
        src,
        int(i),
        int(bin_, 16),
        int(ori, 16),
        int(aic_size, 16),
        int(aiv_size, 16),
        int(nb) if nb is not None else None,
        int(cube) if cube is not None else None,
        int(vec) if vec is not None else None,
        entry_aic,
        entry_aiv,
    )


#: a SkDfxInfo row the fast branch read (with the entryAic / entryAiv lines its match took), its record not
#: made yet: its line and its 16 groups of :data:`_FAST` (index, bin, ori, aicSize, aivSize, numBlocks,
#: cubeNum, vecNum, then the four AIC and the four AIV entry values)
_DfxRow = tuple[int, tuple[str | None, ...]]


def _dfx_entry(file: str, row: DfxEntry | _DfxRow) -> DfxEntry:
    """The record of a dfx row of ``file``: the one the fast branch made when it read the line, before rows
    were kept (the regex took only digits, so no conversion fails here that would not have failed then)."""
    if isinstance(row, DfxEntry):
        return row
    no, groups = row
    c0, c1, c2, c3, v0, v1, v2, v3 = groups[8:16]
    return _dfx(
        build_source(file, no, None),
        groups[:8],
        _NO_ENTRIES if c0 is None else _four_hex(c0, c1, c2, c3),
        _NO_ENTRIES if v0 is None else _four_hex(v0, v1, v2, v3),
    )


def _four_hex(a: str | None, b: str | None, c: str | None, d: str | None) -> tuple[int, int, int, int]:
    """The four entry values of a four-per-line entry line (the fast pattern takes all four or none)."""
    assert a is not None and b is not None and c is not None and d is not None
    return (int(a, 16), int(b, 16), int(c, 16), int(d, 16))


def _entries_gap(position: int, declared: int, listed: int, src: Source) -> Gap:
    """The gap of a task (its record, or a row the fast branch kept) that lists another number of entry
    lines than its ``entries=`` declares."""
    return Gap("entries_incomplete", f"task [{position}]: entries={declared}, {listed} listed", src=src)


class _QueueB:
    def __init__(self, ml: MetaLine, m: re.Match[str]) -> None:
        self.ml, self.name = ml, m.group("q")
        self.cap, self.n = int(m.group("cap")), int(m.group("n"))
        #: records (a task the general branch read, or one an entry line completed) and rows (one the
        #: fast branch read, with the entry lines its match took), in order
        self.tasks: list[Task | _TaskRow] = []


class _BlockB:
    def __init__(self, ml: MetaLine, name: str) -> None:
        self.ml, self.name = ml, name
        self.header: SkHeader | None = None
        self.queues: list[_QueueB] = []
        #: records (a row the general branch read, or one an entry line completed) and rows (one the
        #: fast branch read whole), in order
        self.dfx: list[DfxEntry | _DfxRow] = []

    def open_tasks(self) -> tuple[list[Task | _TaskRow] | None, str]:
        """The task list (and queue name) a task or entry line goes to; None once dfx rows began or
        before any queue line (then such a line is the general branch's to report)."""
        if self.queues and not self.dfx:
            q = self.queues[-1]
            return q.tasks, q.name
        return None, ""


_DFX_ITEMS = rf"(?:entryAi[cv]\[[0-3]\]={_HEX}(?:, |[ \t]*$))+"
_NEXT = rf"{NEXT_PREFIX}[ \t]*"


def _four(core: str, group: str) -> str:
    """The four-per-line dfx entry line ``entryAi<core>[0]=…, …, entryAi<core>[3]=…`` (groups group0..3)."""
    items = ", ".join(rf"entryAi{core}\[{j}\]=(?P<{group}{j}>{_HEX})" for j in range(4))
    return rf"(?:{_NEXT}{items}[ \t]*|)"


#: the task, entry, dfx and dfx-entry lines (nearly all of the file) as the general patterns read them,
#: narrowed to ASCII digits and spaces/tabs (skmeta_scan). A task line takes the ``entry[0..3]`` lines
#: that follow it in order (``e0``…``e3``) and a dfx line its four-per-line ``entryAic`` then
#: ``entryAiv`` lines (``c0``…, ``v0``…), so most of the file is one match per task or dfx row; other
#: entry lines match alone. Each alternative ends in a marker group (``lastgroup``). Optional parts are
#: written ``(?:X|)``, not ``(?:X)?``: the same matches and groups (X first, else nothing), but sre runs a
#: branch faster than a {0,1} repeat (15 -> 12 ms over the bench scene's 3.6 MB file).
_FAST = fast_pattern(
    r"[ \t]*(?:"
    r"\[(?P<ti>[0-9]+)\] type=(?P<tt>[A-Z_]+), idx=(?P<tx>[0-9]+)(?:, nodeId=(?P<tn>[0-9]+)|)"
    r"(?:, relatedType=(?P<tr>[A-Za-z0-9_]+)|), blk=(?P<tb>[0-9]+), entries=(?P<te>[0-9]+)"
    rf", args=(?P<ta>{_HEX}), debugOptions=(?P<td>{_HEX})(?:, extraInfo=(?P<tX>{_HEX})|)[ \t]*"
    rf"(?:{_NEXT}entry\[0\]=(?P<e0>{_HEX})[ \t]*(?:{_NEXT}entry\[1\]=(?P<e1>{_HEX})[ \t]*"
    rf"(?:{_NEXT}entry\[2\]=(?P<e2>{_HEX})[ \t]*(?:{_NEXT}entry\[3\]=(?P<e3>{_HEX})[ \t]*|)|)|)|)"
    r"(?P<TASK>)"
    rf"|entry\[(?P<ej>[0-9]+)\]=(?P<ev>{_HEX})[ \t]*(?P<ENTRY>)"
    rf"|dfx\[(?P<di>[0-9]+)\]: bin=(?P<db>{_HEX}), ori=(?P<do>{_HEX}), aicSize=(?P<dc>{_HEX}), "
    rf"aivSize=(?P<dv>{_HEX})(?:, numBlocks=(?P<dn>[0-9]+), cubeNum=(?P<du>[0-9]+), vecNum=(?P<dm>[0-9]+)|)"
    rf"[ \t]*{_four('c', 'c')}{_four('v', 'v')}(?P<DFX>)"
    rf"|(?P<xs>{_DFX_ITEMS})(?P<DFXE>)"
    r")"
)
_FAST_TASK = ("ti", "tt", "tx", "tn", "tr", "tb", "te", "ta", "td", "tX")
_FAST_DFX = ("di", "db", "do", "dc", "dv", "dn", "du", "dm")
_FAST_ENTRIES = ("e0", "e1", "e2", "e3")
_FAST_AIC = ("c0", "c1", "c2", "c3")
_FAST_AIV = ("v0", "v1", "v2", "v3")


def _at(*names: str) -> int:
    """Where the groups ``names`` of :data:`_FAST` start in ``m.groups()``: they must be consecutive, so a
    match's values are one slice of the tuple ``groups()`` makes in one call (not a lookup per name)."""
    index = _FAST.groupindex
    first = index[names[0]]
    if [index[n] for n in names] != list(range(first, first + len(names))):
        raise AssertionError(f"groups {names} of the fast pattern are not consecutive")
    return first - 1


_G_PID = _at("pid")
_G_TASK = _at(*_FAST_TASK, *_FAST_ENTRIES)  # the entries follow the task values
_G_ENTRY = _at("ej", "ev")
_G_DFX = _at(*_FAST_DFX, *_FAST_AIC, *_FAST_AIV)  # the entry values follow the row values
_G_DFXE = _at("xs")
#: ``m.lastindex`` of each alternative: its marker group closes last
_IS_TASK, _IS_ENTRY, _IS_DFX, _IS_DFXE = (_FAST.groupindex[k] for k in ("TASK", "ENTRY", "DFX", "DFXE"))


def parse_device_args(
    source: str | os.PathLike[str] | Iterable[MetaLine], *, file: str | None = None
) -> DeviceArgsResult:
    """Parse ``sk_device_args.log`` (or the same DEBUG lines fed from super_kernel.log).

    From a path the common lines are read by one pattern over each chunk (:mod:`skmeta_scan`); every
    other line, and a matched line in a state the fast branch does not handle, takes the general
    branch, which alone decides unrecognized lines and gaps.
    """
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = DeviceArgsResult(fname)
    seen: dict[str, int] = {}
    blk: _BlockB | None = None
    # the file the fast branch's task and dfx rows cite: its scan's (set below; no rows otherwise)
    row_file = fname

    def close() -> None:
        nonlocal blk
        if blk is None:
            return
        queues: list[TaskQueue] = []
        for q in blk.queues:
            items = q.tasks
            if len(items) != q.n:
                res.gaps.append(
                    Gap(
                        "task_count_mismatch",
                        f"{blk.name} {q.name}: tasks={q.n}, {len(items)} listed",
                        src=q.ml.src,
                    )
                )
            index_nodes: list[tuple[int, int | None]] = []
            rows = False
            for t in items:
                if type(t) is tuple:  # a row: the values its record would hold, read from its groups
                    rows = True
                    no, _, g, listed = t
                    position, index, nid, declared = g[0], g[2], g[3], g[6]
                    assert position is not None and index is not None and declared is not None
                    index_nodes.append((int(index), None if nid is None else int(nid)))
                    if listed != int(declared):
                        res.gaps.append(
                            _entries_gap(
                                int(position), int(declared), listed, build_source(row_file, no, None)
                            )
                        )
                    continue
                assert isinstance(t, Task)
                index_nodes.append((t.idx, t.node_id_raw))
                if len(t.entries) != t.entries_declared:  # not t.entries_complete (no call per task)
                    res.gaps.append(_entries_gap(t.position, t.entries_declared, len(t.entries), t.src))
            tasks = kept_records(partial(_task_of, row_file), items, rows)
            queues.append(TaskQueue(q.ml.src, q.name, q.cap, q.n, tasks, tuple(index_nodes)))
        dfx = kept_records(partial(_dfx_entry, row_file), blk.dfx, any(type(row) is tuple for row in blk.dfx))
        if blk.header is not None and len(dfx) != blk.header.node_cnt:
            res.gaps.append(
                Gap(
                    "dfx_count_mismatch",
                    f"{blk.name}: nodeCnt={blk.header.node_cnt}, {len(dfx)} dfx rows",
                    src=blk.ml.src,
                )
            )
        occ = seen.get(blk.name, 0)
        seen[blk.name] = occ + 1
        sk_name = split_sk_func_name(blk.name)
        if sk_name.too_long:
            res.gaps.append(too_long_gap(sk_name, blk.ml.src))
        block = DeviceArgsBlock(
            blk.ml.src,
            blk.ml.ts,
            blk.ml.pid,
            blk.name,
            sk_name,
            blk.header,
            tuple(queues),
            dfx,
            occ,
        )
        for idx, ids in block.index_conflicts().items():
            res.gaps.append(
                Gap(
                    "index_conflict",
                    f"{blk.name}: idx {idx} maps to nodeIds {sorted(map(str, ids))}",
                    src=blk.ml.src,
                )
            )
        res.blocks.append(block)
        blk = None

    def unrec(ml: MetaLine, ctx: str) -> None:
        res.unrecognized.append(Unrecognized(ml.src, ml.message, f"sk_device_args:{ctx}"))

    def general(ml: MetaLine) -> _BlockB | None:
        """Read one line the general way; returns the open block (for the fast branch's state)."""
        nonlocal blk
        res.note_truncated(ml, "sk_device_args.log")
        if res.note_common(ml):
            return blk
        msg = ml.message
        if (m := _FUNC.match(msg)) is not None:
            close()
            blk = _BlockB(ml, m.group("name"))
            return blk
        if blk is None:
            unrec(ml, "outside_block")
            return blk
        if (m := _HEADER.match(msg)) is not None:
            ws = m.group("ws")
            blk.header = SkHeader(
                ml.src,
                int(m.group("aic")),
                int(m.group("aiv")),
                int(m.group("cnt")),
                int(ws) if ws is not None else None,
                int(m.group("dfx")),
                int(m.group("ev")),
                int(m.group("n")),
                int(m.group("tot")),
            )
        elif (m := _QUEUE.match(msg)) is not None:
            blk.queues.append(_QueueB(ml, m))
        elif (m := _TASK.match(msg)) is not None:
            if not blk.queues or blk.dfx:
                unrec(ml, "task_outside_queue")
                return blk
            queue = blk.queues[-1]
            queue.tasks.append(_task(ml.src, queue.name, m.group(*_TASK_GROUPS), ()))
        elif (m := _ENTRY.match(msg)) is not None:
            if not blk.queues or not blk.queues[-1].tasks or blk.dfx:
                unrec(ml, "entry_outside_task")
                return blk
            tasks = blk.queues[-1].tasks
            if int(m.group("j")) != _entry_count(tasks[-1]):
                unrec(ml, "entry_out_of_order")
                return blk
            tasks[-1] = _with_entry(_task_of(row_file, tasks[-1]), int(m.group("v"), 16))
        elif (m := _DFX.match(msg)) is not None:
            blk.dfx.append(_dfx(ml.src, m.group(*_DFX_GROUPS)))
        elif _DFX_ENTRIES.match(msg) is not None:
            if not blk.dfx:
                unrec(ml, "dfx_entry_outside_dfx")
                return blk
            _dfx_items(blk.dfx, msg, row_file)
        else:
            unrec(ml, "line")
        return blk

    if not isinstance(source, (str, os.PathLike)):
        for ml in source:
            general(ml)
        close()
        return res

    scan = FastScan(source, _FAST, what="sk_device_args.log", multiline=True)
    row_file = scan.file
    _fast_lines(scan, res, general)
    close()
    return res


def _fast_state(
    blk: _BlockB | None,
) -> tuple[list[Task | _TaskRow] | None, str, list[DfxEntry | _DfxRow] | None]:
    """What the fast branch of :func:`_fast_lines` needs of the block open after a general line: the
    open queue's task list and name (:meth:`_BlockB.open_tasks`) and the block's dfx rows."""
    if blk is None:
        return None, "", None
    tasks, queue = blk.open_tasks()
    return tasks, queue, blk.dfx


def _fast_lines(scan: FastScan, res: DeviceArgsResult, general: Callable[[MetaLine], _BlockB | None]) -> None:
    """Read a file's lines: the fast pattern's matches here, all else (and a match in a state this does
    not handle) by ``general``.

    The state the fast branch needs — the open queue's task list and the block's dfx list — is kept in
    locals and re-read only after a general line (the only lines that open blocks and queues). Matched
    lines are counted here and added to ``lines_read`` once; ``scan.note`` runs only when the pid text
    changes, which is when it records anything (it keeps the last pid it saw)."""
    note, file = scan.note, scan.file
    # the open queue's tasks while task and entry lines may go there
    tasks: list[Task | _TaskRow] | None = None
    queue = ""
    dfx: list[DfxEntry | _DfxRow] | None = None  # the open block's dfx rows
    counted = 0
    for item in scan:
        if isinstance(item, MetaLine):
            tasks, queue, dfx = _fast_state(general(item))
            continue
        m, no = item
        kind = m.lastindex
        span = scan.span
        g = m.groups()
        if kind == _IS_TASK and tasks is not None:
            # the line's values, then its entry[0]… lines in order (span - 1 of them, which the general
            # branch appends one by one): its record is made when first read (_task_of, the queue's
            # LazyRecords)
            tasks.append((no, queue, g[_G_TASK : _G_TASK + 14], span - 1))
        elif kind == _IS_ENTRY and tasks and int(g[_G_ENTRY]) == _entry_count(tasks[-1]):
            tasks[-1] = _with_entry(_task_of(file, tasks[-1]), int(g[_G_ENTRY + 1], 16))
        elif kind == _IS_DFX and dfx is not None:
            # the row with its entryAic / entryAiv lines (four values each) when the match took them: its
            # record is made when first read (_dfx_entry, the block's LazyRecords)
            dfx.append((no, g[_G_DFX : _G_DFX + 16]))
            tasks = None  # task and entry lines after a dfx row are the general branch's
        elif kind == _IS_DFXE and dfx:
            _dfx_items(dfx, g[_G_DFXE], file)
        else:
            for line in range(no, no + span):  # a state the fast branch does not handle
                tasks, queue, dfx = _fast_state(general(scan.meta_line(line)))
            continue
        counted += span
        if g[_G_PID] != scan.pid_text:  # all ``note`` does for a further line of that pid is count it
            note(res, m, no, 0)
    res.lines_read += counted


def _dfx_items(rows: list[DfxEntry | _DfxRow], text: str, file: str) -> None:
    """Put the ``entryAic[j]=…``/``entryAiv[j]=…`` values of a dfx entry line into the last dfx row
    (made its record first when the fast branch kept it as a row of ``file``)."""
    d = _dfx_entry(file, rows[-1])
    aic, aiv = list(d.entry_aic), list(d.entry_aiv)
    for c, j, v in _DFX_ITEM.findall(text):
        (aic if c == "c" else aiv)[int(j)] = int(v, 16)
    rows[-1] = _build_dfx(
        d.src,
        d.index,
        d.bin,
        d.ori,
        d.aic_size,
        d.aiv_size,
        d.num_blocks,
        d.cube_num,
        d.vec_num,
        (aic[0], aic[1], aic[2], aic[3]),
        (aiv[0], aiv[1], aiv[2], aiv[3]),
    )
