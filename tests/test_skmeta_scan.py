"""The whole-chunk fast path of the sk_meta parsers (parsers/skmeta_scan.py).

Two kinds of expectation: (1) the scanner hands over every line it does not match exactly as the line
layer (``textio.iter_line_blocks`` + ``skmeta_lines``) gives it, with the same numbers, across chunk
borders, CRLF, cut lines, CONT markers, oversized numbers and a missing final newline; (2) each parser
read from a path (fast branch) gives the same result as from the line layer's MetaLines (general
branch only), on hand-made damaged files, plus hand-written values for the lines the fast branch takes.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import textio
from skdbg.parsers.device_args import parse_device_args
from skdbg.parsers.filelog import prefix_ts, split_prefix
from skdbg.parsers.fused_nodes import parse_fused_nodes
from skdbg.parsers.node_detail import parse_node_detail
from skdbg.parsers.scope_split import parse_scope_split
from skdbg.parsers.skmeta_lines import MetaLine, iter_meta_lines, raw_meta_line, to_meta_line
from skdbg.parsers.skmeta_scan import FastScan, fast_pattern
from skdbg.parsers.textio import TextLine, iter_line_blocks

P = "2026-06-10 14:01:02.{ms:03d} [48213:140425347876672] [DEBUG] [sk_task_builder.cpp:33] [Dump] "
NEVER = fast_pattern(r"(?P<never>(?!))")
ANY = fast_pattern(r"(?P<body>[^\n]*)")


def _layer(path: Path, max_line: int) -> list[MetaLine]:
    """What ``iter_meta_lines`` yields, with a chosen line limit."""
    out: list[MetaLine] = []
    for block in iter_line_blocks(path, max_line=max_line):
        if isinstance(block, TextLine):
            out.append(to_meta_line(block, str(path)))
        else:
            out.extend(
                raw_meta_line(raw, block.first_no + k, str(path), check=block.check)
                for k, raw in enumerate(block.lines)
            )
    return out


_piece = st.sampled_from(
    [
        b"",
        b"plain text",
        b"\r",
        b"\xff\xfe",
        b"\xd9\xa1\xd9\xa2",
        b"[CONT:1] ",
        b"123456789012345678901",
        b"0x1234567890abcdef12",
        b"x" * 70,
        P.format(ms=5).encode(),
        P.format(ms=7).encode() + b"  [3] entry",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_piece, max_size=4).map(b"".join), max_size=14),
    st.booleans(),
    st.sampled_from([16, 64, 97]),
)
def test_unmatched_lines_are_the_line_layers(
    tmp_path_factory, lines: list[bytes], final_nl: bool, chunk: int
) -> None:  # type: ignore[no-untyped-def]
    """Small chunks and a small line limit put borders, cut lines and resumes everywhere."""
    f = tmp_path_factory.mktemp("s") / "a.log"
    f.write_bytes(b"\n".join(lines) + (b"\n" if final_nl and lines else b""))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(textio, "CHUNK", chunk)
        got = list(FastScan(f, NEVER, what="x", max_line=60))
        assert got == _layer(f, 60)
        # a pattern that takes every prefixed line: the rest are still the layer's, numbers in order
        scan = FastScan(f, ANY, what="x", max_line=60)
        numbers = []
        for item in scan:
            if isinstance(item, MetaLine):
                numbers.append(item.src.line)
            else:
                m, no = item
                numbers.append(no)
                assert scan.meta_line(no) == _layer(f, 60)[no - 1]
        assert numbers == [ml.src.line for ml in _layer(f, 60)]


def test_crlf_border_and_truncated_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textio, "CHUNK", 8)
    f = tmp_path / "a.log"
    f.write_bytes(b"abc\r\ndefgh\r\n\r\nij\r")
    got = [(ml.src.line, ml.message, ml.complete) for ml in FastScan(f, NEVER, what="x")]  # type: ignore[union-attr]
    assert got == [(1, "abc", True), (2, "defgh", True), (3, "", True), (4, "ij", False)]


def test_over_long_line_resumes_with_the_line_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textio, "CHUNK", 16)
    f = tmp_path / "a.log"
    f.write_bytes(b"one\ntwo\n" + b"z" * 50 + b"\nthree\n")
    got = list(FastScan(f, NEVER, what="x", max_line=20))
    assert [(ml.src.line, ml.message, ml.cut_detail is not None) for ml in got] == [  # type: ignore[union-attr]
        (1, "one", False),
        (2, "two", False),
        (3, "z" * 20, True),
        (4, "three", False),
    ]


def test_over_long_unterminated_last_line_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A last line without newline, longer than the limit but shorter than a read: cut like the line
    layer cuts it (first 20 bytes, a cut detail), not kept whole (found by review)."""
    monkeypatch.setattr(textio, "CHUNK", 97)
    f = tmp_path / "a.log"
    f.write_bytes(b"a\n" + b"x" * 80)
    got = list(FastScan(f, NEVER, what="x", max_line=20))
    assert [(ml.src.line, ml.message, ml.cut_detail is not None, ml.complete) for ml in got] == [  # type: ignore[union-attr]
        (1, "a", False, True),
        (2, "x" * 20, True, False),
    ]


