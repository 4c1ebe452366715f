"""The headless line index behind the plog viewer (skdbg.parsers.lineindex; issue 4 "Log").

Properties: offsets agree with the project's line reader and with ``str.splitlines`` on arbitrary bytes
(CRLF, no trailing newline), however the batches are cut; merge order is stable and time-sorted;
search finds what a naive per-line scan finds; fault lines agree with ``scan_plog``.
"""

from __future__ import annotations

import os
import random
import re
import threading
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textlines import iter_text_lines

from skdbg.parsers.common import ParseError
from skdbg.parsers.lineindex import (
    HeaderColumns,
    LineIndex,
    compile_pattern,
    fault_lines,
    header_columns,
    line_meta,
    merge_order,
    search_file,
    search_order,
    ts_key,
    ts_keys,
)
from skdbg.parsers.plog import scan_plog
from skdbg.parsers.plog_line import format_plog_ts
from skdbg.scenebuilder import plog as sb
from skdbg.scenebuilder.lines import sk_plog_line

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# bytes biased towards line endings so short inputs still have many lines
CONTENT = st.lists(
    st.sampled_from([b"a", b"b", b"\n", b"\r\n", b"\r", b" ", b"\xff", "é".encode()]), max_size=80
).map(b"".join)


def _write(tmp_path: Path, data: bytes, name: str = "f.log") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _index(p: Path, first: int, batch: int) -> LineIndex:
    ix = LineIndex(p)
    for _ in ix.build(first_batch=first, batch=batch):
        pass
    return ix


@SETTINGS
@given(data=CONTENT, first=st.integers(1, 20), batch=st.integers(1, 20), piece=st.integers(1, 9))
def test_lines_equal_the_project_line_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, first: int, batch: int, piece: int
) -> None:
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "_READ_PIECE", piece)  # a batch is read in pieces of this many bytes
    ix = _index(_write(tmp_path, data), first, batch)
    expected = [t.text for t in iter_text_lines(data.decode("utf-8", errors="replace"))]
    assert ix.done
    assert [ix.line(i) for i in range(ix.lines)] == expected


@SETTINGS
@given(
    data=st.lists(st.sampled_from([b"x", b"yz", b"\n", b"\r\n", b"\t"]), max_size=80).map(b"".join),
    first=st.integers(1, 20),
    batch=st.integers(1, 20),
)
def test_offsets_equal_splitlines_positions(tmp_path: Path, data: bytes, first: int, batch: int) -> None:
    """Without lone CR (which str.splitlines also treats as a break) the lines are str.splitlines'."""
    ix = _index(_write(tmp_path, data), first, batch)
    text = data.decode()
    parts = text.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(p.encode()) for p in parts])[: len(parts)]
    assert ix.starts().tolist() == starts.tolist()
    assert [ix.line(i) for i in range(ix.lines)] == text.splitlines()


def test_index_is_readable_while_it_grows_and_resumes_after_cancel(tmp_path: Path) -> None:
    data = b"".join(b"line %d\n" % i for i in range(5000))
    ix = LineIndex(_write(tmp_path, data))
    calls = 0

    def cancel() -> bool:
        nonlocal calls
        calls += 1
        return calls > 3

    progress = list(ix.build(cancel, first_batch=100, batch=1000))
    assert ix.cancelled and not ix.done
    assert progress[-1].bytes_done < len(data) and not progress[-1].done
    partial = ix.lines
    assert 0 < partial < 5000
    assert ix.line(partial - 1) == f"line {partial - 1}"  # last indexed line reads ahead to its end
    ix.build_all()
    assert ix.done and ix.lines == 5000 and ix.line(4999) == "line 4999"
    with pytest.raises(IndexError):
        ix.span(5000)


