"""An emulated run → the scene builder's :class:`SceneSpec` (one resolved description of the files).

Why through the scene builder: it already writes every artifact in the real formats (plog in any
dialect D0–D5, the sk_meta logs, task queue, bin_files ELFs, super_kernel.log) from ONE resolved model,
so addresses, task indices and ELF symbols cannot disagree. The emulator only decides *what* the run
was: its SKs in launch order (with their planned BreakInfo), the unfused nodes, the capture order and
the faulting cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from skdbg.scenebuilder.scene import Child, Event, Kernel, SceneSpec, SkDef
from skdbg.sim.execute import SYNC_ALL, Debug, Outcome
from skdbg.sim.ops import KIND_EVENT, SimModel, SimOp
from skdbg.sim.planning import Planned


@dataclass(frozen=True)
class Clock:
    """The run's clocks: process start … end; metadata built at ``build``; the fault at ``fault``."""

    start: datetime
    build: datetime
    fault: datetime
    end: datetime

    @staticmethod
    def ending(now: datetime) -> Clock:
        """Clocks of a run that ends ``now`` (a real job: every stamp lies before the process exits)."""
        start = now - timedelta(milliseconds=900)
        return Clock(start, now - timedelta(milliseconds=300), now - timedelta(milliseconds=40), now)

    @staticmethod
    def fixed(seed: int) -> Clock:
        """Deterministic clocks for a scene written from a seed (same seed → same bytes)."""
        start = datetime(2026, 6, 10, 14, 0, 58) + timedelta(seconds=seed % 86400)
        return Clock(start, start + timedelta(seconds=4, milliseconds=345), start + timedelta(seconds=146),
                     start + timedelta(seconds=147))  # fmt: skip


def entry_name(kernels: list[SimOp], debug: Debug, *, profiling: bool) -> str:
    """``BuildEntryFuncName``: ``sk_entry_<base>[_debug][_dump_profiling][_op_trace]`` (artifacts.md
    §1.6) — base from the children's kernel types (``mix12`` forced by per-op max core)."""
    types = {k.kernel_type for k in kernels}
    if debug.per_op or "MIX_AIC_1_2" in types:
        base = "mix12"
    elif "MIX_AIC_1_1" in types or {"AIC_ONLY", "AIV_ONLY"} <= types:
        base = "mix11"
    elif types == {"AIV_ONLY"}:
        base = "aiv"
    else:
        base = "aic"
    suffix = ("_debug" if debug.sync_all else "") + ("_dump_profiling" if profiling else "")
    return f"sk_entry_{base}{suffix}{'_op_trace' if debug.op_trace else ''}"


def _child(op: SimOp, debug: Debug, sync: int | None, sync_blocks: int = 0) -> Child:
    if not op.is_kernel:
        return Event(KIND_EVENT[op.kind], event_id=op.event or 0, stream=op.stream, node_id=op.node_id)
    if sync is None and (op.barrier or debug.sync_all):
        sync = SYNC_ALL
    return Kernel(
        op.func_name,
        op.kernel_type or "AIV_ONLY",
        stream=op.stream,
        node_id=op.node_id,
        num_blocks=op.block_dim,
        debug_options=debug.task_bits,
        sync_after=sync,
        sync_blocks=sync_blocks,
    )


def scene_spec(
    model: SimModel,
    planned: Planned,
    outcome: Outcome,
    debug: Debug,
    *,
    pid: int,
    clock: Clock,
    dialect: str,
    seed: int,
    options: dict[str, Any],
    profiling: bool = False,
) -> SceneSpec:
    """The SceneSpec of one emulated run (``run``/``probe``/``source`` are left to the caller)."""
    plan = planned.plan
    by_id = {o.node_id: o for o in model.ops}

    def children(node_ids: tuple[int, ...]) -> list[Child]:
        return [
            _child(by_id[n], debug, outcome.syncs.get(n), outcome.sync_blocks.get(n, 0)) for n in node_ids
        ]

    sks = [
        SkDef(
            i + 1,
            planned.names.get(s.scope_flags, "scope"),
            children(s.node_ids),
            s.break_info.format(),
            s.scope_flags,
            entry_name([by_id[n] for n in s.kernels(plan.dag)], debug, profiling=profiling),
            "auto" if debug.reorder else {},
        )  # fmt: skip
        for i, s in enumerate(plan.scopes)
    ]
    main = outcome.sk if outcome.sk is not None else 0
    unfusible = [(_child(by_id[n], debug, None), reason) for n, reason in sorted(plan.unfused.items())]
    fault = {
        "sk_fault": "sk",
        "non_sk_fault": "non_sk",
        "hang": "sk" if outcome.sk is not None else "none",
    }.get(outcome.result, "none")
    phase = {"sk_fault": "device_fault", "non_sk_fault": "device_fault", "hang": "hang",
             "wrong_result": "correctness"}.get(outcome.result)  # fmt: skip
    head = sks[main] if sks else SkDef(1, "scope", [])
    non_sk = outcome.culprit.func_name if outcome.result == "non_sk_fault" and outcome.culprit else "none"
    return SceneSpec(
        children=head.children,
        cores=list(outcome.cores),
        name=model.name,
        pid=pid,
        rank=model.rank,
        device=model.device,
        model_id=model.model_id,
        scope_id=head.scope_id,
        scope_name=head.scope_name,
        dialect=dialect,
        op_trace=debug.op_trace,
        entry=head.entry,
        reorder=head.reorder,
        fault=fault,
        handler="full" if fault == "sk" else "none",
        unfusible=unfusible,
        extra_sks=[s for i, s in enumerate(sks) if i != main],
        main_position=main if sks else 0,
        break_text=head.break_text,
        scope_flags=head.flags,
        fillers=False,
        graph=[(o.node_id, planned.flags[o.node_id]) for o in model.ops],
        run=None,
        probe=None,
        source=False,
        sk_meta=bool(sks),
        debug_options=dict(options.get("super_kernel_debug_options") or {}),
        run_start=clock.start,
        run_end=clock.end,
        build_ts=clock.build,
        fault_ts=clock.fault,
        failure_phase=phase,
        runtime_timeout=outcome.result == "hang",  # the runtime ends a hung task with its timeout error
        non_sk_kernel=non_sk,
        counters=dict(outcome.counters),
        seed=seed,
    )
