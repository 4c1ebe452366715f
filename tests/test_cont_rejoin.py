"""The file logger's ``[CONT:n]`` pieces (artifacts.md §3.2, row 48) rejoined on a line's bytes.

The logger writes a record longer than 4096 bytes in 4096-byte pieces, each after the first behind a
``[CONT:n] `` marker and no newline; a piece border may fall inside a character's UTF-8 bytes. Every
reader (the line layer, its whole-chunk fast path, super_kernel.log's runs, a file's outline, the
handler parser's file stream, the tail read of the last stamp) must give the record's own text. The
records here are written by hand in §3.2's shape, split as the spec says, with CJK text placed so that
the border cuts a character; the property test shrinks the piece size so that many borders fall.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers import filelog
from skdbg.parsers.filelog import PIECE, rejoin_cont, rejoin_cont_bytes
from skdbg.parsers.filelog_outline import outline_file_log
from skdbg.parsers.sk_parser import iter_filelog_messages
from skdbg.parsers.sklog_runs import read_super_kernel_log
from skdbg.parsers.skmeta_lines import MetaLine, iter_meta_lines, last_stamp, raw_meta_line
from skdbg.parsers.skmeta_scan import FastScan, fast_pattern

PREFIX = "2026-06-10 14:01:{s:02d}.445 [48213:140425347876672] [INFO] [sk_graph.cpp:33] [PrintScopeDetails] "
NEVER = fast_pattern(r"(?P<never>(?!))")
WIDE = "\u8bbe\u5907"  # two characters of three UTF-8 bytes each


def spliced(record: bytes, piece: int = PIECE) -> bytes:
    """``record`` (without its newline) as the logger writes it, newline included: in ``piece``-byte
    pieces of the record and its newline, each after the first behind ``[CONT:n] ``."""
    full = record + b"\n"
    parts = [full[i : i + piece] for i in range(0, len(full), piece)]
    return parts[0] + b"".join(b"[CONT:%d] " % k + p for k, p in enumerate(parts[1:], 1))


def record_cut_inside_a_character(second: int = 2) -> bytes:
    """A prefixed record of ~9 KB whose first piece border falls on the second byte of a character."""
    head = PREFIX.format(s=second).encode() + b"scope names: "
    pad = b"a" * (PIECE - len(head) - 2)  # the border two bytes into the next character
    body = (WIDE * 900).encode()
    record = head + pad + body
    assert record[PIECE - 1 : PIECE + 1] == WIDE.encode()[1:3]  # (the border splits a character)
    return record


def test_the_bytes_are_the_records_own() -> None:
    record = record_cut_inside_a_character()
    line = spliced(record)[:-1]
    assert line.count(b"[CONT:") == 2
    assert rejoin_cont_bytes(line) == record
    assert rejoin_cont_bytes(record) is record  # nothing to remove: the same object
    short = b"x" * 10 + b"[CONT:1] y"
    assert rejoin_cont_bytes(short) is short  # a marker-like text of a short line stays


def test_a_marker_not_at_a_border_stays() -> None:
    line = b"a" * (PIECE + 5) + b"[CONT:1] b"
    assert rejoin_cont_bytes(line) == line
    # the first border holds one, the second does not: only the first goes
    line = b"a" * PIECE + b"[CONT:1] " + b"b" * 10 + b"[CONT:2] c"
    assert rejoin_cont_bytes(line) == b"a" * PIECE + b"b" * 10 + b"[CONT:2] c"


def test_text_of_more_bytes_than_characters_is_rejoined() -> None:
    """A record of fewer than 4096 characters but more bytes holds a marker: the text version measures
    bytes (it measured characters, and kept the marker)."""
    record = ("x" * 1000 + WIDE * 600).encode()  # 2,200 characters, 4,600 bytes
    assert len(record.decode()) < PIECE < len(record)
    assert (PIECE - 1000) % 3 == 0  # the border falls between two characters: the text decodes
    text = spliced(record)[:-1].decode()
    assert "[CONT:1] " in text
    assert rejoin_cont(text) == record.decode()


def _messages(lines: list[MetaLine]) -> list[str]:
    return [ml.message for ml in lines]


def _log_messages(path: Path) -> list[str]:
    """Each line's message as :func:`read_super_kernel_log` holds it: a line read alone (a MetaLine, as
    a record in pieces is) or a line of a run of clean lines (bytes, their prefix split here)."""
    out: list[str] = []
    for item in read_super_kernel_log(path).items:
        if isinstance(item, MetaLine):
            out.append(item.message)
        else:
            out.extend(raw_meta_line(raw, no, str(path), check=True).message for no, raw in item.lines())
    return out


def test_every_reader_gives_the_record(tmp_path: Path) -> None:
    record = record_cut_inside_a_character(3)
    message = record.decode()[len(PREFIX.format(s=3)) :]
    before = PREFIX.format(s=1).encode() + b"before"
    after = PREFIX.format(s=4).encode() + b"after"
    f = tmp_path / "sk_scope_split.log"
    f.write_bytes(before + b"\n" + spliced(record) + after + b"\n")

    layer = list(iter_meta_lines(f))
    assert _messages(layer) == ["before", message, "after"]
    assert [ml.src.line for ml in layer] == [1, 2, 3]
    assert [ml.ts for ml in layer] == [datetime(2026, 6, 10, 14, 1, s, 445000) for s in (1, 3, 4)]

    fast = [x for x in FastScan(f, NEVER, what="sk_scope_split.log") if isinstance(x, MetaLine)]
    assert fast == layer

    assert _log_messages(f) == ["before", message, "after"]

    outline = outline_file_log(f, what="sk_scope_split.log")
    assert outline.pid_first_line == {48213: 1}

    texts = [m.text for m in iter_filelog_messages(str(f))]
    assert texts == ["before", message, "after"]

    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 4, 445000)


def test_the_unterminated_last_line_gives_the_record(tmp_path: Path) -> None:
    """The file's last line without its newline comes as a ``TextLine``: rejoined on its bytes too."""
    record = record_cut_inside_a_character(5)
    message = record.decode()[len(PREFIX.format(s=5)) :]
    f = tmp_path / "sk_scope_split.log"
    f.write_bytes(PREFIX.format(s=1).encode() + b"first\n" + spliced(record)[:-1])
    layer = list(iter_meta_lines(f))
    assert _messages(layer) == ["first", message]
    assert layer[-1].complete is False
    fast = [x for x in FastScan(f, NEVER, what="sk_scope_split.log") if isinstance(x, MetaLine)]
    assert fast == layer
    assert last_stamp(f) == datetime(2026, 6, 10, 14, 1, 5, 445000)


