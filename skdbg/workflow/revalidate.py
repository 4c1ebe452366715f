"""Revalidation (V1–V5) of a round's attempt against the frozen attempt its proposal came from.

Why it reads only frozen copies: the scenes are materialised from the ledger after a tamper check
(:func:`skdbg.sessions.attempts.materialised`), so a scene edited after freezing can never pass a
gate; the gates themselves are :func:`skdbg.triage.verify.verify`, the ones ``skdbg verify`` runs.
"""

from __future__ import annotations

import json
from typing import Any

from skdbg.sessions.attempts import canonical_sha256, materialised
from skdbg.sessions.errors import NotFound
from skdbg.sessions.store import Ledger, ProposalInfo
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.narrowed import narrowed_analysis
from skdbg.triage.verify import diagnostic_rerun, verify
from skdbg.workflow.facts import declared_change_mismatch, frozen_facts


def verify_round(ledger: Ledger, session_id: str, round_id: str, no: int | None = None) -> dict[str, Any]:
    """Revalidate the round's attempt (newest by default) against the attempt its proposal came from.

    Records V1–V5 and the implied moves: attempt passed/failed/invalid, round failed or
    passed_gates(V1..Vk), proposal applied → verified (passed) or blocked (failed). An attempt that
    re-runs the previous attempt of its round with only debug options added is a diagnostic attempt
    (§3.9): it is compared with that attempt, its status and R4 come from the same decision
    :func:`skdbg.workflow.freeze` used, and the proposal does not move. Returns the ``skdbg.verify/1`` document.
    """
    target = ledger.attempt(session_id, round_id, no)
    rid = target.round_id
    earlier = [a for a in ledger.attempts(session_id, rid) if a.no < target.no]
    decision = None
    if earlier:
        before, after = frozen_facts(ledger, earlier[-1]), frozen_facts(ledger, target)
        decision = diagnostic_rerun(before, after) if before is not None and after is not None else None
    prop: ProposalInfo | None = None
    if decision is not None:
        source = earlier[-1]
    else:
        try:
            prop = ledger.proposal(session_id, round_id)
        except NotFound as exc:
            raise NotFound(
                f"{exc}; and {rid}/{target.key} is not a diagnostic re-run of an earlier attempt of the round "
                "(same candidate, only debug options added): nothing to revalidate"
            ) from exc
        source = ledger.attempt(session_id, prop.source_round, prop.source_attempt)
    with materialised(ledger, source) as old_dir, materialised(ledger, target) as new_dir:
        old_ctx, new_ctx = open_context(old_dir), open_context(new_dir)
        analysis = analyze_context(old_ctx)
        isolated = _bisected(prop)
        if isolated is not None:  # skdbg bisect isolated the child: verify against its N1 proposal
            analysis = narrowed_analysis(old_ctx, analysis, *isolated) or analysis
        result = verify(
            old_ctx,
            new_ctx,
            analysis.proposal,
            old_analysis=analysis,
            round_ids=(source.round_id, rid),
            declared_mismatch=declared_change_mismatch(ledger, session_id, rid, new_ctx)
            if decision
            else None,
        )
    doc = result.to_json()
    if prop is not None and canonical_sha256(analysis.proposal.to_json()) != prop.sha256:
        doc["notes"] = [
            *doc["notes"],
            "the proposal recomputed from the frozen scene differs from the recorded one",
        ]
    a_status = result.attempt.status
    current = ledger.status("attempt", target.pk)
    attempt_move = a_status if a_status in ledger.allowed("attempt", current) else None
    rnd = ledger.round(session_id, round_id)
    r_status = result.round_status if result.round_status != "open" else None
    round_move = (rnd.pk, r_status) if r_status and r_status in ledger.allowed("round", rnd.status) else None
    prop_move: tuple[int, str] | None = None
    if prop is not None and a_status in ("passed", "failed", "timed_out"):
        wanted = "verified" if a_status == "passed" else "blocked"
        if prop.status == "proposed":
            ledger.set_status("proposal", prop.pk, "applied", f"{round_id}/{target.key} launched")
        if wanted in ledger.allowed("proposal", ledger.status("proposal", prop.pk)):
            prop_move = (prop.pk, wanted)
    ledger.record_gates(
        target,
        [(g.gate, g.result, g.detail) for g in result.verification],
        attempt_status=attempt_move,
        round_status=round_move,
        proposal_status=prop_move,
        detail="skdbg session verify",
        snapshots={"verify.json": (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()},
    )
    return doc


def _bisected(prop: ProposalInfo | None) -> tuple[int, str] | None:
    """(child nodeId, reason) of an exclusion ``skdbg bisect`` recorded (body ``bisect.role``)."""
    if prop is None:
        return None
    nb, child = prop.body.get("bisect"), prop.body.get("child")
    if not isinstance(nb, dict) or nb.get("role") != "exclusion" or not isinstance(child, dict):
        return None
    node = child.get("node_id")
    return (node, str(nb.get("reason", ""))) if isinstance(node, int) else None


__all__ = ["verify_round"]
