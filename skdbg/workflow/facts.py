"""What the workflow reads off an attempt to decide its status: the launch outcome, the facts of a
frozen attempt, and the §6.3 declared-change check.

Why here: these decisions need triage (``skdbg.triage.verify``), and the ledger (``skdbg.sessions``)
only stores bytes and JSON; freezing (:mod:`.freezing`) and revalidation (:mod:`.revalidate`) both
read an attempt the same way through these functions.
"""

from __future__ import annotations

from skdbg.sessions.attempts import frozen_text, marker_sha
from skdbg.sessions.errors import NotFound
from skdbg.sessions.store import AttemptInfo, Ledger
from skdbg.triage.context import TriageContext
from skdbg.triage.model import Analysis, MarkerEdit
from skdbg.triage.verify import AttemptFacts, edits_for, launch_outcome, materialisation_mismatch


def attempt_outcome(analysis: Analysis, derived: bool) -> tuple[str, str]:
    """(attempt status, why) from the scene itself; a derived round's clean attempt waits for verify.

    The outcome of the launch is :func:`skdbg.triage.verify.launch_outcome` — the one ``skdbg
    verify`` uses — so the ledger and ``verify`` read a run the same way.
    """
    facts = AttemptFacts.from_summary(
        analysis.run, analysis.fault.kind, None, fault_phase=analysis.fault.phase
    )
    status, why = launch_outcome(facts)
    if status == "passed" and derived:
        return "running", "awaiting revalidation (skdbg session verify)"
    return status, why


def frozen_facts(ledger: Ledger, attempt: AttemptInfo) -> AttemptFacts | None:
    """:class:`AttemptFacts` of a frozen attempt (its analysis snapshot + marker hash), in its ledger round."""
    doc = ledger.snapshot_json(attempt.pk, "analysis.json")
    if not isinstance(doc, dict):
        return None
    fault = doc.get("fault") or {}
    return AttemptFacts.from_summary(
        doc.get("run"),
        str(fault.get("kind") or "none"),
        marker_sha(ledger.artifacts(attempt.pk)),
        round_id=attempt.round_id,
        fault_phase=fault.get("phase"),
    )


def declared_edits(
    ledger: Ledger, session_id: str, round_id: str
) -> tuple[AttemptInfo, list[MarkerEdit], str] | None:
    """(source attempt, declared marker edits, mechanism) of the exclusion that opened ``round_id``.

    None for rounds without a declared marker change: no proposal (a base round), a narrowing round,
    or a blocked proposal.
    """
    try:
        prop = ledger.proposal(session_id, round_id)
    except NotFound:
        return None
    if prop.body.get("status") != "proposed" or not prop.body.get("mechanism"):
        return None  # narrowing rounds and blocked proposals declare no marker change
    edits = [
        MarkerEdit(str(e["file"]), int(e["line"]), str(e["op"]), str(e["text"]))
        for e in prop.body.get("marker_edits") or []
    ]
    source = ledger.attempt(session_id, prop.source_round, prop.source_attempt)
    return source, edits, str(prop.body["mechanism"])


def declared_change_mismatch(
    ledger: Ledger, session_id: str, round_id: str, ctx: TriageContext
) -> str | None:
    """§6.3: why the scene's model source is not the declared change of the exclusion that opened
    ``round_id`` (None when it is, or when nothing declared can be compared)."""
    declared = declared_edits(ledger, session_id, round_id)
    if declared is None:
        return None
    source, edits, mechanism = declared
    marker = ctx.marker_file()
    old = frozen_text(ledger, source, "marker_file")
    if marker is None or not marker.is_file() or old is None:
        return None
    rel, old_text = old
    new_text = marker.read_text(encoding="utf-8", errors="replace")
    _, why = materialisation_mismatch(old_text, new_text, edits_for(edits, rel), mechanism)
    return why


__all__ = ["attempt_outcome", "declared_change_mismatch", "declared_edits", "frozen_facts"]