def test_prefix_ts_is_split_prefix_ts() -> None:
    for stamp in ("2026-06-10 14:01:02.425", "2026-06-10 14:01:02.000", "2026-13-40 14:01:02.425"):
        prefix, _ = split_prefix(stamp + " [1:2] [INFO] [a.cpp:3] [F] x")
        assert prefix is not None
        assert prefix_ts(stamp) == prefix.ts
    assert prefix_ts("2026-06-10 14:01:02.425") == datetime(2026, 6, 10, 14, 1, 2, 425000)
    assert prefix_ts("2026-13-40 14:01:02.425") is None


def test_fast_prefix_never_crosses_a_line() -> None:
    text = "2026-06-10 14:01:02.425 [1:2] [INFO] [a.cpp\n:3] [F] x\n" + P.format(ms=1) + "body"
    assert [m.group("body") for m in ANY.finditer(text)] == ["body"]


# ----------------------------------------------------------------------------- parsers: fast == general


def _same(parse, path: Path):  # type: ignore[no-untyped-def]
    fast = parse(path)
    general = parse(iter_meta_lines(path), file=str(path))
    assert fast == general
    return fast


def _write(path: Path, lines: list[str], *, final_nl: bool = True) -> Path:
    path.write_bytes(("\n".join(lines) + ("\n" if final_nl else "")).encode())
    return path


def _p(ms: int, func: str = "Dump", pid: int = 48213) -> str:
    return f"2026-06-10 14:01:02.{ms:03d} [{pid}:140425347876672] [DEBUG] [sk_task_builder.cpp:33] [{func}] "


def test_device_args_tasks_entries_and_dfx(tmp_path: Path) -> None:
    lines = [
        _p(1) + "Dumping device args for function: sk_3_s_start_A_end_B",
        _p(2) + "SkHeaderInfo: aicOff=48, aivOff=944, counterOff=2176, dfxOff=6976, eventConfigOff=9, "
        "nodeCnt=2, totalSize=9",
        "",
        _p(3) + "AIC TaskQue: cap=3, tasks=3",
        _p(4) + "[0] type=FUNC, idx=1, nodeId=101, relatedType=AIC_ONLY, blk=24, entries=2, args=0x10, "
        "debugOptions=0x3, extraInfo=0x0",
        _p(5) + "   entry[0]=0xA0",
        _p(6) + "   entry[1]=0xa1",
        _p(7) + "[1] type=SYNC, idx=1, blk=0, entries=2, args=0x0, debugOptions=0x0",
        _p(8) + "   entry[1]=0xB1",  # out of order: the general branch reports it
        _p(9) + "   entry[0]=0xB0",
        _p(10, func="Other")
        + "[2] type=FUNC, idx=2, nodeId=7, blk=1, entries=1, args=0x20, debugOptions=0x0",
        _p(11, pid=7) + "   entry[0]=0xC0",  # another pid: its own match
        _p(12)
        + "dfx[0]: bin=0x5000, ori=0x6000, aicSize=0x30, aivSize=0x0, numBlocks=24, cubeNum=24, vecNum=0",
        _p(13) + "  entryAic[0]=0x1, entryAic[1]=0x2, entryAic[2]=0x3, entryAic[3]=0x4",
        _p(14) + "  entryAiv[2]=0x9, ",
        _p(15) + "dfx[1]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4",
        _p(16) + "  entryAic[0]=0x5,   ",  # trailing blanks after ', ': not a dfx entry line
        _p(17) + "[3] type=FUNC, idx=3, blk=1, entries=0, args=0x1, debugOptions=0x0",  # after dfx
    ]
    res = _same(parse_device_args, _write(tmp_path / "sk_device_args.log", lines))
    (b,) = res.blocks
    aic = b.queues[0]
    assert [(t.position, t.node_id_raw, t.entries, t.src.line) for t in aic.tasks] == [
        (0, 101, (0xA0, 0xA1), 5),
        (1, None, (0xB0,), 8),
        (2, 7, (0xC0,), 11),
    ]
    assert [(u.src.line, u.context) for u in res.unrecognized] == [
        (9, "sk_device_args:entry_out_of_order"),
        (17, "sk_device_args:line"),
        (18, "sk_device_args:task_outside_queue"),
    ]
    assert [(d.index, d.entry_aic, d.entry_aiv) for d in b.dfx] == [
        (0, (1, 2, 3, 4), (None, None, 9, None)),
        (1, (None, None, None, None), (None, None, None, None)),
    ]
    assert res.lines_read == 18 and res.pid_first_line == {48213: 1, 7: 12}
    assert res.first_prefix == (datetime(2026, 6, 10, 14, 1, 2, 1000), 48213, 1)


