"""``perf.json`` of a re-launched attempt: the clean timed runs gate V5 compares (triage.md §5.1).

Why a file of the scene: V5 needs "≥ 3 independent clean candidate processes vs the frozen baseline,
diagnostics/profiler/metadata dump off; mean threshold plus P90 and standard-deviation
non-regression". No runtime artifact carries that, so ``skdbg relaunch --perf-runs K`` measures it —
baseline and candidate processes interleaved, so drift hits both alike — and writes this document next to
``run.json``. Frozen with the attempt (SHA-256), it is the evidence V5 cites, and re-verifying reads the
same numbers. The thresholds travel with the samples: the gate applies what was declared when
measuring, never a default chosen later.

Shape (``schema: skdbg.perf/1``)::

    {"schema": "skdbg.perf/1",
     "metric": {"name": "e2e_latency_us", "unit": "us", "source": "job line SKDBG_METRIC"},
     "criteria": {"mean": 0.0, "p90": 0.02, "std": 0.5},
     "conditions": {"kernel_meta": false, "debug_options": {}, "profiling": false},
     "baseline": {"what": "super_kernel_optimize off", "runs": [{"value": 812.4, "exit": 0, "pid": 7}, …]},
     "candidate": {"what": "the candidate, clean", "runs": [{"value": 640.2, "exit": 0, "pid": 8}, …]}}

Lower values are better (a latency or a duration). ``criteria`` are relative tolerances: the
candidate's mean may exceed the baseline's by at most ``mean`` (0.0: no regression at all), its P90 by
at most ``p90``, and its standard deviation may be at most ``1 + std`` times the baseline's (plus 1% of
the baseline mean, so two near-constant series do not fail on rounding).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from skdbg.parsers.common import ParseError
from skdbg.parsers.jsonload import as_list, as_object, get_str, is_int, join, load_json, show

SCHEMA = "skdbg.perf/1"
#: the least number of clean processes per side V5 accepts (triage.md §5.1)
MIN_RUNS = 3
DEFAULT_CRITERIA = {"mean": 0.0, "p90": 0.02, "std": 0.5}
#: the absolute slack of the std comparison, as a fraction of the baseline mean
STD_FLOOR = 0.01


@dataclass(frozen=True)
class PerfRun:
    value: float
    exit: int
    pid: int | None


@dataclass(frozen=True)
class PerfSide:
    what: str
    runs: tuple[PerfRun, ...]

    @property
    def values(self) -> list[float]:
        return [r.value for r in self.runs]


@dataclass(frozen=True)
class PerfRecord:
    file: str
    metric: str
    unit: str
    source: str
    criteria: dict[str, float]
    kernel_meta: bool
    profiling: bool
    debug_options: dict[str, object]
    baseline: PerfSide
    candidate: PerfSide


@dataclass(frozen=True)
class SeriesStats:
    n: int
    mean: float
    p90: float
    std: float

    def show(self, unit: str) -> str:
        return f"n={self.n} mean {self.mean:.4g}{unit} P90 {self.p90:.4g}{unit} std {self.std:.3g}{unit}"


def p90(values: Sequence[float]) -> float:
    """The nearest-rank 90th percentile: the smallest value with at least 90% of the series at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def series_stats(values: Sequence[float]) -> SeriesStats:
    return SeriesStats(
        n=len(values),
        mean=statistics.fmean(values),
        p90=p90(values),
        std=statistics.stdev(values) if len(values) > 1 else 0.0,
    )


