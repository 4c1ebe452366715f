"""SK handler lines kept as rows (parsers/plog_rows.py, issue 18): every reader gives what a pass over the
lines the old filing made gives.

The oracle is the filing as it was: each batch of a forked scan's rows made records
(``plog_lines_of_rows``), filed, then sorted by time. The same batches are filed again the way a forked
scan's are now (a batch of SK-logger lines left rows: ``SkRows``), and each reader is compared with the
old answer, on hand-written lines and on generated ones (ties, stamps out of order, a stamp that is no
date, another pid's lines, two files, SK records around and inside a block of rows).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import plog_fork
from skdbg.parsers.common import Source
from skdbg.parsers.evidence import Evidence, PlogEvidence, _sort_by_time
from skdbg.parsers.plog import PlogRows, ScannedFile
from skdbg.parsers.plog_line import PlogLine, PlogRow, plog_lines_of_rows
from skdbg.parsers.plog_rows import (
    SkRows,
    columns_of_lines,
    first_outside,
    line_of_row,
    row_at,
    row_index,
    sk_columns,
    sk_only,
    time_spans,
)
from skdbg.parsers.sk_copies import derive_plog_copy
from skdbg.scenebuilder.sk_incident import CallbackBSpec, example_incident, to_filelog_lines, to_plog_lines
from skdbg.triage.context import open_context
from skdbg.triage.localize import _times_of_lines
from tests.test_sk_copies import PLOG, filelog_parse, plog_records, same_result

SCENES = Path(__file__).resolve().parents[1] / "examples" / "scenes"

PID, OTHER = 48213, 777
FILES = ("log/plog/plog-48213_1.log", "log/plog/plog-48213_2.log")


def sk_row(
    file: str, no: int, ts: str, text: str, *, pid: int = PID, func: str = "PrintTaskQueue"
) -> PlogRow:
    """``[INFO] ASCENDCKERNEL(pid,python3):<ts> [sk_dfx_exception_handler.cpp:100][SK][<func>] <text>``."""
    return (
        file, no, "INFO", "ASCENDCKERNEL", pid, "python3", ts, "sk_dfx_exception_handler.cpp", 100,
        None, func, (), text, True, True,
    )  # fmt: skip


def runtime_row(file: str, no: int, ts: str, *, pid: int = PID) -> PlogRow:
    """``[ERROR] RUNTIME(pid,python3):<ts> [api_c.cc:782]48301 rtStreamSynchronize:[INIT]ErrCode=507035``."""
    return (
        file, no, "ERROR", "RUNTIME", pid, "python3", ts, "api_c.cc", 782,
        48301, "rtStreamSynchronize", ("INIT",), "ErrCode=507035, desc=[vector core exception]", False, True,
    )  # fmt: skip


def file_batches(batches: list[tuple[str, list[PlogRow]]], *, keep_rows: bool) -> PlogEvidence:
    """``batches`` (a file's rows each, files in order, lines in order) filed as a forked scan's are:
    with ``keep_rows`` as now (a batch of SK-logger lines comes as ``SkRows``), else as before (every
    batch made records); then sorted, as ``Evidence._load_plogs`` does."""
    pe = PlogEvidence(pid=PID, kind="plog", files=list(dict.fromkeys(f for f, _ in batches)))
    filer = cast(Any, SimpleNamespace(_on_digest=None))
    for file, rows in batches:
        items: list[Any] = SkRows(rows) if keep_rows and sk_only(rows) else plog_lines_of_rows(PlogRows(rows))
        done = ScannedFile([(items, True)], [], None)
        Evidence._file_scan(filer, cast(Any, SimpleNamespace(path=file)), pe, done, [])
    _sort_by_time(pe.records)
    return pe


def old_first_outside(lines: list[PlogLine], start: datetime, end: datetime) -> PlogLine | None:
    """F2's pass as it was: the first line in time order whose time lies outside the attempt."""
    return next((p for p in lines if p.ts is not None and not (start <= p.ts <= end)), None)


def old_spans(lines: list[PlogLine]) -> dict[str, tuple[datetime, datetime]]:
    """The evidence index's pass as it was: per file, its first and last time in time order."""
    out: dict[str, tuple[datetime, datetime]] = {}
    for p in lines:
        if p.ts is not None:
            first = out.get(p.src.file, (p.ts, p.ts))[0]
            out[p.src.file] = (first, p.ts)
    return out


def same_readers(new: PlogEvidence, old: PlogEvidence, windows: list[tuple[datetime, datetime]]) -> None:
    """Every reader of ``new`` (rows kept) gives what ``old`` (records only) gives."""
    assert not old.sk_rows
    assert new.lines == old.lines
    assert (new.faults, new.foreign) == (old.faults, old.foreign)
    for start, end in windows:
        assert first_outside(new, start, end) == old_first_outside(old.lines, start, end)
    assert time_spans(new) == old_spans(old.lines)
    cols, want = sk_columns(new), columns_of_lines(old.lines)
    assert (cols.texts, cols.funcs, cols.pids, cols.files, cols.srcs) == (
        want.texts, want.funcs, want.pids, want.files, want.srcs,
    )  # fmt: skip
    times = [p.ts for p in old.lines if p.is_sk]
    assert [cols.to_time(k) for k in cols.stamps] == times
    # the stand-ins order as the times: the earliest and latest of any span are the times'
    for lo in range(len(times)):
        keys = [k for k in cols.stamps[lo:] if k is not None]
        stamped = [t for t in times[lo:] if t is not None]
        assert (cols.to_time(min(keys)) if keys else None) == (min(stamped) if stamped else None)
        assert (cols.to_time(max(keys)) if keys else None) == (max(stamped) if stamped else None)
    index = row_index(new)
    by_src = {(p.src.file, p.src.line): p for p in old.lines}
    kept = {(r[0], r[1]) for r in new.sk_rows}
    for file in FILES:
        for no in range(max((n for f, n in by_src if f == file), default=0) + 2):  # between rows too
            found = row_at(new, index, file, no)
            assert (found is not None) == ((file, no) in kept)
            if found is not None:
                assert (found[0], found[1]) == (file, no)
                assert line_of_row(found) == by_src[(file, no)]
    assert row_at(new, index, "log/plog/elsewhere.log", 1) is None
    wanted = [Source(f, n) for f in FILES for n in range(12)]
    assert _times_of_lines([new], wanted) == _times_of_lines([old], wanted)


T = [f"2026-06-10-14:03:21.{ms:03d}.000" for ms in range(0, 1000, 100)]


def test_a_block_of_rows_with_records_at_its_edges() -> None:
    """The usual exception block: a runtime line, an SK line in the same batch, a block of SK lines
    (kept as rows), then an SK line and the runtime error in a shared batch."""
    f = FILES[0]
    batches = [
        (f, [runtime_row(f, 1, T[0]), sk_row(f, 2, T[1], "first", func="HandleException")]),
        (f, [sk_row(f, 3, T[2], "a"), sk_row(f, 4, T[2], "b"), sk_row(f, 5, T[3], "c")]),
        (f, [sk_row(f, 6, T[4], "d")]),
        (f, [sk_row(f, 7, T[5], "last"), runtime_row(f, 8, T[6])]),
    ]
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    assert [r[1] for r in new.sk_rows] == [3, 4, 5, 6]  # the two batches of SK lines only
    assert [p.src.line for p in new.records] == [1, 2, 7, 8]
    inside = datetime(2026, 6, 10, 14, 3, 21, 200_000)
    windows = [(inside, inside + timedelta(milliseconds=200)), (inside - timedelta(hours=1), inside)]
    same_readers(new, old, windows)
    assert sk_columns(new).texts == ["first", "a", "b", "c", "d", "last"]
    # F2 on a window holding the first three stamps only: the first line after it is a row (line 5)
    line = first_outside(new, datetime(2026, 6, 10, 14, 3, 21), inside)
    assert line is not None and (line.src.line, line.ts_text) == (5, T[3])
    assert time_spans(new) == {
        f: (datetime(2026, 6, 10, 14, 3, 21), datetime(2026, 6, 10, 14, 3, 21, 600_000))
    }


def test_rows_out_of_time_order_another_pid_and_a_stamp_that_is_no_date() -> None:
    """A block whose stamps go back (the columns then come from the merged lines), a batch holding
    another process's SK line and one whose stamp is month 13 (both filed as records, as before)."""
    f, g = FILES
    bad = "2026-13-10-14:03:21.000.000"
    batches = [
        (f, [sk_row(f, 1, T[5], "late"), sk_row(f, 2, T[1], "early")]),
        (f, [sk_row(f, 3, T[2], "x", pid=OTHER), sk_row(f, 4, T[2], "y")]),
        (g, [sk_row(g, 1, bad, "no date"), sk_row(g, 2, T[0], "z")]),
        (g, [sk_row(g, 3, T[9], "a"), sk_row(g, 4, T[0], "b")]),
    ]
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    assert [(r[0], r[1]) for r in new.sk_rows] == [(f, 1), (f, 2), (g, 3), (g, 4)]
    assert [p.src.line for p in new.foreign] == [3]
    same_readers(
        new, old, [(datetime(2026, 6, 10, 14, 3, 21, 100_000), datetime(2026, 6, 10, 14, 3, 21, 500_000))]
    )


def test_an_sk_record_inside_the_block_of_rows() -> None:
    """An SK line filed as a record whose time falls among the rows': the merged lines decide."""
    f = FILES[0]
    batches = [
        (f, [sk_row(f, 1, T[1], "a"), sk_row(f, 2, T[3], "b")]),
        (f, [sk_row(f, 3, T[2], "between"), runtime_row(f, 4, T[2])]),
        (f, [sk_row(f, 5, T[4], "c")]),
    ]
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    same_readers(new, old, [])
    assert sk_columns(new).texts == ["a", "between", "b", "c"]


def test_a_window_the_stamp_text_cannot_stand_for() -> None:
    """A bound in year 999 (no four-digit year): rows are compared by their times instead."""
    f = FILES[0]
    batches = [(f, [sk_row(f, 1, T[1], "a"), sk_row(f, 2, T[2], "b")])]
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    windows = [
        (datetime(999, 1, 1), datetime(2026, 6, 10, 14, 3, 21, 150_000)),
        (datetime(999, 1, 1), datetime(9999, 1, 1)),
    ]
    same_readers(new, old, windows)


_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
#: the stamps of generated lines: ties and disorder among four, a month 13, and a valid time written in
#: full-width digits (a batch holding it is filed as records; as a record it must not order by its text)
_STAMPS = st.sampled_from([*T[:4], "2026-13-10-14:03:21.000.000", T[2].translate(_FULL_WIDTH)])


@st.composite
def _batches(draw: st.DrawFn) -> list[tuple[str, list[PlogRow]]]:
    out: list[tuple[str, list[PlogRow]]] = []
    for file in FILES[: draw(st.integers(1, 2))]:
        no = 0
        for _ in range(draw(st.integers(0, 4))):
            rows: list[PlogRow] = []
            for _ in range(draw(st.integers(1, 4))):
                no += draw(st.integers(1, 3))
                ts, pid = draw(_STAMPS), draw(st.sampled_from([PID, PID, PID, OTHER]))
                if draw(st.integers(0, 3)):
                    rows.append(sk_row(file, no, ts, draw(st.sampled_from(["a", "b", "c"])), pid=pid))
                else:
                    rows.append(runtime_row(file, no, ts, pid=pid))
            out.append((file, rows))
    return out


_MOMENTS = st.sampled_from(
    [datetime(2026, 6, 10, 14, 3, 21, us) for us in (0, 50_000, 100_000, 250_000, 300_000)]
    + [datetime(999, 1, 1), datetime(9999, 1, 1)]
)


@settings(max_examples=300, deadline=None)
@given(_batches(), st.lists(st.tuples(_MOMENTS, _MOMENTS), max_size=3))
def test_every_reader_matches_the_old_filing(
    batches: list[tuple[str, list[PlogRow]]], windows: list[tuple[datetime, datetime]]
) -> None:
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    same_readers(new, old, windows)


def test_lines_merge_again_once_records_or_rows_grow() -> None:
    """``lines`` is merged when first read, and again should the records or the rows grow after."""
    f = FILES[0]
    new = file_batches([(f, [sk_row(f, 2, T[2], "a"), sk_row(f, 3, T[3], "b")])], keep_rows=True)
    assert [p.src.line for p in new.lines] == [2, 3]
    new.records.append(plog_lines_of_rows([runtime_row(f, 1, T[0])])[0])
    assert [p.src.line for p in new.lines] == [1, 2, 3]
    new.sk_rows.append(sk_row(f, 4, T[4], "c"))
    assert [p.src.line for p in new.lines] == [1, 2, 3, 4]


class _Files:
    """A forked scan's stand-in: what ``files`` was asked, and an empty scan of each path."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self.asked: list[bool] = []

    def files(self, keep_sk_rows: bool = False) -> Iterator[ScannedFile]:
        self.asked.append(keep_sk_rows)
        for _ in self.paths:
            yield ScannedFile([], [], None)


def test_rows_are_kept_only_when_each_plog_is_listed_once(monkeypatch: Any) -> None:
    """A scan whose paths repeat one (a hand-built ``Evidence``: a scene lists each file once) files
    every line as a record: a row's place in ``lines`` is told by its file's index."""
    from skdbg.scene import load_evidence

    ev = load_evidence(SCENES / "high-single-stream")
    once = list(ev.plog_files)
    assert once
    for listed, keep in ((once, True), ([*once, once[0]], False)):
        monkeypatch.setattr(ev, "plog_files", listed)
        scan = _Files([f.path for f in listed])
        ev._load_plogs(([], {}), cast(Any, scan))
        assert scan.asked == [keep]


def test_lines_of_evidence_without_rows_are_its_records() -> None:
    """No row kept: ``lines`` is the records list itself (no copy, no merge)."""
    pe = PlogEvidence(pid=PID, kind="plog", files=[FILES[0]])
    pe.records.append(plog_lines_of_rows([sk_row(FILES[0], 1, T[0], "a")])[0])
    assert pe.lines is pe.records
    assert pe.lines[0].src == Source(FILES[0], 1)


# ------------------------------------------------------------------ the plog copy derived from rows


def _row_of(p: PlogLine) -> PlogRow:
    """The row a forked scan sends for the line ``p`` was made of."""
    return (
        p.src.file, cast(int, p.src.line), p.level, p.module, p.pid, p.proc, p.ts_text, p.src_file, p.src_line,
        p.tid, p.func, p.tags, p.text, p.is_sk, p.complete,
    )  # fmt: skip


def _split(records: list[PlogLine], a: int, b: int) -> tuple[PlogEvidence, PlogEvidence]:
    """The same lines filed with ``records[a:b]`` kept as rows, and all as records."""
    new = PlogEvidence(pid=PID, kind="plog", files=[PLOG])
    new.records.extend([*records[:a], *records[b:]])
    new.sk_rows.extend(map(_row_of, records[a:b]))
    _sort_by_time(new.records)
    old = PlogEvidence(pid=PID, kind="plog", files=[PLOG])
    old.records.extend(records)
    _sort_by_time(old.records)
    return new, old


_SPECS = [
    (example_incident(), "INFO"),
    (example_incident(), "DEBUG"),
    (example_incident(callback_b=CallbackBSpec()), "INFO"),
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(_SPECS))), st.integers(0, 700), st.integers(0, 700), st.booleans())
def test_the_copy_derived_from_rows_is_the_copy_derived_from_records(
    k: int, a: int, b: int, wide: bool
) -> None:
    """Any run of the block kept as rows, the rest records (with ``wide``, the first record's stamp in
    full-width digits, as the general tokenizer's ``\\d`` takes them): the same derivation."""
    spec, level = _SPECS[k]
    records = plog_records(to_plog_lines(spec, level=level))
    parsed = filelog_parse(to_filelog_lines(spec))
    a, b = sorted((min(a, len(records)), min(b, len(records))))
    if wide and a > 0:
        first = records[0]
        records[0] = replace(first, ts_text=first.ts_text.translate(_FULL_WIDTH))
    new, old = _split(records, a, b)
    assert len(new.sk_rows) == b - a
    got, want = (
        derive_plog_copy(sk_columns(new), parsed),
        derive_plog_copy(columns_of_lines(old.lines), parsed),
    )
    assert want is not None  # the block is a copy: the case that matters
    assert got is not None and same_result(got, want)


def test_a_record_stamped_in_other_digits_is_ordered_by_its_time() -> None:
    """An SK record whose stamp text has full-width digits (a valid time all the same) before a block of
    rows: the columns come from the merged lines, so the incident's first time is that record's."""
    spec = example_incident()
    records = plog_records(to_plog_lines(spec, level="INFO"))
    first = records[0]
    records[0] = replace(first, ts_text=first.ts_text.translate(_FULL_WIDTH))
    new, old = _split(records, 1, len(records))
    cols = sk_columns(new)
    assert [cols.to_time(k) for k in cols.stamps] == [p.ts for p in old.lines if p.is_sk]
    got = derive_plog_copy(cols, filelog_parse(to_filelog_lines(spec)))
    assert got is not None and got.incidents[0].first_ts == first.ts


# ------------------------------------------------------------------ the forked scan's plumbing


def test_a_batch_of_sk_lines_is_left_rows_only_when_asked() -> None:
    """``keep_sk_rows``: a batch of SK-logger rows comes as ``SkRows`` (the same rows); a batch with any
    other line, or the call without it, makes records; a packed file unpacks the same way."""
    f = FILES[0]
    sk = PlogRows([sk_row(f, 1, T[0], "a"), sk_row(f, 2, T[1], "b")])
    mixed = PlogRows([sk_row(f, 3, T[2], "c"), runtime_row(f, 4, T[3])])
    kept = plog_fork._unpack_items(sk, keep_sk_rows=True)
    assert type(kept) is SkRows and list(kept) == list(sk)
    assert plog_fork._unpack_items(mixed, keep_sk_rows=True) == plog_lines_of_rows(mixed)
    assert plog_fork._unpack_items(sk) == plog_lines_of_rows(sk)
    packed = plog_fork.pack_scanned(ScannedFile([(sk, True), (mixed, True)], [], None))
    parts = plog_fork.unpack_scanned(pickle.loads(pickle.dumps(packed)), keep_sk_rows=True).parts
    assert [type(items).__name__ for items, _ in parts] == ["SkRows", "list"]
    assert [type(items).__name__ for items, _ in plog_fork.unpack_scanned(packed).parts] == ["list", "list"]


# ------------------------------------------------------------------ citations of a row


def test_a_citation_quotes_a_row_as_the_record_it_stands_for(monkeypatch: Any) -> None:
    """The citation index holds a row where the line was kept as one: every line is quoted as its
    record is, and the index is the old one once its rows are made records."""
    f, g = FILES
    batches = [
        (f, [runtime_row(f, 1, T[0]), sk_row(f, 2, T[1], "edge", func="HandleException")]),
        (f, [sk_row(f, 3, T[2], "a"), sk_row(f, 5, T[3], "b")]),
        (g, [sk_row(g, 1, T[4], "c")]),
    ]
    new, old = file_batches(batches, keep_rows=True), file_batches(batches, keep_rows=False)
    assert len(new.sk_rows) == 3
    quoted = {}
    for pe in (new, old):
        ctx = open_context(SCENES / "non-sk-fault")
        monkeypatch.setattr(type(ctx.evidence), "plogs", property(lambda self, pe=pe: [pe]))
        index = {
            (file, no): line if isinstance(line, PlogLine) else line_of_row(line)
            for file, by_number in ctx._plog_index.items()
            for no, line in by_number.items()
        }
        quoted[pe is new] = (index, [ctx.line_text(p.src) for p in old.lines])
    assert quoted[True] == quoted[False]
    assert quoted[True][1][1:3] == ["[SK][HandleException] edge", "[SK][PrintTaskQueue] a"]
