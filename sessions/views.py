"""Read API of the TUI Session screen: rounds, attempts, verdict history, diff of two verdicts.

Why a separate module: the screen only reads; keeping the queries here (over :class:`Ledger`) lets the
TUI open the ledger read-only and never depend on how attempts are written.
"""

from __future__ import annotations

from typing import Any

from skdbg.sessions.store import AttemptInfo, Ledger

#: the verdict fields compared between attempts (path in the analysis JSON)
VERDICT_FIELDS = (
    ("gate.passed",),
    ("fault.kind",),
    ("fault.phase",),
    ("fault.entry",),
    ("verdict.confidence",),
    ("verdict.rule",),
    ("verdict.suspect.func_name",),
    ("verdict.suspect.task_index",),
    ("verdict.suspect.node_id",),
    ("proposal.status",),
    ("proposal.mechanism",),
    ("proposal.excluded",),
    ("routes",),
)


def _get(doc: Any, path: str) -> Any:
    cur = doc
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def verdict_summary(ledger: Ledger, attempt: AttemptInfo) -> dict[str, Any]:
    """One attempt's verdict as a flat record (None values when no analysis was frozen)."""
    doc = ledger.snapshot_json(attempt.pk, "analysis.json")
    out: dict[str, Any] = {"round_id": attempt.round_id, "attempt": attempt.key, "status": attempt.status}
    for (path,) in VERDICT_FIELDS:
        out[path] = _get(doc, path) if doc is not None else None
    out["gates"] = {g["gate"]: g["result"] for g in ledger.gates(attempt.pk)}
    return out


def verdict_history(ledger: Ledger, session_id: str) -> list[dict[str, Any]]:
    """Every attempt of the session in order with its verdict summary (negative evidence included)."""
    return [verdict_summary(ledger, a) for a in ledger.attempts(session_id)]


def diff_verdicts(
    ledger: Ledger, session_id: str, a: tuple[str, int | None], b: tuple[str, int | None]
) -> list[dict[str, Any]]:
    """The verdict fields that differ between attempt ``a`` and ``b`` (each (round, attempt no))."""
    left = verdict_summary(ledger, ledger.attempt(session_id, a[0], a[1]))
    right = verdict_summary(ledger, ledger.attempt(session_id, b[0], b[1]))
    keys = ["status", *(p for (p,) in VERDICT_FIELDS), "gates"]
    return [{"field": k, "a": left[k], "b": right[k]} for k in keys if left[k] != right[k]]


def session_overview(ledger: Ledger, session_id: str) -> dict[str, Any]:
    """``skdbg session show``: the session, its rounds with status history, attempts, proposals, notes."""
    info = ledger.session(session_id)
    rounds = []
    for r in ledger.rounds(session_id):
        rounds.append(
            r.to_json()
            | {
                "history": ledger.status_history("round", r.pk),
                "attempts": [
                    a.to_json() | {"gates": ledger.gates(a.pk)}
                    for a in ledger.attempts(session_id, r.round_id)
                ],
            }
        )
    return {
        "schema": "skdbg.session/1",
        "session": info.to_json(),
        "rounds": rounds,
        "proposals": [
            {k: v for k, v in p.to_json().items() if k != "proposal"}
            | {"history": ledger.status_history("proposal", p.pk)}
            for p in ledger.proposals(session_id)
        ],
        "notes": ledger.notes(session_id),
    }


__all__ = ["VERDICT_FIELDS", "diff_verdicts", "session_overview", "verdict_history", "verdict_summary"]
