"""``sk_fusion_fail_reasons.log`` — ``SuperKernelGraph::DumpFusionFailReasons`` (§3.8, row 58).

Why it matters: it names every kernel that was *not* fused and why, lists the user's original
scopes with their node ids, and the fused scopes with status and the root break reason — the
direct answer to "why did my scope split / why is this op outside the SK".

Grammar notes taken from upstream (``sk_graph.cpp``/``sk_dump_json.cpp``):

* ``Node <node>: reason: <REASON>[ [<SUB>]][, reasonDetail: <text>]`` — older builds print the
  reason as its detail sentence (e.g. ``The operator does not support … [BINDMAP_INIT_EMPTY]``);
  both are classified to the enum (``sk_reasons``). Unknown names are kept and flagged.
* node-id lists are split at 4096 characters into ``continued:`` lines; upstream keeps the
  ``", "`` separator computed before the flush, so a continuation can start with ``", "``.
  ``nodeIds: [a, b]`` pieces end in ``]``, ``fusedNodeIds=[a, b];`` pieces in ``];``.
* status line ``scopeStatus=SUCCESS`` | ``scopeStatus=<S>, scopeStatusDetail=<text>``; older
  builds ``fusionStatus=…, failReason=…``; the optional break line is
  ``breakReason=[<BreakInfo>], breakReasonDetail=<text>, scopeName=[<names>]`` (older:
  ``breakReason=[<BreakInfo>], scopeName=[…]`` or without the brackets).
* Quirk: the detail texts of NOT_IN_SCOPE and IN_UNFUSIBLE_SCOPE are swapped relative to the
  enum comments upstream — the enum name is the truth (``UnfusibleNode.detail_text_swapped``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg import regexcode
from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized, lazy_regex
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.scope_split import BreakInfo, parse_break_info
from skdbg.parsers.sk_reasons import (
    SCOPE_STATUSES,
    SWAPPED_DETAIL_REASONS,
    classify_fusion_fail,
    fusion_fail_known,
    sub_reason_known,
)
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase, frame, meta_lines, record_row

if TYPE_CHECKING:
    import pandas as pd

_UNFUSIBLE_HDR = regexcode.compile(r"^\s*unfusible kernel:\s*$")
_ORIG_HDR = regexcode.compile(r"^\s*original scopes before fusion:\s*$")
_FUSED_HDR = regexcode.compile(
    r"^\s*(?:\[PrintFusedScopes\] )?scopes after fusion:(?: DEBUG_PER_OP_MAX_CORE=(?P<m>\w+))?\s*$"
)
_MAPPING_HDR = regexcode.compile(r"^\s*Original Scope to Fused Scope Mapping:\s*$")
_NODE_LEAD = regexcode.compile(r"^\s*Node (?=\[nodeId:)")
_NODE_TAIL = regexcode.compile(r"^: (?:isFusible: (?P<fus>\d+), )?reason: (?P<rest>.*)$", re.DOTALL)
_ORIG = regexcode.compile(
    r"^\s*scopeId=(?P<sid>\d+), scopeFlags=(?P<flags>[^,\s]*), scopeNames=\[(?P<names>.*)\], "
    r"totalNodes=(?P<n>\d+)\s*$"
)
_NODE_IDS = regexcode.compile(r"^\s*nodeIds: \[(?P<ids>.*)\]\s*$")
_FUSED = regexcode.compile(r"^\s*scopeId=(?P<sid>\d+), scopeBitFlag=(?P<flags>[^,\s]*)\s*$")
_FUSED_IDS = regexcode.compile(r"^\s*fusedNodeIds=\[(?P<ids>.*)\];\s*$")
_CONT = regexcode.compile(r"^\s*continued: (?P<ids>.*?)(?P<end>\];|\])\s*$")
_STATUS = regexcode.compile(
    r"^\s*(?P<key>scopeStatus|fusionStatus)=(?P<s>[A-Za-z_]+)"
    r"(?:, (?:scopeStatusDetail|failReason)=(?P<d>.*))?\s*$"
)
#: a break reason under a fused scope: rare (a scope split by a barrier), so compiled on first use
_BREAK = lazy_regex(r"^\s*breakReason=(?P<rest>.*)$")
_IDS_OK = regexcode.compile(r"^[\d,\s]*$")


def _ids(text: str) -> tuple[int, ...] | None:
    if not _IDS_OK.match(text):
        return None
    return tuple(int(x) for x in re.findall(r"\d+", text))


@dataclass(frozen=True, slots=True)
class UnfusibleNode:
    """One ``Node <node>: reason: …`` line (unfusible KERNEL nodes only).

    ``reason`` is the enum (derived from a sentence in older builds; None if unknown);
    ``reason_known``/``sub_known`` flag names outside the documented enums (kept, not rejected).
    ``detail_text_swapped``: the detail sentence of NOT_IN_SCOPE/IN_UNFUSIBLE_SCOPE describes the
    *other* reason (upstream quirk) — trust ``reason``.
    """

    src: Source
    ts: datetime | None
    pid: int | None
    node: Node
    reason_raw: str
    reason: str | None
    sub_reason: str | None
    reason_detail: str | None
    is_fusible_flag: int | None  # older ``isFusible: <n>, reason:`` variant

    @property
    def reason_known(self) -> bool:
        return fusion_fail_known(self.reason)

    @property
    def sub_known(self) -> bool:
        return sub_reason_known(self.reason, self.sub_reason)

    @property
    def detail_text_swapped(self) -> bool:
        return self.reason in SWAPPED_DETAIL_REASONS


@dataclass(frozen=True, slots=True)
class OriginalScope:
    """``scopeId=…, scopeFlags=…, scopeNames=[…], totalNodes=…`` plus its ``nodeIds`` pieces."""

    src: Source
    scope_id: int
    scope_flags: str
    scope_names: str | None
    total_nodes: int
    node_ids: tuple[int, ...]
    pieces: int  # number of nodeIds/continued lines

    @property
    def count_mismatch(self) -> bool:
        return self.total_nodes != len(self.node_ids)


@dataclass(frozen=True, slots=True)
class FusedScope:
    """One scope of ``PrintFusedScopes``: the nodes fused into it (``pieces``: how many printed lines its
    ``fusedNodeIds`` list took, the first and its ``continued:`` lines), its fusion status and, when it
    broke, why."""

    src: Source
    scope_id: int
    scope_bit_flag: str
    fused_node_ids: tuple[int, ...]
    pieces: int
    status: str | None
    status_detail: str | None
    status_key: str | None  # scopeStatus (current) or fusionStatus (older)
    break_info: BreakInfo | None
    break_reason_detail: str | None
    scope_names: str | None

    @property
    def status_known(self) -> bool:
        return self.status is not None and self.status in SCOPE_STATUSES


UNFUSIBLE_COLS = (
    *SRC_COLS,
    Col("ts"),
    Col("pid"),
    Col("node_id", lambda u: u.node.node_id),
    Col("stream_id", lambda u: u.node.stream_id),
    Col("kind", lambda u: u.node.kind),
    Col("func_name", lambda u: u.node.func_name),
    Col("kernel_type", lambda u: u.node.kernel_type),
    Col("reason_raw"),
    Col("reason"),
    Col("sub_reason"),
    Col("reason_detail"),
    Col("reason_known"),
    Col("sub_known"),
    Col("detail_text_swapped"),
)
UNFUSIBLE_COLUMNS = [c.name for c in UNFUSIBLE_COLS]
ORIGINAL_COLUMNS = [
    "file",
    "line",
    "scope_id",
    "scope_flags",
    "scope_names",
    "total_nodes",
    "node_ids",
    "pieces",
    "count_mismatch",
]


def _brk(name: str) -> Callable[[FusedScope], object]:
    """A field of the scope's break info (None without one)."""
    return lambda f: getattr(f.break_info, name) if f.break_info else None


