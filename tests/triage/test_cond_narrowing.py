"""Issue 11 item 3: COND narrows shared-binary candidates (triage.md §3.4 L2/L3, traps T4/T5).

Every scene runs the whole pipeline. The expected candidate lists are written by hand from the COND
layout (bits 8–15 = task index mod 256, ``index >> 8`` OR-ed into the scope field) and the queues.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis
from skdbg.triage.schema import validate_analysis


def _analyze(spec: SceneSpec, tmp_path: Path) -> Analysis:
    built = build_scene(spec, tmp_path / "scene")
    analysis = analyze_context(open_context(built.root))
    validate_analysis(analysis.to_json())
    return analysis


def _shared(n: int, kernel_type: str = "AIV_ONLY") -> list[Kernel]:
    """n children that all run one binary (the first child's): every PC matches all n (T4)."""
    first = Kernel("AddB_22", kernel_type)
    return [first] + [Kernel("AddB_22", kernel_type, shares_binary_with=0) for _ in range(n - 1)]


def _tasks(a: Analysis) -> list[int | None]:
    return [c.task_index for c in a.verdict.candidates]


@pytest.mark.parametrize(
    ("n", "k", "scope"),
    [
        (300, 266, 8),  # wrap once: COND opIndex 10, index>>8 = 1 leaks into scope 8 → 9
        (600, 522, 8),  # wrap twice: opIndex 10, leak 2 → scope 10
        (780, 773, 16),  # wrap three times: opIndex 5, leak 3 → scope 19
    ],
)
def test_wrap_recovers_the_single_index_from_leaked_scope_bits(
    tmp_path: Path, n: int, k: int, scope: int
) -> None:
    """More than 256 children all share one binary, so the PC matches every task. The faulting task
    k ≥ 256 is written into COND as (k mod 256) with k >> 8 OR-ed into the scope field; the printed
    SkScopeId has zeros there, so the leaked bits give k back (T5, flagged). The candidates are the
    single task k — not the n PC matches, not the k mod 256 alias."""
    a = _analyze(
        SceneSpec(
            children=_shared(n),
            scope_id=scope,
            cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", k), state=("OP_LAUNCHED", k))],
        ),
        tmp_path,
    )
    v = a.verdict
    assert _tasks(a) == [k]
    assert (v.confidence, v.rule) == ("medium", "C4")
    assert v.suspect is not None and v.suspect.task_index == k
    assert "cond_index_overflow" in v.flags
    assert len(a.fault.cores[0].m) == n  # the PC match set itself is kept whole, as evidence


def test_hidden_wrap_lists_only_the_cond_aliases(tmp_path: Path) -> None:
    """300 children share one binary; task 266 faults and the printed SkScopeId 7 already has bit 0
    set, so the leaked index>>8 = 1 is invisible: COND allows exactly {10, 266}. The verdict lists
    those two (low, no suspect) — never the other 298 PC matches."""
    a = _analyze(
        SceneSpec(
            children=_shared(300),
            scope_id=7,
            cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 266), state=("OP_LAUNCHED", 266))],
        ),
        tmp_path,
    )
    assert _tasks(a) == [10, 266]
    assert (a.verdict.confidence, a.verdict.suspect) == ("low", None)
    assert "R3" in a.routes


def test_queue_position_resolves_a_hidden_wrap(tmp_path: Path) -> None:
    """Tasks 0–255 are AIC children; tasks 256–299 are AIV children sharing one binary. An AIV core
    faults in task 267 with the wrap hidden by SkScopeId 7 (COND allows 11 and 267). Task 11 is not in
    the AIV queue, so the core cannot be running it: the single candidate is 267 (E3 by L3
    disambiguating L2, graded C4)."""
    kids: list[Kernel] = [Kernel(f"Mm{i:03d}_aa", "AIC_ONLY") for i in range(256)]
    kids.append(Kernel("AddB_22", "AIV_ONLY"))
    kids += [Kernel("AddB_22", "AIV_ONLY", shares_binary_with=256) for _ in range(43)]
    a = _analyze(
        SceneSpec(
            children=kids,
            scope_id=7,
            cores=[FaultCore(core_id=40, core_type="AIV", pc=("child", 267), state=("OP_LAUNCHED", 267))],
        ),
        tmp_path,
    )
    assert _tasks(a) == [267]
    assert (a.verdict.confidence, a.verdict.rule) == ("medium", "C4")
    assert a.verdict.suspect is not None and a.verdict.suspect.task_index == 267


@pytest.mark.parametrize(("sharers", "k"), [(2, 1), (5, 3), (40, 39)])
def test_small_sk_cond_picks_one_of_any_number_of_sharers(tmp_path: Path, sharers: int, k: int) -> None:
    """A binary shared by `sharers` children of a small SK (no wrap): COND OP_LAUNCHED k names one of
    them. Candidates: exactly [k] (medium, C4) whatever the number of sharers."""
    a = _analyze(
        SceneSpec(
            children=_shared(sharers),
            cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", k), state=("OP_LAUNCHED", k))],
        ),
        tmp_path,
    )
    assert _tasks(a) == [k]
    assert (a.verdict.confidence, a.verdict.rule) == ("medium", "C4")


def test_cond_outside_the_pc_matches_is_a_conflict(tmp_path: Path) -> None:
    """Tasks 0 and 2 share a binary and the PC is in it, but COND says task 1 (another binary) is
    running. L2 and L3 disagree: low by C2 with route X4, both sides listed (no side is dropped on
    the other's word)."""
    kids = [
        Kernel("AddB_22", "AIV_ONLY"),
        Kernel("MulD_44", "AIV_ONLY"),
        Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
    ]
    a = _analyze(
        SceneSpec(
            children=kids,
            cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 1))],
        ),
        tmp_path,
    )
    assert (a.verdict.confidence, a.verdict.rule) == ("low", "C2")
    assert "X4" in a.routes
    assert _tasks(a) == [0, 1, 2]
