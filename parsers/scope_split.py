"""``sk_scope_split.log`` — the ``ScopeSplitPipeline`` snapshots of ``sk_scope_split.cpp`` (§3.7, row 57).

Why it matters: it shows how named scopes were cut into the SKs that actually ran, pass by
pass, and *why* (``BreakInfo``: the node that broke a scope and the reason). The final
snapshot (``ScopeSplitPipelineFinal``) is the one the scheduler consumed.

``BreakInfo`` (``ScopeBreakInfo::Format`` in ``sk_scope_info.h``) is a comma list that may be
empty or start with ``", "``; values of ``breakReason=``/``fusionFailReason=`` are enum names in
current builds but English sentences (containing commas) in older ones, and ``detail="…"`` is
quoted free text — so the list is split only at known ``, <key>=`` boundaries.
Older builds print ``Printing scope split results, total scopes: <n>`` and ``Scope <i>: …``
without ``(scopeId=…)``. The hand-written fixture holds only ``# no scope breaks``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder, kept_records
from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.node_format import (
    Node,
    NodeFields,
    match_node,
    match_node_general,
    node_fields,
    node_from_fields,
)
from skdbg.parsers.sk_reasons import (
    break_reason_known,
    classify_break_reason,
    classify_fusion_fail,
    fusion_fail_known,
)
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase
from skdbg.parsers.skmeta_scan import FastScan, fast_pattern

if TYPE_CHECKING:
    import pandas as pd

FINAL_PASS = "ScopeSplitPipelineFinal"
PASSES = frozenset(
    {
        "InitialScopeSplitPass",
        "DeadlockRefinePass",
        "ScheModeKernelSplitPass",
        "DefaultNodeProcessPass",
        "PerOpMaxCoreSplitPass",
        "EventOnlyStreamRemovePass",
        FINAL_PASS,
    }
)
_BREAK_KEYS = (
    "breakReason",
    "triggerNode",
    "triggerStream",
    "fusionFailReason",
    "parentScope",
    "syncAllNodes",
)
_SPLIT = regexcode.compile(r", (?=(?:" + "|".join(_BREAK_KEYS) + r")=)")
_DETAIL = regexcode.compile(r'(?:^|, )detail="')
_KV = regexcode.compile(r"^(?P<k>\w+)=(?P<v>.*)$", re.DOTALL)

_ITER = regexcode.compile(r"\[ScopeSplitPipeline\] iteration (?P<k>\d+)")
_RUNNING = regexcode.compile(r"\[ScopeSplitPipeline\] running pass: (?P<p>\w+)")
_BEGIN = regexcode.compile(r"Scope split results begin: pass=(?P<p>[^,\s]+), totalScopes=(?P<n>\d+)")
_END = regexcode.compile(r"Scope split results end: pass=(?P<p>[^\s=]+)")
_OLD_BEGIN = regexcode.compile(r"Printing scope split results, total scopes: (?P<n>\d+)")
_SCOPE = regexcode.compile(
    r"^\s*Scope (?P<i>\d+)(?: \(scopeId=(?P<sid>\d+)\))?: (?P<n>\d+) nodes, (?P<m>\d+) streams"
    r"(?:, scopeBitFlags=(?P<flags>[^,\s]*))?(?:, scopeNames=\[(?P<names>.*)\])?\s*$"
)
_BREAKINFO = regexcode.compile(r"^\s*BreakInfo:(?: (?P<b>.*))?$")
_NODES_HDR = regexcode.compile(r"^\s*Scope (?P<i>\d+) nodes: (?P<n>\d+)\s*$")
_NODE = regexcode.compile(r"^\s*\[(?P<j>\d+)\]\s+(?=\[nodeId:)")
#: a ``[j] <node>`` line, as ``_NODE`` reads it (skmeta_scan)
_FAST = fast_pattern(r"[ \t]*\[(?P<j>[0-9]+)\][ \t]+(?P<node>\[nodeId:[^\n]*)")
#: what the pass/iteration patterns above search for anywhere in a line (a node line holding one of
#: these texts is read by the general branch, which tries those patterns first)
_MARK_PIPELINE, _MARK_RESULTS, _MARK_OLD = (
    "[ScopeSplitPipeline] ",
    "Scope split results ",
    "Printing scope split",
)
_STREAM = regexcode.compile(
    r"^\s*Scope (?P<i>\d+) StreamInfo\[(?P<j>\d+)\]: streamIdx=(?P<x>\d+), headNode=(?P<h>\d+), "
    r"tailNode=(?P<t>\d+), nodeSize=(?P<s>\d+)\s*$"
)


@dataclass(frozen=True, slots=True)
class BreakInfo:
    """A parsed ``ScopeBreakInfo::Format()`` text; ``raw`` is kept verbatim."""

    src: Source
    raw: str
    break_reason_raw: str | None = None
    break_reason: str | None = None  # enum name (derived from a sentence in older builds)
    trigger_node: int | None = None
    trigger_stream: int | None = None
    fusion_fail_reason_raw: str | None = None
    fusion_fail_reason: str | None = None
    fusion_fail_sub: str | None = None
    parent_scope: int | None = None
    sync_all_nodes: tuple[int, ...] | None = None
    detail: str | None = None
    unknown_fields: tuple[tuple[str, str], ...] = ()
    leading_comma: bool = False  # reason NONE but other fields present

    @property
    def empty(self) -> bool:
        return not self.raw.strip()

    @property
    def break_reason_known(self) -> bool:
        return self.break_reason_raw is None or break_reason_known(self.break_reason)

    @property
    def fusion_fail_known(self) -> bool:
        return self.fusion_fail_reason_raw is None or fusion_fail_known(self.fusion_fail_reason)


def _int_or_none(v: str) -> int | None:
    v = v.strip()
    return int(v) if v.isdigit() else None


def parse_break_info(text: str, src: Source) -> BreakInfo:
    """Parse BreakInfo text (never raises): unknown keys/values go to ``unknown_fields``."""
    raw = text
    s = text.strip()
    leading = s.startswith(",")
    if leading:
        s = s[1:].lstrip()
    detail: str | None = None
    dm = _DETAIL.search(s)
    if dm is not None and s.endswith('"') and len(s) > dm.end():
        detail = s[dm.end() : -1]
        s = s[: dm.start()]
    elif dm is not None and s.endswith('"') and len(s) == dm.end():
        # ``detail="`` followed by nothing but the closing quote is impossible; keep as unknown.
        pass
    values: dict[str, object] = {}
    unknown: list[tuple[str, str]] = []
    if s:
        for part in _SPLIT.split(s):
            m = _KV.match(part)
            if m is None:
                unknown.append(("", part))
                continue
            k, v = m.group("k"), m.group("v")
            if k == "breakReason":
                values["break_reason_raw"] = v
                values["break_reason"] = classify_break_reason(v)
            elif k in ("triggerNode", "triggerStream", "parentScope"):
                iv = _int_or_none(v)
                if iv is None:
                    unknown.append((k, v))
                    continue
                values[
                    {
                        "triggerNode": "trigger_node",
                        "triggerStream": "trigger_stream",
                        "parentScope": "parent_scope",
                    }[k]
                ] = iv
            elif k == "fusionFailReason":
                reason, sub = classify_fusion_fail(v)
                values["fusion_fail_reason_raw"] = v
                values["fusion_fail_reason"] = reason
                values["fusion_fail_sub"] = sub
            elif k == "syncAllNodes":
                lm = re.fullmatch(r"\[\s*([\d,\s]*)\]", v)
                if lm is None:
                    unknown.append((k, v))
                    continue
                values["sync_all_nodes"] = tuple(int(x) for x in re.findall(r"\d+", lm.group(1)))
            else:
                unknown.append((k, v))
    return BreakInfo(
        src=src,
        raw=raw,
        detail=detail,
        unknown_fields=tuple(unknown),
        leading_comma=leading,
        **values,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """One ``StreamInfo[j]`` line of a scope: the stream's index, its head and tail nodes and its node
    count."""

    src: Source
    ordinal: int  # the scope's display ordinal
    index: int  # j of StreamInfo[j]
    stream_idx: int
    head_node: int
    tail_node: int
    node_size: int


@dataclass(frozen=True, slots=True)
class ScopeNode:
    """One node of a scope in a pass snapshot, at its position in the scope."""

    src: Source
    position: int
    node: Node


@dataclass(frozen=True, slots=True)
class ScopeSnapshot:
    """One ``Scope <i> (scopeId=<id>): …`` entry of a pass snapshot."""

    src: Source
    ordinal: int
    scope_id: int | None  # None in the old ``Scope <i>:`` format
    node_count: int
    stream_count: int
    scope_bit_flags: str | None
    scope_names: str | None  # raw ``_``-joined names; None for ``none``/absent
    break_info: BreakInfo | None
    declared_nodes: int | None  # from ``Scope <i> nodes: <n>``
    #: the records of the scope's node rows; made when first read (:class:`~skdbg.parsers.bulk.LazyRecords`:
    #: the analysis reads none of them, the table output and ``verify`` do), else a tuple
    nodes: Sequence[ScopeNode]
    streams: tuple[StreamInfo, ...]

    @property
    def count_mismatch(self) -> bool:
        return len(self.nodes) != self.node_count or len(self.streams) not in (0, self.stream_count)


@dataclass(frozen=True, slots=True)
class PassSnapshot:
    """All scopes printed for one pass (``Scope split results begin … end``)."""

    src: Source
    ts: datetime | None
    pid: int | None
    iteration: int | None
    pass_name: str | None
    total_scopes: int
    scopes: tuple[ScopeSnapshot, ...]
    old_format: bool
    complete: bool  # the ``end`` line was seen (old format: implied by the next block)

    @property
    def final(self) -> bool:
        return self.pass_name == FINAL_PASS


def _brk(name: str) -> Col:
    """A field of the scope's BreakInfo (None without one)."""
    return Col(name, lambda sc: getattr(sc.break_info, name) if sc.break_info else None)