FUSED_COLS = (
    *SRC_COLS,
    Col("scope_id"),
    Col("scope_bit_flag"),
    Col("fused_node_ids", lambda f: list(f.fused_node_ids)),
    Col("pieces"),
    Col("status"),
    Col("status_detail"),
    Col("status_known"),
    Col("break_reason", _brk("break_reason")),
    Col("trigger_node", _brk("trigger_node")),
    Col("break_raw", _brk("raw")),
    Col("break_reason_detail"),
    Col("scope_names"),
)
FUSED_COLUMNS = [c.name for c in FUSED_COLS]


@dataclass
class FailReasonsResult(MetaResultBase):
    """``sk_fusion_fail_reasons.log``: the kernels that could not be fused, the scopes as the user opened them
    and the scopes as they were fused."""

    unfusible: list[UnfusibleNode] = field(default_factory=list)
    original_scopes: list[OriginalScope] = field(default_factory=list)
    fused_scopes: list[FusedScope] = field(default_factory=list)
    per_op_max_core: bool | None = None  # from the ``[PrintFusedScopes]`` header

    def to_frame(self) -> pd.DataFrame:
        """One row per unfusible kernel (see :meth:`original_frame`/:meth:`fused_frame`)."""
        return records_frame((({}, u) for u in self.unfusible), UNFUSIBLE_COLS)

    def original_frame(self) -> pd.DataFrame:
        rows = []
        for o in self.original_scopes:
            row = record_row(o)
            row["count_mismatch"] = o.count_mismatch
            rows.append(row)
        return frame(rows, ORIGINAL_COLUMNS)

    def fused_frame(self) -> pd.DataFrame:
        return records_frame((({}, f) for f in self.fused_scopes), FUSED_COLS)


