"""Line layer shared by every ``sk_meta/<pid>/model_*/*.log`` parser (artifacts.md §3.2, rows 48-50).

Why one layer: each sk_meta log line goes through the same steps before its own grammar sees it —
``[CONT:n]`` markers are removed first (row 48, they sit at byte offsets of the *physical* line,
prefix included), then the optional file-logger prefix is split off (hand-written fixtures have
none; row 50 covers pid 0, ``WARN`` and long tids), ``[FORMAT_ERROR]`` bodies are kept as opaque
records (row 49) and ``#`` lines of the hand-written fixtures are comments, not garbage (§3.14).
Doing this once keeps the per-file parsers about their own grammar only.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from skdbg.parsers.common import Gap, Source, Unrecognized, oversized_number
from skdbg.parsers.filelog import FORMAT_ERROR, FileLogPrefix, rejoin_cont, rejoin_cont_bytes, split_prefix
from skdbg.parsers.frames import empty_frame, rows_frame
from skdbg.parsers.fsguard import open_regular
from skdbg.parsers.textio import MAX_LINE, TextLine, iter_line_blocks

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, slots=True)
class MetaLine:
    """One physical sk_meta log line after CONT removal and prefix split."""

    src: Source
    prefix: FileLogPrefix | None
    message: str  # body after the prefix; keeps its own indentation
    complete: bool  # False: truncated last line of the file
    cut_detail: str | None = None  # set when the physical line was over-long and cut (textio.MAX_LINE)
    #: set when the line holds a number no runtime prints (common.oversized_number): not parsed
    oversized: str | None = None

    @property
    def ts(self) -> datetime | None:
        return self.prefix.ts if self.prefix is not None else None

    @property
    def pid(self) -> int | None:
        return self.prefix.pid if self.prefix is not None else None

    @property
    def is_blank(self) -> bool:
        return not self.message.strip()

    @property
    def is_format_error(self) -> bool:
        """Row 49: the logger replaced a body that did not fit its 4096-byte buffer."""
        return self.message.strip() == FORMAT_ERROR

    @property
    def is_comment(self) -> bool:
        """``#`` lines exist only in the hand-written upstream fixtures (no prefix, §3.14)."""
        return self.prefix is None and self.message.lstrip().startswith("#")


@dataclass(frozen=True, slots=True)
class OpaqueRecord:
    """A record whose body the logger could not format (row 49); kept so gaps are visible."""

    src: Source
    ts: datetime | None
    pid: int | None
    text: str


@dataclass(frozen=True, slots=True)
class CommentLine:
    """A ``#`` line of a hand-written fixture, e.g. ``# no scope breaks``."""

    src: Source
    text: str


class Provenance(Protocol):
    """Which processes wrote an sk_meta log (gates F4/F7): what a parse result and super_kernel.log's
    outline both answer."""

    @property
    def first_prefix(self) -> tuple[datetime | None, int, int | None] | None:
        """(ts, pid, line) of the first line with a file-logger prefix."""

    @property
    def pid_first_line(self) -> Mapping[int, int | None]:
        """Per writing pid, the first line it wrote."""


@dataclass
class MetaResultBase:
    """What every sk_meta parse result shares: leftovers that must never be dropped silently."""

    file: str
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    format_errors: list[OpaqueRecord] = field(default_factory=list)
    comments: list[CommentLine] = field(default_factory=list)
    lines_read: int = 0
    #: provenance of the file-logger prefixes (gate F4/F7): the first prefixed line (ts, pid, line)
    #: and, per writing pid, the first line it wrote — recorded while parsing, so no second read
    first_prefix: tuple[datetime | None, int, int | None] | None = None
    pid_first_line: dict[int, int | None] = field(default_factory=dict)

    def note_common(self, ml: MetaLine) -> bool:
        """Account for blank/format-error/comment lines; True when the line was consumed."""
        self.lines_read += 1
        prefix = ml.prefix
        if prefix is not None:
            if self.first_prefix is None:
                self.first_prefix = (prefix.ts, prefix.pid, ml.src.line)
            if prefix.pid not in self.pid_first_line:
                self.pid_first_line[prefix.pid] = ml.src.line
        if ml.oversized is not None:
            self.gaps.append(Gap("number_out_of_range", f"line not parsed: {ml.oversized}", src=ml.src))
            return True
        if ml.is_format_error:
            self.format_errors.append(OpaqueRecord(ml.src, ml.ts, ml.pid, ml.message.strip()))
            return True
        if ml.is_comment:
            self.comments.append(CommentLine(ml.src, ml.message.strip()))
            return True
        return ml.is_blank

    def note_truncated(self, ml: MetaLine, context: str) -> None:
        if ml.cut_detail is not None:
            self.gaps.append(Gap("line_too_long", ml.cut_detail, src=ml.src))
        if not ml.complete:
            self.gaps.append(
                Gap(
                    "truncated_line",
                    f"{context}: last line has no newline (file cut while writing)",
                    src=ml.src,
                )
            )


