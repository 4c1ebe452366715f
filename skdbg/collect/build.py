"""``skdbg collect``: copy (or link) one failed process's evidence into a new scene folder.

Why: a user who has just seen a crash has every file skdbg needs, spread over the machine — plogs of all
processes under the CANN log root, ``sk_meta/<pid>/`` in the run's working directory, the model source in
a git checkout. Collect takes exactly the files of one pid (host plogs, the device logs of that process in
its time window, ``sk_meta/<pid>/``, the marker file), writes ``run.json`` with what the evidence
establishes, and runs the entry gate on the result so the user learns — under the gate's own ids and
texts — what is still missing and how to record it next time. The folder appears atomically
(:func:`skdbg.atomic.staged_dir`): a failed collection leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from skdbg.atomic import staged_dir
from skdbg.collect.identity import (
    debug_options_of,
    git_revision,
    marker_files,
    scope_names,
)
from skdbg.collect.machine import (
    LogFolder,
    ProcessLogs,
    device_of,
    read_log_folder,
    silences,
    time_span,
)
from skdbg.parsers.common import ParseError
from skdbg.parsers.plog import PlogFile
from skdbg.parsers.run_identity import format_time
from skdbg.triage.context import TriageOptions, open_context
from skdbg.triage.gate import run_gate
from skdbg.triage.localize import localize
from skdbg.triage.model import GateGap


@dataclass(frozen=True, slots=True)
class CollectRequest:
    """What to collect and from where (the ``skdbg collect`` options)."""

    pid: int
    out: Path
    log_dir: Path
    sk_meta: Path | None = None  # the run's cwd, its sk_meta/ or sk_meta/<pid>; None → ./sk_meta
    source_root: Path | None = None
    command: str | None = None
    exit_status: int | None = None
    rank: int | None = None
    link: bool = False
    force: bool = False
    options: TriageOptions = field(default_factory=TriageOptions)


@dataclass(frozen=True, slots=True)
class Note:
    """Something collect could not establish. ``about`` is the gate id that judges it (the gate's gap
    says how to record it next time) or, for what the gate never reads, the artifact's name."""

    about: str
    detail: str
    hint: str  # which option or step supplies it now
    missing: bool = True  # False: found but left out on purpose (a stale log of a reused pid)


@dataclass(slots=True)
class CollectResult:
    out: Path
    files: list[str]  # scene-relative, sorted
    run: dict[str, Any]
    notes: list[Note]
    gaps: list[GateGap]  # the entry gate's findings on the collected scene


# ------------------------------------------------------------------------------------------ sources


def find_sk_meta(pid: int, given: Path | None) -> tuple[Path | None, list[Path]]:
    """``sk_meta/<pid>`` of the process: ``given`` may be that folder, ``sk_meta/`` or the run's cwd.

    Returns the folder (or None) and the places looked at, for the message.
    """
    base = given if given is not None else Path.cwd() / "sk_meta"
    candidates = [base / str(pid), base / "sk_meta" / str(pid)]
    if base.name == str(pid):
        candidates.insert(0, base)
    for c in candidates:
        if c.is_dir():
            return c, candidates
    return None, candidates


def _window(proc: ProcessLogs, options: TriageOptions) -> tuple[datetime | None, datetime | None]:
    if proc.first_ts is None or proc.last_ts is None:
        return None, None
    return options.earliest(proc.first_ts), options.latest(proc.last_ts)


def device_logs(
    folder: LogFolder, proc: ProcessLogs, options: TriageOptions
) -> tuple[list[PlogFile], list[PlogFile]]:
    """The device logs of the process (``device-<pid>_*.log``) inside its time window, and those outside
    it (an older process that had the same pid). Without host plogs there is no window: all are taken."""
    own = folder.device.get(proc.pid, [])
    lo, hi = _window(proc, options)
    if lo is None or hi is None:
        return list(own), []
    keep: list[PlogFile] = []
    skip: list[PlogFile] = []
    for pf in own:
        first, last = time_span([pf])
        inside = first is None or last is None or (first <= hi and last >= lo)
        (keep if inside else skip).append(pf)
    return keep, skip


# ------------------------------------------------------------------------------------------ placing files


