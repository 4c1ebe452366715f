"""The triage stages' cheaper paths against the plain code they replaced (issue 18, analyze CPU).

Each fast path keeps the general form as its oracle here: the slice-and-search neighbour lookup
of a barrier.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.triage.fragment import func_neighbours


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
