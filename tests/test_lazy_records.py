"""Records made when first read (parsers/bulk.py ``LazyRecords``), the node fields they are made from
(parsers/node_format.py ``node_fields``), and the tables kept that way: the scope split's node rows and
sk_device_args.log's SkDfxInfo rows.

Expectations are written by hand (the rows, the records they must give) or taken from the parse that
makes every record as it reads (the general branch, fed the line layer's lines): never from the code
under test."""

from __future__ import annotations

import pickle
import re
import threading
from pathlib import Path

import pytest

from skdbg.parsers.bulk import LazyRecords
from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.device_args import parse_device_args
from skdbg.parsers.node_format import match_node, match_node_general, node_fields, node_from_fields
from skdbg.parsers.scope_split import ScopeNode, parse_scope_split
from skdbg.parsers.skmeta_lines import iter_meta_lines
from tests.support.filelog_lines import filelog_prefix

SRC = Source("f.log", 3)


def _file(folder: Path, name: str, lines: list[str]) -> Path:
    """``lines`` written to ``folder/name``, each ended by a newline."""
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


class _Counting:
    """A ``make`` that records each row it was given."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, row: int) -> str:
        self.seen.append(row)
        return f"record {row}"


def test_len_needs_no_record_and_the_first_read_makes_each_once() -> None:
    make = _Counting()
    lazy: LazyRecords[str, int] = LazyRecords(make, [3, 1, 2])
    assert len(lazy) == 3 and bool(lazy) and not lazy.made and make.seen == []
    assert lazy[1] == "record 1"
    assert lazy.made and make.seen == [3, 1, 2]
    assert list(lazy) == ["record 3", "record 1", "record 2"] and lazy[-1] == "record 2"
    assert lazy[1:] == ("record 1", "record 2")
    assert "record 2" in lazy and lazy.index("record 1") == 1 and len(lazy) == 3
    assert make.seen == [3, 1, 2]  # nothing made twice
    assert lazy._rows == () and lazy._make is None  # the rows and the maker are let go once made


def test_empty_rows() -> None:
    lazy: LazyRecords[str, int] = LazyRecords(_Counting(), [])
    assert len(lazy) == 0 and not lazy and lazy == () and list(lazy) == []


def test_compares_hashes_and_pickles_as_its_tuple() -> None:
    lazy: LazyRecords[str, int] = LazyRecords(_Counting(), [1, 2])
    want = ("record 1", "record 2")
    assert lazy == want and want == lazy and (lazy != want) is False
    assert lazy == LazyRecords(_Counting(), [1, 2])
    assert lazy != ("record 1",) and lazy != ("record 2", "record 1")
    assert lazy != ["record 1", "record 2"]  # as a tuple: a list is never equal to it
    assert (want != lazy) is False and want != LazyRecords(_Counting(), [2, 1])
    assert LazyRecords(_Counting(), [1]) != LazyRecords(_Counting(), [2])
    assert hash(lazy) == hash(want)
    back = pickle.loads(pickle.dumps(lazy))
    assert type(back) is tuple and back == want
    assert repr(lazy) == repr(want)


def test_threads_reading_at_once_get_one_set_of_records() -> None:
    gate = threading.Event()

    def make(row: int) -> object:
        gate.wait(1)
        return object()

    lazy: LazyRecords[object, int] = LazyRecords(make, list(range(50)))
    got: list[tuple[object, ...]] = []
    readers = [threading.Thread(target=lambda: got.append(tuple(lazy))) for _ in range(4)]
    for t in readers:
        t.start()
    gate.set()
    for t in readers:
        t.join()
    assert len(got) == 4 and all(all(a is b for a, b in zip(g, got[0], strict=True)) for g in got)


KERNEL = (
    "[nodeId:{nid}, streamId:0, streamIdxInGraph:0, nodeIdxInStream:{nid}] - KernelInfos{{funcName:{f}, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, cubeNum:0, vecNum:48, isScheModeOn:0, "
    "needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, funcHdl:0xaaaaf3c01110}}"
)


#: nodes the one-match forms read (a current kernel, with and without text after it; an event node)
FAST_FORMS = [
    KERNEL.format(nid=7, f="Add_x"),
    KERNEL.format(nid=8, f="Mul_y") + " tail",
    "[nodeId:5, streamId:1, streamIdxInGraph:1, nodeIdxInStream:2, EventWait(eventId:0x3, eventFlag:0x0, "
    "eventTaskFlag:0x1)]",
]
#: nodes only the general grammar reads (older printers' forms)
GENERAL_FORMS = [
    "[nodeId:0, streamIdxInGraph:2, nodeIdxInStream:0] - Event:Notify(eventId:0xfffd60cd0de0)",
    "[nodeId:10, streamId:-1, streamIdxInGraph:3, nodeIdxInStream:4, type: Default]",
    "[nodeId:123, streamIdxInGraph:0, nodeIdxInStream:5] - Kernel:static_kernel_Add_x",
]


@pytest.mark.parametrize("text", FAST_FORMS)
def test_node_fields_are_the_fields_of_the_node_match_node_makes(text: str) -> None:
    got = node_fields("  " + text, 2)
    assert got is not None
    fields, end = got
    node, want_end = match_node("  " + text, 2, SRC) or (None, 0)
    assert node is not None and end == want_end
    assert node_from_fields(SRC, fields) == node and node_from_fields(SRC, fields).src is SRC


@pytest.mark.parametrize("text", GENERAL_FORMS)
def test_node_fields_leave_older_forms_to_the_general_grammar(text: str) -> None:
    fresh = text + " (a tail no other test writes)"
    assert node_fields(fresh, 0) is None  # a text no reading has met before
    node, end = match_node(fresh, 0, SRC) or (None, 0)
    assert node is not None
    again = node_fields(fresh, 0)  # once read, a cached reading may serve it: the same node
    assert again is None or (node_from_fields(SRC, again[0]) == node and again[1] == end)


def test_node_fields_of_a_current_kernel_are_given_without_the_general_grammar() -> None:
    text = KERNEL.format(nid=41, f="Sub_z")
    fields = node_fields(text, 0)
    assert fields is not None and fields[1] == len(text)
    node = node_from_fields(SRC, fields[0])
    assert (node.node_id, node.func_name, node.src) == (41, "Sub_z", SRC)


@pytest.mark.parametrize(
    ("text", "wording"),
    [
        ("[nodeId:1, streamId:2]", "expected ' - KernelInfos{"),
        ("[nodeId:1, streamId:2, Bogus(x:1)]", "expected an event/MemoryWrite/MemoryWait"),
    ],
)
def test_damaged_nodes_are_the_general_grammars_to_word(text: str, wording: str) -> None:
    assert node_fields(text, 0) is None
    for read in (match_node, match_node_general):
        with pytest.raises(ParseError, match=re.escape(wording)):
            read(text, 0, SRC)


@pytest.mark.parametrize("text", GENERAL_FORMS)
def test_the_general_grammar_alone_reads_as_match_node(text: str) -> None:
    assert match_node_general(text, 0, SRC) == match_node(text, 0, SRC)


def _p(ms: int) -> str:
    return filelog_prefix(ms, "PrintScopeDetails", level="INFO", source="sk_scope_split.cpp:33")


def _scope_split_lines(nodes: int) -> list[str]:
    lines = [
        _p(1) + "==========[ScopeSplitPipeline] iteration 0==========",
        _p(2) + "========== Scope split results begin: pass=InitialScopeSplitPass, totalScopes=1 ==========",
        _p(3) + f"Scope 0 (scopeId=7): {nodes} nodes, 1 streams, scopeBitFlags=1, scopeNames=[n]",
        _p(4) + "  BreakInfo: breakReason=NONE",
        _p(5) + f"  Scope 0 nodes: {nodes}",
    ]
    lines += [_p(6) + f"    [{j}] " + KERNEL.format(nid=100 + j, f=f"Op{j}") for j in range(nodes)]
    # a node only the general grammar reads (the event form without a stream id), among the rows
    lines.insert(
        7, _p(6) + "    [9] [nodeId:0, streamIdxInGraph:2, nodeIdxInStream:0] - Event:Notify(eventId:0x1)"
    )
    lines.append(_p(7) + "========== Scope split results end: pass=InitialScopeSplitPass ==========")
    return lines


def test_scope_split_node_rows_are_records_only_when_read(tmp_path: Path) -> None:
    path = _file(tmp_path, "sk_scope_split.log", _scope_split_lines(4))
    fast = parse_scope_split(path, file="named-elsewhere")
    (snap,) = fast.snapshots
    nodes = snap.scopes[0].nodes
    assert isinstance(nodes, LazyRecords) and not nodes.made
    assert len(nodes) == 5 and not nodes.made  # the count needs no record (count_mismatch, the gaps)
    general = parse_scope_split(iter_meta_lines(path), file=str(path))
    assert general.snapshots[0].scopes[0].nodes == tuple(nodes)
    assert [(n.position, n.node.node_id, n.src.line) for n in nodes] == [
        (0, 100, 6),
        (1, 101, 7),
        (9, 0, 8),
        (2, 102, 9),
        (3, 103, 10),
    ]
    assert all(isinstance(n, ScopeNode) and n.src.file == str(path) and n.node.src is n.src for n in nodes)
    assert fast.snapshots == general.snapshots and fast.file == "named-elsewhere"
    assert pickle.loads(pickle.dumps(fast.snapshots)) == general.snapshots


def test_scope_split_lines_fed_one_by_one_keep_tuples(tmp_path: Path) -> None:
    path = _file(tmp_path, "sk_scope_split.log", _scope_split_lines(2))
    res = parse_scope_split(iter_meta_lines(path))
    assert type(res.snapshots[0].scopes[0].nodes) is tuple and len(res.snapshots[0].scopes[0].nodes) == 3


_da = filelog_prefix  # sk_device_args.log's lines
#: a FUNC task row of sk_device_args.log, with its position, index, nodeId and entry count
TASK_ROW = "[{i}] type=FUNC, idx={idx}, nodeId={nid}, blk=4, entries={n}, args=0x10, debugOptions=0x0"
#: the line that opens a device-args block
BLOCK_HEAD = "Dumping device args for function: sk_3_s_start_A_end_B"


def test_device_args_dfx_rows_are_records_only_when_read(tmp_path: Path) -> None:
    lines = [
        _da(1) + BLOCK_HEAD,
        _da(2) + "SkHeaderInfo: aicOff=48, aivOff=944, counterOff=2176, dfxOff=6976, eventConfigOff=9, "
        "nodeCnt=3, totalSize=9",
        _da(3)
        + "dfx[0]: bin=0x5000, ori=0x6000, aicSize=0x30, aivSize=0x0, numBlocks=24, cubeNum=24, vecNum=0",
        _da(4) + "  entryAic[0]=0x1, entryAic[1]=0x2, entryAic[2]=0x3, entryAic[3]=0x4",
        _da(5) + "dfx[1]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4",
        _da(6) + "  entryAiv[0]=0x7, entryAiv[1]=0x8, entryAiv[2]=0x9, entryAiv[3]=0xa",
        _da(7) + "dfx[2]: bin=0x10, ori=0x20, aicSize=0x30, aivSize=0x40",
    ]
    path = _file(tmp_path, "sk_device_args.log", lines)
    fast = parse_device_args(path, file="named-elsewhere")
    (b,) = fast.blocks
    assert isinstance(b.dfx, LazyRecords) and not b.dfx.made
    assert len(b.dfx) == 3 and not b.dfx.made and not [g for g in fast.gaps if g.kind == "dfx_count_mismatch"]
    general = parse_device_args(iter_meta_lines(path), file=str(path))
    assert general.blocks[0].dfx == tuple(b.dfx) and fast.blocks == general.blocks
    none4 = (None, None, None, None)
    assert [(d.index, d.bin, d.num_blocks, d.entry_aic, d.entry_aiv, d.src.line) for d in b.dfx] == [
        (0, 0x5000, 24, (1, 2, 3, 4), none4, 3),
        (1, 0x1, None, none4, (7, 8, 9, 10), 5),
        (2, 0x10, None, none4, none4, 7),
    ]
    assert {d.src.file for d in b.dfx} == {str(path)}


def test_a_kept_dfx_row_completed_by_an_entry_line_only_the_general_branch_reads(tmp_path: Path) -> None:
    lines = [
        _da(1) + BLOCK_HEAD,
        _da(2)
        + "dfx[0]: bin=0x5000, ori=0x6000, aicSize=0x30, aivSize=0x0, numBlocks=24, cubeNum=24, vecNum=0",
        _da(3) + "  entryAic[0]=0x1, entryAic[1]=0x2, entryAic[2]=0x3, entryAic[3]=0x4",
        _da(4)
        + "  entryAiv[1]=0x9\x0c",  # a form feed at the end: \\s*$ (general) takes it, [ \\t]* (fast) not
        _da(5) + "dfx[1]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4",
    ]
    path = _file(tmp_path, "sk_device_args.log", lines)
    fast = parse_device_args(path)
    general = parse_device_args(iter_meta_lines(path), file=str(path))
    assert fast.blocks == general.blocks and fast.unrecognized == general.unrecognized == []
    assert [(d.index, d.entry_aic, d.entry_aiv, d.src.line) for d in fast.blocks[0].dfx] == [
        (0, (1, 2, 3, 4), (None, 9, None, None), 2),
        (1, (None,) * 4, (None,) * 4, 5),
    ]
    back = pickle.loads(pickle.dumps(fast.blocks))
    assert back == general.blocks and type(back[0].dfx) is tuple


def test_scopes_of_rows_and_scopes_of_records_in_one_snapshot(tmp_path: Path) -> None:
    # an older form no other test writes (a reading cached by an earlier parse would serve it as a row)
    event = "[nodeId:0, streamIdxInGraph:2, nodeIdxInStream:0] - Event:Notify(eventId:0x7a7a7)"
    lines = [
        _p(1) + "==========[ScopeSplitPipeline] iteration 0==========",
        _p(2) + "========== Scope split results begin: pass=InitialScopeSplitPass, totalScopes=2 ==========",
        _p(3) + "Scope 0 (scopeId=7): 1 nodes, 1 streams, scopeBitFlags=1, scopeNames=[n]",
        _p(4) + "    [0] " + event,  # only the general grammar reads it: a record, the scope a tuple
        _p(5) + "Scope 1 (scopeId=8): 2 nodes, 1 streams, scopeBitFlags=1, scopeNames=[m]",
        _p(6) + "    [0] " + KERNEL.format(nid=200, f="A"),
        _p(7) + "    [1] " + KERNEL.format(nid=201, f="B"),
        _p(8) + "========== Scope split results end: pass=InitialScopeSplitPass ==========",
    ]
    path = _file(tmp_path, "sk_scope_split.log", lines)
    (snap,) = parse_scope_split(path).snapshots
    first, second = snap.scopes
    assert type(first.nodes) is tuple and [n.node.node_id for n in first.nodes] == [0]
    assert isinstance(second.nodes, LazyRecords) and not second.nodes.made
    assert [(n.position, n.node.func_name, n.src.line) for n in second.nodes] == [(0, "A", 6), (1, "B", 7)]
    assert [snap] == parse_scope_split(iter_meta_lines(path), file=str(path)).snapshots


def test_device_args_task_rows_are_records_only_when_read(tmp_path: Path) -> None:
    lines = [
        _da(1) + BLOCK_HEAD,
        _da(2) + "AIC TaskQue: cap=4, tasks=4",
        _da(3) + TASK_ROW.format(i=0, idx=1, nid=101, n=5),
        *(_da(4 + j) + f"   entry[{j}]=0x{j + 10:x}" for j in range(5)),  # the fifth comes in a match alone
        _da(9) + TASK_ROW.format(i=1, idx=2, nid=102, n=2),
        _da(10) + "   entry[0]=0xb0",  # one of two: the count gap
        _da(11) + TASK_ROW.format(i=2, idx=2, nid=103, n=1),  # idx 2 names another node: the conflict
        _da(12) + "   entry[1]=0xc1",  # out of order: the general branch reports it
        _da(13) + "[3] type=SYNC, idx=3, blk=0, entries=0, args=0x0, debugOptions=0x0",
    ]
    path = _file(tmp_path, "sk_device_args.log", lines)
    fast = parse_device_args(path, file="named-elsewhere")
    (b,) = fast.blocks
    (q,) = b.queues
    assert isinstance(q.tasks, LazyRecords) and len(q.tasks) == 4
    assert b.task_index_to_node_id() == {1: 101, 2: 102} and b.index_conflicts() == {2: {102, 103}}
    assert [(g.kind, g.detail, g.src.line if g.src else None) for g in fast.gaps] == [
        ("entries_incomplete", "task [1]: entries=2, 1 listed", 9),
        ("entries_incomplete", "task [2]: entries=1, 0 listed", 11),
        ("index_conflict", "sk_3_s_start_A_end_B: idx 2 maps to nodeIds ['102', '103']", 1),
    ]
    assert not q.tasks.made  # the map, the conflicts and the gaps needed no record
    general = parse_device_args(iter_meta_lines(path), file=str(path))
    assert fast.blocks == general.blocks and fast.gaps == general.gaps
    assert fast.unrecognized == general.unrecognized and [u.src.line for u in fast.unrecognized] == [12]
    assert [(t.position, t.node_id, t.entries, t.src.line, t.src.file) for t in q.tasks] == [
        (0, 101, (10, 11, 12, 13, 14), 3, str(path)),
        (1, 102, (0xB0,), 9, str(path)),
        (2, 103, (), 11, str(path)),
        (3, None, (), 13, str(path)),
    ]


def test_device_args_task_rows_in_two_queues_and_a_general_entry_line(tmp_path: Path) -> None:
    lines = [
        _da(1) + BLOCK_HEAD,
        _da(2) + "AIC TaskQue: cap=2, tasks=2",
        _da(3) + TASK_ROW.format(i=0, idx=1, nid=101, n=2),
        _da(4) + "   entry[0]=0xa0",
        _da(5) + "   entry[1]=0xa1\x0c",  # a form feed at the end: only the general branch takes the line
        _da(6) + TASK_ROW.format(i=1, idx=2, nid=102, n=0),
        _da(7) + "AIV TaskQue: cap=2, tasks=2",
        _da(8)
        + TASK_ROW.format(i=0, idx=2, nid=202, n=0),  # idx 2 again, another node: a conflict across queues
        _da(9) + TASK_ROW.format(i=1, idx=3, nid=18446744073709551615, n=0),  # out of range
    ]
    path = _file(tmp_path, "sk_device_args.log", lines)
    fast = parse_device_args(path)
    (b,) = fast.blocks
    aic, aiv = b.queues
    assert isinstance(aic.tasks, LazyRecords) and isinstance(aiv.tasks, LazyRecords)
    assert b.task_index_to_node_id() == {1: 101, 2: 102, 3: None}
    assert b.index_conflicts() == {2: {102, 202}}
    assert not aic.tasks.made and not aiv.tasks.made
    general = parse_device_args(iter_meta_lines(path), file=str(path))
    assert fast.blocks == general.blocks and fast.gaps == general.gaps and fast.unrecognized == []
    assert [(t.position, t.entries, t.src.line) for t in aic.tasks] == [(0, (0xA0, 0xA1), 3), (1, (), 6)]
    assert [(t.idx, t.node_id, t.node_id_out_of_range) for t in aiv.tasks] == [
        (2, 202, False),
        (3, None, True),
    ]
