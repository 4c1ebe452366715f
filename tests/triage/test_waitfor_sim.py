"""The wait-for graph on emulated hangs (skdbg.sim fault kinds ``unmatched_wait``, ``circular_wait``).

What the emulated device shows (docs/sim.md): ``unmatched_wait`` — an event pair sits right before
the culprit child and its wait never sees the notify; every queue's core stops at that EVENT_WAIT
although its EVENT_NOTIFY precedes it in the same queue (it ran and did not release the wait).
``circular_wait`` [A, B] — SYNC wait AIV→AIC after A (AIC) and wait AIC→AIV after B (AIV), and no
queue holds a SET: the AIC core waits on the AIV core and back. ``syncall_mismatch`` X — a SyncAll
after X waits for X's block_dim + 8 cores; one core of X's type stops there (with the execution trace,
the counters show X's block_dim cores finished X).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sim_support import model, scene


def test_emulated_unmatched_wait_names_the_wait_and_its_spent_notify(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 4, "unmatched_wait")
    wait = m.op_named(m.fault.op or "")
    notify = m.op_named(wait.name.replace("_wait", "_record"))
    res, a = scene(m, tmp_path / "s")
    assert res.outcome == "hang" and a.wait_for is not None
    wf = a.wait_for
    assert [f.kind for f in wf.findings] == ["unmatched_wait"]
    f = wf.findings[0]
    assert f.cores == tuple(sorted(c.core_id for c in a.fault.cores))
    assert f"eventId={wait.event}" in f.detail and "already ran" in f.detail
    # the wait is task k, its notify task k-1 (the pair sits right before the culprit, one stream)
    labels = {n.id: n.label for n in wf.nodes}
    wait_node = next(i for i, lab in labels.items() if "EVENT_WAIT" in lab)
    notify_node = next(i for i, lab in labels.items() if "EVENT_NOTIFY" in lab)
    assert (wait_node, notify_node, "event") in {(e.src, e.dst, e.kind) for e in wf.edges}
    assert int(notify_node.split(":")[1]) == int(wait_node.split(":")[1]) - 1
    assert notify.event == wait.event
    assert (a.verdict.confidence, a.verdict.rule) == ("low", "C6") and "X5" in a.routes


def test_emulated_circular_wait_is_a_cycle_across_the_two_cores(tmp_path: Path) -> None:
    m = model(tmp_path, 8, [2, 5], "circular_wait")
    _res, a = scene(m, tmp_path / "s")
    assert a.wait_for is not None and a.wait_for.kind == "circular_wait"
    f = a.wait_for.findings[0]
    by_type = {c.core_type: c.core_id for c in a.fault.cores}
    assert f.across == "cores" and set(f.cores) == {by_type["AIC"], by_type["AIV"]}
    kinds = {(e.src, e.kind) for e in a.wait_for.edges}
    assert (f"core:{by_type['AIC']}", "blocked_at") in kinds and (
        f"core:{by_type['AIV']}",
        "blocked_at",
    ) in kinds
    assert sum(1 for e in a.wait_for.edges if e.kind == "sync") == 2
    assert "circular_wait" in a.verdict.flags


@pytest.mark.parametrize("trace", [False, True])
def test_emulated_syncall_mismatch_names_the_barrier_and_the_counts(tmp_path: Path, trace: bool) -> None:
    m = model(tmp_path, 8, 3, "syncall_mismatch")
    x = m.op_named("k3")  # the synthetic model: k3 is an AIV kernel on 48 blocks
    assert (x.kernel_type, x.block_dim) == ("AIV_ONLY", 48)
    res, a = scene(m, tmp_path / "s", debug={"debug_op_exec_trace": 1} if trace else None)
    assert res.outcome == "hang" and a.wait_for is not None
    assert [f.kind for f in a.wait_for.findings] == ["syncall_mismatch"]
    f = a.wait_for.findings[0]
    (core,) = a.fault.cores
    assert f.cores == (core.core_id,) and core.role == "bystander"
    assert "blk=56" in f.detail and "numBlocks=48" in f.detail
    assert ("48 core(s) reached it" in f.detail) is trace
    assert (a.verdict.confidence, a.verdict.rule) == ("low", "C6") and "X5" in a.routes
    assert "D2" in [s.id for s in a.next_steps]


def test_emulated_syncall_mismatch_of_an_unfused_kernel_is_clean(tmp_path: Path) -> None:
    """An SK of one kernel is no fusion (the emulator treats it as running alone): no SyncAll, no hang."""
    m = model(tmp_path, 1, 0, "syncall_mismatch")
    res, _a = scene(m, tmp_path / "s")
    assert res.outcome == "clean"


_PROBE = """
import json, sys
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
a = analyze_context(open_context(sys.argv[1]))
print(json.dumps({"wait_for": a.wait_for is not None, "networkx": "networkx" in sys.modules}))
"""


def _probe(scene_root: Path) -> dict[str, bool]:
    """Analyse in a fresh interpreter (modules other tests imported cannot hide an import)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(scene_root)], capture_output=True, text=True, check=True
    )
    doc: dict[str, bool] = json.loads(out.stdout.strip().splitlines()[-1])
    return doc


def test_networkx_loads_only_when_a_wait_for_graph_is_built(tmp_path: Path) -> None:
    """Issue 18 start-up budget: a fault inside a child builds no graph and never imports networkx; a hang does."""
    fused = model(tmp_path, 8, 5, "fused")
    scene(fused, tmp_path / "fused")
    assert _probe(tmp_path / "fused") == {"wait_for": False, "networkx": False}
    hang = model(tmp_path, 8, [2, 5], "circular_wait")
    scene(hang, tmp_path / "hang")
    assert _probe(tmp_path / "hang") == {"wait_for": True, "networkx": True}
