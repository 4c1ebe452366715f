"""super_kernel.log read in runs (parsers/sklog_runs.py) against the line-by-line reader.

The line reader (skmeta_lines.iter_meta_lines: decode, CONT removal, prefix split per line) is the
reference: whatever runs the reader forms, the facts, counts, gaps, provenance and the handler lines
must be what the line reader gives. The expectations of the hand-written cases come from
artifacts.md §3.2/§3.3 (file-logger prefix, handler functions, repeats of the dedicated files).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from textlines import pooled_log

from skdbg.parsers.common import Source
from skdbg.parsers.filelog import FORMAT_ERROR, FileLogPrefix, split_prefix, ts_from_bytes
from skdbg.parsers.sklog_runs import read_super_kernel_log
from skdbg.parsers.skmeta_lines import MetaLine, iter_meta_lines
from skdbg.parsers.super_kernel_log import is_handler_line, parse_super_kernel_log
from skdbg.parsers.textio import LineChunk, iter_line_chunks


def _pfx(
    func: str,
    pid: str = "48213",
    src: str = "sk_node.cpp:33",
    ts: str = "2026-06-10 14:01:02.345",
    tid: str = "140425347876672",
    level: str = "INFO",
) -> str:
    return f"{ts} [{pid}:{tid}] [{level}] [{src}] [{func}] "


NODE = (
    "[nodeId:100, streamId:0, streamIdxInGraph:0, nodeIdxInStream:1] - KernelInfos{funcName:Op_a, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48}"
)

#: one line of each kind the reader must keep apart (hand-written from §3.2/§3.3)
LINES = [
    _pfx("PrintSKNodesDetail") + "  SK Function: sk_3_a, scope id: 3, Node Count: 3",
    _pfx("DumpTaskQueDetail") + "[0] type=FUNC, idx=1, nodeId=101",
    _pfx("PrintSKNodesDetail") + "    [0] " + NODE,  # a repeat that reads like a reordered row
    _pfx("PrintSKNodesDetail") + "reordered task nodes: node count=1",  # a repeat that opens a block
    _pfx("PrintSKNodesDetail") + "Total nodes: 4",
    _pfx("PrintSKNodesDetail") + "  ",  # blank body
    _pfx("PrintSKNodesDetail") + "\x1c",  # a control byte: blank for str.strip
    _pfx("PrintScopeDetails") + FORMAT_ERROR,
    _pfx("PrintDfxInfo") + "=== SkDfxInfo (offset=6976, nodeCnt=2500) ===",
    _pfx("PrintDfxInfo") + "  [node 0] binHdl=0xaaaaf3c00a50, numBlocks=48",
    _pfx("PrintDfxInfo") + FORMAT_ERROR,
    _pfx("PrintDfxInfo") + "",
    _pfx("GetOrLoadKernelSymbols", src="a/sk_dfx_exception_handler.cpp:12") + "loaded 3 symbols",
    _pfx("PrintSKNodesDetail", src="sk_dfx_exception_handler.cpp:9") + "a repeat from the handler's file",
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=_Z2opv, size=0x1a0, bind=WEAK",
    _pfx("GetSplitSymbol")
    + "split[1] funcAddr[0]=0x10, funcAddr[1]=0x20, prefetchCnt[0]=0x1, prefetchCnt[1]=0x0, cap=1",
    _pfx("GetSubKernelAddr")
    + "funcName=Op_a, binDevAddr=0x124080b00000, binDevSize=3568, aicAddr=0x0, aivAddr=0x1",
    _pfx("GetSubKernelAddr") + "aicOffset=0x0, aivOffset=0x10",
    _pfx("InitSuperKernelBindMap") + "binHdl=0xaaaaf3c00a50, metaNum=1, payloadSize=52",
    _pfx("InitSuperKernelBindMap")
    + "[0] cap=0, globalFunc=0x0, skFunc[0]=0x200, skFunc[1]=0x400, skFunc[2]=0x600, skFunc[3]=0x800",
    _pfx("InitSuperKernelBindMap") + "binHdl is null for kernel k",
    _pfx("GetSplitSymbol") + "split[0] rtGetBinBuffer failed for AIC, ret=5",
    _pfx("GetSplitSymbol") + "split[0] rtGetBinBuffer failed, buffer is full",
    _pfx("DumpKernelBinaries") + "Dumped kernel binary: bin_files/a.o, size=3568, codeSegAddr=20068246224896",
    _pfx("PrintTaskNodesDetail") + "reordered task nodes: node count=2",
    _pfx("PrintTaskNodesDetail") + "  [0] " + NODE,
    _pfx("BuildTaskQueue") + "index=0, nodeType=KERNEL, nodeInfo=" + NODE,
    _pfx("DumpFusionFailReasons") + "Fusion fail reasons summary:",
    _pfx("DumpFusionFailReasons") + "  Failure reason breakdown:",
    _pfx("DumpFusionFailReasons") + "    OP_UNSUPPORT: 2 nodes",
    _pfx("Process") + "End aclskOptimize",
    _pfx("Process") + "scope id 123456789012345678901",  # oversized number
    _pfx("PrintSKNodesDetail") + "pc=0x1ffffffffffffffff",  # oversized hex
    _pfx("PrintSKNodesDetail") + "caf\u00e9",  # non-ASCII
    _pfx("PrintSKNodesDetail") + "A" * 4100 + "[CONT:1] tail",
    _pfx("PrintDfxInfo", pid="7") + "another writer",
    _pfx("PrintSKNodesDetail", pid="048213") + "the same pid with a leading zero",
    _pfx("PrintSKNodesDetail", ts="2026-13-10 14:01:02.345") + "a month that does not exist",
    "no prefix at all",
    "# a comment",
    "",
    # prefixes that differ from a neighbour's in one field only (a run compares a line's prefix with
    # the line before it): another thread, level, source line, a function whose name extends a
    # handler's or a repeat printer's, a pid that is the start of a known one
    _pfx("DumpTaskQueDetail", tid="140425347876673") + "[1] type=FUNC, idx=2, nodeId=102",
    _pfx("DumpTaskQueDetail", level="DEBUG") + "[2] type=FUNC, idx=3, nodeId=103",
    _pfx("DumpTaskQueDetail", src="sk_node.cpp:34") + "[3] type=FUNC, idx=4, nodeId=104",
    _pfx("PrintDfxInfoExtra") + "a function whose name starts with a handler function's",
    _pfx("PrintSKNodesDetailX") + "a function whose name starts with a repeat printer's",
    _pfx("PrintDfxInfo", src="sk_dfx_exception_handler.cpp:33") + "  [node 1] binHdl=0x1, numBlocks=8",
    _pfx("PrintDfxInfo", pid="4821") + "a pid that is the start of a known one",
    # facts with spacing and look-alike text the bytes branches must read as the text regexes do
    _pfx("GetSplitSymbol") + "\tsplit[2] AIC symbol=a, size=0x1, b, size=0x20, bind=GLOBAL  ",
    _pfx("GetSplitSymbol") + "split[2] AIC symbol=s, size=0x20, bind=GLO BAL",  # not a symbol line
    _pfx("GetSubKernelAddr") + "aicOffset=0xAB, aivOffset=0x0 ",
    _pfx("DumpKernelBinaries") + "Dumped SK entry binary: bin_files/sk, size=1.o, size=4096, codeSegAddr=77",
    _pfx("InitSuperKernelBindMap") + "binHdl=0x1, metaNum=2, payloadSize=x",  # not a header
]


#: the first line of pid 48213: read on its own, it makes the pid known, so the lines after it may form runs
_FIRST = _pfx("UpdateNodeScopeBitFlags") + "Processed node " + NODE
_QUEUE = "[0] type=FUNC, idx=1, nodeId=101"


def _reference_handler(path: Path) -> list[tuple[FileLogPrefix | None, str, Source]]:
    """What the handler parser reads, selected line by line: handler lines and unprefixed lines."""
    return [
        (ml.prefix, ml.message, ml.src)
        for ml in iter_meta_lines(path)
        if ml.message.strip() and (ml.prefix is None or is_handler_line(ml))
    ]


def _same_as_line_reader(path: Path) -> None:
    log = read_super_kernel_log(path)
    assert parse_super_kernel_log(log, file=str(path)) == parse_super_kernel_log(
        list(iter_meta_lines(path)), file=str(path)
    )
    assert list(log.handler_lines()) == _reference_handler(path)


@settings(max_examples=150, deadline=None)
@given(pooled_log(LINES, max_repeat=4, max_size=30))
def test_runs_give_what_the_line_reader_gives(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("runs") / "super_kernel.log"
    path.write_bytes(data)
    _same_as_line_reader(path)


def test_every_line_kind_in_one_file(tmp_path: Path) -> None:
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join(LINES * 2) + "\n")
    _same_as_line_reader(path)


def _kinds(path: Path) -> list[tuple[str, int, int]]:
    out = []
    for item in read_super_kernel_log(path):
        if isinstance(item, MetaLine):
            assert item.src.line is not None
            out.append(("line", item.src.line, 1))
        else:
            out.append((type(item).__name__, item.first_no, item.count))
    return out


def _runs_after_first(tmp_path: Path, rows: list[str]) -> list[tuple[str, int, int]]:
    """The runs and single lines the reader makes of :data:`_FIRST` then ``rows``, once the result is
    held to the line reader's."""
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([_FIRST, *rows]) + "\n")
    _same_as_line_reader(path)
    return _kinds(path)


