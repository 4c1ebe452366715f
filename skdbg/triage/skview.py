"""One SK instance seen through every metadata file at once (triage.md §2.2, §3.5).

Why: each artifact holds one facet of an SK — ``sk_fused_nodes.log`` the ordered children and event
nodes, ``sk_device_args.log`` the only direct task index → nodeId map, ``sk_task_queue.json`` the
scheduled tasks and their entry addresses, ``super_kernel.log`` the wait-node reorder lines (T6),
the fail-reason and scope-split logs what was cut and why. The attribution, proposal and verify
stages all need them joined on (model dir, scope id); this module does the join once and answers
"which child is task index k" with the resolution rule it used.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from skdbg import regexcode
from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import Source
from skdbg.parsers.device_args import DeviceArgsBlock, DfxEntry
from skdbg.parsers.evidence import Evidence, ModelEvidence
from skdbg.parsers.fail_reasons import FusedScope, OriginalScope, UnfusibleNode
from skdbg.parsers.fused_nodes import SkBlock
from skdbg.parsers.node_format import Node
from skdbg.parsers.scope_split import ScopeSnapshot
from skdbg.parsers.task_queue import QueueTask, TaskQueueScope
from skdbg.triage.model import ChildRef

if TYPE_CHECKING:
    from skdbg.parsers.super_kernel_log import DeferredWait

#: kernels whose op type is a collective (safety rule "collective", triage.md §4.3)
COLLECTIVE_MARKERS = (
    "allreduce",
    "all_reduce",
    "reducescatter",
    "reduce_scatter",
    "allgather",
    "all_gather",
    "alltoall",
    "all_to_all",
    "mc2",
    "hccl",
    "matmulallreduce",
    "allgathermatmul",
    "matmulreducescatter",
)
#: any of the markers inside a name (one regex search instead of a substring test per marker)
_COLLECTIVE_RE = regexcode.compile("|".join(re.escape(m) for m in COLLECTIVE_MARKERS))


@dataclass(frozen=True, slots=True)
class SkNode:
    """One node of the SK in ``sk_fused_nodes.log`` order (kernel or event/memory node)."""

    position: int  # 0-based position in the fused-node list
    node: Node
    src: Source

    @property
    def node_id(self) -> int:
        return self.node.node_id

    @property
    def is_kernel(self) -> bool:
        return self.node.is_kernel

    @property
    def stream_id(self) -> int | None:
        return self.node.stream_id

    @property
    def func_name(self) -> str | None:
        return self.node.func_name

    @property
    def is_collective(self) -> bool:
        if not self.node.is_kernel:
            return False
        name = (self.node.func_name or "").lower().replace("-", "")
        return _COLLECTIVE_RE.search(name) is not None


@dataclass(frozen=True, slots=True)
class SkTask:
    """One scheduled task of the SK (one row of either queue), from the task queue or device args."""

    index: int  # nodeIndex / idx: the task index the handler calls node[k]
    queue: str  # "aic" | "aiv"
    slot: int  # position in its queue
    type: str  # FUNC | SYNC | PRELOAD | EVENT_NOTIFY | EVENT_WAIT | EVENT_RESET
    args: int | None
    debug_options: int | None
    entries: tuple[int, ...]
    node_id: int | None  # device args only
    src: Source
    origin: str  # "task_queue" | "device_args"


@dataclass(frozen=True)
class _NodeIndex:
    """An SK's nodes as child resolution looks them up: the kernels in order, the first node at each
    position and of each nodeId, the first kernel at each position (its place among the kernels) and
    the places of the kernels of each funcName, ascending.

    Why: resolving a task walked the nodes for its position and the kernels for its funcName and
    occurrence, once per task: 5,000 tasks over 2,500 nodes took ~0.5 s of an analysis where the
    task queue alone names the children (no sk_device_args.log)."""

    kernels: list[SkNode]
    first_at: dict[int, SkNode]
    first_with_id: dict[int, SkNode]
    first_kernel_at: dict[int, int]
    kernels_named: dict[str | None, list[int]]

    @classmethod
    def of(cls, nodes: list[SkNode]) -> _NodeIndex:
        kernels = [n for n in nodes if n.node.is_kernel]
        # the first of each position wins: the later ones are written first (reversed order)
        first_at = {n.position: n for n in reversed(nodes)}
        first_with_id = {n.node.node_id: n for n in reversed(nodes)}
        first_kernel_at = {kernels[i].position: i for i in range(len(kernels) - 1, -1, -1)}
        kernels_named: dict[str | None, list[int]] = {}
        for i, n in enumerate(kernels):
            kernels_named.setdefault(n.node.func_name, []).append(i)
        return cls(kernels, first_at, first_with_id, first_kernel_at, kernels_named)


@dataclass
class SkInstance:
    """One SK (model dir, scope id) with every metadata facet that names it.

    ``block`` may be None when only the task queue / device args know the scope (then children
    come from device args nodeIds alone). ``reordered`` is True when ``super_kernel.log`` printed
    a ``task reorder: place deferred wait node`` line (T6: task index ≠ fused-node position).
    """

    model: ModelEvidence
    scope_id: int
    block: SkBlock | None = None
    device_args: DeviceArgsBlock | None = None
    tq_scope: TaskQueueScope | None = None
    deferred_waits: tuple[DeferredWait, ...] = ()
    _child_cache: dict[tuple[int, str | None], ChildRef] = field(default_factory=dict, repr=False)
    #: what later stages derive from this SK alone, made once (:mod:`skdbg.triage.fragment`'s inputs)
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ identity

    @property
    def model_id(self) -> str | None:
        return self.model.model.model_id

    @property
    def model_label(self) -> str:
        return self.model.model.label

    @property
    def sk_name(self) -> str | None:
        if self.block is not None:
            return self.block.sk_func_name
        if self.device_args is not None:
            return self.device_args.sk_func_name
        return None

    @property
    def scope_name(self) -> str | None:
        if self.block is not None and self.block.name.scope_name is not None:
            return self.block.name.scope_name
        if self.device_args is not None and self.device_args.name.scope_name is not None:
            return self.device_args.name.scope_name
        fs = self.original_scope
        return fs.scope_names if fs is not None else None

    @property
    def node_count(self) -> int | None:
        """``Node Count`` of the fused-node header (F6 compares it with the DFX ``nodeCnt``)."""
        return self.block.node_count if self.block is not None else None

    @property
    def header_node_cnt(self) -> int | None:
        """``nodeCnt`` of the uploaded SkHeaderInfo (sk_device_args.log)."""
        if self.device_args is not None and self.device_args.header is not None:
            return self.device_args.header.node_cnt
        return None

    @property
    def reordered(self) -> bool:
        return bool(self.deferred_waits)

    # ------------------------------------------------------------------ nodes

    @cached_property
    def nodes(self) -> list[SkNode]:
        if self.block is None:
            return []
        new = _new_node  # SkNode(position, node, src) without the frozen __init__ (2,500 nodes)
        out = []
        for i, fn in enumerate(self.block.nodes):
            pos = fn.position if fn.position is not None else i
            out.append(new(pos, fn.node, fn.src))
        return out

    @property
    def kernels(self) -> list[SkNode]:
        return list(self._node_index.kernels)

    @cached_property
    def _node_index(self) -> _NodeIndex:
        """The lookups child resolution makes per task, made once (:class:`_NodeIndex`)."""
        return _NodeIndex.of(self.nodes)

    def node_by_id(self, node_id: int) -> SkNode | None:
        """The first node with this nodeId (None: none)."""
        return self._node_index.first_with_id.get(node_id)

    def streams(self) -> list[int]:
        seen: dict[int, None] = {}
        for n in self.nodes:
            sid = n.node.stream_id  # the node's own field: no property call per node
            if sid is not None:
                seen.setdefault(sid, None)
        return list(seen)

    def occurrence_of(self, node: SkNode) -> int | None:
        """n-th kernel child with this funcName in the SK (stable across processes, §3.5): how many
        kernels with ``node``'s funcName come before the first kernel at ``node``'s position."""
        if not node.is_kernel:
            return None
        index = self._node_index
        at = index.first_kernel_at.get(node.position)
        if at is None:
            return None
        return bisect_left(index.kernels_named.get(node.func_name, ()), at)

    # ------------------------------------------------------------------ tasks

    @cached_property
    def tasks(self) -> list[SkTask]:
        """Every task of both queues; the task queue JSON wins, device args fill in nodeIds."""
        out: list[SkTask] = []
        node_ids = self.index_to_node_id
        if self.tq_scope is not None:
            node_id_of = node_ids.get
            for q in self.tq_scope.queues:
                out.extend([_from_tq(t, node_id_of(t.node_index)) for t in q.tasks])
        elif self.device_args is not None:
            for dq in self.device_args.queues:
                for dt in dq.tasks:
                    out.append(
                        SkTask(
                            index=dt.idx,
                            queue=dq.name.lower(),
                            slot=dt.position,
                            type=dt.type,
                            args=dt.args,
                            debug_options=dt.debug_options,
                            entries=tuple(dt.entries),
                            node_id=dt.node_id if dt.node_id_raw is not None else None,
                            src=dt.src,
                            origin="device_args",
                        )
                    )
        return out

    def tasks_of(self, index: int) -> list[SkTask]:
        return [t for t in self.tasks if t.index == index]

    def queue(self, name: str) -> list[SkTask]:
        """One queue in slot order (``aic``/``aiv``)."""
        return sorted((t for t in self.tasks if t.queue == name), key=lambda t: t.slot)

    @property
    def func_indices(self) -> set[int]:
        return {t.index for t in self.tasks if t.type == "FUNC"}

    @property
    def has_schedule(self) -> bool:
        """The task queue or device args cover this SK (C3/C5 "task queue covers this SK")."""
        return self.tq_scope is not None or self.device_args is not None

    @property
    def has_metadata(self) -> bool:
        """Any fused-node or schedule metadata covers this SK (C5)."""
        return self.block is not None or self.has_schedule

    @cached_property
    def index_to_node_id(self) -> dict[int, int]:
        """Direct task index → nodeId from sk_device_args.log (§3.5 rule 1)."""
        if self.device_args is None:
            return {}
        return {k: v for k, v in self.device_args.task_index_to_node_id().items() if v is not None}

    def dfx_entries(self) -> list[DfxEntry]:
        return list(self.device_args.dfx) if self.device_args is not None else []

    # ------------------------------------------------------------------ child identity (§3.5)

    def child(self, task_index: int, origin_name: str | None = None) -> ChildRef:
        """Resolve task index ``k`` to a child identity, recording the rule used (§3.5, T6).

        1. sk_device_args.log ``idx=k, nodeId=…`` (``identity="direct"``);
        2. the DFX origin name of node k: the unique kernel child with that funcName (``by_name``);
           several → the one at position k only when no wait-node reorder happened (``by_position``),
           else ``ambiguous``;
        3. no origin name: position k when no reorder happened (``by_position``), else ``unresolved``.
        """
        key = (task_index, origin_name)
        hit = self._child_cache.get(key)
        if hit is None:
            hit = self._resolve(task_index, origin_name)
            self._child_cache[key] = hit
        return hit

    def _ref(
        self, task_index: int, node: SkNode | None, identity: str, node_id: int | None = None
    ) -> ChildRef:
        n = node.node if node is not None else None
        return ChildRef(
            task_index=task_index,
            node_id=n.node_id if n is not None else node_id,
            func_name=n.func_name if n is not None else None,
            kernel_type=n.kernel_type if n is not None else None,
            stream_id=n.stream_id if n is not None else None,
            scope_id=self.scope_id,
            scope_name=self.scope_name,
            model=self.model_id,
            occurrence=self.occurrence_of(node) if node is not None else None,
            position=node.position if node is not None else None,
            identity=identity,
        )

    def _resolve(self, k: int, origin_name: str | None) -> ChildRef:
        direct = self.index_to_node_id.get(k)
        if direct is not None:
            return self._ref(k, self.node_by_id(direct), "direct", direct)
        index = self._node_index
        by_pos = index.first_at.get(k)
        if origin_name:
            named = [index.kernels[i] for i in index.kernels_named.get(origin_name, ())]
            if len(named) == 1:
                return self._ref(k, named[0], "by_name")
            if len(named) > 1:
                if not self.reordered and by_pos is not None and by_pos in named:
                    return self._ref(k, by_pos, "by_position")
                return ChildRef(
                    task_index=k,
                    node_id=None,
                    func_name=origin_name,
                    kernel_type=named[0].node.kernel_type,
                    stream_id=None,
                    scope_id=self.scope_id,
                    scope_name=self.scope_name,
                    model=self.model_id,
                    identity="ambiguous",
                )
        if by_pos is not None and not self.reordered:
            return self._ref(k, by_pos, "by_position")
        return ChildRef(
            task_index=k,
            node_id=None,
            func_name=origin_name,
            kernel_type=None,
            stream_id=None,
            scope_id=self.scope_id,
            scope_name=self.scope_name,
            model=self.model_id,
            identity="unresolved",
        )

    # ------------------------------------------------------------------ fusion facts

    @property
    def fail_reasons(self) -> list[UnfusibleNode]:
        fr = self.model.fail_reasons
        return list(fr.unfusible) if fr is not None else []

    @property
    def original_scope(self) -> OriginalScope | None:
        fr = self.model.fail_reasons
        if fr is None:
            return None
        found = [s for s in fr.original_scopes if s.scope_id == self.scope_id]
        return found[-1] if found else None

    @property
    def fused_scope(self) -> FusedScope | None:
        fr = self.model.fail_reasons
        if fr is None:
            return None
        found = [s for s in fr.fused_scopes if s.scope_id == self.scope_id]
        return found[-1] if found else None

    def scope_snapshots(self) -> list[ScopeSnapshot]:
        """This scope in the final split pass (or the last pass printed), de-duplicated."""
        ss = self.model.scope_split
        if ss is None:
            return []
        snap = ss.final_snapshot()
        if snap is None:
            return []
        return [s for s in snap.scopes if s.scope_id == self.scope_id]


#: SkNode without the frozen ``__init__`` (its fields set through ``object.__setattr__``)
_new_node = frozen_builder(SkNode)
#: SkTask without the frozen ``__init__`` (ten ``object.__setattr__`` calls a task, 5,000 tasks a scene)
_new_task = frozen_builder(SkTask)


def _from_tq(t: QueueTask, node_id: int | None) -> SkTask:
    # positional, in SkTask's field order: keywords cost a third more over 5,000 tasks
    # (index, queue, slot, type, args, debug_options, entries, node_id, src, origin)
    return _new_task(
        t.node_index,
        t.queue,
        t.position,
        t.type,
        t.args,
        t.debug_options,
        tuple(t.entries),
        node_id,
        t.src,
        "task_queue",
    )


def _latest_blocks(me: ModelEvidence) -> dict[int, SkBlock]:
    out: dict[int, SkBlock] = {}
    if me.fused_nodes is not None:
        for b in me.fused_nodes.latest():
            out[b.scope_id] = b
    return out


T = TypeVar("T")


def made_once(store: dict[str, Any], key: str, make: Callable[[], T]) -> T:
    """``store[key]``, made by ``make()`` the first time. Two threads asking at once may both make it;
    ``dict.setdefault`` keeps the first, so every caller gets the same object."""
    made: T | None = store.get(key)
    return made if made is not None else store.setdefault(key, make())


def instances_of(me: ModelEvidence) -> list[SkInstance]:
    """Every SK of one model dir, joined over all its metadata files, in scope-id order.

    Made once per directory and kept on it (``me.derived``, so it goes with the directory):
    localisation, the gate and the stages after them ask for the same SKs, and what is derived from an
    SK (its nodes, tasks, fragment inputs) is kept on the SK, so it is made once too, whenever it is
    first asked for (:func:`skdbg.triage.engine.prepare_late_stages` asks before the plogs are in). The
    SKs are a function of the directory's parts, each parsed once, so the list is the same whenever it
    is made."""
    return list(made_once(me.derived, "sk_instances", lambda: _instances_of(me)))


def _instances_of(me: ModelEvidence) -> list[SkInstance]:
    """:func:`instances_of`, made."""
    blocks = _latest_blocks(me)
    da: dict[int, DeviceArgsBlock] = {}
    if me.device_args is not None:
        for b in me.device_args.blocks:
            if b.scope_id is not None:
                da[b.scope_id] = b  # the latest block of a scope wins
    tq: dict[int, TaskQueueScope] = {}
    if me.task_queue is not None:
        for s in me.task_queue.scopes:
            if s.scope_id is not None:
                tq[s.scope_id] = s
    waits = me.deferred_waits()
    ids = sorted(set(blocks) | set(da) | set(tq))

    def waits_for(sid: int) -> tuple[DeferredWait, ...]:
        # The reorder line names the wait node, not the SK: keep the lines whose waitNodeId is a node
        # of this SK; when the SK's nodes are unknown keep them all (conservative for T6).
        block = blocks.get(sid)
        if block is None or not waits:
            return waits
        node_ids = {fn.node.node_id for fn in block.nodes}
        return tuple(w for w in waits if w.get("waitNodeId") is None or w.get("waitNodeId") in node_ids)

    out = []
    for sid in ids:
        root_tq = None
        if sid not in tq and me.task_queue is not None and len(ids) == 1:
            root_tq = next((s for s in me.task_queue.scopes if s.scope_id is None), None)
        out.append(
            SkInstance(
                model=me,
                scope_id=sid,
                block=blocks.get(sid),
                device_args=da.get(sid),
                tq_scope=tq.get(sid, root_tq),
                deferred_waits=waits_for(sid),
            )
        )
    return out


def all_instances(evidence: Evidence) -> Iterator[SkInstance]:
    for me in evidence.model_evidence:
        yield from instances_of(me)


__all__ = [
    "COLLECTIVE_MARKERS",
    "SkInstance",
    "SkNode",
    "SkTask",
    "all_instances",
    "instances_of",
]
