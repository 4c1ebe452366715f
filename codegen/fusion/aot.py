"""AOT (runtime fuser) naming and kernel-type rules: what ``aclskOptimize`` builds (codegen spec §2.11, §2.13).

Why skdbg needs them: plogs and profiling name the fused kernel by its entry (``sk_entry_mix11_…``)
and its human-readable function name, the COND register carries the interpreter's breadcrumb, and the
SK_BIND cap of each child changes its data-cache behaviour.  Predicting all of these for a candidate
lets the V-gates compare the re-launch with what the candidate should have produced.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass


class AotKernelType(enum.Enum):
    """Runtime kernel types (``SkKernelType``); the AOT SK can be AIC_ONLY/AIV_ONLY, unlike the JIT."""

    AIC_ONLY = "AIC_ONLY"
    AIV_ONLY = "AIV_ONLY"
    MIX_AIC_1_1 = "MIX_AIC_1_1"
    MIX_AIC_1_2 = "MIX_AIC_1_2"
    DEFAULT = "DEFAULT"


@dataclass(frozen=True)
class AotFunc:
    """One FUNC task of a scope: its queue kind and block count."""

    kind: AotKernelType
    num_blocks: int


@dataclass(frozen=True)
class AotEntry:
    """``GenEntryInfo`` result: SK kernel type, block dim and the AIV block count it implies."""

    kind: AotKernelType
    num_blocks: int
    aiv_blocks: int
    doubled_aiv_1_1: bool = False


def choose_entry(funcs: list[AotFunc], *, per_op_max_core: bool = False) -> AotEntry:
    """Kernel type of the AOT SK (item 62); 1:1 FUNC tasks in the AIV queue get doubled blocks for 1:2."""
    aic = [
        f
        for f in funcs
        if f.kind in (AotKernelType.AIC_ONLY, AotKernelType.MIX_AIC_1_1, AotKernelType.MIX_AIC_1_2)
    ]
    aiv = [
        f
        for f in funcs
        if f.kind in (AotKernelType.AIV_ONLY, AotKernelType.MIX_AIC_1_1, AotKernelType.MIX_AIC_1_2)
    ]
    aic_blocks = max((f.num_blocks for f in aic), default=0)
    aiv_blocks = max(
        (2 * f.num_blocks if f.kind is AotKernelType.MIX_AIC_1_2 else f.num_blocks for f in aiv), default=0
    )
    if not aiv and not per_op_max_core:
        return AotEntry(AotKernelType.AIC_ONLY, aic_blocks, 0)
    if not aic and not per_op_max_core:
        return AotEntry(AotKernelType.AIV_ONLY, aiv_blocks, aiv_blocks)
    both_1_2 = bool(aic) and all(f.kind is AotKernelType.MIX_AIC_1_2 for f in funcs)
    if both_1_2 or per_op_max_core:
        blocks = max(aic_blocks, math.ceil(aiv_blocks / 2))
        return AotEntry(AotKernelType.MIX_AIC_1_2, blocks, 2 * blocks)
    if aiv_blocks <= aic_blocks:
        return AotEntry(AotKernelType.MIX_AIC_1_1, aic_blocks, aic_blocks)
    blocks = max(aic_blocks, math.ceil(aiv_blocks / 2))
    doubled = any(f.kind is AotKernelType.MIX_AIC_1_1 for f in aiv)
    return AotEntry(AotKernelType.MIX_AIC_1_2, blocks, 2 * blocks, doubled)


_ENTRY_BASE = {
    AotKernelType.AIC_ONLY: "aic",
    AotKernelType.AIV_ONLY: "aiv",
    AotKernelType.MIX_AIC_1_1: "mix11",
    AotKernelType.MIX_AIC_1_2: "mix12",
}


def entry_function_name(
    kind: AotKernelType,
    *,
    debug: bool = False,
    dump_profiling: bool = False,
    op_trace: bool = False,
    early_start: bool = False,
    simt: bool = False,
) -> str:
    """Prebuilt entry kernel name: ``sk_entry_<base>`` + flags in the order debug, dump_profiling, op_trace,
    early_start, simt (item 63)."""
    if kind not in _ENTRY_BASE:
        raise ValueError(f"no sk entry for kernel type {kind.value}")
    name = f"sk_entry_{_ENTRY_BASE[kind]}"
    for flag, suffix in (
        (debug, "_debug"),
        (dump_profiling, "_dump_profiling"),
        (op_trace, "_op_trace"),
        (early_start, "_early_start"),
        (simt, "_simt"),
    ):
        if flag:
            name += suffix
    return name


def sk_function_name(scope_id: int, scope_name: str, kernel_funcs: list[str]) -> str:
    """Human-readable SK name of logs/profiling/exception handler (item 64)."""
    if not kernel_funcs:
        return f"sk_{scope_id}_no_kernel_scope_{scope_name}"
    return f"sk_{scope_id}_{scope_name}_start_{kernel_funcs[0]}_end_{kernel_funcs[-1]}"


@dataclass(frozen=True)
class CapBits:
    """``ParseKernelCapBits`` of an SK_BIND mask: bit 0 wait, 1 set, 2 disable DCCI, 3 disable ScheMode."""

    early_start_wait: bool
    early_start_set: bool
    disable_dcci: bool
    disable_sche_mode: bool


class FuncDebug(enum.IntFlag):
    """FUNC task ``debugOptions`` bits."""

    DISABLE_DCCI = 0x1
    DEBUG_SYNC_ALL = 0x2
    DCCI_BEFORE_START = 0x4
    DCCI_AFTER_END = 0x8
    CROSS_CORE_SYNC_CHECK = 0x10
    DCCI_AFTER_FUNC = 0x20


@dataclass(frozen=True)
class DcciOptions:
    """The AOT kernel-name lists and debug switches that feed a FUNC task's ``debugOptions``."""

    disable_on_kernel: tuple[str, ...] = ()
    before_kernel_start: tuple[str, ...] = ()
    after_kernel_end: tuple[str, ...] = ()
    debug_sync_all: bool = False
    cross_core_sync_check: bool = False


class OpState(enum.IntEnum):
    """Interpreter progress written into COND."""

    ENTRY_LAUNCHED = 1
    OP_LAUNCHED = 2
    OP_FINISHED = 3
    ENTRY_FINISHED = 4
