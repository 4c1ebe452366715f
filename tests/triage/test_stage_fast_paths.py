"""The triage stages' cheaper paths against the plain code they replaced (issue 18, analyze CPU).

Each fast path keeps the general form as its oracle here: the slice-and-search neighbour lookup
of a barrier, the
timestamp map of every scanned plog line, the substring test per collective marker,
the keyword construction of a task, the
citation index with one (file, line) key per scanned plog line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.fsguard import real_path
from skdbg.parsers.node_format import Node
from skdbg.parsers.task_queue import QueueTask
from skdbg.triage.context import open_context
from skdbg.triage.fragment import func_neighbours
from skdbg.triage.localize import _times_of_lines, _ts_of
from skdbg.triage.skview import COLLECTIVE_MARKERS, SkNode, SkTask, _from_tq

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


@dataclass(frozen=True)
class _Task:
    slot: int
    type: str


def _slice_neighbours(q: list[_Task], i: int) -> tuple[_Task | None, _Task | None]:
    """The barrier neighbours as ``barrier_groups_of`` searched them before (the oracle)."""
    prev = next((x for x in reversed(q[:i]) if x.type == "FUNC"), None)
    nxt = next((x for x in q[i + 1 :] if x.type == "FUNC"), None)
    return prev, nxt


_TYPES = st.sampled_from(["FUNC", "SYNC", "PRELOAD", "EVENT_NOTIFY", "EVENT_WAIT", "EVENT_RESET"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TYPES, max_size=40))
def test_func_neighbours_match_the_slice_search(types: list[str]) -> None:
    q = [_Task(i, t) for i, t in enumerate(types)]
    before, after = func_neighbours(q)
    assert [(before[i], after[i]) for i in range(len(q))] == [_slice_neighbours(q, i) for i in range(len(q))]


def test_func_neighbours_on_a_hand_written_queue() -> None:
    """FUNC SYNC FUNC SYNC PRELOAD: a SYNC sees the FUNC on each side; the last has none after it."""
    q = [_Task(i, t) for i, t in enumerate(["SYNC", "FUNC", "SYNC", "FUNC", "SYNC", "PRELOAD"])]
    before, after = func_neighbours(q)
    assert [b.slot if b else None for b in before] == [None, None, 1, 1, 3, 3]
    assert [a.slot if a else None for a in after] == [1, 3, 3, None, None, None]


@dataclass(frozen=True)
class _Line:
    src: Source
    ts: datetime | None


@dataclass(frozen=True)
class _Plog:
    """A process's plog evidence as the readers see it: every line a record, none kept as a row."""

    lines: list[_Line]
    sk_rows: tuple[()] = ()

    @property
    def records(self) -> list[_Line]:
        return self.lines


def _every_line_time(plogs: list[_Plog]) -> dict[tuple[str, int], datetime]:
    """The map of every scanned line that localisation built before (the oracle)."""
    out: dict[tuple[str, int], datetime] = {}
    for pe in plogs:
        for line in pe.lines:
            if line.ts is not None and line.src.line is not None:
                out[(line.src.file, line.src.line)] = line.ts
    return out


_SRCS = st.builds(
    Source, st.sampled_from(["log/plog/a.log", "log/plog/b.log"]), st.none() | st.integers(1, 6)
)
_LINES = st.builds(
    _Line, _SRCS, st.none() | st.integers(0, 50).map(lambda s: datetime(2026, 5, 1, 8, 0, s % 60))
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_LINES, max_size=8).map(_Plog), max_size=3), st.lists(_SRCS, max_size=5))
def test_times_of_lines_match_the_map_of_every_line(plogs: list[_Plog], wanted: list[Source]) -> None:
    every = _every_line_time(plogs)
    got = _times_of_lines(cast(Any, plogs), wanted)
    assert got == {k: v for k, v in every.items() if k in {(s.file, s.line) for s in wanted}}
    for s in wanted:  # what localisation asks: the same answer for every fault line
        assert _ts_of(got, s) == _ts_of(every, s)


def test_times_of_lines_hand_written() -> None:
    """A line scanned twice (a copied block): the later stamp wins; a line without a stamp is skipped."""
    a1, a2, b1 = Source("p.log", 1), Source("p.log", 2), Source("q.log", 1)
    t0, t1 = datetime(2026, 5, 1, 8, 0, 0), datetime(2026, 5, 1, 8, 0, 1)
    plogs = [_Plog([_Line(a1, t0), _Line(a2, None), _Line(b1, t0)]), _Plog([_Line(a1, t1)])]
    assert _times_of_lines(cast(Any, plogs), [a1, a2]) == {("p.log", 1): t1}