def test_concurrent_builders_and_readers_agree(tmp_path: Path) -> None:
    """The viewer's indexer, a search needing the whole file and the UI reading lines, all at once."""
    n = 200_000
    data = b"".join(b"%d\n" % i for i in range(n))
    ix = LineIndex(_write(tmp_path, data))
    bad: list[str] = []

    def build(first: int, batch: int) -> None:
        for _ in ix.build(first_batch=first, batch=batch):
            pass

    def read() -> None:
        while not ix.done:
            k = ix.lines  # (0 before the first batch is published: no line to read yet)
            for i in {0, k // 2, k - 1}:
                if 0 <= i < k and (got := ix.line(i)) != str(i):
                    bad.append(f"{i}: {got!r}")

    threads = [threading.Thread(target=build, args=(64, 4096)), threading.Thread(target=ix.build_all)]
    threads.append(threading.Thread(target=read))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert ix.done and ix.lines == n and not bad
    assert ix.starts().tolist() == LineIndex(tmp_path / "f.log").build_all().starts().tolist()


def test_missing_file_and_directory_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="does not exist"):
        LineIndex(tmp_path / "nope.log")
    with pytest.raises(ParseError, match="a regular file, got a directory"):
        LineIndex(tmp_path)
    fifo = tmp_path / "pipe.log"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        with pytest.raises(ParseError, match=r"pipe.log: expected a log file \(a regular file, got a FIFO\)"):
            LineIndex(fifo)


def test_max_line_bytes_and_line_of_offset(tmp_path: Path) -> None:
    ix = LineIndex(_write(tmp_path, b"ab\n" + b"x" * 50 + b"\nc")).build_all()
    assert ix.max_line_bytes == 51
    assert ix.raw_line(1, max_bytes=5) == b"xxxxx"


@SETTINGS
@given(
    lines=st.lists(st.sampled_from(["foo", "bar", "fo", "xfoo", "", "FOO\r"]), max_size=40),
    start=st.integers(-1, 45),
    backwards=st.booleans(),
)
def test_search_agrees_with_a_naive_scan(
    tmp_path: Path, lines: list[str], start: int, backwards: bool
) -> None:
    p = _write(tmp_path, "\n".join(lines).encode())
    ix = LineIndex(p).build_all()
    texts = [ix.line(i) for i in range(ix.lines)]
    for pattern in ("foo$", "^fo", "o+", "^$", "x*"):
        rx = re.compile(pattern)
        if backwards:
            want = next((i for i in range(min(start, len(texts)) - 1, -1, -1) if rx.search(texts[i])), None)
        else:
            want = next((i for i in range(start + 1, len(texts)) if rx.search(texts[i])), None)
        got = search_file(ix, compile_pattern(pattern), start, backwards=backwards)
        assert got == want, (pattern, start, backwards)


def test_search_streams_across_blocks_and_literal_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "SEARCH_BLOCK", 64)
    data = "".join(f"row {i} {'needle' if i in (3, 150, 777) else 'hay'} a.b\n" for i in range(1000)).encode()
    ix = LineIndex(_write(tmp_path, data)).build_all()
    pat = compile_pattern("needle")
    assert search_file(ix, pat, -1) == 3
    assert search_file(ix, pat, 3) == 150
    assert search_file(ix, pat, 777) is None
    assert search_file(ix, pat, 999, backwards=True) == 777
    assert search_file(ix, pat, 150, backwards=True) == 3
    assert search_file(ix, compile_pattern("A.B", regex=False, ignore_case=True), -1) == 0
    assert search_file(ix, compile_pattern("a.b", regex=False), -1) == 0
    assert search_file(ix, compile_pattern("row 5 hay a\\.b"), -1) == 5
    cancelled = search_file(ix, pat, 150, cancel=lambda: True)
    assert cancelled is None


