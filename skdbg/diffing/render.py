"""Text and Markdown renderings of a scene diff (the JSON form is :meth:`DiffResult.to_json`).

Why grouped: a reader asks "did the fault change, did the suspect change, did fusion change" in that
order, so differences are printed group by group (fault, SK, suspect, cores, …) with the equal fields
of each group folded into one line.
"""

from __future__ import annotations

import json
from typing import Any

from skdbg.diffing.compare import Difference, DiffResult
from skdbg.diffing.facts import GROUPS

_TITLES = {
    "fault": "fault and verdict",
    "sk": "SK entry and scope",
    "suspect": "suspect child",
    "cores": "exception cores (PCs relative to the child)",
    "errors": "error bits",
    "fused": "fused sets (children per SK)",
    "breaks": "break and fail reasons",
    "options": "debug and optimize options",
    "env": "environment probe",
    "run": "run identity",
}


def show_value(value: Any) -> str:
    """A value as one short line: ``—`` for missing, lists comma-joined, SKs in brackets."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if not value:
            return "(none)"
        if all(isinstance(v, list) for v in value):
            return " ".join("[" + ", ".join(str(x) for x in v) + "]" for v in value)
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in value.items())
    return str(value)


def _by_group(result: DiffResult) -> dict[str, tuple[list[Difference], list[str]]]:
    groups: dict[str, tuple[list[Difference], list[str]]] = {g: ([], []) for g in GROUPS}
    for d in result.differences:
        groups.setdefault(d.group, ([], []))[0].append(d)
    doc = result.to_json()["groups"]
    for g, parts in doc.items():
        groups.setdefault(g, ([], []))[1].extend(parts["equal"])
    return groups


def render_text(result: DiffResult) -> str:
    """The human rendering: both scenes, the verdict line, then each group's differences and equals."""
    a, b = result.a, result.b
    lines = [
        f"A: {a.scene} (pid {show_value(a.pid)})",
        f"B: {b.scene} (pid {show_value(b.pid)})",
        f"diff: {result.summary()}",
    ]
    for g, (diffs, equal) in _by_group(result).items():
        if not diffs and not equal:
            continue
        lines.append("")
        lines.append(f"{_TITLES.get(g, g)}:")
        for d in diffs:
            mark = "~" if d.identity else "≠"
            lines.append(f"  {mark} {d.field}")
            lines.append(f"      A: {show_value(d.a)}")
            lines.append(f"      B: {show_value(d.b)}")
            lines.append(f"      why: {d.why}")
            for side, cites in (("A", d.cites_a), ("B", d.cites_b)):
                if cites:
                    more = f" (+{len(cites) - 3} more)" if len(cites) > 3 else ""
                    lines.append(f"      {side} at: {', '.join(cites[:3])}{more}")
        if equal:
            lines.append(f"  = {', '.join(equal)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(result: DiffResult) -> str:
    """Markdown: a summary, one table per group with differences, then the equal fields."""
    a, b = result.a, result.b
    out = [
        "# skdbg diff",
        "",
        f"- **A:** `{a.scene}` (pid {show_value(a.pid)})",
        f"- **B:** `{b.scene}` (pid {show_value(b.pid)})",
        f"- **Result:** {result.summary()}",
    ]
    for g, (diffs, equal) in _by_group(result).items():
        if not diffs and not equal:
            continue
        out += ["", f"## {_TITLES.get(g, g)}", ""]
        if diffs:
            out += ["| field | A | B | why | cited |", "|---|---|---|---|---|"]
            for d in diffs:
                cites = "; ".join([*(f"A {c}" for c in d.cites_a), *(f"B {c}" for c in d.cites_b)])
                out.append(
                    f"| `{d.field}` | {_md(show_value(d.a))} | {_md(show_value(d.b))} | {_md(d.why)} | {_md(cites)} |"
                )
        if equal:
            if diffs:
                out.append("")
            out.append("Equal: " + ", ".join(f"`{e}`" for e in equal))
    return "\n".join(out) + "\n"


def summary_lines(result: DiffResult) -> list[str]:
    """A few lines for another command's output (``verify --diff``): the summary and each finding."""
    lines = [f"diff: {result.summary()}"]
    for d in result.differences:
        mark = "~" if d.identity else "≠"
        lines.append(f"  {mark} {d.field}: {show_value(d.a)} → {show_value(d.b)}")
    return lines


__all__ = ["render_markdown", "render_text", "show_value", "summary_lines"]
