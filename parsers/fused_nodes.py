"""``sk_fused_nodes.log`` — ``PrintSKNodes`` of ``sk_optimizer.cpp`` (artifacts.md §3.4, rows 51-55).

Why it matters: it is the only listing of which children (and event nodes) each SK fused, in
the filtered order, under the SK function name that the profiler and the exception dump use.

Real lines carry the file-logger prefix and indentation (``  SK Function: …`` / ``    [i] <node>``);
the hand-written upstream fixture has neither prefix nor ``[i]`` (row 51 — both give the same
blocks). The file is opened in append mode upstream, so a rerun in the same cwd repeats the
blocks (row 55): they are kept, numbered by ``occurrence``, and :meth:`FusedNodesResult.latest`
/ :meth:`FusedNodesResult.dedupe` select from them.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase, frame, record_row
from skdbg.parsers.skmeta_scan import FastScan, fast_pattern

if TYPE_CHECKING:
    import pandas as pd

_HEADER = regexcode.compile(
    r"^\s*SK Function: (?P<name>.*), scope id: (?P<sid>\d+), Node Count: (?P<n>\d+)\s*$"
)
_POS = regexcode.compile(r"^\s*(?:\[(?P<i>\d+)\]\s+)?(?=\[nodeId:)")
#: a ``[i] <node>`` line (all but the header lines), as ``_POS`` reads it (skmeta_scan)
_FAST = fast_pattern(r"[ \t]*\[(?P<i>[0-9]+)\][ \t]+(?P<node>\[nodeId:[^\n]*)")
_SK = regexcode.compile(r"^sk_(?P<id>\d{1,19})_(?P<rest>.*)$", re.DOTALL)  # ids fit 64 bits
_NO_KERNEL = "no_kernel_scope_"
_START = "_start_"
_END = "_end_"


@dataclass(frozen=True, slots=True)
class SkFuncName:
    """``sk_<id>_<scope>_start_<first>_end_<last>`` split into its parts (§3.4, row 53).

    ``ambiguous`` is True when the markers occur more than once, so several splits are possible
    and no first/last funcName was available to pick the right one; ``resolved_by_nodes`` when
    the node list's first/last kernel names decided it.
    """

    raw: str
    scope_id: int | None
    scope_name: str | None
    first_func: str | None
    last_func: str | None
    no_kernel: bool = False
    ambiguous: bool = False
    resolved_by_nodes: bool = False
    too_long: bool = False

    @property
    def parsed(self) -> bool:
        return self.scope_id is not None


#: the longest SK function name split (characters). Real names are a scope name plus two kernel
#: names (templated kernel names run to several KB); a longer one is hostile or corrupt, and is
#: reported as a gap instead of being split.
MAX_SK_FUNC_NAME = 65536


def _positions(text: str, marker: str) -> list[int]:
    """Every (possibly overlapping) index of ``marker`` in ``text``, ascending; linear time."""
    out: list[int] = []
    i = text.find(marker)
    while i >= 0:
        out.append(i)
        i = text.find(marker, i + 1)
    return out


@dataclass(frozen=True, slots=True)
class _Readings:
    """The (scope, first, last) readings of ``<scope>_start_<first>_end_<last>``, without listing them.

    A reading is a ``_start_`` index ``i`` and an ``_end_`` index ``j`` with ``j >= i + len(_start_)``
    and a non-empty tail after ``_end_``. The number of readings can be quadratic in the name's
    length, so they are counted and picked by index arithmetic, and only the chosen one is sliced.
    """

    rest: str
    starts: list[int]
    ends: list[int]  # the ``_end_`` indexes that leave a non-empty last name

    @classmethod
    def of(cls, rest: str) -> _Readings:
        ends = [j for j in _positions(rest, _END) if j + len(_END) < len(rest)]
        return cls(rest, _positions(rest, _START), ends)

    def count(self, at_most: int = 2) -> int:
        """How many readings exist, counting no further than ``at_most``."""
        n = 0
        for i in reversed(self.starts):
            n += len(self.ends) - bisect_left(self.ends, i + len(_START))
            if n >= at_most:
                return at_most
        return n

    def split(self, i: int, j: int) -> tuple[str, str, str]:
        return self.rest[:i], self.rest[i + len(_START) : j], self.rest[j + len(_END) :]

    def rightmost(self) -> tuple[str, str, str] | None:
        """The reading with the latest ``_start_``, then the latest ``_end_`` (never cuts the last name)."""
        if not self.ends:
            return None
        j = self.ends[-1]
        k = bisect_right(self.starts, j - len(_START))
        return self.split(self.starts[k - 1], j) if k else None

    def hinted(self, first: str | None, last: str | None) -> list[tuple[str, str, str]]:
        """The readings whose first/last names equal the given hints (at most two are returned)."""
        out: list[tuple[str, str, str]] = []
        if last is not None:
            j = len(self.rest) - len(last) - len(_END)
            if j < 0 or not self.rest.endswith(_END + last):
                return out
            for i in reversed(self.starts):
                if i + len(_START) > j:
                    continue
                if first is None or (
                    j - i - len(_START) == len(first) and self.rest.startswith(first, i + len(_START))
                ):
                    out.append(self.split(i, j))
                    if len(out) == 2:
                        break
            return out
        assert first is not None
        ends = set(self.ends)
        for i in reversed(self.starts):
            j = i + len(_START) + len(first)
            if j in ends and self.rest.startswith(first, i + len(_START)):
                out.append(self.split(i, j))
                if len(out) == 2:
                    break
        return out


def split_sk_func_name(name: str, first_hint: str | None = None, last_hint: str | None = None) -> SkFuncName:
    """Split an SK function name; hints (first/last kernel funcName of the node list) disambiguate.

    Without hints the *rightmost* markers win (scope names are user text and may contain
    ``_start_``/``_end_``; the split then never cuts inside the last child name) and the
    result is flagged ``ambiguous`` when another reading exists. Linear in the name's length; a name
    over :data:`MAX_SK_FUNC_NAME` characters is not split (``too_long``: the caller records a gap).
    """
    if len(name) > MAX_SK_FUNC_NAME:
        return SkFuncName(name, None, None, None, None, too_long=True)
    m = _SK.match(name)
    if m is None:
        return SkFuncName(name, None, None, None, None)
    sid, rest = int(m.group("id")), m.group("rest")
    if first_hint is not None and last_hint is not None:
        suffix = f"{_START}{first_hint}{_END}{last_hint}"
        if rest.endswith(suffix):
            return SkFuncName(name, sid, rest[: -len(suffix)], first_hint, last_hint, resolved_by_nodes=True)
    readings = _Readings.of(rest)
    count = readings.count()
    if rest.startswith(_NO_KERNEL) and (first_hint is None or not count):
        # A scope without kernels; flag it when a kernel reading is also possible.
        return SkFuncName(
            name, sid, rest[len(_NO_KERNEL) :], None, None, no_kernel=True, ambiguous=bool(count)
        )
    best = readings.rightmost()
    if best is None:
        return SkFuncName(name, sid, None, None, None)
    if first_hint is not None or last_hint is not None:
        hinted = readings.hinted(first_hint, last_hint)
        if len(hinted) == 1:
            s, f, la = hinted[0]
            return SkFuncName(name, sid, s, f, la, resolved_by_nodes=True)
    return SkFuncName(name, sid, best[0], best[1], best[2], ambiguous=count > 1)


def too_long_gap(name: SkFuncName, src: Source) -> Gap:
    """The evidence gap for an SK function name that was not split because of its length."""
    return Gap(
        "sk_name_too_long",
        f"SK function name of {len(name.raw)} characters (limit {MAX_SK_FUNC_NAME}): not split into "
        "scope and first/last child",
        src=src,
    )


@dataclass(frozen=True, slots=True)
class FusedNode:
    """One ``[i] <node>`` line of a block (``position`` None in the fixture form)."""

    src: Source
    position: int | None
    node: Node


@dataclass(frozen=True, slots=True)
class SkBlock:
    """One ``SK Function`` block.

    ``count_mismatch`` (row 52): the header's Node Count differs from the number of
    ``KernelInfos`` lines — expected when event/memory nodes are listed, so a flag, not an error.
    ``incomplete``: fewer node lines than the header announced (file cut or interleaved).
    ``occurrence``: 0 for the first block with this (scope id, name), 1 for its first repeat, …
    """

    src: Source
    ts: datetime | None
    pid: int | None
    sk_func_name: str
    name: SkFuncName
    scope_id: int
    node_count: int
    nodes: tuple[FusedNode, ...]
    occurrence: int

    @property
    def kernels(self) -> tuple[Node, ...]:
        return tuple(fn.node for fn in self.nodes if fn.node.is_kernel)

    @property
    def kernel_count(self) -> int:
        return len(self.kernels)

    @property
    def count_mismatch(self) -> bool:
        return self.node_count != self.kernel_count

    @property
    def incomplete(self) -> bool:
        return len(self.nodes) < self.node_count

    @property
    def key(self) -> tuple[int, str]:
        return (self.scope_id, self.sk_func_name)

    def content(self) -> tuple[object, ...]:
        """Everything but provenance/occurrence: equal content means a repeated block."""
        return (
            self.sk_func_name,
            self.scope_id,
            self.node_count,
            tuple((fn.position, replace(fn.node, src=Source(""))) for fn in self.nodes),
        )


@dataclass
class FusedNodesResult(MetaResultBase):
    """Every block of ``sk_fused_nodes.log`` in file order (a rerun appends newer blocks of the same SK)."""

    blocks: list[SkBlock] = field(default_factory=list)

    def latest(self) -> list[SkBlock]:
        """For each (scope id, skFuncName) the last occurrence (a rerun appended later), in file order."""
        last: dict[tuple[int, str], SkBlock] = {}
        for b in self.blocks:
            last[b.key] = b
        keep = {id(b) for b in last.values()}
        return [b for b in self.blocks if id(b) in keep]

    def by_scope(self, scope_id: int) -> SkBlock | None:
        """The latest block of a scope id, or None."""
        found = [b for b in self.latest() if b.scope_id == scope_id]
        return found[-1] if found else None

    def blocks_frame(self) -> pd.DataFrame:
        return records_frame((({}, b) for b in self.blocks), BLOCK_COLS)

    def nodes_frame(self) -> pd.DataFrame:
        rows = []
        for b in self.blocks:
            for fn in b.nodes:
                row = record_row(fn.node, skip=("text",))
                row.update(
                    {
                        "file": fn.src.file,
                        "line": fn.src.line,
                        "scope_id": b.scope_id,
                        "sk_func_name": b.sk_func_name,
                        "occurrence": b.occurrence,
                        "position": fn.position,
                        "scope_marker": fn.node.scope_marker,
                    }
                )
                rows.append(row)
        return frame(rows, NODE_COLUMNS)

    def to_frame(self) -> pd.DataFrame:
        """One row per listed node (the usual table); see :meth:`blocks_frame` for headers."""
        return self.nodes_frame()


BLOCK_COLS = (
    *SRC_COLS,
    Col("ts"),
    Col("pid"),
    Col("sk_func_name"),
    Col("scope_id"),
    Col("scope_name", lambda b: b.name.scope_name),
    Col("first_func", lambda b: b.name.first_func),
    Col("last_func", lambda b: b.name.last_func),
    Col("no_kernel", lambda b: b.name.no_kernel),
    Col("name_ambiguous", lambda b: b.name.ambiguous),
    Col("node_count"),
    Col("listed_nodes", lambda b: len(b.nodes)),
    Col("kernel_count"),
    Col("count_mismatch"),
    Col("incomplete"),
    Col("occurrence"),
)
BLOCK_COLUMNS = [c.name for c in BLOCK_COLS]
NODE_COLUMNS = [
    "file",
    "line",
    "scope_id",
    "sk_func_name",
    "occurrence",
    "position",
    "kind",
    "node_id",
    "stream_id",
    "stream_idx_in_graph",
    "node_idx_in_stream",
    "form",
    "func_name",
    "kernel_type",
    "scope_marker",
]


_build_fused_node = frozen_builder(FusedNode)


def _child_kernels(nodes: Iterable[FusedNode]) -> Iterator[Node]:
    return (fn.node for fn in nodes if fn.node.kind == "kernel" and not fn.node.is_scope_marker)


class _Open:
    def __init__(self, ml: MetaLine, name: str, sid: int, n: int) -> None:
        self.ml, self.name, self.sid, self.n = ml, name, sid, n
        self.nodes: list[FusedNode] = []


def parse_fused_nodes(
    source: str | os.PathLike[str] | Iterable[MetaLine], *, file: str | None = None
) -> FusedNodesResult:
    """Parse ``sk_fused_nodes.log`` (a path or MetaLines); raises ParseError only for unreadable files."""
    fname = (
        file if file is not None else (str(source) if isinstance(source, (str, os.PathLike)) else "<lines>")
    )
    res = FusedNodesResult(fname)
    seen: dict[tuple[int, str], int] = {}
    cur: _Open | None = None

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        # the first and last child kernels (scope markers aside) name the SK: looked for from each end
        first = next((n.func_name for n in _child_kernels(cur.nodes)), None)
        last = next((n.func_name for n in _child_kernels(reversed(cur.nodes))), None)
        name = split_sk_func_name(cur.name, first, last)
        if name.too_long:
            res.gaps.append(too_long_gap(name, cur.ml.src))
        key = (cur.sid, cur.name)
        occ = seen.get(key, 0)
        seen[key] = occ + 1
        block = SkBlock(
            cur.ml.src, cur.ml.ts, cur.ml.pid, cur.name, name, cur.sid, cur.n, tuple(cur.nodes), occ
        )
        if block.incomplete:
            res.gaps.append(
                Gap(
                    "incomplete_block",
                    f"SK Function {cur.name}: header announces {cur.n} nodes, {len(cur.nodes)} listed",
                    src=cur.ml.src,
                )
            )
        res.blocks.append(block)
        cur = None

    def general(ml: MetaLine) -> None:
        nonlocal cur
        res.note_truncated(ml, "sk_fused_nodes.log")
        if res.note_common(ml):
            return
        msg = ml.message
        h = _HEADER.match(msg)
        if h is not None:
            close()
            cur = _Open(ml, h.group("name"), int(h.group("sid")), int(h.group("n")))
            return
        pm = _POS.match(msg)
        if pm is not None:
            try:
                got = match_node(msg, pm.end(), ml.src)
            except ParseError as exc:
                res.unrecognized.append(Unrecognized(ml.src, msg, f"sk_fused_nodes:malformed_node: {exc}"))
                return
            if got is None or msg[got[1] :].strip():
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fused_nodes:node_trailing_text"))
                return
            if cur is None:
                res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fused_nodes:node_outside_block"))
                return
            pos = pm.group("i")
            cur.nodes.append(FusedNode(ml.src, int(pos) if pos is not None else None, got[0]))
            return
        res.unrecognized.append(Unrecognized(ml.src, msg, "sk_fused_nodes"))

    if not isinstance(source, (str, os.PathLike)):
        for ml in source:
            general(ml)
        close()
        return res
    scan = FastScan(source, _FAST, what="sk_fused_nodes.log")
    note, file = scan.note, scan.file
    for item in scan:
        if isinstance(item, MetaLine):
            general(item)
            continue
        m, no = item
        if cur is not None:  # a ``[i] <node>`` line inside a block: the general branch's reading
            position, text, pid_text = m.group("i", "node", "pid")
            src = build_source(file, no, None)
            try:
                got = match_node(text, 0, src)
            except ParseError:
                got = None  # the general branch words the error
            if got is not None and (got[1] == len(text) or not text[got[1] :].strip()):
                if pid_text == scan.pid_text:  # all ``note`` does for a further line of that pid
                    res.lines_read += 1
                else:
                    note(res, m, no)
                cur.nodes.append(_build_fused_node(src, int(position), got[0]))
                continue
        general(scan.meta_line(no))
    close()
    return res
