"""The model as the planner's :class:`OpDag`, and its scopes planned by the existing planner.

Why the shared planner: gate V3 compares the SKs a candidate predicts (``codegen candidate``, which
plans the failed scene's graph) with the SKs a re-launch produced. If the emulator cut scopes its own
way the loop would test the emulator, not skdbg. Scope flags are one bit per scope name in order of
first appearance, the way the runtime prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skdbg.codegen.fusion.plan import plan_scopes
from skdbg.codegen.fusion.plan_model import OpDag, OpNode, Plan, PlanError
from skdbg.sim.errors import SimError
from skdbg.sim.ops import KIND_NODE, SimModel, SimOp
from skdbg.sim.scopes import OpScope


@dataclass(frozen=True)
class Planned:
    """The plan plus what the scene needs: per-op scope flags, scope names in order, SK ids."""

    plan: Plan
    flags: dict[int, str]  # nodeId → scope bit flags
    names: dict[str, str]  # flags → scope name
    per_op: bool

    def sk_of(self) -> dict[int, int]:
        """nodeId → index of its SK (fused nodes only)."""
        return self.plan.scope_of()


def _cores(op: SimOp) -> tuple[int, int]:
    b = op.block_dim
    return {
        "AIC_ONLY": (b, 0),
        "AIV_ONLY": (0, b),
        "MIX_AIC_1_1": (b, b),
        "MIX_AIC_1_2": (b, 2 * b),
    }.get(op.kernel_type or "", (0, 0))


def build_dag(model: SimModel, scopes: Sequence[OpScope]) -> tuple[OpDag, dict[int, str], dict[str, str]]:
    flags_of: dict[str, str] = {}
    for s in scopes:
        if s.name is not None and s.name not in flags_of:
            flags_of[s.name] = "1" + "0" * len(flags_of)
    nodes: list[OpNode] = []
    flags: dict[int, str] = {}
    for op, s in zip(model.ops, scopes, strict=True):
        f = flags_of[s.name] if s.name is not None else "0"
        flags[op.node_id] = f
        cube, vec = _cores(op)
        nodes.append(
            OpNode(
                node_id=op.node_id,
                stream=op.stream,
                kind=KIND_NODE[op.kind],
                func_name=op.func_name or None,
                scope_flags=f,
                fail_reason=s.fail_reason,
                event_id=op.event,
                kernel_type=op.kernel_type,
                num_blocks=op.block_dim,
                cube_num=cube,
                vec_num=vec,
            )
        )
    names = {f: n for n, f in flags_of.items()}
    ids = {f: i + 1 for i, f in enumerate(flags_of.values())}
    return OpDag(tuple(nodes), ids, names), flags, names


def plan_model(model: SimModel, scopes: Sequence[OpScope], options: Mapping[str, Any]) -> Planned:
    """Plan the model's scopes under the run's options (``debug_per_op_max_core_num=1`` → one kernel
    per SK)."""
    dbg = options.get("super_kernel_debug_options") or {}
    per_op = str(dbg.get("debug_per_op_max_core_num", "")) == "1"
    dag, flags, names = build_dag(model, scopes)
    try:
        plan = plan_scopes(dag, per_op_max_core=per_op)
    except PlanError as e:
        raise SimError(model.path, "ops", f"the graph cannot be planned: {e}") from None
    return Planned(plan, flags, names, per_op)
