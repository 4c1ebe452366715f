"""Benchmark: skdbg's fast plog fault scan vs ``grep -F -c`` (artifacts.md §1.1, §1.8).

Run as ``python bench/plog_scan.py [--size-gib 1] [--keep]``. Writes a plog of realistic runtime /
GE / HCCL / profiling noise (``skdbg.scenebuilder.plog.noise_lines``) with a few SK incidents (the
§1.7 handler messages rendered with ``sk_plog_line`` plus the §1.5 runtime lines) into a temp dir.
Generation is fast: a pool of pre-rendered noise blocks is written repeatedly. The file is read once
to warm the page cache, then ``scan_plog`` (counting yielded marker lines) and
``grep -F -c -e M1 -e M2 …`` with the same markers are timed on it. Both counts must agree.
Target: skdbg ≥ 0.5× grep's throughput; exits non-zero on a count mismatch or a lower ratio.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.parsers.plog import FAULT_MARKERS, scan_plog
from skdbg.scenebuilder import plog as sb
from skdbg.scenebuilder.lines import sk_plog_line

PID = 48213
# §1.7 handler messages (a subset, in print order).
SK_MESSAGES = [
    (
        "IsSuperKernelException",
        "Exception is from superkernel function 'sk_entry_mix11_op_trace', op_trace=true, "
        "proceeding with handling",
    ),
    ("PrintDfxInfo", "=== SkDfxInfo (offset=6976, nodeCnt=3) ==="),
    (
        "PrintDfxInfo",
        "  [node 1] binHdl=0xaaaaf3d00a10, funcHdlOri=0xaaaaf3d01c80, aicSize=0x0, aivSize=0x1a2c, "
        "numBlocks=48, cubeNum=0, vecNum=48",
    ),
    ("PrintDfxInfo", "    Origin function name: add_custom"),
    ("PrintDfxInfo", "    entryAiv[2]=0x124080c07400"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] ModelIdIdx=0, ModelId=48_1, SkScopeId=3"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] CoreType: AIV"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] StartPC: 0x124080a03c00"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] CurrentPC: 0x124080c07e58"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] Found in node[1], entry[2]"),
    ("PrintFuncSymbolInfo", "[Core 30] Origin function name: add_custom"),
    ("PrintNodeDevArgs", "[Core 30] node[1] devArgs: 0x12c100412000"),
    ("IdentifyErrorNodeByPC", "errorNodeIdx_ = 1"),
    ("ParseAndPrintCondInfo", "[Core 30] AIV COND register value: 0x30102 (opState=2, opIndex=1)"),
    ("PrintModelIdIndexMap", "  [0] modelId=48_1"),
]


def incident(ts: datetime) -> list[str]:
    step = timedelta(microseconds=11)
    sk = [sk_plog_line("ERROR", PID, "python3", ts + i * step, f, m) for i, (f, m) in enumerate(SK_MESSAGES)]
    return sb.runtime_incident_lines(ts, pid=PID) + sk


def generate(path: Path, size: int, n_incidents: int) -> int:
    """Write ``size`` bytes of noise with ``n_incidents`` evenly spread incidents; return the marker lines."""
    rng = random.Random(20260610)
    pool = ["\n".join(sb.noise_lines(rng, 4000, pid=PID)).encode() + b"\n" for _ in range(8)]
    block = max(len(b) for b in pool)
    every = max(1, size // block // max(1, n_incidents))
    expected = 0
    written = 0
    k = 0
    done = 0
    with path.open("wb", buffering=16 << 20) as fh:
        while written < size:
            data = pool[k % len(pool)]
            fh.write(data)
            written += len(data)
            k += 1
            if k % every == 0 and done < n_incidents:
                done += 1
                lines = incident(datetime(2026, 6, 10, 14, 3, 21) + timedelta(seconds=k))
                expected += sum(1 for line in lines if any(m.decode() in line for m in FAULT_MARKERS))
                payload = ("\n".join(lines) + "\n").encode()
                fh.write(payload)
                written += len(payload)
    return expected


def warm(path: Path) -> None:
    with path.open("rb", buffering=0) as fh:
        while fh.read(16 << 20):
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--incidents", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the generated plog and print its path")
    args = ap.parse_args()
    grep = shutil.which("grep")
    if grep is None:
        print("grep not found", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-plogscan-"))
    path = tmp / f"plog-{PID}_20260610140321518.log"
    try:
        t0 = time.perf_counter()
        expected = generate(path, int(args.size_gib * (1 << 30)), args.incidents)
        size = path.stat().st_size
        print(f"generated {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s ({expected} marker lines)")
        warm(path)

        t0 = time.perf_counter()
        ours = sum(1 for _ in scan_plog(path))
        t_ours = time.perf_counter() - t0

        cmd = [grep, "-F", "-c"]
        for m in FAULT_MARKERS:
            cmd += ["-e", m.decode()]
        t0 = time.perf_counter()
        proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True, check=False)
        t_grep = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            print(f"grep failed: {proc.stderr}", file=sys.stderr)
            return 2
        theirs = int(proc.stdout.strip())

        mb = size / 1e6
        ratio = (mb / t_ours) / (mb / t_grep)
        print(f"skdbg scan_plog : {ours:6d} lines  {t_ours:6.2f} s  {mb / t_ours:7.0f} MB/s")
        print(f"grep -F -c      : {theirs:6d} lines  {t_grep:6.2f} s  {mb / t_grep:7.0f} MB/s")
        print(f"ratio skdbg/grep: {ratio:.2f} (target >= 0.5)")
        if ours != theirs or ours != expected:
            print(f"COUNT MISMATCH: skdbg={ours} grep={theirs} expected={expected}", file=sys.stderr)
            return 1
        return 0 if ratio >= 0.5 else 1
    finally:
        if args.keep:
            print(f"kept {path}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