_TEXT = st.lists(
    st.sampled_from(["a", " ", "0", "\u00e9", WIDE, "\U0001f600", "]"]), min_size=1, max_size=60
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bodies=st.lists(_TEXT, min_size=1, max_size=6),
    piece=st.sampled_from([40, 61, 64, 97]),
    last_newline=st.booleans(),
)
def test_random_records_split_anywhere_read_back_whole(
    tmp_path: Path, bodies: list[str], piece: int, last_newline: bool
) -> None:
    """Pieces of a few dozen bytes: borders inside characters of one to four bytes, markers right
    before the newline, records of one piece; every reader gives each record's text."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(filelog, "PIECE", piece)
        records = [(PREFIX.format(s=k % 60).encode() + body.encode()) for k, body in enumerate(bodies)]
        data = b"".join(spliced(r, piece) for r in records)
        if not last_newline:
            data = data[:-1]
        f = tmp_path / "sk_scope_split.log"
        f.write_bytes(data)
        want = [r.decode()[len(PREFIX.format(s=k % 60)) :] for k, r in enumerate(records)]
        layer = list(iter_meta_lines(f))
        assert _messages(layer) == want
        fast = [x for x in FastScan(f, NEVER, what="sk_scope_split.log") if isinstance(x, MetaLine)]
        assert fast == layer
        assert _log_messages(f) == want


def test_a_short_line_of_bytes_that_are_not_utf8_keeps_its_marker_like_text(tmp_path: Path) -> None:
    """Under 4096 bytes no piece border is reached, whatever the line's text becomes once decoded with
    replacements (three bytes each, once encoded again): every reader keeps a ``[CONT:1] `` written
    there, as the line's own bytes say (helper-112 found the fast path rejoining it)."""
    from skdbg.parsers.scope_split import parse_scope_split

    head = PREFIX.format(s=2).encode()
    body = b"\xff" * ((PIECE - len(head)) // 3)
    line = head + body + b"a" * (PIECE - len(head) - 3 * len(body)) + b"[CONT:1] tail"
    assert len(line) < PIECE < len(line.decode("utf-8", "replace").encode())
    f = tmp_path / "sk_scope_split.log"
    f.write_bytes(line + b"\n")
    layer = list(iter_meta_lines(f))
    assert layer[0].message.endswith("[CONT:1] tail")
    fast = [x for x in FastScan(f, NEVER, what="sk_scope_split.log") if isinstance(x, MetaLine)]
    assert fast == layer
    assert _log_messages(f) == [layer[0].message]
    by_path = parse_scope_split(f).unrecognized
    by_lines = parse_scope_split(iter_meta_lines(f), file=str(f)).unrecognized
    assert [u.text for u in by_path] == [u.text for u in by_lines]