def test_runs_hold_only_ordinary_lines_of_known_pids(tmp_path: Path) -> None:
    repeat, dfx, split = LINES[0], LINES[8], LINES[14]
    path = tmp_path / "super_kernel.log"
    rows = [repeat, repeat, dfx, dfx, dfx, split, split, LINES[35], LINES[35], repeat, "", repeat]
    path.write_text("\n".join(rows) + "\n")
    assert _kinds(path) == [
        ("line", 1, 1),  # the first line of pid 48213: read alone, it records the pid
        ("PlainRun", 2, 1),
        ("HandlerRun", 3, 3),
        ("OtherRun", 6, 2),
        ("line", 8, 1),  # pid 7's first line
        ("HandlerRun", 9, 1),  # pid 7 is known now
        ("PlainRun", 10, 1),
        ("line", 11, 1),  # blank
        ("PlainRun", 12, 1),
    ]


def test_a_run_takes_lines_whose_prefix_differs_from_the_line_before(tmp_path: Path) -> None:
    """Lines of one kind stay one run whatever field of their prefix changes from line to line, as long
    as each line passes the prefix grammar on its own, and a function whose name only starts with a
    handler function's is another kind (§3.2: the prefix is stamp, pid:tid, level, file:line,
    function)."""
    rows = [
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail", tid="140425347876673") + _QUEUE,
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail", level="DEBUG") + _QUEUE,
        _pfx("DumpTaskQueDetail", src="sk_node.cpp:34") + _QUEUE,
        _pfx("PrintSKNodesDetail", ts="2026-06-10 14:01:03.000") + "Total nodes: 4",
        _pfx("PrintDfxInfo") + "  [node 0] binHdl=0xaaaaf3c00a50, numBlocks=48",
        _pfx("PrintDfxInfoExtra") + "  [node 0] binHdl=0xaaaaf3c00a50, numBlocks=48",
        _pfx("PrintDfxInfo") + "  [node 1] binHdl=0xaaaaf3c00a50, numBlocks=48",
        _pfx("PrintDfxInfo", src="sk_dfx_exception_handler.cpp:33") + "  [node 2] binHdl=0x1, numBlocks=8",
        _pfx("GetSplitSymbol", src="sk_dfx_exception_handler.cpp:33") + "split[0] rtGetBinBuffer failed",
    ]
    assert _runs_after_first(tmp_path, rows) == [
        ("line", 1, 1),
        ("PlainRun", 2, 6),
        ("HandlerRun", 8, 1),
        ("OtherRun", 9, 1),
        ("HandlerRun", 10, 2),
        ("line", 12, 1),  # the handler's file under another function: the handler parser's, one by one
    ]


