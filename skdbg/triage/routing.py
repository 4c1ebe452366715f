"""Failure routes R1–R6 / X1–X7 (triage.md §7) and next steps D1–D3 / N1 / R1 / clean retest (§3.9).

Why one module: routes and next steps are two views of the same decision — what the workflow may
do after this analysis. A low verdict never excludes; it asks for a *new diagnostic attempt*
with option values the archived environment probe accepted (scene-layout.md), or a narrowing.
R7 belongs to ``verify`` and is never produced here.

Rules of thumb the steps follow: a sync-all attempt always names the execution trace too (the
runtime does not switch the trace on for sync-all); no step repeats an option set the failed attempt
already ran with; X1/X2 (not this workflow) get no R1 and no diagnostic rerun — only a clean retry
(``RETEST``) when a compile timed out or was interrupted; a GE-mode SK (X6) gets R1, "rerun under
npugraph_ex", as its one step.
"""

from __future__ import annotations

from typing import Any

from skdbg.parsers.run_identity import EnvProbe
from skdbg.triage.attribution import Attribution
from skdbg.triage.context import TriageContext
from skdbg.triage.model import GateResult, NextStep, Proposal, Verdict
from skdbg.triage.stages import Localization

#: exact option dicts of §3.9 (npugraph_ex ``super_kernel_debug_options``)
D1_OPTIONS: dict[str, Any] = {"debug_op_exec_trace": 1}
D2_CROSS_CORE: dict[str, Any] = {"debug_cross_core_sync_check": 1}
#: sync-all does not switch the execution trace on (upstream options manager: only
#: debug_op_exec_trace / debug_cross_core_sync_check select an *_op_trace entry), so a sync-all
#: attempt names the trace too — otherwise it yields no L1 evidence (X4 "debug_sync_all + exec trace")
D2_SYNC_ALL: dict[str, Any] = {"debug_sync_all": 1, "debug_op_exec_trace": 1}
D3_OPTIONS: dict[str, Any] = {"debug_per_op_max_core_num": 1}

#: run.json phases / markers meaning "the attempt never started" (X7)
_ENV_PHASES = frozenset({"environment", "env", "not_run", "setup", "intake"})
#: routes the entry gate may hand over in GateResult.route_hints
_GATE_ROUTES = frozenset({"R1", "X1", "X2", "X3", "X6", "X7"})
#: classification routes under which the isolation workflow does not apply (no R1, no D*/N1)
_NOT_THIS_WORKFLOW = ("X1", "X2")
#: debug options each option implies in the runtime (cross-core check and per-op max core select the
#: *_op_trace entry; per-op max core also turns the cross-core check on — triage.md §3.9)
_IMPLIES: dict[str, tuple[str, ...]] = {
    "debug_cross_core_sync_check": ("debug_op_exec_trace",),
    "debug_per_op_max_core_num": ("debug_cross_core_sync_check", "debug_op_exec_trace"),
}
#: task debugOptions bits that show an option was active (§3.3)
_DEBUG_BITS = {0x2: "debug_sync_all", 0x10: "debug_cross_core_sync_check"}
#: fusion / split reasons that point at synchronisation (D2) or core-count resources (D3)
#: (§4.3: the deadlock-sensitive reasons, value wait/write and event-reset reasons are event edges too)
_SYNC_REASONS = (
    "ISOLATED_EVENT",
    "DEADLOCK",
    "EVENT",
    "SYNC",
    "CROSS_CORE",
    "EXTERNAL_DEPEND",
    "MEMORY_WAIT",
    "MEMORY_WRITE",
    "RESET_TYPE",
)
_RESOURCE_REASONS = ("EXCEED_CORE_MAX", "DEBUG_PER_OP_MAX_CORE")


def _phase(ctx: TriageContext, loc: Localization) -> str:
    run = ctx.run
    if run is not None and run.failure_phase:
        return run.failure_phase
    return loc.fault.phase


def _exit_clean(ctx: TriageContext) -> bool:
    run = ctx.run
    return run is not None and run.exit is not None and run.exit.status == 0 and not run.exit.timeout


def _probe_state(probe: EnvProbe | None, options: dict[str, Any]) -> tuple[bool | None, str]:
    """Accepted by the archived probe? (True/False/None) and the sentence that says so."""
    if probe is None:
        return None, "option values assumed, not proven by a probe (no env/check_environment.json)"
    results = [probe.accepts(name, value, "debug_options") for name, value in options.items()]
    if results and all(r is True for r in results):
        return True, "accepted by the archived environment probe"
    if any(r is False for r in results):
        bad = [n for (n, _), r in zip(options.items(), results, strict=True) if r is False]
        return (
            False,
            f"NOT accepted by the archived probe ({', '.join(bad)}): do not run it with this wrapper",
        )
    return None, "option values assumed, not proven by a probe (option not probed)"


