"""The core × task timeline of the faulting SK, as plain data (no Rich, no Textual).

Why data first: the picture must say exactly what the analysis JSON says — per exception core, the
tasks of the queue it runs (AIC cores the AIC queue, AIV cores the AIV queue, in slot order), which
of them finished, which one COND / the op-trace state points at, which tasks the faulting PC lies in,
and for a bystander the blocking wait it is stuck on (X5). Tests check this module from hand-built
inputs; :mod:`skdbg.pictures.render` only draws it.

Long queues (an SK of 2,000 children has thousands of tasks per queue) are windowed: every marked
task keeps ``radius`` neighbours each side, the queue's head and tail stay, and each run of hidden
tasks becomes one gap cell that says how many it hides (the picture states it in its notes).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skdbg.triage.attribution import WAIT_SYNC_KINDS
from skdbg.triage.model import CoreFinding, FaultInfo, Verdict
from skdbg.triage.skview import SkInstance, SkTask

#: marks a task can carry, in drawing priority (the first one present picks the cell's style)
MARKS = ("pc", "cond", "blocking", "suspect", "finished")
#: op states (SkOpTraceType): 2 = OP_LAUNCHED (running), 3 = OP_FINISHED
OP_LAUNCHED, OP_FINISHED = 2, 3
#: queues longer than this are windowed
MAX_CELLS = 40
RADIUS = 4
KIND_ABBREV = {
    "FUNC": "f",
    "SYNC": "s",
    "PRELOAD": "p",
    "EVENT_NOTIFY": "n",
    "EVENT_WAIT": "w",
    "EVENT_RESET": "r",
}
_BLOCKING_TASK = re.compile(r"^task (\d+)\b")


@dataclass(frozen=True, slots=True)
class TaskCell:
    """One task of a core's queue: ``index`` is the node index the handler calls node[k]."""

    slot: int
    index: int
    kind: str
    marks: frozenset[str] = frozenset()
    name: str | None = None

    @property
    def label(self) -> str:
        return f"{KIND_ABBREV.get(self.kind, '?')}{self.index}"


@dataclass(frozen=True, slots=True)
class GapCell:
    """A run of ``hidden`` tasks left out of a long queue (slots ``first``..``last``)."""

    first: int
    last: int
    finished: bool

    @property
    def hidden(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True, slots=True)
class CoreRow:
    """One exception core and its queue. ``queue`` is None when the core type is unknown."""

    core_id: int
    core_type: str | None
    role: str
    queue: str | None
    cells: tuple[TaskCell | GapCell, ...]
    total: int
    summary: str


@dataclass(frozen=True, slots=True)
class Timeline:
    title: str
    rows: tuple[CoreRow, ...]
    notes: tuple[str, ...] = ()

    @property
    def windowed(self) -> bool:
        return any(isinstance(c, GapCell) for r in self.rows for c in r.cells)


def queue_of(core_type: str | None) -> str | None:
    """AIC cores run the AIC queue, AIV cores the AIV queue (a mix core's type is printed per core)."""
    t = (core_type or "").strip().upper()
    return "aic" if t == "AIC" else "aiv" if t == "AIV" else None


def current_task(core: CoreFinding) -> tuple[int | None, int | None]:
    """(task index, op state) the core's trace points at, by full index: the op-trace task (L1, whose
    opId is the whole index), else the COND task the attribution resolved (L3, or its one candidate).
    None when only the raw COND index is known: it keeps the low 8 bits of the index (T5), see
    :func:`cond_candidates`."""
    state = core.op_state if core.op_state is not None else _state_number(core.cond_state)
    if core.e1 is not None:
        return core.e1, core.op_state
    cond_state = _state_number(core.cond_state)
    if core.e3 is not None:
        return core.e3, cond_state
    if len(core.e3_candidates) == 1:
        return core.e3_candidates[0], cond_state
    return None, state


