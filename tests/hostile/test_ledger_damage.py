"""Issue 14 class 12: the ledger under contention and damage.

Each case builds a real ledger in a temp folder, damages it the way a crash, a race or a read-only
mount does, and checks the command-line answer: exit 0 where the work can be done, otherwise a
one-line refusal naming the file and how to recover — and never a write into a damaged database.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.sessions.errors import LedgerUnavailable
from skdbg.sessions.store import Ledger


def _cli(home: Path, *args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["session", *args, "--session-dir", str(home)])
    return res.exit_code, res.stdout, res.stderr


def _new(home: Path) -> str:
    code, out, err = _cli(home, "new", "--name", "x", "--format", "json")
    assert code == 0, err
    return str(json.loads(out)["id"])


def test_concurrent_first_rounds_both_land(tmp_path: Path) -> None:
    """Two processes open the same new round at once: both attempts are recorded (1 and 2)."""
    home = tmp_path / "home"
    with Ledger(home) as led:
        sid = led.new_session()
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def first_attempt() -> None:
        try:
            with Ledger(home) as led:
                barrier.wait()
                led.open_round(sid, "R1", exist_ok=True)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=first_attempt) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Ledger(home) as led:
        assert [r.round_id for r in led.rounds(sid)] == ["R1"]


def test_read_only_ledger_folder_still_lists_and_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger folder nobody may write to (simulated: CI runs as root, which ignores modes)."""
    home = tmp_path / "home"
    sid = _new(home)
    real_access = os.access

    def no_write(path: object, mode: int, **kw: object) -> bool:
        return False if mode & os.W_OK else real_access(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr("skdbg.sessions.store.os.access", no_write)
    for args in (("list",), ("show", sid), ("check", sid)):
        code, _, err = _cli(home, *args)
        assert code == 0, (args, err)
    code, _, err = _cli(home, "new", "--name", "y")
    assert code == 3 and "read-only" in err


def test_read_only_open_of_a_write_protected_ledger(tmp_path: Path) -> None:
    """What list/show use: a read-only connection works where no -shm index can be created."""
    home = tmp_path / "home"
    sid = _new(home)
    with Ledger(home, read_only=True) as led:
        assert [s.id for s in led.sessions()] == [sid]


def _flip_middle(db: Path) -> None:
    data = bytearray(db.read_bytes())
    mid = len(data) // 2
    for i in range(mid, min(len(data), mid + 512)):
        data[i] ^= 0x5A
    db.write_bytes(bytes(data))


def test_flipped_bytes_are_refused_before_any_read_or_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for _ in range(30):
        _new(home)  # enough pages that the middle of the file is b-tree content
    with sqlite3.connect(home / "ledger.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = (home / "ledger.db").read_bytes()
    _flip_middle(home / "ledger.db")
    damaged = (home / "ledger.db").read_bytes()
    assert damaged != before
    for args in (("list",), ("new", "--name", "z")):
        code, _, err = _cli(home, *args)
        assert code == 3, (args, err)
        assert "corrupted" in err and "ledger.db" in err and len(err.strip().splitlines()) == 1
    assert (home / "ledger.db").read_bytes() == damaged  # nothing written into it


def test_zero_byte_ledger_is_refused_not_recreated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _new(home)
    (home / "ledger.db").write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        (home / f"ledger.db{suffix}").unlink(missing_ok=True)
    os.utime(home / "ledger.db", (0, 0))  # not a file some process is creating right now
    code, _, err = _cli(home, "list")
    assert code == 3 and "empty (0 bytes)" in err and "restore" in err
    assert (home / "ledger.db").stat().st_size == 0
    with pytest.raises(LedgerUnavailable):
        Ledger(home)
