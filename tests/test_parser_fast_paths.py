"""The fast paths of issue 18 that sit beside a general reading: each must give what the general one gives.

* ``node_format``: the current-form kernel node in one match (``_fast_kernel``) vs the field loop;
* ``task_queue``: usual task entries (``_task_plain``) vs the checked reading (``_task``);
* ``binfiles``: the scandir listing vs ``sorted(Path.iterdir())`` + ``is_file``;
* ``bulk``: records built without the frozen ``__init__``.

Expected values are written from artifacts.md §3.5/§3.10/§3.12, not taken from the code.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import node_format
from skdbg.parsers.binfiles import _file_names, load_image_table
from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import ParseError, Source, Unrecognized
from skdbg.parsers.node_format import Node, match_node
from skdbg.parsers.task_queue import _task, _task_plain
from tests.support.task_entries import task_entry

SRC = Source("sk_scope_split.log", 3)
SPEC_KERNEL = (
    "[nodeId:101, streamId:-1, streamIdxInGraph:2, nodeIdxInStream:7] - KernelInfos{funcName:Op_a, "
    "kernelType:MIX_AIC, taskRatio:[1, 2], cap:0x10, numBlocks:24, cubeNum:24, vecNum:007, isScheModeOn:1, "
    "needMixKernelSplit:0, isSimtOp:1, dynUbufSize:0x20, allocUbufSize:64, resolvedNum:2, binHdl:0xAAAAF3C00A50, "
    "funcHdl:0xaaaaf3c01110, launchKernelCfg:0x7, devArgs:0x12c110000000}"
)


SPEC_EVENT = (
    "[nodeId:12, streamId:3, streamIdxInGraph:4, nodeIdxInStream:5, EventWait(eventId:0x1f, eventFlag:0, "
    "eventTaskFlag:1)]"
)


def _general(text: str) -> tuple[Node, int] | str | None:
    node_format._NODE_CACHE.clear()
    try:
        return node_format._match_node_general(text, 0, SRC, text)
    except (ParseError, ValueError) as exc:  # ValueError: a number over 64 bits (lines holding one are
        return f"error: {exc}"  # refused before any grammar by the line layer)


def _via_match_node(text: str) -> tuple[Node, int] | str | None:
    node_format._NODE_CACHE.clear()
    try:
        return match_node(text, 0, SRC)
    except (ParseError, ValueError) as exc:
        return f"error: {exc}"


def test_fast_kernel_spec_example_values() -> None:
    assert node_format._fast_kernel(SPEC_KERNEL, 0) is not None  # the one-match form
    node, end = _via_match_node(SPEC_KERNEL + ": type=KERNEL")  # type: ignore[misc]
    assert end == len(SPEC_KERNEL)
    assert (node.kind, node.form, node.node_id, node.stream_id, node.stream_idx_in_graph) == (
        "kernel",
        "current",
        101,
        -1,
        2,
    )
    assert (node.func_name, node.kernel_type, node.task_ratio, node.cap, node.vec_num) == (
        "Op_a",
        "MIX_AIC",
        (1, 2),
        16,
        7,
    )
    assert (node.is_sche_mode_on, node.need_mix_kernel_split, node.is_simt_op) == (True, False, True)
    assert (node.dyn_ubuf_size, node.alloc_ubuf_size, node.resolved_num) == (32, 64, 2)
    assert (node.bin_hdl, node.func_hdl, node.launch_kernel_cfg, node.dev_args) == (
        0xAAAAF3C00A50,
        0xAAAAF3C01110,
        7,
        0x12C110000000,
    )
    assert node.text == SPEC_KERNEL and node.src == SRC and node.extra_fields == ()


_VARIANTS = [
    SPEC_KERNEL,
    SPEC_KERNEL.replace("funcName:Op_a", "funcName:Op, kernelType:X}"),  # marker inside the name
    SPEC_KERNEL.replace("funcName:Op_a", "funcName:a}b{c"),
    SPEC_KERNEL.replace("cap:0x10", "cap:0X10"),
    SPEC_KERNEL.replace("cap:0x10", "cap: 16"),
    SPEC_KERNEL.replace("cap:0x10", "cap:12345678901234567890"),
    SPEC_KERNEL.replace("cap:0x10", "cap:0x" + "0" * 17 + "1"),
    SPEC_KERNEL.replace("cap:0x10", "cap:x"),
    SPEC_KERNEL.replace("isSimtOp:1", "isSimtOp:2"),
    SPEC_KERNEL.replace(", isSimtOp:1", ""),
    SPEC_KERNEL.replace("resolvedNum:2, binHdl", "binHdl:0x1, resolvedNum:2, binHdl"),  # order
    SPEC_KERNEL.replace("cap:0x10", "cap:0x10, newField:[1,2]"),  # unknown key
    SPEC_KERNEL.replace("taskRatio:[1, 2]", "taskRatio:[1,\t2]"),
    SPEC_KERNEL.replace("streamId:-1", "streamId:\u0661"),
    SPEC_KERNEL.replace("kernelType:MIX_AIC", "kernelType:[A]"),
    SPEC_KERNEL.replace("}", ""),
    "[nodeId:4, streamId:1] - KernelInfos{funcName:X}",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, EventWait(eventId:0x3, eventFlag:0x0, "
    "eventTaskFlag:1)]",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, Unknown(eventId:3, eventFlag:0, eventTaskFlag:1)]",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, EventNotify(eventId:3, eventTaskFlag:1)]",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, EventNotify(eventId: 3, eventFlag:0, "
    "eventTaskFlag:1)]",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, EventNotify(eventId:0x"
    + "1" * 17
    + ", eventFlag:0, eventTaskFlag:1)]",
    "[nodeId:9, streamId:0, streamIdxInGraph:1, nodeIdxInStream:2, EventReset(eventId:3, eventFlag:0, "
    "eventTaskFlag:1, x:2)]",
    "[nodeId:5, streamIdxInGraph:0, nodeIdxInStream:1] - Kernel:foo",
]


@pytest.mark.parametrize("text", _VARIANTS)
def test_match_node_equals_the_general_grammar(text: str) -> None:
    assert _via_match_node(text) == _general(text)
    assert _via_match_node(text + "  trailing") == _general(text + "  trailing")


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, len(SPEC_KERNEL)),
    st.sampled_from([" ", ",", "}", "]", "0x", "9", ":", "x", "{", "\u0662"]),
)
def test_fast_kernel_never_disagrees(pos: int, insert: str) -> None:
    text = SPEC_KERNEL[:pos] + insert + SPEC_KERNEL[pos:]
    assert _via_match_node(text) == _general(text)
    event = SPEC_EVENT[: pos % len(SPEC_EVENT)] + insert + SPEC_EVENT[pos % len(SPEC_EVENT) :]
    assert _via_match_node(event) == _general(event)


def test_fast_event_spec_example_values() -> None:
    assert node_format._fast_event(SPEC_EVENT, 0) is not None
    node, end = _via_match_node(SPEC_EVENT)  # type: ignore[misc]
    assert end == len(SPEC_EVENT)
    assert (node.kind, node.form, node.node_id, node.stream_id, node.node_idx_in_stream) == (
        "event",
        "current",
        12,
        3,
        5,
    )
    assert (node.event_type, node.event_id, node.event_flag, node.event_task_flag) == (
        "EventWait",
        0x1F,
        0,
        1,
    )
    assert (node.func_name, node.is_simt_op, node.extra_fields, node.memory_value) == (None, False, (), None)


# ------------------------------------------------------------------ task queue entries

_value = st.one_of(
    st.integers(-5, 2**70),
    st.booleans(),
    st.none(),
    st.sampled_from(
        ["0x10", "0X10", " 0x10", "0x10 ", "0x", "0x1_0", "0x-1", "0xZZ", "16", "FUNC", "SYNC", "BOGUS"]
    ),
    st.lists(st.sampled_from(["0x1", "0x2", 3, "0xg", None]), max_size=5),
)
_keys = st.sampled_from(
    ["nodeIndex", "type", "numBlocks", "entryCnt", "args", "debugOptions", "entries", "extra"]
)


def _checked(obj: Any) -> tuple[Any, list[Unrecognized], list[Any]]:
    unrec: list[Unrecognized] = []
    gaps: list[Any] = []
    try:
        got: Any = _task(obj, "q.json", "scopes[0].t[3]", 7, "aic", 3, unrec, gaps)
    except ParseError as exc:
        got = f"error: {exc}"
    return got, unrec, gaps


def test_plain_task_exact_values() -> None:
    t = _task_plain(task_entry(), "q.json", "scopes[0].t[3]", 7, "aic", 3)
    assert t is not None
    assert (t.src, t.scope_id, t.queue, t.position, t.node_index, t.type) == (
        Source("q.json", json_path="scopes[0].t[3]"),
        7,
        "aic",
        3,
        4,
        "FUNC",
    )
    assert (t.num_blocks, t.entry_cnt, t.args, t.debug_options) == (24, 2, 0x12C110008000, 5)
    assert t.debug_flags == ("disable_dcci", "dcci_before_child")
    assert t.entries == (0x124080B80200, 0x124080B80400)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_keys, _value, max_size=8), st.booleans())
def test_plain_task_is_the_checked_reading(over: dict[str, Any], drop: bool) -> None:
    obj = task_entry(**over)
    if drop:
        obj.pop("entries", None)
    fast = _task_plain(obj, "q.json", "scopes[0].t[3]", 7, "aic", 3)
    if fast is not None:  # only when the checked reading finds nothing to report
        assert _checked(obj) == (fast, [], [])


def test_plain_task_leaves_damaged_entries_to_the_checked_reading() -> None:
    for bad in (
        task_entry(extra=1),
        task_entry(type="BOGUS"),
        task_entry(numBlocks=None),
        task_entry(numBlocks=True),
        task_entry(args="0X10"),
        task_entry(entries=["0x1"]),  # entryCnt=2: a count gap
        task_entry(entries=[1, 2]),
        [],
    ):
        assert _task_plain(bad, "q.json", "p", 7, "aic", 3) is None


# ------------------------------------------------------------------ bin_files listing


def test_file_names_in_iterdir_order(tmp_path: Path) -> None:
    d = tmp_path / "bin_files"
    d.mkdir()
    for name in ("b_0xa2.o", "B_0x1.o", "a_0x10.o", "sk_entry_0x100.o", "notes.txt"):
        (d / name).write_bytes(b"")
    (d / "sub_0x3.o").mkdir()
    (d / "link_0x4.o").symlink_to(d / "a_0x10.o")
    (d / "dangling_0x5.o").symlink_to(d / "missing")
    (d / "dirlink_0x6.o").symlink_to(d / "sub_0x3.o")
    expected = [p.name for p in sorted(d.iterdir()) if p.is_file()]
    assert _file_names(d) == expected
    assert expected == ["B_0x1.o", "a_0x10.o", "b_0xa2.o", "link_0x4.o", "notes.txt", "sk_entry_0x100.o"]
    table = load_image_table(tmp_path)
    assert [n.file_name for n in table.names] == [
        "B_0x1.o",
        "a_0x10.o",
        "b_0xa2.o",
        "link_0x4.o",
        "sk_entry_0x100.o",
    ]
    assert [n.src.file for n in table.names][0] == str(d / "B_0x1.o")
    assert [(u.src.file, u.text) for u in table.unrecognized] == [(str(d / "notes.txt"), "notes.txt")]
    assert [(g.kind, g.src.file if g.src else None) for g in table.gaps] == [
        ("lowercase_hex", str(d / "b_0xa2.o"))
    ]


# ------------------------------------------------------------------ bulk


@dataclass(frozen=True, slots=True)
class _Rec:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()
    new: int = 0  # names a generated constructor might use itself
    cls: int = 0
    twin: int = 0


@dataclass(frozen=True)
class _NoSlots:
    a: int


@dataclass(frozen=True, slots=True)
class _Post:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


def test_frozen_builder_makes_equal_frozen_instances() -> None:
    build = frozen_builder(_Rec)
    assert build is not _Rec
    r = build(1, "y", (2,), 3, 4, 5)
    assert (
        type(r) is _Rec and r == _Rec(1, "y", (2,), 3, 4, 5) and hash(r) == hash(_Rec(1, "y", (2,), 3, 4, 5))
    )
    assert (r.a, r.b, r.c, r.new, r.cls, r.twin) == (1, "y", (2,), 3, 4, 5)
    with pytest.raises(FrozenInstanceError):
        r.a = 2  # type: ignore[misc]
    assert frozen_builder(_NoSlots) is _NoSlots  # no slots: the class itself
    assert frozen_builder(_Post) is _Post  # __post_init__ must run


def test_node_builder_is_the_node_constructor() -> None:
    values = tuple(range(31))
    assert node_format._build_node(SRC, *values) == Node(SRC, *values)  # type: ignore[arg-type]


def test_frozen_builder_keeps_the_constructor_when_the_layout_or_init_is_not_its_own() -> None:
    """Only a plain frozen slotted dataclass is built by filling a twin: with a base class (whose layout
    may differ), a hand-written ``__init__`` or a mutable dataclass, the class itself comes back."""
    import dataclasses

    class Base:
        pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithBase(Base):
        x: int

    @dataclasses.dataclass(frozen=True, slots=True, init=False)
    class OwnInit:
        x: int

        def __init__(self, x: int) -> None:
            object.__setattr__(self, "x", x * 2)

    @dataclasses.dataclass(slots=True)
    class Mutable:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain:
        x: int

    assert frozen_builder(WithBase) is WithBase
    assert frozen_builder(OwnInit) is OwnInit and OwnInit(2).x == 4
    assert frozen_builder(Mutable) is Mutable
    built = frozen_builder(Plain)
    assert built is not Plain and built(3) == Plain(3) and type(built(3)) is Plain
