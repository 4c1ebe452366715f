"""The emulated device's end-to-end latency: what a timed run (gate V5) of a model reports.

Why a cost model at all: V5 compares clean timed processes of the candidate with a baseline, and a
device stand-in must give those runs something to measure that behaves like the real thing — fusion
saves launches, excluding a child from an SK costs one launch back, and no two processes take exactly
the same time. The numbers are emulated and say so (the metric is ``emulated_e2e_latency_us``); they
are a property of the model and the plan, never of the machine running the emulator:

* every separately launched task (an SK, an unfused kernel, an unfused event) costs a launch overhead;
* a kernel costs its op type's base time, more when it runs on fewer blocks;
* inside an SK each child after the first adds a short inter-child synchronisation;
* a process draws multiplicative noise (σ = 0.4%) from its seed and pid.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from skdbg.sim.ops import SimModel, SimOp

METRIC = "emulated_e2e_latency_us"
LAUNCH_US = 15.0
EVENT_US = 2.0
INTER_CHILD_SYNC_US = 1.5
NOISE_SIGMA = 0.004
#: base microseconds of a kernel at full width (48 blocks), by op type; others take DEFAULT_KERNEL_US
KERNEL_US = {
    "QuantMatmul": 40.0,
    "QuantBatchMatmulV3": 40.0,
    "MatMul": 36.0,
    "FusedInferAttentionScore": 60.0,
    "RmsNorm": 8.0,
    "SwiGlu": 10.0,
    "RotaryMul": 6.0,
    "Add": 4.0,
    "Mul": 4.0,
    "Cast": 3.0,
    "Gelu": 6.0,
}
DEFAULT_KERNEL_US = 8.0
FULL_WIDTH = 48


def op_cost(op: SimOp) -> float:
    """Microseconds of one op's own work (an event: its set/wait)."""
    if op.kind != "kernel":
        return EVENT_US
    base = KERNEL_US.get(op.op_type, DEFAULT_KERNEL_US)
    width = max(1, op.block_dim or FULL_WIDTH)
    return base * (1.0 + 0.25 * max(0.0, FULL_WIDTH / width - 1.0))


def latency_us(model: SimModel, sks: Iterable[Iterable[int]], *, seed: int, pid: int) -> float:
    """End-to-end latency of one run: ``sks`` are the node ids of each fused SK; every other op of the
    model runs on its own launch."""
    by_id = {op.node_id: op for op in model.ops}
    fused: set[int] = set()
    total = 0.0
    for sk in sks:
        members = [by_id[n] for n in sk if n in by_id]
        if not members:
            continue
        fused.update(op.node_id for op in members)
        total += LAUNCH_US + sum(op_cost(op) for op in members) + INTER_CHILD_SYNC_US * (len(members) - 1)
    for op in model.ops:
        if op.node_id not in fused:
            total += LAUNCH_US + op_cost(op)
    noise = random.Random(f"skdbg.sim.timing:{seed}:{pid}").gauss(1.0, NOISE_SIGMA)
    return total * noise


__all__ = ["METRIC", "latency_us", "op_cost"]
