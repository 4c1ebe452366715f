"""The plog scan's oracle for the tests of its fast paths: the file read a line at a time.

Why one copy: the batch-at-a-time record building (tests/test_plog_line_fast.py) and the plog thread's
batch filing (tests/test_plog_thread_fast.py) are both held to what a naive line-by-line reading gives.
"""

from __future__ import annotations

from pathlib import Path

from skdbg.parsers.common import Source, Unrecognized
from skdbg.parsers.plog import FAULT_MARKERS
from skdbg.parsers.plog_line import PlogLine, parse_plog_line


def plog_reference(path: Path, data: bytes, pid: int | None) -> list[PlogLine | Unrecognized]:
    """What the line-at-a-time scan yields of ``data`` (the content of ``path``): every marker line,
    one ``\\r`` off, decoded, read by the grammar; a line the grammar does not read is Unrecognized,
    a record of another pid than ``pid`` (when given) is dropped."""
    out: list[PlogLine | Unrecognized] = []
    lines = data.split(b"\n")
    final_complete = data.endswith(b"\n")
    if final_complete:
        lines.pop()
    for i, raw in enumerate(lines):
        if not any(m in raw for m in FAULT_MARKERS):
            continue
        complete = i < len(lines) - 1 or final_complete
        text = (raw[:-1] if raw.endswith(b"\r") else raw).decode("utf-8", errors="replace")
        src = Source(str(path), i + 1)
        rec = parse_plog_line(text, src, complete=complete)
        if rec is None:
            out.append(Unrecognized(src, text, "plog_scan"))
        elif pid is None or rec.pid == pid:
            out.append(rec)
    return out
