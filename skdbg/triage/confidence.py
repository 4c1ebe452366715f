"""Confidence grading C0–C6 (triage.md §3.8): first matching rule wins.

Why a separate pure function: the grade is the single decision that allows (high/medium) or
forbids (low/n/a) an exclusion proposal, so it must be a small, auditable mapping from the
attribution facts to one rule id with a one-line reason — no new evidence is read here.

GE-mode SKs (``te_superkernel_*``, X6) are SK faults of another family (§3.2): their entry gate
fails G2 by construction (no ``sk_meta/<pid>``), which is not a reason to grade ``n/a``. C0 covers
a gate failed for any *other* reason, and non-SK faults; a GE-mode fault is graded like any SK
whose child is named by a PC→symbol match without task-queue / fused-node metadata: **C5, low**,
with the dump ``symbol name`` as the only suspect field (C6 without a dump line, C2 when the
exception cores' dump symbols disagree). ``verdict.candidates`` is the attribution's
``candidate_set`` — PC matches intersected with what COND allows (§3.4, T4/T5).
"""

from __future__ import annotations

from dataclasses import replace

from skdbg.parsers.runtime_faults import DumpException
from skdbg.triage.attribution import Attribution
from skdbg.triage.context import TriageContext
from skdbg.triage.localize import dialect_recognised
from skdbg.triage.model import ChildRef, EvidenceItem, GateResult, Verdict
from skdbg.triage.stages import Localization

_NAMING_LEVELS = ("L1", "L2", "L3")
#: gate ids a GE-mode SK fails by construction (no sk_meta/<pid>: G2 and the metadata predicates)
GE_INHERENT_GAPS = frozenset({"G2", "F3", "F4", "F5", "F6", "F7"})
#: routes for which the workflow does not apply at all (compile-only X1, no fusion X2)
_NOT_THIS_WORKFLOW = frozenset({"X1", "X2"})
#: child identities that do not tie a task index to one fused node (§3.5 rule 2 / T6: caps at medium)
_UNTIED = frozenset({"ambiguous", "unresolved"})
#: run-time failure phases (G3) that may end without any fault line: a hang/timeout (§9 item 4) or a
#: wrong result / failed execution with no device fault
SILENT_PHASES = frozenset({"timeout", "hang", "correctness", "execution"})


def _candidates(att: Attribution, loc: Localization, ks: tuple[int, ...] | list[int]) -> tuple[ChildRef, ...]:
    """Every candidate child for ``ks``: via L4 when resolved, else per candidate SK instance (C1)."""
    out: list[ChildRef] = []
    for k in ks:
        ref = att.child(k)
        if ref is not None and (loc.instance is not None or not loc.instance_candidates):
            out.append(ref)
            continue
        for inst in loc.instance_candidates:
            out.append(inst.child(k))
        if ref is not None and not loc.instance_candidates:
            out.append(ref)
    seen: dict[tuple[object, ...], ChildRef] = {}
    for r in out:
        seen.setdefault((r.model, r.scope_id, r.task_index, r.node_id), r)
    return tuple(seen.values())


def _mark(evidence: tuple[EvidenceItem, ...], suspect: int | None) -> tuple[EvidenceItem, ...]:
    """agrees=True/False for naming items relative to the suspect; trap/context items stay None."""
    if suspect is None:
        return evidence
    out = []
    for e in evidence:
        if e.agrees is None and e.rule is None and e.task_index is not None:
            e = replace(e, agrees=e.task_index == suspect)
        out.append(e)
    return tuple(out)


def _dialect_unknown(loc: Localization) -> bool:
    """G4/C1: the handler output is not recognised.

    A block whose signature lines fit a range of known dialects is *recognised* even though its
    revision cannot be narrowed (see :func:`dialect_recognised`); an anchor-only block
    (``Exception is from superkernel function '…', op_trace=…``) fits D1–D5 and falls through to C6
    (only the SK entry is known), not C1.
    """
    if loc.dialect_known and loc.fault.dialect not in (None, "unknown"):
        return False
    inc = loc.incident
    if inc is None:
        # no handler output at all: the plog dialect is not detectable (G4), so nothing — not even a PC
        # from the runtime's core report — may grade above low
        return loc.fault.kind == "sk" or (not loc.dialect_known and loc.fault.dialect is not None)
    if loc.fault.dialect != inc.dialect:
        return True  # the localisation did not accept the handler's own reading
    return not dialect_recognised(inc.dialect_candidates)


