"""``sk_prof_device_<d>.json`` of a profiled run (``ASCEND_PROF_SK_ON``): per-child timing events.

Why: with profiling on, the runtime picks a ``*_dump_profiling*`` entry and its recorder writes one
event per child block when the block ends (artifacts.md §5); gate V4 reads it to confirm the order of
a multi-stream exclusion. Children that never finished (the faulting one and everything after it,
every SK after the faulting one) have no record — the recorder writes only at child end.
"""

from __future__ import annotations

from pathlib import Path

from skdbg.scenebuilder import jsonart, skmeta
from skdbg.sim.execute import AIC_CORES, AIV_CORES, Outcome
from skdbg.sim.ops import SimModel
from skdbg.sim.planning import Planned
from skdbg.sim.tasks import task_orders

CHILD_US = 12.0  # one child block's duration
GAP_US = 1.5


def prof_bodies(model: SimModel, planned: Planned, outcome: Outcome, *, reorder: bool = False) -> list[str]:
    """The recorder's event bodies in polling order (child blocks, then the SK-level event)."""
    by_id = {o.node_id: o for o in model.ops}
    plan = planned.plan
    stop_sk = outcome.sk if outcome.result in ("sk_fault", "hang") else None
    bodies: list[str] = []
    ts = 1_000.0
    orders = task_orders(by_id, planned, reorder)
    for i, scope in enumerate(plan.scopes):
        if stop_sk is not None and i > stop_sk:
            break
        ops = [by_id[n] for n in orders[i]]
        kernels = [o for o in ops if o.is_kernel]
        stop_task = None
        if i == stop_sk:
            stop_task = min((c.state[1] for c in outcome.cores if c.state is not None), default=0)
        start = ts
        for t, op in enumerate(ops):
            if not op.is_kernel:
                continue
            if stop_task is not None and t >= stop_task:
                break
            pool = AIC_CORES if op.kernel_type == "AIC_ONLY" else AIV_CORES
            for block in sorted({0, op.block_dim - 1}):
                bodies.append(
                    jsonart.prof_child_body(
                        block,
                        op.block_dim,
                        op.func_name,
                        pool[(2 * t + block % 2) % len(pool)],
                        ts,
                        CHILD_US,
                        model_id=model.model_id,
                        sk_id=i + 1,
                        node_id=t,
                    )  # fmt: skip
                )
            ts += CHILD_US + GAP_US
        if stop_task is None and kernels:
            name = planned.names.get(scope.scope_flags, "scope")
            sk_name = skmeta.sk_func_name(i + 1, name, kernels[0].func_name, kernels[-1].func_name)
            bodies.append(jsonart.prof_sk_body(0, max(k.block_dim for k in kernels), sk_name, AIV_CORES[0],
                                               start, ts - start, model_id=model.model_id, sk_id=i + 1))  # fmt: skip
        ts += 20.0
    return bodies


def write_prof(
    meta_pid_dir: Path, model: SimModel, planned: Planned, outcome: Outcome, *, reorder: bool = False
) -> Path:
    """Write ``sk_prof_device_<device>.json`` into ``sk_meta/<pid>/``."""
    path = meta_pid_dir / f"sk_prof_device_{model.device}.json"
    return jsonart.write_sk_prof(path, prof_bodies(model, planned, outcome, reorder=reorder))
