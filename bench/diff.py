"""Benchmark: ``skdbg diff A B`` of two 200 MB scenes against one ``skdbg analyze`` of one of them.

Run as ``python bench/diff.py [--plog-mb 200] [--kernels 2000] [--samples 5] [--keep]``. Scene A is
written exactly as ``bench/analyze.py`` writes its scene (``scene_spec`` + ``pad_plog``: one SK of
``--kernels`` children, the plog padded with noise to ``--plog-mb``); scene B is a copy of A (the same
size of work; the diff must then report the same findings). Both are read once to warm the page cache,
then, alternating, ``--samples`` times each (wall time min and median, and the median CPU time of
all processes — the machine may be shared, and the diff only meets its target when a second core is free):

* ``skdbg analyze A --format json --no-cache`` (one whole process, interpreter start-up included);
* ``skdbg diff A B --format json --no-cache`` (one whole process: B analysed in it, A in a forked worker).

Target: the ratio of the medians ≤ 2.0 (issue 17: a diff costs at most two analyses; with two cores the
two analyses overlap, so it is expected well below 2). Children run with bytecode caches on
(``benchenv.py``); the analysis cache is bypassed (``--no-cache``) and pointed at a temporary folder
anyway. Exits non-zero when the diff reports a difference in findings or the ratio is above target.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import all_files, pad_plog, scene_spec, warm  # noqa: E402  (sibling modules)
from benchenv import NOTE, children_usage, prime, user_env  # noqa: E402

from skdbg.scenebuilder.scene import build_scene  # noqa: E402

TARGET = 2.0


#: CPU seconds of each timed run: what it costs whatever else the (shared) machine runs
CPU: dict[str, list[float]] = {"analyze": [], "diff": []}


def timed(argv: list[str], kind: str) -> tuple[float, dict[str, object]]:
    c0, t0 = children_usage()[0], time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False, env=user_env())
    elapsed = time.perf_counter() - t0
    CPU[kind].append(children_usage()[0] - c0)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors="replace"))
    doc: dict[str, object] = json.loads(proc.stdout)
    return elapsed, doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plog-mb", type=float, default=200.0)
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=5, help="timed runs of each command (>= 5 recommended)")
    ap.add_argument("--keep", action="store_true", help="keep the generated scenes and print their path")
    args = ap.parse_args()
    skdbg = shutil.which("skdbg") or str(Path(sys.executable).with_name("skdbg"))
    if not Path(skdbg).exists():
        print("needs the `skdbg` console script on PATH", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-bench-diff-"))
    a, b = tmp / "a", tmp / "b"
    os.environ["SKDBG_CACHE_DIR"] = str(tmp / "cache")  # never the user's cache
    try:
        print(NOTE)
        t0 = time.perf_counter()
        spec, _target = scene_spec(args.kernels)
        built = build_scene(spec, a)
        pad_plog(built.plog, int(args.plog_mb * 1e6))
        shutil.copytree(a, b)
        files = all_files(a) + all_files(b)
        size = sum(os.path.getsize(f) for f in all_files(a))
        print(
            f"scenes: 2 × {size / 1e6:.0f} MB ({args.kernels} kernels), built in {time.perf_counter() - t0:.1f} s"
        )
        analyze = [skdbg, "analyze", str(a), "--format", "json", "--no-cache"]
        diff = [skdbg, "diff", str(a), str(b), "--format", "json", "--no-cache"]
        prime(analyze)
        prime(diff)
        one: list[float] = []
        two: list[float] = []
        doc: dict[str, object] = {}
        for _ in range(args.samples):
            warm(files)
            one.append(timed(analyze, "analyze")[0])
            warm(files)
            t, doc = timed(diff, "diff")
            two.append(t)
        ratio = statistics.median(two) / statistics.median(one)
        print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPU(s)")
        print(
            f"analyze A    min {min(one):6.2f} s median {statistics.median(one):6.2f} s ({args.samples} samples)"
        )
        print(
            f"diff A B     min {min(two):6.2f} s median {statistics.median(two):6.2f} s ({args.samples} samples)"
        )
        print(
            f"CPU: analyze median {statistics.median(CPU['analyze']):6.2f} s | "
            f"diff median {statistics.median(CPU['diff']):6.2f} s (both processes)"
        )
        print(f"ratio of medians diff/analyze {ratio:5.2f} (target <= {TARGET})")
        print(f"diff summary: {doc.get('summary')}")
        if doc.get("same") is not True:
            print("WRONG RESULT: two copies of one scene must show the same findings", file=sys.stderr)
            return 1
        return 0 if ratio <= TARGET else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