class _Placer:
    """Copies (mtime kept: F4 reads it) or hard-links files into the staged scene, tracking what it wrote.

    Hard links, not symbolic ones: a linked file is a regular file inside the scene (skdbg refuses links
    that leave a scene), shares the original's mtime, and survives the original's deletion. Where the
    file system cannot link (another device, no permission) the file is copied and that is recorded.
    """

    def __init__(self, root: Path, link: bool) -> None:
        self.root = root
        self.link = link
        self.files: list[str] = []
        self.copied_instead: list[tuple[str, str]] = []  # (scene path, why it could not be linked)

    def place(self, src: Path, rel: Path) -> None:
        dest = self.root / rel
        if dest.exists() or dest.is_symlink():
            rel = rel.parent / f"{src.parent.name}-{rel.name}"  # two logs of one name (run/ and debug/)
            dest = self.root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if self.link:
            try:
                os.link(src, dest)
            except OSError as exc:
                shutil.copy2(src, dest)
                self.copied_instead.append((rel.as_posix(), exc.strerror or str(exc)))
        else:
            shutil.copy2(src, dest)
        self.files.append(rel.as_posix())

    def tree(self, src: Path, rel: Path) -> None:
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            here = Path(dirpath)
            for name in sorted(filenames):
                p = here / name
                if p.is_file():
                    self.place(p, rel / p.relative_to(src))

    def write_json(self, rel: str, doc: dict[str, Any]) -> None:
        path = self.root / rel
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self.files.append(rel)


# ------------------------------------------------------------------------------------------ collect


def collect(req: CollectRequest) -> CollectResult:
    """Build the scene ``req.out`` for process ``req.pid`` (see module docstring).

    Raises :class:`ParseError` when the log folder is missing or nothing of the process exists, and
    :class:`skdbg.atomic.OutputNotEmptyError` for an existing non-empty ``out`` without ``force``.
    """
    if req.sk_meta is not None and not req.sk_meta.is_dir():
        raise ParseError(
            str(req.sk_meta),
            "the run's working directory, its sk_meta/ or sk_meta/<pid> (--sk-meta; not a directory)",
        )
    folder = read_log_folder(req.log_dir)
    proc = folder.process(req.pid)
    meta_dir, looked = find_sk_meta(req.pid, req.sk_meta)
    if not proc.plogs and not folder.device.get(req.pid) and meta_dir is None:
        raise ParseError(
            str(req.log_dir),
            f"plog-{req.pid}_<stamp>.log or device-{req.pid}_<stamp>.log of process {req.pid} under it, or "
            f"sk_meta/{req.pid}/ at "
            f"{' or '.join(str(p) for p in looked)} (found none)",
        )
    notes: list[Note] = []
    run: dict[str, Any] = {"pid": req.pid}
    inputs = tuple(p for p in (req.log_dir, req.sk_meta, req.source_root) if p is not None)
    # --force never replaces a folder holding what is being collected (the logs, sk_meta, the source)
    with staged_dir(req.out, force=req.force, inputs=inputs) as tmp:
        put = _Placer(tmp, req.link)
        _plogs(req, proc, put, run, notes)
        _device(req, folder, proc, put, run, notes)
        _sk_meta(req, meta_dir, looked, put, run, notes)
        _launch(req, run, notes)
        _candidate(req, proc, put, run, notes)
        if put.copied_instead:
            first, why = put.copied_instead[0]
            notes.append(
                Note(
                    "link",
                    f"{len(put.copied_instead)} file(s) could not be hard-linked and were copied (first: {first}: "
                    f"{why})",
                    "links need the scene on the same file system as the originals",
                    missing=False,
                )
            )
        put.write_json("run.json", run)
        ctx = open_context(tmp, pid=req.pid, options=req.options)
        gaps = list(run_gate(ctx, localize(ctx)).gaps)
    return CollectResult(req.out, sorted(put.files), run, notes, gaps)


def _plogs(
    req: CollectRequest, proc: ProcessLogs, put: _Placer, run: dict[str, Any], notes: list[Note]
) -> None:
    if not proc.plogs:
        notes.append(
            Note(
                "F1",
                f"no plog-{req.pid}_<stamp>.log under {req.log_dir}",
                "pass --log-dir the log root the run wrote to (its $ASCEND_PROCESS_LOG_PATH, default ~/ascend/log)",
            )
        )
        return
    for pf in proc.plogs:
        put.place(Path(pf.path), Path("log") / "plog" / Path(pf.path).name)
    for pf, before, after in silences(proc.plogs, req.options.grace):
        notes.append(
            Note(
                "F2",
                f"{Path(pf.path).name} was created {after - before} after the previous plog of pid {req.pid} "
                "ended: an idle process, or another process that got the same pid (collected all the same; "
                "the run's start/end span both)",
                "if the run was shorter, remove the other process's plog-<pid>_*.log from the scene and fix "
                "run.json start/end",
                missing=False,
            )
        )
    if proc.first_ts is not None and proc.last_ts is not None:
        run["start"], run["end"] = format_time(proc.first_ts), format_time(proc.last_ts)
    if proc.failed:
        # a task the runtime ended for taking too long is a hang (timeout), not an exception
        run["failure_phase"] = "timeout" if proc.timed_out else "device_fault"


