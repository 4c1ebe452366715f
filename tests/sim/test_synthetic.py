"""The synthetic-model helper the bisection helper and the benchmarks build on."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.sim import load_model
from skdbg.sim.api import emulate
from skdbg.sim.models import synthetic, write_model


def test_one_scope_of_n_kernels_with_side_streams(tmp_path: Path) -> None:
    doc, src = synthetic(32, 9, "fused", streams=3)
    m = load_model(write_model(tmp_path / "m", doc, src))
    kernels = [o for o in m.ops if o.is_kernel]
    assert [o.name for o in kernels] == [f"k{i}" for i in range(32)]
    # every fourth kernel on a side stream (1, 2, 1, 2, …), each behind one event pair
    assert [o.stream for o in kernels if o.stream] == [1 + (k // 4) % 2 for k in range(3, 32, 4)]
    assert sum(o.kind == "wait" for o in m.ops) == 8 and sum(o.kind == "notify" for o in m.ops) == 8
    em = emulate(m, source=None, seed=0, options=None)
    assert len(em.planned.plan.scopes) == 1 and len(em.planned.plan.scopes[0].node_ids) == len(m.ops)
    assert em.outcome.result == "sk_fault" and em.outcome.culprit is not None
    assert em.outcome.culprit.name == "k9"


def test_pairs_and_waits(tmp_path: Path) -> None:
    doc, _src = synthetic(8, [1, 6], "interaction")
    assert doc["fault"] == {"kind": "interaction", "ops": ["k1", "k6"]}
    doc, _src = synthetic(8, [1, 6], "circular_wait")
    types = {o["name"]: o["kernel_type"] for o in doc["ops"]}
    assert (types["k1"], types["k6"]) == ("AIC", "AIV")
    doc, src = synthetic(8, 5, "unmatched_wait")
    m = load_model(write_model(tmp_path / "w", doc, src))
    wait = m.op_named(doc["fault"]["op"])
    nxt = m.ops[wait.index + 1]
    assert wait.kind == "wait" and nxt.name == "k5"  # the wait gates the culprit kernel
    doc, _src = synthetic(8, 2, "flaky", probability=0.25)
    assert doc["fault"] == {"kind": "flaky", "op": "k2", "probability": 0.25}


@pytest.mark.parametrize(
    ("n", "culprit", "kind"),
    [
        (8, 8, "fused"),
        (8, -1, "fused"),
        (8, [1], "interaction"),
        (8, [1, 2], "fused"),
        (0, 0, "fused"),
        (8, 1, "boom"),
    ],
)
def test_bad_arguments(n: int, culprit: int | list[int], kind: str) -> None:
    with pytest.raises(ValueError):
        synthetic(n, culprit, kind)
