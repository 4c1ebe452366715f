"""One rank's signature from the fast marker scan alone (no full analysis).

Why only the scan: a job may hold thousands of ranks with GB-sized plogs on shared storage; the question
"which rank failed first, and did the others only follow it?" needs each rank's first fault time, what
kind of error it was and where (SK entry, scope, child, cores) — all of which sit on the few lines the
prefilter returns (runtime fault lines and the SK handler's ``[SK][…]`` block). :func:`scan_rank` is a
plain top-level function of picklable data so a process pool or a Dask worker can run it; it never
raises for bad input: an unreadable rank comes back with ``status="unreadable"`` and the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from skdbg.fleet.discover import RankSpec
from skdbg.fleet.patterns import FOLLOWER_MARKERS, follower_pattern
from skdbg.parsers.common import ParseError
from skdbg.parsers.plog import FAULT_MARKERS, scan_plog
from skdbg.parsers.plog_line import PlogLine, parse_plog_ts
from skdbg.parsers.runtime_faults import (
    ApiErrCode,
    CoreErrorReport,
    FftsPlusFault,
    KernelFaultLine,
    KernelTaskError,
    StreamSyncFailed,
    classify_runtime,
)
from skdbg.parsers.sk_lines import classify as classify_sk

#: HCCL's communicator-init line states the rank (``Entry-HcclCommInit…:ranks[64], rank[17]``)
HCCL_INIT_MARKER = b"Entry-HcclCommInit"
_HCCL_RANK_RE = re.compile(r"Entry-HcclCommInit\w*:\s*ranks\[(\d+)\],\s*rank\[(\d+)\]")
_EM_TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3}")
SCAN_MARKERS: tuple[bytes, ...] = tuple(dict.fromkeys((*FAULT_MARKERS, *FOLLOWER_MARKERS, HCCL_INIT_MARKER)))


@dataclass(frozen=True, slots=True)
class Cite:
    """A line that made a decision: ``file:line``, what it matched, its time."""

    where: str
    what: str
    ts: datetime | None = None


@dataclass(slots=True)
class RankSignature:
    """Everything the scan says about one rank (``status`` before the job-wide verdict:
    ``fault`` | ``follower`` | ``clean`` | ``no_evidence`` | ``unreadable``)."""

    folder: str
    pid: int | None
    rank: int | None = None
    rank_source: str = "none"  # run.json | plog | folder | none
    device: int | None = None
    device_source: str = "none"  # run.json | plog | none
    status: str = "no_evidence"
    reason: str | None = None  # why unreadable
    plogs: int = 0
    sk_meta: bool = False
    run_json: bool = False
    fault_time: datetime | None = None
    fault_at: str | None = None  # file:line of the first fault line
    fault_kind: str | None = None  # sk | ge_sk | sk_constant | non_sk | device | runtime | timeout
    error_class: str | None = None
    error_code: str | None = None
    sk_entry: str | None = None
    scope: str | None = None  # <modelId>/<skScopeId> from the handler block
    child: str | None = None
    cores: int | None = None
    follower_time: datetime | None = None
    follower_lines: list[Cite] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def evidence(self) -> str:
        """``plog+sk_meta+run.json`` minus what is missing (``none`` when nothing is)."""
        parts = [
            n
            for n, ok in (("plog", self.plogs > 0), ("sk_meta", self.sk_meta), ("run.json", self.run_json))
            if ok
        ]
        return "+".join(parts) or "none"

    @property
    def gate(self) -> str:
        """Whether ``skdbg analyze`` has what its entry gate needs: complete | partial | none."""
        if self.plogs and self.sk_meta and self.run_json:
            return "complete"
        return "partial" if self.plogs or self.sk_meta or self.run_json else "none"

    @property
    def first_time(self) -> datetime | None:
        """The rank's first error of any kind (own fault or follow-up)."""
        times = [t for t in (self.fault_time, self.follower_time) if t is not None]
        return min(times) if times else None


