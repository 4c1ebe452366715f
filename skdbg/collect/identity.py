"""The run identity ``skdbg collect`` can establish without the user: ``run.json`` fields from evidence.

Why separate: each field has one source a reader can check — pid and start/end from the plogs (the plog
clock, scene-layout.md), device from the runtime's ``device_id=`` or the ``device-<id>`` log folder, the
debug options from the SK entry suffix (artifacts.md §0.1), the source revision from ``git`` — and
whatever has no source stays out of the file, so the gate reports it (G1/G4/F9) instead of trusting a guess.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import MarkerScan, scan_text
from skdbg.triage.localize import diagnostic_entry

#: debug option each diagnostic entry suffix stands for (artifacts.md §0.1: ``*_op_trace*`` is selected by
#: ``debug_op_exec_trace`` or ``debug_cross_core_sync_check``; the first is the one skdbg recommends, and the
#: cross-core check also sets task debugOptions bit 0x10, which the gate reads from the metadata itself)
SUFFIX_OPTIONS: dict[str, dict[str, int]] = {
    "_op_trace": {"debug_op_exec_trace": 1},
    "_debug": {"debug_sync_all": 1},
}
#: the marker call a model source must contain to be the candidate's marker file
MARKER_CALL = "super_kernel_scope_begin("
GE_CALL = "super_kernel("
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", "site-packages", "build", "dist"})
_MAX_SOURCE_BYTES = 4 << 20


def debug_options_of(entry: str | None) -> dict[str, int] | None:
    """The debug options an SK entry name proves (``{}`` for a clean entry); None without an SK entry.

    ``_dump_profiling`` is the profiler (``ASCEND_PROF_SK_ON``), not a debug option: the gate reads it from
    the ``sk_prof`` files, so it adds nothing here.
    """
    if not entry or not entry.startswith("sk_entry"):
        return None
    options: dict[str, int] = {}
    suffix = diagnostic_entry(entry)
    while suffix is not None:
        options.update(SUFFIX_OPTIONS.get(suffix, {}))
        entry = entry.replace(suffix, "", 1)
        suffix = diagnostic_entry(entry)
    return options


@dataclass(frozen=True, slots=True)
class GitRevision:
    """``git rev-parse HEAD`` of the source root, or why there is none."""

    revision: str | None
    dirty: bool = False
    problem: str | None = None  # set when ``revision`` is None


def git_revision(root: Path) -> GitRevision:
    """The checked-out commit of ``root`` (``-dirty`` when tracked files differ from it)."""
    git = shutil.which("git")
    if git is None:
        return GitRevision(None, problem="git is not installed")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [git, "-C", str(root), *args], capture_output=True, text=True, timeout=60, check=False
        )

    head = run("rev-parse", "--verify", "HEAD")
    if head.returncode != 0:
        inside = run("rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return GitRevision(None, problem=f"{root} is not a git repository")
        return GitRevision(None, problem=f"{root} is a git repository without a commit")
    status = run("status", "--porcelain", "--untracked-files=no")
    dirty = status.returncode == 0 and bool(status.stdout.strip())
    rev = head.stdout.strip()
    return GitRevision(rev + ("-dirty" if dirty else ""), dirty=dirty)


def _searchable(d: Path) -> bool:
    """Descend into project folders only: no VCS/cache/build folders, no hidden ones, no virtualenvs."""
    return d.name not in _SKIP_DIRS and not d.name.startswith(".") and not (d / "pyvenv.cfg").exists()


def marker_files(root: Path) -> list[Path]:
    """Python sources under ``root`` holding a real scope marker (relative to it, sorted)."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if _searchable(here / d))
        for name in sorted(filenames):
            p = here / name
            if not name.endswith(".py") or not p.is_file():
                continue
            try:
                if p.stat().st_size > _MAX_SOURCE_BYTES:
                    continue
                text = p.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if _scan(text) is not None:
                found.append(p.relative_to(root))
    return sorted(found)


def _scan(text: str) -> MarkerScan | None:
    """The marker model's reading of ``text`` when it holds a real scope marker (npugraph_ex or GE form;
    comments, strings and wrappers never count), else None. The substring test only skips files
    that cannot hold one."""
    if MARKER_CALL not in text and GE_CALL not in text:
        return None
    try:
        scan = scan_text(text)
    except ParseError:
        return None
    return scan if scan.markers or scan.ge else None


def scope_names(text: str) -> list[str]:
    """The scope names a marker file opens (``super_kernel_scope_begin("<name>")`` or GE
    ``torchair.scope.super_kernel("<name>")``, read by the one marker model), in source order."""
    names: list[str] = []
    scan = _scan(text)
    opened = sorted((*scan.markers, *scan.ge), key=lambda m: m.line) if scan is not None else []
    for m in opened:
        if m.kind != "end" and m.name is not None and m.name not in names:
            names.append(m.name)
    return names


__all__ = [
    "MARKER_CALL",
    "SUFFIX_OPTIONS",
    "GitRevision",
    "debug_options_of",
    "git_revision",
    "marker_files",
    "scope_names",
]
