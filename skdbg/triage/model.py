"""The triage engine's result types and their JSON form (spec/analysis-json.md, triage.md §3–§7).

Why one module: every stage (gate, localisation, attribution, confidence, routing, proposal,
verify, report, CLI, TUI) exchanges these records, and the JSON contract of ``skdbg analyze`` is
produced from them in exactly one place (:meth:`Analysis.to_json`). Records are plain frozen
dataclasses so the TUI and tests can build and compare them freely.

Rule ids (G*, F*, L*, T*, C*, R*, X*, D*, N1, V*) are those of spec/triage.md and appear verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skdbg.parsers.markers import MarkerEdit as MarkerEdit  # the one marker model owns the edit record

if TYPE_CHECKING:  # waitfor imports this module (EvidenceItem); the annotation only needs the name
    from skdbg.triage.waitfor import WaitFor

SCHEMA = "skdbg.analysis/1"
VERIFY_SCHEMA = "skdbg.verify/1"

FAULT_KINDS = ("sk", "non_sk", "ge_sk", "none")
PHASES = ("execution", "correctness", "timeout", "hang", "device_fault", "compile", "unknown")
CONFIDENCES = ("high", "medium", "low", "n/a")
CORE_ROLES = ("implicated", "bystander", "unknown")
#: how the SK instance of a fault was resolved (``fault.scope_resolution``, triage.md §3.2 item 3, F5/F6)
SCOPE_RESOLUTIONS = ("header", "cond", "name_sequence", "single_sk")
PROPOSAL_STATUSES = ("proposed", "blocked", "none")
MECHANISMS = ("explicit_none_exclusion", "close_reopen_exclusion", "dependency_aligned_split")
GATE_RESULTS = ("passed", "failed", "not_run")


def hex_or_none(value: int | None) -> str | None:
    """Addresses travel as ``0x…`` strings in JSON (analysis-json.md): exact, and greppable."""
    return None if value is None else f"0x{value:x}"


# ------------------------------------------------------------------------------------------ evidence


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One cited fact: level (L1–L4, or G/F/T/X… for non-attribution facts), where, what it says.

    ``file`` is relative to the scene root; ``line`` 1-based, or ``json_path`` for JSON artifacts.
    ``agrees``: True when it supports the verdict's suspect, False when it contradicts it, None when
    it is context only (e.g. a T1 "last finished" record kept to show it was *not* used).
    ``rule``: the rule/trap id that used or guarded this item (e.g. "T4" for a first-match quote).
    """

    level: str
    source: str  # plog | super_kernel_log | fused_nodes | device_args | task_queue | bin_files | run_json | …
    file: str
    line: int | None
    excerpt: str
    agrees: bool | None = None
    json_path: str | None = None
    rule: str | None = None
    core_id: int | None = None
    task_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "level": self.level,
            "source": self.source,
            "file": self.file,
            "line": self.line,
            "excerpt": self.excerpt,
            "agrees": self.agrees,
        }
        if self.json_path is not None:
            out["json_path"] = self.json_path
        if self.rule is not None:
            out["rule"] = self.rule
        if self.core_id is not None:
            out["core_id"] = self.core_id
        if self.task_index is not None:
            out["task_index"] = self.task_index
        return out

    @property
    def where(self) -> str:
        if self.json_path is not None:
            return f"{self.file}:{self.json_path}"
        return f"{self.file}:{self.line}" if self.line is not None else self.file


# ------------------------------------------------------------------------------------------ children


@dataclass(frozen=True, slots=True)
class ChildRef:
    """A child's identity (triage.md §3.5 item 3). ``occurrence`` = n-th child with this funcName in the SK.

    ``task_index`` is None only for a GE-mode suspect (X6), known by its dump ``symbol`` alone."""

    task_index: int | None
    node_id: int | None
    func_name: str | None
    kernel_type: str | None
    stream_id: int | None
    scope_id: int | None
    scope_name: str | None = None
    model: str | None = None  # model dir label without "model_", e.g. "48_1"
    symbol: str | None = None  # bound SK symbol / ELF symbol when known
    occurrence: int | None = None
    position: int | None = None  # position in the sk_fused_nodes.log child list
    identity: str = "direct"  # direct (sk_device_args) | by_name | by_position | ambiguous | unresolved

    def to_json(self) -> dict[str, Any]:
        return {
            "task_index": self.task_index,
            "node_id": self.node_id,
            "func_name": self.func_name,
            "symbol": self.symbol,
            "kernel_type": self.kernel_type,
            "stream_id": self.stream_id,
            "scope_id": self.scope_id,
            "scope_name": self.scope_name,
            "model": self.model,
            "occurrence": self.occurrence,
            "identity": self.identity,
        }

    def short(self) -> dict[str, Any]:
        return {"task_index": self.task_index, "node_id": self.node_id, "func_name": self.func_name}

    def label(self) -> str:
        if self.task_index is None and self.func_name is None and self.symbol:
            return f"{self.symbol} (dump symbol)"
        name = self.func_name or "?"
        nid = "?" if self.node_id is None else str(self.node_id)
        return f"{name} (task {self.task_index}, nodeId {nid})"


