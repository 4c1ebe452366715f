"""N1 narrowing, the pure part: dependency-safe units of a fused scope and the probes that split them.

Why a pure module: a bisection across re-launches is only trustworthy when every probe is a legal
candidate (triage.md §4.2/§4.3) — a cut never separates an event notify/wait pair, a barrier group, a
collective and its events, or a cache writer from its in-SK reader, and never creates a cycle between
the new SKs. Those rules are the fragment rules of :mod:`skdbg.triage.fragment`; here they are applied
to *every* child of the scope at once to get the atomic **units** a probe may separate, and checked
again, independently, on every layout (:func:`check_layout`) before anything runs. No ledger, no
process, no scene: plain records in, plain records out, so the property tests can drive it.

A unit is the union of the §4.2 fragments that overlap (shared nodes, or nodes emitted by one source
statement), widened to whole top-level statements of the scope's marker region (a cut never lands
inside a loop body, a conditional arm or a multi-line statement). Units are ordered by statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from skdbg.parsers.markers import MarkerEdit, requote
from skdbg.triage.fragment import (
    NOTIFY_TYPES,
    WAIT_TYPES,
    FNode,
    FragmentInput,
    attached_kernel,
    compute_fragment,
    partners,
)

#: §4.5.1: skdbg restricts generated scope names to this character set
NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")


@dataclass(frozen=True, slots=True)
class Unit:
    """Children that only move together: ``kernels`` (SK order), every node with them, and the
    top-level statements of the marker region they occupy (``first_stmt``..``last_stmt``)."""

    index: int
    kernels: tuple[int, ...]
    nodes: tuple[int, ...]
    first_stmt: int
    last_stmt: int


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the scope sits in its marker file: the region's begin/end marker lines, the call
    spellings and literal quote style the file already uses, and the (first, last) line of every
    top-level statement of the region body."""

    rel: str
    scope: str
    begin_line: int
    end_line: int
    begin_call: str  # e.g. torch.npu.super_kernel_scope_begin
    end_call: str
    literal: str | None  # the begin marker's argument as written (quote style)
    stmts: tuple[tuple[int, int], ...]
    indents: tuple[str, ...]

    def stmt_of_line(self, line: int) -> int | None:
        """Index of the top-level statement that holds ``line`` (None outside the region body)."""
        for i, (a, b) in enumerate(self.stmts):
            if a <= line <= b:
                return i
        return None


@dataclass(frozen=True, slots=True)
class Group:
    """One fused half of a probe: units ``lo``..``hi-1`` under the scope name suffix ``tag``."""

    lo: int
    hi: int
    tag: str

    def to_json(self) -> dict[str, object]:
        return {"lo": self.lo, "hi": self.hi, "tag": self.tag}


class NarrowError(ValueError):
    """The scope cannot be narrowed (no region, a kernel without a statement, an unsafe layout)."""


# ------------------------------------------------------------------------------ units


