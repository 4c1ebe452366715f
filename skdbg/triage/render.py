"""Human renderings of an :class:`Analysis` for ``skdbg analyze --format text|md``.

Why two: ``text`` is for a terminal (plain, no markup, one fact per line, rule ids inline with
their short titles from the glossary so a reader can trace each decision without the spec); ``md`` goes into tickets and reports (jinja2 template
``analysis.md.j2``, StrictUndefined so a renamed field fails loudly instead of printing nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skdbg.glossary import title, titled
from skdbg.show import show
from skdbg.triage.model import Analysis, EvidenceItem, hex_or_none
from skdbg.triage.report import redact, render_template
from skdbg.triage.waitfor import WaitFor


def _code_list(codes: Iterable[str]) -> str:
    """``R5 split at the dependency boundary, R6 child not safely separable: blocked`` (or ``none``)."""
    return ", ".join(titled(c) for c in codes) or "none"


def _legend(evidence: Iterable[EvidenceItem]) -> str | None:
    """One line naming every level / rule id used in the evidence tags, so ``[L2 T4]`` is readable."""
    seen: list[str] = []
    for e in evidence:
        for code in (e.level, e.rule):
            if code and code not in seen and title(code) is not None:
                seen.append(code)
    return "; ".join(titled(c) for c in seen) if seen else None


def render_text(analysis: Analysis) -> str:
    """Plain terminal summary: gate, fault, verdict + rule + reason, suspect, evidence, routes,
    next steps, proposal + diff. Every code is followed by its short title (``skdbg explain CODE``
    gives the whole entry) and no value is printed as a Python repr (:func:`skdbg.show.show`)."""
    a = analysis
    g, f, v, p = a.gate, a.fault, a.verdict, a.proposal
    out: list[str] = []
    gate = "passed" if g.passed else f"FAILED — {_code_list(g.failed)}"
    out.append(f"gate:     {gate}" + (f" [diagnostic attempt, {titled('F9')}]" if g.diagnostic else ""))
    for gap in g.gaps:
        out.append(f"  gap {titled(gap.id)}: {show(gap.detail)} — collect: {show(gap.collect)}")
    fault = f"fault:    {f.kind} / {f.phase}"
    if f.entry:
        fault += f", entry {f.entry}"
    if f.dialect:
        fault += f", dialect {f.dialect}"
    if f.scope_id is not None:
        fault += f", scope {f.scope_id}"
    if f.model:
        fault += f", model {f.model}"
    if f.scope_resolution:
        fault += f" (SK resolved by {f.scope_resolution})"
    out.append(fault)
    for c in f.cores:
        pc = show(hex_or_none(c.current_pc))
        out.append(
            f"  core {c.core_id} {show(c.core_type)} pc={pc} role={c.role} task={show(c.task_index)}"
            + (f" flags={show(c.flags)}" if c.flags else "")
        )
    out.append(f"verdict:  {v.confidence} ({titled(v.rule)}) — {v.reason}")
    out.append(f"suspect:  {v.suspect.label() if v.suspect is not None else 'none'}")
    if v.suspect is not None:
        s = v.suspect
        out.append(
            f"          type {show(s.kernel_type)}, stream {show(s.stream_id)}, scope {show(s.scope_id)}, "
            f"occurrence {show(s.occurrence)}, identity {s.identity}"
        )
    others = [c for c in v.candidates if v.suspect is None or c.task_index != v.suspect.task_index]
    for alt in others:
        out.append(f"  candidate: {alt.label()}")
    if v.flags:
        out.append(f"flags:    {_code_list(v.flags)}")
    out.append("evidence:")
    for e in v.evidence or ():
        mark = {True: "+", False: "-", None: " "}[e.agrees]
        rule = f" {e.rule}" if e.rule and e.rule != e.level else ""
        out.append(f"  {mark} [{e.level}{rule}] {e.where}: {redact(e.excerpt)}")
    if not v.evidence:
        out.append("  (none)")
    legend = _legend(v.evidence)
    if legend:
        out.append(f"  codes: {legend}")
    for m in v.missing:
        out.append(f"  missing: {m}")
    out.append(f"routes:   {_code_list(a.routes)}")
    out.append("next:")
    for st in a.next_steps:
        opts = f" ({show(st.options)})" if st.options else ""
        out.append(f"  {titled(st.id)}{opts}: {st.why}")
    if not a.next_steps:
        out.append("  (none)")
    mech = f" via {titled(p.mechanism)}" if p.mechanism else ""
    out.append(f"proposal: {p.status}{mech}" + (f" — {p.reason}" if p.reason else ""))
    if p.status != "none":
        out.append(
            f"  excluded {show(p.excluded)}; collateral {show(p.collateral)}; before {show(p.before)}; "
            f"after {show(p.after)}"
        )
        if p.blocked_reason:
            out.append(f"  blocked: {p.blocked_reason}")
        for sn in p.safety:
            out.append(f"  safety [{sn.kind}] {sn.detail} ({show(sn.evidence)})")
        for me in p.marker_edits:
            out.append(f"  edit {me.file}:{me.line} {me.op}: {me.text.strip()}")
        if p.diff:
            out.append("  diff:")
            out.extend("    " + ln for ln in p.diff.rstrip("\n").splitlines())
    if a.wait_for is not None:
        out.extend(wait_for_text(a.wait_for))
    for w in a.warnings:
        out.append(f"warning:  {w}")
    return "\n".join(out) + "\n"


def wait_for_text(wf: WaitFor) -> list[str]:
    """X5: the wait-for graph as an edge list (waiter --kind--> what it waits on) and its findings."""
    out = [f"wait-for: {titled(wf.kind)}"]
    for line in wf.lines():
        out.append(f"  {line}")
    if not wf.edges:
        out.append("  (no blocking edge)")
    for f in wf.findings:
        across = f" across {f.across}" if f.across else ""
        out.append(f"  {f.kind}{across}: {f.detail}")
        for e in f.evidence:
            out.append(f"    [{e.rule or e.level}] {e.where}: {redact(e.excerpt)}")
    return out


def render_verify_text(doc: dict[str, Any]) -> str:
    """Terminal form of a ``skdbg.verify/1`` document (``skdbg verify`` and ``skdbg session verify``):
    one line per gate with its title, then round, attempt, refused evidence and routes."""
    out = [
        f"{titled(g['gate'])}: {g['result']} — {show(g.get('detail'))}" for g in doc.get("verification", [])
    ]
    rnd, att = doc.get("round") or {}, doc.get("attempt") or {}
    if rnd:
        out.append(f"round {show(rnd.get('round_id'))}: {show(rnd.get('status'))}")
    if att:
        out.append(
            f"attempt {show(att.get('round_id'))}#{show(att.get('attempt'))}: {show(att.get('status'))}"
            + (f" — {att['note']}" if att.get("note") else "")
        )
    for ref in doc.get("refused_evidence", []):
        out.append(f"refused: {show(ref.get('path'))} — {show(ref.get('reason'))}")
    if doc.get("routes"):
        out.append(f"routes: {_code_list(doc['routes'])}")
    return "\n".join(out) + "\n"


def render_markdown(analysis: Analysis) -> str:
    """Markdown summary (template ``analysis.md.j2``)."""
    a = analysis
    return render_template(
        "analysis.md.j2",
        gate=a.gate,
        fault=a.fault,
        verdict=a.verdict,
        routes=a.routes,
        next_steps=a.next_steps,
        proposal=a.proposal,
        wait_for=a.wait_for,
    )


__all__ = ["render_markdown", "render_text", "render_verify_text", "wait_for_text"]
