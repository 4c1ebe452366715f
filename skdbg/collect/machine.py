"""What one machine's CANN log folder holds: the processes that wrote plogs, which of them failed, when.

Why: ``skdbg collect`` starts from a user's real log folder (``$ASCEND_PROCESS_LOG_PATH``, by default
``~/ascend/log``, with ``{run,debug}/plog/plog-<pid>_<stamp>.log`` and ``debug/device-<id>/device-<pid>_<stamp>.log``,
artifacts.md §1.1). Such folders hold every process of weeks of runs and files of several GB, so nothing
here reads a whole file: fault lines come from the marker scan (:func:`skdbg.parsers.plog.scan_plog`), the
time span of a file from its first and last timestamped records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.fsguard import open_regular
from skdbg.parsers.plog import PlogFile, find_plog_files, group_by_pid, order_rotated, scan_plog
from skdbg.parsers.plog_line import PlogLine, parse_plog_line
from skdbg.parsers.runtime_faults import (
    ApiErrCode,
    FftsPlusFault,
    KernelFaultLine,
    KernelTaskError,
    RuntimeRecord,
    StreamSyncFailed,
    classify_runtime,
    fault_kind,
)
from skdbg.parsers.sk_lines import classify as classify_sk
from skdbg.parsers.textio import decode

#: bytes read from each end of a file to find its first / last timestamped record
_EDGE_BYTES = 64 << 10
#: the folder a device log lives in (``debug/device-<devId>/``)
DEVICE_DIR_RE = re.compile(r"^device-(?P<dev>\d+)$")
#: ACL_ERROR_RT_AICORE_TIMEOUT (artifacts.md §1.5 error codes)
AICORE_TIMEOUT = 507014
#: runtime records that name the faulting kernel (preferred as "the" fault line of a process)
_NAMING = (KernelFaultLine, FftsPlusFault)


def default_log_dir() -> Path:
    """Where CANN writes its logs, in CANN's own order: ``$ASCEND_PROCESS_LOG_PATH``, else
    ``$ASCEND_WORK_PATH`` (searched at any depth), else ``~/ascend/log`` (CANN environment-variable
    reference, ASCEND_PROCESS_LOG_PATH: "ASCEND_PROCESS_LOG_PATH > ASCEND_WORK_PATH > $HOME/ascend/log")."""
    for name in ("ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH"):
        env = os.environ.get(name, "").strip()
        if env:
            return Path(env).expanduser()
    return Path.home() / "ascend" / "log"


@dataclass(frozen=True, slots=True)
class FaultLine:
    """One marker line that shows the process failed: a runtime fault record or the SK handler anchor."""

    src: Source
    ts: datetime | None
    ts_text: str
    message: str  # "<LEVEL> <MODULE> <text>" as printed, for listings
    kernel: str | None  # the faulting kernel / SK entry named by the line
    device: int | None  # the runtime's device_id, when the line carries one
    names_kernel: bool  # a kernel fault line or the SK anchor (preferred over core reports / ErrCode lines)
    timeout: bool = False  # the runtime's task-timeout wording ([aicore timeout], error 507014): a hang


@dataclass(slots=True)
class ProcessLogs:
    """The host plog files of one pid, the fault lines found in them and their time span."""

    pid: int
    plogs: list[PlogFile]
    faults: list[FaultLine] = field(default_factory=list)
    first_ts: datetime | None = None
    last_ts: datetime | None = None

    @property
    def failed(self) -> bool:
        return bool(self.faults)

    @property
    def timed_out(self) -> bool:
        """A task timed out (the runtime's timeout error) rather than raised an exception: a hang."""
        return any(f.timeout for f in self.faults)

    @property
    def fault(self) -> FaultLine | None:
        """The line to show for this process: the first one naming a kernel, else the first fault line."""
        return next((f for f in self.faults if f.names_kernel), self.faults[0] if self.faults else None)

    @property
    def fault_time(self) -> datetime | None:
        times = [f.ts for f in self.faults if f.ts is not None]
        return min(times) if times else None

    @property
    def sk_entry(self) -> str | None:
        """The SK entry the process faulted in (runtime ``fault kernel_name`` or the handler anchor)."""
        return next((f.kernel for f in self.faults if f.kernel and fault_kind(f.kernel) == "sk"), None)

    @property
    def device(self) -> int | None:
        return next((f.device for f in self.faults if f.device is not None), None)

    def sort_key(self) -> tuple[datetime, int]:
        """Newest first: by fault time, else the last record, else the file-name stamp."""
        stamps = [p.stamp for p in self.plogs if p.stamp is not None]
        t = self.fault_time or self.last_ts or (max(stamps) if stamps else None)
        return (t or datetime.min, self.pid)


def _edge_records(path: Path, *, from_end: bool) -> Iterable[PlogLine]:
    """Plog records near the start (or the end, last first) of ``path``; partial lines are dropped."""
    with open_regular(path, what="a plog file") as fh:  # the one opener: never blocks on a FIFO
        size = os.fstat(fh.fileno()).st_size
        if from_end:
            fh.seek(max(0, size - _EDGE_BYTES))
        raw = fh.read(_EDGE_BYTES)
    lines = decode(raw).splitlines()
    if from_end:
        if size > _EDGE_BYTES and lines:
            lines = lines[1:]  # the first line of a tail read is cut
        lines.reverse()
    elif size > _EDGE_BYTES and lines:
        lines = lines[:-1]
    for text in lines:
        rec = parse_plog_line(text, Source(str(path)))
        if rec is not None and rec.ts is not None:
            yield rec


def time_span(files: Iterable[PlogFile]) -> tuple[datetime | None, datetime | None]:
    """First and last record time over ``files``; the name stamp (the file's creation) counts as a start."""
    starts: list[datetime] = []
    ends: list[datetime] = []
    for pf in files:
        path = Path(pf.path)
        if pf.stamp is not None:
            starts.append(pf.stamp)
        first = next(iter(_edge_records(path, from_end=False)), None)
        last = next(iter(_edge_records(path, from_end=True)), None)
        for rec in (first, last):
            if rec is not None and rec.ts is not None:
                starts.append(rec.ts)
                ends.append(rec.ts)
    return (min(starts) if starts else None, max(ends) if ends else None)


def silences(files: Iterable[PlogFile], longer_than: timedelta) -> list[tuple[PlogFile, datetime, datetime]]:
    """Rotated files that were created more than ``longer_than`` after the previous file's last record:
    ``(file, previous last record, file creation)``. Rotation opens the next file when the previous one is
    full, so such a silence is either an idle process or a new process that got the same pid again."""
    out: list[tuple[PlogFile, datetime, datetime]] = []
    prev_end: datetime | None = None
    for pf in order_rotated(files):
        first, last = time_span([pf])
        start = pf.stamp or first
        if prev_end is not None and start is not None and start - prev_end > longer_than:
            out.append((pf, prev_end, start))
        prev_end = last or prev_end
    return out


def _fault_of(rec: PlogLine) -> FaultLine | None:
    message = f"[{rec.level}] {rec.module} {rec.text}".strip()
    if rec.is_sk:
        c = classify_sk(rec.text)
        if c is None or not c.kind.startswith("a5_anchor"):
            return None
        return FaultLine(rec.src, rec.ts, rec.ts_text, message, c.groups[0], None, True)
    r: RuntimeRecord | None = classify_runtime(rec)
    if r is None:
        return None
    kernel = r.kernel_name if isinstance(r, _NAMING) else None
    device = r.device_id if isinstance(r, _NAMING) else None
    return FaultLine(
        rec.src, rec.ts, rec.ts_text, message, kernel, device, kernel is not None, _is_timeout(r)
    )


def _is_timeout(r: RuntimeRecord) -> bool:
    """The runtime ended a task for taking too long (AICORE_TIMEOUT 507014, ``[aicore timeout]``)."""
    if isinstance(r, ApiErrCode):
        return r.err_code == AICORE_TIMEOUT
    if isinstance(r, (KernelTaskError, StreamSyncFailed)):
        return "timeout" in (r.reason or "").lower()
    return False


def scan_process(pid: int, plogs: list[PlogFile]) -> ProcessLogs:
    """Fault lines and time span of one process's host plogs (rotation order kept)."""
    proc = ProcessLogs(pid, list(plogs))
    for pf in plogs:
        for item in scan_plog(pf.path, pid):
            if isinstance(item, PlogLine):
                fault = _fault_of(item)
                if fault is not None:
                    proc.faults.append(fault)
    proc.first_ts, proc.last_ts = time_span(plogs)
    return proc


@dataclass(slots=True)
class LogFolder:
    """Every plog-named file under one log root, by pid."""

    root: Path
    host: dict[int, list[PlogFile]]
    device: dict[int, list[PlogFile]]

    def process(self, pid: int) -> ProcessLogs:
        return scan_process(pid, self.host.get(pid, []))

    def failed(self) -> list[ProcessLogs]:
        """Processes with at least one fault line, newest first."""
        procs = [scan_process(pid, files) for pid, files in self.host.items()]
        return sorted((p for p in procs if p.failed), key=ProcessLogs.sort_key, reverse=True)


def read_log_folder(root: Path) -> LogFolder:
    """Index ``root`` (any depth). A missing root is a :class:`ParseError` naming it."""
    if not root.is_dir():
        raise ParseError(
            str(root),
            "a CANN log folder ($ASCEND_PROCESS_LOG_PATH, default ~/ascend/log) holding "
            "debug/plog/plog-<pid>_<stamp>.log (folder does not exist)",
        )
    host: dict[int, list[PlogFile]] = {}
    device: dict[int, list[PlogFile]] = {}
    for (kind, pid), files in group_by_pid(find_plog_files(root)).items():
        (device if kind == "device" else host)[pid] = files
    return LogFolder(root, host, device)


def device_of(pf: PlogFile) -> int | None:
    """The device id of a device log from its ``device-<id>`` folder (None elsewhere)."""
    m = DEVICE_DIR_RE.match(Path(pf.path).parent.name)
    return int(m.group("dev")) if m else None


__all__ = [
    "DEVICE_DIR_RE",
    "FaultLine",
    "LogFolder",
    "ProcessLogs",
    "default_log_dir",
    "device_of",
    "read_log_folder",
    "scan_process",
    "silences",
    "time_span",
]