# ------------------------------------------------------------------------------------------ gate


@dataclass(frozen=True, slots=True)
class GateGap:
    """A gate condition or freshness predicate that could not be established, and how to fix it."""

    id: str  # G1..G5 or F1..F9
    detail: str
    collect: str
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "detail": self.detail, "collect": self.collect}
        if self.file is not None:
            out["file"] = self.file
            out["line"] = self.line
        return out


@dataclass(frozen=True, slots=True)
class GateResult:
    """Entry gate G1–G5 with F1–F9 (triage.md §1).

    ``failed`` lists the ids that block the workflow (the verdict becomes C0 / route R1 or X1/X2/X7);
    ``gaps`` also holds soft findings (e.g. an env probe absent) that do not fail the gate.
    ``checks`` maps every G/F id to "passed" | "failed" | "not_run" | "unknown" for reports.
    ``diagnostic`` is F9: the attempt ran with debug options / a debug entry (evidence labelled).
    ``route_hints``: routes the gate itself established (R1 evidence gap, X1 compile, X2 no fusion,
    X3 non-SK, X6 GE-mode, X7 not started) so the router need not re-derive them.
    """

    passed: bool
    failed: tuple[str, ...] = ()
    gaps: tuple[GateGap, ...] = ()
    checks: tuple[tuple[str, str], ...] = ()
    diagnostic: bool = False
    diagnostic_reasons: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    route_hints: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": list(self.failed),
            "gaps": [g.to_json() for g in self.gaps],
            "checks": dict(self.checks),
            "diagnostic": self.diagnostic,
            "diagnostic_reasons": list(self.diagnostic_reasons),
        }


# ------------------------------------------------------------------------------------------ fault


@dataclass(frozen=True, slots=True)
class CoreFinding:
    """What one exception core says, per evidence level (triage.md §3.4, §3.6).

    ``e1``/``e2``/``e3``: the task index named at that level (None = no child at that level).
    ``m``: the full recomputed PC match set M(c) (T4); ``e3_candidates``: E3amb(c).
    ``role``: implicated (named a child via E1/E2/E3), bystander (X5: states 0/1/3/4 and PC outside
    every child, not 0), unknown (nothing decidable, e.g. PC = 0 — T9).
    ``blocking``: for a bystander, the first blocking task after its last finished FUNC (X5).
    """

    core_id: int
    core_type: str | None
    start_pc: int | None
    current_pc: int | None
    role: str
    task_index: int | None = None
    e1: int | None = None
    e2: int | None = None
    m: tuple[int, ...] = ()
    e3: int | None = None
    e3_candidates: tuple[int, ...] = ()
    op_state: int | None = None
    state_name: str | None = None
    cond_value: int | None = None
    cond_state: str | None = None
    cond_index: int | None = None
    printed_node: int | None = None  # the handler's "Found in node[k]" (T4: quotation only)
    pc_location: str | None = None  # "child <funcName>+0x…", "sk_entry", "unknown (PC = 0)", …
    blocking: str | None = None
    flags: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "core_id": self.core_id,
            "core_type": self.core_type,
            "start_pc": hex_or_none(self.start_pc),
            "current_pc": hex_or_none(self.current_pc),
            "role": self.role,
            "task_index": self.task_index,
            "levels": {"L1": self.e1, "L2": self.e2, "L3": self.e3},
            "pc_matches": list(self.m),
            "l3_candidates": list(self.e3_candidates),
            "op_state": self.op_state,
            "state_name": self.state_name,
            "cond": hex_or_none(self.cond_value),
            "cond_state": self.cond_state,
            "cond_index": self.cond_index,
            "printed_node": self.printed_node,
            "pc_location": self.pc_location,
            "blocking": self.blocking,
            "flags": list(self.flags),
        }


