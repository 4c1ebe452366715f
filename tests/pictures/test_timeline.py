"""The timeline's picture data, from hand-built queues and core findings (no scene).

Expectations are written from the issue and triage.md: an AIV core runs the AIV queue in slot order;
the tasks before the one its trace points at are finished (and that one too when its state is
OP_FINISHED); COND keeps only the low 8 bits of the index (T5); the PC may match several tasks (T4);
a bystander's blocking wait is the task its X5 finding names.
"""

from __future__ import annotations

from skdbg.parsers.common import Source
from skdbg.pictures.timeline import (
    GapCell,
    TaskCell,
    build_timeline,
    core_cells,
    queue_of,
    window,
    windowed_cells,
)
from skdbg.triage.model import CoreFinding, FaultInfo
from skdbg.triage.skview import SkTask

SRC = Source("sk_task_queue.json", json_path="$")


def task(slot: int, index: int, kind: str = "FUNC", queue: str = "aiv") -> SkTask:
    return SkTask(index, queue, slot, kind, None, None, (), None, SRC, "task_queue")


def core(**kw: object) -> CoreFinding:
    base: dict[str, object] = {
        "core_id": 30,
        "core_type": "AIV",
        "start_pc": None,
        "current_pc": 0x1000,
        "role": "implicated",
    }
    base.update(kw)
    return CoreFinding(**base)  # type: ignore[arg-type]


# a queue: FUNC 0, NOTIFY 1, WAIT 2, FUNC 3, SYNC 3, FUNC 4
QUEUE = [
    task(0, 0),
    task(1, 1, "EVENT_NOTIFY"),
    task(2, 2, "EVENT_WAIT"),
    task(3, 3),
    task(4, 3, "SYNC"),
    task(5, 4),
]


def marks(cells: list[TaskCell]) -> dict[tuple[int, int], set[str]]:
    return {(c.slot, c.index): set(c.marks) for c in cells}


def test_running_task_splits_finished_from_pending() -> None:
    cells = core_cells(QUEUE, core(e1=3, op_state=2, m=(3,)), suspect=3)
    got = marks(cells)
    assert got == {
        (0, 0): {"finished"},
        (1, 1): {"finished"},
        (2, 2): {"finished"},
        (3, 3): {"cond", "pc", "suspect"},
        (4, 3): set(),
        (5, 4): set(),
    }


def test_op_finished_state_counts_the_task_itself_as_finished() -> None:
    got = marks(
        core_cells(QUEUE, core(cond_index=3, cond_state="OP_FINISHED", role="bystander"), suspect=None)
    )
    assert got[(3, 3)] == {"finished", "cond"}
    assert got[(5, 4)] == set()
    assert got[(0, 0)] == {"finished"}


def test_shared_binary_marks_every_pc_match() -> None:
    got = marks(core_cells(QUEUE, core(m=(0, 4)), suspect=None))
    assert {k for k, v in got.items() if "pc" in v} == {(0, 0), (5, 4)}
    assert not any("finished" in v for v in got.values())  # no trace state: progress unknown


def test_bystander_blocking_wait_is_marked_on_its_wait_task() -> None:
    f = core(
        role="bystander",
        cond_index=0,
        cond_state="OP_FINISHED",
        blocking="task 2 EVENT_WAIT eventId=1 (nodeId 103, stream 1) at AIV queue slot 2; waits for …",
    )
    got = marks(core_cells(QUEUE, f, suspect=None))
    assert got[(2, 2)] == {"blocking"}
    assert got[(0, 0)] == {"finished", "cond"}


def test_cond_index_wraps_beyond_255_tasks() -> None:
    # FUNC tasks 0..599: a raw COND index of 44 can mean 44, 300 or 556 (T5)
    q = [task(i, i) for i in range(600)]
    cells = core_cells(q, core(cond_index=44, cond_state="OP_LAUNCHED"), suspect=None)
    assert [c.index for c in cells if "cond" in c.marks] == [44, 300, 556]
    assert not any("finished" in c.marks for c in cells)