@SETTINGS
@given(
    files=st.lists(
        st.lists(st.sampled_from(["foo", "bar", "xfoo", "", "FOO\r", "fo o"]), max_size=15),
        min_size=1,
        max_size=3,
    ),
    newline_at_end=st.booleans(),
    seed=st.integers(0, 1000),
    start=st.integers(-1, 50),
    backwards=st.booleans(),
    chunk=st.integers(1, 7),
    shuffled=st.booleans(),
)
def test_search_order_agrees_with_a_naive_scan(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: list[list[str]],
    newline_at_end: bool,
    seed: int,
    start: int,
    backwards: bool,
    chunk: int,
    shuffled: bool,
) -> None:
    """Shuffled rows (a time merge) and rows in file order (runs of neighbouring lines, read as
    one slice each), some dropped as a filter would."""
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "ROW_CHUNK", chunk)
    indexes = []
    texts: list[str] = []
    for n, lines in enumerate(files):
        data = "\n".join(lines) + ("\n" if newline_at_end and lines else "")
        ix = LineIndex(_write(tmp_path, data.encode(), f"f{n}.log")).build_all()
        indexes.append(ix)
        texts.extend(ix.line(i) for i in range(ix.lines))
    order = np.arange(len(texts), dtype=np.int64)
    if shuffled:
        random.Random(seed).shuffle(order)
        order = order[: max(0, len(order) - seed % 3)]  # a filter drops some lines
    else:
        order = order[
            np.array([random.Random(seed + r).random() < 0.8 for r in range(len(order))], dtype=bool)
        ]
    rows = [texts[g] for g in order.tolist()]
    for pattern in ("foo$", "^fo", "o+ ?o", "^$", "x*"):
        rx = re.compile(pattern)
        if backwards:
            want = next((r for r in range(min(start, len(rows)) - 1, -1, -1) if rx.search(rows[r])), None)
        else:
            want = next((r for r in range(start + 1, len(rows)) if rx.search(rows[r])), None)
        got = search_order(indexes, order, compile_pattern(pattern), start, backwards=backwards)
        assert got == want, (pattern, start, backwards, rows)


def _plog(ts: datetime, pid: int, level: str, text: str) -> str:
    return f"[{level}] RUNTIME({pid},python3):{format_plog_ts(ts)} [stream.cc:1] {pid} F:{text}"


def test_header_columns_inherit_for_continuation_lines(tmp_path: Path) -> None:
    t0 = datetime(2026, 6, 10, 14, 0, 0)
    lines = [
        "preamble without header",
        _plog(t0, 7, "INFO", "a"),
        "Traceback (continuation)",
        _plog(t0 + timedelta(seconds=1), 8, "ERROR", "b"),
        "  tail",
    ]
    ix = LineIndex(_write(tmp_path, "\n".join(lines).encode()))
    c = header_columns(ix)
    assert c is not None
    assert c.has_header.tolist() == [False, True, False, True, False]
    assert c.pid.tolist() == [7, 7, 7, 8, 8]
    assert [c.levels[v] for v in c.level] == ["INFO", "INFO", "INFO", "ERROR", "ERROR"]
    k0 = ts_key(2026, 6, 10, 14, 0, 0, 0)
    assert c.ts.tolist() == [k0, k0, k0, k0 + 1_000_000, k0 + 1_000_000]
    assert c.modules == ["RUNTIME"]


def test_header_columns_of_a_file_without_headers(tmp_path: Path) -> None:
    c = header_columns(LineIndex(_write(tmp_path, b"a\nb\n")))
    assert c is not None
    assert c.ts.tolist() == [-1, -1] and not c.has_header.any()


def test_ts_key_orders_like_datetimes() -> None:
    rng = random.Random(5)
    stamps = [datetime(2020, 1, 1) + timedelta(microseconds=rng.randrange(10**14)) for _ in range(500)]
    keys = [ts_key(s.year, s.month, s.day, s.hour, s.minute, s.second, s.microsecond) for s in stamps]
    assert sorted(range(500), key=lambda i: stamps[i]) == sorted(range(500), key=lambda i: keys[i])
    vectorised = ts_keys("".join(format_plog_ts(s) for s in stamps).encode())
    assert vectorised.tolist() == keys


def _columns(ts: list[int]) -> HeaderColumns:
    n = len(ts)
    return HeaderColumns(
        np.array(ts, dtype=np.int64),
        np.zeros(n, dtype=np.int16),
        np.zeros(n, dtype=np.int32),
        np.zeros(n, dtype=np.int64),
        np.ones(n, dtype=np.bool_),
        ["INFO"],
        ["RUNTIME"],
    )


