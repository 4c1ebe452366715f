"""Fast paths of the sk_meta parsers against their general (line-by-line) readings.

The general path is the oracle: super_kernel.log read as runs (``read_super_kernel_log``, whose
other-function runs take the one-regex fact reader) must give the very result the line reader
(``iter_meta_lines``, every line through ``_FactParser.step``) gives; the dedicated files read from a
path (one pattern per chunk, ``skmeta_scan``) must give what their MetaLines give. The lines are
written by hand from artifacts.md §3.2-§3.7 (file-logger prefix, fact and listing shapes), with
variants: odd spacing, tabs, malformed or oversized numbers, upper-case hex, look-alike text, blocks
opened and closed inside a run, CRLF, a cut last line and non-ASCII text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import pooled_log

from skdbg.parsers.device_args import parse_device_args
from skdbg.parsers.filelog import PIECE, has_long_line
from skdbg.parsers.sklog_runs import HANDLER_FUNCS, read_super_kernel_log
from skdbg.parsers.skmeta_lines import MetaLine, iter_meta_lines
from skdbg.parsers.super_kernel_log import parse_super_kernel_log
from skdbg.parsers.task_queue import _task, _task_plain
from tests.support.task_entries import DROP, task_entry


def _pfx(func: str, ts: str = "2026-06-10 14:01:02.345", pid: str = "48213") -> str:
    return f"{ts} [{pid}:140425347876672] [INFO] [sk_node.cpp:33] [{func}] "


NODE = (
    "[nodeId:100, streamId:0, streamIdxInGraph:0, nodeIdxInStream:1] - KernelInfos{funcName:Op_a, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, cubeNum:0, vecNum:48, isScheModeOn:0, "
    "needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, funcHdl:0xaaaaf3c01110}"
)
EVENT = (
    "[nodeId:101, streamId:0, streamIdxInGraph:0, nodeIdxInStream:2, "
    "EventWait(eventId:3, eventFlag:0, eventTaskFlag:1)]"
)

#: super_kernel.log lines of every kind the fact reader sorts, and near misses of each fast shape
SK_LINES = [
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=_Z16Op0000_000000_skILj0EEvv, size=0x1a0, bind=WEAK",
    _pfx("GetSplitSymbol") + "split[3] AIC symbol=a b, size=0x1A0, bind=",  # empty bind, upper hex
    _pfx("GetSplitSymbol") + " \t split[1] AIV symbol=x, size=0x1, y, size=0x2, bind=GLOBAL \t ",
    _pfx("GetSplitSymbol") + "split[1] AIX symbol=x, size=0x2, bind=WEAK",  # not a core
    _pfx("GetSplitSymbol") + "split[1] AIV symbol=x, size=0x2g, bind=WEAK",  # not hex
    _pfx("GetSplitSymbol") + "split[-1] AIV symbol=x, size=0x2, bind=WEAK",
    _pfx("GetSplitSymbol") + "split[1] AIV symbol=x, size=0x2, bind=WE-AK",
    _pfx("GetSplitSymbol")
    + "split[2] funcAddr[0]=0x10, funcAddr[1]=0x20, prefetchCnt[0]=0x1, prefetchCnt[1]=0x0, cap=1",
    _pfx("GetSplitSymbol") + "split[0] rtGetBinBuffer failed for AIC, ret=-5",
    _pfx("GetSubKernelAddr")
    + "funcName=Op0000_000000, binDevAddr=0x124080b00000, binDevSize=3568, aicAddr=0x0, aivAddr=0x1",
    _pfx("GetSubKernelAddr")
    + "funcName=a, binDevAddr=0x1, b, binDevAddr=0x2, binDevSize=7, aicAddr=0xF, aivAddr=0x0  ",
    _pfx("GetSubKernelAddr") + "funcName=a, binDevAddr=0x1, binDevSize=x7, aicAddr=0x0, aivAddr=0x0",
    _pfx("GetSubKernelAddr") + "aicOffset=0x100, aivOffset=0x0",
    _pfx("GetSubKernelAddr") + "\taicOffset=0xAb, aivOffset=0x10\t",
    _pfx("GetSubKernelAddr") + "aicOffset=0x100, aivOffset=100",  # not an offsets line
    _pfx("InitSuperKernelBindMap") + "binHdl=0xaaaaf3c00a50, metaNum=1, payloadSize=52",
    _pfx("InitSuperKernelBindMap") + "binHdl=0x1, metaNum=-1, payloadSize=52",
    _pfx("InitSuperKernelBindMap")
    + "[0] cap=0, globalFunc=0x0, skFunc[0]=0x200, skFunc[1]=0x400, skFunc[2]=0x600, skFunc[3]=0x800",
    _pfx("InitSuperKernelBindMap")
    + "[7] cap=2, globalFunc=0xFF, skFunc[0]=0x2, skFunc[1]=0x4, skFunc[2]=0x6, skFunc[3]=0x8 ",
    _pfx("InitSuperKernelBindMap")
    + "[7] cap=2, globalFunc=0xFF, skFunc[0]=0x2, skFunc[1]=0x4, skFunc[3]=0x6, skFunc[2]=0x8",
    _pfx("InitSuperKernelBindMap") + "binHdl is null for kernel Op_a",
    _pfx("DumpKernelBinaries")
    + "Dumped kernel binary: bin_files/Op_a.o, size=3568, codeSegAddr=20068246224896",
    _pfx("DumpKernelBinaries") + "Dumped SK entry binary: bin, size=1, size=4096, codeSegAddr=77 ",
    _pfx("DumpKernelBinaries") + "Dumped SK binary: bin, size=1, codeSegAddr=77",
    _pfx("DumpKernelBinaries") + "Dumped kernel binary: b.o, size=1, codeSegAddr=0x77",
    _pfx("BuildTaskQueue") + "index=0, nodeType=KERNEL, nodeInfo=" + NODE,
    _pfx("BuildTaskQueue") + "index=-1, nodeType=EVENT, nodeInfo=" + EVENT + "  ",
    _pfx("BuildTaskQueue") + "index=2, nodeType=KERNEL, nodeInfo=[nodeId:7, streamId:0] - Mystery{}",
    _pfx("BuildTaskQueue") + "index=3, nodeType=KERNEL, nodeInfo=[nodeId:x] \t",  # no node: plain text
    _pfx("BuildTaskQueue") + "\tindex=04, nodeType=EVENT, nodeInfo=" + EVENT + " trailing words\t",
    _pfx("BuildTaskQueue") + "index=5, nodeType=KER-NEL, nodeInfo=" + NODE,  # not an index line
    _pfx("BuildTaskQueue") + "index=5, nodeType=KERNEL, nodeInfo= " + NODE,
    _pfx("GenEntryInfo") + "GenEntryInfo: enableDebug=0, enableProfiling=1",
    _pfx("ScheduleScope")
    + "schedule scope: build finished, entryType=MIX_1_1, entryFuncHandle=0x55d0, skFuncName=sk_3",
    _pfx("ReorderWaitNodesForTaskBuild") + "task reorder: place deferred wait node, waitIdx=3, placeIdx=7",
    _pfx("PrintTaskNodesDetail") + "reordered task nodes: node count=2",
    _pfx("PrintTaskNodesDetail") + "  [0] " + NODE,
    _pfx("PrintTaskNodesDetail") + "[1]\t" + EVENT,
    _pfx("PrintTaskNodesDetail") + " \t[1]  " + EVENT + " \t",
    _pfx("PrintTaskNodesDetail") + "[1]" + EVENT,  # no blank before the node: not a row
    _pfx("PrintTaskNodesDetail") + "[2] [nodeId:9, streamId:0] - Mystery{}",
    _pfx("DumpFusionFailReasons") + "Fusion fail reasons summary:",
    _pfx("DumpFusionFailReasons") + "  Total nodes: 4",
    _pfx("DumpFusionFailReasons") + "  Failure reason breakdown:",
    _pfx("DumpFusionFailReasons") + "    OP_UNSUPPORT: 2 nodes",
    _pfx("Process") + "profiling buffer is full, drop",
    _pfx("Process") + "End aclskOptimize",
    _pfx("PrintSKNodesDetail") + "  SK Function: sk_3_a, scope id: 3, Node Count: 3",
    _pfx("PrintDfxInfo") + "  [node 0] binHdl=0xaaaaf3c00a50, numBlocks=48",
    _pfx("GetSplitSymbol", ts="2026-06-10 14:01:02.999")
    + "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",  # another millisecond of the same second
    _pfx("GetSplitSymbol", ts="2026-06-10 14:01:03.000") + "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",
    _pfx("GetSplitSymbol", ts="2026-13-10 14:01:03.000") + "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",
    _pfx("GetSubKernelAddr", ts="2026-02-30 00:00:00.001") + "aicOffset=0x1, aivOffset=0x2",
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=caf\u00e9, size=0x1a0, bind=WEAK",  # non-ASCII
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=s, size=0x" + "f" * 17 + ", bind=WEAK",  # oversized
    _pfx("GetSplitSymbol", pid="7") + "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",  # a new writer
    "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",  # no prefix
    "",
]


def _same_as_line_reader(path: Path) -> None:
    ours = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    oracle = parse_super_kernel_log(list(iter_meta_lines(path)), file=str(path))
    assert ours == oracle


def _write(path: Path, lines: list[str], eol: str = "\n", cut_last: bool = False) -> Path:
    path.write_bytes((eol.join(lines) + ("" if cut_last else eol)).encode())
    return path


def test_every_super_kernel_shape_in_one_run(tmp_path: Path) -> None:
    path = _write(tmp_path / "super_kernel.log", SK_LINES[:-5] * 2)
    _same_as_line_reader(path)
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    # the hand-read values of the first lines (from §3.3's shapes)
    sym = res.split_symbols[0]
    assert (sym.split, sym.core, sym.symbol, sym.size, sym.bind, sym.func_name) == (
        0,
        "AIV",
        "_Z16Op0000_000000_skILj0EEvv",
        0x1A0,
        "WEAK",
        None,
    )
    assert [(s.symbol, s.size, s.bind) for s in res.split_symbols[1:3]] == [
        ("a b", 0x1A0, ""),
        ("x, size=0x1, y", 0x2, "GLOBAL"),
    ]
    child = res.child_binaries[0]
    assert (child.func_name, child.bin_dev_size, child.aic_offset, child.aiv_offset) == (
        "Op0000_000000",
        3568,
        None,
        None,
    )
    # the second funcName line is completed by the first offsets line after it
    assert (res.child_binaries[1].func_name, res.child_binaries[1].aic_offset) == (
        "a, binDevAddr=0x1, b",
        0x100,
    )
    assert [u.text for u in res.unrecognized][:1] == ["aicOffset=0xAb, aivOffset=0x10"]
    assert len(res.reordered) == 2 and res.reordered[0].node_count == 2


@settings(max_examples=200, deadline=None)
@given(pooled_log(SK_LINES, max_repeat=3, max_size=40))
def test_super_kernel_facts_equal_the_line_reader(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("sk") / "super_kernel.log"
    path.write_bytes(data)
    _same_as_line_reader(path)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["GetSplitSymbol", "GetSubKernelAddr", "Process"]),
            st.text(
                st.sampled_from("split[0] AIVCsymbol=size0x1aFbind,WEAK \tfuncNamebinDevAddr"), max_size=60
            ),
        ),
        max_size=20,
    )
)
def test_arbitrary_bodies_equal_the_line_reader(
    tmp_path_factory: object, bodies: list[tuple[str, str]]
) -> None:
    lines = [SK_LINES[0]] + [_pfx(func) + body for func, body in bodies]
    path = tmp_path_factory.mktemp("skb") / "super_kernel.log"  # type: ignore[attr-defined]
    _same_as_line_reader(_write(path, lines))


# ---------------------------------------------------------------- super_kernel.log runs (sklog_runs)

#: lines at the edges of what a run may hold: the handler's file under other functions, format-error
#: bodies and look-alikes, ``[CONT:n]`` markers in short and long lines (§3.2 rows 48/49)
RUN_EDGES = [
    _pfx("PrintSKNodesDetail") + "  SK Function: sk_3_a, scope id: 3, Node Count: 3",
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=s, size=0x1a0, bind=WEAK",
    _pfx("PrintDfxInfo") + "  [node 0] binHdl=0xaaaaf3c00a50, numBlocks=48",
    _pfx("GetSplitSymbol").replace("sk_node.cpp:33", "sk_dfx_exception_handler.cpp:12") + "split[0] x",
    _pfx("PrintSKNodesDetail").replace("sk_node.cpp:33", "a/b/sk_dfx_exception_handler.cpp:7") + "repeat",
    _pfx("Process").replace("sk_node.cpp:33", "xsk_dfx_exception_handler.cpp:7") + "not the handler's",
    _pfx("Process").replace("sk_node.cpp:33", "sk_dfx_exception_handler.cpp:7:8") + "not the handler's",
    _pfx("Process").replace("sk_node.cpp:33", "sk_dfx_exception_handler.cpp.bak:7") + "not the handler's",
    _pfx("Process") + "mentions sk_dfx_exception_handler.cpp:12] in its body",
    _pfx("Process") + "[FORMAT_ERROR] Failed to format log message",
    _pfx("PrintSKNodesDetail") + " \t[FORMAT_ERROR] Failed to format log message \t",
    _pfx("PrintDfxInfo") + "[FORMAT_ERROR] Failed to format log message",
    _pfx("Process") + "[FORMAT_ERROR] Failed to format log message, and more",
    _pfx("Process") + "x [FORMAT_ERROR] Failed to format log message",
    _pfx("Process") + "a short line with [CONT:1] in it",
    _pfx("Process") + "A" * 4000 + "[CONT:1] tail",
    _pfx("Process") + "B" * 4100 + " no marker",
    _pfx("Process") + "C" * (4096 - len(_pfx("Process")) - 1) + "[CONT:1] x",
    _pfx("Process") + "D" * (4096 - len(_pfx("Process"))) + "[CONT:1] y",
    _pfx("PrintDfxInfo") + "E" * 4090 + "[CONT:1] z",
    # a marker exactly at byte 4096 (where the logger splices it): removed by the line layer
    _pfx("PrintDfxInfo") + "E" * (4096 - len(_pfx("PrintDfxInfo"))) + "[CONT:1] z",
    _pfx("GetSplitSymbol")
    + "split[0] AIV symbol="
    + "s" * (4096 - len(_pfx("GetSplitSymbol") + "split[0] AIV symbol="))
    + "[CONT:1] t, size=0x1a0, bind=WEAK",
]


def _reference_handler(path: Path) -> list[object]:
    """The handler parser's lines as the line reader selects them (handler lines and unprefixed ones)."""
    return [
        (ml.prefix, ml.message, ml.src)
        for ml in iter_meta_lines(path)
        if ml.message.strip()
        and (
            ml.prefix is None
            or ml.prefix.src_file == "sk_dfx_exception_handler.cpp"
            or ml.prefix.func in HANDLER_FUNCS
        )
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(range(len(RUN_EDGES))), st.integers(1, 3)), max_size=25),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_runs_with_edge_lines_equal_the_line_reader(
    tmp_path_factory: object, picks: list[tuple[int, int]], eol: str, cut_last: bool
) -> None:
    lines = [RUN_EDGES[0]] + [RUN_EDGES[i] for i, n in picks for _ in range(n)]
    path = _write(tmp_path_factory.mktemp("edge") / "super_kernel.log", lines, eol, cut_last)  # type: ignore[attr-defined]
    _same_as_line_reader(path)
    assert list(read_super_kernel_log(path).handler_lines()) == _reference_handler(path)


