"""The emulator's two entry points: :func:`run_job` (what a real job leaves behind) and
:func:`write_scene` (a complete failure scene folder for ``skdbg analyze``).

Why two: a re-launch runs a *job* — the plog lands under ``$ASCEND_PROCESS_LOG_PATH`` and the
metadata under the job's cwd, and collecting them into a scene is skdbg's own work (relaunch /
collect). Tests, demos and benchmarks want the scene directly, with its run.json, env probe and
source, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from skdbg.atomic import staged_dir
from skdbg.codegen.fusion.plan_model import Plan
from skdbg.parsers.run_identity import format_time
from skdbg.scenebuilder import jsonart
from skdbg.scenebuilder.scene import build_scene
from skdbg.sim.errors import SimError
from skdbg.sim.execute import Outcome, debug_of, execute
from skdbg.sim.ops import SimModel
from skdbg.sim.planning import Planned, plan_model
from skdbg.sim.profile import write_prof
from skdbg.sim.render import Clock, scene_spec
from skdbg.sim.scopes import op_scopes
from skdbg.sim.timing import latency_us

DIALECTS = ("D0", "D1", "D2", "D3", "D4", "D5")
#: SimResult.outcome of each execution result
_OUTCOME = {
    "clean": "clean",
    "sk_fault": "device_fault",
    "non_sk_fault": "device_fault",
    "hang": "hang",
    "wrong_result": "wrong_result",
}


@dataclass(frozen=True)
class SimResult:
    """What one emulated run produced (``fused``: op names per SK, in launch order)."""

    pid: int
    outcome: str  # device_fault | hang | wrong_result | clean
    exit_status: int
    message: str
    plog: Path
    sk_meta: Path | None
    fused: list[list[str]] = field(default_factory=list)
    culprit: str | None = None  # the op the fault showed in (None: clean, entry code, circular wait)
    latency_us: float | None = None  # emulated end-to-end latency of a clean run (skdbg.sim.timing)


#: the fail reason of every node when the options turn SK fusion off (no SK pass ran)
REASON_OPTIMIZE_OFF = "SUPER_KERNEL_OPTIMIZE_OFF"


@dataclass(frozen=True)
class _Emulated:
    planned: Planned
    outcome: Outcome
    source_text: str
    options: dict[str, Any]


def _options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"super_kernel_optimize_options": {}, "super_kernel_debug_options": {}}
    for key, value in (options or {}).items():
        if key == "super_kernel_optimize":  # False: the SK pass does not run (a timed baseline)
            if not isinstance(value, bool):
                raise SimError(Path("<options>"), key, f"expected true or false, got {value!r}")
            out[key] = value
            continue
        if key not in out:
            raise SimError(Path("<options>"), key, f"unknown option map; known: {', '.join(out)}")
        if not isinstance(value, Mapping):
            raise SimError(Path("<options>"), key, f"expected a map of options, got {value!r}")
        out[key] = dict(value)
    return out


def emulate(
    model: SimModel, *, source: Path | None, seed: int, options: Mapping[str, Any] | None
) -> _Emulated:
    """Markers → plan → execute (no files written)."""
    opts = _options(options)
    scopes, text = op_scopes(model, source)
    planned = plan_model(model, scopes, opts)
    if opts.get("super_kernel_optimize") is False:
        # SK fusion off: every op launches on its own, whatever the markers say
        plan = planned.plan
        planned = replace(
            planned, plan=Plan(plan.dag, (), {n.node_id: REASON_OPTIMIZE_OFF for n in plan.dag.nodes}, ())
        )
    outcome = execute(model, planned, seed=seed, debug=debug_of(opts))
    return _Emulated(planned, outcome, text, opts)


def _fused(model: SimModel, planned: Planned) -> list[list[str]]:
    by_id = {o.node_id: o.name for o in model.ops}
    return [[by_id[n] for n in s.node_ids] for s in planned.plan.scopes]


def _exit(outcome: Outcome) -> int:
    return 0 if outcome.result == "clean" else 1


def _build(
    model: SimModel,
    em: _Emulated,
    dest: Path,
    *,
    pid: int,
    clock: Clock,
    dialect: str,
    seed: int,
    profiling: bool = False,
) -> Path:
    """Build the device-side files into ``dest`` (log/plog/…, sk_meta/<pid>/…); returns the plog."""
    if dialect not in DIALECTS:
        raise SimError(
            Path("<dialect>"), "dialect", f"expected one of {', '.join(DIALECTS)}, got {dialect!r}"
        )
    spec = scene_spec(model, em.planned, em.outcome, debug_of(em.options), pid=pid, clock=clock, dialect=dialect,
                      seed=seed, options=em.options, profiling=profiling)  # fmt: skip
    plog = build_scene(spec, dest).plog
    if profiling and em.planned.plan.scopes:
        write_prof(dest / "sk_meta" / str(pid), model, em.planned, em.outcome,
                   reorder=debug_of(em.options).reorder)  # fmt: skip
    return plog


def run_job(
    model: SimModel,
    *,
    source: Path | None,
    log_dir: Path,
    cwd: Path,
    seed: int,
    options: Mapping[str, Any],
    save_kernel_meta: bool,
    pid: int | None = None,
    dialect: str = "D5",
    profiling: bool = False,
) -> SimResult:
    """Run the model as a job: the plog goes to ``log_dir/debug/plog/``, ``sk_meta/<pid>/`` into
    ``cwd`` (only with ``save_kernel_meta``, as ``ASCEND_OP_COMPILE_SAVE_KERNEL_META=1`` decides;
    ``profiling`` — a valid ``ASCEND_PROF_SK_ON`` — adds ``sk_meta/<pid>/sk_prof_device_<d>.json``
    either way)."""
    em = emulate(model, source=source, seed=seed, options=options)
    pid = os.getpid() if pid is None else pid
    clock = Clock.ending(datetime.now())
    plog_dir = Path(log_dir) / "debug" / "plog"
    plog_dir.mkdir(parents=True, exist_ok=True)
    # staged outside the log and work folders: a job killed mid-write leaves nothing a collector could pick up
    with tempfile.TemporaryDirectory(prefix="skdbg-sim-") as tmp:
        staged = _build(
            model, em, Path(tmp), pid=pid, clock=clock, dialect=dialect, seed=seed, profiling=profiling
        )
        plog = plog_dir / staged.name
        shutil.move(str(staged), str(plog))
        meta_src = Path(tmp) / "sk_meta" / str(pid)
        meta: Path | None = None
        if not save_kernel_meta and meta_src.is_dir():  # the recorder's file only, no model_* folders
            for sub in list(meta_src.iterdir()):
                if not sub.name.startswith("sk_prof_device_"):
                    shutil.rmtree(sub) if sub.is_dir() else sub.unlink()
        if meta_src.is_dir() and any(meta_src.iterdir()):
            meta = Path(cwd) / "sk_meta" / str(pid)
            if meta.exists():
                raise SimError(meta, "", "already exists: sk_meta of a process with the same pid")
            meta.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(meta_src), str(meta))
    latency = (
        latency_us(model, [s.node_ids for s in em.planned.plan.scopes], seed=seed, pid=pid)
        if em.outcome.result == "clean"
        else None
    )
    return SimResult(pid, _OUTCOME[em.outcome.result], _exit(em.outcome), em.outcome.message, plog, meta,
                     _fused(model, em.planned), em.outcome.culprit.name if em.outcome.culprit else None,
                     latency)  # fmt: skip


def _seed_pid(seed: int) -> int:
    return 20000 + (seed * 7919) % 40000


def _fingerprint(text: str, options: Mapping[str, Any]) -> str:
    blob = text.encode() + json.dumps(options, sort_keys=True).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]


def _run_doc(model: SimModel, em: _Emulated, *, pid: int, clock: Clock, seed: int) -> dict[str, Any]:
    res = em.outcome.result
    phase = {"sk_fault": "device_fault", "non_sk_fault": "device_fault", "hang": "hang",
             "wrong_result": "correctness"}.get(res)  # fmt: skip
    names = sorted(set(em.planned.names.values()))
    doc: dict[str, Any] = {
        "experiment_id": "SIM",
        "round_id": "SIM-BASE",
        "attempt": 1,
        "command": f"python -m skdbg.sim job {model.root.name} --seed {seed}",
        "cwd": ".",
        "rank": model.rank,
        "device": model.device,
        "pid": pid,
        "start": format_time(clock.start),
        "end": format_time(clock.end),
        "exit": {"status": _exit(em.outcome), "signal": None, "timeout": False},
        "candidate": {
            "scope_names": names,
            "marker_file": "src/model.py",
            "super_kernel_optimize_options": em.options["super_kernel_optimize_options"],
            "super_kernel_debug_options": em.options["super_kernel_debug_options"],
            "source_revision": "sim-" + hashlib.sha256(em.source_text.encode()).hexdigest()[:8],
            "config_fingerprint": _fingerprint(em.source_text, em.options),
        },
        "env_probe": "env/check_environment.json",
        "source_sites": "source_sites.json",
        "cache_writers": {},
        "failing_path": {"model": model.name, "step": 1},  # one forward of the model is the whole path
    }
    if phase is not None:
        doc["failure_phase"] = phase
    return doc


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def write_scene(
    model: SimModel,
    out: Path,
    *,
    source: Path | None = None,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    dialect: str = "D5",
    pid: int | None = None,
    run: Mapping[str, Any] | None = None,
    force: bool = False,
    profiling: bool = False,
) -> SimResult:
    """Write a complete scene folder (plog, sk_meta, run.json, env probe, src/model.py,
    source_sites.json) for one emulated run; atomic: the folder appears whole or not at all."""
    em = emulate(model, source=source, seed=seed, options=options)
    pid = _seed_pid(seed) if pid is None else pid
    clock = Clock.fixed(seed)
    out = Path(out)
    with staged_dir(out, force=force) as tmp:
        plog = _build(model, em, tmp, pid=pid, clock=clock, dialect=dialect, seed=seed, profiling=profiling)
        src = tmp / "src" / "model.py"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(em.source_text, encoding="utf-8", newline="\n")
        sites = _sites(model, em.source_text)
        jsonart.write_source_sites(tmp / "source_sites.json", sites)
        jsonart.write_run_json(tmp / "run.json", _merge(_run_doc(model, em, pid=pid, clock=clock, seed=seed),
                                                       run or {}))  # fmt: skip
        jsonart.write_env_probe(tmp / "env" / "check_environment.json", jsonart.env_probe())
        plog_rel = plog.relative_to(tmp)
    meta = out / "sk_meta" / str(pid)
    return SimResult(pid, _OUTCOME[em.outcome.result], _exit(em.outcome), em.outcome.message, out / plog_rel,
                     meta if meta.is_dir() else None, _fused(model, em.planned),
                     em.outcome.culprit.name if em.outcome.culprit else None)  # fmt: skip


def _sites(model: SimModel, text: str) -> dict[int, int]:
    """nodeId → line of its statement in the source the run used (pristine lines mapped)."""
    from skdbg.sim.scopes import map_lines

    if text == model.marker_text:
        return {o.node_id: o.line for o in model.ops}
    mapping = map_lines(model.marker_text, text)
    return {o.node_id: mapping[o.line] for o in model.ops}
