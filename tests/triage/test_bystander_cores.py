"""Issue 11 item 4: bystander cores on a run without op trace (triage.md §3.6, T9, X5).

A core whose handler block says "No sub kernel matched", whose PC is non-zero and resolves into the
SK entry's own code, and which has no trace state at all (no op_trace counters, COND absent or 0)
is a bystander: it never implicates a child, and X5 names the first task it blocks on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.scenebuilder.scene import Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis


def _analyze(spec: SceneSpec, tmp_path: Path) -> Analysis:
    return analyze_context(open_context(build_scene(spec, tmp_path / "scene").root))


#: an AIC child followed by a SYNC "wait AIV→AIC" (args 6) on the AIC queue, then an AIV child
SYNC_KIDS = [Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY")]


@pytest.mark.parametrize(("dialect", "cond"), [("D5", "unavailable"), ("D4", "unavailable"), ("D3", "auto")])
def test_entry_pc_without_trace_state_is_a_bystander(tmp_path: Path, dialect: str, cond: str) -> None:
    """No op_trace; the AIC core's PC is inside sk_entry_* (ELF-confirmed) and COND is 0 (D4/D5) or
    not printed at all (D3). The core is a bystander, waiting in the SYNC task of its queue (task 0's
    SYNC args=6, the AIC queue's first blocking task): routes X5, low (C6), no candidate."""
    a = _analyze(
        SceneSpec(
            children=SYNC_KIDS,
            dialect=dialect,
            cores=[FaultCore(core_id=3, core_type="AIC", pc=("entry",), cond=cond)],
        ),
        tmp_path,
    )
    core = a.fault.cores[0]
    assert core.role == "bystander"
    assert core.blocking is not None and core.blocking.startswith("task 0 SYNC args=6 (wait AIV→AIC)")
    assert "X5" in a.routes
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert a.verdict.candidates == ()
    assert "core 3 waits at task 0 SYNC args=6" in a.verdict.reason  # the text output names the wait


def test_bystander_waiting_on_an_event_names_the_notify_edge(tmp_path: Path) -> None:
    """Stream 1 notifies event 3, stream 0 waits on it before AddB_22. The AIV core (no op_trace,
    COND 0) is in entry code: its first blocking task is the EVENT_WAIT (task 2, nodeId 102), and the
    edge it waits on is the EventNotify nodeId 101 on stream 1."""
    kids = [
        Kernel("MatA_11", "AIC_ONLY"),
        Event("EventNotify", event_id=3, stream=1),
        Event("EventWait", event_id=3, stream=0),
        Kernel("AddB_22", "AIV_ONLY"),
    ]
    a = _analyze(
        SceneSpec(
            children=kids, cores=[FaultCore(core_id=40, core_type="AIV", pc=("entry",), cond="unavailable")]
        ),
        tmp_path,
    )
    core = a.fault.cores[0]
    assert core.role == "bystander" and "X5" in a.routes
    assert core.blocking is not None
    assert core.blocking.startswith("task 2 EVENT_WAIT eventId=3 (nodeId 102")
    assert "EventNotify nodeId 101 (stream 1" in core.blocking


def test_pc_zero_is_unknown_not_a_bystander(tmp_path: Path) -> None:
    """Same SK, but the handler captured no PC (CurrentPC 0x0): T9 — the core is unknown, never a
    bystander, so no X5."""
    a = _analyze(
        SceneSpec(
            children=SYNC_KIDS,
            cores=[FaultCore(core_id=3, core_type="AIC", pc=("zero",), cond="unavailable")],
        ),
        tmp_path,
    )
    assert a.fault.cores[0].role == "unknown" and "T9" in a.fault.cores[0].flags
    assert "X5" not in a.routes