def test_device_args_damaged_lines(tmp_path: Path) -> None:
    base = [
        _p(1) + "Dumping device args for function: sk_3_s_start_A_end_B",
        _p(3) + "AIV TaskQue: cap=2, tasks=2",
        _p(4)
        + "[0] type=FUNC, idx=1, nodeId=18446744073709551615, blk=24, entries=1, args=0x10, debugOptions=0x0",
        _p(5) + "   entry[0]=0x" + "f" * 17,  # oversized: a gap, not a value
        _p(6) + "[1] type=FUNC, idx=1, nodeId=5, blk=24, entries=1, args=0x10, debugOptions=0x0\r",
        _p(7) + "   entry[0]=0x\u0661",
        _p(8) + "[CONT:1] [2] type=FUNC, idx=2, blk=1, entries=0, args=0x1, debugOptions=0x0",
        "\u0662026-06-10 14:01:02.009 [1:2] [DEBUG] [a.cpp:3] [F] [3] type=FUNC, idx=2, blk=1, entries=0, "
        "args=0x1, debugOptions=0x0",
        _p(10) + "dfx[0]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4",
        _p(11) + "[9] type=FUNC, idx=2, blk=1, entries=0, args=0x1, debugOptions=0x0",
    ]
    res = _same(parse_device_args, _write(tmp_path / "a.log", base, final_nl=False))
    assert [g.kind for g in res.gaps][:1] == ["number_out_of_range"]
    assert res.blocks[0].index_conflicts() == {1: {None, 5}}


def test_index_conflicts_in_first_seen_order(tmp_path: Path) -> None:
    task = "[{i}] type=FUNC, idx={idx}, nodeId={nid}, blk=1, entries=0, args=0x1, debugOptions=0x0"
    lines = [
        _p(1) + "Dumping device args for function: sk_3_s_start_A_end_B",
        _p(2) + "AIC TaskQue: cap=9, tasks=5",
    ]
    for i, (idx, nid) in enumerate([(4, 40), (2, 20), (2, 21), (4, 41), (4, 40), (3, 30)]):
        lines.append(_p(3 + i) + task.format(i=i, idx=idx, nid=nid))
    res = _same(parse_device_args, _write(tmp_path / "a.log", lines))
    assert res.blocks[0].index_conflicts() == {4: {40, 41}, 2: {20, 21}}
    assert [g.detail for g in res.gaps if g.kind == "index_conflict"] == [
        "sk_3_s_start_A_end_B: idx 4 maps to nodeIds ['40', '41']",
        "sk_3_s_start_A_end_B: idx 2 maps to nodeIds ['20', '21']",
    ]


KERNEL = (
    "[nodeId:{nid}, streamId:0, streamIdxInGraph:0, nodeIdxInStream:{nid}] - KernelInfos{{funcName:{f}, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, cubeNum:0, vecNum:48, isScheModeOn:0, "
    "needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, funcHdl:0xaaaaf3c01110}}"
)


