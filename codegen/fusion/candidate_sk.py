"""The regenerated SK description of one planned scope: the AOT task-queue plan (codegen.md §2.13).

Why a description and not C++: the AOT SuperKernel of ``npugraph_ex`` is not compiled from a source —
the runtime builds a task queue per scope and launches a prebuilt ``sk_entry_*`` interpreter. What a
re-launch must reproduce, and what V3/V4 check, is that queue: which tasks, on which core queue, in
which order, with which event edges kept (§4.3 safety notes).
"""

from __future__ import annotations

import math
from typing import Any

from skdbg.codegen.fusion.plan import wait_partners
from skdbg.codegen.fusion.plan_model import NOTIFY_KINDS, WAIT_KINDS, OpDag, OpNode, Plan, PlannedScope

_TASK_TYPE = {
    "KERNEL": "FUNC",
    "NOTIFY": "EVENT_NOTIFY",
    "WAIT": "EVENT_WAIT",
    "RESET": "EVENT_RESET",
    "MEMORY_WRITE": "MEMORY_WRITE",
    "MEMORY_WAIT": "MEMORY_WAIT",
    "DEFAULT": "DEFAULT",
}
_QUEUE = {
    "AIC_ONLY": "aic",
    "MIX_AIC_1_0": "aic",
    "AIV_ONLY": "aiv",
    "MIX_AIC_1_1": "mix11",
    "MIX_AIC_1_2": "mix12",
}


def _queue(n: OpNode) -> str:
    return _QUEUE.get(n.kernel_type or "", "aiv")


def _task_queues(nodes: list[OpNode]) -> list[str]:
    """Queue per task: kernels by type; NOTIFY/RESET inherit the previous kernel's, WAIT the next one's."""
    kernel_q = [(i, _queue(n)) for i, n in enumerate(nodes) if n.kind == "KERNEL"]
    out: list[str] = []
    for i, n in enumerate(nodes):
        if n.kind == "KERNEL":
            out.append(_queue(n))
            continue
        prev = [q for j, q in kernel_q if j < i]
        nxt = [q for j, q in kernel_q if j > i]
        if n.kind in WAIT_KINDS:
            out.append(nxt[0] if nxt else (prev[-1] if prev else "aiv"))
        else:
            out.append(prev[-1] if prev else (nxt[0] if nxt else "aiv"))
    return out


def sk_kernel_type(kernels: list[OpNode]) -> tuple[str, int]:
    """``GenEntryInfo`` (codegen.md §2.13 step 6): the SK's kernel type and block count."""
    aic = [n.num_blocks for n in kernels if _queue(n) in ("aic", "mix11", "mix12")]
    aiv = [
        n.num_blocks * (2 if _queue(n) == "mix12" else 1)
        for n in kernels
        if _queue(n) in ("aiv", "mix11", "mix12")
    ]
    if aic and not aiv:
        return "AIC_ONLY", max(aic)
    if aiv and not aic:
        return "AIV_ONLY", max(aiv)
    if not aic:
        return "AIV_ONLY", 0
    a, v = max(aic), max(aiv)
    if any(_queue(n) == "mix12" for n in kernels):
        return "MIX_AIC_1_2", max(a, math.ceil(v / 2))
    if v <= a:
        return "MIX_AIC_1_1", a
    return "MIX_AIC_1_2", max(a, math.ceil(v / 2))


_ENTRY_BASE = {"AIC_ONLY": "aic", "AIV_ONLY": "aiv", "MIX_AIC_1_1": "mix11", "MIX_AIC_1_2": "mix12"}


def entry_name(kernel_type: str, debug_options: dict[str, Any]) -> str:
    """``sk_entry_<base>`` + flags in the runtime's order (debug, dump_profiling, op_trace, early_start)."""
    name = f"sk_entry_{_ENTRY_BASE[kernel_type]}"
    if debug_options.get("debug_sync_all"):
        name += "_debug"
    if debug_options.get("debug_op_exec_trace") or debug_options.get("debug_cross_core_sync_check"):
        name += "_op_trace"
    return name


def sk_function_name(scope_id: int | None, scope_name: str, kernels: list[OpNode]) -> str:
    sid = "?" if scope_id is None else str(scope_id)
    if not kernels:
        return f"sk_{sid}_no_kernel_scope_{scope_name}"
    return f"sk_{sid}_{scope_name}_start_{kernels[0].func_name}_end_{kernels[-1].func_name}"


def describe_scope(plan: Plan, index: int, scope_name: str, debug_options: dict[str, Any]) -> dict[str, Any]:
    """JSON description of planned scope ``index``: tasks, queues, SK type/entry, kept edges."""
    dag: OpDag = plan.dag
    scope: PlannedScope = plan.scopes[index]
    by_id = dag.by_id()
    nodes = [by_id[i] for i in scope.node_ids]
    kernels = [n for n in nodes if n.kind == "KERNEL"]
    queues = _task_queues(nodes)
    kernel_type, blocks = sk_kernel_type(kernels)
    where = plan.scope_of()
    partner = wait_partners(dag)
    notify_of: dict[int, list[int]] = {}
    for w, nt in partner.items():
        notify_of.setdefault(nt, []).append(w)
    tasks: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for i, (n, q) in enumerate(zip(nodes, queues, strict=False)):
        task: dict[str, Any] = {
            "index": i,
            "node_id": n.node_id,
            "stream": n.stream,
            "type": _TASK_TYPE[n.kind],
            "queue": q,
        }
        if n.kind == "KERNEL":
            task.update(func_name=n.func_name, kernel_type=n.kernel_type, num_blocks=n.num_blocks)
        else:
            task["event_id"] = n.event_id
        tasks.append(task)
        others = (
            [partner[n.node_id]]
            if n.node_id in partner
            else notify_of.get(n.node_id, [])
            if n.kind in NOTIFY_KINDS
            else []
        )
        for o in others:
            side = "internal" if where.get(o) == index else ("other_sk" if o in where else "unfused")
            edges.append(
                {
                    "kind": "event",
                    "event_id": n.event_id,
                    "node": n.node_id,
                    "partner": o,
                    "partner_location": side if side != "other_sk" else f"sk {where[o]}",
                    "kept": True,
                }
            )
    if scope.break_info.sync_all_nodes:
        edges.append({"kind": "barrier", "nodes": list(scope.break_info.sync_all_nodes), "kept": True})
    return {
        "sk_index": index,
        "scope_id": scope.scope_id,
        "scope_name": scope_name,
        "sk_function": sk_function_name(scope.scope_id, scope_name, kernels),
        "kernel_type": kernel_type,
        "num_blocks": blocks,
        "entry": entry_name(kernel_type, debug_options),
        "node_ids": list(scope.node_ids),
        "kernels": [n.node_id for n in kernels],
        "streams": sorted({n.stream for n in nodes}),
        "tasks": tasks,
        "task_queues": {
            "aic": [t["index"] for t in tasks if t["queue"] in ("aic", "mix11", "mix12")],
            "aiv": [t["index"] for t in tasks if t["queue"] in ("aiv", "mix11", "mix12")],
        },
        "edges": edges,
        "break": scope.break_info.format(),
    }
