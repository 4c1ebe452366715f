"""The SK source text of each planned SK, from the codegen generator (with its ``.ascend.meta`` trailer).

Where it belongs: the generated C++ (``<kernel>_<pid>_kernel.cpp``) is the JIT SuperKernel's
(``te_superkernel_*``, GE graph mode), compiled in the JIT's ``kernel_meta`` directory. The AOT SK the
emulator models (``sk_entry_*`` + a task queue, npugraph_ex) has no generated per-SK source: its
``sk_meta/<pid>/model_*`` holds logs, the task queue and ``bin_files`` only (``constant_codegen/`` is
another generator's ``.asc``). So the text is never written into a scene; ``skdbg sim --sk-source DIR``
writes it to a separate folder, for a reviewer who wants to see what the scope would look like fused
by the JIT generator.
"""

from __future__ import annotations

import re

from skdbg.codegen.fusion.generate import generate_superkernel
from skdbg.codegen.fusion.model import ChildOp, FusionInputError, SkRequest
from skdbg.sim.errors import SimError
from skdbg.sim.ops import SimModel, SimOp
from skdbg.sim.planning import Planned

SOC = "Ascend910_9391"
CHIP = "c220"


def _info(op: SimOp) -> dict[str, object]:
    ktype = op.kernel_type or "AIV_ONLY"
    if ktype in ("AIV_ONLY", "AIC_ONLY"):
        names: dict[str, object] = {"AiCore": {"func_name": op.func_name}}
    else:
        names = {
            f"dav-{CHIP}-cube": {"func_name": f"{op.func_name}_mix_aic"},
            f"dav-{CHIP}-vec": {"func_name": f"{op.func_name}_mix_aiv"},
        }
    return {
        "kernelName": op.func_name,
        "sub_operator_kernel_type": f"KERNEL_TYPE_{ktype}",
        "sub_operator_kernel_name": names,
        "blockDim": op.block_dim,
        "sub_operator_params": ["x", "y", "workspace"],
        "sub_operator_early_start_set_flag": False,
        "sub_operator_early_start_wait_flag": False,
        "sub_operator_op_type": op.op_type,
    }


def _events(ops: list[SimOp]) -> dict[int, tuple[list[int], list[int]]]:
    """Kernel index → (send, recv) event ids: a notify publishes the previous kernel of its stream,
    a wait gates the next one (the runtime's attachment, triage.md §4.2)."""
    out: dict[int, tuple[list[int], list[int]]] = {o.index: ([], []) for o in ops if o.is_kernel}
    for i, o in enumerate(ops):
        if o.kind in ("notify", "memory_write"):
            prev = next((p for p in reversed(ops[:i]) if p.is_kernel and p.stream == o.stream), None)
            if prev is not None and o.event is not None:
                out[prev.index][0].append(o.event)
        elif o.kind in ("wait", "memory_wait"):
            nxt = next((p for p in ops[i + 1 :] if p.is_kernel and p.stream == o.stream), None)
            if nxt is not None and o.event is not None:
                out[nxt.index][1].append(o.event)
    return out


def kernel_name(scope_id: int, scope_name: str) -> str:
    return "sk_" + re.sub(r"[^0-9A-Za-z_]", "_", f"{scope_id}_{scope_name}")


def sk_sources(model: SimModel, planned: Planned, pid: int) -> dict[str, str]:
    """``<kernel>_<pid>_kernel.cpp`` → generated source, one per planned SK with kernels."""
    by_id = {o.node_id: o for o in model.ops}
    out: dict[str, str] = {}
    for i, scope in enumerate(planned.plan.scopes):
        ops = [by_id[n] for n in scope.node_ids]
        kernels = [o for o in ops if o.is_kernel]
        if not kernels:
            continue
        ev = _events(ops)
        child_ops = tuple(
            ChildOp(
                _info(o),
                stream_id=o.stream,
                send_event_list=tuple(ev[o.index][0]),
                recv_event_list=tuple(ev[o.index][1]),
                source=o.name,
            )  # fmt: skip
            for o in kernels
        )
        name = kernel_name(i + 1, planned.names.get(scope.scope_flags, "scope"))
        options = "stream-fusion=1" if len({o.stream for o in kernels}) > 1 else ""
        try:
            res = generate_superkernel(SkRequest(name, child_ops, options=options, soc=SOC))
        except (FusionInputError, ValueError) as e:
            raise SimError(model.path, "ops", f"SK {i} ({name}) cannot be generated: {e}") from None
        out[f"{name}_{pid}_kernel.cpp"] = res.source
    return out
