"""Rich renderings of analysis records, shared by screens and tests.

Why here and not in the screens: the same one-liners (a verdict, an evidence item, a proposal
summary) appear on several screens and in the palette; one place keeps the wording identical.
"""

from __future__ import annotations

from rich.text import Text

from skdbg.triage.model import Analysis, EvidenceItem, Proposal


def escape(text: str) -> str:
    """Make ``text`` literal inside Textual markup: every ``[`` is escaped, not only tag-like ones
    (plog excerpts carry ``[INFO]``/``[ERROR]``, which Textual would read as tags)."""
    return text.replace("[", "\\[")


def cells(*values: object) -> list[Text]:
    """DataTable cells as literal text: a plain ``str`` cell would be parsed as Rich markup, and
    plog/metadata excerpts are full of ``[sk_optimizer.cpp:33]``-style brackets."""
    return [Text("" if v is None else str(v)) for v in values]


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
    head = f"[b]{p.status}[/b]" + (f" ({p.mechanism})" if p.mechanism else "")
    if accepted:
        head += " [reverse green] accepted [/]"
    lines = [head]
    if p.excluded:
        lines.append(
            f"excluded {list(p.excluded)}  collateral {list(p.collateral)}  "
            f"before {list(p.before)}  after {list(p.after)}"
        )
    if p.route:
        lines.append(f"route {p.route}")
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
    gate = "[green]passed[/]" if g.passed else f"[red]failed[/] {', '.join(g.failed)}"
    if g.diagnostic:
        gate += " [yellow]diagnostic attempt (F9)[/]"
    out.append(f"[b u]Gate[/]  {gate}")
    for gap in g.gaps:
        where = f" ({escape(gap.file)}:{gap.line})" if gap.file else ""
        out.append(f"  [yellow]{gap.id}[/] {escape(gap.detail)}{where}\n      collect: {escape(gap.collect)}")
    out.append("")
    out.append(
        f"[b u]Fault[/]  kind [b]{f.kind}[/]  phase [b]{f.phase}[/]  entry {escape(str(f.entry))}  "
        f"dialect {f.dialect}  scope {f.scope_id}  model {f.model}"
    )
    if f.sk_name:
        out.append(f"  SK {escape(f.sk_name)}")
    for c in f.cores:
        pc = "?" if c.current_pc is None else f"0x{c.current_pc:x}"
        out.append(f"  core {c.core_id} {c.core_type or '?'} pc={pc} role={c.role} task={c.task_index}")
    out.append("")
    style = CONF_STYLE.get(v.confidence, "b")
    out.append(f"[b u]Verdict[/]  [{style}]{v.confidence}[/] (rule [b]{v.rule}[/]) — {escape(v.reason)}")
    if v.suspect is not None:
        s = v.suspect
        out.append(
            f"  suspect [b]{escape(s.label())}[/]  type {s.kernel_type}  stream {s.stream_id}  "
            f"identity {s.identity}"
        )
    for line in v.missing:
        out.append(f"  [dim]missing:[/] {escape(line)}")
    for line in v.residual_risk:
        out.append(f"  [dim]residual risk:[/] {escape(line)}")
    out.append("")
    out.append(f"[b u]Routes[/]  {', '.join(a.routes) or 'none'}")
    for step in a.next_steps:
        out.append(f"  next {step.id} {escape(str(step.options))} — {escape(step.why)}")
    out.append("")
    out.append("[b u]Proposal[/]  " + proposal_summary(proposal, accepted))
    return "\n".join(out)


__all__ = ["CONF_STYLE", "cells", "escape", "item_line", "mark", "overview_markup", "proposal_summary"]
