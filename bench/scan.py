"""Benchmark: ``skdbg scan`` over a synthetic 1,024-rank job — local pool at 1, 2, 4 workers, and Dask.

Run as ``python bench/scan.py [--ranks 1024] [--mb 4] [--full] [--samples 3] [--keep]``. ``--full`` is the
issue's size: 1,024 ranks × 50 MB plogs. Three plogs are generated with ``bench/plog_scan.py``'s generator
(realistic RUNTIME/GE/HCCL noise): one with an SK incident (rank 17, the first failing rank), one ending in
HCCL/runtime follow-up errors (the followers) and one of noise only (every 8th rank, clean). Each rank
folder ``rank<N>/debug/plog/`` gets a **hard link** to its class's file (1,024 × 50 MB = 51 GB would not fit
the disk): the logical bytes scanned are ranks × size, while the page cache holds three files, so every
sample is the warm-cache case — per-rank CPU cost without I/O. The files are read once before timing.

Timed, whole process, ``--samples`` times each (min and median): ``skdbg scan JOB --format json`` with
``--workers 1``, ``2`` and ``4``, and with ``--dask ADDRESS`` on a ``LocalCluster`` of 2 worker processes
(1 thread each) started once before its samples (its start-up is printed separately: an existing cluster
is the intended use). The scaling ratio is median(1 worker) / median(2 workers), target ≥ 1.7 on 2 cores;
the Dask overhead is median(dask) / median(2 workers). For reference the in-process ``scan_plog`` of one
file gives the single-core throughput the per-rank cost should approach. Every run's verdict is checked:
rank 17 first, the followers and clean ranks counted. Exits non-zero on a wrong verdict or a ratio below 1.7.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchenv import NOTE, prime, user_env  # noqa: E402
from plog_scan import PID, generate  # noqa: E402

from skdbg.parsers.plog import scan_plog  # noqa: E402
from skdbg.parsers.plog_line import format_plog_ts  # noqa: E402

LEADER = 17
STAMP = "20260610140321518"
GROUP = "10.0.0.1%eth0_60000_0_1781097610000000"


def follow_ups(t: datetime) -> list[str]:
    """HCCL's timeout lines, the EI0002 text and the runtime's task abort, as real logs print them."""
    ts = format_plog_ts
    return [
        f"[ERROR] HCCL({PID},python3):{ts(t)} [task_exception_handler.cc:908] [{PID}][TaskExecStage][Timeout]"
        f"[Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_{GROUP}].",
        f"EI0002: [PID: {PID}] {ts(t)} The wait execution of the Notify register times out. Reason: The Notify "
        f"register has not received the Notify record from remote rank [{LEADER}].",
        f"[ERROR] RUNTIME({PID},python3):{ts(t + timedelta(milliseconds=2))} [stream.cc:1509]{PID} "
        f"rtStreamSynchronize:ErrCode=107022, desc=[task abort], InnerCode=0x7150050",
    ]


def build(tmp: Path, ranks: int, size: int) -> tuple[Path, int, int]:
    """The job folder; returns (job, followers, clean)."""
    base = tmp / "base"
    base.mkdir()
    t0 = time.perf_counter()
    generate(base / "leader.log", size, 1)
    generate(base / "follower.log", size, 0)
    with (base / "follower.log").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(follow_ups(datetime(2026, 6, 10, 15, 0, 0))) + "\n")
    generate(base / "clean.log", size, 0)
    print(f"generated 3 plogs of {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s")
    job = tmp / "job"
    followers = clean = 0
    for r in range(ranks):
        kind = "leader" if r == LEADER else ("clean" if r % 8 == 0 else "follower")
        followers += kind == "follower"
        clean += kind == "clean"
        d = job / f"rank{r}" / "debug" / "plog"
        d.mkdir(parents=True)
        os.link(base / f"{kind}.log", d / f"plog-{PID}_{STAMP}.log")
    for name in ("leader", "follower", "clean"):
        with (base / f"{name}.log").open("rb", buffering=0) as fh:
            while fh.read(16 << 20):
                pass
    print(
        f"{ranks} rank folders, hard links to 3 files ({ranks * size / 1e9:.1f} GB logical, warm page cache)"
    )
    return job, followers, clean


def run(argv: list[str], followers: int, clean: int) -> float:
    t = time.perf_counter()
    proc = subprocess.run(argv, env=user_env(), capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"scan failed ({proc.returncode}): {proc.stderr[:400]}")
    doc = json.loads(proc.stdout)
    c = doc["counts"]
    if doc["first_failing"]["rank"] != LEADER or c["follower"] != followers or c["clean"] != clean:
        raise SystemExit(f"wrong verdict: first {doc['first_failing']['rank']}, counts {c}")
    return dt


def report(name: str, times: list[float], logical: float) -> float:
    med = statistics.median(times)
    print(f"  {name:<22} min {min(times):6.2f} s  median {med:6.2f} s  {logical / med / 1e6:7.0f} MB/s")
    return med


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--mb", type=float, default=4.0, help="plog size per rank (MB); --full sets 50")
    ap.add_argument("--full", action="store_true", help="the issue's size: 50 MB per rank")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster runs")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    size = int((50.0 if args.full else args.mb) * 1e6)
    samples = max(3, args.samples)
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-scanbench-"))
    try:
        job, followers, clean = build(tmp, args.ranks, size)
        logical = args.ranks * size
        n = sum(1 for _ in scan_plog(tmp / "base" / "leader.log", PID))  # buffers and anchor tables made
        t = time.perf_counter()
        n = sum(1 for _ in scan_plog(tmp / "base" / "leader.log", PID))
        one = time.perf_counter() - t
        print(
            f"in-process scan_plog of one {size / 1e6:.0f} MB plog: {one:.3f} s ({size / one / 1e6:.0f} MB/s, {n} lines)"
        )
        skdbg = [str(Path(sys.executable).with_name("skdbg")), "scan", str(job), "--format", "json"]
        prime([*skdbg, "--workers", "1"])
        print(NOTE)
        meds: dict[str, float] = {}
        for w in (1, 2, 4):
            times = [run([*skdbg, "--workers", str(w)], followers, clean) for _ in range(samples)]
            meds[f"local {w}"] = report(f"local pool, {w} worker(s)", times, logical)
        if not args.no_dask:
            try:
                from distributed import LocalCluster
            except ImportError:
                print("  dask: skipped (pip install 'skdbg[dask]')")
            else:
                t = time.perf_counter()
                with LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
                ) as c:
                    print(
                        f"  LocalCluster(2 workers) start-up: {time.perf_counter() - t:.2f} s (not in the samples)"
                    )
                    times = [
                        run([*skdbg, "--dask", c.scheduler_address], followers, clean) for _ in range(samples)
                    ]
                    meds["dask"] = report("dask LocalCluster, 2", times, logical)
        ratio = meds["local 1"] / meds["local 2"]
        print(
            f"scaling 1 -> 2 workers: {ratio:.2f}x (target >= 1.7 on 2 cores); 1 -> 4: {meds['local 1'] / meds['local 4']:.2f}x"
        )
        if "dask" in meds:
            print(
                f"dask LocalCluster(2) vs local pool(2): {meds['dask'] / meds['local 2']:.2f}x the wall time"
            )
        per_rank = meds["local 1"] / args.ranks
        print(
            f"per rank at 1 worker: {per_rank * 1e3:.1f} ms ({size / per_rank / 1e6:.0f} MB/s vs scan_plog {size / one / 1e6:.0f} MB/s)"
        )
        ok = ratio >= 1.7
        print("RESULT:", "PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