def silent_failure(ctx: TriageContext, loc: Localization) -> bool:
    """A run-time failure of this workflow (G3) with no runtime fault line and no SK handler output
    (kind ``none``): a hang/timeout (§9 item 4: low, X5/R2) or a wrong result. The gate tied it to the
    candidate's fresh SK metadata; only that is known, so it is graded low (C1/C6), never n/a.

    A run whose recorded exit is a clean 0 (no timeout, no signal) did not fail, whatever phase label
    its manifest carries: it stays C0."""
    if loc.fault.kind != "none" or loc.fault.phase not in SILENT_PHASES:
        return False
    ex = ctx.run.exit if ctx.run is not None else None
    return not (ex is not None and ex.status == 0 and not ex.timeout and ex.signal is None)


def _base_flags(gate: GateResult, att: Attribution) -> list[str]:
    flags = list(att.flags)
    if gate.diagnostic and "diagnostic_attempt" not in flags:
        flags.append("diagnostic_attempt")  # F9: evidence from a diagnostic run is labelled
    return flags


def _risks(gate: GateResult, att: Attribution, suspect: ChildRef | None) -> list[str]:
    risks: list[str] = []
    if gate.diagnostic:
        why = "; ".join(gate.diagnostic_reasons) or "debug options / debug entry"
        risks.append(
            f"F9: the evidence comes from a diagnostic attempt ({why}); debug options change fusion "
            "and timing — confirm with a clean retest"
        )
    if "cond_index_overflow" in att.flags:
        risks.append("T5: a COND task index was recovered from leaked scope bits (nodeCnt > 256)")
    if "possible_stale_metadata" in att.flags:
        risks.append("L4 contradiction: the metadata may be stale or from another compilation")
    if suspect is not None and suspect.identity in ("by_name", "by_position"):
        risks.append(
            f"§3.5: task {suspect.task_index} was tied to nodeId {suspect.node_id} {suspect.identity} "
            "(no sk_device_args.log row)"
        )
    return risks


