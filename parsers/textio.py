"""Streaming line reading that survives what real logs contain.

Why: plogs are copied from crashed jobs. They may be truncated mid-line, carry CRLF endings,
hold non-UTF-8 bytes, or be binary garbage with a log's name. Readers here never load a whole
file; they yield ``(line_no, text, complete)`` where ``complete`` is False for a last line
without a newline (a truncated record), and decode with replacement characters.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skdbg.parsers.common import ParseError, may_hold_oversized
from skdbg.parsers.fsguard import open_regular

CHUNK = 1 << 20
#: bytes at the start of a file that must look like text (:func:`check_text_file`)
BINARY_PROBE = 8192
#: the longest line kept (bytes). Runtime loggers split records at 4 KiB, so a longer physical line is
#: damage or hostile input; keeping it whole would make time and memory grow with it.
MAX_LINE = 1 << 20


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of a text artifact as read: its number, its text and whether a newline ended it (False:
    the last line of a file that does not end with one)."""

    no: int  # 1-based
    text: str  # without the line ending
    complete: bool  # False: last line of a file that does not end with a newline
    #: byte offset in the file where an over-long line was cut (the rest up to its newline was
    #: skipped); None for a whole line
    cut_at: int | None = None
    #: the bytes ``text`` was decoded from (None: not known); a reader that rejoins the file logger's
    #: ``[CONT:n]`` pieces does so on them (:func:`~skdbg.parsers.filelog.rejoin_cont_bytes`)
    raw: bytes | None = field(default=None, repr=False, compare=False)

    def cut_gap_detail(self, file: str, max_line: int = MAX_LINE) -> str:
        """The evidence-gap text for a cut line (call only when ``cut_at`` is set)."""
        return (
            f"{file}: line {self.no} is longer than {max_line} bytes; kept its first {max_line} bytes, "
            f"skipped the rest from byte offset {self.cut_at}"
        )


def check_text_file(path: str | os.PathLike[str], *, what: str = "a text log") -> Path:
    """Raise :class:`ParseError` unless ``path`` is a readable regular file that looks like text.

    Regular only: a FIFO or a device under a log's name is refused before any read can block.
    """
    p = Path(path)
    with open_regular(p, what=what) as fh:
        head = fh.read(BINARY_PROBE)  # a failed read raises its ReadFailure (file, what, offset)
    check_text_head(p, head, what=what)
    return p


