"""Hang triage as a wait-for graph (triage.md §7 X5, §3.9 D2, §3.3 SYNC kinds, §3.6 bystanders).

Why a graph: a hang leaves no faulting child, only cores parked in SK-entry code. What they wait
for is a relation — core c is blocked at an EVENT_WAIT / a waiting SYNC, that wait needs a notifier
(the EVENT_NOTIFY of the same event, the SET of the other core type, every core at a SyncAll), and
that notifier sits in some queue or stream behind something else. Naming the hang is then a graph
question (a missing or unreachable notifier, a cycle, a barrier whose participant count cannot be
met), answered with networkx (``simple_cycles``, ``has_path``) rather than hand-written searches.

Edges point from the waiter to what it waits on:

* ``blocked_at`` — core → its first blocking task after its last finished FUNC (§7 X5);
* ``event`` — EVENT_WAIT → every EVENT_NOTIFY of the same eventId (sk_fused_nodes.log) or, without
  fused nodes, of the same GM flag address (task ``args``, artifacts.md §3.9);
* ``sync`` — SYNC wait AIC→AIV (5) / AIV→AIC (6) → the matching SET (3 / 4) in the other queue, or
  the cores of the other type when that queue has no SET;
* ``barrier`` — ALL_SYNC (0) → every reported core that is blocked elsewhere (it must arrive too);
* ``queue_order`` — a notifier → a blocked core whose queue holds it *after* the core's blocked slot
  (that core must get past its wait first);
* ``stream_order`` — an event task → the nearest earlier EVENT_WAIT of its own stream (streams run in
  order, nodeIdxInStream).

Findings (each cites the task-queue / fused-node lines it rests on, rule X5):
``circular_wait`` (a cycle spanning ≥ 2 streams, or ≥ 2 cores), ``unmatched_wait`` (a blocking
wait whose notifier exists nowhere, sits behind the waiter itself, or already ran without releasing
it), ``syncall_mismatch`` (the SyncAll's participant count ≠ the child's core count or the cores
that reached it). Kind ``none``: bystanders, but no blocking edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from skdbg.parsers.common import Source
from skdbg.parsers.device_args import Task as DaTask
from skdbg.triage.context import TriageContext
from skdbg.triage.model import EvidenceItem
from skdbg.triage.skview import SkInstance, SkNode, SkTask

if (
    TYPE_CHECKING
):  # networkx is imported where a graph is built: an analysis without bystanders never pays for it
    import networkx as nx

#: SYNC args (SkCoreSyncType, §3.3)
ALL_SYNC, SET_AIC_TO_AIV, SET_AIV_TO_AIC, WAIT_AIC_TO_AIV, WAIT_AIV_TO_AIC = 0, 3, 4, 5, 6
WAIT_SYNC_KINDS = {ALL_SYNC: "ALL_SYNC", WAIT_AIC_TO_AIV: "wait AIC→AIV", WAIT_AIV_TO_AIC: "wait AIV→AIC"}
#: a SYNC wait kind → (the queue that must set it, the SET kind it pairs with)
_PARTNER = {WAIT_AIC_TO_AIV: ("aic", SET_AIC_TO_AIV), WAIT_AIV_TO_AIC: ("aiv", SET_AIV_TO_AIC)}
_SET_NAME = {SET_AIC_TO_AIV: "SET_AIC_TO_AIV", SET_AIV_TO_AIC: "SET_AIV_TO_AIC"}
OP_FINISHED = 3

FINDING_KINDS = ("circular_wait", "unmatched_wait", "syncall_mismatch")


# ------------------------------------------------------------------------------------------ data


@dataclass(frozen=True, slots=True)
class Blocked:
    """One bystander core and where it stopped: its first blocking task (None: nothing blocks)."""

    core_id: int
    queue: str  # aic | aiv
    task: SkTask | None
    finished: int | None = None  # its last finished FUNC task index (T1: context, never a suspect)


@dataclass(frozen=True, slots=True)
class CounterRow:
    """One op_trace counter row (A18): any core's trace state, exception core or not."""

    core_id: int
    op_state: int
    index: int
    src: Source