#: the snapshot columns (iteration, pass) every scope and node row carries
_SNAP = (Col("iteration"), Col("pass_name"))
SCOPE_COLS = (
    *SRC_COLS,
    *_SNAP,
    Col("final"),
    Col("ordinal"),
    Col("scope_id"),
    Col("node_count"),
    Col("stream_count"),
    Col("scope_bit_flags"),
    Col("scope_names"),
    Col("break_raw", lambda sc: sc.break_info.raw if sc.break_info else None),
    _brk("break_reason"),
    _brk("trigger_node"),
    _brk("trigger_stream"),
    _brk("fusion_fail_reason"),
    _brk("parent_scope"),
    Col(
        "sync_all_nodes",
        lambda sc: (
            list(sc.break_info.sync_all_nodes)
            if sc.break_info and sc.break_info.sync_all_nodes is not None
            else None
        ),
    ),
    _brk("detail"),
)
NODE_COLS = (
    *SRC_COLS,
    *_SNAP,
    Col("ordinal"),
    Col("scope_id"),
    Col("position"),
    Col("node_id", lambda sn: sn.node.node_id),
    Col("kind", lambda sn: sn.node.kind),
    Col("func_name", lambda sn: sn.node.func_name),
)
SCOPE_COLUMNS = [c.name for c in SCOPE_COLS]
NODE_COLUMNS = [c.name for c in NODE_COLS]


