"""Shared vocabulary of all parsers: provenance, the parse error type, gaps, unknown lines.

Why one module: every parser reports bad input the same way (a :class:`ParseError` naming
file, line and what was expected) and keeps lines it does not understand as
:class:`Unrecognized` records instead of dropping them, so callers can show both uniformly.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from skdbg import regexcode


@dataclass(frozen=True, slots=True)
class Source:
    """Where a record came from: a file and a 1-based line, or a JSON path inside the file."""

    file: str
    line: int | None = None
    json_path: str | None = None

    def __str__(self) -> str:
        if self.json_path is not None:
            return f"{self.file}:{self.json_path}"
        if self.line is not None:
            return f"{self.file}:{self.line}"
        return self.file


class ParseError(Exception):
    """Input that cannot be read as the artifact it claims to be.

    The message always names the file, the line (when known) and what was expected, e.g.
    ``plog-1_2.log:17: expected a CANN plog line '[LEVEL] MODULE(pid,proc):ts [file:line]...'``.
    It is the only exception type a parser lets escape on bad input.
    """

    def __init__(self, file: str, expected: str, *, line: int | None = None, got: str | None = None) -> None:
        self.file = file
        self.line = line
        self.expected = expected
        self.got = got
        where = f"{file}:{line}" if line is not None else file
        text = f"{where}: expected {expected}"
        if got is not None:
            shown = got if len(got) <= 80 else got[:77] + "..."
            text += f", got {shown!r}"
        super().__init__(text)

    @property
    def source(self) -> Source:
        return Source(self.file, self.line)


class ReadFailure(ParseError):
    """A read of the file failed part-way or at its start (an I/O error from the disk or a network
    file system), not its content: the same read may succeed next time, so a verdict built without
    the file is never kept in the result cache."""


def drop_tracebacks(exc: BaseException) -> None:
    """Clear the tracebacks of ``exc`` and of the exceptions it was raised from or during.

    Why: a kept ParseError's frames (a parser's buffers of MBs, a scan's hashing lane) would live as
    long as the evidence; its message already names the file, the line and what was expected."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = None
        todo += [e.__cause__, e.__context__]


@dataclass(frozen=True, slots=True)
class Unrecognized:
    """A line a parser could not interpret. Kept so nothing is lost silently."""

    src: Source
    text: str
    context: str  # which parser/section saw it, e.g. "sk_handler" or "sk_device_args:header"


@dataclass(frozen=True, slots=True)
class Gap:
    """A piece of evidence that is missing or unusable, with how to collect it next time."""

    kind: str  # short id, e.g. "missing_file", "malformed_json", "no_symtab"
    detail: str
    src: Source | None = None
    collect: str | None = None  # how to obtain it on the next run (env var, option, path)


#: the longest run of decimal digits a runtime line can hold: a 64-bit value prints in 20 digits, and a
#: timestamp stamp in 17. A longer run is damage or hostile input; converting it would raise (Python's
#: 4,300-digit limit) or cost quadratic time, so lines holding one are refused before any grammar runs.
MAX_DECIMAL_RUN = 20
#: the widest value the runtime prints (addresses, registers, counters): 64 bits
MAX_U64 = (1 << 64) - 1
#: a number as the runtime prints one: not glued to a name (``op_123…`` is an identifier, not a value)
_OVERSIZED = regexcode.compile(
    rf"(?<![\w.])(?:\d{{{MAX_DECIMAL_RUN},}}|0[xX]0*[1-9a-fA-F][0-9a-fA-F]{{16,}})(?![\w.])"
)
#: digit runs longer than this are refused without converting them (int() would raise beyond 4,300)
_MAX_CONVERTED_RUN = 4000
#: the shortest run of hex-digit characters an oversized number needs: ``0x`` + 17 digits holds 17, a
#: 20-digit decimal 20 — a line without such a run cannot hold one (the cheap common case)
_MIN_RUN = 17
#: bytes → ``x`` for a hex digit, space otherwise: ``translate`` + ``in`` finds a run of 17 in C
_HEX_MASK = bytes(0x78 if chr(b) in "0123456789abcdefABCDEF" else 0x20 for b in range(256))
_HEX_RUN = b"x" * _MIN_RUN


def may_hold_oversized(data: bytes) -> bool:
    """False when ``data`` (a line or a whole buffer) has no run of 17 hex-digit characters, so no
    number in it is oversized; True means "look closer" (:func:`oversized_number`)."""
    return _HEX_RUN in data.translate(_HEX_MASK)


def oversized_number(text: str) -> str | None:
    """A description of the first number in ``text`` no runtime prints, or None when every number fits.

    Over-long: a decimal value beyond 64 bits (leading zeros allowed), or a ``0x`` value wider than
    64 bits. Digit runs inside names are not numbers and are left alone. Most lines are short or hold
    no long run of hex digits: they are answered without the regex (non-ASCII text takes the regex:
    ``\\d`` also matches other scripts' digits).
    """
    if len(text) < _MIN_RUN or (text.isascii() and not may_hold_oversized(text.encode("ascii"))):
        return None
    for m in _OVERSIZED.finditer(text):
        run = m.group(0)
        if run[:2] in ("0x", "0X"):
            return f"a hexadecimal value wider than 64 bits at column {m.start() + 1} ({len(run) - 2} digits)"
        if len(run) > _MAX_CONVERTED_RUN or int(run) > MAX_U64:
            return f"a number beyond 64 bits at column {m.start() + 1} ({len(run)} digits)"
    return None


def parse_int(text: str) -> int:
    """Parse a decimal or ``0x`` hexadecimal integer as printed by the runtime (at most 64 bits).

    Raises ValueError for text that is not such a number, including one wider than 64 bits.
    """
    t = text.strip()
    if len(t) > 64:
        raise ValueError(f"number too long: {t[:24]}…")
    value = int(t, 16) if t.lower().startswith("0x") else int(t, 10)
    if abs(value) > MAX_U64:
        raise ValueError(f"number out of the 64-bit range: {t}")
    return value


def lazy_regex(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """An accessor that compiles ``pattern`` on its first call and returns the same object after.

    Why: a module-level ``re.compile`` is paid at every import of ``skdbg analyze`` (~0.2 ms a
    pattern) even when the scene never has the line kind, the bad input or the command the pattern
    serves. A pattern used only on such a rare path is held as ``NAME = lazy_regex(...)`` and used as
    ``NAME().search(text)``; the compiled pattern is the one ``re.compile`` would have built.
    """

    @functools.cache
    def compiled() -> re.Pattern[str]:
        return re.compile(pattern, flags)

    return compiled
