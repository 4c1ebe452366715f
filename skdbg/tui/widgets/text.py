"""Rich renderings of analysis records, shared by screens and tests.

Why here and not in the screens: the same one-liners (a verdict, an evidence item, a proposal
summary) appear on several screens and in the palette; one place keeps the wording identical.
"""

from __future__ import annotations

from rich.text import Text

from skdbg.glossary import lookup, title, titled
from skdbg.show import show
from skdbg.triage.model import Analysis, EvidenceItem, Proposal


def escape(text: str) -> str:
    """Make ``text`` literal inside Textual markup: every ``[`` is escaped, not only tag-like ones
    (plog excerpts carry ``[INFO]``/``[ERROR]``, which Textual would read as tags)."""
    return text.replace("[", "\\[")


def cells(*values: object) -> list[Text]:
    """DataTable cells as literal text: a plain ``str`` cell would be parsed as Rich markup, and
    plog/metadata excerpts are full of ``[sk_optimizer.cpp:33]``-style brackets. Values go through
    :func:`skdbg.show.show` (node lists as ``103, 104``, never a repr); absent is an empty cell."""
    return [Text(show(v, empty="")) for v in values]


CONF_STYLE = {"high": "bold green", "medium": "bold yellow", "low": "bold red", "n/a": "dim"}


def mark(item: EvidenceItem) -> str:
    """``+`` agrees with the suspect, ``✗`` contradicts it, ``·`` context only."""
    return "+" if item.agrees is True else "✗" if item.agrees is False else "·"


def item_line(item: EvidenceItem) -> str:
    return f"{item.where} — {item.excerpt}" if item.excerpt else item.where


def proposal_summary(p: Proposal, accepted: bool = False, edits: bool = True) -> str:
    """Markup: status, mechanism, the cut, why blocked, and (``edits``) the marker edits."""
    if p.status == "none":
        return f"[b]none[/b] — {escape(p.reason)}"
    head = f"[b]{p.status}[/b]" + (f" via {titled(p.mechanism)}" if p.mechanism else "")
    if accepted:
        head += " [reverse green] accepted [/]"
    lines = [head]
    if p.excluded:
        lines.append(
            f"excluded {show(p.excluded)}  collateral {show(p.collateral)}  "
            f"before {show(p.before)}  after {show(p.after)}"
        )
    if p.route:
        lines.append(f"route {titled(p.route)}")
    if p.blocked_reason:
        lines.append(f"[red]blocked:[/] {escape(p.blocked_reason)}")
    if edits:
        lines.extend(
            f"[dim]{escape(e.file)}:{e.line} {e.op}: {escape(e.text.strip())}[/]" for e in p.marker_edits
        )
    return "\n".join(lines)