def split_break_line(rest: str) -> tuple[str, str | None, str | None]:
    """``[<BreakInfo>], breakReasonDetail=<t>, scopeName=[<n>]`` → (break text, detail, names)."""
    names: str | None = None
    k = rest.rfind(", scopeName=[")
    if k >= 0 and rest.endswith("]"):
        names = rest[k + len(", scopeName=[") : -1]
        rest = rest[:k]
    detail: str | None = None
    d = rest.rfind("], breakReasonDetail=")
    if rest.startswith("[") and d >= 0:
        detail = rest[d + len("], breakReasonDetail=") :]
        return rest[1:d], detail, names
    if rest.startswith("[") and rest.endswith("]"):
        return rest[1:-1], None, names
    return rest, None, names


class _FusedB:
    def __init__(self, ml: MetaLine, sid: int, flags: str) -> None:
        self.ml, self.sid, self.flags = ml, sid, flags
        self.ids: list[int] = []
        self.pieces = 0
        self.status: str | None = None
        self.status_detail: str | None = None
        self.status_key: str | None = None
        self.brk: BreakInfo | None = None
        self.brk_detail: str | None = None
        self.names: str | None = None

    def freeze(self) -> FusedScope:
        return FusedScope(
            self.ml.src,
            self.sid,
            self.flags,
            tuple(self.ids),
            self.pieces,
            self.status,
            self.status_detail,
            self.status_key,
            self.brk,
            self.brk_detail,
            self.names,
        )


class _OrigB:
    def __init__(self, ml: MetaLine, m: re.Match[str]) -> None:
        self.ml = ml
        self.sid = int(m.group("sid"))
        self.flags = m.group("flags")
        names = m.group("names")
        self.names = None if names == "none" else names
        self.total = int(m.group("n"))
        self.ids: list[int] = []
        self.pieces = 0

    def freeze(self) -> OriginalScope:
        return OriginalScope(
            self.ml.src, self.sid, self.flags, self.names, self.total, tuple(self.ids), self.pieces
        )