def line_text(tl: TextLine) -> str:
    """The text of ``tl`` with the file logger's ``[CONT:n]`` pieces rejoined (row 48): on its bytes
    when it has them (:func:`~skdbg.parsers.filelog.rejoin_cont_bytes`), else on its text."""
    raw = tl.raw
    if raw is None:
        return rejoin_cont(tl.text)
    joined = rejoin_cont_bytes(raw)
    return tl.text if joined is raw else joined.decode("utf-8", "replace")


def to_meta_line(tl: TextLine, file: str) -> MetaLine:
    """CONT markers first (row 48), then the optional prefix (§3.2); over-long numbers stop the line."""
    cut = tl.cut_gap_detail(file) if tl.cut_at is not None else None
    text = line_text(tl)
    if (oversized := oversized_number(text)) is not None:
        return MetaLine(Source(file, tl.no), None, text, tl.complete, cut, oversized)
    prefix, message = split_prefix(text)
    return MetaLine(Source(file, tl.no), prefix, message, tl.complete, cut)


def iter_meta_lines(
    path: str | os.PathLike[str], *, what: str = "an sk_meta log"
) -> Generator[MetaLine, None, None]:
    """Stream a file as :class:`MetaLine` (raises ParseError for missing/binary files).

    Lines are split a chunk at a time in C (``textio.iter_line_blocks``), and the oversized-number
    check runs once per chunk, per line only when the chunk may hold one.
    """
    file = str(path)
    for block in iter_line_blocks(path, what=what):
        if isinstance(block, TextLine):
            yield to_meta_line(block, file)
            continue
        check = block.check
        for no, raw in enumerate(block.lines, block.first_no):
            yield raw_meta_line(raw, no, file, check=check)


#: bytes of a file's end :func:`last_stamp` reads first (then four times as many, and so on)
_TAIL_READ = 64 << 10


def last_stamp(path: str | os.PathLike[str], *, what: str = "an sk_meta log") -> datetime | None:
    """The stamp of the last line of ``path`` that has one, as :func:`iter_meta_lines` reads the line
    (None when no line has one), read from the file's end backwards. The file is not tested for text
    here: the caller's forward read of its head did that.

    Why: the evidence index wants a file's first and last stamps; reading every line forward to keep
    two values made a :class:`MetaLine` of each (30,000 on the bench model's sk_meta, eight ranks'
    worth on a job's scene). The file's last bytes are split at their newlines and each whole line,
    from the last, is made what the forward read makes of it: a line over ``MAX_LINE`` cut to its head,
    one trailing ``\\r`` dropped from one that is not, decoded, its ``[CONT:n]`` pieces joined, its
    prefix split, and checked for an oversized number (the forward read checks a line wherever it can
    hold one: :func:`raw_meta_line`). Each larger read takes only the bytes before the lines already
    looked at. Raises the ``OSError``/``ParseError`` of a failed read."""
    file = str(path)
    with open_regular(path, what=what) as fh:
        size = os.fstat(fh.fileno()).st_size
        stop = size  # bytes [stop, size) are the lines looked at already (stop is where a line starts)
        want = _TAIL_READ
        while stop > 0:
            start = max(0, size - want)
            fh.seek(start)
            parts = fh.read(stop - start).split(b"\n")
            tail = parts.pop()  # after the read's last newline: b"", or the file's unterminated last line
            if tail and (parts or start == 0):  # (all of it: a newline or the file's start before it)
                ts = _line_stamp(tail, file)
                if ts is not None:
                    return ts
            if start > 0:
                if not parts:  # no newline in the read: its line started earlier
                    want *= 4
                    continue
                head = parts.pop(0)  # the bytes from ``start`` to the first newline: maybe a line's tail
                stop = start + len(head) + 1
            else:
                stop = 0
            for raw in reversed(parts):
                ts = _line_stamp(raw, file)
                if ts is not None:
                    return ts
            want *= 4
        return None


