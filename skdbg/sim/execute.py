"""Executing a planned model: which SK faults where, on which cores, in which trace state.

Why a separate step: the fault spec says *what* is wrong (docs/sim.md); whether it shows, and how,
depends on the plan (is the op fused? with whom?) and on the run's debug options, exactly as on a
device. The result is a small :class:`Outcome` the scene writer renders; the same seed gives the
same outcome (cores and flaky draws come from seeded generators).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skdbg.scenebuilder.scene import FaultCore
from skdbg.sim.ops import SimModel, SimOp
from skdbg.sim.planning import Planned
from skdbg.sim.tasks import task_orders

AIC_CORES = range(0, 25)
AIV_CORES = range(25, 75)
#: SYNC ``args`` of the core-sync kinds (triage.md §3.3)
SYNC_ALL = 0
#: a syncall_mismatch barrier waits for this many cores more than its kernel runs on
SYNCALL_SHORTFALL = 8
WAIT_AIC_TO_AIV = 5
WAIT_AIV_TO_AIC = 6
#: task debugOptions bits (§3.3)
DBG_SYNC_ALL = 0x2
DBG_CROSS_CORE = 0x10


@dataclass(frozen=True)
class Debug:
    """The run's debug options as the runtime applies them (§3.9: cross-core check implies exec trace,
    per-op max core implies the cross-core check)."""

    exec_trace: bool = False
    sync_all: bool = False
    cross_core: bool = False
    per_op: bool = False
    reorder: bool = False  # optimize option auto_op_parallel=1: waits deferred in the task queue (T6)

    @property
    def op_trace(self) -> bool:
        return self.exec_trace or self.cross_core or self.per_op

    @property
    def task_bits(self) -> int:
        return (DBG_SYNC_ALL if self.sync_all else 0) | (
            DBG_CROSS_CORE if self.cross_core or self.per_op else 0
        )


def debug_of(options: Mapping[str, Any]) -> Debug:
    """The run's options as the runtime applies them (debug options, and ``auto_op_parallel``)."""
    dbg = options.get("super_kernel_debug_options") or {}
    opt = options.get("super_kernel_optimize_options") or {}

    def on(table: Mapping[str, Any], key: str) -> bool:
        return str(table.get(key, "")).strip() == "1"

    return Debug(
        on(dbg, "debug_op_exec_trace"), on(dbg, "debug_sync_all"), on(dbg, "debug_cross_core_sync_check"),
        on(dbg, "debug_per_op_max_core_num"), on(opt, "auto_op_parallel"),
    )  # fmt: skip


@dataclass
class Outcome:
    """What the run showed. ``result``: clean | sk_fault | non_sk_fault | hang | wrong_result."""

    result: str
    message: str
    sk: int | None = None  # the SK whose handler block the plog carries
    cores: list[FaultCore] = field(default_factory=list)
    counters: dict[int, tuple[str, int]] = field(default_factory=dict)
    culprit: SimOp | None = None
    syncs: dict[int, int] = field(default_factory=dict)  # nodeId → injected SYNC args after it
    sync_blocks: dict[int, int] = field(default_factory=dict)  # nodeId → blk of that SYNC (SyncAll count)


def flaky_draw(seed: int) -> float:
    """The flaky fault's draw for one run (its own generator: core choice never shifts it)."""
    return random.Random(f"skdbg.sim.flaky:{seed}").random()


