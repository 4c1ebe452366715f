"""Read API of the TUI Session screen: rounds, attempts, verdict history, diff of two verdicts.

Why a separate module: the screen only reads; keeping the queries here (over :class:`Ledger`) lets the
TUI open the ledger read-only and never depend on how attempts are written.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from skdbg.sessions.store import AttemptInfo, Ledger, attempt_key, translate

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


def verdict_summary(ledger: Ledger, attempt: AttemptInfo | TreeAttempt) -> dict[str, Any]:
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


# ------------------------------------------------------------------------------------------ the tree


@dataclass(frozen=True, slots=True)
class TreeAttempt:
    """One attempt as the Session screen's tree lists it (no frozen file read)."""

    pk: int
    round_id: str
    no: int
    status: str
    change: str
    created: str
    gates: dict[str, str]

    @property
    def key(self) -> str:
        return attempt_key(self.no)


@dataclass(frozen=True, slots=True)
class TreeRound:
    """One round of the tree: its status and how many attempts it has (they are read on demand)."""

    pk: int
    round_id: str
    kind: str
    status: str
    derived_round: str | None
    derived_attempt: int | None
    created: str
    n_attempts: int


_STATUS = (
    "(SELECT s.status FROM status_events s WHERE s.entity = '{e}' AND s.entity_pk = {pk} "
    "ORDER BY s.seq DESC LIMIT 1)"
)
_ATTEMPT_ROWS = (
    "SELECT a.pk, r.round_id, a.no, a.change, a.created, "
    + _STATUS.format(e="attempt", pk="a.pk")
    + ", (SELECT group_concat(g.gate || '=' || g.result, ',') FROM gate_results g WHERE g.attempt_pk = a.pk) "
    "FROM attempts a JOIN rounds r ON a.round_pk = r.pk "
)


def _rows(ledger: Ledger, sql: str, args: tuple[Any, ...]) -> list[Any]:
    try:
        return ledger.connection.execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        raise translate(exc, ledger.db_path) from exc


def _attempts(rows: list[Any]) -> list[TreeAttempt]:
    out = []
    for pk, rid, no, change, created, st, gates in rows:
        pairs = (g.partition("=") for g in str(gates).split(",")) if gates else ()
        out.append(
            TreeAttempt(
                int(pk),
                str(rid),
                int(no),
                str(st or ""),
                str(change),
                str(created),
                {g: res for g, _, res in sorted(pairs)},
            )
        )
    return out


def session_rounds(ledger: Ledger, session_id: str) -> list[TreeRound]:
    """Every round of the session with its status and attempt count — one query, no attempt read.

    Why not :func:`session_overview`: that reads each round's status history and each attempt's
    gates with a query apiece; a screen that must open on 10,000 attempts reads the rounds here and
    a round's attempts (:func:`round_attempts`) only when it is shown."""
    ledger.session(session_id)
    rows = _rows(
        ledger,
        "SELECT r.pk, r.round_id, r.kind, r.derived_round, r.derived_attempt, r.created, "
        + _STATUS.format(e="round", pk="r.pk")
        + ", (SELECT COUNT(*) FROM attempts a WHERE a.round_pk = r.pk) FROM rounds r WHERE r.session_id = ? "
        "ORDER BY r.pk",
        (session_id,),
    )
    return [
        TreeRound(int(pk), str(rid), str(kind), str(st or ""), d_round, d_att, str(created), int(n))
        for pk, rid, kind, d_round, d_att, created, st, n in rows
    ]


def round_attempts(ledger: Ledger, rnd: TreeRound, newest: int | None = None) -> list[TreeAttempt]:
    """The round's attempts in order with status, change and V1–V5 results — one query; only the
    ``newest`` ones when given (the tree shows a page at a time)."""
    if newest is None:
        rows = _rows(ledger, _ATTEMPT_ROWS + "WHERE a.round_pk = ? ORDER BY a.no", (rnd.pk,))
        return _attempts(rows)
    rows = _rows(ledger, _ATTEMPT_ROWS + "WHERE a.round_pk = ? ORDER BY a.no DESC LIMIT ?", (rnd.pk, newest))
    return _attempts(rows[::-1])


def session_attempts(ledger: Ledger, session_id: str, newest: int | None = None) -> list[TreeAttempt]:
    """Every attempt of the session in creation order (the newest ``newest`` when given) — one query."""
    if newest is None:
        return _attempts(_rows(ledger, _ATTEMPT_ROWS + "WHERE r.session_id = ? ORDER BY a.pk", (session_id,)))
    rows = _rows(
        ledger, _ATTEMPT_ROWS + "WHERE r.session_id = ? ORDER BY a.pk DESC LIMIT ?", (session_id, newest)
    )
    return _attempts(rows[::-1])


__all__ = [
    "VERDICT_FIELDS",
    "TreeAttempt",
    "TreeRound",
    "diff_verdicts",
    "round_attempts",
    "session_attempts",
    "session_overview",
    "session_rounds",
    "verdict_history",
    "verdict_summary",
]