def _node(kind: str, func_name: str | None) -> SkNode:
    node = Node(Source("f.log", 1), kind, 7, 0, None, None, "x", "x", func_name=func_name)
    return SkNode(0, node, Source("f.log", 1))


def _collective_by_substrings(kind: str, func_name: str | None) -> bool:
    """``is_collective`` as a substring test per marker (the oracle)."""
    name = (func_name or "").lower().replace("-", "")
    return kind == "kernel" and any(m in name for m in COLLECTIVE_MARKERS)


_NAMES = st.none() | st.lists(
    st.sampled_from(
        [*COLLECTIVE_MARKERS, "All-Reduce", "HCCL", "MatMul", "_", "-", "a", "Mc", "2", "reduce"]
    ),
    max_size=4,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["kernel", "event", "memory_wait", "default"]), _NAMES)
def test_is_collective_matches_the_substring_test(kind: str, func_name: str | None) -> None:
    assert _node(kind, func_name).is_collective == _collective_by_substrings(kind, func_name)


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("kernel", "MatmulAllReduce_9f3a", True),
        ("kernel", "all-gather_matmul", True),  # the hyphen is dropped: allgather
        ("kernel", "HcclBroadcast", True),
        ("kernel", "AddCustom_1", False),
        ("event", "AllReduce", False),  # only a kernel is a collective
    ],
)
def test_is_collective_hand_written(kind: str, name: str, expected: bool) -> None:
    assert _node(kind, name).is_collective is expected


def test_task_from_the_queue_names_each_field() -> None:
    """``_from_tq`` builds positionally: every field lands where the keyword form put it (distinct
    values, so a swapped pair of fields shows)."""
    src = Source("sk_task_queue.json", json_path="scopes[0].taskQueues.aiv.taskInfos[3]")
    t = QueueTask(src, 7, "aiv", 3, 11, "FUNC", 2, 1, 5, 0x6, ("dcci",), (0x1000,))
    assert _from_tq(t, 42) == SkTask(
        index=11,
        queue="aiv",
        slot=3,
        type="FUNC",
        args=5,
        debug_options=0x6,
        entries=(0x1000,),
        node_id=42,
        src=src,
        origin="task_queue",
    )


def _flat_plog_index(plogs: list[Any]) -> dict[tuple[str, int], Any]:
    """The citation index as one (resolved file, line) key per scanned line (the oracle)."""
    out: dict[tuple[str, int], Any] = {}
    for pe in plogs:
        for line in pe.lines:
            if line.src.line is not None:
                out[(str(real_path(line.src.file)), line.src.line)] = line
    return out


def _nested_as_flat(index: dict[str, dict[int, Any]]) -> dict[tuple[str, int], Any]:
    return {(f, n): line for f, by_number in index.items() for n, line in by_number.items()}


@pytest.mark.parametrize("scene", ["high-single-stream", "event-bound-split", "non-sk-fault"])
def test_plog_index_holds_what_the_flat_index_held(scene: str) -> None:
    ctx = open_context(SCENES / scene)
    flat = _flat_plog_index(ctx.evidence.plogs)
    assert flat  # the scene has scanned plog lines to cite
    assert _nested_as_flat(ctx._plog_index) == flat
    for (file, number), line in flat.items():  # a citation quotes the same line, however it is spelled
        assert ctx.line_text(Source(file, number)) == ctx.line_text(line.src)


def test_plog_index_two_spellings_of_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One plog reached under two names (a link): the later scanned line of a number wins, as with
    one key per (resolved file, line); a line without a number is not indexed."""
    real = tmp_path / "plog-1.log"
    real.write_text("x\n")
    link = tmp_path / "alias.log"
    link.symlink_to(real)
    first = _Line(Source(str(real), 3), None)
    second = _Line(Source(str(link), 3), None)
    other = _Line(Source(str(link), 4), None)
    early = _Line(Source(str(real), 5), None)  # only under the first name: kept beside the second's
    loose = _Line(Source(str(real), None), None)
    plogs = [_Plog([first, early, loose]), _Plog([second, other])]
    ctx = open_context(SCENES / "non-sk-fault")
    monkeypatch.setattr(type(ctx.evidence), "plogs", property(lambda self: plogs))
    index = ctx._plog_index
    assert _nested_as_flat(index) == _flat_plog_index(plogs)
    assert index[str(real.resolve())] == {3: second, 5: early, 4: other}