def test_handler_file_and_format_error_lines_stay_out_of_runs(tmp_path: Path) -> None:
    path = _write(tmp_path / "super_kernel.log", [RUN_EDGES[0], RUN_EDGES[0], RUN_EDGES[3], RUN_EDGES[4],
                                                  RUN_EDGES[6], RUN_EDGES[9], RUN_EDGES[12], RUN_EDGES[0]])  # fmt: skip
    kinds = [
        (type(i).__name__, i.src.line) if isinstance(i, MetaLine) else (type(i).__name__, i.first_no, i.count)
        for i in read_super_kernel_log(path)
    ]
    assert kinds == [
        ("MetaLine", 1),  # the first line of the pid
        ("PlainRun", 2, 1),
        ("MetaLine", 3),  # the handler's file under GetSplitSymbol
        ("MetaLine", 4),  # ... and under a repeat printer, with a directory
        ("OtherRun", 5, 1),  # the field up to its last ":digits" is "sk_dfx_...cpp:7": another file
        ("MetaLine", 6),  # a format-error body
        ("OtherRun", 7, 1),  # the format-error text followed by more is an ordinary line
        ("PlainRun", 8, 1),
    ]
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    assert (res.handler_lines, len(res.format_errors), res.plain_text_lines) == (2, 1, 5)  # 1, 2, 5, 7, 8


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9000), min_size=1, max_size=12))
def test_long_line_check_is_the_longest_line(lengths: list[int]) -> None:
    data = b"".join(b"a" * n + b"\n" for n in lengths)
    assert has_long_line(data) == (max(lengths) >= PIECE)
    assert has_long_line(data[:-1]) == (max(lengths) >= PIECE)  # without the last newline