def _fused_lines() -> list[str]:
    return [
        _p(1, "PrintSKNodesDetail") + "  SK Function: sk_7_s_start_A_end_C, scope id: 7, Node Count: 3",
        _p(2, "PrintSKNodesDetail") + "    [0] " + KERNEL.format(nid=1, f="A"),
        _p(3, "PrintSKNodesDetail") + "    [1] " + KERNEL.format(nid=2, f="B") + " trailing",
        _p(4, "PrintSKNodesDetail")
        + "    [2] [nodeId:3, streamId:0, streamIdxInGraph:0, nodeIdxInStream:3] - Bogus",
        _p(5, "PrintSKNodesDetail") + "\t[3]\t" + KERNEL.format(nid=4, f="C") + "  ",
        _p(6, "PrintSKNodesDetail") + "    [4] [nodeId:5, streamId:0, streamIdxInGraph:0, nodeIdxInStream:5, "
        "EventNotify(eventId:3, eventFlag:0, eventTaskFlag:1)]",
        "    [5] " + KERNEL.format(nid=6, f="D"),
    ]


def test_fused_nodes_fast_and_general_agree(tmp_path: Path) -> None:
    lines = [_p(0, "X") + "    [9] " + KERNEL.format(nid=9, f="Z"), *_fused_lines()]  # node before any block
    res = _same(parse_fused_nodes, _write(tmp_path / "sk_fused_nodes.log", lines))
    (b,) = res.blocks
    assert [(fn.position, fn.node.node_id, fn.node.func_name, fn.src.line) for fn in b.nodes] == [
        (0, 1, "A", 3),
        (3, 4, "C", 6),
        (4, 5, None, 7),
        (5, 6, "D", 8),
    ]
    assert [(u.src.line, u.context.split(":")[1]) for u in res.unrecognized] == [
        (1, "node_outside_block"),
        (4, "node_trailing_text"),
        (5, "malformed_node"),
    ]


def test_node_detail_fast_and_general_agree(tmp_path: Path) -> None:
    lines = [
        _p(1, "U")
        + "Processed node "
        + KERNEL.format(nid=1, f="A")
        + ": type=KERNEL, scopeFlags=01, isFusible=1, "
        "stackSize=2",
        _p(2, "U") + "Processed node " + KERNEL.format(nid=2, f="B") + ": type=3",
        _p(3, "U") + "Processed node " + KERNEL.format(nid=3, f="C") + ": kind=KERNEL",
        _p(4, "U") + "Processed node [nodeId:4] - Nonsense",
        _p(5, "U", pid=9) + "  Processed node " + KERNEL.format(nid=5, f="E") + ": type=KERNEL  ",
    ]
    res = _same(parse_node_detail, _write(tmp_path / "sk_node_detail.log", lines))
    assert [
        (d.node.node_id, d.node_type, d.scope_flags, d.is_fusible, d.stack_size, d.pid) for d in res.nodes
    ] == [
        (1, "KERNEL", "01", True, 2, 48213),
        (2, "RESET", None, None, None, 48213),
        (5, "KERNEL", None, None, None, 9),
    ]
    assert res.nodes[0].ts == datetime(2026, 6, 10, 14, 1, 2, 1000)
    assert [u.context.split(":")[-1] for u in res.unrecognized][:1] == ["tail"]


#: a node line's ``stackSize`` written in Arabic-Indic digits (``\d`` takes them, ``int`` reads them)
_INDIC = "\u0661\u0662\u0663\u0664\u0665"


@pytest.mark.parametrize("digits", [25, 5000])
def test_an_oversized_number_in_other_digits_is_a_gap_both_ways(tmp_path: Path, digits: int) -> None:
    """A number of other digits than ASCII's, too long for 64 bits: the chunk's byte test (17 ASCII hex
    digits in a row) does not see it, yet the fast branch checks the line, as the line layer does: a
    number_out_of_range gap, no node (5,000 digits stopped the parse with ``int``'s ValueError)."""
    node = "Processed node " + KERNEL.format(nid=1, f="A") + ": type=KERNEL, stackSize="
    lines = [_p(1, "U") + node + "2", _p(2, "U") + node + (_INDIC * digits)[:digits]]
    res = _same(parse_node_detail, _write(tmp_path / "sk_node_detail.log", lines))
    assert [d.node.node_id for d in res.nodes] == [1]
    assert [(g.kind, g.src.line if g.src else None) for g in res.gaps] == [("number_out_of_range", 2)]


