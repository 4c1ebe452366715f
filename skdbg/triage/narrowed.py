"""The analysis of a failed attempt once an N1 bisection has isolated its child (triage.md §3.9).

Why in triage: a low or medium verdict carries no exclusion (§3.8). When ``skdbg bisect`` has isolated
the child across re-launches — the probe that fused it (with already cleared children) failed with
the baseline's signature — the verdict becomes ``high`` under rule N1 and the exclusion proposal is
built by the same :class:`~skdbg.triage.proposal.ProposalBuilder` as any other. Revalidation (V1–V5)
of the exclusion round must compare against exactly that proposal, so both ``bisect`` (which records
it) and the workflow (which recomputes it from the frozen scene) call this one function.
"""

from __future__ import annotations

from dataclasses import replace

from skdbg.triage.context import TriageContext
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis
from skdbg.triage.proposal import ProposalBuilder


def narrowed_analysis(ctx: TriageContext, analysis: Analysis, node_id: int, reason: str) -> Analysis | None:
    """``analysis`` with an N1 verdict naming kernel ``node_id`` of the failing SK and its proposal;
    None when the SK instance or that kernel is not in the scene."""
    inst = localize(ctx).instance
    node = inst.node_by_id(node_id) if inst is not None else None
    if inst is None or node is None or not node.is_kernel:
        return None
    child = inst.child(node.position)
    verdict = replace(
        analysis.verdict,
        confidence="high",
        rule="N1",
        reason=reason,
        suspect=child,
        candidates=(child,),
        missing=(),
    )
    proposal = ProposalBuilder(ctx, inst, child, verdict).build()
    return replace(analysis, verdict=verdict, proposal=proposal)


__all__ = ["narrowed_analysis"]
