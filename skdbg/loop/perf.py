"""Gate V5's measurement: K clean baseline and candidate processes, interleaved, into ``perf.json``.

Why here: V5 (triage.md §5.1) asks for "≥ 3 independent clean candidate processes vs the frozen baseline,
diagnostics/profiler/metadata dump off". Only a launcher can produce that, so ``skdbg relaunch
--perf-runs K`` does, right after the evidence run:

* **clean**: no ``ASCEND_OP_COMPILE_SAVE_KERNEL_META``, no ``ASCEND_PROF_SK_ON``, empty
  ``super_kernel_debug_options`` in the options file — a measurement with the dump or a debug option
  on would time the instrumentation;
* **baseline**: the same source and command with ``"super_kernel_optimize": false`` in the options
  file (the job's SK fusion off), so the candidate is compared with what the model does without it;
  the job is told its role in ``SKDBG_PERF_ROLE`` (``baseline`` / ``candidate``);
* **interleaved** (baseline, candidate, baseline, …): drift on a shared machine hits both alike;
* **the metric**: the last line of the job's output matching ``SKDBG_METRIC <name>=<number> [unit]``
  (what the emulator prints; any job can print it), else the process's wall time in seconds.

Each process's output goes to ``perf/<role>-<n>.log`` in the attempt folder. The document lands in the scene as
``perf.json`` (parsed by :mod:`skdbg.parsers.perf_samples`), is frozen with the attempt, and gate V5
reads it there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skdbg.loop.runner import RunOutcome, RunSpec, run
from skdbg.parsers.perf_samples import DEFAULT_CRITERIA, MIN_RUNS, SCHEMA

ROLE_ENV = "SKDBG_PERF_ROLE"
#: ``SKDBG_METRIC e2e_latency_us=812.4 us``: name, value and an optional unit
METRIC_RE = re.compile(
    rb"^.*?SKDBG_METRIC\s+(?P<name>[A-Za-z_][\w.]*)=(?P<value>[-+0-9.eE]+)(?:[ \t]+(?P<unit>\S+))?"
)
#: environment variables that turn instrumentation on; removed for the timed runs
INSTRUMENTATION_ENV = ("ASCEND_OP_COMPILE_SAVE_KERNEL_META", "ASCEND_PROF_SK_ON")


class PerfError(Exception):
    """A timed run could not be measured (it failed, or printed no usable metric where one was printed before)."""


@dataclass(frozen=True)
class Measured:
    value: float
    name: str
    unit: str
    source: str
    outcome: RunOutcome


def _metric(output: bytes) -> tuple[str, float, str] | None:
    found = None
    for line in output.splitlines():
        m = METRIC_RE.match(line)
        if m is not None:
            try:
                found = (m["name"].decode(), float(m["value"]), (m["unit"] or b"").decode())
            except ValueError:
                continue
    return found


def clean_env(env: Mapping[str, str], options_file: Path, role: str) -> dict[str, str]:
    """``env`` with the instrumentation switched off, the role and the timed run's options file."""
    out = {k: v for k, v in env.items() if k not in INSTRUMENTATION_ENV}
    out["SKDBG_NPUGRAPH_EX_OPTIONS"] = str(options_file)
    out[ROLE_ENV] = role
    return out


def _measure(spec: RunSpec) -> Measured:
    outcome = run(spec)
    output = spec.log.read_bytes() if spec.log.is_file() else b""
    wall = (outcome.end - outcome.start).total_seconds()
    got = _metric(output)
    if got is None:
        return Measured(wall, "wall_time", "s", "process wall time (no SKDBG_METRIC line)", outcome)
    name, value, unit = got
    return Measured(value, name, unit, "job line SKDBG_METRIC", outcome)


def measure(
    *,
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    folder: Path,
    options: Mapping[str, Any],
    runs: int,
    timeout: float | None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run ``runs`` baseline and ``runs`` candidate processes, interleaved; return the perf.json document.

    ``options`` are the candidate's (their debug options are dropped: the timed runs are clean)."""
    if runs < MIN_RUNS:
        raise PerfError(f"--perf-runs: V5 needs at least {MIN_RUNS} runs per side, got {runs}")
    cand_opts = {**options, "super_kernel_debug_options": {}}
    base_opts = {**cand_opts, "super_kernel_optimize": False}
    files = {}
    for role, opts in (("baseline", base_opts), ("candidate", cand_opts)):
        files[role] = folder / f"perf-options-{role}.json"
        files[role].write_text(json.dumps(opts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    logs = folder / "perf"
    logs.mkdir(exist_ok=True)
    sides: dict[str, list[dict[str, Any]]] = {"baseline": [], "candidate": []}
    metric: tuple[str, str, str] | None = None
    for i in range(runs):
        for role in ("baseline", "candidate"):
            if progress is not None:
                progress(f"V5 timed run {i + 1}/{runs}: {role}")
            m = _measure(
                RunSpec(
                    argv=argv,
                    cwd=cwd,
                    env=clean_env(env, files[role], role),
                    log=logs / f"{role}-{i + 1}.log",
                    timeout=timeout,
                )
            )
            if metric is None:
                metric = (m.name, m.unit, m.source)
            elif (m.name, m.unit) != metric[:2]:
                raise PerfError(
                    f"{role} run {i + 1} reported {m.name} ({m.unit or 'no unit'}), the first run {metric[0]}: "
                    "the timed runs must measure the same thing"
                )
            sides[role].append({"value": m.value, "exit": m.outcome.status if m.outcome.status is not None else -1,
                                "pid": m.outcome.pid, "signal": m.outcome.signal})  # fmt: skip
    assert metric is not None
    return {
        "schema": SCHEMA,
        "metric": {"name": metric[0], "unit": metric[1], "source": metric[2]},
        "criteria": dict(DEFAULT_CRITERIA),
        "conditions": {"kernel_meta": False, "profiling": False, "debug_options": {}},
        "baseline": {"what": "the same job with super_kernel_optimize off", "runs": sides["baseline"]},
        "candidate": {"what": "the candidate, clean", "runs": sides["candidate"]},
    }


__all__ = ["METRIC_RE", "ROLE_ENV", "Measured", "PerfError", "clean_env", "measure"]