def cond_candidates(queue: Sequence[SkTask], cond_index: int) -> list[SkTask]:
    """FUNC tasks the raw COND index can mean: the index itself in a queue whose indices all fit in
    8 bits; beyond 255 every index with the same low 8 bits (trap T5: the index wraps)."""
    funcs = [t for t in queue if t.type == "FUNC"]
    if all(t.index < 256 for t in funcs):
        return [t for t in funcs if t.index == cond_index]
    return [t for t in funcs if t.index & 0xFF == cond_index & 0xFF]


def _state_number(name: str | None) -> int | None:
    return {
        "ORIGIN": 0,
        "SK_ENTRY_LAUNCHED": 1,
        "OP_LAUNCHED": 2,
        "OP_FINISHED": 3,
        "SK_ENTRY_FINISHED": 4,
    }.get(name or "")


def blocking_task(core: CoreFinding) -> int | None:
    """The task index of a bystander's blocking wait (``blocking`` starts "task <k> …", X5)."""
    if core.blocking is None:
        return None
    m = _BLOCKING_TASK.match(core.blocking)
    return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class _CoreMarks:
    """One core's view of its queue: which tasks finished (a slot bound) and the other marks by
    position in the queue — computed without a record per task, so a long queue costs little."""

    cur_slot: int | None
    inclusive: bool  # the task at cur_slot finished too (state OP_FINISHED)
    all_done: bool  # state 4: the SK entry finished on this core
    marks: dict[int, frozenset[str]]

    def finished(self, t: SkTask) -> bool:
        if self.all_done:
            return True
        cs = self.cur_slot
        return cs is not None and (t.slot < cs or (t.slot == cs and self.inclusive))


def _core_marks(queue: Sequence[SkTask], core: CoreFinding, suspect: int | None) -> _CoreMarks:
    cur, state = current_task(core)
    cur_slot = next((t.slot for t in queue if t.index == cur and t.type == "FUNC"), None)
    if cur_slot is None and cur is not None:
        cur_slot = next((t.slot for t in queue if t.index == cur), None)
    conds: set[int] = set() if cur is None else {cur}
    block = blocking_task(core)
    if cur is None and core.cond_index is not None:
        cands = cond_candidates(queue, core.cond_index)
        if len(cands) > 1 and block is not None:
            cands = _before_blocking(queue, cands, block)
        conds = {t.index for t in cands}
        if len(cands) == 1:  # unambiguous: the raw COND index is the task
            cur, cur_slot = cands[0].index, cands[0].slot
            state = _state_number(core.cond_state)
    pcs = set(core.m)
    wanted = conds | pcs | {k for k in (block, suspect) if k is not None}
    marks: dict[int, frozenset[str]] = {}
    for i, t in enumerate(queue):
        if t.index not in wanted:
            continue
        m: set[str] = set()
        if t.index in conds and (t.type == "FUNC" or t.slot == cur_slot):
            m.add("cond")
        if t.index in pcs and t.type == "FUNC":
            m.add("pc")
        if t.index == block and t.type != "FUNC":
            m.add("blocking")
        if t.index == suspect and t.type == "FUNC":
            m.add("suspect")
        if m:
            marks[i] = frozenset(m)
    return _CoreMarks(cur_slot, state == OP_FINISHED, state == 4 and cur is None, marks)


_FINISHED = frozenset({"finished"})
_NONE: frozenset[str] = frozenset()


def _cell(t: SkTask, i: int, cm: _CoreMarks, names: dict[int, str]) -> TaskCell:
    m = cm.marks.get(i, _NONE)
    if cm.finished(t):
        m = m | _FINISHED
    return TaskCell(t.slot, t.index, t.type, m, names.get(t.index))


