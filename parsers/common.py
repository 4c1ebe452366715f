"""Shared vocabulary of all parsers: provenance, the parse error type, gaps, unknown lines.

Why one module: every parser reports bad input the same way (a :class:`ParseError` naming
file, line and what was expected) and keeps lines it does not understand as
:class:`Unrecognized` records instead of dropping them, so callers can show both uniformly.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def parse_int(text: str) -> int:
    """Parse a decimal or ``0x`` hexadecimal integer as printed by the runtime."""
    t = text.strip()
    if t.lower().startswith("0x"):
        return int(t, 16)
    return int(t, 10)
