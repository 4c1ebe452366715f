"""The SQLite ledger: sessions → rounds → attempts, frozen artifacts, snapshots, proposals, gates, notes.

Why this shape (ecosystem.md §6, triage.md §6.3): one SQLite file is the single source of truth;
every write is one short ``BEGIN IMMEDIATE`` transaction (an attempt with all its artifacts appears
whole or not at all — a killed writer leaves nothing half-written); readers get a consistent
snapshot and wait at most ``busy_timeout``; WAL on local disks, a rollback journal on network file
systems. The append-only and forward-only rules are enforced by the schema (:mod:`.schema`), so
this class cannot break them either — it only turns SQLite's refusals into clear errors.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from skdbg.sessions.blobs import Digest, ObjectStore
from skdbg.sessions.errors import ForwardOnlyError, LedgerError, LedgerUnavailable, NotFound
from skdbg.sessions.location import DB_NAME, OBJECTS, filesystem_type, journal_mode_for, read_mounts
from skdbg.sessions.schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 5000
#: a 0-byte ledger.db younger than this may be a ledger another process is creating right now
_FRESH_FILE_SECONDS = 10.0


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def attempt_key(no: int) -> str:
    return f"attempt-{no:03d}"


# ------------------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class FrozenArtifact:
    """One artifact as frozen (§2.3): paths relative to the scene root; sha256 None when missing."""

    role: str
    relpath: str
    sha256: str | None
    size: int | None
    mtime: str | None
    pid: str | None
    status: str  # present | missing(reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "relpath": self.relpath,
            "sha256": self.sha256,
            "size": self.size,
            "mtime": self.mtime,
            "pid": self.pid,
            "status": self.status,
        }


@dataclass(slots=True)
class NewAttempt:
    """Everything one attempt row carries; written in one transaction by :meth:`Ledger.record_attempt`."""

    change: str
    scene_root: str | None
    pid: int | None
    storage: str  # copy | reference | none
    artifacts: list[FrozenArtifact]
    status: str
    status_detail: str | None = None
    snapshots: dict[str, bytes] = field(default_factory=dict)
    round_status: str | None = None  # the round's status move this attempt implies (e.g. failed)
    created: str | None = None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    name: str | None
    created: str
    rounds: int
    attempts: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "rounds": self.rounds,
            "attempts": self.attempts,
        }


@dataclass(frozen=True, slots=True)
class RoundInfo:
    pk: int
    round_id: str
    kind: str
    derived_from: dict[str, Any] | None
    status: str
    created: str

    def to_json(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "kind": self.kind,
            "derived_from": self.derived_from,
            "status": self.status,
            "created": self.created,
        }


@dataclass(frozen=True, slots=True)
class AttemptInfo:
    pk: int
    round_id: str
    no: int
    change: str
    scene_root: str | None
    pid: int | None
    storage: str
    n_artifacts: int
    status: str
    created: str

    @property
    def key(self) -> str:
        return attempt_key(self.no)

    def to_json(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "attempt": self.key,
            "no": self.no,
            "status": self.status,
            "change": self.change,
            "pid": self.pid,
            "scene_root": self.scene_root,
            "storage": self.storage,
            "artifacts": self.n_artifacts,
            "created": self.created,
        }


@dataclass(frozen=True, slots=True)
class ProposalInfo:
    pk: int
    sha256: str
    body: dict[str, Any]
    source_round: str
    source_attempt: int
    round_id: str  # the round the proposal opened
    status: str
    created: str

    def to_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "source": {"round": self.source_round, "attempt": attempt_key(self.source_attempt)},
            "round_id": self.round_id,
            "status": self.status,
            "created": self.created,
            "proposal": self.body,
        }


# ------------------------------------------------------------------------------------------ errors


def translate(exc: sqlite3.Error, db: Path) -> LedgerError:
    """SQLite's refusal as an actionable message naming the file."""
    msg = str(exc)
    low = msg.lower()
    if "forward-only" in low or "append-only" in low or "attempt numbers" in low:
        return ForwardOnlyError(f"{db}: {msg}")
    if "disk is full" in low or "disk i/o" in low:
        return LedgerUnavailable(f"{db}: disk full or I/O error while writing ({msg}); nothing was changed")
    if "readonly" in low or "read-only" in low:
        return LedgerUnavailable(f"{db}: the ledger is read-only ({msg}); nothing was changed")
    if "not a database" in low or "malformed" in low:
        return LedgerUnavailable(
            f"{db}: the ledger file is corrupted ({msg}); it was left untouched — restore it from a backup "
            "or point --session-dir at another directory"
        )
    if "locked" in low or "busy" in low:
        return LedgerUnavailable(f"{db}: the ledger stayed locked by another writer ({msg}); retry")
    if isinstance(exc, sqlite3.IntegrityError):
        return LedgerError(f"{db}: refused by the ledger schema ({msg})")
    return LedgerUnavailable(f"{db}: {msg}")