def _device(
    req: CollectRequest,
    folder: LogFolder,
    proc: ProcessLogs,
    put: _Placer,
    run: dict[str, Any],
    notes: list[Note],
) -> None:
    keep, skip = device_logs(folder, proc, req.options)
    for pf in keep:
        dev = device_of(pf)
        sub = f"device-{dev}" if dev is not None else "device"
        put.place(Path(pf.path), Path("log") / "debug" / sub / Path(pf.path).name)
    for pf in skip:
        notes.append(
            Note(
                "device log",
                f"{pf.path} lies outside process {req.pid}'s time window (an older process with the same pid): "
                "not collected",
                "nothing to do; delete old logs to keep the folder unambiguous",
                missing=False,
            )
        )
    if not keep:
        notes.append(
            Note(
                "device log",
                f"no device log of process {req.pid} (debug/device-<id>/device-{req.pid}_<stamp>.log) under "
                f"{req.log_dir}",
                "pass --log-dir the log root that holds debug/device-<id>/ (the run's $ASCEND_PROCESS_LOG_PATH)",
            )
        )
    device = proc.device
    if device is None:
        devs = {d for d in (device_of(pf) for pf in keep) if d is not None}
        device = devs.pop() if len(devs) == 1 else None
    if device is not None:
        run["device"] = device
    else:
        notes.append(
            Note(
                "G1",
                "device unknown: no runtime device_id= line and no single device-<id> log folder",
                "the gate takes it from a fault line when there is one",
            )
        )


def _sk_meta(
    req: CollectRequest,
    meta_dir: Path | None,
    looked: list[Path],
    put: _Placer,
    run: dict[str, Any],
    notes: list[Note],
) -> None:
    if meta_dir is None:
        notes.append(
            Note(
                "F3",
                f"no sk_meta/{req.pid}/ (looked for {', '.join(str(p) for p in looked)})",
                "pass --sk-meta the run's working directory (or its sk_meta/ folder)",
            )
        )
        return
    put.tree(meta_dir, Path("sk_meta") / str(req.pid))
    resolved = meta_dir.resolve()
    if resolved.parent.name == "sk_meta":  # the runtime writes ./sk_meta/<pid>/: its parent is the run's cwd
        run["cwd"] = str(resolved.parent.parent)


def _launch(req: CollectRequest, run: dict[str, Any], notes: list[Note]) -> None:
    if req.command is not None:
        run["command"] = req.command
    else:
        notes.append(Note("G1", "launch command unknown", 'pass --command "<the exact command line>"'))
    if req.rank is not None:
        run["rank"] = req.rank
    else:
        notes.append(
            Note("G1", "rank unknown", "pass --rank N (the launcher's RANK; 0 for a single process)")
        )
    if req.exit_status is not None:
        run["exit"] = {"status": req.exit_status}
    else:
        notes.append(
            Note(
                "exit status",
                "the run's exit status is unknown (run.json has no exit record)",
                "pass --exit-status N (the launcher's $?); skdbg verify needs it of every re-launch (V2)",
            )
        )


def _candidate(
    req: CollectRequest, proc: ProcessLogs, put: _Placer, run: dict[str, Any], notes: list[Note]
) -> None:
    cand: dict[str, Any] = {}
    options = debug_options_of(proc.sk_entry)
    if options is not None:
        cand["super_kernel_debug_options"] = options
    if req.source_root is None:
        notes.append(
            Note(
                "G4",
                "no --source-root given: source revision unknown",
                "pass --source-root the model's git checkout",
            )
        )
    else:
        if not req.source_root.is_dir():
            raise ParseError(
                str(req.source_root), "the model source folder given by --source-root (not a directory)"
            )
        rev = git_revision(req.source_root)
        if rev.revision is None:
            notes.append(
                Note("G4", f"source revision unknown: {rev.problem}", "commit the model source in git")
            )
        else:
            cand["source_revision"] = rev.revision
            if rev.dirty:
                notes.append(
                    Note(
                        "G4",
                        f"{req.source_root} has uncommitted changes: recorded as {rev.revision}",
                        "commit before the run so the revision names the source that ran",
                    )
                )
        _marker(req.source_root, put, cand, notes)
    if cand:
        run["candidate"] = cand


def _marker(root: Path, put: _Placer, cand: dict[str, Any], notes: list[Note]) -> None:
    found = marker_files(root)
    if len(found) != 1:
        what = "no Python file" if not found else f"{len(found)} files ({', '.join(map(str, found[:5]))})"
        notes.append(
            Note(
                "marker file",
                f"{what} under {root} call super_kernel_scope_begin(: no marker file recorded, so no marker "
                "edit can be proposed",
                "add candidate.marker_file to run.json by hand (relative to the scene) and copy that file to it",
            )
        )
        return
    rel = Path("src") / found[0]
    put.place(root / found[0], rel)
    cand["marker_file"] = rel.as_posix()
    names = scope_names((root / found[0]).read_text(encoding="utf-8", errors="replace"))
    if names:
        cand["scope_names"] = names


__all__ = ["CollectRequest", "CollectResult", "Note", "collect", "device_logs", "find_sk_meta"]
