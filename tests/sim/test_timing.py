"""The emulated latency a timed run reports (gate V5's measurement, skdbg.sim.timing).

Expectations from the cost model's definition, computed by hand for a three-kernel scope:
Add (4 us), Mul (4 us), Cast (3 us), all at full width (48 blocks), launch 15 us, inter-child sync 1.5 us.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skdbg.sim import load_model, run_job
from skdbg.sim.errors import SimError
from skdbg.sim.models import write_model
from skdbg.sim.timing import latency_us

SOURCE = """import torch


def forward(x):
    torch.npu.super_kernel_scope_begin("s")
    a = add(x)
    b = mul(a)
    c = cast(b)
    torch.npu.super_kernel_scope_end("s")
    return c
"""
OPS = [
    {"name": "add", "op_type": "Add", "kernel_type": "AIV", "block_dim": 48, "stream": 0, "line": 6},
    {"name": "mul", "op_type": "Mul", "kernel_type": "AIV", "block_dim": 48, "stream": 0, "line": 7},
    {"name": "cast", "op_type": "Cast", "kernel_type": "AIV", "block_dim": 48, "stream": 0, "line": 8},
]


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return write_model(tmp_path / "m", {"name": "t", "ops": OPS, "fault": {"kind": "none"}}, SOURCE)


def _noise_free(value: float, seed: int, pid: int) -> float:
    import random

    return value / random.Random(f"skdbg.sim.timing:{seed}:{pid}").gauss(1.0, 0.004)


def test_one_sk_costs_one_launch(model_dir: Path) -> None:
    m = load_model(model_dir)
    ids = [op.node_id for op in m.ops]
    fused = _noise_free(latency_us(m, [ids], seed=1, pid=7), 1, 7)
    unfused = _noise_free(latency_us(m, [], seed=1, pid=7), 1, 7)
    assert fused == pytest.approx(15 + 4 + 4 + 3 + 2 * 1.5)
    assert unfused == pytest.approx(3 * 15 + 4 + 4 + 3)


def test_job_prints_the_metric_and_honours_optimize_off(model_dir: Path, tmp_path: Path) -> None:
    values = {}
    for role, opts in (("fused", {}), ("off", {"super_kernel_optimize": False})):
        options = tmp_path / f"{role}.json"
        options.write_text(json.dumps(opts))
        env = {
            **os.environ,
            "SKDBG_NPUGRAPH_EX_OPTIONS": str(options),
            "ASCEND_PROCESS_LOG_PATH": str(tmp_path / "log"),
        }
        proc = subprocess.run(
            [sys.executable, "-m", "skdbg.sim", "job", str(model_dir)],
            cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("SKDBG_METRIC "))
        name, value = line.split()[1].split("=")
        assert name == "emulated_e2e_latency_us" and line.endswith(" us")
        values[role] = float(value)
        assert ("SKs none" in proc.stdout) == (role == "off")
    # 29 us fused vs 56 us unfused, within the 0.4% noise
    assert values["fused"] == pytest.approx(29.0, rel=0.03) and values["off"] == pytest.approx(56.0, rel=0.03)


def test_optimize_must_be_a_bool(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(SimError, match="super_kernel_optimize"):
        run_job(load_model(model_dir), source=None, log_dir=tmp_path / "log", cwd=tmp_path, seed=0,
                options={"super_kernel_optimize": "no"}, save_kernel_meta=False)  # fmt: skip


def test_a_failing_run_reports_no_latency(tmp_path: Path) -> None:
    d = write_model(
        tmp_path / "f", {"name": "t", "ops": OPS, "fault": {"kind": "fused", "op": "mul"}}, SOURCE
    )
    res = run_job(load_model(d), source=None, log_dir=tmp_path / "log", cwd=tmp_path, seed=0, options={},
                  save_kernel_meta=False)  # fmt: skip
    assert res.outcome == "device_fault" and res.latency_us is None
