"""The planner's input and output types: a compact op DAG and the scopes planned over it.

Why a separate description: the runtime splits scopes from a captured graph that skdbg only ever sees
through metadata logs (``sk_node_detail.log``, ``sk_fused_nodes.log``, ``sk_fusion_fail_reasons.log``);
the planner must work the same on that and on a hand-written DAG (tests, "what if" candidates), so both
are reduced to :class:`OpDag` first (codegen.md §2.11).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: ``SkNodeType`` names (codegen.md §2.11).
NODE_KINDS = frozenset({"KERNEL", "NOTIFY", "WAIT", "RESET", "MEMORY_WRITE", "MEMORY_WAIT", "DEFAULT"})
#: Node kinds that publish (notify side) or consume (wait side) an event id.
NOTIFY_KINDS = frozenset({"NOTIFY", "MEMORY_WRITE"})
WAIT_KINDS = frozenset({"WAIT", "MEMORY_WAIT"})
EVENT_KINDS = NOTIFY_KINDS | WAIT_KINDS | {"RESET"}

#: ``ScopeBreakInfo`` reasons the planner emits (codegen.md §2.12; the parsers' ``BREAK_REASONS``).
BREAK_NONE = "NONE"
BREAK_UNFUSIBLE = "UNFUSIBLE_NODE"
BREAK_DEADLOCK = "DEADLOCK_DETECTED"
BREAK_SYNCALL = "SYNCALL_OP_DROP"
BREAK_PER_OP = "DEBUG_PER_OP_MAX_CORE"
PLANNER_BREAK_REASONS = frozenset({BREAK_NONE, BREAK_UNFUSIBLE, BREAK_DEADLOCK, BREAK_SYNCALL, BREAK_PER_OP})

#: ``FusionFailReason`` names the planner itself assigns (the rest come from the input).
REASON_ISOLATED_EVENT = "ISOLATED_EVENT"
REASON_NOT_IN_SCOPE = "NOT_IN_SCOPE"
REASON_IN_UNFUSIBLE_SCOPE = "IN_UNFUSIBLE_SCOPE"


class PlanError(ValueError):
    """The DAG is malformed or cannot be planned (e.g. a wait that can never be satisfied)."""


@dataclass(frozen=True, slots=True)
class OpNode:
    """One graph node. ``scope_flags`` is the scope bit string as the runtime prints it; all-zero (or
    empty) means "outside every named scope". ``fail_reason`` is None for a fusible node."""

    node_id: int
    stream: int
    kind: str = "KERNEL"
    func_name: str | None = None
    scope_flags: str = "1"
    fail_reason: str | None = None
    event_id: int | None = None
    kernel_type: str | None = None
    num_blocks: int = 0
    cube_num: int = 0
    vec_num: int = 0
    sche_mode: bool = False

    @property
    def fusible(self) -> bool:
        return self.fail_reason is None

    @property
    def in_named_scope(self) -> bool:
        return any(ch not in "0" for ch in self.scope_flags)


@dataclass(frozen=True, slots=True)
class OpDag:
    """Nodes in capture order (the order the runtime visits candidates in). Each stream's nodes keep
    their relative order; ``scope_ids``/``scope_names`` map a scope bit string to the runtime's id/name."""

    nodes: tuple[OpNode, ...]
    scope_ids: dict[str, int] = field(default_factory=dict)
    scope_names: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[int] = set()
        for n in self.nodes:
            if n.node_id in seen:
                raise PlanError(f"node {n.node_id}: duplicate nodeId")
            seen.add(n.node_id)
            if n.kind not in NODE_KINDS:
                raise PlanError(f"node {n.node_id}: kind {n.kind!r}, expected one of {sorted(NODE_KINDS)}")
            if n.kind in EVENT_KINDS and n.event_id is None:
                raise PlanError(f"node {n.node_id}: {n.kind} without an event id")

    def by_id(self) -> dict[int, OpNode]:
        return {n.node_id: n for n in self.nodes}

    def streams(self) -> dict[int, list[OpNode]]:
        out: dict[int, list[OpNode]] = {}
        for n in self.nodes:
            out.setdefault(n.stream, []).append(n)
        return out

    def with_changes(self, changes: dict[int, dict[str, object]]) -> OpDag:
        """A copy with some node fields replaced (candidate edits: flags, fail reasons)."""
        unknown = set(changes) - {n.node_id for n in self.nodes}
        if unknown:
            raise PlanError(f"nodeIds {sorted(unknown)} are not in the graph")
        nodes = tuple(_replace(n, changes[n.node_id]) if n.node_id in changes else n for n in self.nodes)
        return OpDag(nodes, dict(self.scope_ids), dict(self.scope_names))


def _replace(n: OpNode, fields: dict[str, object]) -> OpNode:
    data = {k: getattr(n, k) for k in OpNode.__slots__}
    data.update(fields)
    return OpNode(**data)


@dataclass(frozen=True, slots=True)
class BreakInfo:
    """Why a scope ended (``ScopeBreakInfo``)."""

    reason: str
    trigger_node: int | None = None
    trigger_stream: int | None = None
    detail: str = ""
    sync_all_nodes: tuple[int, ...] = ()
    parent_scope: int | None = None

    def format(self) -> str:
        """The runtime's ``ScopeBreakInfo.Format()`` text (codegen.md §2.12)."""
        if self.reason == BREAK_NONE:
            return "breakReason=NONE"
        sync = ", ".join(str(i) for i in self.sync_all_nodes)
        return (
            f"breakReason={self.reason}, triggerNode={self.trigger_node}, triggerStream={self.trigger_stream}, "
            f'parentScope={self.parent_scope}, syncAllNodes=[{sync}], detail="{self.detail}"'
        )


@dataclass(frozen=True, slots=True)
class PlannedScope:
    """One predicted SK: its nodes in fused (task) order and why it ended."""

    scope_id: int | None
    scope_flags: str
    node_ids: tuple[int, ...]
    break_info: BreakInfo

    def kernels(self, dag: OpDag) -> tuple[int, ...]:
        nodes = dag.by_id()
        return tuple(i for i in self.node_ids if nodes[i].kind == "KERNEL")


@dataclass(frozen=True, slots=True)
class Plan:
    """The split result: scopes in launch order, unfused nodes with their fail reason, passes run."""

    dag: OpDag
    scopes: tuple[PlannedScope, ...]
    unfused: dict[int, str]
    passes: tuple[str, ...]

    def scope_of(self) -> dict[int, int]:
        """nodeId → index of its planned scope."""
        return {nid: i for i, s in enumerate(self.scopes) for nid in s.node_ids}


def ids(nodes: Iterable[OpNode]) -> tuple[int, ...]:
    return tuple(n.node_id for n in nodes)
