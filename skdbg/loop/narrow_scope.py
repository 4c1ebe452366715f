"""The failing SK of a frozen scene as the narrowing core sees it: its fragment input, marker layout and units.

Why here and not in triage: the proposal builder already knows how to find the marker region of an
SK, the source line of each child (source_sites.json, else §4.6 inference) and the §4.2 fragment
input; N1 needs exactly those facts for *every* child, so it reuses them rather than re-reading the
scene its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skdbg.loop.narrow import Layout, NarrowError, Unit, units_of
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.fragment import FragmentInput, fragment_input
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis
from skdbg.triage.proposal import ProposalBuilder
from skdbg.triage.skview import SkInstance


@dataclass(frozen=True, slots=True)
class ScopePlan:
    """Everything a bisection needs from the baseline scene."""

    inp: FragmentInput
    layout: Layout
    units: tuple[Unit, ...]
    labels: dict[int, str]  # nodeId → funcName (kernels)
    lines: dict[int, int]  # nodeId → source line
    scope_id: int
    marker_text: str

    def unit_children(self, i: int) -> list[dict[str, object]]:
        return [
            {"node_id": k, "func_name": self.labels.get(k), "line": self.lines.get(k)}
            for k in self.units[i].kernels
        ]

    def funcs(self, lo: int, hi: int) -> list[str]:
        return [self.labels.get(k, "?") for u in self.units[lo:hi] for k in u.kernels]


def failing_instance(ctx: TriageContext) -> tuple[SkInstance, Analysis]:
    analysis = analyze_context(ctx)
    loc = localize(ctx)
    if loc.instance is None:
        raise NarrowError(
            "the failing SK instance is not resolved in the baseline scene (no scope id / fused-node "
            "metadata for the faulting entry): there is no child list to narrow"
        )
    return loc.instance, analysis


def plan_from_context(ctx: TriageContext) -> ScopePlan:
    """The :class:`ScopePlan` of the scene's failing SK (``NarrowError`` when it cannot be narrowed)."""
    inst, analysis = failing_instance(ctx)
    kernels = inst.kernels
    if not kernels:
        raise NarrowError(f"SK scope id {inst.scope_id} has no kernel child")
    b = ProposalBuilder(ctx, inst, inst.child(kernels[0].position), analysis.verdict)
    names = b.scope_names()
    if not names:
        raise NarrowError("the SK has no named scope (automatic AOT): N1 splits a named scope (§3.9)")
    b.load_source()
    b.lines = b.explicit_sites()
    b.find_region(names, None)
    b.infer_sites()
    src, region = b.src, b.region
    if src is None or region is None:
        raise NarrowError("; ".join(b.notes) or "the scope's marker region was not found in the marker file")
    for m in (region.begin, region.end):
        if m.line != m.end_line:
            raise NarrowError(
                f"{src.rel}:{m.line}: the marker {m.label} spans several lines; bisect rewrites whole lines"
            )
    inner = region.inner
    stmts = tuple((s.lineno, s.end_lineno or s.lineno) for s in inner)
    layout = Layout(
        rel=src.rel,
        scope=region.name,
        begin_line=region.begin.line,
        end_line=region.end.line,
        begin_call=src.scan.spelling("begin"),
        end_call=src.scan.spelling("end"),
        literal=region.begin.literal,
        stmts=stmts,
        indents=tuple(src.indent(a) for a, _ in stmts),
    )
    writers = ctx.run.cache_writers if ctx.run is not None else {}
    inp = fragment_input(inst, kernels[0].node_id, cache_writers=writers, lines=b.lines)
    stmt_of: dict[int, int] = {}
    for nid, line in b.lines.items():
        s = layout.stmt_of_line(line)
        if s is not None:
            stmt_of[nid] = s
    missing = [k.node_id for k in kernels if k.node_id not in stmt_of]
    if len(missing) == len(kernels):
        raise NarrowError(
            f"no child of scope {region.name!r} has a known statement inside its markers in {src.rel} "
            "(add source_sites.json)"
        )
    units = units_of(inp, stmt_of)
    labels = {k.node_id: k.func_name or f"nodeId {k.node_id}" for k in kernels}
    return ScopePlan(inp, layout, tuple(units), labels, dict(b.lines), inst.scope_id, src.text)


def plan_from_scene(scene: Path, source_root: Path | None = None) -> ScopePlan:
    return plan_from_context(open_context(scene, source_root=source_root))


__all__ = ["ScopePlan", "failing_instance", "plan_from_context", "plan_from_scene"]