def _line_stamp(raw: bytes, file: str) -> datetime | None:
    """The stamp :func:`iter_meta_lines` gives the line whose bytes (without the newline) are ``raw``
    (the file's unterminated last line too): the line made by :func:`raw_meta_line` after the cut and
    the ``\\r`` the forward read applies, checked for an oversized number. The forward read checks a
    line only where its chunk may hold one (a run of 17 hex digits), or the line is not ASCII or had
    ``[CONT:n]`` pieces rejoined; a number over 64 bits has such a run in its bytes otherwise, so
    checking every line here finds what it finds."""
    cut = len(raw) > MAX_LINE
    data = raw[:MAX_LINE] if cut else raw.removesuffix(b"\r")
    return raw_meta_line(data, 0, file, check=True).ts


def raw_meta_line(raw: bytes, no: int, file: str, *, check: bool) -> MetaLine:
    """:func:`to_meta_line` for one undecoded whole line (newline-terminated, not cut); ``check=False``
    when its chunk holds no run of 17 ASCII hex digits (:func:`~skdbg.parsers.common.may_hold_oversized`).

    A line that is not ASCII is checked whatever its chunk holds: its number may be written in other
    digits (a pattern's digit class takes them), which the byte test does not see; unchecked, a prefix
    with thousands of them went to ``int`` and stopped the read with a ``ValueError``. So is a line
    whose ``[CONT:n]`` pieces were rejoined: a number the logger split at a piece border is whole only
    once they are, and the bytes showed two shorter runs (to_meta_line checks every line). The pieces
    are rejoined on the bytes, before the line is decoded: a piece border may cut a character."""
    joined = rejoin_cont_bytes(raw)
    return text_meta_line(joined.decode("utf-8", "replace"), no, file, check=check or joined is not raw)


def text_meta_line(text: str, no: int, file: str, *, check: bool) -> MetaLine:
    """:func:`raw_meta_line` of a whole line known as text, which holds no ``[CONT:n]`` piece to rejoin
    (the caller knows: its bytes held no long line with a marker, see
    :func:`~skdbg.parsers.filelog.has_long_line`). Why not its UTF-8 bytes through
    :func:`raw_meta_line`: a line decoded with replacements is longer once encoded again (three bytes
    for each byte that was not UTF-8), and could then seem to hold a marker at a piece border its own
    bytes do not reach."""
    if (check or not text.isascii()) and (oversized := oversized_number(text)) is not None:
        return MetaLine(Source(file, no), None, text, True, None, oversized)
    prefix, message = split_prefix(text)
    return MetaLine(Source(file, no), prefix, message, True)


def meta_lines(source: str | os.PathLike[str] | Iterable[MetaLine], *, what: str) -> Iterable[MetaLine]:
    """Accept a path or an already-made line iterable (lets super_kernel.log feed sub-parsers)."""
    if isinstance(source, (str, os.PathLike)):
        return iter_meta_lines(source, what=what)
    return source


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


def record_row(record: Any, *, skip: Sequence[str] = ()) -> dict[str, Any]:
    """Flatten a record to plain DataFrame columns: ``file``/``line`` from its src, scalars as is."""
    row: dict[str, Any] = {}
    src = getattr(record, "src", None)
    if isinstance(src, Source):
        row["file"] = src.file
        row["line"] = src.line
    if is_dataclass(record):
        for f in fields(record):
            if f.name == "src" or f.name in skip:
                continue
            value = getattr(record, f.name)
            if is_dataclass(value) or (isinstance(value, tuple) and value and is_dataclass(value[0])):
                continue
            row[f.name] = _plain(value)
    return row


def frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """A DataFrame that has the expected columns even when there are no rows."""

    df: pd.DataFrame = rows_frame(rows) if rows else empty_frame(list(columns))
    return df