def grade(ctx: TriageContext, gate: GateResult, loc: Localization, att: Attribution) -> Verdict:
    """C0–C6 in order (§3.8); ``ctx`` only turns file paths into scene-relative ones."""
    flags = _base_flags(gate, att)
    missing = att.missing
    evidence = att.evidence

    if loc.fault.kind == "ge_sk" and set(gate.failed) <= GE_INHERENT_GAPS:
        return _ge_verdict(ctx, att, flags)

    # C0 — gate failed or not an SK fault: no suspect at all. A run-time failure that printed no fault
    # line and no handler block (a hang, §9 item 4, or a wrong result) is not "not an SK fault": the
    # fresh metadata ties it to the candidate's SK, and only that is known — low (C1/C6), never n/a.
    if not gate.passed or not (loc.is_sk or silent_failure(ctx, loc)):
        why = (
            f"gate failed ({', '.join(gate.failed) or 'entry gate'})"
            if not gate.passed
            else f"the fault is not an AOT SK fault (kind {loc.fault.kind})"
        )
        risk = [f"no child can be attributed: {why}"]
        risk += [f"{g.id}: {g.detail} — collect: {g.collect}" for g in gate.gaps if g.id in gate.failed]
        if _NOT_THIS_WORKFLOW & set(gate.route_hints) or loc.fault.phase == "compile":
            # X1/X2: not this workflow — per-level "rerun with the trace / re-collect" lines do not apply
            missing = ()
        return Verdict("n/a", "C0", why, None, (), tuple(flags), evidence, missing, tuple(risk))

    k_set = att.K
    amb_all = tuple(sorted(set(k_set) | set(att.candidate_set)))

    # C1 — dialect unknown, or the SK instance is not unique (F5/F6 ambiguity).
    if _dialect_unknown(loc):
        return Verdict(
            "low",
            "C1",
            (
                f"handler dialect unknown ({loc.fault.dialect}); field meanings cannot be trusted (G4)"
                if loc.incident is not None
                else "no SK handler output: the plog dialect is not detectable (G4)"
            ),
            None,
            _candidates(att, loc, amb_all),
            tuple(flags),
            evidence,
            missing,
            ("G4: no grade above low for an unrecognised dialect",),
        )
    if loc.instance is None and (loc.instance_candidates or loc.instance_rule == "ambiguous"):
        n = len(loc.instance_candidates)
        return Verdict(
            "low",
            "C1",
            f"the SK instance cannot be resolved uniquely ({n} candidate SKs, rule {loc.instance_rule})",
            None,
            _candidates(att, loc, amb_all),
            tuple(flags),
            evidence,
            missing,
            ("F5/F6: the child could belong to any of the candidate SKs",),
        )

    # C2 — conflict between cores or levels, or L4 contradicts the named child.
    contradicted = [k for k in k_set if (r := att.e4.get(k)) is not None and r.contradiction]
    if len(k_set) >= 2 or att.conflicts or contradicted:
        if len(k_set) >= 2 or att.conflicts:
            why = "; ".join(att.conflicts) or f"levels/cores name {len(k_set)} children"
        else:
            k = contradicted[0]
            why = f"L4 contradicts task {k}: " + "; ".join(att.e4[k].detail)
        return Verdict(
            "low",
            "C2",
            why,
            None,
            _candidates(att, loc, amb_all),
            tuple(flags),
            evidence,
            missing,
            ("conflicting evidence: excluding any one candidate may leave the faulty child fused",),
        )

    if len(k_set) == 1:
        k = k_set[0]
        levels = att.levels_of(k)
        e4 = att.e4.get(k)
        e4_ok = e4 is not None and e4.ok
        ref = att.child(k)
        suspect = replace(ref, symbol=att.symbols.get(k, ref.symbol)) if ref is not None else None
        inst = loc.instance
        covered = inst is not None and inst.has_metadata
        strong = "L1" in levels or "L2" in levels
        # C3 — E1/E2 confirmed by E3, the queue's entry address, or E4.
        if strong and covered and ("L3" in levels or k in att.entry_confirmed or e4_ok):
            by = [lv for lv in ("L1", "L2") if lv in levels]
            conf = []
            if "L3" in levels:
                conf.append("E3 (COND)")
            if k in att.entry_confirmed:
                conf.append("task-queue entry address")
            if e4_ok:
                conf.append("E4 (fused nodes)")
            why = f"task {k} named by {'+'.join(by)} and confirmed by {', '.join(conf)}"
            level = "high"
            risks = _risks(gate, att, suspect)
            if suspect is not None and suspect.identity in _UNTIED:
                # §3.5 rule 2: several children share the funcName and wait nodes were reordered (T6), or
                # nothing names the node — the task is certain, the graph node is not: capped at medium.
                level = "medium"
                why += f"; its fused node is {suspect.identity} (§3.5, T6) — capped at medium"
                risks.insert(0, f"§3.5: task {k} cannot be tied to one fused node ({suspect.identity})")
            return Verdict(
                level,
                "C3",
                why,
                suspect,
                _candidates(att, loc, (k,)),
                tuple(flags),
                _mark(evidence, k),
                missing,
                tuple(risks),
            )
        # C4 — E3 only (E2 absent or ambiguous with k ∈ M), confirmed by E4.
        pcs_ok = all(len(c.m) < 2 or k in c.m for c in att.cores)
        if (levels == ("L3",) or set(levels) == {"L3"}) and e4_ok and pcs_ok:
            risks = [
                "medium: the child is named by COND opIndex + metadata only; the PC/symbol is "
                "repeated or unavailable — a wrong identity would exclude a healthy child",
                *_risks(gate, att, suspect),
            ]
            return Verdict(
                "medium",
                "C4",
                f"task {k} named by E3 (COND) only and confirmed by E4 (fused nodes)",
                suspect,
                _candidates(att, loc, amb_all or (k,)),
                tuple(flags),
                _mark(evidence, k),
                missing,
                tuple(risks),
            )
        # C5 — E1/E2 named k but no task queue / fused-node metadata covers the SK.
        if strong and not covered:
            return Verdict(
                "low",
                "C5",
                f"task {k} named by {'+'.join(levels)} but no task queue or fused-node metadata covers "
                "this SK (incomplete logs)",
                None,
                _candidates(att, loc, (k,)),
                tuple(flags),
                evidence,
                missing,
                ("incomplete logs: the task index cannot be tied to a graph node",),
            )

    # C6 — anything else.
    if not k_set and att.e3_ambiguous:
        why = f"COND index is ambiguous (candidates {list(att.e3_ambiguous)}) and no E1 names a child"
    elif not k_set and att.e2_ambiguous:
        why = f"the PC matches several children {list(att.e2_ambiguous)} and no E3 resolves them"
    elif not k_set and att.bystanders and not att.implicated:
        why = "only bystander cores (SK entry code / between children) — no child-level evidence"
        waits = [f"core {c.core_id} waits at {c.blocking}" for c in att.bystanders if c.blocking]
        if waits:
            why += " (X5: " + "; ".join(waits) + ")"
    elif not k_set and silent_failure(ctx, loc):
        why = (
            f"the attempt ended in {loc.fault.phase} with no fault line and no SK handler output: only the "
            "candidate's SK in the fresh metadata is known — no child-level evidence"
        )
    elif not k_set:
        why = "no child-level evidence (only the SK entry, COND unavailable or no sub kernel matched)"
    else:
        k = k_set[0]
        why = f"task {k} named by {'+'.join(att.levels_of(k))} but not confirmed (no E3/E4/entry match)"
    return Verdict(
        "low",
        "C6",
        why,
        None,
        _candidates(att, loc, amb_all),
        tuple(flags),
        evidence,
        missing,
        ("low: no child may be excluded; collect L1 evidence or narrow the scope (§3.9)",),
    )


