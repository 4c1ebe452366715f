"""The emulator model ``skdbg demo`` runs: one decoder layer fused into a SuperKernel, and its stories.

Why in the package and not under ``examples/``: the demo must run from an installed wheel, which ships
no examples. The model is a toy decoder layer — nine graph nodes on two streams with an event pair, one
named scope — written as an ordinary emulator model (``model.json`` + ``src/model.py``, docs/sim.md);
each *story* is the fault the emulated device injects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCOPE = "decoder.layer.0"


@dataclass(frozen=True)
class Story:
    """One demo scenario: the injected fault and what the user should see happen."""

    name: str
    fault: dict[str, Any]
    summary: str


STORIES: dict[str, Story] = {
    s.name: s
    for s in (
        Story(
            "fused",
            {"kind": "fused", "op": "swiglu"},
            "SwiGlu faults only while it is fused: excluding it from the SK fixes the run",
        ),
        Story(
            "operator",
            {"kind": "operator", "op": "swiglu"},
            "SwiGlu itself is broken: excluded, it still faults — outside the SK, an operator bug",
        ),
        Story(
            "interaction",
            {"kind": "interaction", "ops": ["attention", "swiglu"]},
            "the fault needs attention and SwiGlu in one SK: taking one out separates them",
        ),
        Story(
            "flaky",
            {"kind": "flaky", "op": "swiglu", "probability": 0.5},
            "SwiGlu faults in about half of the fused runs",
        ),
        Story(
            "hang",
            {"kind": "unmatched_wait", "op": "ev1_wait"},
            "a core waits on an event nobody sets: the SK hangs until the stream times out",
        ),
        Story(
            "circular",
            {"kind": "circular_wait", "ops": ["qkv_matmul", "swiglu"]},
            "two cores wait on each other: a circular wait hangs the SK",
        ),
        Story(
            "wrong-result",
            {"kind": "wrong_result", "op": "swiglu"},
            "no fault at all, only a wrong output: nothing names a child, so skdbg bisects the scope",
        ),
        Story(
            "entry",
            {"kind": "entry"},
            "the fault is in the SK entry code itself, not in any child",
        ),
    )
}
#: the story ``skdbg demo --bisect`` starts from when no ``--fault`` is given (a low-confidence failure)
BISECT_STORY = "wrong-result"

_HEAD = '''"""Decoder layer 0 of a toy model (written by skdbg demo): one SuperKernel scope, nine graph nodes.

The emulator model next to this file (../model.json) ties every graph node to the line of its
statement here; the scope markers below decide what the runtime fuses.
"""

import torch
import torch_npu


class DecoderLayer(torch.nn.Module):
    def forward(self, x, side):
        ev1 = torch.npu.Event()
'''

#: (op fields, statement) in program order; ``line`` is filled in from the statement's position
_OPS: tuple[tuple[dict[str, Any], str], ...] = (
    (
        {"name": "rms_norm", "op_type": "RmsNorm", "kernel_type": "AIV", "block_dim": 48, "stream": 0},
        "h = torch_npu.npu_rms_norm(x)",
    ),
    (
        {"name": "qkv_matmul", "op_type": "QuantMatmul", "kernel_type": "AIC", "block_dim": 24, "stream": 0},
        "qkv = torch_npu.npu_quant_matmul(h)",
    ),
    ({"name": "ev1_record", "kind": "notify", "event": 1, "stream": 0}, "ev1.record()"),
    ({"name": "ev1_wait", "kind": "wait", "event": 1, "stream": 1}, "ev1.wait(side)"),
    (
        {"name": "rope", "op_type": "RotaryMul", "kernel_type": "AIV", "block_dim": 40, "stream": 1},
        "r = torch_npu.npu_rotary_mul(qkv, stream=side)",
    ),
    (
        {
            "name": "attention",
            "op_type": "FusedInferAttentionScore",
            "kernel_type": "MIX",
            "block_dim": 20,
            "stream": 0,
        },
        "a = torch_npu.npu_fused_infer_attention_score(qkv, r)",
    ),
    (
        {"name": "swiglu", "op_type": "SwiGlu", "kernel_type": "AIV", "block_dim": 48, "stream": 0},
        "g = torch_npu.npu_swiglu(a)",
    ),
    (
        {"name": "down_matmul", "op_type": "QuantMatmul", "kernel_type": "AIC", "block_dim": 24, "stream": 0},
        "d = torch_npu.npu_quant_matmul(g)",
    ),
    (
        {"name": "residual_add", "op_type": "Add", "kernel_type": "AIV", "block_dim": 48, "stream": 0},
        "y = torch_npu.npu_add(d, x)",
    ),
)


def demo_model(story: str) -> tuple[dict[str, Any], str]:
    """(``model.json`` document, ``src/model.py`` text) of the decoder layer with ``story``'s fault."""
    if story not in STORIES:
        raise ValueError(f"unknown demo story {story!r} (one of {', '.join(STORIES)})")
    lines = _HEAD.splitlines()
    lines.append(f'        torch.npu.super_kernel_scope_begin("{SCOPE}")')
    ops: list[dict[str, Any]] = []
    for fields, statement in _OPS:
        lines.append("        " + statement)
        ops.append({**fields, "line": len(lines)})
    lines.append(f'        torch.npu.super_kernel_scope_end("{SCOPE}")')
    lines.append("        return y")
    doc = {
        "name": f"demo_{story.replace('-', '_')}",
        "model_id": "48_1",
        "device": 0,
        "rank": 0,
        "ops": ops,
        "fault": dict(STORIES[story].fault),
    }
    return doc, "\n".join(lines) + "\n"


__all__ = ["BISECT_STORY", "SCOPE", "STORIES", "Story", "demo_model"]