def core_cells(
    queue: Sequence[SkTask], core: CoreFinding, suspect: int | None, names: dict[int, str] | None = None
) -> list[TaskCell]:
    """Every task of ``queue`` (in slot order) with its marks for ``core``.

    finished: every task before the current one in slot order (and the current one itself when its
    state is OP_FINISHED); a state-4 core (SK entry finished) finished its whole queue. cond: the
    task COND / the op-trace state names. pc: every task the PC matches (M(c), T4: more than one when
    children share a binary). blocking: the bystander's first blocking wait. suspect: the verdict's child."""
    cm = _core_marks(queue, core, suspect)
    return [_cell(t, i, cm, names or {}) for i, t in enumerate(queue)]


def windowed_cells(
    queue: Sequence[SkTask],
    core: CoreFinding,
    suspect: int | None,
    names: dict[int, str] | None = None,
    *,
    max_cells: int = MAX_CELLS,
    radius: int = RADIUS,
) -> list[TaskCell | GapCell]:
    """``window(core_cells(...))`` without building a cell for every hidden task (a 2,000-child SK
    queues thousands per core)."""
    cm = _core_marks(queue, core, suspect)
    nm = names or {}
    n = len(queue)
    if n <= max_cells:
        return [_cell(t, i, cm, nm) for i, t in enumerate(queue)]
    keep = _kept(n, cm.marks, radius)
    out: list[TaskCell | GapCell] = []
    i = 0
    while i < n:
        if i in keep:
            out.append(_cell(queue[i], i, cm, nm))
            i += 1
            continue
        j = i
        while j < n and j not in keep:
            j += 1
        out.append(GapCell(queue[i].slot, queue[j - 1].slot, all(cm.finished(t) for t in queue[i:j])))
        i = j
    return out


def _kept(n: int, marked: Iterable[int], radius: int) -> set[int]:
    """Positions a window keeps: the first two, the last two, and ``radius`` around every mark."""
    keep: set[int] = set(range(min(2, n))) | set(range(max(0, n - 2), n))
    for i in marked:
        keep.update(range(max(0, i - radius), min(n, i + radius + 1)))
    return keep


def _is_wait(t: SkTask) -> bool:
    """A task that makes a core wait (X5): EVENT_WAIT, or SYNC ALL_SYNC / wait AIC→AIV / wait AIV→AIC."""
    return t.type == "EVENT_WAIT" or (t.type == "SYNC" and t.args in WAIT_SYNC_KINDS)


def _before_blocking(queue: Sequence[SkTask], cands: list[SkTask], block: int) -> list[SkTask]:
    """The COND candidates consistent with the bystander's blocking wait: X5 names the first waiting
    task after the core's last finished FUNC, so a candidate fits only when the first wait after it
    is the named one. Beyond 255 tasks this is what tells the wrapped index apart (T5)."""
    waits = sorted((t for t in queue if _is_wait(t)), key=lambda t: t.slot)
    slots = [w.slot for w in waits]
    out = []
    for c in cands:
        k = bisect.bisect_right(slots, c.slot)
        if k < len(waits) and waits[k].index == block:
            out.append(c)
    return out


def window(
    cells: Sequence[TaskCell], *, max_cells: int = MAX_CELLS, radius: int = RADIUS
) -> list[TaskCell | GapCell]:
    """Keep every cell of a short queue; of a long one keep the head, the tail and ``radius`` cells
    around every marked cell other than "finished", replacing each hidden run by a :class:`GapCell`."""
    if len(cells) <= max_cells:
        return list(cells)
    keep = _kept(len(cells), (i for i, c in enumerate(cells) if c.marks - _FINISHED), radius)
    out: list[TaskCell | GapCell] = []
    i = 0
    while i < len(cells):
        if i in keep:
            out.append(cells[i])
            i += 1
            continue
        j = i
        while j < len(cells) and j not in keep:
            j += 1
        run = cells[i:j]
        out.append(GapCell(run[0].slot, run[-1].slot, all("finished" in c.marks for c in run)))
        i = j
    return out