def test_long_line_check_at_the_edge() -> None:
    assert not has_long_line(b"a" * (PIECE - 1) + b"\n")
    assert has_long_line(b"a" * PIECE + b"\n")
    assert has_long_line(b"x\n" + b"a" * (PIECE - 1) + b"b\nc\n")
    assert not has_long_line(b"")


# ---------------------------------------------------------------- sk_device_args.log (device_args)


def _dpfx(ts: str = "2026-06-10 14:01:02.445") -> str:
    return f"{ts} [48213:140425347876672] [DEBUG] [sk_task_builder.cpp:33] [DumpTaskQueDetail] "


#: §3.9 shapes by hand, with near misses: tasks with and without their entry lines, an entry beyond
#: four, one out of order, dfx rows with four-per-line and one-per-line entries, damaged numbers
DEVICE_LINES = [
    _dpfx() + "Dumping device args for function: sk_7_decoder_start_Op0000_000000_end_Op0001_377a4f",
    _dpfx() + "SkHeaderInfo: aicOff=48, aivOff=944, counterOff=2176, dfxOff=6976, eventConfigOff=426976, "
    "nodeCnt=2, totalSize=427008",
    _dpfx() + "AIC TaskQue: cap=3, tasks=3",
    _dpfx() + "AIV TaskQue: cap=1, tasks=1",
    _dpfx()
    + "[0] type=FUNC, idx=1, nodeId=101, relatedType=AIC_ONLY, blk=24, entries=4, args=0x12c110002000, "
    "debugOptions=0x0, extraInfo=0x0",
    _dpfx() + "   entry[0]=0x124080b20200",
    _dpfx() + "   entry[1]=0x124080b20400",
    _dpfx() + "\tentry[2]=0x124080B20600 ",
    _dpfx() + "   entry[3]=0x124080b20800",
    _dpfx() + "   entry[4]=0x1",
    _dpfx() + "   entry[9]=0x1",  # out of order
    _dpfx() + "   entry[1]=0x12g",  # not hex
    _dpfx() + "[1] type=SYNC, idx=1, blk=0, entries=0, args=0x4, debugOptions=0x3f",
    _dpfx()
    + "  [2] type=EVENT_WAIT, idx=2, nodeId=4294967295, blk=0, entries=2, args=0x0, debugOptions=0x40, "
    "extraInfo=0x1  ",
    _dpfx() + "[3] type=FUNC, idx=x, blk=0, entries=0, args=0x0, debugOptions=0x0",
    _dpfx() + "dfx[0]: bin=0xaaaaf3c00a50, ori=0xaaaaf3c01110, aicSize=0x0, aivSize=0x1a0, numBlocks=48, "
    "cubeNum=0, vecNum=48",
    _dpfx() + "  entryAic[0]=0x0, entryAic[1]=0x0, entryAic[2]=0x0, entryAic[3]=0x0",
    _dpfx() + "  entryAiv[0]=0x124080b00200, entryAiv[1]=0x124080b00400, entryAiv[2]=0x124080b00600, "
    "entryAiv[3]=0x124080b00800",
    _dpfx() + "  entryAiv[2]=0x5",
    _dpfx() + "  entryAic[3]=0x7, entryAiv[0]=0x8",
    _dpfx() + "dfx[1]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4",
    _dpfx() + "dfx[2]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4, numBlocks=-1, cubeNum=0, vecNum=0",
    _dpfx() + "something else entirely",
    _dpfx() + "   entry[0]=0x" + "f" * 17,  # oversized
    _dpfx() + "   entry[0]=0x1\u00e9",  # non-ASCII
    "   entry[0]=0x10",  # no prefix
    "",
]


