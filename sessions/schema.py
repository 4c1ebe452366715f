"""The ledger schema, its migrations (``PRAGMA user_version``) and the forward-only status rules.

Why the rules live in the database: a failed round or attempt must never be rewritten (triage.md
§6.3), whoever writes — this package, a future tool, or a user with the ``sqlite3`` shell. So every
table is INSERT-only (``BEFORE UPDATE``/``BEFORE DELETE`` triggers abort), statuses are rows of one
``status_events`` table, and one trigger checks each new status against the ``transitions`` table.
That table is the ONE place the allowed moves are written down; Python reads it back for messages.
"""

from __future__ import annotations

import sqlite3

ATTEMPT_STATUSES = ("running", "passed", "failed", "timed_out", "interrupted", "invalid", "not_run")
GATES = ("V1", "V2", "V3", "V4", "V5")
PASSED_GATES = tuple(f"passed_gates(V1..{g})" for g in GATES)
ROUND_STATUSES = ("open", "failed", "blocked", *PASSED_GATES, "accepted", "abandoned")
PROPOSAL_STATUSES = ("proposed", "applied", "verified", "blocked")
ROUND_KINDS = ("base", "exclusion", "narrowing")
START = ""  # the "from" status of an entity's first status event


def transitions() -> list[tuple[str, str, str]]:
    """Every allowed (entity, from, to). Anything else is refused by the store."""
    out: list[tuple[str, str, str]] = []
    # attempts: created running or already settled; running settles once; a settled attempt is final
    for s in ATTEMPT_STATUSES:
        out.append(("attempt", START, s))
        if s != "running":
            out.append(("attempt", "running", s))
    # rounds: open first; passed_gates only grows; failed/blocked/accepted/abandoned are final
    out.append(("round", START, "open"))
    for s in ("failed", "blocked", "abandoned", *PASSED_GATES):
        out.append(("round", "open", s))
    for i, pg in enumerate(PASSED_GATES):
        for later in PASSED_GATES[i + 1 :]:
            out.append(("round", pg, later))
        for s in ("failed", "blocked", "accepted", "abandoned"):
            out.append(("round", pg, s))
    # proposals: proposed -> applied -> verified | blocked (a proposal may be blocked before it is applied)
    out += [
        ("proposal", START, "proposed"),
        ("proposal", START, "blocked"),
        ("proposal", "proposed", "applied"),
        ("proposal", "proposed", "blocked"),
        ("proposal", "applied", "verified"),
        ("proposal", "applied", "blocked"),
    ]
    return out


_APPEND_ONLY_TABLES_V1 = (
    "sessions",
    "rounds",
    "attempts",
    "artifacts",
    "blobs",
    "snapshots",
    "proposals",
    "gate_results",
    "status_events",
    "transitions",
)