def _ge_ref(symbol: str) -> ChildRef:
    """A GE-mode suspect: the dump symbol is all that family names (no task index, node or scope)."""
    return ChildRef(None, None, None, None, None, None, symbol=symbol, identity="unresolved")


def _ge_verdict(ctx: TriageContext, att: Attribution, flags: list[str]) -> Verdict:
    """X6 (§3.1.4, §4.5.2): a GE-mode SK fault is low — C5 with the dump symbol, else C6/C2."""
    dumps: list[DumpException] = list(att.ge_dumps)
    where = {d.symbol_name: f"{ctx.relpath(d.src.file)}:{d.src.line}" for d in reversed(dumps)}
    symbols = list(dict.fromkeys(d.symbol_name for d in dumps))
    risks = (
        "X6: GE-mode SK — no sk_meta/<pid>, task queue or fused-node list exists; the dump symbol is "
        "informational and never an exclusion target (GE exclusion form: torchair.scope.super_kernel(None))",
        "R1: rerun the candidate under npugraph_ex with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 for "
        "child-level evidence",
    )
    bad = [d for d in dumps if not (d.offset_consistent and d.symbol_contains_offset)]
    if bad:
        flags = [*flags, "ge_dump_inconsistent"]
    if len(symbols) == 1 and not bad:
        sym = symbols[0]
        return Verdict(
            "low",
            "C5",
            f"GE-mode SK: the dump names symbol {sym} ({where[sym]}) but no task queue or fused-node "
            "metadata covers a GE-mode SK (incomplete logs)",
            _ge_ref(sym),
            (),
            tuple(flags),
            att.evidence,
            (),
            risks,
        )
    if len(symbols) >= 2:
        return Verdict(
            "low",
            "C2",
            "GE-mode SK: the exception cores' dump symbols disagree: "
            + ", ".join(f"{s} ({where[s]})" for s in symbols),
            None,
            tuple(_ge_ref(s) for s in symbols),
            tuple(flags),
            att.evidence,
            (),
            risks,
        )
    why = (
        "GE-mode SK: the dump line does not describe its own PC (offset/symbol range inconsistent)"
        if bad
        else "GE-mode SK: only the te_superkernel_* entry is known (no dump symbol line)"
    )
    return Verdict("low", "C6", why, None, (), tuple(flags), att.evidence, (), risks)


__all__ = ["GE_INHERENT_GAPS", "SILENT_PHASES", "grade", "silent_failure"]
