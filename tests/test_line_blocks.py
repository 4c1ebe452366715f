"""Chunked line splitting (textio.iter_line_blocks) and the super_kernel.log reader built on it.

The expectations are written from artifacts.md §3.2/§3.3 (file-logger prefix, repeated lines of the
dedicated files) and from what :func:`~skdbg.parsers.textio.iter_lines` yields for the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import textio
from skdbg.parsers.common import ParseError, oversized_number
from skdbg.parsers.skmeta_lines import MetaLine, iter_meta_lines
from skdbg.parsers.super_kernel_log import parse_super_kernel_log, read_super_kernel_log
from skdbg.parsers.textio import LineBlock, TextLine, iter_line_blocks, iter_lines

PFX = "2026-06-10 14:01:02.345 [48213:140425347876672] [INFO] "
#: a line of sk_fused_nodes.log repeated in super_kernel.log (§3.2 example)
REPEAT = (
    PFX + "[sk_optimizer.cpp:33] [PrintSKNodesDetail]   SK Function: sk_3_decoder.layer.0.mlp_start_"
    "QuantBatchMatmulV3_a_end_Cast_b, scope id: 3, Node Count: 3"
)
#: a fact only super_kernel.log holds (§3.3)
CHILD = (
    PFX + "[sk_node.cpp:210] [InitKernelResolvedFuncs] funcName=QuantBatchMatmulV3_a, "
    "binDevAddr=0x124080b00000, binDevSize=65536, aicAddr=0x124080b01000, aivAddr=0x124080b01800"
)


def _flat(path: Path, max_line: int = textio.MAX_LINE) -> list[tuple[int, str, bool, int | None]]:
    out = []
    for item in iter_line_blocks(path, max_line=max_line):
        if isinstance(item, TextLine):
            out.append((item.no, item.text, item.complete, item.cut_at))
        else:
            for no, raw in enumerate(item.lines, item.first_no):
                out.append((no, raw.decode("utf-8", "replace"), True, None))
    return out


def _reference(path: Path, max_line: int = textio.MAX_LINE) -> list[tuple[int, str, bool, int | None]]:
    return [(t.no, t.text, t.complete, t.cut_at) for t in iter_lines(path, max_line=max_line)]


def test_crlf_and_missing_trailing_newline(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"one\r\ntwo\n\r\nlast\r")
    assert _flat(f) == [
        (1, "one", True, None),
        (2, "two", True, None),
        (3, "", True, None),
        (4, "last", False, None),
    ]


def test_non_utf8_bytes_are_replaced(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"ok \xff\xfe end\nsecond \xe4\xb8\n")
    assert _flat(f) == [(1, "ok \ufffd\ufffd end", True, None), (2, "second \ufffd", True, None)]


def test_binary_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(ParseError, match="binary"):
        list(iter_line_blocks(f))


def test_over_long_lines_are_cut_like_iter_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textio, "CHUNK", 7)
    f = tmp_path / "a.log"
    f.write_bytes(b"short\n" + b"x" * 40 + b"\nmid\n" + b"y" * 25)
    got = _flat(f, max_line=10)
    assert got == [
        (1, "short", True, None),
        (2, "x" * 10, True, 6 + 10),
        (3, "mid", True, None),
        (4, "y" * 10, False, 6 + 41 + 4 + 10),
    ]


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xff", b"0123456789", b" "]), max_size=60
    ),
    chunk=st.integers(1, 9),
    max_line=st.integers(1, 12),
)
def test_same_lines_as_iter_lines(
    tmp_path_factory: pytest.TempPathFactory, data: list[bytes], chunk: int, max_line: int
) -> None:
    f = tmp_path_factory.mktemp("blocks") / "a.log"
    f.write_bytes(b"".join(data))
    saved = textio.CHUNK
    textio.CHUNK = chunk
    try:
        assert _flat(f, max_line) == _reference(f, max_line)
    finally:
        textio.CHUNK = saved


def test_oversized_number_fast_path_keeps_every_answer() -> None:
    # 21 decimal digits: beyond 64 bits; 17 hex digits after 0x: wider than 64 bits
    assert oversized_number("x 123456789012345678901 y") == "a number beyond 64 bits at column 3 (21 digits)"
    assert (
        oversized_number("pc=0x1ffffffffffffffff")
        == "a hexadecimal value wider than 64 bits at column 4 (17 digits)"
    )
    assert oversized_number("max 18446744073709551615") is None  # 2**64-1 fits
    assert oversized_number("op_123456789012345678901234") is None  # glued to a name: an identifier
    assert oversized_number("short 12") is None
    # digits of another script are digits for the regex: the fast path must not skip them
    assert oversized_number("n " + "\u0663" * 21) == "a number beyond 64 bits at column 3 (21 digits)"


def _write(tmp_path: Path, text: str | bytes) -> Path:
    f = tmp_path / "super_kernel.log"
    f.write_bytes(text.encode() if isinstance(text, str) else text)
    return f


def test_repeated_lines_stay_undecoded_and_facts_are_parsed(tmp_path: Path) -> None:
    other_pid = REPEAT.replace("[48213:", "[7:")
    f = _write(tmp_path, "\r\n".join([REPEAT, CHILD, other_pid, REPEAT]) + "\r\n")
    lines = read_super_kernel_log(f)
    # the first line of each pid is read one by one (it records the pid); later repeats stay bytes
    kinds = [
        (type(x).__name__, x.src.line if isinstance(x, MetaLine) else (x.first_no, x.count)) for x in lines
    ]
    assert kinds == [("MetaLine", 1), ("OtherRun", (2, 1)), ("MetaLine", 3), ("PlainRun", (4, 1))]
    res = parse_super_kernel_log(lines, file=str(f))
    assert res.lines_read == 4
    assert res.plain_text_lines == 3
    assert [(c.func_name, c.bin_dev_addr) for c in res.child_binaries] == [
        ("QuantBatchMatmulV3_a", 0x124080B00000)
    ]
    assert res.first_prefix is not None and res.first_prefix[1:] == (48213, 1)
    assert res.pid_first_line == {48213: 1, 7: 3}


def test_truncated_last_line_and_non_utf8_are_decoded(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        (REPEAT + "\n" + REPEAT.replace("Node Count: 3", "Node \xff")).encode("latin-1")
        + b"\n"
        + REPEAT[:60].encode(),
    )
    lines = read_super_kernel_log(f).items
    assert isinstance(lines[0], MetaLine)  # the pid's first line
    assert isinstance(lines[1], MetaLine)  # non-ASCII: decoded, as the text reader would
    assert "\ufffd" in lines[1].message
    assert isinstance(lines[2], MetaLine) and lines[2].complete is False


def test_oversized_number_in_a_repeated_line_is_still_a_gap(tmp_path: Path) -> None:
    bad = REPEAT.replace("scope id: 3", "scope id: 123456789012345678901")
    f = _write(tmp_path, REPEAT + "\n" + bad + "\n")
    res = parse_super_kernel_log(read_super_kernel_log(f), file=str(f))
    assert [(g.kind, g.src.line if g.src else None) for g in res.gaps] == [("number_out_of_range", 2)]


def test_same_result_as_the_line_reader(tmp_path: Path) -> None:
    reorder = [
        PFX + "[sk_node.cpp:33] [ReorderWaitNodesForTaskBuild] reordered task nodes: node count=2",
        REPEAT,  # a repeat inside an open block must be seen by it (it closes the block here)
        CHILD,
        PFX + "[sk_node.cpp:33] [PrintSKNodesDetail] ",  # blank body
        PFX + "[sk_node.cpp:33] [DumpTaskQueDetail] [FORMAT_ERROR] Failed to format log message",
        "no prefix at all",
    ]
    f = _write(tmp_path, "\n".join(reorder) + "\n")
    fast = parse_super_kernel_log(read_super_kernel_log(f), file=str(f))
    slow = parse_super_kernel_log(list(iter_meta_lines(f)), file=str(f))
    assert fast == slow
    assert len(fast.reordered) == 1 and len(fast.format_errors) == 1 and fast.plain_text_lines == 2


def test_blocks_are_lists_of_whole_lines(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"a\nb\nc\n")
    (block,) = list(iter_line_blocks(f))
    assert isinstance(block, LineBlock) and block.lines == [b"a", b"b", b"c"] and block.first_no == 1