def active_debug_options(ctx: TriageContext, loc: Localization) -> dict[str, Any]:
    """The debug options the failed attempt already ran with (F9 evidence), closed under implication.

    From run.json ``super_kernel_debug_options`` and the runtime's own evidence: an ``*_op_trace*``
    entry / ``op_trace=true`` (exec trace), a ``_debug`` entry (sync-all), task ``debugOptions`` bits
    0x2 / 0x10, a ``DEBUG_PER_OP_MAX_CORE`` break. A next step made only of these would re-run the
    same diagnostic attempt, so it is never suggested again.
    """
    active: dict[str, Any] = {}
    run = ctx.run
    if run is not None and run.candidate is not None and run.candidate.debug_options:
        active.update({k: v for k, v in run.candidate.debug_options.items() if v not in (0, None, False)})
    entry = loc.fault.entry or ""
    if loc.fault.kind == "sk" and ("op_trace" in entry or loc.fault.op_trace):
        active.setdefault("debug_op_exec_trace", 1)
    if loc.fault.kind == "sk" and "_debug" in entry:
        active.setdefault("debug_sync_all", 1)
    inst = loc.instance
    if inst is not None:
        for t in inst.tasks:
            for bit, name in _DEBUG_BITS.items():
                if t.debug_options is not None and t.debug_options & bit:
                    active.setdefault(name, 1)
    if any("DEBUG_PER_OP_MAX_CORE" in r for r in _reasons(loc)):
        active.setdefault("debug_per_op_max_core_num", 1)
    for name in list(active):
        for implied in _IMPLIES.get(name, ()):
            active.setdefault(implied, 1)
    return active


def _step(ctx: TriageContext, sid: str, options: dict[str, Any], why: str) -> NextStep:
    accepted, note = _probe_state(ctx.probe, options)
    text = f"{why}; diagnostic attempt (F9), excluded from performance samples; {note}"
    return NextStep(sid, dict(options), text, accepted)


#: the name the runtime prints for an SK of no named scope (automatic AOT fusion; sk_scope_split.log)
_UNNAMED = "none"


def _scope_name(ctx: TriageContext, loc: Localization) -> str | None:
    """The named scope N1 would split; None for an automatic-AOT SK (printed ``none``): N1 splits a
    *named* scope into two named halves (§3.9), and there is none to split."""
    if loc.instance is not None and loc.instance.scope_name:
        name = loc.instance.scope_name
        return None if name == _UNNAMED else name
    run = ctx.run
    if run is not None and run.candidate is not None and len(run.candidate.scope_names) == 1:
        return run.candidate.scope_names[0]
    return None


def _reasons(loc: Localization) -> list[str]:
    """Fail/break reasons recorded for the faulting SK (or the model) — D2/D3 signals."""
    out: list[str] = []
    inst = loc.instance
    if inst is None:
        return out
    for u in inst.fail_reasons:
        out += [r for r in (u.reason, u.sub_reason, u.reason_raw) if r]
    fs = inst.fused_scope
    if fs is not None:
        out += [r for r in (fs.status, fs.status_detail, fs.break_reason_detail) if r]
        bi = fs.break_info
        if bi is not None:
            out += [r for r in (bi.break_reason, bi.fusion_fail_reason, bi.raw) if r]
    for snap in inst.scope_snapshots():
        if snap.break_info is not None:
            out += [r for r in (snap.break_info.break_reason, snap.break_info.raw) if r]
    return out


def _has_mix(loc: Localization) -> bool:
    inst = loc.instance
    return inst is not None and any(
        (n.node.kernel_type or "").upper().startswith("MIX") for n in inst.kernels
    )


def _no_fusion(ctx: TriageContext, loc: Localization) -> bool:
    """X2: no sk_fused_nodes.log anywhere, or no SK for the candidate's scopes."""
    mes = ctx.evidence.model_evidence
    if not mes:
        return False  # no sk_meta at all is an evidence gap (R1), not proof of no fusion
    if all(me.fused_nodes is None or not me.fused_nodes.blocks for me in mes):
        return True
    run = ctx.run
    names = run.candidate.scope_names if run is not None and run.candidate is not None else ()
    if not names:
        return False
    from skdbg.triage.skview import all_instances  # local: avoid parsing unless X2 is in question

    have = " ".join((i.scope_name or "") for i in all_instances(ctx.evidence))
    return not any(n in have for n in names)


