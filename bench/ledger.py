"""Ledger benchmark: 10,000 attempts x 20 artifacts (hash + insert), then list and open the newest attempt.

Run: ``python bench/ledger.py [--attempts 10000] [--artifacts 20] [--storage reference|copy] [--keep]``

Each attempt's artifacts are real files in a temp dir: half change every attempt (plog-like, 2-6 KiB),
half are shared by all attempts (kernel images, 16 KiB), so ``copy`` storage shows the dedupe. Every
file is hashed by the same streaming code the ledger freezes scenes with (``reference``: hash in
place; ``copy``: hash while copying into the content-addressed store), and each attempt is appended
in one transaction (``Ledger.record_attempt``). Then a fresh process-like open: a new ``Ledger`` on
the file, list every attempt of the session, and open the newest one (its artifacts and status).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from skdbg.sessions.blobs import hash_file
from skdbg.sessions.store import FrozenArtifact, Ledger, NewAttempt

ROUNDS = 10


def _write_scene(root: Path, n: int, attempt: int) -> list[tuple[str, Path]]:
    """Rewrite the varying half of the scene for this attempt; the shared half exists once."""
    files: list[tuple[str, Path]] = []
    for i in range(n):
        if i % 2 == 0:
            p = root / f"log/plog/plog-{attempt}_{i}.log"
            if not p.parent.is_dir():
                p.parent.mkdir(parents=True)
            body = f"[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:{i:02d} attempt {attempt} line {i}\n"
            p.write_text(body * (20 + (attempt + i) % 60))
            files.append(("plog", p))
        else:
            p = root / f"sk_meta/bin_files/kernel_{i}.o"
            if not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(bytes([i]) * 16384)
            files.append(("bin_file", p))
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=10_000)
    ap.add_argument("--artifacts", type=int, default=20)
    ap.add_argument("--storage", choices=("reference", "copy"), default="reference")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir and print it")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-bench-ledger-"))
    try:
        scene = tmp / "scene"
        home = tmp / "home"
        with Ledger(home) as ledger:
            sid = ledger.new_session("bench")
            for r in range(ROUNDS):
                ledger.open_round(sid, f"R{r}")
            elapsed = 0.0  # hash + insert only (writing the synthetic files is not timed)
            hashed = 0
            for k in range(args.attempts):
                files = _write_scene(scene, args.artifacts, k)
                t0 = time.perf_counter()
                arts = []
                # copies are stored together, as a freeze stores a scene's (one flush for all)
                stored = ledger.objects.put_files([p for _, p in files]) if args.storage == "copy" else None
                for i, (role, p) in enumerate(files):
                    st = p.stat()
                    d = stored[i] if stored is not None else hash_file(p)
                    assert not isinstance(d, FileNotFoundError), d  # the bench wrote every file just now
                    hashed += d.size
                    mtime = datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat(timespec="seconds")
                    arts.append(
                        FrozenArtifact(
                            role, p.relative_to(scene).as_posix(), d.sha256, d.size, mtime, "48213", "present"
                        )
                    )
                ledger.record_attempt(
                    sid,
                    f"R{k % ROUNDS}",
                    NewAttempt(
                        "bench", str(scene), None, args.storage, arts, "failed" if k % 3 else "passed"
                    ),
                )
                elapsed += time.perf_counter() - t0
                for role, p in files:
                    if role == "plog":
                        p.unlink()
        t1 = time.perf_counter()
        with Ledger(home, read_only=True) as ledger:
            t_open = time.perf_counter() - t1
            t2 = time.perf_counter()
            listed = ledger.attempts(sid)
            t_list = time.perf_counter() - t2
            t3 = time.perf_counter()
            newest = ledger.newest_attempt(sid)
            arts = ledger.artifacts(newest.pk)
            t_newest = time.perf_counter() - t3
        db_mb = (home / "ledger.db").stat().st_size / 1e6
        print(
            f"{args.attempts} attempts x {args.artifacts} artifacts ({args.storage}): {elapsed:.2f} s, "
            f"{args.attempts / elapsed:,.0f} attempts/s, {args.attempts * args.artifacts / elapsed:,.0f} artifacts/s, "
            f"{hashed / 1e6 / elapsed:.0f} MB/s hashed; ledger.db {db_mb:.1f} MB"
        )
        print(
            f"open ledger {t_open * 1e3:.1f} ms; list {len(listed)} attempts {t_list * 1e3:.1f} ms; "
            f"open newest {newest.round_id}/{newest.key} ({len(arts)} artifacts, {newest.status}) {t_newest * 1e3:.2f} ms"
        )
        if len(listed) != args.attempts or len(arts) != args.artifacts:
            print("error: ledger content does not match what was written", file=sys.stderr)
            return 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