def _summary(core: CoreFinding, queue: str | None, total: int) -> str:
    parts = [f"core {core.core_id} {core.core_type or '?'} {core.role}"]
    if queue is None:
        parts.append("queue unknown (core type not printed)")
    else:
        parts.append(f"{queue.upper()} queue, {total} tasks")
    if core.cond_state is not None:
        parts.append(f"COND {core.cond_state} index {core.cond_index}")
    elif core.state_name is not None:
        parts.append(f"op trace {core.state_name}" + (f" task {core.e1}" if core.e1 is not None else ""))
    if core.current_pc is not None:
        parts.append(f"PC 0x{core.current_pc:x}" + (f" ({core.pc_location})" if core.pc_location else ""))
    if core.blocking:
        parts.append(f"blocked: {core.blocking}")
    return " · ".join(parts)


def build_timeline(
    inst: SkInstance | None,
    fault: FaultInfo,
    verdict: Verdict | None = None,
    *,
    max_cells: int = MAX_CELLS,
    radius: int = RADIUS,
) -> Timeline:
    """The timeline of the faulting SK ``inst`` for the exception cores of ``fault``."""
    suspect = verdict.suspect.task_index if verdict is not None and verdict.suspect is not None else None
    name = (inst.sk_name if inst is not None else None) or fault.sk_name or "?"
    title = f"core × task timeline — SK {name}" + (f" (scope {inst.scope_id})" if inst is not None else "")
    notes: list[str] = []
    if inst is None or not inst.tasks:
        notes.append(
            "no task queue for this SK (sk_task_queue.json / sk_device_args.log): tasks cannot be drawn"
        )
    if not fault.cores:
        notes.append("no exception core was reported: no row to draw")
    names = _kernel_names(inst)
    queues = {q: inst.queue(q) for q in ("aic", "aiv")} if inst is not None else {}
    rows: list[CoreRow] = []
    for core in fault.cores:
        q = queue_of(core.core_type)
        tasks = queues.get(q, []) if q is not None else []
        cells = windowed_cells(tasks, core, suspect, names, max_cells=max_cells, radius=radius)
        summary = _summary(core, q, len(tasks))
        n_cond = sum(1 for c in cells if isinstance(c, TaskCell) and "cond" in c.marks)
        if n_cond > 1:
            summary += f" · COND's 8-bit index fits {n_cond} tasks (T5): all marked ▶, progress unknown"
        rows.append(
            CoreRow(
                core_id=core.core_id,
                core_type=core.core_type,
                role=core.role,
                queue=q,
                cells=tuple(cells),
                total=len(tasks),
                summary=summary,
            )
        )
    tl = Timeline(title=title, rows=tuple(rows), notes=tuple(notes))
    if tl.windowed:
        notes.append(
            f"long queues compressed: head, tail and {radius} tasks around every mark are shown; "
            "«…n…» stands for n hidden tasks"
        )
        tl = Timeline(title=title, rows=tl.rows, notes=tuple(notes))
    return tl


def _kernel_names(inst: SkInstance | None) -> dict[int, str]:
    """Task index → kernel funcName where the join is direct (device args / task-queue nodeIds)."""
    if inst is None:
        return {}
    by_node = {n.node_id: n.func_name for n in inst.nodes if n.is_kernel and n.func_name}
    out: dict[int, str] = {}
    for t in inst.tasks:
        if t.type == "FUNC" and t.node_id is not None and t.node_id in by_node:
            out.setdefault(t.index, by_node[t.node_id])
    return out


def marked(rows: Iterable[CoreRow], mark: str) -> list[tuple[int, int]]:
    """(core id, task index) of every cell carrying ``mark`` (for tests and the copy action)."""
    return [
        (r.core_id, c.index) for r in rows for c in r.cells if isinstance(c, TaskCell) and mark in c.marks
    ]


__all__ = [
    "MARKS",
    "CoreRow",
    "GapCell",
    "TaskCell",
    "Timeline",
    "blocking_task",
    "build_timeline",
    "core_cells",
    "current_task",
    "marked",
    "queue_of",
    "window",
    "windowed_cells",
]