@dataclass(frozen=True, slots=True)
class WaitNode:
    """A node: a core, a task (wait / notify / SYNC), or a notifier that is nowhere.

    ``lane``: where it runs — ``core 24 (AIC)`` for a core, ``stream 1`` for an event task whose
    stream is known, ``AIC queue`` otherwise. ``cite``: ``file:line`` of the line that shows it.
    """

    id: str
    kind: str  # core | wait | notify | sync | barrier | missing | queue
    lane: str
    label: str
    cite: str | None = None
    style: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "lane": self.lane, "label": self.label, "cite": self.cite}


@dataclass(frozen=True, slots=True)
class WaitEdge:
    """``src`` waits on ``dst`` (``kind`` above); ``cite`` the lines the edge is read from."""

    src: str
    dst: str
    kind: str
    label: str = ""
    cite: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "kind": self.kind,
            "label": self.label,
            "cite": list(self.cite),
        }


@dataclass(frozen=True, slots=True)
class WaitFinding:
    """One named hang cause: ``kind`` ∈ :data:`FINDING_KINDS`; ``across`` cores | streams (cycles)."""

    kind: str
    detail: str
    across: str | None = None
    cores: tuple[int, ...] = ()
    nodes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ("X5",)
    evidence: tuple[EvidenceItem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "across": self.across,
            "detail": self.detail,
            "cores": list(self.cores),
            "nodes": list(self.nodes),
            "rules": list(self.rules),
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class WaitFor:
    """The wait-for graph of one hang and what it names (``kind``: the first finding, or ``none``)."""

    nodes: tuple[WaitNode, ...] = ()
    edges: tuple[WaitEdge, ...] = ()
    findings: tuple[WaitFinding, ...] = ()

    @property
    def kind(self) -> str:
        return self.findings[0].kind if self.findings else "none"

    def finding(self, kind: str) -> WaitFinding | None:
        return next((f for f in self.findings if f.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
            "findings": [f.to_json() for f in self.findings],
        }

    def lines(self) -> list[str]:
        """The graph as text: one ``waiter --kind--> target   (why)`` line per edge, each node by its
        label with its lane (core, stream or queue) in brackets."""
        name = {n.id: n.label if n.lane == n.label else f"[{n.lane}] {n.label}" for n in self.nodes}
        out = []
        for e in self.edges:
            what = f"   ({e.label})" if e.label else ""
            out.append(f"{name.get(e.src, e.src)} --{e.kind}--> {name.get(e.dst, e.dst)}{what}")
        return out


def drawable(wf: WaitFor) -> dict[str, list[dict[str, str]]]:
    """Plain dicts for a generic lane-graph renderer (``nodes``: id, lane, label, style; ``edges``:
    src, dst, kind, style, label). Nodes in a cycle or a finding get style ``cycle`` / ``blocked``."""
    hot: dict[str, str] = {}
    for f in wf.findings:
        for n in f.nodes:
            hot.setdefault(n, "cycle" if f.kind == "circular_wait" else "blocked")
    nodes = [
        {"id": n.id, "lane": n.lane, "label": n.label, "style": hot.get(n.id, n.style)} for n in wf.nodes
    ]
    style = {"event": "event", "sync": "barrier", "barrier": "barrier", "blocked_at": "blocked"}
    edges = [
        {"src": e.src, "dst": e.dst, "kind": e.kind, "style": style.get(e.kind, "dim"), "label": e.label}
        for e in wf.edges
    ]
    return {"nodes": nodes, "edges": edges}


def to_digraph(wf: WaitFor) -> nx.DiGraph[str]:
    """The graph as a networkx DiGraph with ``lane``/``label``/``style``/``order`` node attributes and
    ``kind``/``style``/``label`` edge attributes (what a lane-graph renderer reads)."""
    d = drawable(wf)
    import networkx as nx

    g: nx.DiGraph[str] = nx.DiGraph()
    for i, n in enumerate(d["nodes"]):
        g.add_node(n["id"], lane=n["lane"], label=n["label"], style=n["style"], order=i)
    for e in d["edges"]:
        g.add_edge(e["src"], e["dst"], kind=e["kind"], style=e["style"], label=e["label"])
    return g


# ------------------------------------------------------------------------------------------ building


def _is_wait(t: SkTask) -> bool:
    return t.type == "EVENT_WAIT" or (t.type == "SYNC" and t.args in WAIT_SYNC_KINDS)


def first_blocking(queue: Sequence[SkTask], after_func: int | None) -> SkTask | None:
    """The first blocking task (EVENT_WAIT, or SYNC with a wait kind 0/5/6) after FUNC ``after_func``
    in ``queue`` (slot order); ``None`` = from the queue head (state 1 / no state). §7 X5."""
    start = 0
    if after_func is not None:
        slots = [t.slot for t in queue if t.index == after_func and t.type == "FUNC"]
        if not slots:
            return None
        start = slots[0] + 1
    return next((t for t in queue if t.slot >= start and _is_wait(t)), None)


def _digraph() -> nx.DiGraph[str]:
    import networkx as nx

    return nx.DiGraph()


@dataclass
class _Graph:
    """Accumulates nodes/edges/evidence while the graph is read from the SK's queues and streams."""

    ctx: TriageContext
    inst: SkInstance
    blocked: Sequence[Blocked]
    counters: Sequence[CounterRow]
    g: nx.DiGraph[str] = field(default_factory=_digraph)
    nodes: dict[str, WaitNode] = field(default_factory=dict)
    edges: dict[tuple[str, str], WaitEdge] = field(default_factory=dict)
    items: dict[str, EvidenceItem] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)  # notifiers every core running them is already past
    _by_id: dict[int, SkNode] | None = None
    _by_pos: dict[int, SkNode] = field(default_factory=dict)

    # -------------------------------------------------------------- citing

    def _da_task(self, t: SkTask) -> DaTask | None:
        """The sk_device_args.log row of the same queue slot (it has a line; the JSON only a path)."""
        da = self.inst.device_args
        if da is None:
            return None
        q = da.queue(t.queue.upper())
        if q is None:
            return None
        return next((x for x in q.tasks if x.position == t.slot and x.idx == t.index), None)

    def cite_task(self, t: SkTask, core: int | None = None) -> str | None:
        da = self._da_task(t)
        src = da.src if da is not None else t.src
        origin = "device_args" if da is not None else t.origin
        item = self.ctx.cite(
            "L4",
            origin,
            src,
            excerpt=None if da is not None else _task_text(t),
            rule="X5",
            core_id=core,
            task_index=t.index,
        )
        self.items.setdefault(item.where, item)
        return item.where

    def cite_src(self, src: Source | None, source: str, core: int | None = None) -> str | None:
        if src is None:
            return None
        item = self.ctx.cite("L4", source, src, rule="X5", core_id=core)
        self.items.setdefault(item.where, item)
        return item.where

    # -------------------------------------------------------------- facts of a task

    def event_node(self, t: SkTask) -> SkNode | None:
        """The fused-node record of an event task (eventId, stream, nodeIdxInStream): by its nodeId
        (sk_device_args.log), else — only when no wait node was reordered (T6) — the event node at
        fused position = task index."""
        if self._by_id is None:
            self._by_id = {n.node_id: n for n in self.inst.nodes}
            self._by_pos = {n.position: n for n in self.inst.nodes}
        nid = t.node_id if t.node_id is not None else self.inst.index_to_node_id.get(t.index)
        if nid is not None:
            return self._by_id.get(nid)
        if self.inst.device_args is not None or self.inst.reordered:
            return None
        n = self._by_pos.get(t.index)
        return n if n is not None and n.node.event_id is not None else None

    def event_key(self, t: SkTask) -> tuple[str, int | None]:
        n = self.event_node(t)
        if n is not None and n.node.event_id is not None:
            return ("eventId", n.node.event_id)
        return ("flag", t.args)

    def stream(self, t: SkTask) -> int | None:
        n = self.event_node(t)
        return None if n is None else n.stream_id

    def blk(self, t: SkTask) -> int | None:
        """The task's blk / numBlocks (SYNC: the active core count; FUNC: the child's cores)."""
        da = self._da_task(t)
        if da is not None:
            return int(da.blk)
        tq = self.inst.tq_scope
        if tq is not None:
            for q in tq.queues:
                for x in q.tasks:
                    if x.queue == t.queue and x.position == t.slot:
                        return x.num_blocks
        return None

    # -------------------------------------------------------------- nodes

    def add(self, node: WaitNode) -> str:
        if node.id not in self.nodes:
            self.nodes[node.id] = node
            self.g.add_node(node.id)
        return node.id

    def edge(self, src: str, dst: str, kind: str, label: str = "", cite: Iterable[str | None] = ()) -> None:
        if (src, dst) in self.edges:
            return
        self.edges[(src, dst)] = WaitEdge(src, dst, kind, label, tuple(c for c in cite if c))
        self.g.add_edge(src, dst, kind=kind)

    def task_id(self, t: SkTask) -> str:
        return f"sync:{t.queue}:{t.slot}" if t.type == "SYNC" else f"task:{t.index}"

    def task_node(self, t: SkTask) -> str:
        tid = self.task_id(t)
        if tid in self.nodes:
            return tid
        s = self.stream(t) if t.type.startswith("EVENT") else None
        lane = f"stream {s}" if s is not None else f"{t.queue.upper()} queue"
        if t.type == "SYNC":
            kind = "barrier" if t.args == ALL_SYNC else "sync"
            name = WAIT_SYNC_KINDS.get(t.args or 0) or _SET_NAME.get(t.args or 0) or f"args={t.args}"
            label = f"task {t.index} SYNC {name} ({t.queue.upper()} slot {t.slot})"
        else:
            kind = "wait" if t.type == "EVENT_WAIT" else "notify"
            key, val = self.event_key(t)
            ev = f"eventId={val}" if key == "eventId" else f"flag=0x{val or 0:x}"
            label = f"task {t.index} {t.type} {ev}"
        return self.add(WaitNode(tid, kind, lane, label, self.cite_task(t)))

    def core_node(self, b: Blocked) -> str:
        return self.add(
            WaitNode(
                f"core:{b.core_id}",
                "core",
                f"core {b.core_id} ({b.queue.upper()})",
                f"core {b.core_id} ({b.queue.upper()})",
            )
        )

    # -------------------------------------------------------------- edges

    def queue_order(self, notifier: str, tasks: Sequence[SkTask]) -> None:
        """notifier → the blocked cores whose queue holds it after their blocked slot; notifiers every
        such core already passed are marked as run."""
        behind = False
        passed = False
        for b in self.blocked:
            if b.task is None:
                continue
            for t in tasks:
                if t.queue != b.queue:
                    continue
                if t.slot > b.task.slot:
                    behind = True
                    self.edge(
                        notifier,
                        self.core_node(b),
                        "queue_order",
                        f"{b.queue.upper()} slot {t.slot} is after core {b.core_id}'s blocked slot "
                        f"{b.task.slot}",
                        (self.cite_task(t), self.cite_task(b.task)),
                    )
                elif t.slot < b.task.slot:
                    passed = True
        if passed and not behind:
            self.ran.add(notifier)

    def stream_order(self, t: SkTask, tid: str, todo: list[SkTask]) -> None:
        """An event task waits for the nearest earlier EVENT_WAIT of its own stream (streams are ordered)."""
        n = self.event_node(t)
        if n is None or n.stream_id is None:
            return
        pos = _stream_pos(n)
        prev: tuple[int, SkTask, SkNode] | None = None
        for w in self.inst.tasks:
            if w.type != "EVENT_WAIT" or w.index == t.index:
                continue
            wn = self.event_node(w)
            if wn is None or wn.stream_id != n.stream_id or _stream_pos(wn) >= pos:
                continue
            if prev is None or _stream_pos(wn) > prev[0]:
                prev = (_stream_pos(wn), w, wn)
        if prev is None:
            return
        _pos, w, wn = prev
        wid = self.task_node(w)
        self.edge(
            tid,
            wid,
            "stream_order",
            f"stream {n.stream_id}: runs after the wait task {w.index}",
            (self.cite_src(n.src, "fused_nodes"), self.cite_src(wn.src, "fused_nodes")),
        )
        todo.append(w)

    def event_wait(self, t: SkTask, todo: list[SkTask]) -> None:
        wid = self.task_node(t)
        key = self.event_key(t)
        notifiers = [x for x in self.inst.tasks if x.type == "EVENT_NOTIFY" and self.event_key(x) == key]
        wn = self.event_node(t)
        wcite = self.cite_src(wn.src, "fused_nodes") if wn is not None else None
        if not notifiers:
            what = f"eventId={key[1]}" if key[0] == "eventId" else f"flag=0x{key[1] or 0:x}"
            mid = self.add(
                WaitNode(
                    f"missing:{key[0]}:{key[1]}",
                    "missing",
                    "nowhere",
                    f"EVENT_NOTIFY {what}: in no queue or stream of this SK",
                )
            )
            self.edge(wid, mid, "event", f"no EVENT_NOTIFY with {what}", (self.cite_task(t), wcite))
            return
        by_index: dict[int, list[SkTask]] = {}
        for x in notifiers:
            by_index.setdefault(x.index, []).append(x)
        for _k, xs in sorted(by_index.items()):
            nid = self.task_node(xs[0])
            xn = self.event_node(xs[0])
            self.edge(
                wid,
                nid,
                "event",
                "same eventId" if key[0] == "eventId" else "same GM flag",
                (self.cite_task(xs[0]), self.cite_src(xn.src, "fused_nodes") if xn else None),
            )
            self.queue_order(nid, xs)
            self.stream_order(xs[0], nid, todo)
        self.stream_order(t, wid, todo)

    def sync_wait(self, t: SkTask) -> None:
        sid = self.task_node(t)
        other, set_kind = _PARTNER[t.args or 0]
        mine = [x for x in self.inst.queue(t.queue) if x.type == "SYNC" and x.args == t.args]
        ordinal = next(i for i, x in enumerate(mine) if x.slot == t.slot)
        sets = [x for x in self.inst.queue(other) if x.type == "SYNC" and x.args == set_kind]
        if ordinal < len(sets):
            p = sets[ordinal]
            pid = self.task_node(p)
            self.edge(
                sid,
                pid,
                "sync",
                f"SET #{ordinal + 1} of the {other.upper()} queue",
                (self.cite_task(t), self.cite_task(p)),
            )
            self.queue_order(pid, [p])
            return
        cores = [b for b in self.blocked if b.queue == other and b.task is not None]
        why = f"the {other.upper()} queue has no {_SET_NAME[set_kind]} #{ordinal + 1}: waits on the {other.upper()} cores"
        if cores:
            for b in cores:
                self.edge(sid, self.core_node(b), "sync", why, (self.cite_task(t),))
            return
        qid = self.add(
            WaitNode(
                f"queue:{other}",
                "queue",
                f"{other.upper()} queue",
                f"{other.upper()} queue: no {_SET_NAME[set_kind]} and no reported core",
            )
        )
        self.edge(sid, qid, "sync", why, (self.cite_task(t),))

    def barrier(self, t: SkTask) -> None:
        sid = self.task_node(t)
        for b in self.blocked:
            if b.task is None or (b.task.type == "SYNC" and b.task.args == ALL_SYNC):
                continue
            self.edge(
                sid,
                self.core_node(b),
                "barrier",
                f"core {b.core_id} must reach the SyncAll too (it is blocked at task {b.task.index})",
                (self.cite_task(t), self.cite_task(b.task)),
            )

    def build(self) -> None:
        todo: list[SkTask] = []
        for b in self.blocked:
            cid = self.core_node(b)
            if b.task is None:
                continue
            self.edge(
                cid,
                self.task_node(b.task),
                "blocked_at",
                "first blocking task"
                + (
                    f" after finished task {b.finished}" if b.finished is not None else " from the queue head"
                ),
                (self.cite_task(b.task, b.core_id),),
            )
            todo.append(b.task)
        done: set[str] = set()
        while todo:
            t = todo.pop(0)
            tid = self.task_id(t)
            if tid in done:
                continue
            done.add(tid)
            if t.type == "EVENT_WAIT":
                self.event_wait(t, todo)
            elif t.type == "SYNC" and t.args in _PARTNER:
                self.sync_wait(t)
            elif t.type == "SYNC" and t.args == ALL_SYNC:
                self.barrier(t)

    # -------------------------------------------------------------- findings

    def evidence(
        self, nodes: Iterable[str], edges: Iterable[tuple[str, str]] = ()
    ) -> tuple[EvidenceItem, ...]:
        where: list[str] = []
        for n in nodes:
            c = self.nodes[n].cite if n in self.nodes else None
            if c:
                where.append(c)
        for uv in edges:
            e = self.edges.get(uv)
            if e is not None:
                where.extend(e.cite)
        return tuple(self.items[w] for w in dict.fromkeys(where) if w in self.items)

    def streams_of(self, nodes: Iterable[str]) -> set[str]:
        return {self.nodes[n].lane for n in nodes if self.nodes[n].lane.startswith("stream ")}

    def cores_of(self, nodes: Iterable[str]) -> tuple[int, ...]:
        return tuple(sorted(int(n.split(":")[1]) for n in nodes if n.startswith("core:")))

    def findings(self) -> list[WaitFinding]:
        out: list[WaitFinding] = []
        in_cycle: set[str] = set()
        # circular waits across streams: cycles of the event/stream-order subgraph over ≥ 2 streams
        ev = self.g.edge_subgraph(
            [(u, v) for (u, v), e in self.edges.items() if e.kind in ("event", "stream_order")]
        )
        seen: set[frozenset[str]] = set()
        for cyc in sorted(_cycles(ev), key=lambda c: (len(c), sorted(c))):
            streams = self.streams_of(cyc)
            if len(streams) < 2 or frozenset(cyc) in seen:
                continue
            seen.add(frozenset(cyc))
            in_cycle |= set(cyc)
            at = [b for b in self.blocked if b.task is not None and self.task_id(b.task) in cyc]
            cores = tuple(sorted({b.core_id for b in at}))
            if at:
                first = min(at, key=lambda b: b.core_id).task
                assert first is not None
                cyc = _rotate(cyc, self.task_id(first))
            path = " → ".join(self.nodes[n].label for n in [*cyc, cyc[0]])
            out.append(
                WaitFinding(
                    "circular_wait",
                    f"circular wait across {', '.join(sorted(streams))}: {path}",
                    "streams",
                    cores,
                    tuple(cyc),
                    ("X5",),
                    self.evidence(cyc, _pairs(cyc)),
                )
            )
        # circular waits across cores: cycles of the whole graph through ≥ 2 cores
        seen_cores: set[tuple[int, ...]] = set()
        for cyc in sorted(_cycles(self.g), key=lambda c: (len(c), sorted(c))):
            cores = self.cores_of(cyc)
            if len(cores) < 2 or cores in seen_cores or in_cycle & set(cyc):
                continue
            seen_cores.add(cores)
            in_cycle |= set(cyc)
            ring = _rotate(cyc, f"core:{cores[0]}")
            path = " → ".join(self.nodes[n].label for n in [*ring, ring[0]])
            out.append(
                WaitFinding(
                    "circular_wait",
                    f"circular wait across cores {list(cores)}: {path}",
                    "cores",
                    cores,
                    tuple(ring),
                    ("X5",),
                    self.evidence(ring, _pairs(ring)),
                )
            )
        out.extend(self.unmatched(in_cycle))
        out.extend(self.syncall())
        return out

    def unmatched(self, in_cycle: set[str]) -> list[WaitFinding]:
        out: list[WaitFinding] = []
        waits: dict[str, list[Blocked]] = {}
        for b in self.blocked:
            if (
                b.task is not None
                and _is_wait(b.task)
                and not (b.task.type == "SYNC" and b.task.args == ALL_SYNC)
            ):
                waits.setdefault(self.task_id(b.task), []).append(b)
        for wid, bs in waits.items():
            if wid in in_cycle:
                continue
            targets = self.out(wid, "event", "sync")
            why = self._why_unmatched(wid, bs, targets)
            if why is None:
                continue
            nodes = (*(f"core:{b.core_id}" for b in bs), wid, *targets)
            cores = tuple(sorted(b.core_id for b in bs))
            arcs = [*((f"core:{b.core_id}", wid) for b in bs), *((wid, v) for v in targets)]
            out.append(
                WaitFinding(
                    "unmatched_wait",
                    f"{self.nodes[wid].label}: {why}",
                    None,
                    cores,
                    tuple(dict.fromkeys(nodes)),
                    ("X5",),
                    self.evidence(nodes, arcs),
                )
            )
        return out

    def _why_unmatched(self, wid: str, bs: Sequence[Blocked], targets: Sequence[str]) -> str | None:
        if not targets:
            return None
        mine = {f"core:{b.core_id}" for b in bs}
        reasons = []
        for v in targets:
            node = self.nodes[v]
            if node.kind in ("missing", "queue"):
                reasons.append(f"its notifier exists nowhere ({node.label})")
            elif v in self.ran:
                reasons.append(
                    f"its notifier {node.label} precedes the wait in the same queue and already ran "
                    "without releasing it (lost or mismatched notify)"
                )
            elif (after := set(self.out(v, "queue_order"))) and after <= mine:
                reasons.append(
                    f"its notifier {node.label} sits behind the waiter in the waiting core's own queue"
                )
            elif self.g.out_degree(v) > 0 and self._only_self(v, wid):
                reasons.append(f"its notifier {node.label} can only run after this wait (never reachable)")
            else:
                return None  # one notifier may still run: not unmatched
        return "; ".join(dict.fromkeys(reasons))

    def out(self, n: str, *kinds: str) -> list[str]:
        """Targets of ``n``'s edges of the given kinds (insertion order)."""
        return [v for (u, v), e in self.edges.items() if u == n and e.kind in kinds]

    def _only_self(self, v: str, wid: str) -> bool:
        """Every path out of the notifier ``v`` leads back to the wait ``wid`` (a cycle through it alone)."""
        import networkx as nx

        return all(nx.has_path(self.g, u, wid) for u in self.g.successors(v))

    def syncall(self) -> list[WaitFinding]:
        out: list[WaitFinding] = []
        at: dict[str, list[Blocked]] = {}
        for b in self.blocked:
            if b.task is not None and b.task.type == "SYNC" and b.task.args == ALL_SYNC:
                at.setdefault(self.task_id(b.task), []).append(b)
        for sid, bs in at.items():
            t = bs[0].task
            assert t is not None
            expected = self.blk(t) or None
            func = next(
                (x for x in reversed(self.inst.queue(t.queue)) if x.slot < t.slot and x.type == "FUNC"), None
            )
            child = self.blk(func) if func is not None else None
            if not child and func is not None:
                dfx = next((d for d in self.inst.dfx_entries() if d.index == func.index), None)
                if dfx is not None:
                    child = (dfx.cube_num if t.queue == "aic" else dfx.vec_num) or dfx.num_blocks
            reached_rows = {
                r.core_id
                for r in self.counters
                if func is not None and r.op_state == OP_FINISHED and r.index == func.index
            }
            reached = len(reached_rows | {b.core_id for b in bs}) if self.counters else None
            parts = []
            if expected is not None and child and expected != child:
                parts.append(
                    f"the SyncAll waits for blk={expected} cores but child task {func.index if func else '?'} "
                    f"runs on numBlocks={child}"
                )
            if expected is not None and reached is not None and reached != expected:
                parts.append(
                    f"{reached} core(s) reached it (counters OP_FINISHED {func.index if func else '?'}) "
                    f"of the blk={expected} it waits for"
                )
            if not parts:
                continue
            lane = f"{t.queue.upper()} queue"
            short = "cores"
            if expected is not None and reached is not None and reached < expected:
                short = f"{expected - reached} core(s)"
            absent = self.add(
                WaitNode(
                    f"absent:{sid}",
                    "missing",
                    lane,
                    f"{short} that never reach the SyncAll (it waits for blk={expected})",
                )
            )
            self.edge(sid, absent, "barrier", "; ".join(parts), (self.cite_task(t),))
            nodes = [*(f"core:{b.core_id}" for b in bs), sid, absent]
            ev = list(self.evidence(nodes, [(f"core:{b.core_id}", sid) for b in bs]))
            if func is not None:
                w = self.cite_task(func)
                if w is not None and self.items[w] not in ev:
                    ev.append(self.items[w])
            for r in self.counters:
                if r.core_id in reached_rows and len(ev) < 12:
                    w = self.cite_src(r.src, "plog", r.core_id)
                    if w is not None and self.items[w] not in ev:
                        ev.append(self.items[w])
            out.append(
                WaitFinding(
                    "syncall_mismatch",
                    f"{self.nodes[sid].label}: " + "; ".join(parts),
                    None,
                    tuple(sorted(b.core_id for b in bs)),
                    tuple(nodes),
                    ("X5",),
                    tuple(ev),
                )
            )
        return out


#: at most this many cycles are examined (a pathological queue must not make a hang report explode)
MAX_CYCLES = 256


def _cycles(g: nx.DiGraph[str]) -> list[list[str]]:
    """networkx's simple cycles of ``g``, the first :data:`MAX_CYCLES` of them."""
    import networkx as nx

    return list(islice(nx.simple_cycles(g), MAX_CYCLES))


def _rotate(cyc: Sequence[str], first: str) -> list[str]:
    """The cycle read from ``first`` (when it is on it), so the text starts where the reader looks."""
    i = list(cyc).index(first) if first in cyc else 0
    return [*cyc[i:], *cyc[:i]]


def _pairs(cyc: Sequence[str]) -> list[tuple[str, str]]:
    return [(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc))]