@settings(max_examples=200, deadline=None)
@given(files=st.lists(st.lists(st.integers(0, 5), max_size=12), max_size=4))
def test_merge_order_is_time_sorted_and_stable(files: list[list[int]]) -> None:
    order = merge_order([_columns(f) for f in files])
    flat = [(t, k, i) for k, f in enumerate(files) for i, t in enumerate(f)]
    assert sorted(order.tolist()) == list(range(len(flat)))
    assert [flat[g] for g in order.tolist()] == sorted(flat)  # by time, then file, then line


def test_merge_of_two_real_plogs(tmp_path: Path) -> None:
    t0 = datetime(2026, 6, 10, 14, 0, 0)
    a = [_plog(t0 + timedelta(milliseconds=2 * i), 1, "INFO", f"a{i}") for i in range(5)]
    b = [_plog(t0 + timedelta(milliseconds=2 * i + 1), 2, "INFO", f"b{i}") for i in range(5)]
    a.insert(2, "continuation of a1")
    cols = [
        header_columns(LineIndex(_write(tmp_path, "\n".join(x).encode(), n))) for x, n in ((a, "a"), (b, "b"))
    ]
    assert cols[0] is not None and cols[1] is not None
    order = merge_order([cols[0], cols[1]])
    texts = a + b
    merged = [texts[g].rsplit(":", 1)[-1] for g in order.tolist()]
    assert merged == ["a0", "b0", "a1", "continuation of a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"]


def test_fault_lines_agree_with_scan_plog(tmp_path: Path) -> None:
    rng = random.Random(3)
    lines = sb.noise_lines(rng, 3000, pid=9)
    t = datetime(2026, 6, 10, 15, 0, 0)
    for at in (10, 1500, 2990):
        lines[at:at] = sb.runtime_incident_lines(t, pid=9)
    p = _write(tmp_path, ("\n".join(lines) + "\n").encode(), "plog-9_20260610140000000.log")
    got = fault_lines(LineIndex(p))
    assert got is not None
    want = [r.src.line - 1 for r in scan_plog(p) if r.src.line is not None]
    assert got.tolist() == want and len(want) >= 3 * 5
    assert fault_lines(LineIndex(p), cancel=lambda: True) is None


def test_fault_stops_take_an_sk_handler_block_once(tmp_path: Path) -> None:
    t = datetime(2026, 6, 10, 15, 0, 0)
    sk = [sk_plog_line("INFO", 9, "python3", t, "PrintTaskQueue", f"task {i}") for i in range(5)]
    noise = sb.noise_lines(random.Random(8), 4, pid=9)
    incident = sb.runtime_incident_lines(t, pid=9)
    lines = [*noise, *incident, *sk, noise[0], *sk[:2], *incident[:1]]
    p = _write(tmp_path, "\n".join(lines).encode())
    every = fault_lines(LineIndex(p))
    stops = fault_lines(LineIndex(p), stops=True)
    assert every is not None and stops is not None
    n_inc = len(incident)
    assert every.tolist() == [*range(4, 4 + n_inc + 5), *range(5 + n_inc + 5, 5 + n_inc + 5 + 3)]
    sk1 = 4 + n_inc  # first line of the first handler block
    sk2 = sk1 + 6  # after one noise line, the second block
    assert stops.tolist() == [*range(4, 4 + n_inc), sk1, sk2, sk2 + 2]


def test_line_meta_of_plog_and_other_lines() -> None:
    t = datetime(2026, 6, 10, 14, 0, 0, 123456)
    meta = line_meta(_plog(t, 42, "ERROR", "x"), "f.log", 1)
    assert (meta.level, meta.module, meta.pid, meta.ts, meta.func) == ("ERROR", "RUNTIME", 42, t, "F")
    assert line_meta("not a plog line").level is None


# -- files cut or replaced while open (positional reads, never mmap) --------------------------------

_CUT_WHILE_INDEXING = r"""
import os, sys
from skdbg.parsers.lineindex import LineIndex
path = sys.argv[1]
ix = LineIndex(path)
steps = ix.build(first_batch=4096, batch=65536)
first = next(steps)
with open(path, "r+b") as fh:  # the writer cuts the log while the viewer indexes it
    fh.truncate(10_000)
for _ in steps:
    pass
print(first.lines, ix.lines, ix.done, ix.size, repr(ix.raw_line(ix.lines - 1)), repr(ix.raw_line(0)), sep="|")
"""


