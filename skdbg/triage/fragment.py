"""The minimal exclusion fragment F (triage.md §4.2) as a fixpoint over the SK's dependency edges.

Why a separate, pure module: the fragment decides whether a single child can leave the SK or a
whole dependent fragment must (§4.4), so it must be testable without a scene. :func:`compute_fragment`
works on plain :class:`FNode` records; :func:`fragment_input` is the only place that reads an
:class:`~skdbg.triage.skview.SkInstance` (fused nodes, task queue, scope split) to build them.

Rules (letters as in §4.2): (a) event nodes attached to a kernel of F — a wait attaches to the
*next* kernel on its stream, a notify to the *previous* one; (b) the partners of every event of F
(same ``eventId``) and, once a pair is in F, every statement between F's first and last statement
(collateral); (c) barrier groups (``ALL_SYNC`` SYNC tasks, ``syncAllNodes``, ``SYNCALL_OP_DROP``);
(d) collectives with their attached events/barriers; (e) a cache writer and its in-SK readers on
other streams, evaluated once (a)–(d) have settled: a reader F would separate from its writer joins
only when no event pair leaving with F keeps the writer→reader ordering (and the writer likewise
for a reader in F). Every edge found is recorded (also when it adds nothing) so the proposal can
list it as a safety note (§4.3).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from skdbg.parsers.common import Source
from skdbg.triage.skview import SkInstance, made_once

#: node kinds that wait / publish (§4.2 a)
WAIT_TYPES = frozenset({"EventWait", "MemoryWait"})
NOTIFY_TYPES = frozenset({"EventNotify", "MemoryWrite"})
RESET_TYPES = frozenset({"EventReset"})
#: task debugOptions bits that mean a cache maintenance (DCCI) around the child (§4.3 "cache")
DCCI_BITS = 0x4 | 0x8 | 0x20
#: SkCoreSyncType 0: a full-core barrier (§4.3 "barrier")
ALL_SYNC = 0
#: task debugOptions bit of ``debug_sync_all`` (a diagnostic SyncAll after the child, F9)
DEBUG_SYNC_ALL_BIT = 0x2


@dataclass(frozen=True, slots=True)
class FNode:
    """One SK node as the fragment rules see it. ``event_type`` uses MemoryWrite/MemoryWait for
    memory nodes so one family check covers both; ``line`` is its source line when known."""

    node_id: int
    position: int
    kind: str  # kernel | event | memory_write | memory_wait | default
    stream_id: int | None = None
    event_type: str | None = None
    event_id: int | None = None
    func_name: str | None = None
    collective: bool = False
    src: Source | None = None

    @property
    def is_kernel(self) -> bool:
        return self.kind == "kernel"

    @property
    def is_event(self) -> bool:
        return self.event_type is not None

    @property
    def family(self) -> str:
        """Events pair within their family only (EventNotify↔EventWait, MemoryWrite↔MemoryWait)."""
        return "memory" if self.kind.startswith("memory") else "event"


@dataclass(frozen=True, slots=True)
class BarrierGroup:
    """Nodes that move as a unit around a full-core barrier (§4.2 c)."""

    members: frozenset[int]
    origin: str  # ALL_SYNC | syncAllNodes | SYNCALL_OP_DROP
    detail: str
    src: Source | None = None
    debug: bool = False  # inserted by debug_sync_all (task debugOptions 0x2): not a clean-run edge


@dataclass(frozen=True, slots=True)
class FragmentInput:
    """Everything the fixpoint reads. ``lines``: nodeId → source line (explicit or inferred).
    ``ignored_barriers``: debug-inserted barriers kept out of the fixpoint (reported, not used)."""

    nodes: tuple[FNode, ...]
    child: int
    barrier_groups: tuple[BarrierGroup, ...] = ()
    ignored_barriers: tuple[BarrierGroup, ...] = ()
    cache_writers: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    dcci: Mapping[int, Source | None] = field(default_factory=dict)
    lines: Mapping[int, int] = field(default_factory=dict)

    def node(self, node_id: int) -> FNode | None:
        return next((n for n in self.nodes if n.node_id == node_id), None)


@dataclass(frozen=True, slots=True)
class Edge:
    """A dependency the fragment rules met. ``added`` are the nodes it pulled into F (may be empty)."""

    kind: str  # event | memory_event | barrier | collective | cache | source
    rule: str  # §4.2 letter: a | b | c | d | e
    nodes: tuple[int, ...]
    added: tuple[int, ...]
    detail: str
    src: Source | None = None


@dataclass(frozen=True, slots=True)
class Fragment:
    """F in SK (fused-node) order; ``edges`` in discovery order."""

    child: int
    members: tuple[int, ...]
    edges: tuple[Edge, ...]

    @property
    def collateral(self) -> tuple[int, ...]:
        return tuple(n for n in self.members if n != self.child)

    @property
    def single(self) -> bool:
        return self.members == (self.child,)


# ------------------------------------------------------------------------------ attachment rules


def attached_kernel(nodes: tuple[FNode, ...], event: FNode) -> FNode | None:
    """The kernel an event node attaches to (§4.2 a): wait → next kernel on its stream,
    notify → previous kernel on its stream, reset → none (it attaches to its pair)."""
    same = [n for n in nodes if n.is_kernel and n.stream_id == event.stream_id]
    if event.event_type in WAIT_TYPES:
        return next((n for n in same if n.position > event.position), None)
    if event.event_type in NOTIFY_TYPES:
        before = [n for n in same if n.position < event.position]
        return before[-1] if before else None
    return None


def _attachments(nodes: tuple[FNode, ...]) -> dict[int, FNode | None]:
    """:func:`attached_kernel` of every event node in one pass per stream (SKs hold thousands of nodes)."""
    by_stream: dict[int | None, list[FNode]] = {}
    for n in sorted(nodes, key=lambda n: n.position):
        by_stream.setdefault(n.stream_id, []).append(n)
    out: dict[int, FNode | None] = {}
    for seq in by_stream.values():
        prev: FNode | None = None
        pending_waits: list[FNode] = []
        for n in seq:
            if n.is_kernel:
                for w in pending_waits:
                    out[w.node_id] = n
                pending_waits = []
                prev = n
            elif n.is_event:
                if n.event_type in WAIT_TYPES:
                    pending_waits.append(n)
                elif n.event_type in NOTIFY_TYPES:
                    out[n.node_id] = prev
                else:
                    out[n.node_id] = None
        for w in pending_waits:
            out[w.node_id] = None
    return out


def partner_index(nodes: tuple[FNode, ...]) -> dict[tuple[int, str], list[FNode]]:
    """Event nodes grouped by (eventId, family), for :func:`partners` over SKs of thousands of nodes."""
    out: dict[tuple[int, str], list[FNode]] = {}
    for n in nodes:
        if n.is_event and n.event_id is not None:
            out.setdefault((n.event_id, n.family), []).append(n)
    return out


def partners(
    nodes: tuple[FNode, ...], event: FNode, *, index: dict[tuple[int, str], list[FNode]] | None = None
) -> list[FNode]:
    """Other event nodes with the same eventId in the same family (notify↔wait↔reset)."""
    if event.event_id is None:
        return []
    group = (index if index is not None else partner_index(nodes)).get((event.event_id, event.family), [])
    return [n for n in group if n.node_id != event.node_id]


def _ekind(n: FNode) -> str:
    return "memory_event" if n.family == "memory" else "event"


def _label(n: FNode | None, node_id: int) -> str:
    if n is None:
        return f"nodeId {node_id}"
    if n.is_event:
        return f"{n.event_type}(eventId={n.event_id}) nodeId {n.node_id} stream {n.stream_id}"
    return f"{n.func_name or 'kernel'} nodeId {n.node_id} stream {n.stream_id}"


# ------------------------------------------------------------------------------ the fixpoint


class _Recorder(Protocol):
    def __call__(
        self, kind: str, rule: str, ids: Iterable[int], detail: str, src: Source | None = None
    ) -> bool: ...


def compute_fragment(inp: FragmentInput, also: Iterable[int] = ()) -> Fragment:
    """Grow F from ``{child}`` (plus the ``also`` seeds, e.g. a user-edited excluded set) until
    nothing changes (§4.2).

    Rules (a)–(d) and the source collateral of (b) are closed first; only then is (e) evaluated,
    pair by pair: a cross-stream cache reader (or writer) joins F only when F separates it from its
    writer (reader) *and* the ordering between them would not survive the change — i.e. no chain of
    stream order and event pairs that leave the SK with F orders the earlier one before the later
    one (§4.3). Whatever (e) adds is closed again under (a)–(d), until a fixpoint.
    """
    nodes = inp.nodes
    by_id = {n.node_id: n for n in nodes}
    members: set[int] = {inp.child, *also}
    edges: list[Edge] = []
    seen: set[tuple[str, tuple[int, ...]]] = set()
    paired = False

    def record(
        kind: str, rule: str, ids: Iterable[int], detail: str, src: Source | None = None, add: bool = True
    ) -> bool:
        ids_t = tuple(sorted(set(ids), key=lambda i: by_id[i].position if i in by_id else i))
        added = tuple(i for i in ids_t if i not in members) if add else ()
        key = (kind + rule + ("" if rule in "ab" else detail), ids_t)
        if key not in seen:
            seen.add(key)
            edges.append(Edge(kind, rule, ids_t, added, detail, src))
        members.update(added)
        return bool(added)

    attach = _attachments(nodes)
    pindex = partner_index(nodes)
    events_of: dict[int, list[FNode]] = {}
    for ev in nodes:
        k = attach.get(ev.node_id)
        if ev.is_event and k is not None:
            events_of.setdefault(k.node_id, []).append(ev)

    def settle() -> None:
        """Rules (a)–(d) and the (b) collateral to their own fixpoint."""
        nonlocal paired
        changed = True
        while changed:
            changed = False
            current = [
                by_id[i] for i in sorted(members, key=lambda i: by_id[i].position if i in by_id else i)
            ]
            for m in current:
                if m.is_kernel:
                    # (a) events attached to a kernel of F
                    for ev in events_of.get(m.node_id, ()):
                        if attach.get(ev.node_id) is m:
                            side = "waits before" if ev.event_type in WAIT_TYPES else "publishes"
                            detail = f"{_label(ev, ev.node_id)} {side} {_label(m, m.node_id)}"
                            changed |= record(_ekind(ev), "a", (m.node_id, ev.node_id), detail, ev.src)
                    if m.collective:
                        # (d) the collective itself; its events/barriers come through (a)/(c)
                        detail = (
                            f"{_label(m, m.node_id)} is a collective: it moves with its attached events and "
                            "barriers; the source edit is global, so every rank changes identically"
                        )
                        changed |= record("collective", "d", (m.node_id,), detail, m.src)
                elif m.is_event:
                    # (b) partners of an event of F
                    for p in partners(nodes, m, index=pindex):
                        paired = True
                        detail = (
                            f"{_label(m, m.node_id)} pairs with {_label(p, p.node_id)} (same eventId): "
                            "both sides' statements stay together"
                        )
                        changed |= record(_ekind(m), "b", (m.node_id, p.node_id), detail, p.src)
                    k = attach.get(m.node_id)
                    if k is not None and k.collective:
                        detail = (
                            f"{_label(m, m.node_id)} is attached to the collective {_label(k, k.node_id)}"
                        )
                        changed |= record("collective", "d", (m.node_id, k.node_id), detail, k.src)
            if paired:
                changed |= _fill_between(inp, members, record)
            # (c) barrier groups
            for g in inp.barrier_groups:
                if members & g.members:
                    changed |= record("barrier", "c", g.members & by_id.keys(), g.detail, g.src)

    noted: set[tuple[int, int]] = set()
    while True:
        settle()
        pairs = _cache_pairs(inp, by_id, members, pindex)
        lost = min(
            (c for c in pairs if c.status == "lost"), key=lambda c: by_id[c.moves].position, default=None
        )
        if lost is None:
            break
        # one pair at a time, the earliest node first: what it brings along (its events, the
        # statements between) may keep the ordering of a later pair through stream order
        noted.add(lost.pair)
        record(*lost.edge)
    for c in pairs:  # edges met at the fixpoint that add nothing (listed as safety notes)
        if c.status != "lost" and c.pair not in noted:
            record(*c.edge, add=False)
    order = sorted(members, key=lambda i: by_id[i].position if i in by_id else i)
    return Fragment(inp.child, tuple(order), tuple(edges))


@dataclass(frozen=True, slots=True)
class _CachePair:
    """One cross-stream writer/reader pair judged against F: ``lost`` (F separates them and no event
    pair leaving with F orders them: the edge pulls the other side in), ``kept`` (F separates them
    but such an event pair keeps the order) or ``inside`` (both leave with F)."""

    status: str
    pair: tuple[int, int]
    moves: int  # the side F does not hold yet (for ``inside``: the reader)
    edge: tuple[str, str, tuple[int, ...], str, Source | None]


def _cache_pairs(
    inp: FragmentInput,
    by_id: Mapping[int, FNode],
    members: set[int],
    pindex: dict[tuple[int, str], list[FNode]],
) -> list[_CachePair]:
    """(e) at the fixpoint of (a)–(d): every cross-stream writer/reader pair F touches."""
    out: list[_CachePair] = []
    order = _Ordering(inp.nodes, members, pindex)
    for w, readers in inp.cache_writers.items():
        wn = by_id.get(w)
        if wn is None:
            continue
        for r in readers:
            rn = by_id.get(r)
            if rn is None or rn.stream_id == wn.stream_id or (w not in members and r not in members):
                continue
            pair = f"cache writer {_label(wn, w)} is read in-SK by {_label(rn, r)} on another stream"
            if w in members and r in members:
                detail = f"{pair}; both leave the SK with the fragment, so their order is unchanged"
                out.append(_CachePair("inside", (w, r), r, ("cache", "e", (w, r), detail, wn.src)))
                continue
            staying = rn if w in members else wn
            first, last = ("writer", "reader") if wn.position <= rn.position else ("reader", "writer")
            chain = order.chain(*((wn, rn) if first == "writer" else (rn, wn)))
            if chain is None:
                detail = (
                    f"{pair}; the only ordering between them is SK-internal — no event pair leaving the SK "
                    f"with the fragment orders the {first} before the {last} — so excluding one without the "
                    f"other would lose the {first}→{last} ordering (§4.3 cache mutation): "
                    f"{_label(staying, staying.node_id)} leaves with the fragment"
                )
                out.append(
                    _CachePair("lost", (w, r), staying.node_id, ("cache", "e", (w, r), detail, wn.src))
                )
            else:
                via = ", ".join(f"{_label(n, n.node_id)} → {_label(p, p.node_id)}" for n, p in chain)
                detail = (
                    f"{pair}; the {first}→{last} ordering is kept by the event pair(s) {via}, which leave "
                    f"the SK with the fragment (§4.3): {_label(staying, staying.node_id)} stays fused"
                )
                ids = (w, r, *(x.node_id for pr in chain for x in pr))
                out.append(
                    _CachePair("kept", (w, r), staying.node_id, ("cache", "e", ids, detail, chain[0][0].src))
                )
    return out


class _Ordering:
    """Happens-before after the change, as far as the metadata proves it: stream order between
    consecutive nodes of one stream, and notify → wait of every event pair whose both sides are in F
    (they leave the SK and stay real events). Event pairs left inside an SK are SK-internal, so they
    are not counted on (conservative)."""

    def __init__(
        self, nodes: tuple[FNode, ...], members: set[int], pindex: dict[tuple[int, str], list[FNode]]
    ) -> None:
        self.succ: dict[int, list[tuple[FNode, FNode | None]]] = {}
        by_stream: dict[int | None, list[FNode]] = {}
        for n in sorted(nodes, key=lambda n: n.position):
            by_stream.setdefault(n.stream_id, []).append(n)
        for seq in by_stream.values():
            for a, b in zip(seq, seq[1:], strict=False):
                self.succ.setdefault(a.node_id, []).append((b, None))
        for n in nodes:
            if n.event_type in NOTIFY_TYPES and n.node_id in members:
                for p in partners(nodes, n, index=pindex):
                    if p.event_type in WAIT_TYPES and p.node_id in members:
                        self.succ.setdefault(n.node_id, []).append((p, n))

    def chain(self, first: FNode, last: FNode) -> list[tuple[FNode, FNode]] | None:
        """The event pairs (notify, wait) on one path ``first`` → ``last``, or None without a path."""
        prev: dict[int, tuple[int, FNode | None]] = {first.node_id: (first.node_id, None)}
        queue = deque([first])
        by: dict[int, FNode] = {first.node_id: first}
        while queue:
            cur = queue.popleft()
            if cur.node_id == last.node_id:
                pairs: list[tuple[FNode, FNode]] = []
                at = cur.node_id
                while at != first.node_id:
                    back, notify = prev[at]
                    if notify is not None:
                        pairs.append((notify, by[at]))
                    at = back
                return pairs[::-1]
            for nxt, notify in self.succ.get(cur.node_id, ()):
                if nxt.node_id not in prev:
                    prev[nxt.node_id] = (cur.node_id, notify)
                    by[nxt.node_id] = nxt
                    queue.append(nxt)
        return None


def _fill_between(inp: FragmentInput, members: set[int], record: _Recorder) -> bool:
    """(b) collateral: every node whose statement lies between F's first and last statement.

    With source lines the span is in source order; nodes without a line (compiler-inserted events,
    unmapped kernels) are placed by their fused-node position between F's first and last member
    (conservative: what cannot be placed outside the span is taken along)."""
    lines = inp.lines
    placed = [lines[i] for i in members if i in lines]
    pos = [n.position for n in inp.nodes if n.node_id in members]
    p_lo, p_hi = min(pos), max(pos)
    extra: list[int] = []
    if len(placed) >= 2:
        lo, hi = min(placed), max(placed)
        for n in inp.nodes:
            if n.node_id in members:
                continue
            ln = lines.get(n.node_id)
            if (ln is not None and lo <= ln <= hi) or (ln is None and p_lo < n.position < p_hi):
                extra.append(n.node_id)
        what = f"source lines {lo}..{hi}"
        if any(i not in lines for i in extra):
            what += f"; nodes without a line by fused-node position {p_lo}..{p_hi}"
    else:
        extra = [n.node_id for n in inp.nodes if n.node_id not in members and p_lo < n.position < p_hi]
        what = f"fused-node positions {p_lo}..{p_hi} (no source lines)"
    if not extra:
        return False
    detail = f"statements between the fragment's first and last statement ({what}) are collateral"
    return record("source", "b", [*extra], detail, None)


# ------------------------------------------------------------------------------ SK view adapter


def fnodes_of(inst: SkInstance) -> tuple[FNode, ...]:
    """The SK's fused nodes as :class:`FNode` records, made once per SK (kept in ``inst.derived``).

    Built positionally through :func:`frozen_builder` (FNode's field order): the frozen ``__init__``
    set each of the nine fields through ``object.__setattr__`` (2,500 nodes: 4.8 -> 1.5 ms)."""
    return made_once(inst.derived, "fnodes", lambda: _fnodes_of(inst))


def _fnodes_of(inst: SkInstance) -> tuple[FNode, ...]:
    """:func:`fnodes_of`, made."""
    from skdbg.parsers.bulk import frozen_builder

    new = frozen_builder(FNode)
    out = []
    for n in inst.nodes:
        nd = n.node
        kind = nd.kind
        et = nd.event_type
        if kind == "memory_write":
            et = "MemoryWrite"
        elif kind == "memory_wait":
            et = "MemoryWait"
        elif kind == "kernel" or kind == "default":
            et = None
        # (node_id, position, kind, stream_id, event_type, event_id, func_name, collective, src)
        out.append(
            new(
                nd.node_id,
                n.position,
                kind,
                nd.stream_id,
                et,
                nd.event_id,
                nd.func_name,
                n.is_collective,
                n.src,
            )
        )
    return tuple(out)


def _task_node(inst: SkInstance, index: int, node_id: int | None) -> int | None:
    if node_id is not None:
        return node_id
    return inst.child(index).node_id


_T = TypeVar("_T", bound="_Typed")


class _Typed(Protocol):
    @property
    def type(self) -> str: ...


def func_neighbours(queue: Sequence[_T]) -> tuple[list[_T | None], list[_T | None]]:
    """For every slot of ``queue``: the nearest FUNC task before it and the nearest one after it.

    Why one pass each way: a barrier's neighbours were searched by slicing the queue at every SYNC,
    quadratic in the queue (17 ms on a 2,500-task queue with a SYNC after every FUNC)."""
    before: list[_T | None] = []
    last: _T | None = None
    for t in queue:
        before.append(last)
        if t.type == "FUNC":
            last = t
    after: list[_T | None] = [None] * len(queue)
    last = None
    for i in range(len(queue) - 1, -1, -1):
        after[i] = last
        if queue[i].type == "FUNC":
            last = queue[i]
    return before, after


def barrier_groups_of(inst: SkInstance) -> tuple[BarrierGroup, ...]:
    """(c) groups: each ALL_SYNC SYNC task joins the FUNCs around it in its queue (and the node it
    belongs to); ``syncAllNodes`` and ``SYNCALL_OP_DROP`` break infos join their listed nodes. Made
    once per SK (kept in ``inst.derived``)."""
    return made_once(inst.derived, "barrier_groups", lambda: _barrier_groups_of(inst))


def _barrier_groups_of(inst: SkInstance) -> tuple[BarrierGroup, ...]:
    """:func:`barrier_groups_of`, made."""
    ids = {n.node_id for n in inst.nodes}
    groups: list[BarrierGroup] = []
    for qname in ("aic", "aiv"):
        q = inst.queue(qname)
        if not any(t.type == "SYNC" and t.args == ALL_SYNC for t in q):
            continue
        before, after = func_neighbours(q)
        for i, t in enumerate(q):
            if t.type != "SYNC" or t.args != ALL_SYNC:
                continue
            members: set[int] = set()
            prev, nxt = before[i], after[i]
            for x in (prev, nxt):
                if x is not None:
                    nid = _task_node(inst, x.index, x.node_id)
                    if nid is not None:
                        members.add(nid)
            own = _task_node(inst, t.index, t.node_id)
            if own is not None:
                members.add(own)
            members &= ids
            if members:
                detail = (
                    f"ALL_SYNC barrier ({qname.upper()} queue slot {t.slot}, node index {t.index}) "
                    f"between nodeIds {sorted(members)}: the barrier group moves as a unit"
                )
                debug = prev is not None and bool((prev.debug_options or 0) & DEBUG_SYNC_ALL_BIT)
                groups.append(BarrierGroup(frozenset(members), "ALL_SYNC", detail, t.src, debug))
    infos = []
    for snap in inst.scope_snapshots():
        if snap.break_info is not None:
            infos.append(snap.break_info)
    fs = inst.fused_scope
    if fs is not None and fs.break_info is not None:
        infos.append(fs.break_info)
    for bi in infos:
        listed: set[int] = set(bi.sync_all_nodes or ())
        origin = "syncAllNodes"
        if bi.break_reason == "SYNCALL_OP_DROP":
            origin = "SYNCALL_OP_DROP"
            if bi.trigger_node is not None:
                listed.add(bi.trigger_node)
        members = listed & ids
        if members and (bi.sync_all_nodes or origin == "SYNCALL_OP_DROP"):
            detail = f"{origin} ({bi.raw.strip()}) joins nodeIds {sorted(members)}: the barrier group moves as a unit"
            groups.append(BarrierGroup(frozenset(members), origin, detail, bi.src))
    return tuple(groups)


def dcci_nodes_of(inst: SkInstance) -> dict[int, Source | None]:
    """nodeIds whose FUNC task carries a DCCI debug bit (0x4/0x8/0x20) → the task's citation."""
    out: dict[int, Source | None] = {}
    for t in inst.tasks:
        if t.type == "FUNC" and t.debug_options is not None and t.debug_options & DCCI_BITS:
            nid = _task_node(inst, t.index, t.node_id)
            if nid is not None:
                out.setdefault(nid, t.src)
    return out


def fragment_input(
    inst: SkInstance,
    child: int,
    *,
    cache_writers: Mapping[int, tuple[int, ...]] | None = None,
    lines: Mapping[int, int] | None = None,
) -> FragmentInput:
    """Gather the fixpoint's inputs from one SK instance (+ run.json cache_writers, source lines).

    ALL_SYNC barriers that ``debug_sync_all`` inserted after a child (its task carries bit 0x2) are
    a diagnostic artefact (F9), absent from the clean candidate: they are set aside, not used."""
    groups = barrier_groups_of(inst)
    return FragmentInput(
        nodes=fnodes_of(inst),
        child=child,
        barrier_groups=tuple(g for g in groups if not g.debug),
        ignored_barriers=tuple(g for g in groups if g.debug),
        cache_writers=dict(cache_writers or {}),
        dcci=dcci_nodes_of(inst),
        lines=dict(lines or {}),
    )


__all__ = [
    "ALL_SYNC",
    "DCCI_BITS",
    "DEBUG_SYNC_ALL_BIT",
    "BarrierGroup",
    "Edge",
    "FNode",
    "Fragment",
    "FragmentInput",
    "attached_kernel",
    "barrier_groups_of",
    "compute_fragment",
    "dcci_nodes_of",
    "fnodes_of",
    "fragment_input",
    "partners",
]
