"""Triage records built through ``frozen_builder`` (SkNode of an SK's fused nodes, the DFX code ranges
of attribution) equal the records the frozen ``__init__`` made; the oracles are the loops they replaced,
kept here verbatim, over hand-written nodes (positions printed and not, zero sizes and entries)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.fused_nodes import FusedNode
from skdbg.parsers.node_format import Node
from skdbg.parsers.sk_records import DfxNode, Incident
from skdbg.triage.attribution import _Range, _ranges
from skdbg.triage.skview import SkInstance, SkNode

LOG = "sk_meta/48213/model_0/sk_fused_nodes.log"
SKLOG = "sk_meta/48213/model_0/super_kernel.log"


def fused(i: int, position: int | None) -> FusedNode:
    src = Source(LOG, 20 + i)
    return FusedNode(
        src, position, Node(src, "kernel", 300 + i, 1, None, None, "current", f"k{i}", func_name=f"k{i}")
    )


def test_nodes_equal_the_keyword_records() -> None:
    block = SimpleNamespace(nodes=[fused(0, 4), fused(1, None), fused(2, 0)])
    inst = SkInstance(model=cast(Any, None), scope_id=3, block=cast(Any, block))
    want = [
        SkNode(4, block.nodes[0].node, block.nodes[0].src),
        SkNode(1, block.nodes[1].node, block.nodes[1].src),
    ]
    want.append(SkNode(0, block.nodes[2].node, block.nodes[2].src))
    got = inst.nodes
    assert got == want
    assert [hash(n) for n in got] == [hash(n) for n in want]
    with pytest.raises(AttributeError):
        got[0].position = 9  # type: ignore[misc]
    assert inst.node_by_id(301) is got[1] and inst.node_by_id(999) is None


def dfx(i: int, aic: int, aiv: int, entry_aic: tuple[int, ...], entry_aiv: tuple[int, ...]) -> DfxNode:
    e_aic = cast(tuple[int, int, int, int], (*entry_aic, 0, 0, 0, 0)[:4])
    e_aiv = cast(tuple[int, int, int, int], (*entry_aiv, 0, 0, 0, 0)[:4])
    return DfxNode(
        Source(SKLOG, 40 + i), i, 0, 0, aic, aiv, None, None, None, None, None, None, e_aic, e_aiv, ()
    )


def reference_ranges(nodes: list[DfxNode], qtype: str | None) -> list[_Range]:
    """The DFX branch of ``_ranges`` as it was."""
    types = (qtype,) if qtype is not None else ("aic", "aiv")
    out: list[_Range] = []
    for n in nodes:
        for t in types:
            size = n.aic_size if t == "aic" else n.aiv_size
            entries = n.entry_aic if t == "aic" else n.entry_aiv
            for e in entries:
                if e and size:
                    out.append(_Range(n.node, e, e + size, "dfx"))
    return out


ENTRY = st.sampled_from([0, 0x1000, 0x2000, 0x2400])


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 0x80, 0x200]),
            st.sampled_from([0, 0x40]),
            st.lists(ENTRY, max_size=4),
            st.lists(ENTRY, max_size=4),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([None, "aic", "aiv"]),
)
def test_dfx_ranges_equal_the_keyword_loop(
    specs: list[tuple[int, int, list[int], list[int]]], qtype: str | None
) -> None:
    nodes = [dfx(i, a, v, tuple(ea), tuple(ev)) for i, (a, v, ea, ev) in enumerate(specs)]
    inc = cast(Incident, SimpleNamespace(dfx=SimpleNamespace(nodes=tuple(nodes))))
    assert _ranges(inc, None, qtype) == reference_ranges(nodes, qtype)


def test_dfx_ranges_hand_written() -> None:
    nodes = [dfx(0, 0x80, 0, (0x1000, 0x2000), (0x3000,)), dfx(1, 0, 0x40, (0x5000,), (0, 0x6000))]
    inc = cast(Incident, SimpleNamespace(dfx=SimpleNamespace(nodes=tuple(nodes))))
    assert _ranges(inc, None, None) == [
        _Range(0, 0x1000, 0x1080, "dfx"),
        _Range(0, 0x2000, 0x2080, "dfx"),
        _Range(1, 0x6000, 0x6040, "dfx"),
    ]


def _reference_occurrence(inst: SkInstance, node: SkNode) -> int | None:
    """``SkInstance.occurrence_of`` as it was: a walk of the kernels per call."""
    if not node.is_kernel:
        return None
    k = 0
    for n in [n for n in inst.nodes if n.node.is_kernel]:
        if n.position == node.position:
            return k
        if n.func_name == node.func_name:
            k += 1
    return None


def _any_node(i: int, position: int | None, kind: str, name: str | None) -> FusedNode:
    src = Source(LOG, 20 + i)
    node_id = 300 + i % 5  # nodeIds repeat in a long list: the first one counts
    return FusedNode(src, position, Node(src, kind, node_id, 1, None, None, "current", "t", func_name=name))


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 6)),  # positions repeat, or come from the order
            st.sampled_from(("kernel", "kernel", "event")),
            st.sampled_from(("MatA", "AddB", None)),
        ),
        max_size=14,
    ),
    st.lists(st.tuples(st.integers(0, 16), st.sampled_from(("MatA", "AddB", "Nope", None))), max_size=8),
    st.booleans(),
)
def test_child_resolution_equals_the_walks_per_task(
    rows: list[tuple[int | None, str, str | None]], asks: list[tuple[int, str | None]], reordered: bool
) -> None:
    """The lookups made once give what walking the nodes per task gave: the occurrence of every node
    (odd lists included: repeated positions, nameless kernels, events), and the resolution of task
    indices by position and by origin name, reordered or not (§3.5)."""
    block = SimpleNamespace(
        nodes=[_any_node(i, *row) for i, row in enumerate(rows)], name=SimpleNamespace(scope_name="s")
    )
    model = cast(Any, SimpleNamespace(model=SimpleNamespace(model_id="m")))
    waits = (cast(Any, object()),) if reordered else ()
    inst = SkInstance(model=model, scope_id=3, block=cast(Any, block), deferred_waits=waits)
    for node in inst.nodes:
        assert inst.occurrence_of(node) == _reference_occurrence(inst, node)
    for node_id in {n.node_id for n in inst.nodes} | {-1}:
        # the first node with that nodeId, as the walk found it
        assert inst.node_by_id(node_id) is next((n for n in inst.nodes if n.node_id == node_id), None)
    assert inst.kernels == [n for n in inst.nodes if n.node.is_kernel]
    for k, origin in asks:
        # the resolution as it was: the first node at position k, the kernels named ``origin`` in order
        by_pos = next((n for n in inst.nodes if n.position == k), None)
        named = [n for n in inst.kernels if n.func_name == origin] if origin else []
        got = inst.child(k, origin)
        if origin and len(named) == 1:
            assert (got.identity, got.position) == ("by_name", named[0].position)
            assert got.occurrence == _reference_occurrence(inst, named[0])
        elif origin and len(named) > 1:
            ok = not reordered and by_pos is not None and by_pos in named
            assert got.identity == ("by_position" if ok else "ambiguous")
        elif by_pos is not None and not reordered:
            assert (got.identity, got.position) == ("by_position", by_pos.position)
            assert (got.node_id, got.occurrence) == (by_pos.node_id, _reference_occurrence(inst, by_pos))
        else:
            assert got.identity == "unresolved"