def test_a_file_cut_while_indexed_ends_the_index_without_a_crash(tmp_path: Path) -> None:
    """A file mapped with mmap and cut meanwhile kills the process (SIGBUS) at the next touch past
    its new end; read positionally, the index stops where the bytes end. Run in a child process so
    that a crash is this test's failure, not the test run's end."""
    import subprocess
    import sys

    data = b"".join(b"line %07d\n" % i for i in range(200_000))  # 2.6 MB, 13 bytes a line
    path = _write(tmp_path, data)
    done = subprocess.run(
        [sys.executable, "-c", _CUT_WHILE_INDEXING, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    first, lines, finished, size, last, head = done.stdout.strip().split("|")
    assert int(first) == 4096 // 13 + 1  # the first batch's lines (the last one partly read)
    # 10,000 bytes are 769 whole lines and 3 bytes of the next
    assert finished == "True" and int(size) == 10_000 and int(lines) == 10_000 // 13 + 1
    assert last == repr(b"line 0000769"[: 10_000 - 769 * 13]) and head == repr(b"line 0000000")


def test_lines_gone_since_indexing_read_empty_and_searches_end(tmp_path: Path) -> None:
    t0 = datetime(2026, 6, 10, 14, 0, 0)
    text = "\n".join(_plog(t0 + timedelta(seconds=i), 7, "INFO", f"x{i}") for i in range(400)) + "\n"
    path = _write(tmp_path, text.encode())
    ix = LineIndex(path).build_all()
    keep = int(ix.starts()[100])
    with path.open("r+b") as fh:
        fh.truncate(keep)
    assert ix.raw_line(99).endswith(b"F:x99") and ix.raw_line(250) == b""
    assert search_file(ix, compile_pattern("F:x3"), 200) is None  # x3.. beyond line 100 are gone
    assert search_file(ix, compile_pattern("F:x50$"), -1) == 50
    order = np.arange(ix.lines, dtype=np.int64)
    assert search_order([ix], order, compile_pattern("F:x2"), 99) is None
    cols = header_columns(ix)
    assert cols is not None and len(cols.ts) == 400
    assert cols.has_header[:100].all() and not cols.has_header[100:].any()


def test_a_file_replaced_under_its_name_is_read_as_indexed(tmp_path: Path) -> None:
    """Every read goes through the index's own descriptor: a log rotated by rename (a new file
    under the old name) cannot shift what the indexed lines say."""
    path = _write(tmp_path, b"alpha\nneedle one\ngamma\n")
    ix = LineIndex(path).build_all()
    other = _write(tmp_path, b"needle zero\nbeta\ndelta\n", "g.log")
    other.replace(path)
    assert search_file(ix, compile_pattern("needle"), -1) == 1
    assert ix.line(0) == "alpha"
    assert search_order([ix], np.arange(3, dtype=np.int64), compile_pattern("needle"), -1) == 1
    cols = header_columns(ix)
    assert cols is not None and not cols.has_header.any()


@SETTINGS
@given(
    ranges=st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 400)), max_size=40),
    gap=st.integers(0, 300),
    run=st.integers(1, 2000),
)
def test_read_ranges_equal_slices_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ranges: list[tuple[int, int]], gap: int, run: int
) -> None:
    """Ranges in any order, overlapping, apart or past the end: each gets its own bytes, however the
    reads are grouped."""
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "_RANGE_GAP", gap)
    monkeypatch.setattr(li, "_RANGE_RUN", run)
    data = bytes(random.Random(7).randrange(256) for _ in range(2500))
    ix = LineIndex(_write(tmp_path, data))
    starts = [a for a, _ in ranges]
    ends = [a + n for a, n in ranges]
    assert ix.read_ranges(starts, ends) == [data[a:b] for a, b in zip(starts, ends, strict=True)]