@dataclass
class ScopeSplitResult(MetaResultBase):
    """Every pass snapshot of ``sk_scope_split.log`` in file order."""

    snapshots: list[PassSnapshot] = field(default_factory=list)

    def final_snapshot(self) -> PassSnapshot | None:
        """The last ``ScopeSplitPipelineFinal`` snapshot, else the last snapshot of any pass."""
        finals = [s for s in self.snapshots if s.final]
        if finals:
            return finals[-1]
        return self.snapshots[-1] if self.snapshots else None

    def iterations(self) -> list[int]:
        return sorted({s.iteration for s in self.snapshots if s.iteration is not None})

    def to_frame(self) -> pd.DataFrame:
        return records_frame(
            (
                ({"iteration": snap.iteration, "pass_name": snap.pass_name, "final": snap.final}, sc)
                for snap in self.snapshots
                for sc in snap.scopes
            ),
            SCOPE_COLS,
        )

    def nodes_frame(self) -> pd.DataFrame:
        return records_frame(
            (
                (
                    {
                        "iteration": snap.iteration,
                        "pass_name": snap.pass_name,
                        "ordinal": sc.ordinal,
                        "scope_id": sc.scope_id,
                    },
                    sn,
                )
                for snap in self.snapshots
                for sc in snap.scopes
                for sn in sc.nodes
            ),
            NODE_COLS,
        )


