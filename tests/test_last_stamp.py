"""``last_stamp`` (the last stamp of an sk_meta file, read from its end) and the evidence index's
``_stamp_span`` against the plain forward read they replace: every line made a ``MetaLine`` by
``iter_meta_lines``, the stamps and pids kept. The files are written here line by line in the file
logger's format (``2026-06-10 14:01:02.445 [pid:tid] [LEVEL] [file:line] [Func] text``), with the
shapes the line layer treats apart: CRLF ends, an unterminated last line, lines over ``MAX_LINE``,
lines without a prefix, oversized numbers, ``[CONT:n]`` pieces, a stamp out of range."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.skmeta_lines import iter_meta_lines, last_stamp
from skdbg.parsers.textio import MAX_LINE
from skdbg.triage import report as report_mod


def stamped(second: int, pid: int = 48213, text: str = "Processed node [nodeId:1]") -> bytes:
    return f"2026-06-10 14:01:{second:02d}.445 [{pid}:1404] [INFO] [sk_graph.cpp:33] [Update] {text}".encode()


def forward(path: Path) -> tuple[datetime | None, datetime | None, int | None]:
    """The evidence index's old loop, kept as the reference."""
    first = last = None
    producer: int | None = None
    for ml in iter_meta_lines(path):
        if ml.ts is not None:
            first = first or ml.ts
            last = ml.ts
            producer = producer or ml.pid
    return first, last, producer


def test_the_last_stamped_line_of_a_hand_written_file(tmp_path: Path) -> None:
    f = tmp_path / "sk_node_detail.log"
    f.write_bytes(stamped(1) + b"\n" + stamped(2) + b"\r\n" + b"no prefix here\n" + b"\n")
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 2, 445000)
    f.write_bytes(stamped(1) + b"\n" + stamped(3) + b"\r")  # unterminated, its \r dropped
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 3, 445000)
    f.write_bytes(b"")
    assert last_stamp(f) is None
    f.write_bytes(b"plain\ntext\n")
    assert last_stamp(f) is None


def test_a_stamp_far_from_the_end_is_found_through_larger_reads(tmp_path: Path) -> None:
    f = tmp_path / "sk_scope_split.log"
    f.write_bytes(stamped(7) + b"\n" + b"x" * 100 + b"\n" + b"no stamp\n" * 40_000)  # 360 KB after it
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 7, 445000)


def test_a_line_over_max_line_is_cut_as_the_forward_read_cuts_it(tmp_path: Path) -> None:
    f = tmp_path / "sk_fused_nodes.log"
    long = stamped(9) + b" " + b"y" * MAX_LINE  # its head (the prefix) is kept: the stamp counts
    f.write_bytes(stamped(8) + b"\n" + long + b"\n" + b"tail without prefix\n")
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 9, 445000) == forward(f)[1]


def test_an_oversized_number_drops_the_prefix_as_the_forward_read_does(tmp_path: Path) -> None:
    f = tmp_path / "sk_device_args.log"
    over = stamped(5, text="args=0x1234567890abcdef12345")  # 21 hex digits: no prefix read
    f.write_bytes(stamped(4) + b"\n" + over + b"\n")
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 4, 445000) == forward(f)[1]


def test_a_number_joined_from_cont_pieces_drops_the_prefix_as_the_forward_read_does(tmp_path: Path) -> None:
    """Digits split by a ``[CONT:n]`` marker at the 4096-byte border hold no 17-digit run in the bytes,
    but one in the joined text: the forward read checks every line whose pieces it joined, whatever its
    chunk holds, so the tail's answer is the forward read's (the line before)."""
    head = stamped(6, text="")
    pad = b"p" * (4096 - len(head) - 11) + b" "  # the digits start a word: a number
    line = head + pad + b"9999999999" + b"[CONT:1] " + b"9999999999 end"  # 20 nines: over 64 bits
    f = tmp_path / "sk_device_args.log"
    f.write_bytes(stamped(5) + b"\n" + line + b"\n")
    assert len(head + pad + b"9999999999") == 4096
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 5, 445000) == forward(f)[1]
    first, last, producer = report_mod._stamp_span(f)
    assert (first, last, producer) == forward(f)