def _number(value: object, file: str, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParseError(file, f"a finite number at {path}", got=show(value))
    return float(value)


def _side(doc: dict[str, object], key: str, file: str) -> PerfSide:
    obj = as_object(doc.get(key), file, key)
    runs: list[PerfRun] = []
    for i, item in enumerate(as_list(obj.get("runs"), file, join(key, "runs"))):
        path = join(join(key, "runs"), i)
        run = as_object(item, file, path)
        value = _number(run.get("value"), file, join(path, "value"))
        if value < 0:
            raise ParseError(file, f"a non-negative measurement at {join(path, 'value')}", got=show(value))
        code = run.get("exit")
        if not is_int(code):
            raise ParseError(
                file, f"the process exit status (an integer) at {join(path, 'exit')}", got=show(code)
            )
        pid = run.get("pid")
        if pid is not None and not is_int(pid):
            raise ParseError(file, f"an integer pid at {join(path, 'pid')}", got=show(pid))
        runs.append(PerfRun(value, int(str(code)), int(str(pid)) if pid is not None else None))
    return PerfSide(get_str(obj, "what", file, key) or key, tuple(runs))


def read_perf(path: str | os.PathLike[str]) -> PerfRecord:
    """Read and check ``perf.json``; :class:`ParseError` names the file and the JSON path of a bad field."""
    file, raw = load_json(path, what="a skdbg.perf/1 document")
    doc = as_object(raw, file, "$")
    if doc.get("schema") != SCHEMA:
        raise ParseError(file, f'"schema": "{SCHEMA}"', got=show(doc.get("schema")))
    metric = as_object(doc.get("metric"), file, "metric")
    criteria_doc = as_object(doc.get("criteria", DEFAULT_CRITERIA), file, "criteria")
    criteria = dict(DEFAULT_CRITERIA)
    for key, value in criteria_doc.items():
        if key not in DEFAULT_CRITERIA:
            raise ParseError(file, f"a criterion among {sorted(DEFAULT_CRITERIA)} at criteria", got=key)
        tol = _number(value, file, join("criteria", key))
        if tol < 0:
            raise ParseError(file, f"a non-negative tolerance at {join('criteria', key)}", got=show(value))
        criteria[key] = tol
    cond = as_object(doc.get("conditions", {}), file, "conditions")
    debug = as_object(cond.get("debug_options", {}), file, "conditions.debug_options")
    return PerfRecord(
        file=file,
        metric=get_str(metric, "name", file, "metric") or "value",
        unit=get_str(metric, "unit", file, "metric") or "",
        source=get_str(metric, "source", file, "metric") or "",
        criteria=criteria,
        kernel_meta=bool(cond.get("kernel_meta", False)),
        profiling=bool(cond.get("profiling", False)),
        debug_options=dict(debug),
        baseline=_side(doc, "baseline", file),
        candidate=_side(doc, "candidate", file),
    )


@dataclass(frozen=True)
class PerfVerdict:
    """Gate V5 on one record: ``passed`` is None when the record cannot decide (too few clean runs)."""

    passed: bool | None
    detail: str
    baseline: SeriesStats | None = None
    candidate: SeriesStats | None = None


def judge(rec: PerfRecord) -> PerfVerdict:
    """V5's comparison (module docstring): clean conditions, enough runs, then mean / P90 / std."""
    dirty = [
        what
        for what, on in (
            ("the metadata dump (ASCEND_OP_COMPILE_SAVE_KERNEL_META)", rec.kernel_meta),
            ("the SK profiler", rec.profiling),
            (f"debug options {rec.debug_options}", bool(rec.debug_options)),
        )
        if on
    ]
    if dirty:
        return PerfVerdict(False, f"not clean runs: {', '.join(dirty)} on (V5 needs them off)")
    for side in (rec.baseline, rec.candidate):
        bad = [r for r in side.runs if r.exit != 0]
        if bad:
            return PerfVerdict(
                False,
                f"{side.what}: {len(bad)} of {len(side.runs)} process(es) did not exit 0 (pid {bad[0].pid})",
            )
        if len(side.runs) < MIN_RUNS:
            return PerfVerdict(
                None, f"{side.what}: {len(side.runs)} clean process(es), V5 needs >= {MIN_RUNS}"
            )
    base, cand = series_stats(rec.baseline.values), series_stats(rec.candidate.values)
    c = rec.criteria
    u = rec.unit
    problems = []
    if cand.mean > base.mean * (1 + c["mean"]):
        problems.append(f"mean {cand.mean:.4g}{u} > {base.mean:.4g}{u} × {1 + c['mean']:g}")
    if cand.p90 > base.p90 * (1 + c["p90"]):
        problems.append(f"P90 {cand.p90:.4g}{u} > {base.p90:.4g}{u} × {1 + c['p90']:g}")
    if cand.std > base.std * (1 + c["std"]) + STD_FLOOR * base.mean:
        problems.append(
            f"std {cand.std:.3g}{u} > {base.std:.3g}{u} × {1 + c['std']:g} + {STD_FLOOR:.0%} of the mean"
        )
    shown = f"{rec.metric}: candidate {cand.show(u)} vs baseline ({rec.baseline.what}) {base.show(u)}"
    if problems:
        return PerfVerdict(False, f"regression: {'; '.join(problems)} ({shown})", base, cand)
    return PerfVerdict(True, f"no regression: {shown}", base, cand)


__all__ = [
    "DEFAULT_CRITERIA",
    "MIN_RUNS",
    "SCHEMA",
    "PerfRecord",
    "PerfRun",
    "PerfSide",
    "PerfVerdict",
    "SeriesStats",
    "judge",
    "p90",
    "read_perf",
    "series_stats",
]
