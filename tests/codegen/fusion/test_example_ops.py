"""The README's JIT example: ``skdbg codegen superkernel examples/superkernel/ops.json -o DIR``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main

OPS = Path(__file__).resolve().parents[3] / "examples" / "superkernel" / "ops.json"


def test_bundled_ops_json_generates_source_json_and_flags(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["codegen", "superkernel", str(OPS), "-o", str(tmp_path / "sk")])
    assert res.exit_code == 0, res.stderr
    flags = res.stdout.split()
    assert "-D__ASCENDC_ENABLE_SET_NEXT_TASK_START" in flags and "-g" in flags
    source = (tmp_path / "sk" / "te_superkernel_decoder_mlp_kernel.cpp").read_text(encoding="utf-8")
    assert "rms_norm__kernel0_middle" in source and "swiglu__kernel0_middle" in source
    assert ".ascend.meta" in source
    compiled = json.loads((tmp_path / "sk" / "te_superkernel_decoder_mlp.json").read_text(encoding="utf-8"))
    assert compiled["kernelName"].startswith("te_superkernel_decoder_mlp")
