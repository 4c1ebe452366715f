"""Bisection benchmark (named ``bisect_probes.py``: a ``bench/bisect.py`` would shadow the standard
library's ``bisect`` — which ``random`` imports — for every script run from this folder): probes and wall time for scopes of n = 8 … 512 children on the emulator, and the
emulator's time to write one scene of 2,000 children.

    .venv/bin/python bench/bisect_probes.py [--samples 20] [--emulator-samples 1] [--kind wrong_result]

Two tables. *Search*: the real search (:class:`skdbg.loop.bisect_plan.Search`) over the real units of
a single-stream scope, answered by a stand-in oracle (one culprit, or an interaction pair, at random
positions), many samples; the time is skdbg's planning cost per bisection (units, safety check and
marker edits of every probe). *Emulator*: the whole ``bisect()`` over a ledger, on a synthetic emulator
model (``skdbg.sim.models.synthetic``), every probe materialised from its recorded marker edits, run by
``skdbg.sim.write_scene`` in process (the stand-in for ``relaunch --sim``, which adds one Python start
per launch) and frozen; the time covers baseline re-runs, probes, freezing/analysis and the exclusion
proposal. Baseline re-runs are not counted as probes.
"""

from __future__ import annotations

import argparse  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path

from skdbg.loop.bisect import bisect  # noqa: E402
from skdbg.loop.bisect_plan import Done, Search  # noqa: E402
from skdbg.loop.narrow import Layout, assignment, check_layout, probe_edits, units_of  # noqa: E402
from skdbg.parsers.markers import MarkerEdit, apply_edits_text  # noqa: E402
from skdbg.sessions.store import AttemptInfo, Ledger  # noqa: E402
from skdbg.sim import load_model, write_scene  # noqa: E402
from skdbg.sim.models import synthetic, write_model  # noqa: E402
from skdbg.triage.fragment import FNode, FragmentInput  # noqa: E402
from skdbg.workflow import freeze  # noqa: E402


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


def emulated(n: int, culprit: int, kind: str, tmp: Path) -> tuple[str, int, float, bool]:
    """(status, probes, seconds, right child) of one whole bisection on the emulator."""
    doc, source = synthetic(n, culprit, kind, seed=culprit)
    model = load_model(write_model(tmp / "model", doc, source))
    write_scene(model, tmp / "failed", seed=1, pid=30001)
    pids = iter(range(30002, 40000))
    t0 = time.perf_counter()
    with Ledger(tmp / "home") as ledger:
        sid = ledger.new_session("bench")
        base = freeze(ledger, sid, tmp / "failed")

        def runner(rid: str) -> AttemptInfo:
            body = ledger.proposal(sid, rid).body
            text = apply_edits_text(model.marker_text, [MarkerEdit(**e) for e in body["marker_edits"]])
            pid = next(pids)
            (tmp / f"m{pid}.py").write_text(text)
            no = len(ledger.attempts(sid, rid)) + 1
            out = tmp / f"s{pid}"
            write_scene(
                model, out, source=tmp / f"m{pid}.py", seed=pid, pid=pid, run={"round_id": rid, "attempt": no}
            )
            return freeze(ledger, sid, out, round_id=rid)

        r = bisect(ledger, sid, base.round_id, runner=runner, force=True)
    kernels = [o for o in doc["ops"] if "op_type" in o]
    want = f"{kernels[culprit]['op_type']}_"
    right = len(r.children) == 1 and str(r.children[0]["func_name"]).startswith(want)
    return r.status, r.probes, time.perf_counter() - t0, right


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--emulator-samples", type=int, default=1)
    ap.add_argument(
        "--kind", default="wrong_result", help="emulator fault kind (wrong_result: low, no SK named)"
    )
    args = ap.parse_args()
    rng = random.Random(15)
    print("search (stand-in oracle):")
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
    print(f"emulator ({args.kind}, whole bisect incl. 2 baseline re-runs, freezing and analysis):")
    print(f"{'n':>5} {'bound':>6} {'culprit':>8} {'status':>9} {'right':>6} {'probes':>7} {'wall s':>8}")
    for n in (8, 32, 128, 512):
        for _ in range(args.emulator_samples):
            c = rng.randrange(n)
            with tempfile.TemporaryDirectory() as tmp:
                status, probes, secs, right = emulated(n, c, args.kind, Path(tmp))
            bound = math.ceil(math.log2(n)) + 2
            print(f"{n:>5} {bound:>6} {c:>8} {status:>9} {str(right):>6} {probes:>7} {secs:>8.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        doc, source = synthetic(2000, 1234, "fused", seed=0)
        model = load_model(write_model(Path(tmp) / "model", doc, source))
        t0 = time.perf_counter()
        write_scene(model, Path(tmp) / "scene", seed=1)
        print(f"emulator: one scene of 2,000 children written in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