def route(
    ctx: TriageContext,
    gate: GateResult,
    loc: Localization,
    att: Attribution,
    verdict: Verdict,
    proposal: Proposal,
) -> tuple[tuple[str, ...], tuple[NextStep, ...]]:
    """Routes (§7) and next steps (§3.9) for one analysis; ``proposal`` supplies R5/R6."""
    routes: list[str] = []
    steps: list[NextStep] = []
    phase = _phase(ctx, loc)
    kind = loc.fault.kind
    scope = _scope_name(ctx, loc)

    def add(r: str) -> None:
        if r not in routes:
            routes.append(r)

    # ---------------------------------------------------------------- classification (X*)
    # Routes the gate already established (R1 gap, X1, X2, X3, X6, X7) come first; the checks
    # below re-derive them only when the gate could not (e.g. a hand-made GateResult).
    for hint in gate.route_hints:
        if hint in _GATE_ROUTES:
            add(hint)
    env_failed = (
        "X7" in routes
        or phase in _ENV_PHASES
        or (
            kind == "none"
            and not ctx.evidence.plogs
            and ctx.probe is not None
            and (ctx.probe.ready is False or ctx.probe.runtime_loaded is False)
        )
    )
    if env_failed:
        add("X7")  # environment failure before the attempt: no failure scene, not_run
    if kind == "non_sk":
        add("X3")
    if kind == "ge_sk":
        add("X6")
    if phase == "compile" and kind == "none":
        add("X1")
    if kind == "ge_sk":
        add("R1")  # X6: no sk_meta/<pid> for a GE-mode SK — the evidence for attribution is missing
    diagnostic_clean = gate.diagnostic and _exit_clean(ctx) and kind == "none"
    if diagnostic_clean:
        add("R4")
    elif kind == "none" and phase not in ("compile",) and not env_failed and _no_fusion(ctx, loc):
        add("X2")
    if not gate.passed and not routes:
        add("R1")  # missing/stale evidence: stop, report the gap (no suspect)
    not_this = any(r in routes for r in _NOT_THIS_WORKFLOW)
    if not_this and "R1" in routes:
        # G3/X1/X2: not this workflow — "re-collect metadata / trace" (R1) does not apply to it
        routes.remove("R1")

    # ---------------------------------------------------------------- attribution (R2/R3/X4/X5)
    if verdict.confidence not in ("n/a",) and kind in ("sk", "none"):
        no_child = not att.K and not att.e2_ambiguous and not att.e3_ambiguous
        if verdict.rule == "C2":
            add("X4")
        if att.bystanders and not att.implicated:
            add("X5")
        ambiguous = (
            bool(att.e2_ambiguous)
            or bool(att.e3_ambiguous)
            or "cond_index_overflow" in verdict.flags
            or (verdict.suspect is not None and verdict.suspect.identity == "ambiguous")
            or verdict.rule == "C4"
            # a child is named but the same child list is in several SKs (C1): correlate or narrow
            or (verdict.rule == "C1" and loc.instance is None and not no_child)
        )
        if ambiguous:
            add("R3")
        if verdict.confidence == "low" and no_child and verdict.rule != "C2":
            add("R2")
        if verdict.rule == "C1" and not loc.instance_candidates:
            add("R2")  # G4: the dialect is unknown — whatever a level named, attribution cannot be claimed

    # ---------------------------------------------------------------- proposal (R5/R6)
    if proposal.route in ("R5", "R6"):
        add(proposal.route)
    elif proposal.status == "blocked":
        add("R6")

    # ---------------------------------------------------------------- next steps (§3.9)
    hang = phase in ("timeout", "hang")
    sync_reason = [r for r in _reasons(loc) if any(s in r.upper() for s in _SYNC_REASONS)]
    res_reason = [r for r in _reasons(loc) if any(s in r.upper() for s in _RESOURCE_REASONS)]
    event_suspect = any(c.blocking for c in att.bystanders) or bool(sync_reason)

    if not_this:
        if "X1" in routes:
            steps += _compile_retry(ctx)
    elif kind == "ge_sk":
        steps.append(_rerun_npugraph_ex())
    elif diagnostic_clean:
        steps.append(
            NextStep(
                "RETEST",
                {},
                "R4: the fault did not reproduce under debug options — that run is localisation "
                "evidence only (sync/timing-sensitive), never a pass; retest the candidate clean "
                "(super_kernel_debug_options={})",
                None,
            )
        )
        if scope:
            steps.append(_n1(ctx, scope))
        steps.append(
            _step(ctx, "D2", D2_CROSS_CORE, "R4: a fault that hides under debug timing suggests a sync/race")
        )
    elif verdict.confidence == "low" and kind in ("sk", "none"):
        steps.append(
            _step(
                ctx,
                "D1",
                D1_OPTIONS,
                "D1: reproduce with the child execution trace to get L1 evidence (opId per core)",
            )
        )
        if hang or (att.bystanders and not att.implicated) or event_suspect or verdict.rule == "C2":
            why = []
            if hang:
                why.append(f"the attempt ended in {phase}")
            if att.bystanders and not att.implicated:
                why.append("only bystander cores (waiting in entry code / barrier)")
            if event_suspect:
                why.append(
                    "event/barrier suspicion" + (f" ({', '.join(sync_reason[:2])})" if sync_reason else "")
                )
            if verdict.rule == "C2":
                why.append("conflicting child evidence across cores/levels")
            wf = att.wait_for
            if wf is not None and wf.findings:
                f = wf.findings[0]
                why.append(f"wait-for graph: {f.kind}" + (f" across {f.across}" if f.across else ""))
            text = "D2: " + "; ".join(why)
            steps.append(
                _step(ctx, "D2", D2_CROSS_CORE, text + " — cross-core sync check (implies exec trace)")
            )
            steps.append(_step(ctx, "D2", D2_SYNC_ALL, text + " — SyncAll between children"))
        if res_reason or _has_mix(loc):
            cause = ", ".join(res_reason[:2]) if res_reason else "MIX children in the SK"
            steps.append(_step(ctx, "D3", D3_OPTIONS, f"D3: resource/core-count suspicion ({cause})"))
        if scope:
            steps.append(_n1(ctx, scope))
    elif kind == "none" and hang and not env_failed:
        steps.append(_step(ctx, "D1", D1_OPTIONS, f"D1: the attempt ended in {phase} without a fault line"))
        steps.append(
            _step(ctx, "D2", D2_CROSS_CORE, f"D2: {phase} — cross-core sync check (implies exec trace)")
        )
        steps.append(_step(ctx, "D2", D2_SYNC_ALL, f"D2: {phase} — SyncAll between children"))
        if scope:
            steps.append(_n1(ctx, scope))
    active = active_debug_options(ctx, loc)
    steps = [st for st in steps if not _already_ran(st, active)]
    return tuple(routes), tuple(steps)


