"""Bisection benchmark: probes and wall time for scopes of n = 8 … 512 children, and the time to write one
scene of 2,000 children.

    .venv/bin/python bench/bisect.py [--samples 20]

Probes come from the real search (:class:`skdbg.loop.bisect_plan.Search`) over the real units of a
single-stream scope, answered by a stand-in oracle (one culprit at a random position; an interaction
pair at random positions); the wall time is the planning time per bisection (units, safety check and
marker edits of every probe), i.e. skdbg's own cost without the launches. The scene timing writes one
anchor-only failure scene of 2,000 children with the scene builder (what the emulator renders through).
Baseline re-runs are not counted as probes.
"""

from __future__ import annotations

import sys
from pathlib import Path

# run as a script, this file's folder is sys.path[0] and its name would shadow the stdlib ``bisect``
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from skdbg.loop.bisect_plan import Done, Search  # noqa: E402
from skdbg.loop.narrow import Layout, assignment, check_layout, probe_edits, units_of  # noqa: E402
from skdbg.scenebuilder.scene import ALL_FILES, Kernel, SceneSpec, build_scene  # noqa: E402
from skdbg.triage.fragment import FNode, FragmentInput  # noqa: E402


def scope(n: int) -> tuple[FragmentInput, Layout]:
    nodes = tuple(FNode(i, i, "kernel", 0, func_name=f"K{i}") for i in range(n))
    layout = Layout(
        "src/model.py",
        "blk",
        1,
        n + 2,
        "torch.npu.super_kernel_scope_begin",
        "torch.npu.super_kernel_scope_end",
        '"blk"',
        tuple((i + 2, i + 2) for i in range(n)),
        ("    ",) * n,
    )
    return FragmentInput(nodes=nodes, child=0), layout


def run(n: int, culprits: set[int]) -> tuple[int, float]:
    t0 = time.perf_counter()
    inp, layout = scope(n)
    units = units_of(inp, {i: i for i in range(n)})
    s, probes = Search([len(u.kernels) for u in units]), 0
    while not isinstance(nxt := s.next(), Done):
        probes += 1
        assert not check_layout(inp, assignment(units, nxt.groups))
        probe_edits(layout, units, nxt.groups, nxt.step)
        hit = next((g for g in nxt.groups if culprits <= set(range(g.lo, g.hi))), None)
        s.feed(nxt, "pass" if hit is None else (hit.tag if len(nxt.groups) > 1 else "fail"))
    return probes, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(15)
    print(
        f"{'n':>5} {'bound':>6} {'max probes 1':>13} {'pair bound':>10} {'max probes 2':>13} {'median s':>9}"
    )
    for n in (8, 32, 128, 512):
        one = [run(n, {rng.randrange(n)}) for _ in range(args.samples)]
        two = [run(n, set(rng.sample(range(n), 2))) for _ in range(args.samples)]
        times = sorted(t for _, t in one)
        lg = math.ceil(math.log2(n))
        print(
            f"{n:>5} {lg + 2:>6} {max(p for p, _ in one):>13} {4 * lg:>10} {max(p for p, _ in two):>13} "
            f"{times[len(times) // 2]:>9.3f}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        ks = [Kernel(f"Op{i:04d}", "AIV_ONLY", node_id=1000 + i) for i in range(2000)]
        spec = SceneSpec(
            children=ks,
            fault="none",
            handler="anchor_only",
            failure_phase="timeout",
            files=ALL_FILES - {"task_queue", "device_args"},
            noise_lines=0,
        )
        t0 = time.perf_counter()
        build_scene(spec, Path(tmp) / "scene")
        print(f"one scene of 2,000 children written in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
