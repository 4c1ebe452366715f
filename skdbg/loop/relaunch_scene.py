"""The scene of a re-launched attempt: the fresh evidence of the new pid plus ``run.json``.

Why collect and then add: :func:`skdbg.collect.collect` takes exactly the files of one pid (host and
device plogs in its time window, ``sk_meta/<pid>/``), which is what a user would collect by hand. The
re-launch knows more than collect can read off the files — the exact argv, the exit record including
signal and timeout, the round and attempt, the candidate's options — and writes that into
``run.json``. Two things come from the failed attempt, both declared as such in ``run.json``
(``inherited``): the environment probe (the same setup, V1) and the failing path (the same workload
re-launched, V2).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skdbg.collect.build import CollectRequest, collect
from skdbg.collect.identity import git_revision, scope_names
from skdbg.collect.machine import read_log_folder
from skdbg.loop.runner import RunOutcome
from skdbg.parsers.common import ParseError
from skdbg.parsers.run_identity import format_time


def _write_json(path: Path, doc: Mapping[str, Any]) -> None:
    """Write one JSON file whole or not at all (temp file + rename in the same folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def evidence_pid(outcome: RunOutcome, log_dir: Path, cwd: Path) -> tuple[int, list[int]]:
    """The process whose evidence makes the scene, and the other pids that left some.

    The job's own pid when it wrote a plog or ``sk_meta/<pid>``. A launcher (``torchrun``, a shell
    script run as ARGV) runs the SuperKernel process as its child: the log folder is fresh for this
    attempt, so every plog in it is this run's — the one that faulted is taken (else the lowest pid),
    and the others are named in a note (one scene per process, R7).
    """
    pids: set[int] = set()
    failed: list[int] = []
    try:
        folder = read_log_folder(log_dir)
    except ParseError:
        folder = None
    if folder is not None:
        pids |= set(folder.host) | set(folder.device)
        failed = [p.pid for p in folder.failed()]
    meta = cwd / "sk_meta"
    if meta.is_dir():
        pids |= {int(d.name) for d in meta.iterdir() if d.is_dir() and d.name.isdigit()}
    if outcome.pid in pids or not pids:
        return outcome.pid, sorted(pids - {outcome.pid})
    pick = failed[0] if failed else min(pids)
    return pick, sorted(pids - {pick})


def collect_scene(
    out: Path, outcome: RunOutcome, log_dir: Path, cwd: Path, argv: Sequence[str]
) -> tuple[dict[str, Any], str | None, list[str]]:
    """Collect the evidence of the run's SuperKernel process into ``out``; returns collect's run record,
    the R1 reason when nothing of any process exists (``out`` then holds only what the re-launch writes
    itself), and notes."""
    pid, others = evidence_pid(outcome, log_dir, cwd)
    notes: list[str] = []
    if pid != outcome.pid:
        notes.append(
            f"the job (pid {outcome.pid}) left no evidence itself; collected its child process {pid}"
        )
    if others:
        notes.append(
            f"other processes of this run left evidence too (pid {', '.join(map(str, others))}): one scene per "
            f"process; `skdbg collect --pid N --log-dir {log_dir} --sk-meta {cwd}` collects another"
        )
    try:
        res = collect(
            CollectRequest(
                pid=pid,
                out=out,
                log_dir=log_dir,
                sk_meta=cwd,
                command=shlex.join(argv),
                exit_status=outcome.status,
            )
        )
    except ParseError as exc:
        out.mkdir(parents=True, exist_ok=True)
        return (
            {"pid": outcome.pid},
            (
                f"R1: no fresh plog or sk_meta of pid {outcome.pid} or any child ({exc}); the job was started "
                "with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 and ASCEND_PROCESS_LOG_PATH set, so it never "
                "reached the SuperKernel runtime or wrote elsewhere"
            ),
            notes,
        )
    return dict(res.run), None, notes


def place_marker(scene: Path, rel: str, marker: Path) -> None:
    """The model source the job ran with, at the failed attempt's scene path (V1 compares the two)."""
    dest = scene / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(marker, dest)


def place_env_probe(scene: Path, probe: bytes | None) -> str | None:
    if probe is None:
        return None
    dest = scene / "env" / "check_environment.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(probe)
    return "env/check_environment.json"


def failure_phase(collected: Mapping[str, Any], outcome: RunOutcome | None) -> str | None:
    """scene-layout.md ``failure_phase``: the plog's device fault wins, then timeout, then the exit."""
    if collected.get("failure_phase"):
        return str(collected["failure_phase"])
    if outcome is None:
        return None
    if outcome.timed_out:
        return "timeout"
    if outcome.signal is not None or (outcome.status not in (None, 0)):
        return "unknown" if outcome.interrupted else "execution"
    return None


def run_document(
    *,
    collected: Mapping[str, Any],
    round_id: str,
    attempt: int,
    argv: Sequence[str],
    cwd: Path,
    outcome: RunOutcome | None,
    marker_rel: str,
    marker_text: str,
    options: Mapping[str, Any],
    source_root: Path | None,
    env_probe: str | None,
    inherited: Mapping[str, Any],
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """``run.json`` of the attempt (scene-layout.md), over what collect established."""
    doc: dict[str, Any] = dict(collected)
    doc.update(
        {
            "round_id": round_id,
            "attempt": attempt,
            "command": shlex.join(argv),
            "argv": list(argv),
            "cwd": str(cwd),
        }
    )
    if outcome is not None:
        doc.setdefault("pid", outcome.pid)  # collect's: the SuperKernel process (the job or its child)
        if doc["pid"] != outcome.pid:
            doc["launcher_pid"] = outcome.pid
        doc["start"], doc["end"] = format_time(outcome.start), format_time(outcome.end)
        doc["exit"] = outcome.exit_record()
    else:
        doc.pop("exit", None)
    phase = failure_phase(collected, outcome)
    if phase is not None:
        doc["failure_phase"] = phase
    cand: dict[str, Any] = dict(collected.get("candidate") or {})
    cand["marker_file"] = marker_rel
    names = scope_names(marker_text)
    if names:
        cand["scope_names"] = names
    cand["super_kernel_optimize_options"] = dict(options.get("super_kernel_optimize_options") or {})
    cand["super_kernel_debug_options"] = dict(options.get("super_kernel_debug_options") or {})
    if source_root is not None:
        rev = git_revision(source_root)
        if rev.revision is not None and not rev.dirty:
            cand["source_revision"] = rev.revision
    doc["candidate"] = cand
    if env_probe is not None:
        doc["env_probe"] = env_probe
    for key, value in inherited.items():
        doc[key] = value
    if inherited:
        doc["inherited"] = {
            "from": extra.get("failed_attempt"),
            "fields": sorted(inherited),
            "why": "the same workload and setup re-launched with the round's declared change",
        }
    doc["relaunch"] = dict(extra)
    return doc


def write_run_json(scene: Path, doc: Mapping[str, Any]) -> None:
    _write_json(scene / "run.json", doc)


__all__ = [
    "collect_scene",
    "failure_phase",
    "place_env_probe",
    "place_marker",
    "run_document",
    "write_run_json",
]
