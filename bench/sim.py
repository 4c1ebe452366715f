"""Benchmark: the SK emulator — time to write one scene, and to analyse it, by scope size.

Run as ``python bench/sim.py [--sizes 8,32,128,512,2000] [--samples 3] [--keep]``. For every size a
synthetic model (``skdbg.sim.models.synthetic``: one scope of n kernels, a ``fused`` fault in a child
at a seeded random position) is written, then ``write_scene`` (markers → planner → execute → scene
builder: plog, sk_meta, bin_files ELFs, task queue, run.json) and ``analyze`` (the triage engine,
in process) are each timed ``--samples`` times (min and median printed, with the scene's size on
disk). The verdict must name the planted child with ``high`` confidence, else the script exits 1.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def main() -> int:
    from skdbg.sim import load_model, write_scene
    from skdbg.sim.models import synthetic, write_model
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,32,128,512,2000")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the scenes (the folder is printed)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skdbg-bench-sim-"))
    rng = random.Random(15)
    bad = 0
    print(
        f"{'children':>8} {'write min':>10} {'write med':>10} {'analyze min':>12} {'analyze med':>12} {'MB':>7}"
    )
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            culprit = rng.randrange(n)
            doc, src = synthetic(n, culprit, "fused")
            m = load_model(write_model(work / f"m{n}", doc, src))
            writes, analyses = [], []
            scene = work / f"s{n}"
            for i in range(args.samples):
                t0 = time.perf_counter()
                write_scene(m, scene, seed=i, force=True)
                writes.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                a = analyze_context(open_context(scene))
                analyses.append(time.perf_counter() - t0)
                s = a.verdict.suspect
                if (
                    a.verdict.confidence != "high"
                    or s is None
                    or s.node_id != m.op_named(f"k{culprit}").node_id
                ):
                    print(f"n={n}: wrong verdict {a.verdict.confidence} {s}", file=sys.stderr)
                    bad += 1
            mb = _tree_size(scene) / 1e6
            print(
                f"{n:>8} {min(writes):>9.3f}s {statistics.median(writes):>9.3f}s "
                f"{min(analyses):>11.3f}s {statistics.median(analyses):>11.3f}s {mb:>7.1f}"
            )
    finally:
        if args.keep:
            print(f"scenes kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