def _stream_pos(n: SkNode) -> int:
    idx = n.node.node_idx_in_stream
    return int(idx) if idx is not None else int(n.position)


def _task_text(t: SkTask) -> str:
    args = "None" if t.args is None else f"0x{t.args:x}"
    return f"{t.queue} taskInfos[{t.slot}]: nodeIndex={t.index}, type={t.type}, args={args}"


def build_wait_for(
    ctx: TriageContext,
    inst: SkInstance | None,
    blocked: Sequence[Blocked],
    counters: Sequence[CounterRow] = (),
) -> WaitFor | None:
    """The wait-for graph of the bystander cores ``blocked`` (None: no bystander, or no SK queues)."""
    if inst is None or not blocked or not inst.tasks:
        return None
    gr = _Graph(ctx, inst, blocked, counters)
    gr.build()
    findings = gr.findings()
    order = {k: i for i, k in enumerate(FINDING_KINDS)}
    findings.sort(key=lambda f: order[f.kind])
    return WaitFor(tuple(gr.nodes.values()), tuple(gr.edges.values()), tuple(findings))


__all__ = [
    "FINDING_KINDS",
    "Blocked",
    "CounterRow",
    "WaitEdge",
    "WaitFinding",
    "WaitFor",
    "WaitNode",
    "build_wait_for",
    "drawable",
    "first_blocking",
    "to_digraph",
]
