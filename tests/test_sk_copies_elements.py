"""The tuples of records inside a handler record are re-sourced element by element in place
(``sk_copies._element_expr``); the oracle is the record rebuilt by hand with ``dataclasses.replace``
(every Source swapped through the map, every other field kept), and the dispatch through ``R`` for an
element that is not exactly the annotated class (its rule, or KeyError: "not a copy")."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.sk_copies import resource
from skdbg.parsers.sk_records import DfxNode, DfxTable, QueueTask, TaskQueue

SKLOG = "sk_meta/48213/model_0/super_kernel.log"
PLOG = "log/plog/plog-48213_1.log"


def twin_of(src: Source) -> Source:
    return Source(PLOG, (src.line or 0) + 1000)


def smap_of(*sources: Source) -> dict[int, Source]:
    return {id(s): twin_of(s) for s in sources}


def task(line: int, slot: int) -> QueueTask:
    return QueueTask(
        Source(SKLOG, line), slot, slot * 2, "FUNC" if slot % 2 else "WAIT", slot + 1, 0x1000 + slot
    )


def node(line: int, n: int) -> DfxNode:
    names = (("binHdl", Source(SKLOG, line + 1)), ("originName", Source(SKLOG, line + 2)))
    return DfxNode(
        Source(SKLOG, line),
        n,
        0xA0 + n,
        0xB0 + n,
        64,
        32,
        8,
        None,
        4,
        "origin",
        f"op{n}",
        None,
        (1, 0, 0, 0),
        (0, 0, 0, 0),
        names,
    )


@given(st.lists(st.integers(min_value=0, max_value=40), max_size=30))
def test_task_queue_elements_are_resourced_like_replace(slots: list[int]) -> None:
    tasks = tuple(task(10 + i, s) for i, s in enumerate(slots))
    table = TaskQueue(Source(SKLOG, 5), "aic", 0x40, len(tasks), tasks)
    smap = smap_of(table.src, *(t.src for t in tasks))
    want = replace(table, src=twin_of(table.src), tasks=tuple(replace(t, src=twin_of(t.src)) for t in tasks))
    got = resource(table, smap)
    assert got == want
    assert [t.src.file for t in got.tasks] == [PLOG] * len(tasks)


def test_dfx_node_elements_swap_their_named_sources_too() -> None:
    nodes = (node(20, 0), node(30, 1), node(40, 2))
    table = DfxTable(Source(SKLOG, 19), 0x80, 3, nodes)
    smap = smap_of(table.src, *(n.src for n in nodes), *(s for n in nodes for _, s in n.sources))
    want = replace(
        table,
        src=twin_of(table.src),
        nodes=tuple(
            replace(n, src=twin_of(n.src), sources=tuple((k, twin_of(s)) for k, s in n.sources))
            for n in nodes
        ),
    )
    assert resource(table, smap) == want


def test_an_unmapped_element_source_is_not_a_copy() -> None:
    tasks = (task(10, 1), task(11, 2))
    table = TaskQueue(Source(SKLOG, 5), "aic", 0x40, 2, tasks)
    with pytest.raises(KeyError):
        resource(table, smap_of(table.src, tasks[0].src))  # the second task's line has no twin


@dataclass(frozen=True)
class _OtherTask(QueueTask):  # not a handler record: no re-sourcing rule
    pass


def test_an_element_of_another_class_goes_through_the_dispatch() -> None:
    odd = _OtherTask(Source(SKLOG, 11), 1, 2, "FUNC", 1, 0)
    table = TaskQueue(Source(SKLOG, 5), "aic", 0x40, 2, (task(10, 1), odd))
    with pytest.raises(KeyError):  # the dispatch has no rule for it: the caller parses the plog instead
        resource(table, smap_of(table.src, table.tasks[0].src, odd.src))
