"""``fnodes_of`` builds FNode positionally (frozen_builder); the oracle is the keyword construction it
replaced, kept here verbatim, over nodes of every kind (kernel, event, memory write/wait, default) with
collective and plain kernel names, missing names and event types."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.node_format import Node
from skdbg.triage.fragment import FNode, fnodes_of
from skdbg.triage.skview import SkInstance, SkNode

LOG = "sk_meta/48213/model_0/sk_fused_nodes.log"
KINDS = ("kernel", "event", "memory_write", "memory_wait", "default")


def reference(inst: Any) -> tuple[FNode, ...]:
    """The keyword construction ``fnodes_of`` used before."""
    out = []
    for n in inst.nodes:
        nd = n.node
        et = nd.event_type
        if nd.kind == "memory_write":
            et = "MemoryWrite"
        elif nd.kind == "memory_wait":
            et = "MemoryWait"
        out.append(
            FNode(
                node_id=nd.node_id,
                position=n.position,
                kind=nd.kind,
                stream_id=nd.stream_id,
                event_type=et if nd.kind != "kernel" and nd.kind != "default" else None,
                event_id=nd.event_id,
                func_name=nd.func_name,
                collective=n.is_collective,
                src=n.src,
            )
        )
    return tuple(out)


def sk_node(
    position: int, kind: str, func: str | None, event_type: str | None, event_id: int | None
) -> SkNode:
    src = Source(LOG, 10 + position)
    node = Node(
        src,
        kind,
        100 + position,
        position % 3 or None,
        None,
        None,
        "current",
        f"node {position}",
        func_name=func,
        event_type=event_type,
        event_id=event_id,
    )
    return SkNode(position, node, src)


def inst_of(nodes: list[SkNode]) -> SkInstance:
    return cast(SkInstance, SimpleNamespace(nodes=nodes, derived={}))


def test_every_kind_from_hand_written_nodes() -> None:
    nodes = [
        sk_node(0, "kernel", "static_kernel_GroupedMatmul_hash", None, None),
        sk_node(1, "kernel", "MatmulAllReduce-v2_hash", None, None),  # collective (the dash is dropped)
        sk_node(2, "event", None, "EventWait", 7),
        sk_node(3, "memory_write", None, None, None),
        sk_node(4, "memory_wait", None, "EventNotify", 2),
        sk_node(5, "default", "x", "EventReset", 1),
        sk_node(6, "kernel", None, "EventNotify", 3),
    ]
    got = fnodes_of(inst_of(nodes))
    assert got == reference(inst_of(nodes))
    assert [f.event_type for f in got] == [None, None, "EventWait", "MemoryWrite", "MemoryWait", None, None]
    assert [f.collective for f in got] == [False, True, False, False, False, False, False]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(KINDS),
            st.one_of(st.none(), st.sampled_from(["hcom_allgather_1", "add_kernel", "AllGatherMatmul", ""])),
            st.one_of(st.none(), st.sampled_from(["EventNotify", "EventWait", "EventReset", "Unknown"])),
            st.one_of(st.none(), st.integers(0, 9)),
        ),
        max_size=12,
    )
)
def test_generated_nodes_match_the_keyword_construction(specs: list[tuple[str, Any, Any, Any]]) -> None:
    nodes = [sk_node(i, *spec) for i, spec in enumerate(specs)]
    assert fnodes_of(inst_of(nodes)) == reference(inst_of(nodes))