def test_read_at_reads_on_after_a_short_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(b"%d\n" % i for i in range(3000))
    ix = LineIndex(_write(tmp_path, data))
    import skdbg.parsers.lineindex as li

    real = os.pread

    def short(fd: int, length: int, offset: int) -> bytes:  # a network file system's reads
        return real(fd, min(length, 7), offset)

    monkeypatch.setattr(li.os, "pread", short)
    assert ix.read_at(5, 5000) == data[5:5005]
    assert ix.read_at(len(data) - 3, 100) == data[-3:]
    ix.build_all()
    assert ix.lines == 3000 and ix.line(2999) == "2999"


@SETTINGS
@given(
    widths=st.lists(st.integers(0, 90), min_size=1, max_size=40),
    block=st.integers(1, 200),
    newline_at_end=st.booleans(),
)
def test_header_columns_do_not_depend_on_the_block_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, widths: list[int], block: int, newline_at_end: bool
) -> None:
    """Blocks are cut after the last line start within SEARCH_BLOCK bytes (after a longer line:
    at its end); any cut gives the columns of the whole file read as one block."""
    import skdbg.parsers.lineindex as li

    t0 = datetime(2026, 6, 10, 14, 0, 0)
    lines = [
        _plog(t0 + timedelta(seconds=i), i, "INFO", "z" * w) if w % 3 else "cont" + "y" * w
        for i, w in enumerate(widths)
    ]
    # a header in the middle of a line is no header: a block cut there would make it one
    lines = [
        line if w % 5 else line + " " + _plog(t0, 99, "ERROR", "quoted")
        for line, w in zip(lines, widths, strict=True)
    ]
    path = _write(tmp_path, ("\n".join(lines) + ("\n" if newline_at_end else "")).encode())
    whole = header_columns(LineIndex(path))
    monkeypatch.setattr(li, "SEARCH_BLOCK", block)
    cut = header_columns(LineIndex(path))
    assert whole is not None and cut is not None
    assert cut.has_header.tolist() == [bool(w % 3) for w in widths]
    assert 99 not in cut.pid.tolist()
    for name in ("ts", "level", "module", "pid", "has_header"):
        assert getattr(cut, name).tolist() == getattr(whole, name).tolist(), name


def test_a_build_resumed_after_the_file_was_cut_below_it_reads_gone_lines_as_empty(tmp_path: Path) -> None:
    """A cancelled build, then the file cut below what it indexed, then the build resumed: lines past
    the new end have a start past it; they read as empty (never a read of negative length)."""
    import skdbg.parsers.lineindex as li

    path = _write(tmp_path, b"".join(b"line %05d\n" % i for i in range(5000)))
    ix = LineIndex(path)
    calls = 0

    def cancel() -> bool:
        nonlocal calls
        calls += 1
        return calls > 2

    for _ in ix.build(cancel, first_batch=1000, batch=20_000):
        pass
    assert ix.cancelled and ix.lines > 1000
    with path.open("r+b") as fh:
        fh.truncate(55)  # five whole lines
    ix.build_all()
    assert ix.done and ix.size == 55
    assert (
        ix.raw_line(4) == b"line 00004" and ix.raw_line(ix.lines - 1) == b"" and ix.line(ix.lines - 1) == ""
    )
    assert search_file(ix, compile_pattern("line 0000[0-4]"), ix.lines - 1, backwards=True) == 4
    li.SEARCH_BLOCK, saved = 7, li.SEARCH_BLOCK
    try:
        cols = header_columns(ix)
    finally:
        li.SEARCH_BLOCK = saved
    assert cols is not None and len(cols.ts) == ix.lines


def test_fault_lines_scan_the_file_that_was_indexed(tmp_path: Path) -> None:
    """The fault scan reads the indexed file through a descriptor of its own, and only its indexed
    lines: a log replaced under its name (rotation) or grown since cannot give fault lines the view
    does not have."""
    lines = [f"ok {i}" for i in range(6)]
    lines[2] = "EE9999 first"
    path = _write(tmp_path, ("\n".join(lines) + "\n").encode())
    ix = LineIndex(path).build_all()
    with path.open("ab") as fh:
        fh.write(b"EE9999 written after indexing\n")
    newer = _write(tmp_path, b"EE9999 in the new file\n" * 40, "new.log")
    newer.replace(path)
    found = fault_lines(ix)
    assert found is not None and found.tolist() == [2]
    descriptors = os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else None
    assert fault_lines(ix, stops=True).tolist() == [2]  # type: ignore[union-attr]
    if descriptors is not None:
        assert len(os.listdir("/proc/self/fd")) == len(descriptors)  # the scan's own descriptor closed