def overview_markup(a: Analysis, proposal: Proposal, accepted: bool = False) -> str:
    """The Overview screen: gate, fault, verdict, routes and next steps, proposal."""
    g, f, v = a.gate, a.fault, a.verdict
    out: list[str] = []
    gate = "[green]passed[/]" if g.passed else f"[red]failed[/] {', '.join(map(titled, g.failed))}"
    if g.diagnostic:
        gate += f" [yellow]diagnostic attempt ({titled('F9')})[/]"
    out.append(f"[b u]Gate[/]  {gate}")
    for gap in g.gaps:
        where = f" ({escape(gap.file)}:{gap.line})" if gap.file else ""
        out.append(
            f"  [yellow]{escape(titled(gap.id))}[/] {escape(gap.detail)}{where}\n      collect: {escape(gap.collect)}"
        )
    out.append("")
    out.append(
        f"[b u]Fault[/]  kind [b]{f.kind}[/]  phase [b]{f.phase}[/]  entry {escape(show(f.entry))}  "
        f"dialect {show(f.dialect)}  scope {show(f.scope_id)}  model {show(f.model)}"
    )
    if f.sk_name:
        out.append(f"  SK {escape(f.sk_name)}")
    for c in f.cores:
        pc = show(None if c.current_pc is None else f"0x{c.current_pc:x}")
        out.append(f"  core {c.core_id} {show(c.core_type)} pc={pc} role={c.role} task={show(c.task_index)}")
    out.append("")
    style = CONF_STYLE.get(v.confidence, "b")
    out.append(
        f"[b u]Verdict[/]  [{style}]{v.confidence}[/] (rule [b]{v.rule}[/] {escape(title(v.rule) or '')})"
        f" — {escape(v.reason)}"
    )
    if v.suspect is not None:
        s = v.suspect
        out.append(
            f"  suspect [b]{escape(s.label())}[/]  type {show(s.kernel_type)}  stream {show(s.stream_id)}  "
            f"identity {s.identity}"
        )
    for line in v.missing:
        out.append(f"  [dim]missing:[/] {escape(line)}")
    for line in v.residual_risk:
        out.append(f"  [dim]residual risk:[/] {escape(line)}")
    out.extend(evidence_chain_lines(v.evidence))
    out.append("")
    out.append(f"[b u]Routes[/]  {escape(', '.join(map(titled, a.routes))) or 'none'}")
    for step in a.next_steps:
        opts = f" ({escape(show(step.options))})" if step.options else ""
        out.append(f"  next {escape(titled(step.id))}{opts} — {escape(step.why)}")
    out.append("")
    out.append("[b u]Proposal[/]  " + proposal_summary(proposal, accepted))
    return "\n".join(out)


OVERVIEW_EVIDENCE = 10


def evidence_chain_lines(evidence: tuple[EvidenceItem, ...] | list[EvidenceItem]) -> list[str]:
    """The first lines of the verdict's evidence chain (mark, level, where — excerpt), one row each,
    so the Overview shows why without a screen change; the rest is on the Evidence screen (2)."""
    if not evidence:
        return []
    out = ["", f"[b u]Evidence chain[/]  ({len(evidence)} items; all on screen 2)"]
    for item in evidence[:OVERVIEW_EVIDENCE]:
        out.append(f"  {mark(item)} {escape(item.level)} {escape(item_line(item)[:140])}")
    if len(evidence) > OVERVIEW_EVIDENCE:
        out.append(f"  [dim]… {len(evidence) - OVERVIEW_EVIDENCE} more: press 2[/]")
    return out


def analysis_codes(a: Analysis, proposal: Proposal | None = None) -> list[str]:
    """Every explained code the screens show for this analysis, in reading order (gate, verdict,
    evidence, routes, next steps, proposal) — for tooltips, F1 and the palette's "Explain …"."""
    p = a.proposal if proposal is None else proposal
    v = a.verdict
    raw: list[str | None] = [*a.gate.failed, *(gap.id for gap in a.gate.gaps)]
    raw += ["F9" if a.gate.diagnostic else None, a.fault.dialect, v.rule, *v.flags]
    for e in v.evidence:
        raw += [e.level, e.rule]
    raw += [*a.routes, *(s.id for s in a.next_steps), p.route, p.mechanism, *(n.kind for n in p.safety)]
    out: list[str] = []
    for code in raw:
        if code and code not in out and lookup(code):
            out.append(code)
    return out


def explain_lines(codes: list[str]) -> str:
    """``code title`` one per line, for a tooltip over the place the codes are shown."""
    return "\n".join(titled(c) for c in codes)


def item_codes(item: EvidenceItem) -> list[str]:
    """The explained codes of one evidence row (its level and the rule/trap that used it)."""
    return [c for c in dict.fromkeys((item.level, item.rule or "")) if c and lookup(c)]


__all__ = [
    "CONF_STYLE",
    "analysis_codes",
    "cells",
    "escape",
    "explain_lines",
    "item_codes",
    "item_line",
    "mark",
    "overview_markup",
    "proposal_summary",
]