def test_wrapped_cond_resolved_by_the_attribution_is_used() -> None:
    q = [task(i, i) for i in range(600)]
    cells = core_cells(q, core(cond_index=44, cond_state="OP_LAUNCHED", e3=300), suspect=None)
    assert [c.index for c in cells if "cond" in c.marks] == [300]
    assert sum("finished" in c.marks for c in cells) == 300


def test_window_keeps_head_tail_and_marked_neighbourhood() -> None:
    q = [task(i, i) for i in range(100)]
    cells = core_cells(q, core(e1=50, op_state=2), suspect=None)
    shown = window(cells, max_cells=20, radius=2)
    kinds = [(c.slot if isinstance(c, TaskCell) else ("gap", c.first, c.last)) for c in shown]
    assert kinds == [0, 1, ("gap", 2, 47), 48, 49, 50, 51, 52, ("gap", 53, 97), 98, 99]
    gaps = [c for c in shown if isinstance(c, GapCell)]
    assert [(g.hidden, g.finished) for g in gaps] == [(46, True), (45, False)]


def test_short_queue_is_not_windowed() -> None:
    cells = core_cells(QUEUE, core(), suspect=None)
    assert window(cells, max_cells=6) == cells


def test_queue_follows_core_type() -> None:
    assert [queue_of(t) for t in ("AIC", "aiv", " AIV ", None, "MIX")] == ["aic", "aiv", "aiv", None, None]


def test_no_instance_says_why_and_keeps_a_row_per_core() -> None:
    fault = FaultInfo(kind="sk", phase="device_fault", cores=(core(), core(core_id=5, core_type="AIC")))
    tl = build_timeline(None, fault)
    assert [(r.core_id, r.queue, r.cells, r.total) for r in tl.rows] == [
        (30, "aiv", (), 0),
        (5, "aic", (), 0),
    ]
    assert any("no task queue" in n for n in tl.notes)
    assert not tl.windowed


def test_bystander_blocking_wait_tells_the_wrapped_cond_index_apart() -> None:
    # FUNC k then an EVENT_WAIT per k (slots 2k, 2k+1) for k in 0..599; COND 44 fits 44, 300 and 556;
    # X5 names the first wait after the last finished FUNC: wait 300 → only FUNC 300 fits
    q = [t for k in range(600) for t in (task(2 * k, k), task(2 * k + 1, k, "EVENT_WAIT"))]
    f = core(
        role="bystander",
        cond_index=44,
        cond_state="OP_FINISHED",
        blocking="task 300 EVENT_WAIT at AIV queue slot 601; waits for the matching EVENT_NOTIFY",
    )
    cells = core_cells(q, f, suspect=None)
    assert [(c.slot, c.index) for c in cells if "cond" in c.marks] == [(600, 300)]
    assert [(c.slot, c.index) for c in cells if "blocking" in c.marks] == [(601, 300)]
    assert sum("finished" in c.marks for c in cells) == 601  # slots 0..600: FUNC 300 itself finished


def test_windowed_cells_equal_the_window_of_every_cell() -> None:
    # the fast path builds only the kept cells; it must draw exactly what windowing all cells draws
    q = [t for k in range(300) for t in (task(2 * k, k), task(2 * k + 1, k, "EVENT_WAIT"))]
    cores = [
        core(e1=150, op_state=2, m=(150, 40)),
        core(role="bystander", cond_index=44, cond_state="OP_FINISHED", blocking="task 300 …"),
        core(cond_index=7, cond_state="OP_FINISHED"),
        core(op_state=4, state_name="SK_ENTRY_FINISHED"),
        core(),
    ]
    for f in cores:
        for max_cells, radius in ((40, 4), (10, 1), (1000, 4)):
            want = window(core_cells(q, f, 150), max_cells=max_cells, radius=radius)
            assert windowed_cells(q, f, 150, max_cells=max_cells, radius=radius) == want
