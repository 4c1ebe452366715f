"""Revalidation of an exclusion: OLD (the failed attempt) vs NEW (the re-launched candidate),
gates V1–V5 of triage.md §5 and the ``skdbg.verify/1`` contract (analysis-json.md).

Why this shape: an exclusion is a *new candidate* (new round) and proves nothing until fresh
evidence of a new process shows the declared effect (§5.2: compile success, an accepted
``begin(None)``, a pass under debug options, a pass on one rank, stale metadata or a nodeId match
across processes are all *not* proof). So every gate reads NEW's own artifacts, identifies
children by ``funcName`` + occurrence (never nodeId — ids are renumbered), stops at the first
failure (later gates ``not_run`` with the stop reason), and R7 refuses every NEW artifact that is
really the failed attempt's (byte-identical, or under OLD's ``sk_meta/<old pid>``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.evidence import ModelEvidence
from skdbg.parsers.markers import (
    EditError,
    MarkerCall,
    Mismatch,
    classify_mechanism,
    declared_mismatch,
    read_source,
    scan_text,
)
from skdbg.parsers.node_format import Node
from skdbg.parsers.perf_samples import judge, read_perf
from skdbg.parsers.run_identity import failing_path_differences
from skdbg.parsers.skmeta_lines import iter_meta_lines
from skdbg.show import show
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.model import VERIFY_SCHEMA, Analysis, EvidenceItem, GateCheck, Proposal
from skdbg.triage.skview import SkInstance, SkNode, all_instances

#: V3: reasons that must not newly appear for nodes of the fragment (§4.3 "deadlock-sensitive")
DEADLOCK_REASONS = frozenset(
    {"ISOLATED_EVENT", "EXIST_DEADLOCK", "DEADLOCK_DETECTED", "EXTERNAL_DEPEND", "UNSUPPORT_EVENT_TYPE"}
)
#: V3: the fail reason the excluded child must carry, per mechanism (§4.5.1 "Expected metadata")
EXPECTED_REASON = {
    "explicit_none_exclusion": "IN_UNFUSIBLE_SCOPE",
    "close_reopen_exclusion": "NOT_IN_SCOPE",
    "dependency_aligned_split": "NOT_IN_SCOPE",
}
#: task debugOptions bits that make a run diagnostic (F9): 0x2 sync-all, 0x10 cross-core check
DIAGNOSTIC_BITS = 0x2 | 0x10
DIAGNOSTIC_ENTRY_SUFFIXES = ("_op_trace", "_debug", "_dump_profiling")
#: artifact kinds R7 compares by content: what a run writes *with its own identity* (pid in plog line
#: headers / file-logger prefixes, timestamps, run.json). Byte-identity there means a copy of the failed
#: attempt. The environment probe must be the same setup (V1), and kernel images, the model source, the
#: site map and prefix-less JSON (task queue, graph/model JSON) can legitimately be byte-identical for an
#: unchanged SK in a new process — those are refused only when they live under OLD's sk_meta/<pid>.
PRODUCED_KINDS = frozenset(
    {
        "plog",
        "device_log",
        "run_json",
        "fused_nodes",
        "node_detail",
        "scope_split",
        "fail_reasons",
        "device_args",
        "super_kernel_log",
        "sk_prof",
    }
)
R7_REASON = "belongs to the failed attempt (R7)"
_NONE_SCOPE_RE = re.compile(r"(^|[\[\],\s_])None($|[\[\],\s_])")

# ------------------------------------------------------------------------------------------ result


@dataclass(frozen=True, slots=True)
class RefusedEvidence:
    path: str  # relative to NEW's scene root
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    round_id: str | None
    attempt: int | None
    status: str  # running | passed | failed | timed_out | interrupted | invalid | not_run
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round_id": self.round_id, "attempt": self.attempt, "status": self.status}
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """Outcome of ``skdbg verify OLD NEW`` (``skdbg.verify/1``)."""

    routes: tuple[str, ...]
    verification: tuple[GateCheck, ...]
    round_id: str | None
    round_status: str
    attempt: LedgerEntry
    ledger: tuple[LedgerEntry, ...]
    refused_evidence: tuple[RefusedEvidence, ...] = ()
    mechanism_declared: str | None = None
    mechanism_found: str | None = None
    notes: tuple[str, ...] = ()
    diagnostic: dict[str, Any] | None = None  # the debug options a diagnostic re-run added (§3.9)

    def gate(self, gate_id: str) -> GateCheck:
        return next(g for g in self.verification if g.gate == gate_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": VERIFY_SCHEMA,
            "routes": list(self.routes),
            "verification": [g.to_json() for g in self.verification],
            "round": {"round_id": self.round_id, "status": self.round_status},
            "attempt": self.attempt.to_json(),
            "ledger": [e.to_json() for e in self.ledger],
            "refused_evidence": [r.to_json() for r in self.refused_evidence],
            "mechanism": {"declared": self.mechanism_declared, "found": self.mechanism_found},
            "notes": list(self.notes),
            "diagnostic": None if self.diagnostic is None else {"debug_options_added": dict(self.diagnostic)},
        }


class _Fail(Exception):
    """A gate stops: detail + the evidence it rests on."""

    def __init__(self, detail: str, evidence: Sequence[EvidenceItem] = (), *, invalid: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.evidence = tuple(evidence)
        self.invalid = invalid  # materialisation mismatch (§6.3): the attempt is invalid, not failed


class _NotRun(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


# ------------------------------------------------------------------------------------------ markers


# Markers are read, balanced, classified and compared with the declared change by the one marker
# model, skdbg.parsers.markers (aliases resolved; comments, strings and wrappers never count).


# ------------------------------------------------------------------------------------------ helpers


def _key(node: Node) -> tuple[str, ...]:
    """Process-stable identity of a node: funcName for kernels, event type + id for events (§3.5)."""
    if node.is_kernel:
        return ("kernel", node.func_name or "?")
    return ("event", node.event_type or node.kind, str(node.event_id))


def _cite_run(
    ctx: TriageContext, src: Source | None, text: str, path: str = "$", source: str = "run_json"
) -> list[EvidenceItem]:
    """Cite a JSON side file (run.json, the env probe) by JSON path when the parser kept no line."""
    if src is None:
        return []
    if src.line is None and src.json_path is None:
        src = Source(src.file, None, path)
    return [ctx.cite("V", source, src, excerpt=text)]


def _new_pid(ctx: TriageContext) -> int | None:
    run = ctx.run
    if run is not None and run.pid is not None:
        return run.pid
    pids = sorted({m.pid for m in ctx.evidence.models if m.pid is not None})
    return pids[0] if len(pids) == 1 else None


def _models_of(ctx: TriageContext, pid: int | None) -> list[ModelEvidence]:
    return [me for me in ctx.evidence.model_evidence if pid is None or me.model.pid == pid]


def _instances(ctx: TriageContext, pid: int | None) -> list[SkInstance]:
    return [i for i in all_instances(ctx.evidence) if pid is None or i.model.model.pid == pid]


def _find_old_instance(ctx: TriageContext, proposal: Proposal) -> SkInstance | None:
    child = proposal.child
    insts = list(all_instances(ctx.evidence))
    if child is not None and child.scope_id is not None:
        hits = [
            i
            for i in insts
            if i.scope_id == child.scope_id and (child.model is None or i.model_id == child.model)
        ]
        if hits:
            return hits[0]
    wanted = set(proposal.original or proposal.excluded)
    for i in insts:
        if wanted and wanted <= {n.node_id for n in i.nodes}:
            return i
    return None


def _kernel_names(nodes: Iterable[SkNode]) -> Counter[str]:
    return Counter(n.func_name or "?" for n in nodes if n.is_kernel)


def _fmt(c: Counter[str]) -> str:
    return "{" + ", ".join(f"{k}×{v}" if v > 1 else k for k, v in sorted(c.items())) + "}"


# ------------------------------------------------------------------------------------------ attempts

#: attempt statuses that mean "the candidate faulted or hung" (what R4 needs the earlier attempt to be)
FAILING_STATUSES = ("failed", "timed_out")


@dataclass(frozen=True, slots=True)
class AttemptFacts:
    """What decides an attempt's status, read the same way from a scene and from a frozen attempt.

    Why one record: ``skdbg verify OLD NEW`` reads two scenes, ``skdbg session add-attempt`` reads
    a scene and the frozen analysis of the round's previous attempt. Both build this record from
    the run summary (``run_summary`` of the engine, frozen in ``analysis.json`` as ``run``), the
    fault kind of the localisation and the marker file's SHA-256, and hand it to the same
    decision functions, so the two commands cannot disagree.
    """

    round_id: str | None
    attempt: int | None
    exit_status: int | None
    exit_signal: int | str | None
    exit_timeout: bool | None
    fault_kind: str  # sk | non_sk | ge_sk | none
    fault_phase: str | None
    candidate: tuple[Any, ...] | None  # identity without the debug options (None: no candidate block)
    debug_options: dict[str, Any]
    marker_sha256: str | None

    @classmethod
    def from_summary(
        cls,
        run: dict[str, Any] | None,
        fault_kind: str,
        marker_sha256: str | None,
        *,
        round_id: str | None = None,
        fault_phase: str | None = None,
    ) -> AttemptFacts:
        """From a run summary dict; ``round_id`` overrides run.json's (the ledger's round wins)."""
        run = run or {}
        ex = run.get("exit") or {}
        cand = run.get("candidate")
        ident: tuple[Any, ...] | None = None
        debug: dict[str, Any] = {}
        if isinstance(cand, dict):
            ident = (
                tuple(cand.get("scope_names") or ()),
                cand.get("marker_file"),
                _canon(cand.get("super_kernel_optimize_options")),
                cand.get("source_revision"),
                cand.get("config_fingerprint"),
            )
            debug = dict(cand.get("super_kernel_debug_options") or {})
        return cls(
            round_id=round_id if round_id is not None else run.get("round_id"),
            attempt=run.get("attempt"),
            exit_status=ex.get("status"),
            exit_signal=ex.get("signal"),
            exit_timeout=ex.get("timeout"),
            fault_kind=fault_kind,
            fault_phase=fault_phase,
            candidate=ident,
            debug_options=debug,
            marker_sha256=marker_sha256,
        )


def _canon(value: Any) -> str | None:
    """Option maps compare by content, not by key order."""
    return None if value is None else json.dumps(value, sort_keys=True, default=str)


def _active(options: dict[str, Any]) -> dict[str, Any]:
    """Debug options that are on (``0``/``false``/``null`` switch an option off)."""
    return {k: v for k, v in options.items() if v not in (0, False, None, "0", "false")}


def show_options(options: dict[str, Any]) -> str:
    """``debug_op_exec_trace=1, debug_sync_all=1`` — never a Python repr."""
    return ", ".join(
        f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in sorted(options.items())
    )


def launch_outcome(f: AttemptFacts) -> tuple[str, str]:
    """(attempt status, why) of one launched process set from its own evidence (§6.3 statuses)."""
    if f.exit_timeout:
        return "timed_out", "run.json exit.timeout"
    if f.fault_kind != "none":
        return "failed", f"{f.fault_kind} fault ({f.fault_phase or 'unknown'})"
    if f.exit_signal:
        return "interrupted", f"run.json exit.signal={f.exit_signal}"
    if f.exit_status not in (None, 0):
        return "failed", f"run.json exit.status={f.exit_status}"
    return "passed", "exit 0, no fault"


def debug_options_added(old: AttemptFacts, new: AttemptFacts) -> dict[str, Any] | None:
    """The debug options NEW adds when it is OLD's candidate re-run with only debug options added.

    §6.3: a debug-option change is a *diagnostic attempt of the same round* (the candidate identity
    — source incl. markers, optimize options, config — is unchanged). None when the rounds differ
    or are unknown, the identity changed, an option was removed or changed, or nothing was added.
    """
    if old.round_id is None or old.round_id != new.round_id:
        return None
    if old.candidate is None or old.candidate != new.candidate or old.marker_sha256 != new.marker_sha256:
        return None
    before, after = _active(old.debug_options), _active(new.debug_options)
    if any(after.get(k) != v for k, v in before.items()):
        return None
    added = {k: v for k, v in after.items() if k not in before}
    return added or None


@dataclass(frozen=True, slots=True)
class AttemptDecision:
    """Status of a diagnostic re-run (§3.9, §6.3, R4), shared by ``verify`` and the session ledger."""

    status: str  # attempt status
    why: str
    round_status: str  # the round as this attempt leaves it: failed (kept) | open
    routes: tuple[str, ...]
    added: dict[str, Any]


def diagnostic_rerun(old: AttemptFacts, new: AttemptFacts) -> AttemptDecision | None:
    """NEW = OLD's round re-run with only debug options added: its status, route and the round's status.

    A pass there is localisation evidence, never a pass of the candidate (§5.2): the attempt is
    ``passed`` as a diagnostic, R4 (fault gone only under debug mode → retest clean) when OLD
    failed, and a failed round stays ``failed`` (§6.3: a failed round is never re-labelled).
    """
    added = debug_options_added(old, new)
    if added is None:
        return None
    status, why = launch_outcome(new)
    old_status, _ = launch_outcome(old)
    routes: tuple[str, ...] = ()
    what = f"diagnostic attempt of round {new.round_id} (adds {show_options(added)})"
    if status == "passed" and old_status in FAILING_STATUSES:
        routes = ("R4",)
        why = (
            f"{what}: {why} — the fault disappears only under debug mode (R4); localisation evidence only, "
            "retest the candidate clean"
        )
    else:
        why = f"{what}: {why}"
    round_status = "failed" if old_status in FAILING_STATUSES or status in FAILING_STATUSES else "open"
    return AttemptDecision(status, why, round_status, routes, added)


def materialisation_mismatch(
    old_text: str | None,
    new_text: str,
    edits: Sequence[Any],
    declared: str | None,
    file: str = "model source",
) -> tuple[str | None, str | None]:
    """(mechanism found in NEW, why NEW's materialised source is not the declared change or None).

    §6.3 ``invalid``: the declared change is OLD's source with the proposal's marker edits; NEW must
    be that program (comments and formatting aside) and implement the declared mechanism. Example:
    the string ``"None"`` where the declared edit has the ``None`` literal (T8) is another program.
    Both questions are answered by the one marker model (:mod:`skdbg.parsers.markers`). Without OLD's
    source nothing can be compared: (None, None).
    """
    found, mm = _materialisation(old_text, new_text, edits, declared, file)
    return found, mm.detail if mm is not None else None


def _materialisation(
    old_text: str | None, new_text: str, edits: Sequence[Any], declared: str | None, file: str
) -> tuple[str | None, Mismatch | None]:
    """:func:`materialisation_mismatch` with the line of NEW where the declared change is not found."""
    if old_text is None:
        return None, None
    try:
        found = classify_mechanism(scan_text(old_text, file), scan_text(new_text, file))
    except ParseError:
        found = None  # a source that does not parse implements no mechanism; the mismatch says where
    if edits:
        try:
            mm = declared_mismatch(old_text, edits, new_text, file)
        except EditError as exc:
            return found, Mismatch(None, f"the declared marker edits cannot be applied ({exc.message})")
        if mm is not None:
            return found, Mismatch(mm.line, f"{mm.detail} (mechanism found: {found})")
    if found != declared:
        return found, Mismatch(None, f"mechanism in the NEW source is {found}, declared {declared}")
    return found, None


def edits_for(edits: Iterable[Any], rel: str) -> list[Any]:
    """The marker edits of one file: by scene-relative path, else by file name."""
    items = list(edits)
    exact = [e for e in items if e.file == rel]
    return exact or [e for e in items if Path(e.file).name == Path(rel).name]


# ------------------------------------------------------------------------------------------ R7


def refused_evidence(old: TriageContext, new: TriageContext, old_pid: int | None) -> list[RefusedEvidence]:
    """R7: NEW artifacts that are the failed attempt's — byte-identical (sha256) to an OLD artifact
    produced by the run, or stored under OLD's ``sk_meta/<old pid>``."""
    old_hashes: set[str] = set()
    for a in old.scene.artifacts:
        if a.kind in PRODUCED_KINDS:
            try:
                if a.size > 0:
                    old_hashes.add(a.sha256)
            except OSError:
                continue
    out: list[RefusedEvidence] = []
    stale_prefix = f"sk_meta/{old_pid}/" if old_pid is not None else None
    for a in new.scene.artifacts:
        rel = a.relpath
        under_old = stale_prefix is not None and (
            rel.startswith(stale_prefix) or f"/{stale_prefix}" in f"/{rel}"
        )
        if under_old and a.pid_label == str(old_pid):
            out.append(RefusedEvidence(rel, f"{R7_REASON}: stored under sk_meta/{old_pid} of the failed pid"))
            continue
        if a.kind not in PRODUCED_KINDS:
            continue
        try:
            same = a.size > 0 and a.sha256 in old_hashes
        except OSError:
            continue
        if same:
            out.append(RefusedEvidence(rel, f"{R7_REASON}: byte-identical (sha256) to an OLD artifact"))
    return out


# ------------------------------------------------------------------------------------------ gates


@dataclass
class _State:
    old: TriageContext
    new: TriageContext
    proposal: Proposal
    declared_diagnostic: bool
    old_pid: int | None
    new_pid: int | None
    refused: list[RefusedEvidence]
    mechanism_found: str | None = None
    notes: list[str] = field(default_factory=list)
    old_inst: SkInstance | None = None


def _marker_findings(new_text: str, rel: str) -> tuple[list[MarkerCall], list[tuple[int | None, str, str]]]:
    """NEW's markers and (line, why, rule) of what makes them unusable: not Python, T8 string "None",
    a non-literal argument, unbalanced pairs."""
    try:
        scan = scan_text(new_text, rel)
    except ParseError as exc:
        return [], [(exc.line, f"the marker file does not parse: {exc}", "V1")]
    out: list[tuple[int | None, str, str]] = []
    for m in scan.markers:
        if m.kind == "begin" and m.string_none:
            out.append(
                (
                    m.line,
                    f'T8: {m.label} passes the string "None" — an ordinary scope literally named None, not '
                    "the null exclusion",
                    "T8",
                )
            )
        elif m.literal is None or m.missing:
            out.append(
                (
                    m.line,
                    f"marker argument at line {m.line} is not a literal ({m.label}); cannot check it statically",
                    "V1",
                )
            )
    bad = scan.balance()
    if bad is not None:
        out.append((bad[0], f"markers unbalanced: {bad[1]}", "V1"))
    return scan.markers, out


def _v1(st: _State) -> GateCheck:
    """V1 preflight: probe ready, mechanism accepted, markers balanced and = declared (T8), new round,
    diagnostics off unless declared."""
    new, old, p = st.new, st.old, st.proposal
    ev: list[EvidenceItem] = []
    if p.status != "proposed" or p.mechanism is None:
        raise _Fail(f"OLD has no proposed exclusion (status {p.status}); nothing to verify")
    probe = new.probe
    if probe is None:
        raise _Fail("NEW has no environment probe (env/check_environment.json); V1 needs ready=true")
    pev = _cite_run(new, probe.src, f"ready={probe.ready}", "$.ready", "env_probe")[0]
    if probe.ready is not True:
        raise _Fail(f"NEW environment probe ready={probe.ready}, not true", [pev])
    ev.append(pev)
    if p.mechanism == "explicit_none_exclusion" and probe.explicit_none_exclusion_accepted is not True:
        raise _Fail(
            "mechanism explicit_none_exclusion needs scope_capabilities.explicit_none_exclusion.accepted=true "
            f"(probe says {probe.explicit_none_exclusion_accepted})",
            _cite_run(
                new,
                probe.src,
                "explicit_none_exclusion",
                "$.scope_capabilities.explicit_none_exclusion.accepted",
                "env_probe",
            ),
        )
    run_new, run_old = new.run, old.run
    cand = run_new.candidate if run_new is not None else None
    if cand is not None:
        for kind, opts in (
            ("optimize_options", cand.optimize_options),
            ("debug_options", cand.debug_options),
        ):
            for name, value in (opts or {}).items():
                if probe.accepts(name, value, kind) is False:
                    raise _Fail(
                        f"option {name}={value!r} is not accepted by the NEW probe",
                        _cite_run(new, cand.src, f"{kind}.{name}={value!r}", "$.candidate"),
                    )
    # markers: static check of the edited source (balanced, T8, mechanism found == declared)
    new_file, old_file = new.marker_file(), old.marker_file()
    if new_file is None:
        raise _Fail("NEW marker file (run.json candidate.marker_file) not found; cannot check the markers")
    rel = new.relpath(new_file)
    try:
        new_text = read_source(new_file, rel)
        old_text = read_source(old_file, old.relpath(old_file)) if old_file is not None else None
    except ParseError as exc:
        raise _Fail(f"marker file unreadable: {exc}") from None
    new_markers, findings = _marker_findings(new_text, rel)
    first = next((m for m in new_markers if m.kind == "begin"), None)
    if first is not None:
        ev.append(new.cite("V1", "marker_file", Source(str(new_file), first.line)))
    edits = edits_for(p.marker_edits, old.relpath(old_file)) if old_file is not None else []
    cited = [
        new.cite(rule, "marker_file", Source(str(new_file), line))
        for line, _, rule in findings
        if line is not None
    ]
    st.mechanism_found, mismatch = _materialisation(old_text, new_text, edits, p.mechanism, rel)
    if mismatch is not None:
        # §6.3: the launch does not contain the declared change — the attempt is invalid, not failed
        at = [new.cite("V1", "marker_file", Source(str(new_file), mismatch.line))] if mismatch.line else []
        raise _Fail(
            f"materialisation mismatch in {rel}: {mismatch.detail}"
            + "".join(f"; {why}" for _, why, _ in findings),
            at + cited or ev,
            invalid=True,
        )
    if old_text is None:
        st.notes.append("OLD marker file missing: the mechanism could not be compared with OLD's markers")
    if findings:
        line, why, rule = findings[0]
        raise _Fail(
            why if rule == "T8" else f"{why} ({rel})",
            [new.cite(rule, "marker_file", Source(str(new_file), line))] if line is not None else [],
        )
    # a new round (§6.3: an exclusion proposal is a new candidate identity)
    if run_new is None or run_old is None:
        raise _Fail("run.json missing in OLD or NEW: cannot show NEW is a new round")
    if run_new.round_id is not None and run_new.round_id == run_old.round_id:
        raise _Fail(
            f"NEW round_id {run_new.round_id} equals OLD's: an exclusion is a new round (§6.3)",
            _cite_run(new, run_new.src, f"round_id={run_new.round_id}", "$.round_id"),
        )
    if run_new.round_id is None or run_old.round_id is None:
        oc, nc = run_old.candidate, run_new.candidate
        same_cand = (
            oc is not None
            and nc is not None
            and (oc.source_revision, oc.config_fingerprint) == (nc.source_revision, nc.config_fingerprint)
            and old_text == new_text
        )
        if same_cand:
            raise _Fail("round ids unknown and the candidate identity is unchanged: not a new round")
    # diagnostics off unless declared diagnostic (F9)
    diag: list[str] = []
    if cand is not None and cand.debug_options:
        diag.append(f"super_kernel_debug_options: {show(cand.debug_options)}")
    for inst in _instances(new, st.new_pid):
        for t in inst.tasks:
            if t.debug_options is not None and t.debug_options & DIAGNOSTIC_BITS:
                diag.append(f"task {t.index} debugOptions=0x{t.debug_options:x}")
                break
    for me in _models_of(new, st.new_pid):
        if me.fail_reasons is not None and me.fail_reasons.per_op_max_core:
            diag.append("DEBUG_PER_OP_MAX_CORE=enabled")
    prof = new.scene.of_kind("sk_prof")
    if prof:
        diag.append(f"SK profiler on ({prof[0].relpath}, ASCEND_PROF_SK_ON)")
    if diag and not st.declared_diagnostic:
        raise _Fail(
            "F9: NEW ran with diagnostics ("
            + "; ".join(diag)
            + ") but the round is not declared diagnostic; "
            "a pass under debug options is not proof (§5.2)",
            _cite_run(new, cand.src if cand is not None else None, "; ".join(diag), "$.candidate"),
        )
    return GateCheck(
        "V1",
        "passed",
        f"probe ready; markers balanced; mechanism {p.mechanism} found in {rel}; new round "
        f"{run_new.round_id or '(by candidate identity)'}"
        + ("; declared diagnostic" if st.declared_diagnostic else "; diagnostics off"),
        tuple(ev),
    )


def _v2(st: _State) -> GateCheck:
    """V2 execution: exit 0, no timeout/signal, no fault lines on any rank, the failing path ran."""
    new, old = st.new, st.old
    run = new.run
    if run is None or run.exit is None:
        raise _Fail("NEW run.json has no exit record; completion cannot be shown")
    ex = run.exit
    ev = _cite_run(new, ex.src, f"exit status={ex.status} signal={ex.signal} timeout={ex.timeout}", "$.exit")
    if ex.timeout:
        raise _Fail("NEW run timed out", ev)
    if ex.signal is not None:
        raise _Fail(f"NEW run ended by signal {ex.signal}", ev)
    if ex.status != 0:
        raise _Fail(f"NEW run exit status {ex.status}, not 0", ev)
    plogs = new.evidence.plogs
    if not plogs:
        raise _Fail("NEW has no plog: a clean run on every rank cannot be shown")
    for pe in plogs:
        if pe.faults:
            rec = pe.faults[0]
            src = getattr(rec, "src", None)
            cite = [new.cite("V2", "plog", src)] if isinstance(src, Source) else []
            raise _Fail(f"fault line in NEW plog of pid {pe.pid} ({type(rec).__name__})", cite)
    if new.evidence.incidents:
        inc = new.evidence.incidents[0]
        raise _Fail(f"SK exception handler output in NEW (pid {inc.pid})")
    pids = sorted({pe.pid for pe in plogs})
    old_pids = sorted({pe.pid for pe in old.evidence.plogs})
    if len(pids) < len(old_pids):
        # §5.2: a pass on one rank proves nothing when the failing attempt ran several
        raise _Fail(
            f"NEW has plogs of {len(pids)} process(es) {show(pids)}, OLD of {len(old_pids)} {show(old_pids)}: "
            "the run must complete on all ranks"
        )
    old_path = old.run.failing_path if old.run is not None else None
    if not old_path:
        raise _Fail(
            "OLD run.json records no failing_path: the previously failing path cannot be shown executed (§5.2)"
        )
    path_diffs = failing_path_differences(old_path, run.failing_path)
    if path_diffs:
        raise _Fail(
            f"NEW failing_path differs from OLD's declared one ({'; '.join(path_diffs)}): the previously "
            "failing path was not executed (§5.2)",
            _cite_run(new, run.src, f"failing_path: {show(run.failing_path)}", "$.failing_path"),
        )
    ev.extend(_cite_run(new, run.src, f"failing_path: {show(run.failing_path)}", "$.failing_path"))
    return GateCheck(
        "V2",
        "passed",
        f"exit 0, no fault lines in {len(plogs)} plog set(s) of pid(s) {show(pids)}; failing path "
        f"{show(old_path)} executed",
        tuple(ev),
    )


#: entry-gate predicates that decide whether NEW's own evidence is fresh (F5/F6 name the faulting SK
#: and do not apply to a clean run; F8/F9 are V1's business)
FRESHNESS_PREDICATES = ("F1", "F2", "F3", "F4", "F7")


def _gate_freshness(st: _State) -> None:
    """F1–F4/F7 of the entry gate (skdbg.triage.gate) applied to NEW, when the gate is importable."""
    try:
        gate = importlib.import_module("skdbg.triage.gate")
        localize = importlib.import_module("skdbg.triage.localize")
        result = gate.run_gate(st.new, localize.localize(st.new))
    except Exception as exc:  # noqa: BLE001 — bad input never crashes; the minimal check still runs
        st.notes.append(f"entry-gate freshness predicates unavailable for NEW ({type(exc).__name__}: {exc})")
        return
    checks = dict(result.checks)
    failed = [f for f in FRESHNESS_PREDICATES if checks.get(f) == "failed"]
    if failed:
        gaps = [g for g in result.gaps if g.id in failed]
        detail = "; ".join(f"{g.id}: {g.detail}" for g in gaps) or ", ".join(failed)
        ev: list[EvidenceItem] = []
        for g in gaps:
            if g.file is not None and g.line is not None:
                ev.append(st.new.cite(g.id, "gate", Source(str(st.new.root / g.file), g.line)))
        raise _Fail(f"NEW metadata/plog not fresh ({', '.join(failed)}): {detail}", ev)


def _fresh(st: _State, models: list[ModelEvidence]) -> None:
    """Minimal F3/F4 freshness for NEW's metadata (the entry gate's predicates, re-applied to NEW)."""
    new = st.new
    run = new.run
    lo = hi = None
    if run is not None and run.start is not None:
        lo = new.options.earliest(run.start)
    if run is not None and run.end is not None:
        hi = new.options.latest(run.end)
    for me in models:
        if me.model.pid != st.new_pid:
            raise _Fail(f"F3: metadata dir {me.model.pid_label} is not sk_meta/{st.new_pid}")
        for role, path in me.model.files.items():
            if path.suffix != ".log":
                continue
            try:
                first = next((ml for ml in iter_meta_lines(path) if ml.prefix is not None), None)
            except (ParseError, OSError):
                continue
            ts: datetime | None
            if first is not None:
                if first.pid != st.new_pid:
                    raise _Fail(
                        f"F4: {role} was written by pid {first.pid}, not the NEW pid {st.new_pid}",
                        [new.cite("F4", role, first.src)],
                    )
                ts = first.ts
            else:
                ts = datetime.fromtimestamp(path.stat().st_mtime)
            if ts is not None and ((lo is not None and ts < lo) or (hi is not None and ts > hi)):
                raise _Fail(
                    f"F4: {role} time {ts.isoformat()} outside the NEW run window",
                    [new.cite("F4", role, first.src)] if first is not None else [],
                )


def _v3(st: _State) -> GateCheck:
    """V3 fresh metadata: new pid, fresh, excluded child unfusible with the expected reason and in no
    SK, before/after SKs with the proposed child multisets, no ``None`` scope, no new deadlock
    reasons for the fragment, fragment events not left alone in an SK."""
    new, old, p = st.new, st.old, st.proposal
    if st.new_pid is None:
        raise _Fail("NEW pid unknown (no run.json pid and no single sk_meta/<pid>)")
    if st.new_pid == st.old_pid:
        raise _Fail(f"NEW pid {st.new_pid} equals OLD pid: not a new process (F3/R7)")
    if st.refused:
        r = st.refused[0]
        raise _Fail(
            f"R7: {len(st.refused)} NEW artifact(s) belong to the failed attempt (first: {r.path}); stale reuse "
            "proves nothing"
        )
    models = _models_of(new, st.new_pid)
    if not models:
        raise _Fail(
            f"no sk_meta/{st.new_pid} in NEW: run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 to get fresh metadata"
        )
    _gate_freshness(st)
    _fresh(st, models)
    oi = st.old_inst
    if oi is None:
        raise _Fail("the OLD SK of the proposal is not found in OLD's metadata; the ranges cannot be checked")
    fragment_ids = set(p.excluded) | set(p.collateral)
    old_nodes = {n.node_id: n for n in oi.nodes}
    missing = sorted(i for i in fragment_ids | set(p.before) | set(p.after) if i not in old_nodes)
    if missing:
        raise _Fail(f"proposal nodeIds {missing} are not nodes of the OLD SK (scope {oi.scope_id})")
    frag = [old_nodes[i] for i in sorted(fragment_ids, key=lambda i: old_nodes[i].position)]
    frag_kernels = _kernel_names(frag)
    before = _kernel_names(old_nodes[i] for i in p.before)
    after = _kernel_names(old_nodes[i] for i in p.after)
    new_insts = _instances(new, st.new_pid)
    ev: list[EvidenceItem] = []
    # every fragment kernel: unfusible with the expected reason (by funcName, never nodeId)
    want = EXPECTED_REASON.get(p.mechanism or "", "NOT_IN_SCOPE")
    unf: Counter[str] = Counter()
    unf_src: dict[str, Source] = {}
    for me in models:
        if me.fail_reasons is None:
            continue
        for u in me.fail_reasons.unfusible:
            if u.node.is_kernel and u.reason == want:
                name = u.node.func_name or "?"
                unf[name] += 1
                unf_src.setdefault(name, u.src)
    for name, n in frag_kernels.items():
        if unf[name] < n:
            raise _Fail(
                f"excluded child {name} is not listed unfusible with {want} in NEW sk_fusion_fail_reasons.log "
                f"({unf[name]} of {n})"
            )
        ev.append(new.cite("V3", "fail_reasons", unf_src[name]))
    # in no SK function child list beyond what other, unrelated SKs already held in OLD
    old_all = Counter[str]()
    for i in _instances(old, st.old_pid):
        old_all += _kernel_names(i.nodes)
    new_all = Counter[str]()
    for i in new_insts:
        new_all += _kernel_names(i.nodes)
    for name, n in frag_kernels.items():
        if new_all[name] > old_all[name] - n:
            raise _Fail(
                f"excluded child {name} is still fused in a NEW SK Function ({new_all[name]} fused, expected "
                f"{old_all[name] - n}) — e.g. a scope literally named None (T8)"
            )
    # before / after SKs with exactly the proposed multisets
    used: set[int] = set()
    for label, want_set in (("before", before), ("after", after)):
        if not want_set:
            continue
        hit = next(
            (k for k, i in enumerate(new_insts) if k not in used and _kernel_names(i.nodes) == want_set), None
        )
        if hit is None:
            seen = "; ".join(_fmt(_kernel_names(i.nodes)) for i in new_insts) or "none"
            raise _Fail(f"no NEW SK with the proposed {label} children {_fmt(want_set)} (NEW SKs: {seen})")
        used.add(hit)
        inst = new_insts[hit]
        if inst.block is not None:
            ev.append(new.cite("V3", "fused_nodes", inst.block.src, excerpt=f"{label}: {inst.sk_name}"))
    remaining = _kernel_names(oi.nodes) - frag_kernels
    if before + after != remaining:
        raise _Fail(
            f"the proposal's before+after {_fmt(before + after)} is not the original minus the fragment "
            f"{_fmt(remaining)}: an original child would be dropped"
        )
    # no scope named None (T8)
    for i in new_insts:
        names = [i.scope_name or ""] + [s.scope_names or "" for s in i.scope_snapshots()]
        if any(_NONE_SCOPE_RE.search(n) for n in names):
            raise _Fail(f"T8: NEW SK {i.sk_name} belongs to a scope named None", [])
    # no new deadlock-sensitive reasons for nodes of the fragment
    frag_keys = {_key(n.node) for n in frag}
    new_bad = _deadlock_reasons(new, st.new_pid, frag_keys)
    old_bad = _deadlock_reasons(old, st.old_pid, frag_keys)
    fresh_bad = [(k, s) for k, s in new_bad.items() if k not in old_bad]
    if fresh_bad:
        (reason, key), src = fresh_bad[0]
        raise _Fail(
            f"new {reason} for fragment node {'/'.join(key[1:])} in NEW metadata",
            [new.cite("V3", "meta", src)],
        )
    # events of the fragment are not left alone inside an SK
    frag_events = {(n.node.event_type, n.node.event_id) for n in frag if not n.is_kernel}
    for i in new_insts:
        ids_in = Counter(n.node.event_id for n in i.nodes if not n.is_kernel)
        for en in i.nodes:
            if (
                not en.is_kernel
                and (en.node.event_type, en.node.event_id) in frag_events
                and ids_in[en.node.event_id] < 2
            ):
                raise _Fail(
                    f"fragment event {en.node.event_type}(eventId {en.node.event_id}) is alone inside NEW SK "
                    f"{i.sk_name} (its partner is outside)",
                    [new.cite("V3", "fused_nodes", en.src)],
                )
    return GateCheck(
        "V3",
        "passed",
        f"fresh sk_meta/{st.new_pid}; fragment {_fmt(frag_kernels)} unfusible ({want}) and in no SK; before "
        f"{_fmt(before)} / after {_fmt(after)} fused as proposed; no None scope; no new deadlock reasons",
        tuple(ev),
    )


def _deadlock_reasons(
    ctx: TriageContext, pid: int | None, frag_keys: set[tuple[str, ...]]
) -> dict[tuple[str, tuple[str, ...]], Source]:
    """(reason, fragment node key) → first source, from fail reasons and split break infos."""
    out: dict[tuple[str, tuple[str, ...]], Source] = {}
    for me in _models_of(ctx, pid):
        by_id: dict[int, Node] = {}
        if me.fused_nodes is not None:
            for b in me.fused_nodes.latest():
                for fn in b.nodes:
                    by_id[fn.node.node_id] = fn.node
        if me.fail_reasons is not None:
            for u in me.fail_reasons.unfusible:
                by_id.setdefault(u.node.node_id, u.node)
                if u.reason in DEADLOCK_REASONS and _key(u.node) in frag_keys:
                    out.setdefault((u.reason, _key(u.node)), u.src)
        if me.scope_split is not None:
            for snap in me.scope_split.snapshots:
                for sc in snap.scopes:
                    for sn in sc.nodes:
                        by_id.setdefault(sn.node.node_id, sn.node)
                    bi = sc.break_info
                    if bi is None:
                        continue
                    for r in (bi.break_reason, bi.fusion_fail_reason):
                        if r not in DEADLOCK_REASONS or r is None:
                            continue
                        trig = by_id.get(bi.trigger_node) if bi.trigger_node is not None else None
                        if trig is None:
                            key: tuple[str, ...] = ("scope", sc.scope_names or "?")
                            out.setdefault((r, key), bi.src)
                        elif _key(trig) in frag_keys:
                            out.setdefault((r, _key(trig)), bi.src)
    return out


def _v4(st: _State) -> GateCheck:
    """V4 profiler, only for multi-stream fragments: sk_prof present and complete (no buffer full)."""
    oi, p = st.old_inst, st.proposal
    streams: set[int] = set()
    if oi is not None:
        for nid in (*p.excluded, *p.collateral):
            n = oi.node_by_id(nid)
            if n is not None and n.stream_id is not None:
                streams.add(n.stream_id)
    if len(streams) < 2:
        raise _NotRun(
            "not needed: the fragment is on a single stream (V4 only confirms multi-stream ordering)"
        )
    new = st.new
    for me in _models_of(new, st.new_pid):
        skl = me.super_kernel_log
        if skl is not None and skl.profiling_buffer_full:
            b = skl.profiling_buffer_full[0]
            raise _Fail(
                "sk_prof lanes incomplete: 'buffer is full, stop dump the time of nodes'",
                [new.cite("V4", "super_kernel_log", b.src)],
            )
    prof = new.scene.of_kind("sk_prof")
    if not prof:
        raise _NotRun(
            f"needed (fragment spans streams {sorted(streams)}) but NEW has no sk_prof_device_<dev>.json; collect "
            "with ASCEND_PROF_SK_ON=<per-core KB> in a diagnostic attempt"
        )
    return GateCheck("V4", "passed", f"sk_prof lanes complete ({', '.join(a.relpath for a in prof)})")


def _v5(st: _State) -> GateCheck:
    """Clean repeated performance (§5.1 V5) from NEW's ``perf.json``: >= 3 clean candidate processes vs
    the baseline measured with them, mean / P90 / std within the declared tolerances."""
    perf = st.new.scene.of_kind("perf")
    if not perf:
        raise _NotRun(
            "V5 needs >= 3 independent clean candidate processes vs the frozen baseline (mean, P90, std); "
            "measure them with `skdbg relaunch … --perf-runs 3` (perf.json)"
        )
    art = perf[0]
    try:
        rec = read_perf(art.path)
    except ParseError as exc:
        raise _Fail(
            f"perf.json unreadable: {exc}", [st.new.cite("V5", "perf", Source(str(art.path), None))]
        ) from None
    verdict = judge(rec)
    cite = [st.new.cite("V5", "perf", Source(str(art.path), None), excerpt=verdict.detail)]
    if verdict.passed is None:
        raise _NotRun(verdict.detail)
    if not verdict.passed:
        raise _Fail(verdict.detail, cite)
    return GateCheck("V5", "passed", verdict.detail, tuple(cite))


_GATES = (("V1", _v1), ("V2", _v2), ("V3", _v3), ("V4", _v4), ("V5", _v5))


def attempt_facts(
    ctx: TriageContext, analysis: Analysis | None = None, round_id: str | None = None
) -> AttemptFacts:
    """:class:`AttemptFacts` of an opened scene (the fault kind from ``analysis`` or a localisation)."""
    engine = importlib.import_module("skdbg.triage.engine")
    if analysis is not None:
        kind, phase = analysis.fault.kind, analysis.fault.phase
    else:
        fault = importlib.import_module("skdbg.triage.localize").localize(ctx).fault
        kind, phase = fault.kind, fault.phase
    marker = ctx.marker_file()
    sha = hashlib.sha256(marker.read_bytes()).hexdigest() if marker is not None and marker.is_file() else None
    summary: dict[str, Any] = engine.run_summary(ctx.run)
    return AttemptFacts.from_summary(summary, kind, sha, round_id=round_id, fault_phase=phase)


def verify(
    old: TriageContext,
    new: TriageContext,
    proposal: Proposal,
    *,
    old_analysis: Analysis | None = None,
    declared_diagnostic: bool = False,
    round_ids: tuple[str, str] | None = None,
    declared_mismatch: str | None = None,
) -> VerifyResult:
    """Run V1–V5 on NEW for OLD's ``proposal`` (triage.md §5); first failure stops, later gates not_run.

    NEW that re-runs OLD's round with only debug options added is a diagnostic attempt, not a
    candidate: its status comes from :func:`diagnostic_rerun` (shared with the session ledger).
    ``round_ids`` (OLD's, NEW's) override run.json's round ids — the ledger knows the rounds —
    and ``declared_mismatch`` is why NEW is not its round's declared change when the caller knows
    that change (a diagnostic re-run of a wrongly materialised launch stays ``invalid``).
    Evidence that is really OLD's (R7) makes the attempt ``invalid`` and routes R7 whatever the
    gates say.
    """
    old_pid = old_analysis.scene.pid if old_analysis is not None and old_analysis.scene.pid else _new_pid(old)
    new_pid = _new_pid(new)
    refused = refused_evidence(old, new, old_pid)
    old_facts = attempt_facts(old, old_analysis, round_ids[0] if round_ids else None)
    new_facts = attempt_facts(new, None, round_ids[1] if round_ids else None)
    old_status, _ = launch_outcome(old_facts)
    old_entry = LedgerEntry(
        old_facts.round_id,
        old_facts.attempt,
        old_status,
        "failed attempt kept as negative evidence" if old_status in FAILING_STATUSES else None,
    )
    decision = diagnostic_rerun(old_facts, new_facts)
    if decision is not None:
        return _diagnostic_result(decision, new_facts, old_entry, refused, proposal, declared_mismatch)
    st = _State(
        old=old,
        new=new,
        proposal=proposal,
        declared_diagnostic=declared_diagnostic,
        old_pid=old_pid,
        new_pid=new_pid,
        refused=refused,
    )
    st.old_inst = _find_old_instance(old, proposal)
    checks: list[GateCheck] = []
    stop: str | None = None
    invalid = False
    for gid, fn in _GATES:
        if stop is not None:
            checks.append(GateCheck(gid, "not_run", f"not run: {stop}"))
            continue
        try:
            checks.append(fn(st))
        except _Fail as f:
            checks.append(GateCheck(gid, "failed", f.detail, f.evidence))
            stop = f"{gid} failed"
            invalid = f.invalid
        except _NotRun as n:
            checks.append(GateCheck(gid, "not_run", n.detail))
        except (OSError, ValueError, KeyError, AttributeError, TypeError, IndexError) as exc:
            # bad input never crashes: an unreadable/inconsistent scene fails the gate closed (§4.5.1)
            checks.append(
                GateCheck(gid, "failed", f"{gid} could not be evaluated: {type(exc).__name__}: {exc}")
            )
            stop = f"{gid} failed"
    passed = [c.gate for c in checks if c.result == "passed"]
    failed = any(c.result == "failed" for c in checks)
    note: str | None = None
    if refused:
        # R7: NEW's evidence is the failed attempt's — whatever V1–V3 say, this launch proved nothing
        a_status, r_status = "invalid", "open"
        note = f"invalid (stale evidence, R7): {len(refused)} artifact(s) belong to the failed attempt"
    elif invalid:
        a_status, r_status = "invalid", "open"  # §6.3: the corrected launch is the next attempt of the round
        note = "invalid (materialisation mismatch)"
    elif failed:
        a_status = "timed_out" if new_facts.exit_timeout else "failed"
        r_status = "failed"
    else:
        a_status = "passed"
        r_status = f"passed_gates(V1..{_last_contiguous(passed)})"
    routes = ("R7",) if refused or {"V1", "V2", "V3"} <= set(passed) else ()
    attempt = LedgerEntry(new_facts.round_id, new_facts.attempt, a_status, note)
    return VerifyResult(
        routes=routes,
        verification=tuple(checks),
        round_id=new_facts.round_id,
        round_status=r_status,
        attempt=attempt,
        ledger=(old_entry, attempt),
        refused_evidence=tuple(st.refused),
        mechanism_declared=proposal.mechanism,
        mechanism_found=st.mechanism_found,
        notes=tuple(st.notes),
    )


def _diagnostic_result(
    decision: AttemptDecision,
    new_facts: AttemptFacts,
    old_entry: LedgerEntry,
    refused: list[RefusedEvidence],
    proposal: Proposal,
    declared_mismatch: str | None,
) -> VerifyResult:
    """A diagnostic re-run: no candidate gate applies (§3.9, §5.2); the status comes from the decision."""
    reason = (
        f"not run: diagnostic attempt of round {new_facts.round_id} (adds {show_options(decision.added)}) — "
        "localisation evidence, not a revalidation of a candidate (§3.9, §5.2)"
    )
    status, routes, note = decision.status, decision.routes, decision.why
    if refused:
        status, routes = "invalid", ("R7",)
        note = f"invalid (stale evidence, R7): {len(refused)} artifact(s) belong to the failed attempt"
    elif declared_mismatch is not None:
        status, routes = "invalid", ()
        note = f"invalid (materialisation mismatch): {declared_mismatch}"
    attempt = LedgerEntry(new_facts.round_id, new_facts.attempt, status, note)
    return VerifyResult(
        routes=routes,
        verification=tuple(GateCheck(g, "not_run", reason) for g in ("V1", "V2", "V3", "V4", "V5")),
        round_id=new_facts.round_id,
        round_status=decision.round_status,
        attempt=attempt,
        ledger=(old_entry, attempt),
        refused_evidence=tuple(refused),
        mechanism_declared=proposal.mechanism,
        diagnostic=dict(decision.added),
    )


def _last_contiguous(passed: list[str]) -> str:
    k = 0
    for i, g in enumerate(("V1", "V2", "V3", "V4", "V5")):
        if g in passed and k == i:
            k = i + 1
    return f"V{max(k, 1)}"


def verify_scenes(
    old_path: str | Path,
    new_path: str | Path,
    *,
    source_root: str | Path | None = None,
    declared_diagnostic: bool = False,
) -> VerifyResult:
    """Open both scenes, run the engine on OLD for its proposal, and verify NEW against it."""
    # lazy: the engine imports every stage (and lands after this module)
    engine = importlib.import_module("skdbg.triage.engine")
    analyze_context: Callable[[TriageContext], Analysis] = engine.analyze_context

    old = open_context(old_path, source_root=source_root)
    new = open_context(new_path, source_root=source_root)
    analysis = analyze_context(old)
    return verify(old, new, analysis.proposal, old_analysis=analysis, declared_diagnostic=declared_diagnostic)


__all__ = [
    "DEADLOCK_REASONS",
    "EXPECTED_REASON",
    "FAILING_STATUSES",
    "AttemptDecision",
    "AttemptFacts",
    "LedgerEntry",
    "RefusedEvidence",
    "VerifyResult",
    "attempt_facts",
    "debug_options_added",
    "diagnostic_rerun",
    "edits_for",
    "launch_outcome",
    "materialisation_mismatch",
    "refused_evidence",
    "show_options",
    "verify",
    "verify_scenes",
]
