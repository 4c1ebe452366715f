"""The ledger store: schema migrations, append-only and forward-only rules, failure modes (triage.md §6.3)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from skdbg.sessions.errors import ForwardOnlyError, LedgerError, LedgerUnavailable
from skdbg.sessions.schema import MIGRATIONS, SCHEMA_VERSION
from skdbg.sessions.store import FrozenArtifact, Ledger, NewAttempt


def _attempt(n: int = 3, status: str = "failed", tag: str = "a") -> NewAttempt:
    arts = [
        FrozenArtifact("plog", f"log/{tag}{i}.log", f"{i:064x}", 10, None, "1", "present") for i in range(n)
    ]
    return NewAttempt("the candidate as launched", "/scene", None, "reference", arts, status)


def _seeded(tmp_path: Path) -> tuple[Ledger, str]:
    ledger = Ledger(tmp_path / "home")
    sid = ledger.new_session("t")
    ledger.open_round(sid, "R-BASE")
    ledger.record_attempt(sid, "R-BASE", _attempt())
    return ledger, sid


def test_fresh_ledger_is_at_latest_schema_and_wal(tmp_path: Path) -> None:
    with Ledger(tmp_path / "home", mounts="/dev/sda1 / ext4 rw 0 0\n") as ledger:
        assert ledger.schema_version == SCHEMA_VERSION == 2
        assert ledger.journal_mode == "WAL"
        assert ledger.integrity_check() == "ok"


def test_network_fs_uses_rollback_journal_and_warns(tmp_path: Path) -> None:
    mounts = f"srv:/home {tmp_path} nfs4 rw 0 0\n/dev/sda1 / ext4 rw 0 0\n"
    with Ledger(tmp_path / "home", mounts=mounts) as ledger:
        assert ledger.journal_mode == "DELETE"
        assert "nfs4" in ledger.warnings[0]
        sid = ledger.new_session()
        assert ledger.session(sid).id == sid


def test_migration_from_v1_keeps_data(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    version, step = MIGRATIONS[0]
    db.execute("BEGIN")
    step(db)
    db.execute(f"PRAGMA user_version = {version}")
    db.execute("INSERT INTO sessions VALUES ('old', 'kept', '2026-01-01')")
    db.execute("COMMIT")
    db.close()
    with Ledger(home) as ledger:
        assert ledger.schema_version == 2
        assert [s.id for s in ledger.sessions()] == ["old"]
        ledger.add_note("old", "notes table arrived with v2")
        assert ledger.notes("old")[0]["text"] == "notes table arrived with v2"


def test_rows_are_never_rewritten_or_deleted(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    db = ledger.connection
    for sql in (
        "UPDATE attempts SET change = 'rewritten'",
        "DELETE FROM attempts",
        "UPDATE status_events SET status = 'passed'",
        "DELETE FROM status_events",
        "UPDATE artifacts SET sha256 = NULL",
        "DELETE FROM transitions",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(sql)
    a = ledger.attempt(sid, "R-BASE")
    assert a.status == "failed" and a.change == "the candidate as launched"


def test_failed_attempt_and_round_cannot_move_back(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    a = ledger.attempt(sid, "R-BASE")
    with pytest.raises(ForwardOnlyError, match="failed -> passed refused"):
        ledger.set_status("attempt", a.pk, "passed")
    rnd = ledger.round(sid, "R-BASE")
    ledger.set_status("round", rnd.pk, "failed")
    for status in ("open", "passed_gates(V1..V3)", "accepted"):
        with pytest.raises(ForwardOnlyError):
            ledger.set_status("round", rnd.pk, status)
    # the same rule holds for raw SQL: the trigger is the one place it is enforced
    with pytest.raises(sqlite3.IntegrityError, match="forward-only"):
        ledger.connection.execute(
            "INSERT INTO status_events (entity, entity_pk, status, created) VALUES ('round', ?, 'open', 'x')",
            (rnd.pk,),
        )
    assert ledger.round(sid, "R-BASE").status == "failed"


def test_passed_gates_only_grow(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    rnd = ledger.open_round(sid, "R-BASE-X1", kind="exclusion", derived_from=("R-BASE", 1, "0" * 64))
    ledger.set_status("round", rnd.pk, "passed_gates(V1..V3)")
    with pytest.raises(ForwardOnlyError):
        ledger.set_status("round", rnd.pk, "passed_gates(V1..V2)")
    ledger.set_status("round", rnd.pk, "passed_gates(V1..V5)")
    ledger.set_status("round", rnd.pk, "accepted")
    assert [h["status"] for h in ledger.status_history("round", rnd.pk)] == [
        "open",
        "passed_gates(V1..V3)",
        "passed_gates(V1..V5)",
        "accepted",
    ]


def test_attempt_numbers_strictly_increase(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    ledger.record_attempt(sid, "R-BASE", _attempt(tag="b"))
    assert [a.key for a in ledger.attempts(sid, "R-BASE")] == ["attempt-001", "attempt-002"]
    rpk = ledger.round(sid, "R-BASE").pk
    with pytest.raises(sqlite3.IntegrityError, match="increase by one"):
        ledger.connection.execute(
            "INSERT INTO attempts (round_pk, no, change, storage, n_artifacts, created) "
            "VALUES (?, 5, 'x', 'none', 0, 'x')",
            (rpk,),
        )


def test_disk_full_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    pages = ledger.connection.execute("PRAGMA page_count").fetchone()[0]
    ledger.connection.execute(f"PRAGMA max_page_count = {pages}")
    big = _attempt(n=2000, tag="big")
    with pytest.raises(LedgerUnavailable, match="disk full"):
        ledger.record_attempt(sid, "R-BASE", big)
    ledger.close()
    with Ledger(tmp_path / "home") as again:
        assert [a.key for a in again.attempts(sid)] == ["attempt-001"]
        assert len(again.artifacts(again.attempt(sid, "R-BASE").pk)) == 3
        assert again.integrity_check() == "ok"


def test_disk_full_while_storing_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger, sid = _seeded(tmp_path)

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(LedgerUnavailable, match="No space left"):
        ledger.record_attempt(sid, "R-BASE", _with_snapshot())
    assert len(ledger.attempts(sid)) == 1
    assert not list((tmp_path / "home" / "objects").rglob(".tmp-*"))


def _with_snapshot() -> NewAttempt:
    new = _attempt(tag="d")
    new.snapshots = {"analysis.json": b"{}"}
    return new


def test_read_only_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o555)
    real_access = os.access
    # root ignores mode bits: emulate what an unprivileged user (or a read-only mount) sees
    monkeypatch.setattr(os, "access", lambda p, m: False if Path(p) == home else real_access(p, m))
    with pytest.raises(LedgerUnavailable, match="read-only"):
        Ledger(home)
    assert not (home / "ledger.db").exists()


def test_read_only_connection_refuses_writes(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    ledger.close()
    with Ledger(tmp_path / "home", read_only=True) as ro:
        assert ro.attempt(sid, "R-BASE").status == "failed"
        with pytest.raises(LedgerUnavailable, match="read-only"):
            ro.new_session()


def test_corrupted_file_is_named_and_left_untouched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    garbage = b"this is not sqlite" * 100
    (home / "ledger.db").write_bytes(garbage)
    with pytest.raises(LedgerUnavailable, match=r"ledger\.db: the ledger file is corrupted"):
        Ledger(home)
    assert (home / "ledger.db").read_bytes() == garbage


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    ledger.connection.execute("PRAGMA user_version = 99")
    ledger.close()
    before = (tmp_path / "home" / "ledger.db").read_bytes()
    with pytest.raises(LedgerUnavailable, match="schema version 99 is newer"):
        Ledger(tmp_path / "home")
    assert (tmp_path / "home" / "ledger.db").read_bytes() == before


def test_round_alias_keeps_the_mapping(tmp_path: Path) -> None:
    ledger, sid = _seeded(tmp_path)
    ledger.alias_round(sid, "R-BASE", "PARENT-7")
    assert ledger.round(sid, "PARENT-7").round_id == "R-BASE"
    assert [a.key for a in ledger.attempts(sid, "PARENT-7")] == ["attempt-001"]
    with pytest.raises(LedgerError, match="already names a round"):
        ledger.alias_round(sid, "R-BASE", "PARENT-7")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        ledger.connection.execute("UPDATE round_aliases SET alias = 'other'")
