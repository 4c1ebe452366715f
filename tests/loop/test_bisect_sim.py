"""bisect() on the emulator: every probe round is materialised from its recorded marker edits, run by
``skdbg.sim.write_scene`` (in process, standing in for ``relaunch --sim``) and frozen; the search must
isolate the fused-fault child within the bound, and the emulator must show each probe's halves as
their own SKs."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from skdbg.loop.bisect import bisect
from skdbg.parsers.markers import MarkerEdit, apply_edits_text
from skdbg.sessions.store import AttemptInfo, Ledger
from skdbg.sim import SimModel, load_model, write_scene
from skdbg.workflow import freeze

N = 16


def make_model(root: Path, culprit: int) -> SimModel:
    """16 kernels in one scope; op5 publishes event 1 that op6's statement waits on (on stream 1)."""
    src = [
        "import torch",
        "import torch_npu",
        "",
        "",
        "class M(torch.nn.Module):",
        "    def forward(self, x, side):",
        "        ev = torch.npu.Event()",
        '        torch.npu.super_kernel_scope_begin("blk")',
    ]
    ops: list[dict[str, object]] = []
    for i in range(N):
        if i == 6:
            src.append("        ev.wait(side)")
            ops.append({"name": "ev_wait", "kind": "wait", "event": 1, "stream": 1, "line": len(src)})
        src.append(f"        x = torch_npu.npu_op{i}(x{', stream=side' if i == 6 else ''})")
        ops.append(
            {
                "name": f"op{i}",
                "op_type": f"Op{i}",
                "kernel_type": "AIV" if i % 2 else "AIC",
                "block_dim": 8,
                "stream": 1 if i == 6 else 0,
                "line": len(src),
            }
        )
        if i == 5:
            src.append("        ev.record()")
            ops.append({"name": "ev_record", "kind": "notify", "event": 1, "stream": 0, "line": len(src)})
    src += ['        torch.npu.super_kernel_scope_end("blk")', "        return x"]
    (root / "src").mkdir(parents=True)
    (root / "src" / "model.py").write_text("\n".join(src) + "\n")
    doc = {"name": "bisect16", "ops": ops, "fault": {"kind": "fused", "op": f"op{culprit}"}}
    (root / "model.json").write_text(json.dumps(doc))
    return load_model(root)


@pytest.mark.parametrize("culprit", [0, 6, 11, 15])
def test_the_emulator_child_is_isolated_within_the_bound(tmp_path: Path, culprit: int) -> None:
    model = make_model(tmp_path / "model", culprit)
    write_scene(model, tmp_path / "failed", seed=1, pid=40001)
    ledger = Ledger(tmp_path / "home")
    sid = ledger.new_session("sim")
    base = freeze(ledger, sid, tmp_path / "failed")
    pids = itertools.count(40002)
    fused: dict[str, list[list[str]]] = {}

    def runner(rid: str) -> AttemptInfo:
        body = ledger.proposal(sid, rid).body
        text = apply_edits_text(model.marker_text, [MarkerEdit(**e) for e in body["marker_edits"]])
        pid = next(pids)
        src = tmp_path / f"model-{pid}.py"
        src.write_text(text)
        no = len(ledger.attempts(sid, rid)) + 1
        res = write_scene(
            model, tmp_path / f"s{pid}", source=src, seed=pid, pid=pid, run={"round_id": rid, "attempt": no}
        )
        fused[rid] = res.fused
        return freeze(ledger, sid, tmp_path / f"s{pid}", round_id=rid)

    # the emulator grades its own fused fault high (PC + COND); --force bisects it anyway
    r = bisect(ledger, sid, base.round_id, runner=runner, force=True)
    assert r.status == "isolated"
    names = [c["func_name"] for c in r.children]
    # op5/op6 are tied by the event pair (and so is the wait between them): one unit
    expected = [f"Op{i}" for i in (5, 6)] if culprit in (5, 6) else [f"Op{culprit}"]
    assert [n.split("_")[0] for n in names] == expected
    assert r.probes <= math.ceil(math.log2(N)) + 2
    assert r.n_units == N - 1
    # the emulator's fused fault is attributed (PC + COND) in the deciding probe too
    assert r.verdict is not None and "L1+L2" in r.verdict["reason"]
    for step in r.steps[1:]:
        want = sorted(
            sorted(f"op{c['func_name'].split('_')[0][2:]}" for c in g["children"]) for g in step.groups
        )
        got = sorted(sorted(sk) for sk in fused[step.round_id] if any(o.startswith("op") for o in sk))
        got = [[o for o in sk if o.startswith("op")] for sk in got]
        assert want == sorted(got), (step.round_id, want, got)


