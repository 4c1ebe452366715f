"""The model's records: ops, the fault spec, the model itself (validated by :mod:`skdbg.sim.load`).

Why plain frozen dataclasses: a model is read once and then only queried (by the planner bridge, the
executor and the scene writer); nothing mutates it, so a re-run with the same seed sees the same model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: op kinds of the model file → the planner's node kind (``SkNodeType``) and the scene builder's event kind
KIND_NODE = {
    "kernel": "KERNEL",
    "notify": "NOTIFY",
    "wait": "WAIT",
    "reset": "RESET",
    "memory_write": "MEMORY_WRITE",
    "memory_wait": "MEMORY_WAIT",
}
KIND_EVENT = {
    "notify": "EventNotify",
    "wait": "EventWait",
    "reset": "EventReset",
    "memory_write": "MemoryWrite",
    "memory_wait": "MemoryWait",
}
WAIT_KINDS = frozenset({"wait", "memory_wait"})
#: accepted ``kernel_type`` spellings → the runtime's kernel type
KERNEL_TYPES = {
    "AIC": "AIC_ONLY",
    "AIV": "AIV_ONLY",
    "MIX": "MIX_AIC_1_2",
    "AIC_ONLY": "AIC_ONLY",
    "AIV_ONLY": "AIV_ONLY",
    "MIX_AIC_1_1": "MIX_AIC_1_1",
    "MIX_AIC_1_2": "MIX_AIC_1_2",
}
FAULT_KINDS = (
    "none",
    "fused",
    "operator",
    "unmatched_wait",
    "circular_wait",
    "wrong_result",
    "interaction",
    "flaky",
    "entry",
    "syncall_mismatch",
)


@dataclass(frozen=True)
class SimOp:
    """One graph node of the model: a kernel or an event/value node, tied to a source statement."""

    index: int
    name: str
    kind: str  # kernel | notify | wait | reset | memory_write | memory_wait
    op_type: str
    line: int  # 1-based line of the op's statement in the pristine marker file
    stream: int = 0
    kernel_type: str | None = None  # runtime spelling (AIC_ONLY …), kernels only
    block_dim: int = 0
    event: int | None = None
    barrier: bool = False  # a full-core barrier (SYNC ALL_SYNC) after the kernel
    collective: bool = False  # a communication kernel (AllReduce …)
    func_name: str = ""

    @property
    def is_kernel(self) -> bool:
        return self.kind == "kernel"

    @property
    def node_id(self) -> int:
        """Graph nodeId: capture order, so the planner's order and the metadata's agree."""
        return 100 + self.index

    @property
    def has_aic(self) -> bool:
        return self.is_kernel and self.kernel_type != "AIV_ONLY"

    @property
    def has_aiv(self) -> bool:
        return self.is_kernel and self.kernel_type != "AIC_ONLY"


@dataclass(frozen=True)
class FaultSpec:
    """What goes wrong when the model runs (docs/sim.md "Fault kinds")."""

    kind: str = "none"
    ops: tuple[str, ...] = ()  # op (fused, operator, unmatched_wait, wrong_result, flaky, entry) or pair
    probability: float = 1.0  # flaky only

    @property
    def op(self) -> str | None:
        return self.ops[0] if self.ops else None


@dataclass(frozen=True)
class SimModel:
    """A loaded model: ordered ops, the pristine marker file, the fault to inject."""

    root: Path
    path: Path  # model.json / model.toml
    name: str
    marker_file: str  # relative to root, e.g. src/model.py
    marker_text: str
    ops: tuple[SimOp, ...]
    fault: FaultSpec = field(default_factory=FaultSpec)
    model_id: str = "48_1"
    device: int = 0
    rank: int = 0

    def op_named(self, name: str) -> SimOp:
        return next(o for o in self.ops if o.name == name)

    @property
    def marker_path(self) -> Path:
        return self.root / self.marker_file
