"""The regenerated SK description of one planned scope: the AOT task-queue plan (codegen.md §2.13).

Why a description and not C++: the AOT SuperKernel of ``npugraph_ex`` is not compiled from a source —
the runtime builds a task queue per scope and launches a prebuilt ``sk_entry_*`` interpreter. What a
re-launch must reproduce, and what V3/V4 check, is that queue: which tasks, on which core queue, in
which order, with which event edges kept (§4.3 safety notes).
"""

from __future__ import annotations

from typing import Any

from skdbg.codegen.fusion.aot import (
    AotEntry,
    AotFunc,
    AotKernelType,
    choose_entry,
    entry_function_name,
    sk_function_name,
)
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
_AOT_KIND = {
    "AIC_ONLY": AotKernelType.AIC_ONLY,
    "MIX_AIC_1_0": AotKernelType.AIC_ONLY,
    "AIV_ONLY": AotKernelType.AIV_ONLY,
    "MIX_AIC_1_1": AotKernelType.MIX_AIC_1_1,
    "MIX_AIC_1_2": AotKernelType.MIX_AIC_1_2,
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


def sk_entry(kernels: list[OpNode], debug_options: dict[str, Any]) -> AotEntry:
    """``GenEntryInfo`` over the scope's FUNC tasks (part 1's :func:`aot.choose_entry`, item 62)."""
    funcs = [
        AotFunc(_AOT_KIND.get(n.kernel_type or "", AotKernelType.AIV_ONLY), n.num_blocks) for n in kernels
    ]
    return choose_entry(funcs, per_op_max_core=bool(debug_options.get("debug_per_op_max_core_num")))


def entry_name(kind: AotKernelType, debug_options: dict[str, Any]) -> str:
    """The prebuilt entry the re-launch will resolve (item 63), flags from the debug options."""
    return entry_function_name(
        kind,
        debug=bool(debug_options.get("debug_sync_all")),
        op_trace=bool(
            debug_options.get("debug_op_exec_trace") or debug_options.get("debug_cross_core_sync_check")
        ),
    )


def sk_name(scope_id: int | None, scope_name: str, kernels: list[OpNode]) -> str:
    """Item 64's SK name; a scope the edit creates has no runtime id yet, printed as ``?``."""
    funcs = [n.func_name or f"node{n.node_id}" for n in kernels]
    if scope_id is not None:
        return sk_function_name(scope_id, scope_name, funcs)
    return "sk_?" + sk_function_name(0, scope_name, funcs)[len("sk_0") :]


def describe_scope(plan: Plan, index: int, scope_name: str, debug_options: dict[str, Any]) -> dict[str, Any]:
    """JSON description of planned scope ``index``: tasks, queues, SK type/entry, kept edges."""
    dag: OpDag = plan.dag
    scope: PlannedScope = plan.scopes[index]
    by_id = dag.by_id()
    nodes = [by_id[i] for i in scope.node_ids]
    kernels = [n for n in nodes if n.kind == "KERNEL"]
    queues = _task_queues(nodes)
    entry = sk_entry(kernels, debug_options)
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
        "sk_function": sk_name(scope.scope_id, scope_name, kernels),
        "kernel_type": entry.kind.value,
        "num_blocks": entry.num_blocks,
        "aiv_blocks": entry.aiv_blocks,
        "entry": entry_name(entry.kind, debug_options),
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