_build_scope_node = frozen_builder(ScopeNode)

#: a node row checked by the fast branch, its record not made yet: its line, its position (digits) and its
#: node's fields (:func:`~skdbg.parsers.node_format.node_fields`)
_NodeRow = tuple[int, str, NodeFields]


def _scope_node(file: str, row: ScopeNode | _NodeRow) -> ScopeNode:
    """The record of a node row of ``file``: the one the parser would have made when it read the row."""
    if isinstance(row, ScopeNode):
        return row
    no, position, fields = row
    src = build_source(file, no, None)
    return _build_scope_node(src, int(position), node_from_fields(src, fields))


class _ScopeB:
    def __init__(self, ml: MetaLine, m: re.Match[str]) -> None:
        self.ml = ml
        self.ordinal = int(m.group("i"))
        sid = m.group("sid")
        self.scope_id = int(sid) if sid is not None else None
        self.n, self.m = int(m.group("n")), int(m.group("m"))
        self.flags = m.group("flags")
        names = m.group("names")
        self.names = None if names is None or names == "none" else names
        self.brk: BreakInfo | None = None
        self.declared: int | None = None
        #: records (a node the general branch read) and rows (one the fast branch checked), in order
        self.nodes: list[ScopeNode | _NodeRow] = []
        self.rows = False  # some of them are rows
        self.streams: list[StreamInfo] = []

    def freeze(self, file: str) -> ScopeSnapshot:
        """The snapshot entry; ``file`` names the lines of its rows."""
        nodes = kept_records(partial(_scope_node, file), self.nodes, self.rows)
        return ScopeSnapshot(
            self.ml.src,
            self.ordinal,
            self.scope_id,
            self.n,
            self.m,
            self.flags,
            self.names,
            self.brk,
            self.declared,
            nodes,
            tuple(self.streams),
        )


class _SnapB:
    def __init__(
        self, ml: MetaLine, iteration: int | None, pass_name: str | None, total: int, old: bool
    ) -> None:
        self.ml, self.iteration, self.pass_name, self.total, self.old = ml, iteration, pass_name, total, old
        self.scopes: list[_ScopeB] = []

    def freeze(self, complete: bool, file: str) -> PassSnapshot:
        return PassSnapshot(
            self.ml.src,
            self.ml.ts,
            self.ml.pid,
            self.iteration,
            self.pass_name,
            self.total,
            tuple(s.freeze(file) for s in self.scopes),
            self.old,
            complete,
        )


