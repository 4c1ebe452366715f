"""Decoder MLP of the example scene: the SK scope decoder.layer.0.mlp fuses three children."""

import torch
import torch_npu
from custom_ops import add_custom


class DecoderMLP(torch.nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.RMSNorm(hidden)
        self.down = torch.nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, weight, scale, bias):
        h = self.norm(x)
        torch.npu.super_kernel_scope_begin("decoder.layer.0.mlp")
        a = torch_npu.npu_quant_matmul(h, weight, scale, output_dtype=torch.float16)
        b = add_custom(a, bias)
        c = b.to(torch.float32)
        torch.npu.super_kernel_scope_end("decoder.layer.0.mlp")
        return self.down(c)
