"""Issue 11 item 5: next steps for conflicting cores (triage.md X4, D2 §3.9).

The SyncAll attempt names ``debug_sync_all`` *and* ``debug_op_exec_trace`` in one option map
(upstream's options manager turns the trace on only for debug_op_exec_trace /
debug_cross_core_sync_check, never for sync-all), and no step repeats an option set the failed
attempt already ran with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis

THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]
#: two AIV cores, each in a different child, both OP_LAUNCHED in COND: a conflict (C2/X4)
CONFLICT = [
    FaultCore(core_id=30, core_type="AIV", pc=("child", 1), state=("OP_LAUNCHED", 1)),
    FaultCore(core_id=31, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 2)),
]
SYNC_ALL_AND_TRACE = {"debug_sync_all": 1, "debug_op_exec_trace": 1}


def _analyze(tmp_path: Path, **kw: Any) -> Analysis:
    spec = SceneSpec(children=THREE, cores=CONFLICT, **kw)
    return analyze_context(open_context(build_scene(spec, tmp_path / "scene").root))


def _options(a: Analysis) -> list[dict[str, Any]]:
    return [s.options for s in a.next_steps]


def test_clean_attempt_conflict_gets_trace_then_sync_all_with_trace(tmp_path: Path) -> None:
    """A clean attempt (no debug options) where two cores name tasks 1 and 2: X4; D1 asks for the
    trace, and the SyncAll attempt carries the trace too (one attempt, both options)."""
    a = _analyze(tmp_path)
    assert (a.verdict.rule, "X4" in a.routes) == ("C2", True)
    assert {"debug_op_exec_trace": 1} in _options(a)
    assert SYNC_ALL_AND_TRACE in [s.options for s in a.next_steps if s.id == "D2"]
    assert {"debug_sync_all": 1} not in _options(a)  # sync-all alone yields no L1 evidence


@pytest.mark.parametrize(
    ("debug", "already"),
    [
        ({"debug_op_exec_trace": 1}, [{"debug_op_exec_trace": 1}]),
        (
            {"debug_cross_core_sync_check": 1},  # implies the trace
            [{"debug_op_exec_trace": 1}, {"debug_cross_core_sync_check": 1}],
        ),
    ],
)
def test_trace_attempt_conflict_never_resuggests_its_options(
    tmp_path: Path, debug: dict[str, int], already: list[dict[str, int]]
) -> None:
    """The failed attempt already ran an *_op_trace entry with `debug`: no step may ask for an option
    set it already had; the SyncAll step still names the trace next to sync-all."""
    a = _analyze(tmp_path, op_trace=True, debug_options=debug)
    assert "X4" in a.routes
    for opts in already:
        assert opts not in _options(a)
    assert SYNC_ALL_AND_TRACE in _options(a)
    assert any(s.id == "N1" for s in a.next_steps)


def test_sync_all_and_trace_attempt_gets_no_debug_rerun(tmp_path: Path) -> None:
    """The failed attempt had sync-all, the cross-core check and the trace already: nothing of D1/D2 is
    new, so only the narrowing step (N1) remains."""
    a = _analyze(
        tmp_path, op_trace=True, debug_options={"debug_sync_all": 1, "debug_cross_core_sync_check": 1}
    )
    assert "X4" in a.routes
    assert [s.id for s in a.next_steps] == ["N1"]