def test_fault_lines_of_a_replaced_file_without_proc_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skdbg.parsers.lineindex as li

    path = _write(tmp_path, b"EE9999 a\nb\n")
    ix = LineIndex(path).build_all()
    _write(tmp_path, b"EE9999 other\n", "g.log").replace(path)
    real_open = os.open

    def no_proc(name: object, *args: object, **kwargs: object) -> int:
        if str(name).startswith("/proc/"):
            raise FileNotFoundError(name)
        return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(li.os, "open", no_proc)
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        fault_lines(ix)


def test_short_positional_reads_are_read_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.preadv`` may return fewer bytes than asked (a signal, a network file system): the build
    reads on after them, into the rest of its buffer."""
    if not hasattr(os, "preadv"):
        pytest.skip("no os.preadv here: the build reads with os.pread")
    import skdbg.parsers.lineindex as li

    real = os.preadv

    def short(fd: int, buffers: list[memoryview], offset: int) -> int:
        return real(fd, [buffers[0][:5]], offset)

    monkeypatch.setattr(li.os, "preadv", short)
    data = b"".join(b"row %d\n" % i for i in range(3000))
    ix = LineIndex(_write(tmp_path, data)).build_all()
    assert ix.lines == 3000 and ix.starts().tolist() == [
        0,
        *(i + 1 for i, b in enumerate(data[:-1]) if b == 10),
    ]
    assert [ix.line(i) for i in (0, 1234, 2999)] == ["row 0", "row 1234", "row 2999"]


def test_the_index_covers_the_file_as_it_is_when_built(tmp_path: Path) -> None:
    path = _write(tmp_path, b"a\nb\n")
    ix = LineIndex(path)
    with path.open("ab") as fh:
        fh.write(b"c\n")  # written between opening the view and indexing it
    ix.build_all()
    assert ix.size == 6 and [ix.line(i) for i in range(ix.lines)] == ["a", "b", "c"]


def _counting_reads(ix: LineIndex, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    reads: list[tuple[int, int]] = []
    real = LineIndex._read

    def counted(self: LineIndex, offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return real(self, offset, length)

    monkeypatch.setattr(LineIndex, "_read", counted)
    return reads


def test_read_ranges_reads_nearby_ranges_together_and_never_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "_RANGE_GAP", 50)
    monkeypatch.setattr(li, "_RANGE_RUN", 4000)
    data = bytes(range(256)) * 40  # 10,240 bytes
    ix = LineIndex(_write(tmp_path, data))
    reads = _counting_reads(ix, monkeypatch)
    # the third range is far past the second's end but inside the first: one read covers all three
    assert ix.read_ranges([0, 10, 900], [1000, 20, 910]) == [data[0:1000], data[10:20], data[900:910]]
    assert reads == [(0, 1000)]
    reads.clear()
    monkeypatch.setattr(li, "_RANGE_RUN", 400)
    # ranges 10 bytes apart all along the file: read in stretches of about _RANGE_RUN bytes, not at once
    starts = list(range(0, 10_000, 20))
    got = ix.read_ranges(starts, [a + 10 for a in starts])
    assert got == [data[a : a + 10] for a in starts]
    assert len(reads) == 25 and max(length for _, length in reads) <= 400 + 10
    reads.clear()
    # two ranges far apart: two reads of their own bytes only
    assert ix.read_ranges([9000, 100], [9010, 110]) == [data[9000:9010], data[100:110]]
    assert sorted(reads) == [(100, 10), (9000, 10)]


def test_search_order_over_a_file_cut_since_indexing_finds_the_next_files_lines(tmp_path: Path) -> None:
    """Rows whose bytes are gone are empty: a match in the next file is still its own row."""
    cut = _write(tmp_path, b"".join(b"row %d of a\n" % r for r in range(10)), "a.log")
    other = _write(tmp_path, b"needle in b\nrow 1 of b\nneedle again\n", "b.log")
    indexes = [LineIndex(cut).build_all(), LineIndex(other).build_all()]
    with cut.open("r+b") as fh:
        fh.truncate(30)  # two whole rows and a piece of the third
    order = np.arange(13, dtype=np.int64)
    assert search_order(indexes, order, compile_pattern("needle"), -1) == 10
    assert search_order(indexes, order, compile_pattern("needle"), 10) == 12
    assert search_order(indexes, order, compile_pattern("^row 1 of"), -1) == 1
    assert search_order(indexes, order, compile_pattern("^row 1 of b"), 2) == 11
    assert search_order(indexes, order, compile_pattern("needle"), 12, backwards=True) == 10


def _open_descriptors() -> int | None:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None


def test_indexes_past_the_limit_keep_no_descriptor_and_check_the_file_on_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scene of a thousand plogs opens a thousand indexes: only the first few keep their file
    open; the others read by name, and a name that now holds another file is refused, not read."""
    import skdbg.parsers.lineindex as li

    start = li._held
    room = start + 2  # two more indexes may keep their file, whatever else is open
    monkeypatch.setattr(li, "_keep_limit", lambda: room)
    paths = [
        _write(tmp_path, b"".join(b"f%d line %d\n" % (f, i) for i in range(50)), f"p{f}.log")
        for f in range(5)
    ]
    before = _open_descriptors()
    indexes = [LineIndex(p).build_all() for p in paths]
    assert [ix._fd is not None for ix in indexes] == [True, True, False, False, False]
    if before is not None:
        assert _open_descriptors() == before + 2
    assert [ix.line(49) for ix in indexes] == [f"f{f} line 49" for f in range(5)]  # past the limit: by name
    assert search_file(indexes[3], compile_pattern("line 7$"), -1) == 7
    assert [ix._fd is not None for ix in indexes] == [True, True, False, False, False]
    if before is not None:
        assert _open_descriptors() == before + 2  # each read past the limit closed what it opened
    _write(tmp_path, b"another file\n", "x.log").replace(paths[4])
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        indexes[4].line(3)
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        fault_lines(indexes[4])
    paths[3].unlink()
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        fault_lines(indexes[3])
    paths[0].unlink()  # a kept descriptor still reads its file (on Linux the fault scan too)
    assert indexes[0].line(49) == "f0 line 49"
    if os.path.isdir("/proc/self/fd"):
        found = fault_lines(indexes[0])
        assert found is not None and found.tolist() == []
    for ix in indexes:
        ix.close()
    assert li._held == start
    if before is not None:
        assert _open_descriptors() == before