def test_a_line_that_repeats_a_prefix_is_still_held_to_its_body_and_fields(tmp_path: Path) -> None:
    """A line with the same prefix as the line before it is still read on its own when its body is the
    format-error text or blank, and a line whose prefix differs only in its source (the handler's own
    file) or in a pid not seen yet ends the run (§3.2/§3.3: such lines are the line reader's)."""
    rows = [
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail") + FORMAT_ERROR,  # the same prefix, a format-error body
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail") + "  ",  # the same prefix, a blank body
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail", src="sk_dfx_exception_handler.cpp:33") + _QUEUE,  # the handler's file
        _pfx("DumpTaskQueDetail") + _QUEUE,
        _pfx("DumpTaskQueDetail", pid="4821") + _QUEUE,  # a pid not seen yet (the start of a known one)
    ]
    assert _runs_after_first(tmp_path, rows) == [
        ("line", 1, 1),
        ("PlainRun", 2, 1),
        ("line", 3, 1),
        ("PlainRun", 4, 1),
        ("line", 5, 1),
        ("PlainRun", 6, 1),
        ("line", 7, 1),
        ("PlainRun", 8, 1),
        ("line", 9, 1),
    ]


def test_a_run_with_an_edge_case_is_read_line_by_line(tmp_path: Path) -> None:
    repeat = LINES[0]
    path = tmp_path / "super_kernel.log"
    # a control byte inside a run: the whole run is read line by line, as the line reader reads it
    path.write_bytes(("\n".join([repeat, repeat, LINES[6], repeat]) + "\n").encode())
    assert _kinds(path) == [("line", 1, 1), ("line", 2, 1), ("line", 3, 1), ("line", 4, 1)]
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    assert (res.lines_read, res.plain_text_lines) == (4, 3)  # the control-byte body is blank


