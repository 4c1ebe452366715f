"""``python -m skdbg.sim job MODEL_DIR [--source FILE] [--seed N]``: the emulator as a user's job.

Why a process: ``skdbg relaunch --sim`` must run the emulator through the same subprocess path as a
user's ARGV (own process group, timeout, collected artifacts), so the job reads what a real job reads —
``$ASCEND_PROCESS_LOG_PATH`` (default ``~/ascend/log``), ``ASCEND_OP_COMPILE_SAVE_KERNEL_META=1`` for
``sk_meta`` in the cwd, the npugraph_ex options file named by ``$SKDBG_NPUGRAPH_EX_OPTIONS`` — and its
pid is its own. Exit 0 clean, 1 device fault / wrong result / hang, 3 bad model or options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skdbg.sim.api import run_job
from skdbg.sim.errors import SimError
from skdbg.sim.load import load_model
from skdbg.sim.timing import METRIC

EXIT_BAD_INPUT = 3
ENV_OPTIONS = "SKDBG_NPUGRAPH_EX_OPTIONS"
ENV_SEED = "SKDBG_SIM_SEED"


def _options(env: Mapping[str, str]) -> dict[str, Any]:
    name = env.get(ENV_OPTIONS, "").strip()
    if not name:
        return {}
    path = Path(name)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SimError(path, "", f"cannot read the options file named by ${ENV_OPTIONS} ({e})") from None
    except json.JSONDecodeError as e:
        raise SimError(path, "", f"line {e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise SimError(path, "", "expected an object with super_kernel_*_options maps")
    for key, value in doc.items():
        if key == "super_kernel_optimize":
            if not isinstance(value, bool):
                raise SimError(path, key, f"expected true or false (SK fusion on or off), got {value!r}")
            continue
        if key not in ("super_kernel_optimize_options", "super_kernel_debug_options"):
            raise SimError(path, key, "unknown option; known: super_kernel_optimize (bool), "
                           "super_kernel_optimize_options, super_kernel_debug_options")  # fmt: skip
        if not isinstance(value, dict):
            raise SimError(path, key, f"expected a map of options, got {value!r}")
    return doc


def _profiling(raw: str) -> bool:
    """``ASCEND_PROF_SK_ON=<KB per core>``: a positive integer up to 5120 starts the recorder (artifacts.md
    §1.2); anything else leaves it off."""
    raw = raw.strip()
    return raw.isdigit() and 0 < int(raw) <= 5120


def _seed(arg: int | None, env: Mapping[str, str]) -> int:
    if arg is not None:
        return arg
    raw = env.get(ENV_SEED, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        raise SimError(Path(f"${ENV_SEED}"), ENV_SEED, f"expected an integer, got {raw!r}") from None


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(prog="python -m skdbg.sim", description="the SK device emulator")
    sub = parser.add_subparsers(dest="command", required=True)
    job = sub.add_parser("job", help="run a model as a job (writes plog and sk_meta like a device run)")
    job.add_argument("model_dir", type=Path)
    job.add_argument("--source", type=Path, default=None, help="an edited copy of the marker file")
    job.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        model = load_model(args.model_dir)
        log_root = Path(env.get("ASCEND_PROCESS_LOG_PATH") or Path.home() / "ascend" / "log")
        save = env.get("ASCEND_OP_COMPILE_SAVE_KERNEL_META", "").strip() == "1"
        prof = _profiling(env.get("ASCEND_PROF_SK_ON", ""))
        res = run_job(model, source=args.source, log_dir=log_root, cwd=Path.cwd(), seed=_seed(args.seed, env),
                      options=_options(env), save_kernel_meta=save, profiling=prof)  # fmt: skip
    except SimError as e:
        print(f"skdbg.sim: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sks = ", ".join(f"[{' '.join(f)}]" for f in res.fused) or "none"
    print(f"skdbg.sim: pid {res.pid}: {res.outcome}: {res.message}; SKs {sks}", flush=True)
    if res.latency_us is not None:
        # what a timed run measures (gate V5, skdbg relaunch --perf-runs): an emulated figure, named so
        print(f"SKDBG_METRIC {METRIC}={res.latency_us:.3f} us", flush=True)
    return res.exit_status