def test_a_name_reopened_must_hold_the_indexed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the open-file limit each read opens the name: the file there must be a regular file with
    the indexed inode and first bytes. Rewritten in place (same inode), or a FIFO, a directory put
    there: refused with the same message, never read (a FIFO must not block)."""
    import skdbg.parsers.lineindex as li

    monkeypatch.setattr(li, "_keep_limit", lambda: 0)
    path = _write(tmp_path, b"first line\nsecond line\n")
    ix = LineIndex(path).build_all()
    assert ix._fd is None and ix.line(1) == "second line"
    with path.open("ab") as fh:  # appended by its writer: still the indexed file
        fh.write(b"third line\n")
    assert ix.line(0) == "first line"
    inode = path.stat().st_ino
    path.write_bytes(b"FIRST LINE\nsecond line\n")  # rewritten in place: same inode, other bytes
    assert path.stat().st_ino == inode
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        ix.line(1)
    if hasattr(os, "mkfifo"):
        path.unlink()
        os.mkfifo(path)
        with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
            fault_lines(ix)
        path.unlink()
    path.mkdir()
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        ix.line(0)


def test_a_name_changed_before_the_first_read_is_refused(tmp_path: Path) -> None:
    """The file an index is of is the one its constructor saw: a directory or another file put at
    the name before the build is not indexed instead."""
    path = _write(tmp_path, b"a\n")
    ix = LineIndex(path)
    path.unlink()
    path.mkdir()
    with pytest.raises(ParseError, match="replaced, removed or rewritten since"):
        ix.build_all()
