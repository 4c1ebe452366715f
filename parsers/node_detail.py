"""``sk_node_detail.log`` — ``UpdateNodeScopeBitFlags`` of ``sk_graph.cpp`` (artifacts.md §3.6, row 56).

Why it matters: it is the per-node record of scope tagging — which named scopes a node was
put in and whether it stayed fusible — i.e. the first place a "my op was not fused" question
can be answered. ``scopeFlags`` is the scope bitset written index-0-first and truncated to the
number of named scopes (``0100`` = second name), or ``0`` when no scope names exist.

Older builds print ``type=<digit>`` (the upstream ``sk_node_tracing.py`` maps 0..5 to
KERNEL/NOTIFY/WAIT/RESET/MEMORY_WRITE/MEMORY_WAIT) and may omit the trailing fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import ParseError, Source, Unrecognized
from skdbg.parsers.discovery import MODEL_FILES
from skdbg.parsers.filelog import prefix_ts
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase, frame, record_row
from skdbg.parsers.skmeta_scan import FastScan, fast_pattern

if TYPE_CHECKING:
    import pandas as pd

NODE_TYPES = frozenset({"KERNEL", "NOTIFY", "WAIT", "RESET", "MEMORY_WRITE", "MEMORY_WAIT", "DEFAULT"})
LEGACY_TYPE_CODES = {
    "0": "KERNEL",
    "1": "NOTIFY",
    "2": "WAIT",
    "3": "RESET",
    "4": "MEMORY_WRITE",
    "5": "MEMORY_WAIT",
}
_LEAD = re.compile(r"^\s*Processed node (?=\[nodeId:)")
#: a ``Processed node <node>…`` line, as ``_LEAD`` reads it (skmeta_scan)
_FAST = fast_pattern(r"[ \t]*Processed node (?P<node>\[nodeId:[^\n]*)")
_TAIL_OPEN = ": type="  # the start of the tail
_TAIL = re.compile(
    r"^: type=(?P<type>\w+)"
    r"(?:, scopeFlags=(?P<flags>[01]+))?"
    r"(?:, isFusible=(?P<fus>[01]))?"
    r"(?:, stackSize=(?P<stack>\d+))?\s*$"
)

#: the file's name in messages (a read error, a cut line)
WHAT = MODEL_FILES["node_detail"]


def scope_indices(flags: str) -> tuple[int, ...]:
    """Indices of the named scopes a bit string selects (index-0-first, §3.6)."""
    return tuple(i for i, ch in enumerate(flags) if ch == "1")


@dataclass(frozen=True, slots=True)
class NodeDetail:
    """One node of ``sk_node_detail.log``: the node, its type (legacy digit codes mapped to names), the scope
    bits it carries, whether it is fusible and its stack size."""

    src: Source
    ts: datetime | None
    pid: int | None
    node: Node
    node_type: str  # KERNEL … DEFAULT (legacy digit codes mapped)
    node_type_raw: str
    scope_flags: str | None  # the bit string as printed
    is_fusible: bool | None
    stack_size: int | None

    @property
    def scope_indices(self) -> tuple[int, ...]:
        return scope_indices(self.scope_flags or "")

    @property
    def in_named_scope(self) -> bool:
        return bool(self.scope_indices)


_build_detail = frozen_builder(NodeDetail)

COLUMNS = [
    "file",
    "line",
    "ts",
    "pid",
    "node_id",
    "stream_id",
    "stream_idx_in_graph",
    "node_idx_in_stream",
    "kind",
    "func_name",
    "node_type",
    "scope_flags",
    "scope_indices",
    "is_fusible",
    "stack_size",
]


@dataclass
class NodeDetailResult(MetaResultBase):
    """Every node record of ``sk_node_detail.log`` in file order (a rerun appends newer ones)."""

    nodes: list[NodeDetail] = field(default_factory=list)

    def by_node_id(self) -> dict[int, NodeDetail]:
        """Last record per nodeId (the file may hold appended reruns)."""
        return {d.node.node_id: d for d in self.nodes}

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for d in self.nodes:
            row = record_row(d.node, skip=("text",))
            row.update(record_row(d, skip=("node",)))
            row["scope_indices"] = list(d.scope_indices)
            rows.append(row)
        return frame(rows, COLUMNS)


def _detail(src: Source, ts: datetime | None, pid: int | None, node: Node, tail: re.Match[str]) -> NodeDetail:
    """The record of a ``Processed node`` line: its node and the tail after it (type, flags, fusion,
    stack), as both the line-at-a-time branch and the fast one read them."""
    raw_type, flags, fus, stack = tail.group("type", "flags", "fus", "stack")
    return _build_detail(
        src,
        ts,
        pid,
        node,
        LEGACY_TYPE_CODES.get(raw_type, raw_type),
        raw_type,
        flags,
        None if fus is None else fus == "1",
        None if stack is None else int(stack),
    )


def parse_node_detail(
    source: str | os.PathLike[str] | Iterable[MetaLine], *, file: str | None = None
) -> NodeDetailResult:
    """Parse ``sk_node_detail.log``; unknown lines are kept as Unrecognized."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = NodeDetailResult(fname)

    def add(ml: MetaLine, pos: int) -> None:
        """Record the ``Processed node`` line ``ml`` whose node starts at ``pos`` (or why it is not one)."""
        src, msg = ml.src, ml.message
        try:
            got = match_node(msg, pos, src)
        except ParseError as exc:
            res.unrecognized.append(Unrecognized(src, msg, f"sk_node_detail:malformed_node: {exc}"))
            return
        tail = _TAIL.match(msg[got[1] :]) if got is not None else None
        if got is None or tail is None:
            res.unrecognized.append(Unrecognized(src, msg, "sk_node_detail:tail"))
            return
        res.nodes.append(_detail(src, ml.ts, ml.pid, got[0], tail))

    def general(ml: MetaLine) -> None:
        res.note_truncated(ml, WHAT)
        if res.note_common(ml):
            return
        msg = ml.message
        lead = _LEAD.match(msg)
        if lead is None:
            res.unrecognized.append(Unrecognized(ml.src, msg, "sk_node_detail"))
            return
        add(ml, lead.end())

    if not isinstance(source, (str, os.PathLike)):
        for ml in source:
            general(ml)
        return res
    scan = FastScan(source, _FAST, what=WHAT)
    note, file, nodes = scan.note, scan.file, res.nodes
    for item in scan:
        if isinstance(item, MetaLine):
            general(item)
            continue
        m, no = item
        ts_text, pid_text, text = m.group("ts", "pid", "node")
        src = build_source(file, no, None)
        # what ``add`` records for the line, without the line layer's MetaLine; anything else (an
        # error to word, a tail it does not read) is the general branch's
        tail_at = text.rfind(_TAIL_OPEN)  # the node ends where the tail starts: match_node's guess
        try:
            got = match_node(text, 0, src, tail_at if tail_at > 0 else None)
        except ParseError:
            got = None
        if got is None or (tail := _TAIL.match(text[got[1] :])) is None:
            general(scan.meta_line(no))
            continue
        nodes.append(_detail(src, prefix_ts(ts_text), int(pid_text), got[0], tail))
        if pid_text == scan.pid_text:  # all ``note`` does for a further line of that pid
            res.lines_read += 1
        else:
            note(res, m, no)
    return res
