"""Issue 11 item 6: compile-phase failures and runs without fusion are not this workflow
(triage.md G3, X1/X2 §7, §6.2, upstream auto-tune eval 22).

They route X1 (compile) or X2 (no fusion) alone: no R1, no "rerun with the trace / re-collect
sk_meta" advice anywhere in the verdict. A compile that timed out or was interrupted proves
nothing and gets one clean retry (RETEST, no debug options).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from skdbg.scenebuilder.scene import ALL_FILES, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis
from skdbg.triage.render import render_text
from skdbg.triage.schema import validate_analysis

THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]
FAILED_EXIT = {"exit": {"status": 1, "signal": None, "timeout": False}}


def _analyze(tmp_path: Path, **kw: Any) -> Analysis:
    spec = SceneSpec(children=THREE, fault="none", **kw)
    analysis = analyze_context(open_context(build_scene(spec, tmp_path / "scene").root))
    validate_analysis(analysis.to_json())
    return analysis


def _no_rerun_advice(a: Analysis) -> None:
    """Nothing in the verdict asks to re-collect metadata or rerun with a trace (R1/D1/D2 advice)."""
    assert "R1" not in a.routes
    assert not any(s.id in ("D1", "D2", "D3", "N1") for s in a.next_steps)
    assert a.verdict.missing == ()
    text = " ".join([*a.verdict.residual_risk, *(g.collect for g in a.gate.gaps)])
    assert "debug_op_exec_trace" not in text and "ASCEND_OP_COMPILE_SAVE_KERNEL_META" not in text


@pytest.mark.parametrize("sk_meta", [True, False])
def test_compile_failure_routes_x1_alone(tmp_path: Path, sk_meta: bool) -> None:
    """The compiler exited non-zero (run.json failure_phase=compile), with or without an sk_meta/<pid>
    folder: not this workflow — X1 alone, n/a by C0, no next step (the fix is in the parent's
    adaptation/debugging flow)."""
    a = _analyze(tmp_path, failure_phase="compile", run=FAILED_EXIT, sk_meta=sk_meta)
    assert a.routes == ("X1",)
    assert a.next_steps == ()
    assert (a.verdict.confidence, a.verdict.rule) == ("n/a", "C0")
    assert a.gate.failed == ("G3",)
    _no_rerun_advice(a)
    assert "debug_op_exec_trace" not in render_text(a)


@pytest.mark.parametrize(
    ("exit_", "how"),
    [
        ({"status": None, "signal": 9, "timeout": True}, "timed out"),
        ({"status": None, "signal": "SIGINT", "timeout": False}, "interrupted"),
    ],
)
def test_timed_out_or_interrupted_compile_adds_a_clean_retry(
    tmp_path: Path, exit_: dict[str, Any], how: str
) -> None:
    """The runner's timeout (or a signal) stopped the compile: X1 alone plus exactly one clean retry
    (RETEST with no debug options) that says why."""
    a = _analyze(tmp_path, failure_phase="compile", run={"exit": exit_})
    assert a.routes == ("X1",)
    assert [(s.id, s.options) for s in a.next_steps] == [("RETEST", {})]
    assert how in a.next_steps[0].why and "NPU_STATIC_KERNEL_COMPILE_JOBS" in a.next_steps[0].why
    _no_rerun_advice(a)


@pytest.mark.parametrize("phase", ["execution", "hang"])
def test_no_fusion_routes_x2_alone(tmp_path: Path, phase: str) -> None:
    """sk_meta/<pid> exists but holds no sk_fused_nodes.log: fusion is not proven (X2) — the parent's
    fusion diagnosis, never child attribution; no R1 and no D1/D2/N1, even for a hang."""
    a = _analyze(tmp_path, failure_phase=phase, files=ALL_FILES - {"fused_nodes"}, run=FAILED_EXIT)
    assert a.routes == ("X2",)
    assert a.next_steps == ()
    assert "R1" not in a.routes and a.verdict.missing == ()


def test_x1_leaves_freshness_checks_not_run(tmp_path: Path) -> None:
    """A compile failure whose sk_meta/<pid> was never written: the freshness predicates describe
    attribution evidence, so they are not run — F3 does not fail and G2 does not ask to collect."""
    root = build_scene(
        SceneSpec(children=THREE, fault="none", failure_phase="compile", run=FAILED_EXIT), tmp_path / "s"
    ).root
    shutil.rmtree(root / "sk_meta")
    a = analyze_context(open_context(root))
    checks = dict(a.gate.checks)
    assert checks["F3"] == "not_run" and checks["G2"] == "not_run" and checks["G3"] == "failed"
    assert a.routes == ("X1",)