def parse_scope_split(
    source: str | os.PathLike[str] | Iterable[MetaLine], *, file: str | None = None
) -> ScopeSplitResult:
    """Parse ``sk_scope_split.log`` (or the same blocks fed from super_kernel.log)."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = ScopeSplitResult(fname)
    row_file = fname  # the file the fast branch's rows cite: its scan's (set below; no rows otherwise)
    iteration: int | None = None
    running: str | None = None
    snap: _SnapB | None = None

    def close(complete: bool) -> None:
        nonlocal snap
        if snap is None:
            return
        if not complete:
            res.gaps.append(
                Gap("incomplete_snapshot", f"pass {snap.pass_name}: no 'results end' line", src=snap.ml.src)
            )
        frozen = snap.freeze(complete, row_file)
        if len(frozen.scopes) != frozen.total_scopes:
            res.gaps.append(
                Gap(
                    "scope_count_mismatch",
                    f"pass {frozen.pass_name}: totalScopes={frozen.total_scopes}, "
                    f"{len(frozen.scopes)} listed",
                    src=frozen.src,
                )
            )
        res.snapshots.append(frozen)
        snap = None

    def current_scope(ml: MetaLine, what: str) -> _ScopeB | None:
        if snap is None or not snap.scopes:
            res.unrecognized.append(Unrecognized(ml.src, ml.message, f"sk_scope_split:{what}_outside_scope"))
            return None
        return snap.scopes[-1]

    def general(ml: MetaLine) -> None:
        nonlocal iteration, running, snap
        res.note_truncated(ml, "sk_scope_split.log")
        if res.note_common(ml):
            return
        msg = ml.message
        if (m := _ITER.search(msg)) is not None:
            close(snap is not None and snap.old)
            iteration = int(m.group("k"))
        elif (m := _RUNNING.search(msg)) is not None:
            close(snap is not None and snap.old)
            running = m.group("p")
        elif (m := _BEGIN.search(msg)) is not None:
            close(snap is not None and snap.old)
            snap = _SnapB(ml, iteration, m.group("p"), int(m.group("n")), old=False)
        elif (m := _OLD_BEGIN.search(msg)) is not None:
            close(snap is not None and snap.old)
            snap = _SnapB(ml, iteration, running, int(m.group("n")), old=True)
        elif (m := _END.search(msg)) is not None:
            if snap is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_scope_split:end_without_begin"))
            else:
                if snap.pass_name != m.group("p"):
                    res.gaps.append(
                        Gap(
                            "pass_mismatch",
                            f"begin pass={snap.pass_name}, end pass={m.group('p')}",
                            src=ml.src,
                        )
                    )
                close(True)
        elif (m := _SCOPE.match(msg)) is not None:
            if snap is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_scope_split:scope_outside_snapshot"))
            else:
                snap.scopes.append(_ScopeB(ml, m))
        elif (m := _BREAKINFO.match(msg)) is not None:
            sc = current_scope(ml, "breakinfo")
            if sc is not None:
                sc.brk = parse_break_info(m.group("b") or "", ml.src)
        elif (m := _NODES_HDR.match(msg)) is not None:
            sc = current_scope(ml, "nodes_header")
            if sc is not None:
                sc.declared = int(m.group("n"))
        elif (m := _NODE.match(msg)) is not None:
            sc = current_scope(ml, "node")
            if sc is None:
                return
            try:
                got = match_node(msg, m.end(), ml.src)
            except ParseError as exc:
                res.unrecognized.append(Unrecognized(ml.src, msg, f"sk_scope_split:malformed_node: {exc}"))
                return
            if got is None or msg[got[1] :].strip():
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_scope_split:node_trailing_text"))
                return
            sc.nodes.append(ScopeNode(ml.src, int(m.group("j")), got[0]))
        elif (m := _STREAM.match(msg)) is not None:
            sc = current_scope(ml, "stream_info")
            if sc is not None:
                sc.streams.append(
                    StreamInfo(
                        ml.src,
                        int(m.group("i")),
                        int(m.group("j")),
                        int(m.group("x")),
                        int(m.group("h")),
                        int(m.group("t")),
                        int(m.group("s")),
                    )
                )
        else:
            res.unrecognized.append(Unrecognized(ml.src, msg, "sk_scope_split"))

    if not isinstance(source, (str, os.PathLike)):
        for ml in source:
            general(ml)
        close(snap is not None and snap.old)
        return res
    scan = FastScan(source, _FAST, what="sk_scope_split.log")
    note, file = scan.note, scan.file
    row_file = file
    for item in scan:
        if isinstance(item, MetaLine):
            general(item)
            continue
        m, no = item
        position, text, pid_text = m.group("j", "node", "pid")
        # a node line of the current scope; the pass/iteration markers are searched anywhere in a line
        if (
            snap is not None
            and snap.scopes
            and _MARK_PIPELINE not in text
            and _MARK_RESULTS not in text
            and _MARK_OLD not in text
        ):
            # the row is checked now; its record is made when a reader asks (LazyRecords), from the node's
            # fields, when a one-match form reads it (nearly every node: the fused-node listing, read
            # first, holds the same texts); else the general grammar reads it now, as before
            row: ScopeNode | _NodeRow | None
            end: int
            hit = node_fields(text, 0)
            if hit is not None:
                row, end = (no, position, hit[0]), hit[1]
            else:
                src = build_source(file, no, None)
                try:
                    got = match_node_general(text, 0, src)
                except ParseError:
                    got = None  # the general branch words the error
                row, end = (
                    (None, 0) if got is None else (_build_scope_node(src, int(position), got[0]), got[1])
                )
            if row is not None and (end == len(text) or not text[end:].strip()):
                if pid_text == scan.pid_text:  # all ``note`` does for a further line of that pid
                    res.lines_read += 1
                else:
                    note(res, m, no)
                scope = snap.scopes[-1]
                scope.nodes.append(row)
                scope.rows = scope.rows or isinstance(row, tuple)
                continue
        general(scan.meta_line(no))
    close(snap is not None and snap.old)
    return res
