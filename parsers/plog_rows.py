"""A plog's SK handler lines kept as the rows a forked scan sends, and the analysis's reads of them.

Why: the SK logger prints an exception block of tens of thousands of lines into the plog (the bench scene's
is 18,000: task queues, counters, DfxInfo), and the analysis reads few of them one by one. It derives
their parse from the ``super_kernel.log`` copy (:mod:`skdbg.parsers.sk_copies`), quotes a handful in its
evidence, and checks their times against the attempt (gate F2). Making a :class:`PlogLine` of each line,
with its ``Source`` and its ``datetime``, and passing over all of them four more times, was ~40 ms of CPU
of the bench scene's first run, part of it on the analysis's last single-threaded stretch.

What: a batch of the child's rows that are all SK-logger lines of the process, each with an ASCII stamp
that is a valid date, is filed as rows (:func:`file_sk_rows`; only when the scan's files are each listed
once): :attr:`PlogEvidence.sk_rows
<skdbg.parsers.evidence.PlogEvidence.sk_rows>`, in file and line order, beside the records. Every other
batch, and every scan in this process, gives records as before. :attr:`PlogEvidence.lines
<skdbg.parsers.evidence.PlogEvidence.lines>` is still every marker line in time order, the rows made
records when it is first read (:func:`merged_lines`): what reads it sees what it saw before. The analysis's
own readers take the rows as they are instead: the exception block as columns (:func:`sk_columns`), the
first line outside the attempt (:func:`first_outside`), the time span of each file (:func:`time_spans`)
and a line by its number (:func:`row_index`, :func:`row_at`). Each gives what a pass over ``lines``
gives; tests hold them to it.

Order: ``lines`` is sorted stably by :attr:`PlogLine.ts_key` from the order the lines were filed in (the
files in their order, each listed once, each file's lines by number), so a line's place is its
``(ts_key, file index, line number)``. A row's stamp is a valid date in the one fixed-width plog format
with ASCII digits, so rows compare by their stamp text as their records compare by ``ts``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby, islice, repeat
from operator import attrgetter, itemgetter, le
from typing import TYPE_CHECKING, Any

from skdbg.parsers.bulk import build_source
from skdbg.parsers.plog import PlogRows
from skdbg.parsers.plog_line import (
    PlogLine,
    PlogRow,
    dated_stamps,
    format_plog_ts,
    plog_lines_of_rows,
    stamp_of_text,
)

if TYPE_CHECKING:
    from skdbg.parsers.common import Source
    from skdbg.parsers.evidence import PlogEvidence

# the fields of a :data:`PlogRow` the readers here take
ROW_FILE = itemgetter(0)
ROW_NO = itemgetter(1)
ROW_PID = itemgetter(4)
ROW_TS = itemgetter(6)
ROW_FUNC = itemgetter(10)
ROW_TEXT = itemgetter(12)
ROW_IS_SK = itemgetter(13)

_TEXT = attrgetter("text")
_FUNC = attrgetter("func")
_PID = attrgetter("pid")
_SRC = attrgetter("src")
_TS = attrgetter("ts")


class SkRows(PlogRows):
    """A batch of a forked scan's rows that are all SK-logger lines, left as rows when unpacked here (see
    :func:`~skdbg.parsers.plog_fork.unpack_scanned`): the filing decides whether they stay rows."""

    __slots__ = ()


def sk_only(rows: Sequence[PlogRow]) -> bool:
    """Every row of ``rows`` is an SK-logger line (``[SK][<Function>]``)."""
    return all(map(ROW_IS_SK, rows))


def file_sk_rows(rows: Sequence[PlogRow], pe: PlogEvidence) -> bool:
    """Keep ``rows`` (SK-logger lines, in line order) as rows of ``pe`` when each is ``pe``'s process's
    and has an ASCII stamp that is a valid date (:func:`~skdbg.parsers.plog_line.dated_stamps`); False
    (nothing filed) otherwise: the caller files them as records, as it files every other batch (another
    pid's line is F1's, a stamp out of range sorts first)."""
    if list(map(ROW_PID, rows)).count(pe.pid) != len(rows):
        return False
    if not dated_stamps(list(map(ROW_TS, rows))):
        return False
    pe.sk_rows.extend(rows)
    return True


def _file_order(pe: PlogEvidence) -> dict[str, int]:
    return {f: i for i, f in enumerate(pe.files)}


def merged_lines(pe: PlogEvidence) -> list[PlogLine]:
    """``pe``'s records and its rows made records, in the order a stable sort by ``ts_key`` gives the
    lines as they were filed (see the module docstring)."""
    order = _file_order(pe)
    last = len(order)
    lines = [*pe.records, *plog_lines_of_rows(pe.sk_rows)]
    lines.sort(key=lambda p: (p.ts_key, order.get(p.src.file, last), p.src.line or 0))
    return lines


# ------------------------------------------------------------------------------- the exception block


@dataclass(frozen=True, slots=True)
class SkColumns:
    """A process's SK-logger lines in time order, as columns (one entry per line in each).

    ``stamps`` are comparable stand-ins of the lines' times (None: no time), ordered as the times are;
    ``to_time`` turns one back into the line's ``ts``. ``srcs`` are the lines' sources."""

    texts: list[str]
    funcs: list[str | None]
    pids: list[int]
    files: list[str]
    srcs: list[Source]
    stamps: list[Any]
    to_time: Callable[[Any], datetime | None]


def _same(value: Any) -> Any:
    return value


def columns_of_lines(lines: Sequence[PlogLine]) -> SkColumns:
    """The SK-logger lines among ``lines`` (in time order already) as :class:`SkColumns`."""
    sk = [p for p in lines if p.is_sk]
    srcs = list(map(_SRC, sk))
    return SkColumns(
        list(map(_TEXT, sk)),
        list(map(_FUNC, sk)),
        list(map(_PID, sk)),
        [s.file for s in srcs],
        srcs,
        list(map(_TS, sk)),
        _same,
    )


def _place(p: PlogLine, order: dict[str, int]) -> tuple[tuple[int, datetime], int, int]:
    return (p.ts_key, order.get(p.src.file, len(order)), p.src.line or 0)


def sk_columns(pe: PlogEvidence) -> SkColumns:
    """``pe``'s SK-logger lines in time order, as columns: its rows taken as they are when they are in
    time order and its SK records all come before or after them (the usual exception block: a run of
    rows, a few records at its edges in batches shared with other lines); else from :attr:`lines`."""
    rows = pe.sk_rows
    if not rows:
        return columns_of_lines(pe.records)
    stamps = list(map(ROW_TS, rows))
    if not all(map(le, stamps, islice(stamps, 1, None))):
        return columns_of_lines(pe.lines)
    order = _file_order(pe)
    last = len(order)
    first_row, last_row = rows[0], rows[-1]
    lo = ((1, stamp_of_text(stamps[0])), order.get(first_row[0], last), first_row[1])
    hi = ((1, stamp_of_text(stamps[-1])), order.get(last_row[0], last), last_row[1])
    before: list[PlogLine] = []
    after: list[PlogLine] = []
    for p in pe.records:
        if not p.is_sk:
            continue
        if p.ts is not None and not p.ts_text.isascii():
            # a stamp with other digits (the general tokenizer's ``\d``): its text does not order as its
            # time, and it would stand for it among the rows' (see below)
            return columns_of_lines(pe.lines)
        place = _place(p, order)
        if place < lo:
            before.append(p)
        elif place > hi:
            after.append(p)
        else:
            return columns_of_lines(pe.lines)  # among the rows: the general order decides
    files = list(map(ROW_FILE, rows))
    edges = (before, after)
    return SkColumns(
        _joined(edges, _TEXT, list(map(ROW_TEXT, rows))),
        _joined(edges, _FUNC, list(map(ROW_FUNC, rows))),
        _joined(edges, _PID, list(map(ROW_PID, rows))),
        [*(p.src.file for p in before), *files, *(p.src.file for p in after)],
        _joined(edges, _SRC, list(map(build_source, files, map(ROW_NO, rows), repeat(None)))),
        # a record's stamp text (ASCII digits, checked above) orders as its time, as the rows' do
        [*(_stamp_key(p) for p in before), *stamps, *(_stamp_key(p) for p in after)],
        _time_of_key,
    )


def _joined(
    edges: tuple[list[PlogLine], list[PlogLine]], get: Callable[[PlogLine], Any], middle: list[Any]
) -> list[Any]:
    before, after = edges
    return [*map(get, before), *middle, *map(get, after)]


def _stamp_key(p: PlogLine) -> str | None:
    return None if p.ts is None else p.ts_text


def _time_of_key(key: str | None) -> datetime | None:
    return None if key is None else stamp_of_text(key)


# ------------------------------------------------------------------------------------ times (F2, index)


def _stamp_bound(t: datetime) -> str | None:
    """``t`` in the plog stamp format when its text orders as the rows' stamps do (a four-digit year,
    no time zone); None otherwise."""
    if t.tzinfo is not None or not 1000 <= t.year <= 9999:
        return None
    return format_plog_ts(t)


def first_outside(pe: PlogEvidence, start: datetime, end: datetime) -> PlogLine | None:
    """The first line of :attr:`lines` with a time outside ``[start, end]``, as a pass over it finds it
    (lines without a time are passed over)."""
    found = next((p for p in pe.records if p.ts is not None and not (start <= p.ts <= end)), None)
    rows = pe.sk_rows
    if not rows:
        return found
    lo, hi = _stamp_bound(start), _stamp_bound(end)
    stamps = list(map(ROW_TS, rows))
    if lo is None or hi is None:  # a bound the text cannot stand for: the times themselves
        outside = [i for i, t in enumerate(stamps) if _outside(stamp_of_text(t), start, end)]
    else:
        outside = [i for i, t in enumerate(stamps) if t < lo or t > hi]
    if not outside:
        return found
    first = min(outside, key=lambda i: (stamps[i], i))  # rows are in file and line order
    row_line = line_of_row(rows[first])
    if found is None:
        return row_line
    order = _file_order(pe)
    return row_line if _place(row_line, order) < _place(found, order) else found


def _outside(ts: datetime | None, start: datetime, end: datetime) -> bool:
    return ts is not None and not (start <= ts <= end)


def time_spans(pe: PlogEvidence) -> dict[str, tuple[datetime, datetime]]:
    """Per file as scanned: the earliest and the latest time of its lines in :attr:`lines` (files whose
    lines have no time are left out)."""
    spans: dict[str, tuple[datetime, datetime]] = {}
    for p in pe.records:
        ts = p.ts
        if ts is None:
            continue
        held = spans.get(p.src.file)
        spans[p.src.file] = (ts, ts) if held is None else (min(held[0], ts), max(held[1], ts))
    rows = pe.sk_rows
    for file, start, stop in file_runs(rows):
        stamps = list(map(ROW_TS, islice(rows, start, stop)))
        lo, hi = stamp_of_text(min(stamps)), stamp_of_text(max(stamps))
        assert lo is not None and hi is not None  # a row's stamp is a valid date (file_sk_rows)
        held = spans.get(file)
        spans[file] = (lo, hi) if held is None else (min(held[0], lo), max(held[1], hi))
    return spans


def file_runs(rows: Sequence[PlogRow]) -> list[tuple[str, int, int]]:
    """``(file, start, stop)`` of each file's rows in ``rows`` (a file's rows are filed together, the files
    in their order). Why ``groupby``: one C-level pass, where a step per row in Python cost ~6 ms on the
    bench scene's 18,000 rows."""
    runs: list[tuple[str, int, int]] = []
    start = 0
    for file, group in groupby(map(ROW_FILE, rows)):
        stop = start + len(list(group))
        runs.append((file, start, stop))
        start = stop
    return runs