def _already_ran(step: NextStep, active: dict[str, Any]) -> bool:
    """A D step whose every option the failed attempt already had (never re-suggest its trace)."""
    if not step.id.startswith("D") or not step.options:
        return False
    return all(k in active and active[k] == v for k, v in step.options.items())


def _compile_retry(ctx: TriageContext) -> list[NextStep]:
    """X1 (§6.2, upstream eval 22): a timed-out or interrupted compile gets one clean retry."""
    run = ctx.run
    ex = run.exit if run is not None else None
    if ex is None or not (ex.timeout or ex.signal is not None):
        return []
    how = "timed out (runner timeout)" if ex.timeout else f"was interrupted (signal {ex.signal})"
    return [
        NextStep(
            "RETEST",
            {},
            f"X1: the compile {how}: a timed-out/interrupted compile proves nothing (its *_compile_error.log "
            "files are provisional) and its evidence is invalid — retry it clean as a new attempt of the "
            "same round with a frozen, bounded NPU_STATIC_KERNEL_COMPILE_JOBS; only a natural non-zero exit "
            "or the final summary proves a compile failure, and only the runner's own top-level timeout may "
            "stop the compiler",
            None,
        )
    ]


def _rerun_npugraph_ex() -> NextStep:
    """X6 + R1: the GE-mode SK has no sk_meta/<pid>; child-level evidence needs the AOT path."""
    return NextStep(
        "R1",
        {"backend": "npugraph_ex"},
        "R1: GE-mode SK (te_superkernel_*) writes no sk_meta/<pid>, task queue or DFX table — rerun the "
        'candidate under npugraph_ex (torch.compile backend="npugraph_ex", super_kernel_optimize=True, '
        "torch.npu.super_kernel_scope_begin/end markers) with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 to get "
        "child-level evidence; the GE exclusion form is torchair.scope.super_kernel(None)",
        None,
    )


def _n1(ctx: TriageContext, scope: str) -> NextStep:
    del ctx
    return NextStep(
        "N1",
        {"split_scope": scope},
        f"N1: split scope {scope!r} into two named halves at a dependency-safe boundary (§4.4); "
        "both halves stay fused; the half that still fails contains the child — diagnosis, not exclusion",
        None,
    )


__all__ = ["D1_OPTIONS", "D2_CROSS_CORE", "D2_SYNC_ALL", "D3_OPTIONS", "active_debug_options", "route"]
