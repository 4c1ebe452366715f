"""Benchmark: the ``skdbg`` plog fault scan, whole process, vs ``grep -F -c`` (artifacts.md §1.1, §1.8).

Run as ``python bench/plog_scan.py [--size-gib 1] [--levels 0,1,10] [--samples 5] [--keep]``. For each
noise level it writes a plog of realistic runtime / GE / HCCL / profiling noise
(``skdbg.scenebuilder.plog.noise_lines``) in which that percentage of lines also carries words the fault
markers are made of ("failed", "Dump", "The" — never a whole marker), with a few SK incidents (the §1.7
handler messages rendered with ``sk_plog_line`` plus the §1.5 runtime lines). Generation is fast: a pool
of pre-rendered noise blocks is written repeatedly. The file is read once to warm the page cache, then
each side runs ``--samples`` times (at least 5), whole process against whole process:
``skdbg inspect DIR --table plog-faults --format csv`` (start-up, imports, the scan, classification,
output) and ``grep -F -c -e M1 -e M2 …`` with the same markers, both writing into a pipe (GNU grep stops
at the first match when its stdout is /dev/null). The in-process ``scan_plog`` count must equal grep's
and the number of marker lines written. Min and median per side; the ratio is grep's median time over
skdbg's (throughput ratio). Target: ≥ 0.5× at every level; exits non-zero on a mismatch or a lower ratio.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
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


#: words the fault markers are made of ("kernel execute failed", "[Dump][Exception]", "The extend info"),
#: in lines that are not fault lines: what defeats a prefilter anchored on common bytes
COMMON_WORDS = (
    "The stream sync failed once and was retried, Dump of the cache skipped",
    "The operator failed the shape check; Dump mode off",
    "Dump config loaded. The profiling upload failed, will retry",
)


def _with_common_words(rng: random.Random, lines: list[str], percent: float) -> list[str]:
    """``percent`` % of the noise lines get a tail of common marker words (never a whole marker)."""
    out = []
    for line in lines:
        if rng.random() * 100 < percent:
            line = f"{line} {rng.choice(COMMON_WORDS)}"
        out.append(line)
    return out


def generate(path: Path, size: int, n_incidents: int, common_percent: float = 0.0) -> int:
    """Write ``size`` bytes of noise with ``n_incidents`` evenly spread incidents; return the marker lines."""
    rng = random.Random(20260610)
    pool = [
        "\n".join(_with_common_words(rng, sb.noise_lines(rng, 4000, pid=PID), common_percent)).encode()
        + b"\n"
        for _ in range(8)
    ]
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


def _timed(argv: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)  # stdout into a pipe
    dt = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr[:300]}")
    return dt, proc.stdout


def run_level(tmp: Path, size: int, n_incidents: int, percent: float, samples: int, grep: str) -> bool:
    scene = tmp / f"noise-{percent:g}"
    scene.mkdir()
    path = scene / f"plog-{PID}_20260610140321518.log"
    t0 = time.perf_counter()
    expected = generate(path, size, n_incidents, percent)
    mb = path.stat().st_size / 1e6
    print(f"[{percent:g}% common-word lines] generated {mb:.0f} MB in {time.perf_counter() - t0:.1f} s")
    warm(path)
    ours_count = sum(1 for _ in scan_plog(path))
    cmd = [grep, "-F", "-c"]
    for m in FAULT_MARKERS:
        cmd += ["-e", m.decode()]
    skdbg = [str(Path(sys.executable).with_name("skdbg")), "inspect", str(scene), "--table", "plog-faults"]
    t_ours: list[float] = []
    t_grep: list[float] = []
    theirs = -1
    for _ in range(samples):
        dt, out = _timed([*skdbg, "--format", "csv"])
        t_ours.append(dt)
        dt, out = _timed([*cmd, str(path)])
        t_grep.append(dt)
        theirs = int(out.strip())
    med_o, med_g = statistics.median(t_ours), statistics.median(t_grep)
    ratio = med_g / med_o
    print(
        f"  skdbg inspect --table plog-faults: min {min(t_ours):.2f} s  median {med_o:.2f} s  {mb / med_o:6.0f} MB/s"
    )
    print(
        f"  grep -F -c (into a pipe)          : min {min(t_grep):.2f} s  median {med_g:.2f} s  {mb / med_g:6.0f} MB/s"
    )
    print(
        f"  ratio skdbg/grep (throughput, medians): {ratio:.2f}  (mins: {min(t_grep) / min(t_ours):.2f}; target >= 0.5)"
    )
    if ours_count != theirs or ours_count != expected:
        print(f"  COUNT MISMATCH: scan_plog={ours_count} grep={theirs} expected={expected}", file=sys.stderr)
        return False
    return ratio >= 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--incidents", type=int, default=5)
    ap.add_argument("--levels", default="0,1,10", help="percent of noise lines with common marker words")
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the generated plogs and print their folder")
    args = ap.parse_args()
    grep = shutil.which("grep")
    if grep is None:
        print("grep not found", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-plogscan-"))
    try:
        ok = True
        for level in (float(x) for x in args.levels.split(",")):
            ok &= run_level(
                tmp, int(args.size_gib * (1 << 30)), args.incidents, level, max(5, args.samples), grep
            )
        print("RESULT:", "PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