def test_a_number_rejoined_across_pieces_is_checked(tmp_path: Path) -> None:
    """The file logger splits a record over 4,096 bytes into pieces marked ``[CONT:n]``; a number split
    at the border shows the byte test two runs shorter than 17 digits, and is whole once the pieces are
    rejoined: the line is checked then, a gap as any other line with a number over 64 bits (written by
    hand after artifacts.md §3.2's continuation rule)."""
    head = _p(1, "U")
    head += "x" * (4096 - len(head) - 12) + " 99999999999"  # the first piece: 4,096 bytes, 11 digits last
    assert len(head.encode()) == 4096
    lines = [head + "[CONT:1] " + "9999999999 tail", _p(2, "U", pid=7) + "Processed node x"]
    path = _write(tmp_path / "sk_node_detail.log", lines)
    res = _same(parse_node_detail, path)
    assert [(g.kind, g.src.line if g.src else None) for g in res.gaps] == [("number_out_of_range", 1)]
    # the over-long line is no writer's: pid 7's is the first prefixed line (gates F4/F7)
    assert res.first_prefix is not None and res.first_prefix[1:] == (7, 2)
    layer = list(iter_meta_lines(path))
    assert layer[0].prefix is None and layer[0].oversized is not None


def test_scope_split_fast_and_general_agree(tmp_path: Path) -> None:
    s = "PrintScopeDetails"
    lines = [
        _p(1, s) + "    [0] " + KERNEL.format(nid=1, f="A"),  # before any snapshot
        _p(2, s) + "==========[ScopeSplitPipeline] iteration 0==========",
        _p(3, s)
        + "========== Scope split results begin: pass=InitialScopeSplitPass, totalScopes=1 ==========",
        _p(4, s) + "Scope 0 (scopeId=7): 3 nodes, 1 streams, scopeBitFlags=1, scopeNames=[n]",
        _p(5, s) + "  BreakInfo: breakReason=NONE",
        _p(6, s) + "  Scope 0 nodes: 3",
        _p(7, s) + "    [0] " + KERNEL.format(nid=1, f="A"),
        _p(8, s) + "    [1] " + KERNEL.format(nid=2, f="Scope split results end: pass=X"),
        _p(9, s) + "    [2] " + KERNEL.format(nid=3, f="C"),
        _p(10, s) + "========== Scope split results end: pass=InitialScopeSplitPass ==========",
    ]
    res = _same(parse_scope_split, _write(tmp_path / "sk_scope_split.log", lines))
    (snap,) = res.snapshots
    # line 8's funcName holds the end marker, which the general patterns search anywhere: it ends the pass
    assert [(n.position, n.node.func_name, n.src.line) for n in snap.scopes[0].nodes] == [(0, "A", 7)]
    assert snap.complete and [(g.kind, g.src.line if g.src else None) for g in res.gaps] == [
        ("pass_mismatch", 8)
    ]
    assert [(u.src.line, u.context) for u in res.unrecognized] == [
        (1, "sk_scope_split:node_outside_scope"),
        (9, "sk_scope_split:node_outside_scope"),
        (10, "sk_scope_split:end_without_begin"),
    ]


def test_file_argument_names_the_records(tmp_path: Path) -> None:
    """``file=`` names the result; records keep the path they were read from (as the line layer does)."""
    f = _write(tmp_path / "sk_fused_nodes.log", _fused_lines())
    res = parse_fused_nodes(f, file="other-name")
    assert res.file == "other-name"
    assert {fn.src.file for b in res.blocks for fn in b.nodes} == {str(f)}


def test_bench_like_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many chunks (a small CHUNK), every kind of line: fast == general for all four parsers."""
    monkeypatch.setattr(textio, "CHUNK", 300)
    lines = []
    for i in range(40):
        lines += [
            _p(i) + f"[{i}] type=FUNC, idx={i}, nodeId={i}, blk=1, entries=2, args=0x1, debugOptions=0x0",
            _p(i) + "   entry[0]=0x10",
            _p(i) + "   entry[1]=0x11",
        ]
    head = [
        _p(0) + "Dumping device args for function: sk_1_s_start_A_end_B",
        _p(0) + "AIC TaskQue: cap=1, tasks=40",
    ]
    res = _same(parse_device_args, _write(tmp_path / "d.log", head + lines))
    assert [len(t.entries) for t in res.blocks[0].tasks] == [2] * 40
    fused = _same(parse_fused_nodes, _write(tmp_path / "f.log", _fused_lines() * 10))
    assert [len(b.nodes) for b in fused.blocks] == [4] * 10
