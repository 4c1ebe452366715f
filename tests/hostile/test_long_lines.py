"""Issue 14 class 4: the line reader is linear and bounded whatever the file holds.

Expectations are written from the contract of ``iter_lines`` (numbers, completeness, CR handling),
not from its output: a cut keeps the first MAX_LINE bytes and records where the rest was skipped.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.fused_nodes import parse_fused_nodes
from skdbg.parsers.plog import read_plog
from skdbg.parsers.textio import iter_lines


def _lines(path: Path, max_line: int) -> list[tuple[int, str, bool, int | None]]:
    return [(t.no, t.text, t.complete, t.cut_at) for t in iter_lines(path, max_line=max_line)]


def test_short_lines_crlf_and_tail(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"one\r\n\ntwo\nthree")
    assert _lines(f, 100) == [
        (1, "one", True, None),
        (2, "", True, None),
        (3, "two", True, None),
        (4, "three", False, None),
    ]


def test_over_long_line_is_cut_with_its_offset(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"ab\n" + b"x" * 25 + b"\nend\n")
    assert _lines(f, 10) == [(1, "ab", True, None), (2, "x" * 10, True, 3 + 10), (3, "end", True, None)]


def test_over_long_tail_without_newline(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"ok\n" + b"y" * 30)
    assert _lines(f, 8) == [(1, "ok", True, None), (2, "y" * 8, False, 3 + 8)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(st.characters(blacklist_categories=("Cc", "Cs")) | st.just("\r"), max_size=40).map(
            str.encode
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_matches_split_on_newlines(tmp_path_factory, pieces: list[bytes], final_nl: bool) -> None:  # type: ignore[no-untyped-def]
    """Lines under the limit come out exactly as ``bytes.split`` gives them (across chunk borders too)."""
    data = b"\n".join(pieces) + (b"\n" if final_nl and pieces else b"")
    f = tmp_path_factory.mktemp("t") / "a.log"
    f.write_bytes(data)
    expected = f.read_bytes().split(b"\n")
    tail = expected.pop()
    want = [
        (i + 1, (r[:-1] if r.endswith(b"\r") else r).decode("utf-8", "replace"), True)
        for i, r in enumerate(expected)
    ]
    if tail:
        t = tail[:-1] if tail.endswith(b"\r") else tail
        want.append((len(expected) + 1, t.decode("utf-8", "replace"), False))
    got = [(t.no, t.text, t.complete) for t in iter_lines(f, max_line=1 << 20)]
    assert got == want


def test_huge_tail_memory_is_bounded(tmp_path: Path) -> None:
    f = tmp_path / "sk_fused_nodes.log"
    with f.open("wb") as fh:
        fh.write(b"SK Function: sk_1_s_start_a_end_b, scope id: 1, Node Count: 0\n")
        for _ in range(48):
            fh.write(b"z" * (1 << 20))  # 48 MiB with no newline
    tracemalloc.start()
    res = parse_fused_nodes(f)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20
    gaps = [g for g in res.gaps if g.kind == "line_too_long"]
    assert [g.src.line for g in gaps if g.src] == [2]
    assert "byte offset" in gaps[0].detail


def test_plog_records_the_cut_as_a_gap(tmp_path: Path) -> None:
    f = tmp_path / "plog-7_20260101000000000.log"
    f.write_bytes(b"q" * ((1 << 20) + 5) + b"\n")
    res = read_plog(f)
    assert [(g.kind, g.src.line) for g in res.gaps if g.src] == [("line_too_long", 1)]