def test_handler_file_lines_are_handler_lines_whatever_their_function(tmp_path: Path) -> None:
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([LINES[0], LINES[12], LINES[13], LINES[1]]) + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    assert (res.handler_lines, res.plain_text_lines) == (2, 2)
    msgs = [(p.func if p else None, m, s.line) for p, m, s in read_super_kernel_log(path).handler_lines()]
    assert msgs == [
        ("GetOrLoadKernelSymbols", "loaded 3 symbols", 2),
        ("PrintSKNodesDetail", "a repeat from the handler's file", 3),
    ]


def test_an_open_block_sees_the_repeats_after_it(tmp_path: Path) -> None:
    # a reordered header announcing 2 rows, then repeats: the first reads like a row and is taken,
    # the second is not a row and closes the block (a gap: 2 announced, 1 row), then counts as text
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([LINES[0], LINES[24], LINES[2], LINES[0], LINES[0]]) + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    (block,) = res.reordered
    assert block.node_count == 2 and [(i, n.node_id) for i, n in block.nodes] == [(0, 100)]
    assert [g.kind for g in res.gaps] == ["incomplete_block"]
    assert (res.lines_read, res.plain_text_lines) == (5, 3)  # lines 1, 4 and 5


def test_fact_lines_read_from_bytes_as_the_text_regexes_read_them(tmp_path: Path) -> None:
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([LINES[0], *LINES[-5:], LINES[17]]) + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    # the symbol runs to the last ", size=" (greedy .*), trailing blanks are not part of the line
    assert [(s.symbol, s.size, s.bind, s.func_name) for s in res.split_symbols] == [
        ("a, size=0x1, b", 0x20, "GLOBAL", None)
    ]
    assert [(d.kind, d.path, d.size, d.code_seg_addr) for d in res.dumped_binaries] == [
        ("entry", "bin_files/sk, size=1.o", 4096, 77)
    ]
    # offsets without a funcName line before them are left unrecognized, with the message as printed
    assert [(u.src.line if u.src else None, u.text) for u in res.unrecognized] == [
        (4, "aicOffset=0xAB, aivOffset=0x0"),
        (7, "aicOffset=0x0, aivOffset=0x10"),
    ]
    assert res.bind_map_headers == [] and res.plain_text_lines == 3  # lines 1, 3 and 6
    _same_as_line_reader(path)