def _device_same(path: Path) -> None:
    assert parse_device_args(path) == parse_device_args(list(iter_meta_lines(path)), file=str(path))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(range(len(DEVICE_LINES))), st.integers(1, 2)), max_size=40),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_device_args_fast_equals_general(
    tmp_path_factory: object, picks: list[tuple[int, int]], eol: str, cut_last: bool
) -> None:
    lines = DEVICE_LINES[:3] + [DEVICE_LINES[i] for i, n in picks for _ in range(n)]
    path = tmp_path_factory.mktemp("da") / "sk_device_args.log"  # type: ignore[attr-defined]
    _device_same(_write(path, lines, eol, cut_last))


def test_device_args_task_with_its_entries(tmp_path: Path) -> None:
    path = _write(tmp_path / "sk_device_args.log", [*DEVICE_LINES[:3], *DEVICE_LINES[4:10], DEVICE_LINES[12]])
    _device_same(path)
    (block,) = parse_device_args(path).blocks
    first, second = block.queues[0].tasks
    assert (first.position, first.node_id, first.entries) == (
        0,
        101,
        (0x124080B20200, 0x124080B20400, 0x124080B20600, 0x124080B20800, 0x1),
    )
    assert (second.type, second.args, second.debug_options, second.entries) == ("SYNC", 4, 0x3F, ())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9000), min_size=1, max_size=12), st.booleans())
