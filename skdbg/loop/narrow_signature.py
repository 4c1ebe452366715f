"""The bisection oracle: a run's failure signature, read from its frozen ``analysis.json``.

Why its own module: "does this probe still fail the same way, and in which half?" must be one
decision, used for the baseline re-runs and for every probe. The signature is the error class
(the fault kind, and whether the run hung: an SK device fault, an SK hang, a non-SK fault, a
failed exit without a fault line such as a wrong result …), the SK entry, the COND states of
the implicated cores and the child identity when the verdict names one. A probe that fails with
another error class, other COND states or another named child has *drifted* to a different failure:
it is reported, never followed. The SK entry is recorded but not compared — a half holding only
vector children is launched through another entry (``sk_entry_aiv…``) than the mixed original, so
its name legitimately changes; what must hold is that the fault is still in an SK (the error class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skdbg.parsers.fused_nodes import split_sk_func_name

_TRACE_SUFFIX = "_op_trace"


@dataclass(frozen=True, slots=True)
class Signature:
    """What the oracle compares. ``failed`` False: a clean run (the other fields are empty)."""

    failed: bool
    error_class: str  # "<fault kind>/<hang | fault | exit>", or "clean"
    entry: str | None
    scope: str | None  # scope name of the failing SK (from its SK function name)
    cond: tuple[str, ...]  # COND states of the implicated cores, sorted
    child: str | None  # funcName of the named child (high/medium verdicts only)
    confidence: str | None
    rule: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "error_class": self.error_class,
            "entry": self.entry,
            "scope": self.scope,
            "cond": list(self.cond),
            "child": self.child,
            "confidence": self.confidence,
            "rule": self.rule,
        }


def _get(doc: Mapping[str, Any], *path: str) -> Any:
    cur: Any = doc
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def signature_of(analysis: Mapping[str, Any]) -> Signature:
    """The signature of one frozen analysis (``skdbg.analysis`` JSON)."""
    kind = _get(analysis, "fault", "kind")
    phase = _get(analysis, "fault", "phase")
    timeout = bool(_get(analysis, "run", "exit", "timeout"))
    status = _get(analysis, "run", "exit", "status")
    signal = _get(analysis, "run", "exit", "signal")
    conf = _get(analysis, "verdict", "confidence")
    rule = _get(analysis, "verdict", "rule")
    # as the ledger reads a launch (triage.verify.launch_outcome): a fault, a timeout, a signal or a
    # non-zero exit — a wrong result has no fault line, only its exit status
    failed = kind not in (None, "none") or timeout or bool(signal) or status not in (None, 0)
    if not failed:
        return Signature(False, "clean", None, None, (), None, conf, rule)
    entry = _get(analysis, "fault", "entry")
    if isinstance(entry, str) and entry.endswith(_TRACE_SUFFIX):
        entry = entry[: -len(_TRACE_SUFFIX)]
    sk_name = _get(analysis, "fault", "sk_name")
    scope = split_sk_func_name(sk_name).scope_name if isinstance(sk_name, str) and sk_name else None
    cores = _get(analysis, "fault", "cores") or []
    cond = tuple(
        sorted(
            {
                str(c.get("cond_state"))
                for c in cores
                if isinstance(c, Mapping)
                and c.get("cond_state")
                and c.get("role") in ("implicated", "exception")
            }
        )
    )
    child = None
    if conf in ("high", "medium"):
        fn = _get(analysis, "verdict", "suspect", "func_name")
        child = fn if isinstance(fn, str) else None
    # the phase label may come from run.json (a launcher's guess, e.g. ``execution`` for any non-zero
    # exit): the class keeps what the evidence decides — the fault kind, and hang vs. not
    hang = timeout or phase in ("timeout", "hang")
    cls = f"{kind or 'none'}/{'hang' if hang else ('fault' if kind not in (None, 'none') else 'exit')}"
    return Signature(True, cls, entry if isinstance(entry, str) else None, scope, cond, child, conf, rule)


def drift_reason(base: Signature, probe: Signature) -> str | None:
    """Why a failing probe is a *different* failure than the baseline (None: the same one)."""
    if probe.error_class != base.error_class:
        return f"error class {probe.error_class} (baseline {base.error_class})"
    if base.cond and probe.cond and not set(base.cond) & set(probe.cond):
        return f"COND state {', '.join(probe.cond)} (baseline {', '.join(base.cond)})"
    if base.child and probe.child and base.child != probe.child:
        return f"named child {probe.child} (baseline {base.child})"
    return None


def classify(
    base: Signature,
    probe: Signature,
    names: Mapping[str, str],
    children: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, str]:
    """(outcome, why) of one probe run. ``names``: fused half scope name → group tag; ``children``:
    group tag → funcNames fused in it (to place a named child). Outcomes: ``pass`` (clean), the tag
    of the half that failed, ``fail`` (failed the same way, half unknown), ``drift``."""
    if not probe.failed:
        return "pass", "clean run"
    why = drift_reason(base, probe)
    if why is not None:
        return "drift", why
    if probe.scope is not None:
        if probe.scope in names:
            tag = names[probe.scope]
            return (tag if len(names) > 1 else "fail"), f"failing SK of scope {probe.scope!r}"
        return "drift", f"the failure moved to an SK of scope {probe.scope!r}, outside the probe's halves"
    if probe.child and children:
        tags = [t for t, fns in children.items() if probe.child in fns]
        if len(tags) == 1:
            return (tags[0] if len(names) > 1 else "fail"), f"named child {probe.child}"
    return "fail", "failed the same way; the failing SK is not resolved"


def majority(outcomes: Sequence[str]) -> str:
    """The outcome more than half of the runs agree on, else ``flaky``."""
    if not outcomes:
        raise ValueError("no runs")
    best = max(set(outcomes), key=lambda o: (outcomes.count(o), o))
    return best if outcomes.count(best) * 2 > len(outcomes) else "flaky"


__all__ = ["Signature", "classify", "drift_reason", "majority", "signature_of"]