LINES = st.sampled_from(
    [
        stamped(1),
        stamped(2, pid=0),
        stamped(3, pid=7),
        b"2026-13-40 14:01:02.445 [48213:1] [INFO] [a.cpp:1] [F] month 13",  # a prefix without a stamp
        b"",
        b"   ",
        b"no prefix",
        stamped(4, text="n 123456789012345678901"),  # 21 decimal digits: over 64 bits
        stamped(5) + b"\r",
        b"\r",
        b"\xff\xfe not utf-8",
    ]
)


@settings(max_examples=120, deadline=None)
@given(st.lists(LINES, max_size=12), st.booleans(), st.integers(0, 3))
def test_random_files_give_the_forward_reads_stamps(lines: list[bytes], ended: bool, pad: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "sk_node_detail.log"
        body = b"\n".join(lines) + (b"\n" if ended and lines else b"")
        # filler lines without a stamp push the last stamp past the first read (64 KB) now and then
        f.write_bytes(body + b"filler\n" * (pad * 9000))
        want = forward(f)
        assert last_stamp(f) == want[1]
        assert report_mod._stamp_span(f) == want


def test_the_bundled_scenes_sk_meta_gives_the_same_span() -> None:
    root = Path(__file__).resolve().parents[1] / "examples" / "scenes"
    files = sorted(root.glob("*/sk_meta/*/*/*.log"))
    assert len(files) > 10
    for f in files:
        assert report_mod._stamp_span(f) == forward(f), f


def test_a_read_that_fails_keeps_what_came_before_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the forward loop did: the stamps read before a failed read are kept."""
    f = tmp_path / "sk_node_detail.log"
    f.write_bytes(stamped(1, pid=0) + b"\n" + stamped(2, pid=0) + b"\n")  # pid 0: read on to the end

    def failing(path: object, *, what: str = "") -> object:
        yield from list(iter_meta_lines(f))[:1]
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(report_mod, "iter_meta_lines", failing)
    first, last, producer = report_mod._stamp_span(f)
    assert first == last == datetime(2026, 6, 10, 14, 1, 1, 445000) and producer == 0


def test_a_prefix_of_other_digits_is_an_oversized_number_whatever_its_chunk_holds(tmp_path: Path) -> None:
    """A pid written in 5,000 Arabic-Indic digits: the chunk's byte test sees no run of ASCII hex digits,
    yet the line layer checks the non-ASCII line and reads no prefix (``int`` of such a pid used to stop
    the read with a ``ValueError``), and the end-first read agrees."""
    f = tmp_path / "sk_node_detail.log"
    odd = stamped(2).replace(b"48213", "\u0663".encode() * 5000)
    f.write_bytes(stamped(1) + b"\n" + odd + b"\n" + stamped(3) + b"\n")
    lines = list(iter_meta_lines(f))
    assert [ml.prefix is None for ml in lines] == [False, True, False]
    assert lines[1].oversized is not None
    assert (
        report_mod._stamp_span(f)
        == forward(f)
        == (
            datetime(2026, 6, 10, 14, 1, 1, 445000),
            datetime(2026, 6, 10, 14, 1, 3, 445000),
            48213,
        )
    )
    f.write_bytes(stamped(1) + b"\n" + odd + b"\n")  # the odd line last: no stamp there
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 1, 445000)


def test_an_unterminated_last_line_is_checked_as_the_forward_read_checks_it(tmp_path: Path) -> None:
    """The file's last line without a newline goes through ``to_meta_line``, which always looks for
    oversized numbers: no chunk context needed, so no fallback."""
    head = stamped(6, text="")
    pad = b"p" * (4096 - len(head) - 11) + b" "
    f = tmp_path / "sk_device_args.log"
    f.write_bytes(stamped(5) + b"\n" + head + pad + b"9999999999[CONT:1] 9999999999 end")
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 5, 445000) == forward(f)[1]