def check_text_head(path: Path, head: bytes | bytearray | memoryview, *, what: str = "a text log") -> None:
    """:func:`check_text_file`'s test of a file's first :data:`BINARY_PROBE` bytes (all of a shorter
    file), for a reader that read them itself: raise its :class:`ParseError` when they are not text.

    Why: a scene of a thousand rotated plogs opened each file twice, once for this test and once for
    the scan; the scan now tests the head of its own first read."""
    data = bytes(head)
    if looks_binary(data):
        cause = "NUL bytes" if b"\x00" in data else "more than a tenth control bytes"
        raise ParseError(
            str(path), f"{what} (text), got binary data ({cause} in the first {len(head)} bytes)"
        )


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Consecutive whole lines of one read chunk, undecoded, CR before LF dropped (split in C)."""

    first_no: int  # 1-based number of lines[0]
    lines: list[bytes]
    #: False when no line of the block can hold an oversized number (common.may_hold_oversized)
    check: bool


@dataclass(frozen=True, slots=True)
class LineChunk:
    """Consecutive whole lines of one read chunk as one buffer: each line ends with ``\n`` (CR before
    LF dropped), none is longer than the reader's ``max_line``. Lets a caller run one bytes regex over
    many lines instead of a Python step per line."""

    first_no: int  # 1-based number of the first line
    data: bytes
    count: int  # lines in data
    #: False when no line of the chunk can hold an oversized number (common.may_hold_oversized)
    check: bool


def iter_line_blocks(
    path: str | os.PathLike[str], *, what: str = "a text log", max_line: int = MAX_LINE
) -> Iterator[LineBlock | TextLine]:
    """The lines of :func:`iter_lines`, a chunk at a time: whole lines of up to ``max_line`` bytes come
    in :class:`LineBlock` s (one ``split`` per chunk instead of a Python step per line); a cut line and
    an unterminated last line come as the :class:`TextLine` that :func:`iter_lines` yields for them.
    Memory stays bounded by ``max_line`` plus a few chunks whatever the file holds."""
    for item in iter_line_chunks(path, what=what, max_line=max_line):
        if isinstance(item, TextLine):
            yield item
        else:
            lines = item.data.split(b"\n")
            lines.pop()
            yield LineBlock(item.first_no, lines, item.check)


def iter_line_chunks(
    path: str | os.PathLike[str],
    *,
    what: str = "a text log",
    max_line: int = MAX_LINE,
    scan_oversized: bool = True,
) -> Iterator[LineChunk | TextLine]:
    """:func:`iter_line_blocks` without the split: whole lines of up to ``max_line`` bytes come as
    :class:`LineChunk` buffers, a cut line and an unterminated last line as :class:`TextLine`.
    ``scan_oversized=False`` leaves every :class:`LineChunk`'s ``check`` True (look closer) for a caller
    that scans the bytes itself; the lines around a cut are still checked one by one."""
    p = check_text_file(path, what=what)
    no = 0
    carry = b""  # the current line's bytes so far (at most max_line)
    cut_at: int | None = None  # set while the rest of an over-long line is skipped
    offset = 0  # file offset of the current chunk
    with open_regular(p, what=what) as fh:
        while chunk := fh.read(CHUNK):
            start = 0
            if cut_at is not None:
                nl = chunk.find(b"\n")
                if nl < 0:
                    offset += len(chunk)
                    continue
                no += 1
                yield TextLine(no, decode(carry), True, cut_at, carry)
                carry, cut_at, start = b"", None, nl + 1
            last_nl = chunk.rfind(b"\n", start)
            if last_nl < 0:  # no line ends here: grow the current line only
                line_start = offset + start - len(carry)
                carry += chunk[start : start + max_line - len(carry) + 1]
                if len(carry) > max_line:
                    cut_at, carry = line_start + max_line, carry[:max_line]
                offset += len(chunk)
                continue
            data_start = offset + start - len(carry)  # file offset of body[0]
            body = carry + chunk[start : last_nl + 1] if carry else chunk[start : last_nl + 1]
            tail = chunk[last_nl + 1 :]
            count = body.count(b"\n")
            if len(body) > max_line + 1 and _has_longer(body, max_line):
                yield from _cut_lines(body.split(b"\n")[:-1], no, data_start, max_line)
            else:
                check = may_hold_oversized(body) if scan_oversized else True
                if b"\r" in body:
                    body = body.replace(b"\r\n", b"\n")
                yield LineChunk(no + 1, body, count, check)
            no += count
            carry = tail
            if len(carry) > max_line:
                cut_at, carry = offset + last_nl + 1 + max_line, carry[:max_line]
            offset += len(chunk)
    if carry or cut_at is not None:
        if carry.endswith(b"\r") and cut_at is None:
            carry = carry[:-1]
        yield TextLine(no + 1, decode(carry), False, cut_at, carry)


def _has_longer(body: bytes, max_line: int) -> bool:
    """True when a line of ``body`` (whole lines) is longer than ``max_line`` bytes: the line starting
    at ``pos`` fits when a newline ends it within ``max_line`` bytes, and so do all lines up to the last
    newline in that window (one ``rfind`` per ``max_line`` bytes instead of a split)."""
    pos = 0
    while pos < len(body):
        nl = body.rfind(b"\n", pos, pos + max_line + 1)
        if nl < 0:
            return True
        pos = nl + 1
    return False


def _cut_lines(parts: list[bytes], no: int, start: int, max_line: int) -> Iterator[LineChunk | TextLine]:
    """Whole lines one by one, the over-long ones cut as :func:`iter_lines` cuts them (rare)."""
    for raw in parts:
        no += 1
        if len(raw) > max_line:
            head = raw[:max_line]
            yield TextLine(no, decode(head), True, start + max_line, head)
        else:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            yield LineChunk(no, line + b"\n", 1, may_hold_oversized(line))
        start += len(raw) + 1


#: the control bytes :func:`looks_binary` counts: all below space except TAB, LF, VT, FF and CR
_CONTROL_BYTES = bytes(b for b in range(32) if b < 9 or b > 13)


def looks_binary(head: bytes) -> bool:
    """True when a file prefix is not text: NUL bytes, or mostly control bytes."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    ctrl = len(head) - len(head.translate(None, _CONTROL_BYTES))  # counted in C: a thousand plogs
    return ctrl > len(head) // 10


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def iter_lines(
    path: str | os.PathLike[str], *, what: str = "a text log", max_line: int = MAX_LINE
) -> Iterator[TextLine]:
    """Yield every line of a text file, streaming, with 1-based numbers.

    CR before LF is dropped; a final line without LF is yielded with ``complete=False``. A line longer
    than ``max_line`` bytes is cut: its first ``max_line`` bytes are yielded with ``cut_at`` set and
    the rest is skipped, so time is linear and memory bounded by ``max_line + CHUNK`` whatever the
    file holds (a multi-GB file without a newline included).
    """
    p = check_text_file(path, what=what)
    no = 0
    pieces: list[bytes] = []  # the current line's bytes so far (never more than max_line in all)
    held = 0
    line_start = 0  # file offset of the current line
    cut_at: int | None = None
    offset = 0  # file offset of the current chunk

    def finish(tail: bytes, complete: bool) -> TextLine:
        raw = b"".join(pieces) + tail
        if raw.endswith(b"\r") and cut_at is None:
            raw = raw[:-1]
        return TextLine(no, decode(raw), complete, cut_at, raw)

    with open_regular(p, what=what) as fh:
        while chunk := fh.read(CHUNK):
            pos = 0
            while (nl := chunk.find(b"\n", pos)) >= 0:
                no += 1
                part = chunk[pos:nl]
                if cut_at is None and held + len(part) > max_line:
                    cut_at = line_start + max_line
                    part = part[: max_line - held]
                elif cut_at is not None:
                    part = b""
                yield finish(part, True)
                pieces, held, cut_at = [], 0, None
                pos = nl + 1
                line_start = offset + pos
            if pos < len(chunk) and cut_at is None:
                part = chunk[pos:]
                if held + len(part) > max_line:
                    cut_at = line_start + max_line
                    part = part[: max_line - held]
                pieces.append(part)
                held += len(part)
            offset += len(chunk)
    if held or cut_at is not None:
        no += 1
        yield finish(b"", False)
