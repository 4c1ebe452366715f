"""The whole-queue reading of sk_task_queue.json (``task_queue._tasks_bulk``) against the per-task one.

The per-task loop (``_task_plain``, else the checked ``_task``) is the oracle: a document read with the
bulk path allowed must give the same result — records, citations (json_path), gaps, Unrecognized — or the
same ParseError as with it switched off. Inputs are hand-written §3.10 entries with single-member
changes (wrong types, bools, nulls, missing/extra members, hex strings with commas, blanks, upper-case
``0X``, underscores, counts that disagree), mixed into queues by hypothesis.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import task_queue
from skdbg.parsers.common import ParseError
from skdbg.parsers.task_queue import TaskQueueFile, task_queue_from_json
from tests.support.task_entries import DROP, task_entry

#: single-member changes; the first ones keep the entry in the bulk path's shape
CHANGES: list[dict[str, Any]] = [
    {},
    {"type": "SYNC", "entryCnt": 0, "entries": []},
    {"entryCnt": 7, "entries": ["0x1", "0x2", "0x3", "0x4"]},
    {"entries": ["0x124080B80200", "0xabcdef"]},
    {"debugOptions": -3},
    {"debugOptions": 0x7F},
    {"args": "0x0"},
    {"type": "EVENT_WAIT"},
    # from here on the bulk path must step aside
    {"type": "NEW_KIND"},
    {"type": 3},
    {"type": ["FUNC"]},
    {"nodeIndex": True},
    {"nodeIndex": 4.0},
    {"nodeIndex": DROP},
    {"numBlocks": None},
    {"numBlocks": DROP},
    {"entryCnt": False},
    {"entryCnt": 3},
    {"entryCnt": -1, "entries": []},
    {"debugOptions": "5"},
    {"debugOptions": DROP},
    {"args": 18},
    {"args": "0X10"},
    {"args": "0x"},
    {"args": " 0x10"},
    {"args": "0x10 "},
    {"args": "0x1_0"},
    {"args": "0x_10"},
    {"args": "0x0x10"},
    {"args": "0x1,0x2"},
    {"args": "0xZ"},
    {"args": DROP},
    {"entries": ["0x1,0x2"]},
    {"entries": ["0x1", "0x2,"]},
    {"entries": [",0x1", "0x2"]},
    {"entries": ["0x1", 2]},
    {"entries": ["0x1", None]},
    {"entries": ["0x1", "0xg"]},
    {"entries": ["0x\u0661", "0x2"]},  # a non-ASCII digit int() would read
    {"entries": "0x1,0x2"},
    {"entries": {"0": "0x1", "1": "0x2"}},
    {"entries": DROP},
    {"extra": 1},
]


def _doc(tasks: list[Any], task_cnt: int | None = None) -> dict[str, Any]:
    que: dict[str, Any] = {"taskCnt": len(tasks) if task_cnt is None else task_cnt, "taskInfos": tasks}
    return {
        "version": "1.0",
        "modelId": "48_1",
        "scopeCount": 1,
        "scopes": [{"scopeId": 7, "taskQueues": {"aic": {"numBlocks": 24, "funcCnt": 1, "taskQue": que}}}],
    }


def _read(doc: Any, *, bulk: bool, monkeypatch: pytest.MonkeyPatch) -> TaskQueueFile | str:
    """The result, or the ParseError's text; ``bulk=False`` switches the whole-queue path off."""
    with monkeypatch.context() as m:
        if not bulk:
            m.setattr(task_queue, "_tasks_bulk", lambda *a: None)
        try:
            return task_queue_from_json(copy.deepcopy(doc), "q.json")
        except ParseError as exc:
            return f"ParseError: {exc}"


def _same(doc: Any, monkeypatch: pytest.MonkeyPatch) -> TaskQueueFile | str:
    fast = _read(doc, bulk=True, monkeypatch=monkeypatch)
    assert fast == _read(doc, bulk=False, monkeypatch=monkeypatch)
    return fast


@pytest.mark.parametrize("change", CHANGES)
def test_one_changed_entry_among_usual_ones(change: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [task_entry(nodeIndex=k) for k in range(3)]
    tasks.insert(1, task_entry(**change))
    _same(_doc(tasks), monkeypatch)


def test_bulk_path_reads_the_usual_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [task_entry(**CHANGES[k]) for k in range(8)]
    calls: list[int] = []
    real = task_queue._tasks_bulk

    def spy(*args: Any) -> Any:
        out = real(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(task_queue, "_tasks_bulk", spy)
    res = task_queue_from_json(_doc(tasks), "q.json")
    assert calls == [True]  # the bulk path answered (so the hand values below are its reading)
    (t0, t1, t2, _, t4, t5, _, t7) = res.scopes[0].aic.tasks  # type: ignore[union-attr]
    assert (t0.args, t0.debug_options, t0.debug_flags, t0.entries) == (
        0x12C110008000,
        5,
        ("disable_dcci", "dcci_before_child"),
        (0x124080B80200, 0x124080B80400),
    )
    assert (t0.src.json_path, t7.src.json_path, t7.position) == (
        "scopes[0].taskQueues.aic.taskQue.taskInfos[0]",
        "scopes[0].taskQueues.aic.taskQue.taskInfos[7]",
        7,
    )
    assert (t1.type, t1.entries, t2.entry_cnt, t2.entries) == ("SYNC", (), 7, (1, 2, 3, 4))
    assert (t4.debug_options, t4.debug_flags, t5.debug_flags[-1]) == (-3, (), "bit_0x40")
    assert res.gaps == [] and res.unrecognized == []


def test_counts_and_empty_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    res = _same(_doc([task_entry()], task_cnt=2), monkeypatch)
    assert isinstance(res, TaskQueueFile) and [g.kind for g in res.gaps] == ["count_mismatch"]
    _same(_doc([]), monkeypatch)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(range(len(CHANGES))), max_size=12), st.integers(0, 5))
def test_mixed_queues_read_alike(picks: list[int], node: int) -> None:
    tasks = [task_entry(**{"nodeIndex": node + k, **CHANGES[i]}) for k, i in enumerate(picks)]
    with pytest.MonkeyPatch.context() as mp:
        _same(_doc(tasks), mp)