class _Union:
    def __init__(self, items: Iterable[int]) -> None:
        self.up = {i: i for i in items}

    def find(self, i: int) -> int:
        while self.up[i] != i:
            self.up[i] = self.up[self.up[i]]
            i = self.up[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.up[max(ra, rb)] = min(ra, rb)


def units_of(inp: FragmentInput, stmt_of: Mapping[int, int]) -> list[Unit]:
    """The scope's units (see the module docstring). ``stmt_of``: nodeId → top-level statement index
    of the marker region. A kernel without a statement joins the unit of the kernel before it in SK
    order (its statement is unknown, so no cut may fall next to it); a node no fragment reaches (an
    event without a kernel on its stream) joins its partners' or, failing that, its neighbour's unit."""
    nodes = sorted(inp.nodes, key=lambda n: n.position)
    if not any(n.is_kernel for n in nodes):
        raise NarrowError("the SK has no kernel child: nothing to narrow")
    uf = _Union(n.node_id for n in nodes)
    for n in nodes:
        if n.is_kernel:
            frag = compute_fragment(replace(inp, child=n.node_id))
            for m in frag.members:
                if m in uf.up:
                    uf.join(n.node_id, m)
    # a probe is diagnosis, not an exclusion: it never separates a cache writer from any in-SK reader
    # (stricter than §4.2 e, which lets a cross-stream pair part when an event pair keeps the order)
    for w, readers in inp.cache_writers.items():
        for r in readers:
            if w in uf.up and r in uf.up:
                uf.join(w, r)
    by_stmt: dict[int, int] = {}
    for n in nodes:
        s = stmt_of.get(n.node_id)
        if s is not None:
            if s in by_stmt:
                uf.join(by_stmt[s], n.node_id)
            else:
                by_stmt[s] = n.node_id
    # nodes whose set holds no placed node: join the previous node in SK order (else the next)
    placed = {uf.find(i) for i in stmt_of if i in uf.up}
    for k, n in enumerate(nodes):
        if uf.find(n.node_id) in placed:
            continue
        nb = nodes[k - 1] if k > 0 else (nodes[k + 1] if k + 1 < len(nodes) else None)
        if nb is None:
            raise NarrowError("no child of the SK has a known source statement")
        uf.join(n.node_id, nb.node_id)
        if uf.find(n.node_id) in placed or uf.find(nb.node_id) in placed:
            placed.add(uf.find(n.node_id))
    sets: dict[int, list[FNode]] = {}
    for n in nodes:
        sets.setdefault(uf.find(n.node_id), []).append(n)
    spans: list[tuple[int, int, list[FNode]]] = []
    for members in sets.values():
        ss = [stmt_of[m.node_id] for m in members if m.node_id in stmt_of]
        if not ss:
            raise NarrowError("a group of SK nodes has no known source statement")
        spans.append((min(ss), max(ss), members))
    spans.sort(key=lambda t: (t[0], t[1]))
    merged: list[tuple[int, int, list[FNode]]] = []
    for lo, hi, members in spans:
        if merged and lo <= merged[-1][1]:
            plo, phi, pm = merged[-1]
            merged[-1] = (plo, max(phi, hi), pm + members)
        else:
            merged.append((lo, hi, list(members)))
    out: list[Unit] = []
    for lo, hi, members in merged:
        members.sort(key=lambda n: n.position)
        ks = tuple(m.node_id for m in members if m.is_kernel)
        if not ks and out:  # events alone between two units: they travel with the unit before
            prev = out[-1]
            out[-1] = Unit(
                prev.index, prev.kernels, prev.nodes + tuple(m.node_id for m in members), prev.first_stmt, hi
            )
            continue
        out.append(Unit(len(out), ks, tuple(m.node_id for m in members), lo, hi))
    if out and not out[0].kernels:  # leading kernel-less unit: fold into the next one
        first, *rest = out
        if rest:
            nxt = rest[0]
            rest[0] = Unit(0, nxt.kernels, first.nodes + nxt.nodes, first.first_stmt, nxt.last_stmt)
            out = [replace(u, index=i) for i, u in enumerate(rest)]
    return out


# ------------------------------------------------------------------------------ safety check


def assignment(units: Sequence[Unit], groups: Sequence[Group]) -> dict[int, str | None]:
    """nodeId → the tag of the group it is fused in, None when it runs unfused in this probe."""
    out: dict[int, str | None] = {n: None for u in units for n in u.nodes}
    for g in groups:
        for u in units[g.lo : g.hi]:
            for n in u.nodes:
                out[n] = g.tag
    return out


def check_layout(inp: FragmentInput, where: Mapping[int, str | None]) -> list[str]:
    """Every §4.2/§4.3 rule a probe layout breaks (empty: legal). ``where``: nodeId → fused group
    tag (None = unfused). Independent of :func:`units_of`: it re-reads the edges from ``inp``."""
    problems: list[str] = []
    by_id = {n.node_id: n for n in inp.nodes}
    for n in inp.nodes:
        if not n.is_event:
            continue
        for p in partners(inp.nodes, n):
            if where.get(n.node_id) != where.get(p.node_id):
                problems.append(
                    f"event pair nodeIds {n.node_id}/{p.node_id} (eventId {n.event_id}) separated"
                )
        k = attached_kernel(inp.nodes, n)
        if k is not None and where.get(k.node_id) != where.get(n.node_id):
            problems.append(f"event nodeId {n.node_id} separated from its kernel nodeId {k.node_id}")
    for g in inp.barrier_groups:
        if len({where.get(m) for m in g.members if m in by_id}) > 1:
            problems.append(f"barrier group {sorted(g.members)} separated")
    for w, readers in inp.cache_writers.items():
        for r in readers:
            if w in by_id and r in by_id and where.get(w) != where.get(r):
                problems.append(f"cache writer nodeId {w} separated from its reader nodeId {r}")
    cycle = _cycle(inp.nodes, where)
    if cycle:
        problems.append("the new SKs would wait on each other: " + " -> ".join(cycle))
    return problems


def _cycle(nodes: tuple[FNode, ...], where: Mapping[int, str | None]) -> list[str]:
    """A cycle between the probe's SKs (groups contracted; unfused nodes stay single), or []."""

    def vertex(n: FNode) -> str:
        g = where.get(n.node_id)
        return f"SK {g}" if g is not None else f"node {n.node_id}"

    succ: dict[str, set[str]] = {}
    by_stream: dict[int | None, list[FNode]] = {}
    for n in sorted(nodes, key=lambda n: n.position):
        by_stream.setdefault(n.stream_id, []).append(n)
        succ.setdefault(vertex(n), set())
    for seq in by_stream.values():
        for a, b in zip(seq, seq[1:], strict=False):
            if vertex(a) != vertex(b):
                succ[vertex(a)].add(vertex(b))
    for n in nodes:
        if n.event_type in NOTIFY_TYPES:
            for p in partners(nodes, n):
                if p.event_type in WAIT_TYPES and vertex(n) != vertex(p):
                    succ[vertex(n)].add(vertex(p))
    import networkx as nx  # only when a probe is checked: the other commands never load it

    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(sorted(succ))
    graph.add_edges_from((a, b) for a in sorted(succ) for b in sorted(succ[a]))
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return []
    return [str(edges[0][0]), *(str(b) for _, b in edges)]


# ------------------------------------------------------------------------------ marker edits


def half_name(scope: str, step: int, tag: str) -> str:
    """``<scope>.n<step><tag>``; a scope name outside the §4.5.1 character set is sanitised first."""
    base = scope if NAME_RE.match(scope) else re.sub(r"[^A-Za-z0-9_.:-]", "_", scope)[:240] or "scope"
    name = f"{base}.n{step}{tag}"
    if len(name) > 255:
        name = f"{base[: 255 - len(name) + len(base)]}.n{step}{tag}"
    return name


def probe_edits(
    layout: Layout, units: Sequence[Unit], groups: Sequence[Group], step: int
) -> list[MarkerEdit]:
    """Marker edits (1-based lines of the ORIGINAL file) that fuse each group under its own name and
    leave every other child of the scope unfused: the original begin/end lines are deleted, and a
    begin/end pair is inserted around each group's statements. Groups must be disjoint, ordered, non-empty."""
    if not groups:
        return []
    prev_hi = 0
    for g in groups:
        if not 0 <= g.lo < g.hi <= len(units) or g.lo < prev_hi:
            raise NarrowError(f"probe groups out of order or empty: {[x.to_json() for x in groups]}")
        prev_hi = g.hi
    inserts: dict[int, list[str]] = {}

    def line_of_unit(i: int) -> int:
        return layout.stmts[units[i].first_stmt][0] if i < len(units) else layout.end_line

    def indent_at(i: int) -> str:
        if i < len(units):
            return layout.indents[units[i].first_stmt]
        return layout.indents[units[-1].last_stmt] if units else ""

    for g in groups:
        name = requote(layout.literal, half_name(layout.scope, step, g.tag))
        b = line_of_unit(g.lo)
        inserts.setdefault(b, []).append(
            f"{indent_at(g.lo)}{layout.begin_call}({name})  # skdbg bisect: probe {step} half {g.tag}"
        )
        e = line_of_unit(g.hi) if g.hi < len(units) else _after_last(layout, units)
        inserts.setdefault(e, []).insert(
            0, f"{indent_at(g.lo)}{layout.end_call}({name})  # skdbg bisect: end of half {g.tag}"
        )
    edits: list[MarkerEdit] = [MarkerEdit(layout.rel, layout.begin_line, "delete", "")]
    for line in sorted(inserts):
        if line <= layout.begin_line:
            raise NarrowError(f"probe insert at line {line} lies before the scope's begin marker")
        edits.append(MarkerEdit(layout.rel, line, "insert", "\n".join(inserts[line])))
    edits.append(MarkerEdit(layout.rel, layout.end_line, "delete", ""))
    edits.sort(key=lambda e: (e.line, 0 if e.op == "insert" else 1))
    return edits


def _after_last(layout: Layout, units: Sequence[Unit]) -> int:
    """The line right after the last unit's statements (the end marker line when nothing follows)."""
    last = layout.stmts[units[-1].last_stmt][1] + 1
    return min(last, layout.end_line)


__all__ = [
    "NAME_RE",
    "Group",
    "Layout",
    "NarrowError",
    "Unit",
    "assignment",
    "check_layout",
    "half_name",
    "probe_edits",
    "units_of",
]
