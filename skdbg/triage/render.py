"""Human renderings of an :class:`Analysis` for ``skdbg analyze --format text|md``.

Why two: ``text`` is for a terminal (plain, no markup, one fact per line, rule ids inline so a
reader can trace each decision); ``md`` goes into tickets and reports (jinja2 template
``analysis.md.j2``, StrictUndefined so a renamed field fails loudly instead of printing nothing).
"""

from __future__ import annotations

from skdbg.triage.model import Analysis
from skdbg.triage.report import redact, render_template


def render_text(analysis: Analysis) -> str:
    """Plain terminal summary: gate, fault, verdict + rule + reason, suspect, evidence, routes,
    next steps, proposal + diff."""
    a = analysis
    g, f, v, p = a.gate, a.fault, a.verdict, a.proposal
    out: list[str] = []
    gate = "passed" if g.passed else f"FAILED ({', '.join(g.failed)})"
    out.append(f"gate:     {gate}" + (" [diagnostic attempt, F9]" if g.diagnostic else ""))
    for gap in g.gaps:
        out.append(f"  gap {gap.id}: {gap.detail} — collect: {gap.collect}")
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
        pc = f"0x{c.current_pc:x}" if c.current_pc is not None else "?"
        task = "-" if c.task_index is None else str(c.task_index)
        out.append(f"  core {c.core_id} {c.core_type or '?'} pc={pc} role={c.role} task={task}")
    out.append(f"verdict:  {v.confidence} ({v.rule}) — {v.reason}")
    out.append(f"suspect:  {v.suspect.label() if v.suspect is not None else 'none'}")
    if v.suspect is not None:
        s = v.suspect
        out.append(
            f"          type {s.kernel_type or '?'}, stream {s.stream_id}, scope {s.scope_id}, "
            f"occurrence {s.occurrence}, identity {s.identity}"
        )
    others = [c for c in v.candidates if v.suspect is None or c.task_index != v.suspect.task_index]
    for alt in others:
        out.append(f"  candidate: {alt.label()}")
    if v.flags:
        out.append(f"flags:    {', '.join(v.flags)}")
    out.append("evidence:")
    for e in v.evidence or ():
        mark = {True: "+", False: "-", None: " "}[e.agrees]
        rule = f" {e.rule}" if e.rule and e.rule != e.level else ""
        out.append(f"  {mark} [{e.level}{rule}] {e.where}: {redact(e.excerpt)}")
    if not v.evidence:
        out.append("  (none)")
    for m in v.missing:
        out.append(f"  missing: {m}")
    out.append(f"routes:   {', '.join(a.routes) if a.routes else 'none'}")
    out.append("next:")
    for st in a.next_steps:
        out.append(f"  {st.id} {st.options}: {st.why}")
    if not a.next_steps:
        out.append("  (none)")
    mech = f" ({p.mechanism})" if p.mechanism else ""
    out.append(f"proposal: {p.status}{mech}" + (f" — {p.reason}" if p.reason else ""))
    if p.status != "none":
        out.append(
            f"  excluded {list(p.excluded)} collateral {list(p.collateral)} before {list(p.before)} "
            f"after {list(p.after)}"
        )
        if p.blocked_reason:
            out.append(f"  blocked: {p.blocked_reason}")
        for sn in p.safety:
            out.append(f"  safety [{sn.kind}] {sn.detail} ({sn.evidence})")
        for me in p.marker_edits:
            out.append(f"  edit {me.file}:{me.line} {me.op}: {me.text.strip()}")
        if p.diff:
            out.append("  diff:")
            out.extend("    " + ln for ln in p.diff.rstrip("\n").splitlines())
    for w in a.warnings:
        out.append(f"warning:  {w}")
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
    )


__all__ = ["render_markdown", "render_text"]