@dataclass(slots=True)
class _Fault:
    """The own-fault facts gathered while scanning (first value of each wins)."""

    time: datetime | None = None
    at: str | None = None
    kind: str | None = None
    error_class: str | None = None
    error_code: str | None = None
    sk_entry: str | None = None
    device: int | None = None
    seen: bool = False
    core_ids: set[int] = field(default_factory=set)
    core_num: int | None = None
    scope: str | None = None
    child: str | None = None
    hccl_rank: tuple[int, str] | None = None


def _first(cur: Any, new: Any) -> Any:
    return cur if cur is not None else new


def _own_fault(rec: PlogLine, f: _Fault) -> None:
    """Record ``rec`` when it is a runtime fault line or the SK handler's anchor."""
    where = f"{rec.src.file}:{rec.src.line}"
    if rec.is_sk:
        c = classify_sk(rec.text)
        if c is None:
            return
        if c.kind.startswith("a5_anchor"):
            f.sk_entry = _first(f.sk_entry, c.groups[0])
            f.kind = _first(f.kind, "sk")
            _mark(f, rec, where)
        elif c.kind == "c_model_id":
            f.scope = _first(f.scope, f"{c.groups[1]}/{c.groups[2]}")
        elif c.kind == "a15_model_id":
            f.scope = _first(f.scope, f"{c.groups[3]}/{c.groups[2]}")
        elif c.kind in ("c_origin_name", "k_current_name", "c_legacy_name"):
            f.child = _first(f.child, c.groups[0])
        elif c.kind == "a24_reg":
            f.core_num = _first(f.core_num, int(c.groups[0] or 0))
        if c.core is not None and c.kind.startswith(("c_", "k_")):
            f.core_ids.add(c.core)
        return
    r = classify_runtime(rec)
    if r is None:
        return
    if isinstance(r, KernelFaultLine):
        f.kind = r.kind if f.kind in (None, "device", "runtime") else f.kind
        if r.kind == "sk":
            f.sk_entry = _first(f.sk_entry, r.kernel_name)
        f.device = _first(f.device, r.device_id)
    elif isinstance(r, FftsPlusFault):
        f.device = _first(f.device, r.device_id)
        f.kind = _first(f.kind, r.kind)
    elif isinstance(r, CoreErrorReport):
        f.error_class = _first(f.error_class, r.error_kind)
        f.error_code = _first(f.error_code, r.error_code_text)
        f.kind = _first(f.kind, "device")
    elif isinstance(r, KernelTaskError | StreamSyncFailed):
        reason = r.reason or None
        if reason and "timeout" in reason.lower():
            f.kind = "timeout" if f.kind in (None, "runtime") else f.kind
        f.error_class = _first(f.error_class, reason)
        if r.ret_code is not None:
            f.error_code = _first(f.error_code, hex(r.ret_code))
    elif isinstance(r, ApiErrCode):
        f.error_code = str(r.err_code)  # the API's code is the one users search for: it wins
        f.error_class = _first(f.error_class, r.desc or None)
        if r.err_code == 507014:
            f.kind = "timeout" if f.kind in (None, "runtime") else f.kind
    f.kind = _first(f.kind, "runtime")
    _mark(f, rec, where)


def _mark(f: _Fault, rec: PlogLine, where: str) -> None:
    f.seen = True
    if rec.ts is not None and (f.time is None or rec.ts < f.time):
        f.time = rec.ts
        f.at = where
    f.at = _first(f.at, where)