def _bisect_synthetic(tmp_path: Path, doc: dict[str, object], source: str, **kw: object):  # type: ignore[no-untyped-def]
    from skdbg.sim.models import write_model

    model = load_model(write_model(tmp_path / "model", doc, source))
    for seed in range(1, 100):  # the failed run: the first seed whose run fails (a flaky fault may not)
        if write_scene(model, tmp_path / "failed", seed=seed, pid=40001, force=True).outcome != "clean":
            break
    ledger = Ledger(tmp_path / "home")
    sid = ledger.new_session("sim")
    base = freeze(ledger, sid, tmp_path / "failed")
    pids = itertools.count(40002)

    def runner(rid: str) -> AttemptInfo:
        body = ledger.proposal(sid, rid).body
        text = apply_edits_text(model.marker_text, [MarkerEdit(**e) for e in body["marker_edits"]])
        pid = next(pids)
        (tmp_path / f"m{pid}.py").write_text(text)
        no = len(ledger.attempts(sid, rid)) + 1
        out = tmp_path / f"s{pid}"
        write_scene(
            model,
            out,
            source=tmp_path / f"m{pid}.py",
            seed=pid,
            pid=pid,
            run={"round_id": rid, "attempt": no},
        )
        return freeze(ledger, sid, out, round_id=rid)

    return bisect(ledger, sid, base.round_id, runner=runner, force=True, **kw)  # type: ignore[arg-type]


def _kernel_types(doc: dict[str, object]) -> list[str]:
    return [str(o["op_type"]) for o in doc["ops"] if "op_type" in o]  # type: ignore[attr-defined]


def test_an_emulated_interaction_is_reported_as_its_pair(tmp_path: Path) -> None:
    from skdbg.sim.models import synthetic

    doc, source = synthetic(16, [3, 12], "interaction", seed=0)
    r = _bisect_synthetic(tmp_path, doc, source)
    types = _kernel_types(doc)
    assert r.status == "pair"
    assert [
        str(c["func_name"]).startswith(f"{types[i]}_") for c, i in zip(r.children, (3, 12), strict=True)
    ] == [
        True,
        True,
    ]
    assert r.probes <= 4 * math.ceil(math.log2(16))


def test_an_emulated_flaky_fault_stops_at_the_baseline(tmp_path: Path) -> None:
    from skdbg.sim.models import synthetic

    doc, source = synthetic(16, 5, "flaky", seed=0, probability=0.3)
    r = _bisect_synthetic(tmp_path, doc, source)
    assert r.status == "flaky" and r.probes == 0
    assert r.baseline["reproduced"] < 2 and r.baseline["rate"].endswith("(the failed attempt + 2 re-runs)")


@pytest.mark.parametrize(("n", "streams"), [(8, 1), (32, 2), (128, 1)])
def test_emulated_scopes_keep_the_probe_bound(tmp_path: Path, n: int, streams: int) -> None:
    """A low-confidence wrong result (no SK named) at a random kernel of synthetic scopes; with two
    streams every fourth kernel sits behind an event pair on the side stream."""
    import random

    from skdbg.sim.models import synthetic

    culprit = random.Random(f"bisect-{n}").randrange(n)
    doc, source = synthetic(n, culprit, "wrong_result", streams=streams, seed=0)
    r = _bisect_synthetic(tmp_path, doc, source)
    want = _kernel_types(doc)[culprit]
    assert r.status == "isolated"
    assert any(str(c["func_name"]).startswith(f"{want}_") for c in r.children)
    assert r.probes <= math.ceil(math.log2(n)) + 2
