"""Issue 11 item 10: GE-mode SKs (torchair ``te_superkernel_*``, triage.md §3.1.4, §4.5.2, X6).

A GE-mode SK has no sk_meta/<pid>, task queue or DFX table — the AOT gate G2 cannot pass for it, by
construction. That is not "not an SK fault": the verdict is ``low`` by rule C5 (a PC→symbol match with
no task-queue / fused-node metadata), the adump ``symbol name`` is the only suspect field, and the
next step is R1 — rerun under npugraph_ex. A model marked with ``torchair.scope.super_kernel(name)``
is the candidate that ran (F8 passes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis
from skdbg.triage.schema import validate_analysis

KIDS = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]


def _analyze(tmp_path: Path, **kw: Any) -> Analysis:
    spec: dict[str, Any] = {"children": KIDS, "fault": "ge_sk"}
    spec.update(kw)
    analysis = analyze_context(open_context(build_scene(SceneSpec(**spec), tmp_path / "scene").root))
    validate_analysis(analysis.to_json())
    return analysis


@pytest.mark.parametrize(("core", "core_type", "k", "symbol"), [(30, "AIV", 1, "AddB_22_sk_split2"),
                                                                 (5, "AIC", 0, "MatA_11_sk_split1")])  # fmt: skip
def test_ge_fault_is_low_c5_with_the_dump_symbol_only(
    tmp_path: Path, core: int, core_type: str, k: int, symbol: str
) -> None:
    """`te_superkernel_<hash>` faults; the dump line names `<child>_sk_split<core % 4>`. Verdict: low,
    C5, suspect = that symbol with every other field empty; routes X6 + R1; next step R1 (rerun under
    npugraph_ex); no exclusion proposed."""
    a = _analyze(tmp_path, cores=[FaultCore(core_id=core, core_type=core_type, pc=("child", k))])
    v = a.verdict
    assert (a.fault.kind, v.confidence, v.rule) == ("ge_sk", "low", "C5")
    assert v.suspect is not None
    assert v.suspect.to_json() == {
        "task_index": None,
        "node_id": None,
        "func_name": None,
        "symbol": symbol,
        "kernel_type": None,
        "stream_id": None,
        "scope_id": None,
        "scope_name": None,
        "model": None,
        "occurrence": None,
        "identity": "unresolved",
    }
    assert a.routes == ("X6", "R1")
    assert [s.id for s in a.next_steps] == ["R1"] and "npugraph_ex" in a.next_steps[0].why
    assert a.proposal.status == "none"


def test_ge_marker_passes_f8(tmp_path: Path) -> None:
    """The model source marks the scope GE-style (`with torchair.scope.super_kernel("…"):`) and
    run.json names that scope: F8 must not report "not the candidate that ran"."""
    a = _analyze(tmp_path, cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1))])
    assert dict(a.gate.checks)["F8"] == "passed" and "F8" not in a.gate.failed
    assert a.gate.failed == ("G2", "F3")  # only what a GE-mode SK fails by construction


def test_ge_marker_passes_f8_for_an_aot_scene_too(tmp_path: Path) -> None:
    """An AOT SK scene whose model source uses the GE marker form for the candidate scope: F8 passes
    and the usual high verdict stands."""
    spec = SceneSpec(
        children=KIDS,
        marker_form="ge",
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1), state=("OP_LAUNCHED", 1))],
    )
    a = analyze_context(open_context(build_scene(spec, tmp_path / "scene").root))
    assert dict(a.gate.checks)["F8"] == "passed" and a.gate.passed
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")


def test_ge_fault_with_another_gate_failure_stays_n_a(tmp_path: Path) -> None:
    """The same GE fault without a recorded command/rank (G1 fails): the attempt itself is not
    identified, so C0 (n/a) still applies — only the GE-inherent G2/F3 are excused."""
    a = _analyze(
        tmp_path,
        cores=[FaultCore(core_id=30, core_type="AIV", pc=("child", 1))],
        run={"command": None, "rank": None},
    )
    assert "G1" in a.gate.failed
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("n/a", "C0", None)