# ------------------------------------------------------------------------------------------ ledger


class Ledger:
    """One ledger directory: ``ledger.db`` + ``objects/``. Use as a context manager."""

    def __init__(
        self,
        home: str | os.PathLike[str],
        *,
        read_only: bool = False,
        mounts: str | None = None,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.home = Path(home)
        self.db_path = self.home / DB_NAME
        self.objects = ObjectStore(self.home / OBJECTS)
        self.read_only = read_only
        self.warnings: list[str] = []
        self.fstype = filesystem_type(self.home.resolve(), read_mounts() if mounts is None else mounts)
        self.journal_mode = journal_mode_for(self.fstype)
        if self.journal_mode != "WAL":
            self.warnings.append(
                f"{self.home} is on {self.fstype}: WAL is unsafe on network file systems, using a rollback "
                "journal (set SKDBG_HOME or --session-dir to a local disk for speed)"
            )
        self._db = self._connect(busy_timeout_ms)

    # -------------------------------------------------------------------------------- connection

    def _refuse_empty_file(self) -> None:
        """A 0-byte ``ledger.db`` is a ledger lost to a crash or a full disk, not a new one.

        SQLite would silently treat it as an empty database and start a fresh ledger over it. A file
        that another process created a moment ago (and is about to fill) is still accepted.
        """
        try:
            st = self.db_path.stat()
        except OSError:
            return
        objects = self.home / OBJECTS
        has_objects = objects.is_dir() and any(objects.iterdir())
        if st.st_size == 0 and (has_objects or time.time() - st.st_mtime > _FRESH_FILE_SECONDS):
            raise LedgerUnavailable(
                f"{self.db_path} is empty (0 bytes): the ledger was lost (a crash or a full disk while "
                "writing). It was left untouched; restore ledger.db from a backup, or move it aside to "
                "start a new ledger in this directory (objects/ keeps the frozen evidence)"
            )

    def _quick_check(self, db: sqlite3.Connection) -> None:
        """Refuse a damaged database before anything is read from it or written into it."""
        rows = db.execute("PRAGMA quick_check").fetchall()
        problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
        if problems:
            db.close()
            raise LedgerUnavailable(
                f"{self.db_path}: the ledger file is corrupted (quick_check: {problems[0]}); it was left "
                "untouched — restore it from a backup, or point --session-dir at another directory"
            )

    def _connect(self, busy_timeout_ms: int) -> sqlite3.Connection:
        self._refuse_empty_file()
        if self.read_only:
            if not self.db_path.is_file():
                raise NotFound(f"no ledger at {self.db_path}")
            # In a directory nobody can write to, no writer can exist either: read the file as it is
            # (a WAL database otherwise needs to create its -shm index beside it).
            immutable = "&immutable=1" if not os.access(self.home, os.W_OK) else ""
            uri = f"file:{self.db_path}?mode=ro{immutable}"
            try:
                db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=busy_timeout_ms / 1000)
                db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                self._check_version(db)
                self._quick_check(db)
            except sqlite3.Error as exc:
                raise translate(exc, self.db_path) from exc
            return db
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerUnavailable(
                f"cannot create the session directory {self.home}: {exc.strerror}"
            ) from exc
        if not os.access(self.home, os.W_OK) or (
            self.db_path.exists() and not os.access(self.db_path, os.W_OK)
        ):
            raise LedgerUnavailable(
                f"{self.home} is read-only: the ledger cannot be written there (use --session-dir or SKDBG_HOME)"
            )
        try:
            db = sqlite3.connect(self.db_path, isolation_level=None, timeout=busy_timeout_ms / 1000)
            db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._check_version(db)
            self._quick_check(db)
            mode = db.execute(f"PRAGMA journal_mode = {self.journal_mode}").fetchone()[0]
            self.journal_mode = str(mode).upper()
            db.execute("PRAGMA synchronous = " + ("NORMAL" if self.journal_mode == "WAL" else "FULL"))
            db.execute("PRAGMA foreign_keys = ON")
            self._migrate(db)
        except sqlite3.Error as exc:
            raise translate(exc, self.db_path) from exc
        return db

    def _check_version(self, db: sqlite3.Connection) -> int:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            db.close()
            raise LedgerUnavailable(
                f"{self.db_path}: ledger schema version {version} is newer than this skdbg supports "
                f"({SCHEMA_VERSION}); upgrade skdbg — the file was left untouched"
            )
        return version

    def _migrate(self, db: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> None:
        for version, step in MIGRATIONS:
            if version > upto:
                break
            db.execute("BEGIN IMMEDIATE")
            try:
                current = int(db.execute("PRAGMA user_version").fetchone()[0])
                if current >= version:
                    db.execute("COMMIT")
                    continue
                step(db)
                db.execute(f"PRAGMA user_version = {version}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection (tests and tools that check the store's own refusals)."""
        return self._db

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction; SQLite errors become :class:`LedgerError`."""
        if self.read_only:
            raise LedgerUnavailable(f"{self.db_path}: opened read-only; nothing was changed")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, self.db_path) from exc
        try:
            yield self._db
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise translate(exc, self.db_path) from exc
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        with suppress(sqlite3.Error):  # SQLite may already have rolled back (e.g. SQLITE_FULL)
            self._db.execute("ROLLBACK")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read snapshot across several queries."""
        try:
            self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(exc, self.db_path) from exc

    def _q(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            cur = self._db.execute(sql, tuple(args))
            cur.row_factory = sqlite3.Row
            return list(cur.fetchall())
        except sqlite3.Error as exc:
            raise translate(exc, self.db_path) from exc

    # -------------------------------------------------------------------------------- status

    def status(self, entity: str, pk: int) -> str:
        rows = self._q(
            "SELECT status FROM status_events WHERE entity = ? AND entity_pk = ? ORDER BY seq DESC LIMIT 1",
            (entity, pk),
        )
        return str(rows[0]["status"]) if rows else ""

    def allowed(self, entity: str, current: str) -> list[str]:
        """The statuses the store accepts next (read from the ``transitions`` table)."""
        rows = self._q(
            "SELECT to_status FROM transitions WHERE entity = ? AND from_status = ? ORDER BY to_status",
            (entity, current),
        )
        return [str(r["to_status"]) for r in rows]

    def insert_status(
        self, db: sqlite3.Connection, entity: str, pk: int, status: str, detail: str | None, created: str
    ) -> None:
        try:
            db.execute(
                "INSERT INTO status_events (entity, entity_pk, status, detail, created) VALUES (?, ?, ?, ?, ?)",
                (entity, pk, status, detail, created),
            )
        except sqlite3.IntegrityError as exc:
            current = self.status(entity, pk) or "(new)"
            allowed = ", ".join(self.allowed(entity, current if current != "(new)" else "")) or "none (final)"
            raise ForwardOnlyError(
                f"{entity} status {current} -> {status} refused: statuses only move forward "
                f"(allowed next: {allowed})"
            ) from exc

    def set_status(self, entity: str, pk: int, status: str, detail: str | None = None) -> None:
        if self.status(entity, pk) == status:
            return
        with self.write() as db:
            self.insert_status(db, entity, pk, status, detail, now())

    def status_history(self, entity: str, pk: int) -> list[dict[str, Any]]:
        rows = self._q(
            "SELECT status, detail, created FROM status_events WHERE entity = ? AND entity_pk = ? ORDER BY seq",
            (entity, pk),
        )
        return [{"status": r["status"], "detail": r["detail"], "created": r["created"]} for r in rows]

    # -------------------------------------------------------------------------------- sessions

    def new_session(
        self, name: str | None = None, *, session_id: str | None = None, created: str | None = None
    ) -> str:
        sid = session_id or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + secrets.token_hex(3)
        with self.write() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                raise LedgerError(f"session {sid} already exists in {self.db_path}; sessions are immutable")
            db.execute(
                "INSERT INTO sessions (id, name, created) VALUES (?, ?, ?)", (sid, name, created or now())
            )
        return sid

    def sessions(self) -> list[SessionInfo]:
        rows = self._q(
            "SELECT s.id, s.name, s.created, "
            "(SELECT COUNT(*) FROM rounds r WHERE r.session_id = s.id) AS n_rounds, "
            "(SELECT COUNT(*) FROM attempts a JOIN rounds r ON a.round_pk = r.pk WHERE r.session_id = s.id) "
            "AS n_attempts FROM sessions s ORDER BY s.created, s.id"
        )
        return [SessionInfo(r["id"], r["name"], r["created"], r["n_rounds"], r["n_attempts"]) for r in rows]

    def session(self, session_id: str) -> SessionInfo:
        rows = self._session_rows(session_id)
        if rows:
            return rows[0]
        raise NotFound(f"no session {session_id!r} in {self.db_path} (skdbg session list)")

    def _session_rows(self, session_id: str) -> list[SessionInfo]:
        rows = self._q(
            "SELECT s.id, s.name, s.created, "
            "(SELECT COUNT(*) FROM rounds r WHERE r.session_id = s.id) AS n_rounds, "
            "(SELECT COUNT(*) FROM attempts a JOIN rounds r ON a.round_pk = r.pk WHERE r.session_id = s.id) "
            "AS n_attempts FROM sessions s WHERE s.id = ?",
            (session_id,),
        )
        return [SessionInfo(r["id"], r["name"], r["created"], r["n_rounds"], r["n_attempts"]) for r in rows]

    # -------------------------------------------------------------------------------- rounds

    def open_round(
        self,
        session_id: str,
        round_id: str,
        *,
        kind: str = "base",
        derived_from: tuple[str, int, str] | None = None,
        created: str | None = None,
        exist_ok: bool = False,
    ) -> RoundInfo:
        """Open a round (status ``open``). ``derived_from`` = (round, attempt no, proposal sha256).

        ``exist_ok``: a round of the same kind that another process opened meanwhile is taken as is
        (two first attempts of one round racing); the check runs inside the write transaction.
        """
        self.session(session_id)
        ts = created or now()
        d_round, d_attempt, d_prop = derived_from if derived_from else (None, None, None)
        with self.write() as db:
            found = db.execute(
                "SELECT kind FROM rounds WHERE session_id = ? AND round_id = ?", (session_id, round_id)
            ).fetchone()
            if found is not None and exist_ok and found[0] == kind:
                return self.round(session_id, round_id)
            if found is not None:
                raise LedgerError(
                    f"round {round_id} already exists in session {session_id}; round ids are never reused"
                )
            cur = db.execute(
                "INSERT INTO rounds (session_id, round_id, kind, derived_round, derived_attempt, derived_proposal, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, round_id, kind, d_round, d_attempt, d_prop, ts),
            )
            pk = int(cur.lastrowid or 0)
            self.insert_status(db, "round", pk, "open", None, ts)
        return self.round(session_id, round_id)

    def _round_info(self, r: sqlite3.Row) -> RoundInfo:
        derived = (
            None
            if r["derived_round"] is None
            else {
                "round": r["derived_round"],
                "attempt": attempt_key(int(r["derived_attempt"])),
                "proposal_sha256": r["derived_proposal"],
            }
        )
        return RoundInfo(
            int(r["pk"]), r["round_id"], r["kind"], derived, self.status("round", int(r["pk"])), r["created"]
        )

    def rounds(self, session_id: str) -> list[RoundInfo]:
        """Rounds in creation order (read API of the TUI Session screen)."""
        rows = self._q("SELECT * FROM rounds WHERE session_id = ? ORDER BY pk", (session_id,))
        return [self._round_info(r) for r in rows]

    def round(self, session_id: str, round_id: str) -> RoundInfo:
        rows = self._q("SELECT * FROM rounds WHERE session_id = ? AND round_id = ?", (session_id, round_id))
        if not rows and round_id in (aliases := self.aliases(session_id)):
            return self.round(session_id, aliases[round_id])
        if not rows:
            known = ", ".join(r.round_id for r in self.rounds(session_id)) or "none"
            raise NotFound(f"no round {round_id!r} in session {session_id} (rounds: {known})")
        return self._round_info(rows[0])

    def alias_round(self, session_id: str, round_id: str, alias: str, *, created: str | None = None) -> None:
        """Record the parent controller's name for a round (§6.3: the parent may renumber on import).

        The round keeps its skdbg id; the alias is an extra row, so the mapping is never lost."""
        rnd = self.round(session_id, round_id)
        taken = {r.round_id for r in self.rounds(session_id)} | set(self.aliases(session_id))
        if alias in taken:
            raise LedgerError(f"{alias!r} already names a round of session {session_id}")
        with self.write() as db:
            db.execute(
                "INSERT INTO round_aliases (round_pk, alias, created) VALUES (?, ?, ?)",
                (rnd.pk, alias, created or now()),
            )

    def aliases(self, session_id: str) -> dict[str, str]:
        """alias → skdbg round id."""
        rows = self._q(
            "SELECT a.alias, r.round_id FROM round_aliases a JOIN rounds r ON a.round_pk = r.pk "
            "WHERE r.session_id = ? ORDER BY a.created, a.alias",
            (session_id,),
        )
        return {str(r["alias"]): str(r["round_id"]) for r in rows}

    def next_derived_round_id(self, session_id: str, source_round: str, kind: str) -> str:
        """``<round>-X<n>`` / ``-N<n>``: n starts at 1 and is never reused (rows are never deleted)."""
        letter = "X" if kind == "exclusion" else "N"
        rows = self._q(
            "SELECT COUNT(*) AS n FROM rounds WHERE session_id = ? AND derived_round = ? AND kind = ?",
            (session_id, source_round, kind),
        )
        n = int(rows[0]["n"]) + 1
        existing = {r.round_id for r in self.rounds(session_id)}
        while f"{source_round}-{letter}{n}" in existing:
            n += 1
        return f"{source_round}-{letter}{n}"

    # -------------------------------------------------------------------------------- attempts

    def record_attempt(self, session_id: str, round_id: str, new: NewAttempt) -> AttemptInfo:
        """Append the next attempt of ``round_id`` with its artifacts, snapshots and status — one transaction."""
        rnd = self.round(session_id, round_id)
        snaps = self._put_snapshots(new.snapshots)
        ts = new.created or now()
        with self.write() as db:
            row = db.execute(
                "SELECT COALESCE(MAX(no), 0) FROM attempts WHERE round_pk = ?", (rnd.pk,)
            ).fetchone()
            no = int(row[0]) + 1
            cur = db.execute(
                "INSERT INTO attempts (round_pk, no, change, scene_root, pid, storage, n_artifacts, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (rnd.pk, no, new.change, new.scene_root, new.pid, new.storage, len(new.artifacts), ts),
            )
            pk = int(cur.lastrowid or 0)
            if new.storage == "copy":
                db.executemany(
                    "INSERT OR IGNORE INTO blobs (sha256, size) VALUES (?, ?)",
                    [(a.sha256, a.size) for a in new.artifacts if a.sha256 is not None],
                )
            db.executemany(
                "INSERT INTO artifacts (attempt_pk, role, relpath, sha256, size, mtime, pid, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(pk, a.role, a.relpath, a.sha256, a.size, a.mtime, a.pid, a.status) for a in new.artifacts],
            )
            db.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, size) VALUES (?, ?)",
                [(d.sha256, d.size) for d in snaps.values()],
            )
            db.executemany(
                "INSERT INTO snapshots (attempt_pk, name, sha256) VALUES (?, ?, ?)",
                [(pk, name, d.sha256) for name, d in snaps.items()],
            )
            self.insert_status(db, "attempt", pk, new.status, new.status_detail, ts)
            if new.round_status is not None and new.round_status in self.allowed(
                "round", self.status("round", rnd.pk)
            ):
                self.insert_status(
                    db, "round", rnd.pk, new.round_status, f"{attempt_key(no)} {new.status}", ts
                )
        return self._attempt_by_pk(pk)

    def _put_snapshots(self, snapshots: Mapping[str, bytes]) -> dict[str, Digest]:
        """Store the snapshots' bytes together (one flush for all: :meth:`ObjectStore.put_many`), by name."""
        digests = self.objects.put_many(list(snapshots.values()))
        return dict(zip(snapshots, digests, strict=True))

    def _attempt_by_pk(self, pk: int) -> AttemptInfo:
        rows = self._q(self._ATTEMPT_SQL.replace("WHERE r.session_id = ?", "WHERE a.pk = ?"), (pk,))
        return self._attempt_info(rows[0])

    def _attempt_info(self, r: sqlite3.Row) -> AttemptInfo:
        pk = int(r["pk"])
        return AttemptInfo(
            pk,
            r["round_id"],
            int(r["no"]),
            r["change"],
            r["scene_root"],
            r["pid"],
            r["storage"],
            int(r["n_artifacts"]),
            r["status"] or "",
            r["created"],
        )

    _ATTEMPT_SQL = (
        "SELECT a.*, r.round_id, (SELECT s.status FROM status_events s WHERE s.entity = 'attempt' "
        "AND s.entity_pk = a.pk ORDER BY s.seq DESC LIMIT 1) AS status "
        "FROM attempts a JOIN rounds r ON a.round_pk = r.pk WHERE r.session_id = ?"
    )

    def attempts(self, session_id: str, round_id: str | None = None) -> list[AttemptInfo]:
        """Attempts in creation order, optionally of one round."""
        sql, args = self._ATTEMPT_SQL, [session_id]
        if round_id is not None:
            sql += " AND r.round_id = ?"
            args.append(self.aliases(session_id).get(round_id, round_id))
        return [self._attempt_info(r) for r in self._q(sql + " ORDER BY a.pk", args)]

    def attempt(self, session_id: str, round_id: str, no: int | None = None) -> AttemptInfo:
        """Attempt ``no`` of the round (the newest when None)."""
        rows = self.attempts(session_id, round_id)
        if not rows:
            self.round(session_id, round_id)
            raise NotFound(f"round {round_id} of session {session_id} has no attempt yet")
        if no is None:
            return rows[-1]
        for a in rows:
            if a.no == no:
                return a
        raise NotFound(f"round {round_id} has no {attempt_key(no)} (last: {rows[-1].key})")

    def newest_attempt(self, session_id: str) -> AttemptInfo:
        rows = self._q(self._ATTEMPT_SQL + " ORDER BY a.pk DESC LIMIT 1", (session_id,))
        if not rows:
            raise NotFound(f"session {session_id} has no attempt yet")
        return self._attempt_info(rows[0])

    def artifacts(self, attempt_pk: int) -> list[FrozenArtifact]:
        rows = self._q("SELECT * FROM artifacts WHERE attempt_pk = ? ORDER BY pk", (attempt_pk,))
        return [
            FrozenArtifact(r["role"], r["relpath"], r["sha256"], r["size"], r["mtime"], r["pid"], r["status"])
            for r in rows
        ]

    def session_artifact_hashes(self, session_id: str) -> dict[str, tuple[str, int, str, str]]:
        """sha256 → (round, attempt no, relpath, role) of every artifact already frozen in the session."""
        rows = self._q(
            "SELECT f.sha256, f.relpath, f.role, a.no, r.round_id FROM artifacts f "
            "JOIN attempts a ON f.attempt_pk = a.pk JOIN rounds r ON a.round_pk = r.pk "
            "WHERE r.session_id = ? AND f.sha256 IS NOT NULL",
            (session_id,),
        )
        return {r["sha256"]: (r["round_id"], int(r["no"]), r["relpath"], r["role"]) for r in rows}

    def snapshot_names(self, attempt_pk: int) -> list[str]:
        return [
            str(r["name"])
            for r in self._q("SELECT name FROM snapshots WHERE attempt_pk = ? ORDER BY pk", (attempt_pk,))
        ]

    def snapshot(self, attempt_pk: int, name: str) -> bytes | None:
        """A frozen snapshot (analysis JSON, report files), checked against its hash; None if absent."""
        rows = self._q("SELECT sha256 FROM snapshots WHERE attempt_pk = ? AND name = ?", (attempt_pk, name))
        if not rows:
            return None
        return self.objects.read_bytes(str(rows[0]["sha256"]), f"snapshot {name}")

    def snapshot_json(self, attempt_pk: int, name: str) -> Any:
        data = self.snapshot(attempt_pk, name)
        return None if data is None else json.loads(data)

    # -------------------------------------------------------------------------------- proposals

    def add_proposal(
        self,
        session_id: str,
        source: AttemptInfo,
        body: dict[str, Any],
        sha256: str,
        *,
        kind: str,
        status: str,
        round_id: str | None = None,
        created: str | None = None,
    ) -> ProposalInfo:
        """Record a proposal of ``source`` and open the round it defines, in one transaction."""
        ts = created or now()
        rid = round_id or self.next_derived_round_id(session_id, source.round_id, kind)
        with self.write() as db:
            if db.execute(
                "SELECT 1 FROM rounds WHERE session_id = ? AND round_id = ?", (session_id, rid)
            ).fetchone():
                raise LedgerError(
                    f"round {rid} already exists in session {session_id}; round ids are never reused"
                )
            cur = db.execute(
                "INSERT INTO rounds (session_id, round_id, kind, derived_round, derived_attempt, derived_proposal, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, rid, kind, source.round_id, source.no, sha256, ts),
            )
            rpk = int(cur.lastrowid or 0)
            self.insert_status(db, "round", rpk, "open", None, ts)
            cur = db.execute(
                "INSERT INTO proposals (attempt_pk, sha256, body, round_pk, created) VALUES (?, ?, ?, ?, ?)",
                (source.pk, sha256, json.dumps(body, sort_keys=True, ensure_ascii=False), rpk, ts),
            )
            self.insert_status(db, "proposal", int(cur.lastrowid or 0), status, None, ts)
        return self.proposal(session_id, rid)

    def proposals(self, session_id: str) -> list[ProposalInfo]:
        rows = self._q(
            "SELECT p.*, r.round_id AS new_round, sr.round_id AS src_round, a.no AS src_no FROM proposals p "
            "JOIN rounds r ON p.round_pk = r.pk JOIN attempts a ON p.attempt_pk = a.pk "
            "JOIN rounds sr ON a.round_pk = sr.pk WHERE r.session_id = ? ORDER BY p.pk",
            (session_id,),
        )
        return [
            ProposalInfo(
                int(r["pk"]),
                r["sha256"],
                json.loads(r["body"]),
                r["src_round"],
                int(r["src_no"]),
                r["new_round"],
                self.status("proposal", int(r["pk"])),
                r["created"],
            )
            for r in rows
        ]

    def proposal(self, session_id: str, round_id: str) -> ProposalInfo:
        """The proposal that opened ``round_id``."""
        for p in self.proposals(session_id):
            if p.round_id == round_id:
                return p
        self.round(session_id, round_id)
        raise NotFound(f"round {round_id} was not opened by a proposal (a base round)")

    # -------------------------------------------------------------------------------- gates, notes

    def record_gates(
        self,
        attempt: AttemptInfo,
        gates: Sequence[tuple[str, str, str]],
        *,
        attempt_status: str | None,
        round_status: tuple[int, str] | None,
        proposal_status: tuple[int, str] | None,
        detail: str | None = None,
        snapshots: dict[str, bytes] | None = None,
        created: str | None = None,
    ) -> None:
        """V1–V5 results of an attempt plus the status moves they imply, in one transaction."""
        ts = created or now()
        snaps = self._put_snapshots(snapshots or {})
        if self.gates(attempt.pk):
            raise LedgerError(
                f"{attempt.round_id}/{attempt.key} already has gate results; a verified attempt is never "
                "re-verified — launch the next attempt instead"
            )
        with self.write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, size) VALUES (?, ?)",
                [(d.sha256, d.size) for d in snaps.values()],
            )
            db.executemany(
                "INSERT INTO snapshots (attempt_pk, name, sha256) VALUES (?, ?, ?)",
                [(attempt.pk, name, d.sha256) for name, d in snaps.items()],
            )
            db.executemany(
                "INSERT INTO gate_results (attempt_pk, gate, result, detail, created) VALUES (?, ?, ?, ?, ?)",
                [(attempt.pk, g, r, d, ts) for g, r, d in gates],
            )
            moves: list[tuple[str, int, str | None]] = [("attempt", attempt.pk, attempt_status)]
            if round_status is not None:
                moves.append(("round", round_status[0], round_status[1]))
            if proposal_status is not None:
                moves.append(("proposal", proposal_status[0], proposal_status[1]))
            for entity, pk, status in moves:
                if status is not None and self.status(entity, pk) != status:
                    self.insert_status(db, entity, pk, status, detail, ts)

    def gates(self, attempt_pk: int) -> list[dict[str, str]]:
        rows = self._q(
            "SELECT gate, result, detail, created FROM gate_results WHERE attempt_pk = ? ORDER BY gate",
            (attempt_pk,),
        )
        return [
            {"gate": r["gate"], "result": r["result"], "detail": r["detail"], "created": r["created"]}
            for r in rows
        ]

    def add_note(
        self,
        session_id: str,
        text: str,
        *,
        round_id: str | None = None,
        attempt_no: int | None = None,
        created: str | None = None,
    ) -> None:
        self.session(session_id)
        if round_id is not None:
            if attempt_no is not None:
                self.attempt(session_id, round_id, attempt_no)
            else:
                self.round(session_id, round_id)
        with self.write() as db:
            db.execute(
                "INSERT INTO notes (session_id, round_id, attempt_no, text, created) VALUES (?, ?, ?, ?, ?)",
                (session_id, round_id, attempt_no, text, created or now()),
            )

    def notes(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._q("SELECT * FROM notes WHERE session_id = ? ORDER BY pk", (session_id,))
        return [
            {
                "round_id": r["round_id"],
                "attempt_no": r["attempt_no"],
                "text": r["text"],
                "created": r["created"],
            }
            for r in rows
        ]

    def integrity_check(self) -> str:
        return str(self._q("PRAGMA integrity_check")[0][0])


__all__ = [
    "AttemptInfo",
    "FrozenArtifact",
    "Ledger",
    "NewAttempt",
    "ProposalInfo",
    "RoundInfo",
    "SessionInfo",
    "attempt_key",
    "now",
    "translate",
]