_V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT,
    created TEXT NOT NULL
);
CREATE TABLE rounds (
    pk INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    round_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('base', 'exclusion', 'narrowing')),
    derived_round TEXT,
    derived_attempt INTEGER,
    derived_proposal TEXT,
    created TEXT NOT NULL,
    UNIQUE (session_id, round_id),
    CHECK ((kind = 'base') = (derived_round IS NULL))
);
CREATE TABLE attempts (
    pk INTEGER PRIMARY KEY,
    round_pk INTEGER NOT NULL REFERENCES rounds(pk),
    no INTEGER NOT NULL CHECK (no >= 1),
    change TEXT NOT NULL,
    scene_root TEXT,
    pid INTEGER,
    storage TEXT NOT NULL CHECK (storage IN ('copy', 'reference', 'none')),
    n_artifacts INTEGER NOT NULL,
    created TEXT NOT NULL,
    UNIQUE (round_pk, no)
);
-- attempt numbers strictly increase inside a round (never renumbered, never reused)
CREATE TRIGGER attempts_increasing BEFORE INSERT ON attempts
WHEN NEW.no <> COALESCE((SELECT MAX(no) FROM attempts WHERE round_pk = NEW.round_pk), 0) + 1
BEGIN SELECT RAISE(ABORT, 'attempt numbers must increase by one inside a round'); END;
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),
    size INTEGER NOT NULL
);
CREATE TABLE artifacts (
    pk INTEGER PRIMARY KEY,
    attempt_pk INTEGER NOT NULL REFERENCES attempts(pk),
    role TEXT NOT NULL,
    relpath TEXT NOT NULL,
    sha256 TEXT CHECK (sha256 IS NULL OR length(sha256) = 64),
    size INTEGER,
    mtime TEXT,
    pid TEXT,
    status TEXT NOT NULL,
    UNIQUE (attempt_pk, relpath)
);
CREATE INDEX artifacts_sha ON artifacts(sha256);
CREATE TABLE snapshots (
    pk INTEGER PRIMARY KEY,
    attempt_pk INTEGER NOT NULL REFERENCES attempts(pk),
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL REFERENCES blobs(sha256),
    UNIQUE (attempt_pk, name)
);
CREATE TABLE proposals (
    pk INTEGER PRIMARY KEY,
    attempt_pk INTEGER NOT NULL REFERENCES attempts(pk),
    sha256 TEXT NOT NULL,
    body TEXT NOT NULL,
    round_pk INTEGER NOT NULL UNIQUE REFERENCES rounds(pk),
    created TEXT NOT NULL
);
CREATE TABLE gate_results (
    pk INTEGER PRIMARY KEY,
    attempt_pk INTEGER NOT NULL REFERENCES attempts(pk),
    gate TEXT NOT NULL CHECK (gate IN ('V1', 'V2', 'V3', 'V4', 'V5')),
    result TEXT NOT NULL CHECK (result IN ('passed', 'failed', 'not_run')),
    detail TEXT NOT NULL,
    created TEXT NOT NULL,
    UNIQUE (attempt_pk, gate)
);
CREATE TABLE transitions (
    entity TEXT NOT NULL,
    from_status TEXT NOT NULL,
    to_status TEXT NOT NULL,
    PRIMARY KEY (entity, from_status, to_status)
);
CREATE TABLE status_events (
    seq INTEGER PRIMARY KEY,
    entity TEXT NOT NULL CHECK (entity IN ('round', 'attempt', 'proposal')),
    entity_pk INTEGER NOT NULL,
    status TEXT NOT NULL,
    detail TEXT,
    created TEXT NOT NULL
);
CREATE INDEX status_events_entity ON status_events(entity, entity_pk, seq);
-- THE forward-only rule: a new status must be an allowed move from the entity's current status
CREATE TRIGGER status_forward_only BEFORE INSERT ON status_events
WHEN NOT EXISTS (
    SELECT 1 FROM transitions
    WHERE entity = NEW.entity AND to_status = NEW.status AND from_status = COALESCE(
        (SELECT status FROM status_events
         WHERE entity = NEW.entity AND entity_pk = NEW.entity_pk ORDER BY seq DESC LIMIT 1), '')
)
BEGIN SELECT RAISE(ABORT, 'forward-only: status transition not allowed'); END;
"""

_V2 = """
CREATE TABLE notes (
    pk INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    round_id TEXT,
    attempt_no INTEGER,
    text TEXT NOT NULL,
    created TEXT NOT NULL
);
-- the parent controller may rename a round on import; skdbg keeps the mapping (§6.3)
CREATE TABLE round_aliases (
    round_pk INTEGER NOT NULL REFERENCES rounds(pk),
    alias TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (round_pk, alias)
);
"""


def _append_only(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'append-only: {table} rows are never rewritten'); END;\n"
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'append-only: {table} rows are never deleted'); END;\n"
    )


def _migrate_v1(db: sqlite3.Connection) -> None:
    for stmt in _split(_V1):
        db.execute(stmt)
    db.executemany("INSERT INTO transitions VALUES (?, ?, ?)", transitions())
    for t in _APPEND_ONLY_TABLES_V1:
        for stmt in _split(_append_only(t)):
            db.execute(stmt)


def _migrate_v2(db: sqlite3.Connection) -> None:
    for stmt in _split(_V2):
        db.execute(stmt)
    for t in ("notes", "round_aliases"):
        for stmt in _split(_append_only(t)):
            db.execute(stmt)


def _split(script: str) -> list[str]:
    """Statements of a script (triggers contain ``;`` inside BEGIN…END, so split on complete ones)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


#: (version reached, migration) in order; a database at user_version k runs every migration above k
MIGRATIONS = ((1, _migrate_v1), (2, _migrate_v2))
SCHEMA_VERSION = MIGRATIONS[-1][0]

__all__ = [
    "ATTEMPT_STATUSES",
    "GATES",
    "MIGRATIONS",
    "PASSED_GATES",
    "PROPOSAL_STATUSES",
    "ROUND_KINDS",
    "ROUND_STATUSES",
    "SCHEMA_VERSION",
    "transitions",
]
