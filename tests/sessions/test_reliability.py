"""Crash and concurrency: kill -9 a writer mid-attempt 100 times; a reader never sees partial state."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skdbg.sessions.store import FrozenArtifact, Ledger, NewAttempt

N_ARTIFACTS = 20
#: a writer that appends attempts of N_ARTIFACTS rows forever, printing each committed attempt number
WRITER = f"""
import sys, time
from skdbg.sessions.store import FrozenArtifact, Ledger, NewAttempt
home, sid, mounts = sys.argv[1], sys.argv[2], sys.argv[3]
ledger = Ledger(home, mounts=mounts)
print("ready", flush=True)
while True:
    t = time.monotonic()
    tag = time.monotonic_ns()
    arts = [FrozenArtifact("plog", f"log/{{tag}}-{{i}}.log", f"{{tag + i:064x}}"[-64:], i, None, "1", "present")
            for i in range({N_ARTIFACTS})]
    a = ledger.record_attempt(sid, "R", NewAttempt("c", None, None, "reference", arts, "failed"))
    print(a.no, round(time.monotonic() - t, 4), flush=True)
    time.sleep(0.002)  # a CLI writer is not a tight loop: leave the rollback-journal reader a window
"""


def _start(home: Path, sid: str, mounts: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home), sid, mounts], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _check(home: Path, sid: str, committed: set[int]) -> int:
    with Ledger(home) as ledger:
        assert ledger.integrity_check() == "ok"
        with ledger.read() as db:
            rows = db.execute(
                "SELECT a.no, a.n_artifacts, (SELECT COUNT(*) FROM artifacts f WHERE f.attempt_pk = a.pk), "
                "(SELECT COUNT(*) FROM status_events s WHERE s.entity = 'attempt' AND s.entity_pk = a.pk) "
                "FROM attempts a"
            ).fetchall()
        nos = [r[0] for r in rows]
        assert nos == list(range(1, len(nos) + 1))  # no gap, nothing renumbered
        for no, n, count, statuses in rows:
            assert (n, count, statuses) == (N_ARTIFACTS, N_ARTIFACTS, 1), f"half-written attempt {no}"
        assert committed <= set(nos)  # every attempt reported committed is there
        return len(nos)


def _forked_writer(home: Path, sid: str) -> tuple[int, int]:
    """A forked child appending attempts until killed (fork: no interpreter start-up per kill).

    It opens its own connection after the fork and reports each committed attempt number on a pipe.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            ledger = Ledger(home)
            os.write(w, b"ready\n")
            while True:
                tag = time.monotonic_ns()
                arts = [
                    FrozenArtifact(
                        "plog", f"log/{tag}-{i}.log", f"{tag + i:064x}"[-64:], i, None, "1", "present"
                    )
                    for i in range(N_ARTIFACTS)
                ]
                a = ledger.record_attempt(sid, "R", NewAttempt("c", None, None, "reference", arts, "failed"))
                os.write(w, f"{a.no}\n".encode())
        finally:
            os._exit(1)
    os.close(w)
    return pid, r


def _drain(fd: int, head: bytes = b"") -> list[str]:
    chunks = [head]
    while data := os.read(fd, 65536):
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode().split()


def _first_commit(fd: int) -> bytes:
    """Read the writer's pipe until it reported its first committed attempt (or died)."""
    got = b""
    while got.count(b"\n") < 2:
        data = os.read(fd, 4096)
        if not data:
            break
        got += data
    return got


def test_kill9_writer_100_times(tmp_path: Path) -> None:
    rng = random.Random(5)
    home = tmp_path / "home"
    with Ledger(home) as ledger:
        sid = ledger.new_session()
        ledger.open_round(sid, "R")
    committed: set[int] = set()
    for _ in range(100):
        pid, fd = _forked_writer(home, sid)
        head = _first_commit(fd)  # the kill lands after one commit, however loaded the machine is
        time.sleep(rng.uniform(0.0, 0.02))  # then before, during or between later transactions
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        committed |= {int(x) for x in _drain(fd, head) if x.isdigit()}
    assert _check(home, sid, committed) >= len(committed) > 100


@pytest.mark.parametrize("fs", ["ext4", "nfs4"])
def test_reader_sees_whole_attempts_while_writer_runs(tmp_path: Path, fs: str) -> None:
    """WAL (local disk) and rollback journal (network fs): a reader sees whole attempts, the writer
    keeps committing (busy timeout instead of 'database is locked')."""
    home = tmp_path / "home"
    mounts = f"dev {tmp_path} {fs} rw 0 0\n"
    with Ledger(home, mounts=mounts) as ledger:
        assert ledger.journal_mode == ("WAL" if fs == "ext4" else "DELETE")
        sid = ledger.new_session()
        ledger.open_round(sid, "R")
    proc = _start(home, sid, mounts)
    reads = 0
    try:
        with Ledger(home, read_only=True, mounts=mounts) as reader:
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and (reads < 20 or time.monotonic() < deadline - 2.0):
                with reader.read() as db:
                    n_attempts = db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
                    n_artifacts = db.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]
                    n_status = db.execute(
                        "SELECT COUNT(*) FROM status_events WHERE entity='attempt'"
                    ).fetchone()[0]
                assert n_artifacts == N_ARTIFACTS * n_attempts and n_status == n_attempts
                reads += 1
    finally:
        proc.kill()
        out, _ = proc.communicate()
    latencies = [float(line.split()[1]) for line in out.splitlines() if line.strip()]
    # both made progress; with a rollback journal the reader waits its turn (busy timeout, no error)
    assert reads >= (20 if fs == "ext4" else 3) and len(latencies) > 20
    assert max(latencies) < 1.0  # the reader never held the writer back for long
