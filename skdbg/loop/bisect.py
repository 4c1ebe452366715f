"""``skdbg bisect``: automatic N1 narrowing of a fused scope across re-launches, state in the ledger.

Why the ledger holds all state: a bisection is a chain of launches that may take hours and may be
killed at any point. Every launch is an attempt of a narrowing round ``<round>-N<k>`` whose proposal
body carries the probe's marker edits (``marker_edits``/``marker_file``, what ``relaunch`` applies) and
the bisection's bookkeeping (``bisect``: id, step, role, groups, parent). Re-running the command
reads those rounds back, replays their outcomes into :class:`~skdbg.loop.bisect_plan.Search` and
continues where it stopped — no state file, nothing to lose on ``kill -9``.

Order of work: refuse a high/n-a verdict (unless forced); plan the dependency-safe units of the failing
SK (:mod:`.narrow_scope`); re-run the baseline (``max(2, repeat)`` runs; not reproducible → ``flaky``
with the observed rate); then one probe per step, ``repeat`` runs each, majority outcome; a drifted
probe stops the search and is reported. The result names the isolated child (or the minimal pair),
grades it ``high`` (rule N1: the SK that fuses only it fails with the baseline signature) and records
the exclusion proposal for it as an ``-X<n>`` round of the failed attempt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.loop.bisect_plan import Done, Probe, Search
from skdbg.loop.narrow import NarrowError, assignment, check_layout, half_name, probe_edits
from skdbg.loop.narrow_scope import ScopePlan, plan_from_context
from skdbg.loop.narrow_signature import Signature, classify, drift_reason, majority, signature_of
from skdbg.sessions.attempts import canonical_sha256, materialised
from skdbg.sessions.errors import LedgerError
from skdbg.sessions.store import AttemptInfo, Ledger, ProposalInfo
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.narrowed import narrowed_analysis

Runner = Callable[[str], AttemptInfo]
Progress = Callable[[str], None]
BISECTABLE = ("low", "medium")
#: attempt statuses that say nothing about the candidate (§6.3): never counted as a run
UNOBSERVED = ("interrupted", "invalid", "not_run")


class BisectRefused(LedgerError):
    """The attempt is not a case for bisection (confidence high/n-a, or it did not fail)."""


class BisectError(LedgerError):
    """The bisection cannot run (no frozen analysis, the scope cannot be narrowed, a broken ledger plan)."""


@dataclass
class StepRecord:
    step: int
    role: str  # baseline | probe
    round_id: str
    phase: str | None
    groups: list[dict[str, Any]]
    runs: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "role": self.role,
            "round_id": self.round_id,
            "phase": self.phase,
            "groups": self.groups,
            "runs": self.runs,
            "outcome": self.outcome,
        }


@dataclass
class BisectResult:
    """What ``skdbg bisect`` reports (``to_json`` is the ``skdbg.bisect/1`` document)."""

    bisect_id: str
    session_id: str
    round_id: str
    source_attempt: str
    status: str  # isolated | pair | not_separable | inconsistent | flaky | drift | unattributed
    detail: str
    n_children: int
    n_units: int
    probes: int  # probe launches (baseline re-runs not counted)
    baseline: dict[str, Any]
    steps: list[StepRecord]
    children: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    exclusion_round: str | None = None
    exclusion_status: str | None = None
    next_step: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "skdbg.bisect/1",
            "bisect_id": self.bisect_id,
            "session": self.session_id,
            "round": self.round_id,
            "attempt": self.source_attempt,
            "status": self.status,
            "detail": self.detail,
            "children_in_scope": self.n_children,
            "units": self.n_units,
            "probes": self.probes,
            "baseline": self.baseline,
            "steps": [s.to_json() for s in self.steps],
            "children": self.children,
            "verdict": self.verdict,
            "exclusion_round": self.exclusion_round,
            "exclusion_status": self.exclusion_status,
            "next_step": self.next_step,
        }


def _say(progress: Progress | None, msg: str) -> None:
    if progress is not None:
        progress(msg)


class _Bisection:
    """One run of the command over one failed attempt (the ledger is the only state)."""

    def __init__(
        self,
        ledger: Ledger,
        session_id: str,
        base: AttemptInfo,
        plan: ScopePlan,
        base_sig: Signature,
        runner: Runner,
        repeat: int,
        progress: Progress | None,
    ) -> None:
        self.ledger, self.session_id, self.base, self.plan = ledger, session_id, base, plan
        self.base_sig, self.runner, self.repeat, self.progress = base_sig, runner, repeat, progress
        self.bid = f"{base.round_id}/{base.key}"
        self.recorded: dict[int, ProposalInfo] = {}
        for p in ledger.proposals(session_id):
            b = p.body.get("bisect") if isinstance(p.body, Mapping) else None
            if isinstance(b, Mapping) and b.get("id") == self.bid and b.get("role") in ("baseline", "probe"):
                self.recorded[int(b.get("step", -1))] = p

    # ------------------------------------------------------------------ rounds

    def _groups_json(self, probe: Probe) -> list[dict[str, Any]]:
        return [
            {
                "tag": g.tag,
                "name": half_name(self.plan.layout.scope, probe.step, g.tag),
                "units": [g.lo, g.hi],
                "children": [c for i in range(g.lo, g.hi) for c in self.plan.unit_children(i)],
            }
            for g in probe.groups
        ]

    def round_for(self, step: int, probe: Probe | None) -> tuple[str, list[dict[str, Any]]]:
        """The ``-N<k>`` round of ``step`` (opened now unless the ledger has it already)."""
        groups = self._groups_json(probe) if probe is not None else []
        role = "probe" if probe is not None else "baseline"
        found = self.recorded.get(step)
        if found is not None:
            was = found.body["bisect"].get("groups", [])
            if [(g.get("tag"), g.get("units")) for g in was] != [(g["tag"], g["units"]) for g in groups]:
                raise BisectError(
                    f"{found.round_id}: the recorded probe of step {step} ({was}) is not the one this plan runs "
                    "(the scene or the plan changed since the bisection started)"
                )
            return found.round_id, groups
        plan = self.plan
        if probe is not None:
            where = assignment(plan.units, probe.groups)
            bad = check_layout(plan.inp, where)
            if bad:  # never launch an unsafe candidate
                raise BisectError(f"probe {step} would break §4.2/§4.3: " + "; ".join(bad))
            edits = [e.to_json() for e in probe_edits(plan.layout, plan.units, probe.groups, step)]
        else:
            edits = []
        body: dict[str, Any] = {
            "kind": "bisect_probe",
            "marker_file": plan.layout.rel,
            "marker_edits": edits,
            "declared_change": {
                "only_change": (
                    "diagnosis (N1), not an exclusion: "
                    + (
                        ", ".join(f"{g['name']} fuses {len(g['children'])} child(ren)" for g in groups)
                        + f"; every other child of scope {plan.layout.scope!r} runs unfused"
                        if groups
                        else "the failed candidate re-run unchanged (baseline)"
                    )
                ),
                "method": "narrowing_split" if groups else "none",
            },
            "bisect": {
                "id": self.bid,
                "step": step,
                "role": role,
                "phase": probe.phase if probe is not None else None,
                "groups": groups,
                "scope": plan.layout.scope,
                "parent": {"round": self.base.round_id, "attempt": self.base.key},
                "repeat": self.repeat,
            },
        }
        info = self.ledger.add_proposal(
            self.session_id, self.base, body, canonical_sha256(body), kind="narrowing", status="proposed"
        )
        self.recorded[step] = info
        _say(self.progress, f"opened {info.round_id} ({role} {step})")
        return info.round_id, groups

    # ------------------------------------------------------------------ runs

    def runs(self, rid: str, wanted: int) -> list[tuple[AttemptInfo, Signature]]:
        """``wanted`` frozen runs of the round: the ones already in the ledger first, then launches.

        An ``interrupted`` or ``invalid`` attempt (Ctrl-C, a materialisation mismatch) observed nothing
        about the candidate: it is skipped when resuming, and a launch that ends that way stops the
        bisection (re-running the command resumes it)."""
        out: list[tuple[AttemptInfo, Signature]] = []
        for a in self.ledger.attempts(self.session_id, rid):
            doc = self.ledger.snapshot_json(a.pk, "analysis.json")
            if doc is not None and a.status not in UNOBSERVED:
                out.append((a, signature_of(doc)))
        while len(out) < wanted:
            _say(self.progress, f"launching {rid} run {len(out) + 1}/{wanted}")
            att = self.runner(rid)
            if att.status in UNOBSERVED:
                raise BisectError(
                    f"{rid}/{att.key} ended {att.status}: the bisection stops here; re-run the command to resume"
                )
            doc = self.ledger.snapshot_json(att.pk, "analysis.json")
            if doc is None:
                raise BisectError(
                    f"{rid}/{att.key} ({att.status}) has no frozen analysis: the launch produced no scene"
                )
            out.append((att, signature_of(doc)))
        return out[:wanted]


def _refusal(analysis: Mapping[str, Any], force: bool) -> str | None:
    verdict = analysis.get("verdict") if isinstance(analysis.get("verdict"), Mapping) else {}
    conf = verdict.get("confidence") if isinstance(verdict, Mapping) else None
    if conf not in BISECTABLE and not force:
        return (
            f"the verdict is {conf} ({verdict.get('rule') if isinstance(verdict, Mapping) else None}); bisect "
            "narrows low or medium verdicts only (§3.9 N1) — use --force to bisect anyway"
        )
    return None


def bisect(
    ledger: Ledger,
    session_id: str,
    round_id: str,
    *,
    runner: Runner,
    repeat: int = 1,
    progress: Progress | None = None,
    force: bool = False,
    no: int | None = None,
    source_root: Path | None = None,
    launcher: str = "--sim MODEL_DIR (or -- ARGV...)",
) -> BisectResult:
    """Narrow the failing SK of ``round_id`` (its newest attempt, or attempt ``no``) across re-launches.

    ``runner(round_id)`` launches and freezes one attempt of a round (production: relaunch). Raises
    :class:`BisectRefused` (not a case for N1) and :class:`BisectError` (cannot narrow). ``launcher``:
    how the printed next step re-launches (the CLI passes its own ``--sim DIR`` / ``-- ARGV``)."""
    if repeat < 1:
        raise BisectError("--repeat must be at least 1")
    base = ledger.attempt(session_id, round_id, no)
    analysis = ledger.snapshot_json(base.pk, "analysis.json")
    if not isinstance(analysis, Mapping):
        raise BisectError(f"{base.round_id}/{base.key} has no frozen analysis to bisect")
    why = _refusal(analysis, force)
    if why is not None:
        raise BisectRefused(f"{base.round_id}/{base.key}: {why}")
    base_sig = signature_of(analysis)
    if not base_sig.failed:
        raise BisectRefused(f"{base.round_id}/{base.key} did not fail: there is no failure to narrow")
    with materialised(ledger, base) as scene:
        try:
            plan = plan_from_context(open_context(scene, source_root=source_root))
        except NarrowError as exc:
            raise BisectError(f"{base.round_id}/{base.key}: {exc}") from exc
    b = _Bisection(ledger, session_id, base, plan, base_sig, runner, repeat, progress)
    n_children = sum(len(u.kernels) for u in plan.units)
    steps: list[StepRecord] = []
    # ---- baseline
    rid, _ = b.round_for(0, None)
    n_base = max(2, repeat)
    base_runs = b.runs(rid, n_base)
    rec = StepRecord(0, "baseline", rid, None, [])
    same = 0
    for att, sig in base_runs:
        drift = drift_reason(base_sig, sig) if sig.failed else "clean run"
        ok = sig.failed and drift is None
        same += ok
        rec.runs.append(
            {
                "attempt": att.key,
                "reproduced": ok,
                "why": drift or "same signature",
                "signature": sig.to_json(),
            }
        )
    reproducible = same == n_base if repeat == 1 else same * 2 > n_base
    clean = sum(1 for _, sig in base_runs if not sig.failed)
    # re-runs that all fail, but differently: the launch is not the failed candidate (another model,
    # another fault), not a flaky fault
    drifted = not reproducible and clean == 0
    rec.outcome = "reproduced" if reproducible else ("drift" if drifted else "flaky")
    steps.append(rec)
    baseline = {
        "round_id": rid,
        "runs": n_base,
        "reproduced": same,
        "rate": f"{same + 1}/{n_base + 1} (the failed attempt + {n_base} re-runs)",
        "signature": base_sig.to_json(),
    }
    result = BisectResult(
        b.bid,
        session_id,
        base.round_id,
        base.key,
        "running",
        "",
        n_children,
        len(plan.units),
        0,
        baseline,
        steps,
    )
    if drifted:
        whys = "; ".join(str(r["why"]) for r in rec.runs if not r["reproduced"])
        result.status = "drift"
        result.detail = (
            f"the baseline re-runs fail differently from the failed attempt ({whys}): the re-launch does not "
            "reproduce this failure (another model, fault or environment?) — reported, not followed"
        )
        result.next_step = f"compare the runs: skdbg session show {session_id}"
        return result
    if not reproducible:
        result.status = "flaky"
        result.detail = (
            f"the failure signature is not reproducible: {same} of {n_base} baseline re-runs reproduced it "
            f"({baseline['rate']}); a bisection would follow noise — rerun with --repeat K (majority of K runs)"
        )
        result.next_step = f"skdbg bisect {session_id} {base.round_id} --repeat 5"
        return result
    # ---- probes
    # an SK failure that names no child: the half that failed is only the SK that failed first
    check_complement = base_sig.child is None and base_sig.error_class.startswith("sk/")
    search = Search([len(u.kernels) for u in plan.units], check_complement=check_complement)
    while True:
        nxt = search.next()
        if isinstance(nxt, Done):
            break
        rid, groups = b.round_for(nxt.step, nxt)
        names = {g["name"]: g["tag"] for g in groups}
        children = {g["tag"]: [str(c["func_name"]) for c in g["children"]] for g in groups}
        rec = StepRecord(nxt.step, "probe", rid, nxt.phase, groups)
        outs: list[str] = []
        for att, sig in b.runs(rid, repeat):
            o, why = classify(base_sig, sig, names, children)
            outs.append(o)
            rec.runs.append({"attempt": att.key, "outcome": o, "why": why, "signature": sig.to_json()})
        rec.outcome = majority(outs)
        steps.append(rec)
        result.probes += 1
        _say(b.progress, f"probe {nxt.step} ({rid}): {rec.outcome}")
        search.feed(nxt, rec.outcome)
    return _finish(ledger, b, result, nxt, source_root, launcher)


def _finish(
    ledger: Ledger, b: _Bisection, result: BisectResult, done: Done, source_root: Path | None, launcher: str
) -> BisectResult:
    plan = b.plan
    result.status = done.status
    sid, rnd = result.session_id, result.round_id
    if done.status == "inconsistent":
        result.children = [c for u in done.units for c in plan.unit_children(u)]
        result.detail = done.detail
        result.next_step = f"the failure is not one child's: rerun with --repeat K, or collect L1 evidence (D1/D2); skdbg session show {sid}"
        return result
    if done.status in ("drift", "unattributed", "flaky"):
        step = next((s for s in result.steps if s.step == done.step), None)
        whys = "; ".join(str(r["why"]) for r in (step.runs if step else []))
        label = {
            "drift": "drifted to a different failure",
            "unattributed": "could not be tied to a half",
            "flaky": "runs disagree (no majority)",
        }[done.status]
        result.detail = (
            f"probe {done.step} ({step.round_id if step else '?'}) {label}: {whys} — reported, not followed"
        )
        result.next_step = (
            f"inspect the probe: skdbg session show {sid}; rerun with --repeat K for a majority"
            if done.status == "flaky"
            else f"inspect the probe: skdbg session show {sid}"
        )
        return result
    if done.status == "not_separable":
        result.children = [c for i in done.units for c in plan.unit_children(i)]
        whole = len(done.units) == len(plan.units)
        result.detail = (
            f"scope {plan.layout.scope!r} is one dependency-bound unit ({len(result.children)} children): no "
            "cut is legal (§4.2); the whole scope is the set"
            if whole
            else f"{len(result.children)} children are left and no half of them can be fused on its own (an SK "
            "needs two children): they are the set"
        )
        result.next_step = "abandon the scope's fusion or collect L1 evidence (D1/D2)"
        return result
    result.children = [c for u in done.units for c in plan.unit_children(u)]
    last = next((s for s in reversed(result.steps) if s.step == done.step), None)
    names = ", ".join(str(c["func_name"]) for c in result.children)
    found = {str(c["func_name"]) for c in result.children}
    # the probe's own analysis names one of them with a high verdict (L1+L2 evidence in that run)
    l12 = any(
        r["signature"].get("confidence") == "high" and r["signature"].get("child") in found
        for r in (last.runs if last else [])
    )
    if done.status == "isolated":
        why = (
            f"N1: probe {done.step} ({last.round_id if last else '?'}) fused {names} (with children already "
            f"cleared) as one SK and it failed with the baseline signature ({result.baseline['signature']['error_class']}); every other half passed "
            "or failed elsewhere as the search predicts"
        )
    else:
        why = (
            f"N1 (interaction): the failure needs {names} in one SK — each alone with its side passes, the window "
            f"holding both fails (probe {done.step})"
        )
    if l12:
        why += "; the probe's own analysis is high (L1+L2 evidence)"
    result.verdict = {
        "confidence": "high",
        "rule": "N1",
        "reason": why,
        "evidence_rounds": [s.round_id for s in result.steps],
    }
    result.detail = why
    target = plan.units[done.units[-1]]
    x_round, x_status = _exclusion(ledger, b, target.kernels[0], why, source_root)
    result.exclusion_round, result.exclusion_status = x_round, x_status
    if x_round is not None:
        result.next_step = (
            f"relaunch the exclusion: skdbg relaunch {sid} {x_round} {launcher}"
            if x_status == "proposed"
            else f"the exclusion is {x_status}: skdbg session show {sid}"
        )
    else:
        result.next_step = f"propose the exclusion by hand: skdbg session propose {sid} {rnd}"
    return result


def _exclusion(
    ledger: Ledger, b: _Bisection, node_id: int, why: str, source_root: Path | None
) -> tuple[str | None, str | None]:
    """Record (once) the exclusion proposal of the isolated child as an ``-X<n>`` round of the failed
    attempt. The proposal is :func:`skdbg.triage.narrowed.narrowed_analysis`'s — the one revalidation
    recomputes from the frozen scene — and its recorded hash is the proposal's own, so V1–V5 compare
    against the same document; ``bisect`` (id, reason, parent) rides along in the body."""
    for p in ledger.proposals(b.session_id):
        bb = p.body.get("bisect") if isinstance(p.body, Mapping) else None
        if isinstance(bb, Mapping) and bb.get("id") == b.bid and bb.get("role") == "exclusion":
            return p.round_id, p.status
    with materialised(ledger, b.base) as scene:
        ctx = open_context(scene, source_root=source_root)
        narrowed = narrowed_analysis(ctx, analyze_context(ctx), node_id, why)
    if narrowed is None or narrowed.proposal.status not in ("proposed", "blocked"):
        return None, None
    prop = narrowed.proposal.to_json()
    body = dict(prop)
    body["bisect"] = {
        "id": b.bid,
        "role": "exclusion",
        "reason": why,
        "parent": {"round": b.base.round_id, "attempt": b.base.key},
    }
    info = ledger.add_proposal(
        b.session_id, b.base, body, canonical_sha256(prop), kind="exclusion", status=str(prop["status"])
    )
    return info.round_id, info.status


def render_text(r: BisectResult) -> str:
    """The human summary the CLI prints."""
    lines = [f"bisect {r.bisect_id}: {r.status} — {r.detail}"]
    lines.append(
        f"  scope: {r.n_children} children in {r.n_units} dependency-safe units; baseline {r.baseline['rate']}; "
        f"{r.probes} probe(s) (baseline re-runs not counted)"
    )
    for s in r.steps:
        grp = (
            ", ".join(f"{g['name']}=units[{g['units'][0]}:{g['units'][1]}]" for g in s.groups) or "unchanged"
        )
        lines.append(
            f"  step {s.step} {s.round_id} ({s.role}{'/' + s.phase if s.phase else ''}): {grp} -> {s.outcome}"
        )
    for c in r.children:
        lines.append(f"  child: {c['func_name']} (nodeId {c['node_id']}, line {c['line']})")
    if r.verdict:
        lines.append(f"  verdict: {r.verdict['confidence']} ({r.verdict['rule']})")
    if r.exclusion_round:
        lines.append(f"  exclusion proposal: {r.exclusion_round} ({r.exclusion_status})")
    lines.append(f"  next: {r.next_step}")
    return "\n".join(lines)


def dumps(r: BisectResult) -> str:
    return json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "BISECTABLE",
    "BisectError",
    "BisectRefused",
    "BisectResult",
    "Runner",
    "StepRecord",
    "bisect",
    "dumps",
    "render_text",
]