def parse_fail_reasons(
    source: str | os.PathLike[str] | Iterable[MetaLine], *, file: str | None = None
) -> FailReasonsResult:
    """Parse ``sk_fusion_fail_reasons.log`` (also accepts the same block lines from super_kernel.log)."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = FailReasonsResult(fname)
    orig: _OrigB | None = None
    fused: _FusedB | None = None
    list_owner: str | None = None  # "orig" or "fused": which list a ``continued:`` line extends

    def flush() -> None:
        nonlocal orig, fused, list_owner
        if orig is not None:
            o = orig.freeze()
            if o.count_mismatch:
                res.gaps.append(
                    Gap(
                        "node_ids_incomplete",
                        f"original scope {o.scope_id}: totalNodes={o.total_nodes}, "
                        f"{len(o.node_ids)} ids listed",
                        src=o.src,
                    )
                )
            res.original_scopes.append(o)
        if fused is not None:
            res.fused_scopes.append(fused.freeze())
        orig = fused = None
        list_owner = None

    for ml in meta_lines(source, what="sk_fusion_fail_reasons.log"):
        res.note_truncated(ml, "sk_fusion_fail_reasons.log")
        if res.note_common(ml):
            continue
        msg = ml.message
        if _UNFUSIBLE_HDR.match(msg) or _ORIG_HDR.match(msg) or _MAPPING_HDR.match(msg):
            flush()
            continue
        if (m := _FUSED_HDR.match(msg)) is not None:
            flush()
            if m.group("m") is not None:
                res.per_op_max_core = m.group("m") == "enabled"
            continue
        if (lead := _NODE_LEAD.match(msg)) is not None:
            flush()
            try:
                got = match_node(msg, lead.end(), ml.src)
            except ParseError as exc:
                res.unrecognized.append(
                    Unrecognized(ml.src, msg, f"sk_fusion_fail_reasons:malformed_node: {exc}")
                )
                continue
            tail = _NODE_TAIL.match(msg[got[1] :]) if got is not None else None
            if got is None or tail is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fusion_fail_reasons:node_tail"))
                continue
            rest = tail.group("rest")
            reason_part, sep, detail = rest.partition(", reasonDetail: ")
            reason, sub = classify_fusion_fail(reason_part)
            fus = tail.group("fus")
            u = UnfusibleNode(
                ml.src,
                ml.ts,
                ml.pid,
                got[0],
                reason_part.strip(),
                reason,
                sub,
                detail if sep else None,
                int(fus) if fus is not None else None,
            )
            if not u.reason_known or not u.sub_known:
                res.gaps.append(
                    Gap(
                        "unknown_fail_reason",
                        f"node {u.node.node_id}: reason {u.reason_raw!r} is not a documented FusionFailReason"
                        + ("" if u.sub_known else f" / sub-reason {u.sub_reason!r}"),
                        src=ml.src,
                    )
                )
            res.unfusible.append(u)
            continue
        if (m := _ORIG.match(msg)) is not None:
            flush()
            orig = _OrigB(ml, m)
            continue
        if (m := _NODE_IDS.match(msg)) is not None and orig is not None and orig.pieces == 0:
            ids = _ids(m.group("ids"))
            if ids is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fusion_fail_reasons:node_ids"))
                continue
            orig.ids.extend(ids)
            orig.pieces += 1
            list_owner = "orig"
            continue
        if (m := _FUSED.match(msg)) is not None:
            flush()
            fused = _FusedB(ml, int(m.group("sid")), m.group("flags"))
            continue
        if (m := _FUSED_IDS.match(msg)) is not None and fused is not None and fused.pieces == 0:
            ids = _ids(m.group("ids"))
            if ids is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fusion_fail_reasons:fused_node_ids"))
                continue
            fused.ids.extend(ids)
            fused.pieces += 1
            list_owner = "fused"
            continue
        if (m := _CONT.match(msg)) is not None:
            ids = _ids(m.group("ids"))
            want_end = "];" if list_owner == "fused" else "]"
            target = fused if list_owner == "fused" else orig if list_owner == "orig" else None
            if ids is None or target is None or m.group("end") != want_end:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fusion_fail_reasons:continued"))
                continue
            target.ids.extend(ids)
            target.pieces += 1
            continue
        if (m := _STATUS.match(msg)) is not None and fused is not None:
            fused.status, fused.status_key = m.group("s"), m.group("key")
            fused.status_detail = m.group("d")
            list_owner = None
            if not fused.freeze().status_known:
                res.gaps.append(
                    Gap("unknown_scope_status", f"scope {fused.sid}: status {fused.status!r}", src=ml.src)
                )
            continue
        if (m := _BREAK().match(msg)) is not None and fused is not None:
            text, detail, names = split_break_line(m.group("rest"))
            fused.brk = parse_break_info(text, ml.src)
            fused.brk_detail = detail
            fused.names = None if names == "none" else names
            list_owner = None
            continue
        res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fusion_fail_reasons"))
    flush()
    return res
