"""Decoder layer 0 of a toy model: one SuperKernel scope over nine graph nodes on two streams.

The emulator model next to this file (../model.json) ties every graph node to the line of its
statement here; the scope markers below decide what the runtime fuses.
"""

import torch
import torch_npu


class DecoderLayer(torch.nn.Module):
    def forward(self, x, side):
        ev1 = torch.npu.Event()
        torch.npu.super_kernel_scope_begin("decoder.layer.0")
        h = torch_npu.npu_rms_norm(x)
        qkv = torch_npu.npu_quant_matmul(h)
        ev1.record()
        ev1.wait(side)
        r = torch_npu.npu_rotary_mul(qkv, stream=side)
        a = torch_npu.npu_fused_infer_attention_score(qkv, r)
        g = torch_npu.npu_swiglu(a)
        d = torch_npu.npu_quant_matmul(g)
        y = torch_npu.npu_add(d, x)
        torch.npu.super_kernel_scope_end("decoder.layer.0")
        return y