def _read_run_json(path: str, sig: RankSignature, pid: int | None) -> None:
    """rank/device from ``run.json`` (only when it describes this pid, or names none)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sig.notes.append(f"{path}: not readable JSON ({exc}); rank not taken from it")
        return
    if not isinstance(doc, dict):
        sig.notes.append(f"{path}: not a JSON object; rank not taken from it")
        return
    sig.run_json = True
    run_pid = doc.get("pid")
    if isinstance(run_pid, int) and pid is not None and run_pid != pid:
        sig.notes.append(f"{path} describes pid {run_pid}, not {pid}: rank not taken from it")
        return
    rank, device = doc.get("rank"), doc.get("device")
    if isinstance(rank, int) and not isinstance(rank, bool):
        sig.rank, sig.rank_source = rank, "run.json"
    if isinstance(device, int) and not isinstance(device, bool):
        sig.device, sig.device_source = device, "run.json"


def scan_rank(spec: RankSpec) -> RankSignature:
    """The signature of one rank; never raises for unreadable input (``status="unreadable"``)."""
    sig = RankSignature(
        folder=spec.folder, pid=spec.pid, plogs=len(spec.plogs), sk_meta=spec.sk_meta is not None
    )
    try:
        return _scan(spec, sig)
    except (OSError, ParseError, UnicodeError) as exc:
        sig.status = "unreadable"
        sig.reason = _reason(exc)
        return sig


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        name = exc.filename if exc.filename is not None else ""
        text = exc.strerror or str(exc)
        return f"{name}: {text}" if name else text
    return str(exc)


def _scan(spec: RankSpec, sig: RankSignature) -> RankSignature:
    if spec.run_json is not None:
        _read_run_json(spec.run_json, sig, spec.pid)
    f = _Fault()
    for plog in spec.plogs:
        for item in scan_plog(plog, spec.pid, markers=SCAN_MARKERS):
            text = item.text
            where = f"{item.src.file}:{item.src.line}"
            pat = follower_pattern(text)
            if pat is not None:
                ts = item.ts if isinstance(item, PlogLine) else _em_time(text)
                sig.follower_lines.append(Cite(where, pat.id, ts))
                if ts is not None and (sig.follower_time is None or ts < sig.follower_time):
                    sig.follower_time = ts
                continue
            if not isinstance(item, PlogLine):
                continue  # error-manager text without a follow-up wording: context, not a fault time
            if HCCL_INIT_MARKER.decode() in text:
                m = _HCCL_RANK_RE.search(text)
                if m is not None and f.hccl_rank is None:
                    f.hccl_rank = (int(m.group(2)), where)
                continue
            _own_fault(item, f)
    _settle(spec, sig, f)
    return sig


def _em_time(text: str) -> datetime | None:
    m = _EM_TS_RE.search(text)
    return parse_plog_ts(m.group(0)) if m else None


def _settle(spec: RankSpec, sig: RankSignature, f: _Fault) -> None:
    """Rank id and status from what the scan found (run.json > plog > folder name)."""
    if sig.rank_source == "none" and f.hccl_rank is not None:
        sig.rank, sig.rank_source = f.hccl_rank[0], "plog"
        sig.notes.append(f"rank from HCCL init line {f.hccl_rank[1]}")
    if sig.rank_source == "none" and spec.folder_rank is not None:
        sig.rank, sig.rank_source = spec.folder_rank, "folder"
    if sig.device_source == "none" and f.device is not None:
        sig.device, sig.device_source = f.device, "plog"
    if spec.pids_in_folder > 1:
        sig.notes.append(
            f"{spec.pids_in_folder} processes wrote plogs in this folder; this is pid {spec.pid}"
        )
    if f.seen:
        sig.status = "fault"
        sig.fault_time, sig.fault_at, sig.fault_kind = f.time, f.at, f.kind
        sig.error_class, sig.error_code, sig.sk_entry = f.error_class, f.error_code, f.sk_entry
        sig.scope, sig.child = f.scope, f.child
        sig.cores = f.core_num if f.core_num is not None else (len(f.core_ids) or None)
    elif sig.follower_lines:
        sig.status = "follower"
    elif spec.plogs:
        sig.status = "clean"
    else:
        sig.status = "no_evidence"


__all__ = ["SCAN_MARKERS", "Cite", "RankSignature", "scan_rank"]
