"""Rich renderables of a candidate (``skdbg codegen candidate``) for the Candidate screen.

Why separate from the screen: these are pure functions of the candidate's manifest and SK
descriptions (the same dicts ``candidate.json`` and ``sk/*.json`` hold), so what the screen shows
is exactly what the folder will contain, and they can be tested without a running app.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

#: the Syntax theme of the marker patch (the Proposal screen's diff uses the same)
DIFF_THEME = "ansi_dark"


def _children(desc: Mapping[str, Any], cut: set[int]) -> Text:
    """One line per kernel child: nodeId funcName [type]; children the edit removes are marked ✂."""
    out = Text()
    for task in desc.get("tasks") or []:
        if task.get("type") != "FUNC":
            continue
        if out:
            out.append("\n")
        node = task.get("node_id")
        line = f"{node} {task.get('func_name') or '?'} [{task.get('kernel_type') or '?'}]"
        if node in cut:
            out.append("✂ " + line, style="bold red")
        else:
            out.append(line)
    return out or Text("(no kernel child)", style="dim")


def _partner(location: object) -> str:
    """Where an event partner lives, in words (``partner_location`` of ``sk/*.json``)."""
    if location == "internal":
        return "in this SK"
    if location == "unfused":
        return "partner not fused"
    return f"partner in {location}" if location else "partner unknown"


def _events(desc: Mapping[str, Any], cut: set[int]) -> Text:
    """The edges of the SK: event notify→wait pairs (with where the partner lives) and barriers; an
    edge whose task the edit removes from the SK is marked ✂."""
    out = Text()

    def add(line: str, nodes: Iterable[object]) -> None:
        if out:
            out.append("\n")
        if cut & set(nodes):
            out.append("✂ " + line, style="bold red")
        else:
            out.append(line)

    seen: set[tuple[object, frozenset[object]]] = set()
    for edge in desc.get("edges") or []:
        if edge.get("kind") == "event":
            pair = (edge.get("event_id"), frozenset((edge.get("node"), edge.get("partner"))))
            if pair in seen:
                continue  # both ends of a pair inside the SK list it: show it once, in task order
            seen.add(pair)
            add(
                f"event {edge.get('event_id')}: {edge.get('node')}→{edge.get('partner')} "
                f"({_partner(edge.get('partner_location'))})",
                (edge.get("node"), edge.get("partner")),
            )
        elif edge.get("kind") == "barrier":
            add(f"barrier SyncAll {edge.get('nodes')}", edge.get("nodes") or ())
        else:
            add(json.dumps(edge, sort_keys=True), ())
    return out or Text("none", style="dim")


def sk_table(title: str, descs: Sequence[Mapping[str, Any]], cut: Iterable[int] = ()) -> Table:
    """One row per SK: its function/entry, children (kernels), streams and kept events."""
    removed = set(cut)
    table = Table(title=title, title_justify="left", expand=True, show_lines=True)
    table.add_column("SK", ratio=3, overflow="fold")
    table.add_column("children", ratio=3, overflow="fold")
    table.add_column("streams", ratio=1)
    table.add_column("events", ratio=2, overflow="fold")
    for d in descs:
        head = Text(f"#{d.get('sk_index')} {d.get('scope_name')}", style="bold")
        head.append(
            f"\n{d.get('entry')} · {d.get('kernel_type')} · {d.get('num_blocks')} blocks", style="dim"
        )
        head.append(f"\n{d.get('break')}", style="dim")
        streams = ", ".join(str(s) for s in d.get("streams") or []) or "?"
        table.add_row(head, _children(d, removed), streams, _events(d, removed))
    if not descs:
        table.add_row(Text("no SK", style="dim"), "", "", "")
    return table


def prediction_view(
    manifest: Mapping[str, Any], baseline: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]]
) -> Group:
    """Before (the SK of the failed run, cut children marked ✂) and after (the predicted SKs),
    then whether the prediction agrees with the proposal's own before/after ranges."""
    change = manifest.get("change") or {}
    pred = manifest.get("prediction") or {}
    cut = [*(change.get("excluded") or []), *(change.get("collateral") or [])]
    parts: list[RenderableType] = [
        sk_table("Before — the SK of the failed run (✂ = removed by the edit)", baseline, cut),
        sk_table(f"After — {len(predicted)} predicted SK(s)", predicted),
    ]
    unfused = pred.get("unfused") or {}
    if unfused:
        parts.append(Text("unfused after the edit: " + ", ".join(f"{k} ({v})" for k, v in unfused.items())))
    if pred.get("agrees_with_proposal"):
        parts.append(Text("prediction agrees with the proposal's before/after ranges", style="green"))
    for diff in pred.get("differences") or []:
        parts.append(Text(f"warning: {diff}", style="bold yellow"))
    return Group(*parts)


def patch_view(diff: str) -> Syntax:
    """The marker patch, syntax-coloured as a unified diff."""
    return Syntax(diff, "diff", theme=DIFF_THEME, word_wrap=True)


def relaunch_view(manifest: Mapping[str, Any]) -> Table:
    """What the re-launch sets: env vars, compile options, the debug options it drops, where it runs."""
    rel = manifest.get("relaunch") or {}
    table = Table(show_header=False, expand=True, box=None)
    table.add_column("what", style="bold", no_wrap=True, width=12)
    table.add_column("value", overflow="fold", ratio=1)
    for name, value in (rel.get("env") or {}).items():
        table.add_row("env", f"{name}={value}")
    for name, value in (rel.get("compile_options") or {}).items():
        table.add_row("option", f"{name}={json.dumps(value, sort_keys=True)}")
    dropped = rel.get("dropped_debug_options") or {}
    table.add_row(
        "dropped",
        json.dumps(dropped, sort_keys=True) + " (debug options of the failed run; a clean round)"
        if dropped
        else "no debug options to drop",
    )
    table.add_row("command", str(rel.get("command") or "(not recorded in run.json)"))
    table.add_row("cwd", str(rel.get("cwd") or "(not recorded in run.json)"))
    failing = rel.get("failing_path")
    table.add_row(
        "failing path", json.dumps(failing, sort_keys=True) if failing else "(not recorded in run.json)"
    )
    return table


def plan_view(manifest: Mapping[str, Any]) -> Table:
    """The V1–V5 verification plan, one row per gate."""
    table = Table(expand=True, show_lines=True)
    table.add_column("gate", style="bold", no_wrap=True)
    table.add_column("what the re-launch must show", overflow="fold")
    for gate in manifest.get("verification_plan") or []:
        check = Text(str(gate.get("check") or ""))
        if gate.get("needed") is False:
            check.append("\n(not needed for this fragment: no event edge in its safety notes)", style="dim")
        table.add_row(str(gate.get("gate")), check)
    return table


__all__ = ["patch_view", "plan_view", "prediction_view", "relaunch_view", "sk_table"]
