"""Task order of each planned SK: fused order, or with ``auto_op_parallel`` the customised queue that
defers every wait to just before the next kernel of its stream (codegen.md §2.13, trap T6).

Why its own module: the executor must aim a fault at a child's *task index* and the scene builder
must place the same tasks; both take the order from the scene builder's one reorder rule
(:func:`skdbg.scenebuilder.scene.auto_task_indices`).
"""

from __future__ import annotations

from skdbg.scenebuilder.scene import Child, Event, Kernel, auto_task_indices
from skdbg.sim.ops import KIND_EVENT, SimOp
from skdbg.sim.planning import Planned


def _shape(op: SimOp) -> Child:
    """Enough of the child for the reorder rule (kind and stream)."""
    if op.is_kernel:
        return Kernel(op.func_name, op.kernel_type or "AIV_ONLY", stream=op.stream, node_id=op.node_id)
    return Event(KIND_EVENT[op.kind], event_id=op.event or 0, stream=op.stream, node_id=op.node_id)


def task_orders(ops_by_id: dict[int, SimOp], planned: Planned, reorder: bool) -> list[list[int]]:
    """Per SK (launch order): its nodeIds in task order."""
    out: list[list[int]] = []
    for scope in planned.plan.scopes:
        ids = list(scope.node_ids)
        if reorder:
            tix = auto_task_indices([_shape(ops_by_id[n]) for n in ids])
            ordered = [0] * len(ids)
            for pos, t in enumerate(tix):
                ordered[t] = ids[pos]
            ids = ordered
        out.append(ids)
    return out