def test_chunk_long_line_check_is_the_longest_line(lengths: list[int], last_newline: bool) -> None:
    # given text, it measures characters (the readers ask it of a chunk's bytes: rejoin_cont_bytes)
    text = "\n".join("\u00e9" * n for n in lengths) + ("\n" if last_newline else "")
    assert has_long_line(text) == (max(lengths) >= PIECE)


# ---------------------------------------------------------------- sk_task_queue.json (task_queue)


@pytest.mark.parametrize(
    ("over", "plain"),
    [
        ({}, True),
        ({"entries": ["0x124080b80200", "0x124080B80400"]}, True),  # upper-case hex digits
        ({"numBlocks": None}, False),  # an explicit null is not the plain shape
        ({"numBlocks": DROP, "entryCnt": DROP, "debugOptions": DROP}, True),
        ({"entryCnt": False}, False),
        ({"entryCnt": 7, "entries": ["0x1", "0x2", "0x3", "0x4"]}, True),
        ({"debugOptions": -1}, True),
        ({"debugOptions": 0x7F}, True),
        ({"debugOptions": 1.0}, False),
        ({"entries": ["0x1", "0xZ"]}, False),  # a bad digit after a good entry
        ({"entries": ["0xZ", 5]}, False),  # a bad digit, then a bad shape
        ({"entries": ["0x 1", "0x2"]}, True),
        ({"entries": ["0x", "0x2"]}, False),
        ({"args": "0x1_0"}, True),
    ],
)
def test_plain_task_is_the_checked_reading_by_hand(over: dict[str, object], plain: bool) -> None:
    obj = task_entry(**over)
    fast = _task_plain(obj, "q.json", "scopes[0].t[3]", 7, "aic", 3)
    assert (fast is not None) == plain
    if fast is not None:  # the plain reading answers only where the checked one reports nothing
        unrec: list[object] = []
        gaps: list[object] = []
        checked = _task(obj, "q.json", "scopes[0].t[3]", 7, "aic", 3, unrec, gaps)  # type: ignore[arg-type]
        assert (fast, unrec, gaps) == (checked, [], [])
