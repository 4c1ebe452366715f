"""Synthetic models: one named scope of ``n`` kernel children, a chosen culprit and fault kind.

Why: the bisection helper, the loop tests and the benchmarks need scopes of 8…512 (and 2,000)
children with the culprit at a chosen position, without committing hundreds of model files. The
result is an ordinary model (``model.json`` document + ``src/model.py`` text) that :func:`write_model`
puts on disk for :func:`skdbg.sim.load_model`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skdbg.atomic import write_tree
from skdbg.sim.ops import FAULT_KINDS

SCOPE = "synthetic.scope"
_OP_TYPES = ("Add", "Mul", "Cast", "RmsNorm", "SwiGlu", "RotaryMul", "QuantMatmul", "Gelu")
_HEAD = '''"""Synthetic model: one SuperKernel scope of {n} kernel children (written by skdbg.sim.models)."""

import torch
import torch_npu


class Model(torch.nn.Module):
    def forward(self, x0, side):
'''


def _culprits(culprit: int | Sequence[int], n: int, kind: str) -> list[int]:
    picks = [culprit] if isinstance(culprit, int) else list(culprit)
    for c in picks:
        if not 0 <= c < n:
            raise ValueError(f"culprit {c} out of range for {n} children")
    need = 2 if kind in ("interaction", "circular_wait") else (0 if kind == "none" else 1)
    if kind == "entry" and not picks:
        need = 0
    if len(picks) < need or (need == 1 and len(picks) != 1) or (need == 2 and len(picks) != 2):
        raise ValueError(f"a {kind} fault needs {need} culprit(s), got {picks}")
    return picks


def synthetic(
    n_children: int,
    culprit: int | Sequence[int],
    kind: str,
    streams: int = 1,
    seed: int = 0,
    *,
    probability: float = 0.5,
) -> tuple[dict[str, Any], str]:
    """(model.json document, src/model.py text) of one scope of ``n_children`` kernels.

    ``culprit``: kernel index (0-based) the fault hits, or two for ``interaction``/``circular_wait``
    (the first becomes AIC, the second AIV there). With ``streams`` > 1 every fourth kernel runs on a
    side stream behind an event pair. ``unmatched_wait`` puts an event pair right before the culprit
    and hangs on its wait."""
    if kind not in FAULT_KINDS:
        raise ValueError(f"kind must be one of {FAULT_KINDS}, got {kind!r}")
    if n_children < 1 or streams < 1:
        raise ValueError("n_children and streams must be >= 1")
    picks = _culprits(culprit, n_children, kind)
    rng = random.Random(f"skdbg.sim.synthetic:{seed}")
    lines = _HEAD.format(n=n_children).splitlines()
    lines.append("        ev = torch.npu.Event()")
    lines.append(f'        torch.npu.super_kernel_scope_begin("{SCOPE}")')
    ops: list[dict[str, Any]] = []
    event = 0
    fault_wait: str | None = None

    def stmt(text: str) -> int:
        lines.append("        " + text)
        return len(lines)

    def pair(stream: int) -> str:
        nonlocal event
        event += 1
        ops.append({"name": f"ev{event}_record", "kind": "notify", "event": event, "stream": 0,
                    "line": stmt(f"ev.record()  # event {event}")})  # fmt: skip
        name = f"ev{event}_wait"
        ops.append({"name": name, "kind": "wait", "event": event, "stream": stream,
                    "line": stmt(f"ev.wait(side)  # event {event}")})  # fmt: skip
        return name

    for k in range(n_children):
        stream = 0
        if streams > 1 and k % 4 == 3:
            stream = 1 + (k // 4) % (streams - 1)
        if kind == "unmatched_wait" and k == picks[0]:
            fault_wait = pair(stream)
        elif stream:
            pair(stream)
        op_type = rng.choice(_OP_TYPES)
        ktype = "AIC" if op_type == "QuantMatmul" else "AIV"
        if kind == "circular_wait" and k in picks:
            ktype = "AIC" if k == picks[0] else "AIV"
        line = stmt(f"x{k + 1} = torch_npu.npu_{op_type.lower()}(x{k})")
        ops.append({"name": f"k{k}", "op_type": op_type, "kernel_type": ktype,
                    "block_dim": 24 if ktype == "AIC" else 48, "stream": stream, "line": line})  # fmt: skip
    lines.append(f'        torch.npu.super_kernel_scope_end("{SCOPE}")')
    lines.append(f"        return x{n_children}")
    fault: dict[str, Any] = {"kind": kind}
    if kind == "unmatched_wait":
        fault["op"] = fault_wait
    elif kind in ("interaction", "circular_wait"):
        fault["ops"] = [f"k{picks[0]}", f"k{picks[1]}"]
    elif picks:
        fault["op"] = f"k{picks[0]}"
    if kind == "flaky":
        fault["probability"] = probability
    doc = {"name": f"synthetic_{n_children}", "ops": ops, "fault": fault}
    return doc, "\n".join(lines) + "\n"


def write_model(dest: Path, doc: dict[str, Any], source: str, *, force: bool = False) -> Path:
    """Write a model directory (``model.json`` + ``src/model.py``) atomically; returns ``dest``."""
    write_tree(
        dest,
        {"model.json": json.dumps(doc, indent=1) + "\n", "src/model.py": source},
        force=force,
    )
    return dest