@dataclass(frozen=True, slots=True)
class FaultInfo:
    """Fault localisation (triage.md §3.1–§3.3)."""

    kind: str  # sk | non_sk | ge_sk | none
    phase: str
    entry: str | None = None
    op_trace: bool | None = None
    dialect: str | None = None  # D0..D5 | unknown | None (no handler block)
    scope_id: int | None = None
    model: str | None = None
    #: how the SK was tied to the fault: header | cond | name_sequence | single_sk (None: SK unknown)
    scope_resolution: str | None = None
    sk_name: str | None = None
    node_cnt: int | None = None
    kernel_name: str | None = None  # the runtime's fault kernel_name
    device_id: int | None = None
    cores: tuple[CoreFinding, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "phase": self.phase,
            "entry": self.entry,
            "op_trace": self.op_trace,
            "dialect": self.dialect,
            "scope_id": self.scope_id,
            "model": self.model,
            "scope_resolution": self.scope_resolution,
            "sk_name": self.sk_name,
            "node_cnt": self.node_cnt,
            "kernel_name": self.kernel_name,
            "device_id": self.device_id,
            "cores": [c.to_json() for c in self.cores],
            "notes": list(self.notes),
        }


# ------------------------------------------------------------------------------------------ verdict


@dataclass(frozen=True, slots=True)
class Verdict:
    """Confidence C0–C6 (first matching rule wins), suspect, alternatives and the evidence chain."""

    confidence: str  # high | medium | low | n/a
    rule: str  # C0..C6
    reason: str  # one line: why this rule fired
    suspect: ChildRef | None = None
    candidates: tuple[ChildRef, ...] = ()
    flags: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    missing: tuple[str, ...] = ()  # per-level "what is missing" lines (R2)
    residual_risk: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "rule": self.rule,
            "reason": self.reason,
            "suspect": None if self.suspect is None else self.suspect.to_json(),
            "candidates": [c.short() | {"kernel_type": c.kernel_type} for c in self.candidates],
            "flags": list(self.flags),
            "evidence": [e.to_json() for e in self.evidence],
            "missing": list(self.missing),
            "residual_risk": list(self.residual_risk),
        }


@dataclass(frozen=True, slots=True)
class NextStep:
    """A next attempt (D1–D3 diagnostic options, N1 narrowing, or a clean retest) with why."""

    id: str  # D1 | D2 | D3 | N1 | R1 (rerun under npugraph_ex, X6) | RETEST
    options: dict[str, Any]
    why: str
    accepted_by_probe: bool | None = None  # None: no probe archived (assumption stated in why)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "options": dict(self.options),
            "why": self.why,
            "accepted_by_probe": self.accepted_by_probe,
        }


# ------------------------------------------------------------------------------------------ proposal


@dataclass(frozen=True, slots=True)
class SafetyNote:
    """A dependency the change must preserve (§4.3), with the evidence it came from."""

    kind: str  # event | memory_event | barrier | collective | cache | stream | deadlock | straddle | source
    detail: str
    evidence: str  # "file:line — excerpt"
    blocks: bool = False  # True when this edge forbids the single-child exclusion

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "evidence": self.evidence, "blocks": self.blocks}


