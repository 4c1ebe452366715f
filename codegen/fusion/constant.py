"""AOT constant codegen (``SK_CONSTANT=1`` / option ``constant_codegen``): a specialised SK source (item 69).

Why: with constant codegen the runtime compiles a per-scope source instead of interpreting the task
queue, and dumps it under ``sk_meta/…/constant_codegen/``.  skdbg renders the same shape from a task
queue so a candidate's expected source can be compared with the dumped one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skdbg.codegen.fusion.render import render

TASK_TYPES = (
    "TYPE_FUNC",
    "TYPE_PRELOAD",
    "TYPE_SYNC",
    "TYPE_EVENT_NOTIFY",
    "TYPE_EVENT_WAIT",
    "TYPE_EVENT_RESET",
)


@dataclass(frozen=True)
class ConstTask:
    """One queue task: FUNC/PRELOAD use ``entries`` (1–4 split addresses), events use ``extra_info``."""

    index: int
    type_name: str
    num_blocks: int = 0
    entries: tuple[int, ...] = ()
    debug_options: int = 0
    extra_info: int = 0
    kernel_kind: str = ""

    def __post_init__(self) -> None:
        if self.type_name not in TASK_TYPES:
            raise ValueError(
                f"task {self.index}: type {self.type_name!r}, expected one of {', '.join(TASK_TYPES)}"
            )
        if self.type_name in ("TYPE_FUNC", "TYPE_PRELOAD") and not 1 <= len(self.entries) <= 4:
            raise ValueError(f"task {self.index}: {self.type_name} needs 1..4 split entries")

    @property
    def entry_list(self) -> str:
        padded = list(self.entries) + [0] * (4 - len(self.entries))
        return ", ".join(f"0x{e:x}" for e in padded)

    def split_entry(self, split: int) -> str:
        """Entry address used by split ``split`` (1-based; fewer splits reuse the last one)."""
        return f"0x{self.entries[min(split, len(self.entries)) - 1]:x}"


@dataclass(frozen=True)
class ConstQueue:
    """The AIC or AIV task queue of one scope."""

    arch: str
    tasks: tuple[ConstTask, ...] = ()
    cap: int = 0
    marked_1_2: bool = False

    @property
    def guard(self) -> str:
        return "__DAV_CUBE__" if self.arch == "AIC" else "__DAV_VEC__"


@dataclass(frozen=True)
class ConstantSource:
    """Rendered source plus the ``__mix__`` ratio it was compiled for."""

    sk_id: int
    kernel_type: str
    aic: int
    aiv: int
    source: str = field(repr=False)


def constant_kernel_type(aic: ConstQueue, aiv: ConstQueue) -> tuple[str, int, int]:
    """AIV funcs only → AIV_ONLY (0,1), AIC only → AIC_ONLY (1,0), 1:2 marked → (1,2), else (1,1)."""
    has_aic = any(t.type_name == "TYPE_FUNC" for t in aic.tasks)
    has_aiv = any(t.type_name == "TYPE_FUNC" for t in aiv.tasks)
    if has_aiv and not has_aic:
        return "AIV_ONLY", 0, 1
    if has_aic and not has_aiv:
        return "AIC_ONLY", 1, 0
    if aic.marked_1_2 or aiv.marked_1_2:
        return "MIX_AIC_1_2", 1, 2
    return "MIX_AIC_1_1", 1, 1


def constant_codegen(sk_id: int, aic: ConstQueue, aiv: ConstQueue) -> ConstantSource:
    """Render the specialised entry ``sk_constant_entry_<sk_id>`` for the two queues."""
    kind, n_aic, n_aiv = constant_kernel_type(aic, aiv)
    source = render(
        "constant_entry.cpp.j2", sk_id=sk_id, kernel_type=kind, aic=n_aic, aiv=n_aiv, queues=[aic, aiv]
    )
    return ConstantSource(sk_id, kind, n_aic, n_aiv, source)