def test_facts_from_runs_carry_line_pid_and_time(tmp_path: Path) -> None:
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([LINES[0], LINES[16], LINES[17], LINES[14]]) + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    (child,) = res.child_binaries
    assert (child.src, child.pid, child.ts) == (
        Source(str(path), 2),
        48213,
        datetime(2026, 6, 10, 14, 1, 2, 345000),
    )
    assert (child.func_name, child.bin_dev_addr, child.aic_offset, child.aiv_offset) == (
        "Op_a",
        0x124080B00000,
        0,
        0x10,
    )
    (sym,) = res.split_symbols
    assert (sym.src.line, sym.func_name, sym.symbol, sym.size, sym.bind) == (
        4,
        "Op_a",
        "_Z2opv",
        0x1A0,
        "WEAK",
    )
    assert res.first_prefix == (datetime(2026, 6, 10, 14, 1, 2, 345000), 48213, 1)
    assert res.pid_first_line == {48213: 1}


def test_timestamp_from_bytes_matches_the_text_prefix() -> None:
    for stamp in ("2026-06-10 14:01:02.000", "2026-06-10 14:01:02.999", "2024-02-29 23:59:59.001"):
        prefix, _ = split_prefix(_pfx("F", ts=stamp))
        assert prefix is not None and ts_from_bytes(stamp.encode()) == prefix.ts
    assert ts_from_bytes(b"2026-06-10 14:01:02.999") == datetime(2026, 6, 10, 14, 1, 2, 999000)
    assert ts_from_bytes(b"2026-13-10 14:01:02.345") is None  # no 13th month


def test_line_chunks_are_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\r\ntwo\n\nthree")
    chunk, last = list(iter_line_chunks(path))
    assert chunk == LineChunk(1, b"one\ntwo\n\n", 3, False)
    assert (last.no, last.text, last.complete) == (4, "three", False)  # type: ignore[union-attr]
    other = tmp_path / "b.log"
    other.write_bytes(b"x\n")
    (chunk,) = list(iter_line_chunks(other, scan_oversized=False))
    assert chunk == LineChunk(1, b"x\n", 1, True)  # not scanned: look closer


def test_writers_beyond_the_run_limit_are_read_line_by_line(tmp_path: Path) -> None:
    # 40 writer pids, each printing a repeat, a handler line and a fact: pids past MAX_RUN_PIDS (32)
    # never get runs, and the result is still the line reader's
    rows = []
    for pid in range(1, 41):
        rows += [
            _pfx(f, pid=str(pid)) + body for f, body in (("PrintSKNodesDetail", "x"), ("PrintDfxInfo", "y"))
        ]
        rows.append(LINES[14].replace("[48213:", f"[{pid}:"))
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join(rows * 2) + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    assert list(res.pid_first_line.items())[:2] == [(1, 1), (2, 4)] and len(res.pid_first_line) == 40
    assert (res.handler_lines, res.plain_text_lines, len(res.split_symbols)) == (80, 80, 80)
    _same_as_line_reader(path)


#: stamps not of the file logger's form (§3.2, ``2026-06-10 14:01:02.345``): a digit short or over in a
#: field, other scripts' digits (Arabic-Indic, fullwidth: ``re`` takes them for ``\d`` in text, never here)
_BAD_STAMPS = (
    "202-06-10 14:01:02.345",
    "20266-06-10 14:01:02.345",
    "2026-6-10 14:01:02.345",
    "2026-06-10 14:1:02.345",
    "2026-06-10 14:01:02.34",
    "2026-06-10 14:01:02.3456",
    "٢٠٢٦-06-10 14:01:02.345",
    "２０２６-06-10 14:01:02.345",
)


@pytest.mark.parametrize("stamp", _BAD_STAMPS)
def test_a_line_without_the_exact_stamp_is_read_on_its_own(tmp_path: Path, stamp: str) -> None:
    """The run regex takes a line only with the stamp's exact digits: any other stamp between two
    good lines is a line read one by one (what the line reader makes of it), never part of a run."""
    good = _pfx("PrintSKNodesDetail") + "  SK Function: sk_3_a, scope id: 3, Node Count: 3"
    first = _FIRST
    bad = _pfx("PrintSKNodesDetail", ts=stamp) + "  SK Function: sk_3_a, scope id: 3, Node Count: 3"
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join([first, good, bad, good]) + "\n", encoding="utf-8")
    items = read_super_kernel_log(path).items
    assert [it.src.line for it in items if isinstance(it, MetaLine)] == [1, 3]
    assert [(it.first_no, it.count) for it in items if not isinstance(it, MetaLine)] == [(2, 1), (4, 1)]