def row_index(pe: PlogEvidence) -> dict[str, tuple[list[int], int]]:
    """Per file of ``pe``'s rows: the line numbers of its rows (ascending) and the position of its first
    row, for :func:`row_at` (a file's rows are one run, in line order: the filing keeps rows only for
    files listed once, filed whole one after the other)."""
    rows = pe.sk_rows
    return {
        file: (list(map(ROW_NO, islice(rows, start, stop))), start) for file, start, stop in file_runs(rows)
    }


def row_at(pe: PlogEvidence, index: dict[str, tuple[list[int], int]], file: str, line: int) -> PlogRow | None:
    """The row of ``pe`` for line ``line`` of ``file`` (None: no such row), by :func:`row_index`."""
    held = index.get(file)
    if held is None:
        return None
    nos, first = held
    k = bisect_left(nos, line)
    return pe.sk_rows[first + k] if k < len(nos) and nos[k] == line else None


def line_of_row(row: PlogRow) -> PlogLine:
    """The record :attr:`lines` holds for ``row``."""
    return plog_lines_of_rows([row])[0]


__all__ = [
    "SkColumns",
    "SkRows",
    "columns_of_lines",
    "file_runs",
    "file_sk_rows",
    "first_outside",
    "line_of_row",
    "merged_lines",
    "row_at",
    "row_index",
    "sk_columns",
    "sk_only",
    "time_spans",
]