class _Run:
    def __init__(self, model: SimModel, planned: Planned, seed: int, debug: Debug) -> None:
        self.seed = seed
        self.model = model
        self.planned = planned
        self.debug = debug
        self.rng = random.Random(f"skdbg.sim.cores:{seed}")
        self.sk_of = planned.sk_of()
        self.scopes = planned.plan.scopes
        self.by_id = {o.node_id: o for o in model.ops}
        self.order = task_orders(self.by_id, planned, debug.reorder)  # per SK: nodeIds in task order

    def op(self, name: str) -> SimOp:
        return self.model.op_named(name)

    def task(self, op: SimOp) -> int:
        return self.order[self.sk_of[op.node_id]].index(op.node_id)

    def fused(self, op: SimOp) -> bool:
        """In an SK together with at least one other kernel."""
        sk = self.sk_of.get(op.node_id)
        if sk is None:
            return False
        return len(self.scopes[sk].kernels(self.planned.plan.dag)) >= 2

    def core(self, core_type: str) -> int:
        return self.rng.choice(AIC_CORES if core_type == "AIC" else AIV_CORES)

    def core_type(self, op: SimOp) -> str:
        if op.kernel_type == "AIC_ONLY":
            return "AIC"
        if op.kernel_type == "AIV_ONLY":
            return "AIV"
        return self.rng.choice(("AIC", "AIV"))

    def pc_fault(self, op: SimOp, why: str) -> Outcome:
        sk, t = self.sk_of[op.node_id], self.task(op)
        ctype = self.core_type(op)
        cid = self.core(ctype)
        core = FaultCore(cid, ctype, pc=("child", t), state=("OP_LAUNCHED", t))
        counters: dict[int, tuple[str, int]] = {}
        if self.debug.op_trace:  # the other blocks of the same child were running it too
            pool = [c for c in (AIC_CORES if ctype == "AIC" else AIV_CORES) if c != cid]
            for c in self.rng.sample(pool, 2):
                counters[c] = ("OP_LAUNCHED", t)
        return Outcome("sk_fault", f"device fault in {op.name} ({why})", sk, [core], counters, op)

    def entry_fault(self, sk: int) -> Outcome:
        kernels = [self.by_id[nid] for nid in self.scopes[sk].kernels(self.planned.plan.dag)]
        ctype = "AIV" if any(k.has_aiv for k in kernels) else "AIC"
        core = FaultCore(self.core(ctype), ctype, pc=("entry",), state=("SK_ENTRY_LAUNCHED", 0))
        return Outcome("sk_fault", f"device fault in the entry code of SK {sk}", sk, [core])

    def blocked(self, sk: int, at: int, core_type: str) -> FaultCore:
        """A core of ``core_type`` stuck at task ``at``: state = its last finished FUNC before it."""
        ops = [self.by_id[nid] for nid in self.order[sk]]
        done = [t for t, o in enumerate(ops[:at]) if (o.has_aic if core_type == "AIC" else o.has_aiv)]
        state = ("OP_FINISHED", done[-1]) if done else ("SK_ENTRY_LAUNCHED", 0)
        return FaultCore(self.core(core_type), core_type, pc=("entry",), state=state)

    def unmatched(self, wait: SimOp) -> Outcome:
        sk = self.sk_of.get(wait.node_id)
        if sk is None:
            return Outcome("hang", f"hang: {wait.name} waits for event {wait.event}, never notified", None)
        t = self.task(wait)
        ops = [self.by_id[nid] for nid in self.scopes[sk].node_ids]
        cores = []
        for ctype in ("AIC", "AIV"):
            if any((o.has_aic if ctype == "AIC" else o.has_aiv) for o in ops):
                cores.append(self.blocked(sk, t, ctype))
        msg = f"hang: {wait.name} waits for event {wait.event}, never notified (SK {sk})"
        return Outcome("hang", msg, sk, cores, {}, wait)

    def circular(self, a: SimOp, b: SimOp) -> Outcome:
        sk = self.sk_of[a.node_id]
        ta, tb = self.task(a), self.task(b)
        cores = [
            FaultCore(self.core("AIC"), "AIC", pc=("entry",), state=("OP_FINISHED", ta)),
            FaultCore(self.core("AIV"), "AIV", pc=("entry",), state=("OP_FINISHED", tb)),
        ]
        syncs = {a.node_id: WAIT_AIV_TO_AIC, b.node_id: WAIT_AIC_TO_AIV}
        msg = f"hang: circular wait between {a.name} (AIC waits on AIV) and {b.name} (AIV waits on AIC)"
        return Outcome("hang", msg, sk, cores, {}, None, syncs)

    def syncall(self, x: SimOp) -> Outcome:
        """X's SyncAll waits for more cores (blk) than X runs on: X's blocks reach it and wait for ever."""
        if not self.fused(x):
            return _clean()  # no SK, no SyncAll between children
        sk, t = self.sk_of[x.node_id], self.task(x)
        blk = x.block_dim + SYNCALL_SHORTFALL
        cores: list[FaultCore] = []
        counters: dict[int, tuple[str, int]] = {}
        for ctype, has in (("AIC", x.has_aic), ("AIV", x.has_aiv)):
            if not has:
                continue
            cid = self.core(ctype)
            cores.append(FaultCore(cid, ctype, pc=("entry",), state=("OP_FINISHED", t)))
            if self.debug.op_trace:  # the counters show every block of X finished it (and stopped there)
                pool = [c for c in (AIC_CORES if ctype == "AIC" else AIV_CORES) if c != cid]
                for c in pool[: max(x.block_dim - 1, 0)]:
                    counters[c] = ("OP_FINISHED", t)
        msg = f"hang: the SyncAll after {x.name} waits for {blk} cores, {x.name} runs on {x.block_dim} (SK {sk})"
        return Outcome("hang", msg, sk, cores, counters, None, {x.node_id: SYNC_ALL}, {x.node_id: blk})

    def run(self) -> Outcome:
        f = self.model.fault
        kind = f.kind
        if kind == "none":
            return Outcome("clean", "clean run")
        ops = [self.op(n) for n in f.ops]
        if kind == "fused":
            return self.pc_fault(ops[0], "fusion-induced") if self.fused(ops[0]) else _clean()
        if kind == "operator":
            x = ops[0]
            if x.node_id in self.sk_of:
                return self.pc_fault(x, "operator bug")
            ctype = self.core_type(x)
            core = FaultCore(self.core(ctype), ctype)
            return Outcome(
                "non_sk_fault", f"device fault in {x.name} (operator bug, unfused)", None, [core], {}, x
            )
        if kind == "flaky":
            if self.fused(ops[0]) and flaky_draw(self.seed) < f.probability:
                return self.pc_fault(ops[0], f"flaky, p={f.probability}")
            return _clean()
        if kind == "wrong_result":
            if self.fused(ops[0]):
                return Outcome(
                    "wrong_result", f"wrong result: output of {ops[0].name} mismatches", culprit=ops[0]
                )
            return _clean()
        if kind == "interaction":
            a, b = ops
            sa, sb = self.sk_of.get(a.node_id), self.sk_of.get(b.node_id)
            if sa is None or sa != sb:
                return _clean()
            if self.debug.sync_all:  # the race between the two children needs them to overlap
                return Outcome("clean", "clean run (the interaction is masked by SyncAll between children)")
            later = a if self.task(a) > self.task(b) else b
            return self.pc_fault(later, f"interaction of {a.name} and {b.name}")
        if kind == "entry":
            if not self.scopes:
                return _clean()
            if ops:
                sk = self.sk_of.get(ops[0].node_id)
                if sk is None:
                    return _clean()
                return self.entry_fault(sk)
            return self.entry_fault(0)
        if kind == "unmatched_wait":
            return self.unmatched(ops[0])
        if kind == "circular_wait":
            a, b = ops
            sa = self.sk_of.get(a.node_id)
            if sa is None or sa != self.sk_of.get(b.node_id):
                return _clean()
            return self.circular(a, b)
        if kind == "syncall_mismatch":
            return self.syncall(ops[0])
        raise AssertionError(f"unhandled fault kind {kind}")  # load_model refuses unknown kinds


def _clean() -> Outcome:
    return Outcome("clean", "clean run")


def execute(model: SimModel, planned: Planned, *, seed: int, debug: Debug) -> Outcome:
    """The outcome of one run of ``model`` with ``seed`` (deterministic)."""
    return _Run(model, planned, seed, debug).run()
