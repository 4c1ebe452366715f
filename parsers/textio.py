"""Streaming line reading that survives what real logs contain.

Why: plogs are copied from crashed jobs. They may be truncated mid-line, carry CRLF endings,
hold non-UTF-8 bytes, or be binary garbage with a log's name. Readers here never load a whole
file; they yield ``(line_no, text, complete)`` where ``complete`` is False for a last line
without a newline (a truncated record), and decode with replacement characters.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skdbg.parsers.common import ParseError

CHUNK = 1 << 20
_BINARY_PROBE = 8192


@dataclass(frozen=True, slots=True)
class TextLine:
    no: int  # 1-based
    text: str  # without the line ending
    complete: bool  # False: last line of a file that does not end with a newline


def check_text_file(path: str | os.PathLike[str], *, what: str = "a text log") -> Path:
    """Raise :class:`ParseError` unless ``path`` is a readable regular file that looks like text."""
    p = Path(path)
    if not p.exists():
        raise ParseError(str(p), f"{what} (file does not exist)")
    if p.is_dir():
        raise ParseError(str(p), f"{what} (a file, got a directory)")
    try:
        with p.open("rb") as fh:
            head = fh.read(_BINARY_PROBE)
    except OSError as exc:
        raise ParseError(str(p), f"{what} (readable file: {exc.strerror})") from exc
    if looks_binary(head):
        raise ParseError(str(p), f"{what} (text), got binary data (NUL bytes in the first {len(head)} bytes)")
    return p


def looks_binary(head: bytes) -> bool:
    """True when a file prefix is not text: NUL bytes, or mostly control bytes."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    ctrl = sum(1 for b in head if b < 9 or 13 < b < 32)
    return ctrl > len(head) // 10


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def iter_lines(path: str | os.PathLike[str], *, what: str = "a text log") -> Iterator[TextLine]:
    """Yield every line of a text file, streaming, with 1-based numbers.

    CR before LF is dropped; a final line without LF is yielded with ``complete=False``.
    """
    p = check_text_file(path, what=what)
    no = 0
    rest = b""
    with p.open("rb") as fh:
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            buf = rest + chunk
            parts = buf.split(b"\n")
            rest = parts.pop()
            for raw in parts:
                no += 1
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                yield TextLine(no, decode(raw), True)
    if rest:
        no += 1
        if rest.endswith(b"\r"):
            rest = rest[:-1]
        yield TextLine(no, decode(rest), False)


def iter_text_lines(text: str, *, start: int = 1) -> Iterator[TextLine]:
    """The same contract as :func:`iter_lines` for in-memory text (tests, stdin)."""
    lines = text.split("\n")
    last = lines.pop()
    for i, line in enumerate(lines):
        yield TextLine(start + i, line[:-1] if line.endswith("\r") else line, True)
    if last:
        yield TextLine(start + len(lines), last[:-1] if last.endswith("\r") else last, False)
