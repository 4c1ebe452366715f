"""Line renderers shared by every writer: the CANN plog prefix and the SK file-logger prefix.

Every artifact writer renders through these two functions, so a format change lands in one place
and parser tests round-trip through the same grammar the parsers read (artifacts.md §1.2, §3.2).
"""

from __future__ import annotations

from datetime import datetime

from skdbg.parsers.filelog import format_filelog_prefix
from skdbg.parsers.plog_line import format_plog_ts

SK_MODULE = "ASCENDCKERNEL"
SK_HANDLER_FILE = "sk_dfx_exception_handler.cpp"


def plog_line(
    level: str, module: str, pid: int, proc: str, ts: datetime, src_file: str, src_line: int, rest: str
) -> str:
    """``[LEVEL] MODULE(pid,proc):ts [file:line]rest`` — ``rest`` starts right after ``]``."""
    return f"[{level}] {module}({pid},{proc}):{format_plog_ts(ts)} [{src_file}:{src_line}]{rest}"


def sk_plog_line(
    level: str,
    pid: int,
    proc: str,
    ts: datetime,
    func: str,
    msg: str,
    *,
    src_file: str = SK_HANDLER_FILE,
    src_line: int = 100,
) -> str:
    """An SK logger record in plog: module ASCENDCKERNEL, ``[SK][<Function>] <msg>``, no tid."""
    return plog_line(level, SK_MODULE, pid, proc, ts, src_file, src_line, f"[SK][{func}] {msg}")


def runtime_plog_line(
    level: str,
    pid: int,
    proc: str,
    ts: datetime,
    tid: int,
    func: str,
    text: str,
    *,
    module: str = "RUNTIME",
    src_file: str = "stream.cc",
    src_line: int = 1512,
) -> str:
    """A RUNTIME/GE-style record: ``<tid> <Function>:<text>`` right after ``]``."""
    return plog_line(level, module, pid, proc, ts, src_file, src_line, f"{tid} {func}:{text}")


def filelog_line(
    ts: datetime,
    pid: int,
    tid: int,
    level: str,
    func: str,
    msg: str,
    *,
    src_file: str = "sk_optimizer.cpp",
    src_line: int = 33,
) -> str:
    """One sk_meta file-logger record (level words: TRACE DEBUG INFO WARN ERROR)."""
    return format_filelog_prefix(ts, pid, tid, level, src_file, src_line, func) + msg