@dataclass(frozen=True, slots=True)
class Decision:
    """What the user decided about the proposal in the TUI, and where that decision is recorded.

    Why a field apart from ``status``: ``status`` is what the analysis found (proposed | blocked |
    none, analysis-json spec); acceptance is a person's act recorded in a session ledger (the round
    the proposal opened). The exported analysis carries both, so a reader sees the edited proposal
    and that it was accepted — and in which ledger round, or that it was recorded nowhere.
    """

    status: str  # accepted
    session: str | None  # the ledger session it was recorded in
    round_id: str | None  # the exclusion round the proposal opened
    proposal_sha256: str | None  # canonical SHA-256 of the recorded body (the ledger's key)
    ledger_status: str | None  # the proposal's status in the ledger (proposed | blocked | …)
    source_attempt: str | None  # ROUND/attempt-NNN the proposal was taken from
    edits: tuple[str, ...] = ()  # the user's edits before accepting, in order

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "session": self.session,
            "round_id": self.round_id,
            "proposal_sha256": self.proposal_sha256,
            "ledger_status": self.ledger_status,
            "source_attempt": self.source_attempt,
            "edits": list(self.edits),
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    """The exclusion proposal (§4.1 shape). Node lists hold graph nodeIds in SK order."""

    status: str  # proposed | blocked | none
    mechanism: str | None = None
    child: ChildRef | None = None
    original: tuple[int, ...] = ()
    excluded: tuple[int, ...] = ()
    collateral: tuple[int, ...] = ()
    before: tuple[int, ...] = ()
    after: tuple[int, ...] = ()
    marker_edits: tuple[MarkerEdit, ...] = ()
    diff: str = ""  # unified diff of the marker file, when a source was available
    declared_change: dict[str, str] = field(default_factory=dict)
    safety: tuple[SafetyNote, ...] = ()
    reason: str = ""
    confidence: str | None = None
    source_site: str | None = None  # explicit | inferred | None
    probe_evidence: str | None = None
    blocked_reason: str | None = None
    route: str | None = None  # R5 / R6 when the proposal is a split or blocked
    notes: tuple[str, ...] = ()  # what is missing or assumed (e.g. the marker file needed for edits)
    decision: Decision | None = None  # set when the user accepted it (the TUI), never by the engine

    def to_json(self) -> dict[str, Any]:
        doc = self.body_json()
        if self.decision is not None:
            doc["decision"] = self.decision.to_json()
        return doc

    def body_json(self) -> dict[str, Any]:
        """The proposal itself, without the user's decision (what a ledger records and hashes)."""
        return {
            "status": self.status,
            "mechanism": self.mechanism,
            "child": None if self.child is None else self.child.to_json(),
            "original": list(self.original),
            "excluded": list(self.excluded),
            "collateral": list(self.collateral),
            "before": list(self.before),
            "after": list(self.after),
            "marker_edits": [e.to_json() for e in self.marker_edits],
            "diff": self.diff,
            "declared_change": dict(self.declared_change),
            "safety": [s.to_json() for s in self.safety],
            "reason": self.reason,
            "confidence": self.confidence,
            "source_site": self.source_site,
            "probe_evidence": self.probe_evidence,
            "blocked_reason": self.blocked_reason,
            "notes": list(self.notes),
        }


NO_PROPOSAL = Proposal(status="none", reason="no suspect child")


# ------------------------------------------------------------------------------------------ analysis


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    """One artifact in the analysis's scene block: its kind, path in the scene, SHA-256, mtime and size."""

    kind: str
    path: str
    sha256: str
    mtime: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "sha256": self.sha256,
            "mtime": self.mtime,
            "size": self.size,
        }


@dataclass(frozen=True, slots=True)
class SceneInfo:
    """The analysis's scene block: the process, rank and device analysed and every artifact of the scene
    with its SHA-256 (G5)."""

    root: str
    pid: int | None
    rank: int | None
    device: int | None
    artifacts: tuple[ArtifactRef, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "pid": self.pid,
            "rank": self.rank,
            "device": self.device,
            "artifacts": [a.to_json() for a in self.artifacts],
        }


@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything ``skdbg analyze`` concludes about one scene."""

    scene: SceneInfo
    gate: GateResult
    fault: FaultInfo
    verdict: Verdict
    routes: tuple[str, ...]
    next_steps: tuple[NextStep, ...]
    proposal: Proposal
    run: dict[str, Any] = field(default_factory=dict)  # run identity as read (for reports)
    warnings: tuple[str, ...] = ()
    # X5: the wait-for graph of the bystander cores (None: no bystander core with a task queue)
    wait_for: WaitFor | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "schema": SCHEMA,
            "scene": self.scene.to_json(),
            "gate": self.gate.to_json(),
            "fault": self.fault.to_json(),
            "verdict": self.verdict.to_json(),
            "routes": list(self.routes),
            "next_steps": [s.to_json() for s in self.next_steps],
            "proposal": self.proposal.to_json(),
            "run": self.run,
            "warnings": list(self.warnings),
        }
        if self.wait_for is not None:
            out["wait_for"] = self.wait_for.to_json()
        return out


# ------------------------------------------------------------------------------------------ verify


@dataclass(frozen=True, slots=True)
class GateCheck:
    """One revalidation gate V1–V5 (a gate after a failed one is ``not_run``, never ``passed``)."""

    gate: str
    result: str  # passed | failed | not_run
    detail: str
    evidence: tuple[EvidenceItem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "result": self.result,
            "detail": self.detail,
            "evidence": [_gate_evidence(e) for e in self.evidence],
        }


def _gate_evidence(e: EvidenceItem) -> dict[str, Any]:
    """Verify-contract evidence: file + line, plus the JSON path when the cited fact is in a JSON file."""
    out: dict[str, Any] = {"file": e.file, "line": e.line, "excerpt": e.excerpt}
    if e.json_path is not None:
        out["json_path"] = e.json_path
    return out
