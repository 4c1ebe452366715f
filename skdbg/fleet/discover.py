"""Find the ranks of a job: folders holding plogs (and maybe ``sk_meta/<pid>`` and ``run.json``).

Why: a multi-rank job's logs are copied in whatever layout the cluster used — one folder per rank
(``rank3/``, ``rank_3/``, ``node1/rank3/``), one ``$ASCEND_PROCESS_LOG_PATH`` per rank
(``<dir>/{run,debug}/plog/plog-<pid>_<stamp>.log``), a scene folder (``log/plog/…``), or one host folder
holding the plogs of several processes. Discovery only lists names (no file is read): a rank is one
process (pid) in one *rank folder*, and the per-rank scan — which may run on another machine — reads it.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from skdbg.parsers.plog import PlogFile, order_rotated, parse_plog_name

#: a folder name that states the rank: rank3, rank_3, rank-3, Rank03
RANK_DIR_RE = re.compile(r"^rank[_-]?(\d{1,6})$", re.IGNORECASE)
#: folders that hold the plog folder in the layouts CANN and skdbg write
_LOG_PARENTS = frozenset({"run", "debug", "log"})
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class RankSpec:
    """One rank to scan: its folder, process id, plog files (rotation order) and the cheap facts."""

    folder: str
    pid: int | None
    plogs: tuple[str, ...]
    folder_rank: int | None = None  # from the folder name (or an ancestor's, up to the root given)
    folder_rank_dir: str | None = None  # the folder whose name gave it
    run_json: str | None = None
    sk_meta: str | None = None  # sk_meta/<pid> when present
    pids_in_folder: int = 1


@dataclass(slots=True)
class Discovery:
    """What discovery found: the ranks, and the paths it could not list (with why)."""

    ranks: list[RankSpec] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def rank_folder(plog: Path) -> Path:
    """The rank folder of a plog: the folder above ``{run,debug,log}/plog/``, else the plog's folder."""
    parent = plog.parent
    if parent.name == "plog":
        if parent.parent.name in _LOG_PARENTS:
            return parent.parent.parent
        return parent.parent
    return parent


def rank_from_name(folder: Path, root: Path) -> tuple[int | None, str | None]:
    """The rank a folder name states (the folder itself or an ancestor below ``root``'s parent)."""
    stop = root.parent
    p = folder
    while True:
        m = RANK_DIR_RE.match(p.name)
        if m is not None:
            return int(m.group(1)), str(p)
        if p in (stop, root) or p == p.parent:
            return None, None
        p = p.parent


def expand(roots: list[str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """ROOT arguments → existing paths; a glob is expanded here (quoted globs reach shared storage)."""
    paths: list[Path] = []
    problems: list[tuple[str, str]] = []
    for root in roots:
        if _GLOB_CHARS & set(root):
            found = sorted(glob.glob(root, recursive=True))
            if not found:
                problems.append((root, "the pattern matches nothing"))
            paths.extend(Path(f) for f in found)
        elif not os.path.lexists(root):
            problems.append((root, "no such file or folder"))
        else:
            paths.append(Path(root))
    unique = list(dict.fromkeys(p.absolute() for p in paths))
    return unique, problems


def _walk(root: Path, problems: list[tuple[str, str]]) -> tuple[list[Path], list[Path]]:
    """Host plog files and candidate rank folders (rank-named, or holding run.json or sk_meta/)."""
    plogs: list[Path] = []
    candidates: list[Path] = []
    if root.is_file():
        return ([root] if parse_plog_name(root) is not None else []), []

    def onerror(exc: OSError) -> None:
        problems.append((str(exc.filename or root), exc.strerror or str(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        here = Path(dirpath)
        dirnames.sort()
        if here.name == "sk_meta" or here.parent.name == "sk_meta":
            dirnames[:] = []  # metadata trees are never plog folders; listing them costs time
            continue
        if RANK_DIR_RE.match(here.name) or "run.json" in filenames or "sk_meta" in dirnames:
            candidates.append(here)
        for name in sorted(filenames):
            pf = parse_plog_name(name)
            if pf is not None and pf.kind == "plog":
                plogs.append(here / name)
    return plogs, candidates


def discover(roots: list[str]) -> Discovery:
    """Every rank under ``roots`` (folders or globs), sorted by folder then pid."""
    out = Discovery()
    paths, out.problems = expand(roots)
    groups: dict[tuple[Path, int], list[PlogFile]] = {}
    owner: dict[Path, Path] = {}
    candidates: dict[Path, Path] = {}
    for root in paths:
        plogs, cands = _walk(root, out.problems)
        for p in plogs:
            pf = parse_plog_name(p)
            assert pf is not None
            folder = rank_folder(p)
            groups.setdefault((folder, pf.pid), []).append(pf)
            owner.setdefault(folder, root)
        for c in cands:
            candidates.setdefault(c, root)
    by_folder: dict[Path, int] = {}
    for folder, _pid in groups:
        by_folder[folder] = by_folder.get(folder, 0) + 1
    for (folder, pid), files in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        rank, rank_dir = rank_from_name(folder, owner[folder])
        run_json = folder / "run.json"
        meta = folder / "sk_meta" / str(pid)
        out.ranks.append(
            RankSpec(
                folder=str(folder),
                pid=pid,
                plogs=tuple(f.path for f in order_rotated(files)),
                folder_rank=rank,
                folder_rank_dir=rank_dir,
                run_json=str(run_json) if run_json.is_file() else None,
                sk_meta=str(meta) if meta.is_dir() else None,
                pids_in_folder=by_folder[folder],
            )
        )
    # rank folders without any plog: listed, so the user sees which ranks left no evidence
    with_plogs = set(by_folder)
    above = {a for f in with_plogs for a in f.parents}
    for cand, root in sorted(candidates.items(), key=lambda kv: str(kv[0])):
        if cand in with_plogs or cand in above or with_plogs.intersection(cand.parents):
            continue  # a rank folder, a job/host folder above ranks, or a folder inside a rank folder
        rank, rank_dir = rank_from_name(cand, root)
        run_json = cand / "run.json"
        out.ranks.append(
            RankSpec(
                folder=str(cand),
                pid=None,
                plogs=(),
                folder_rank=rank,
                folder_rank_dir=rank_dir,
                run_json=str(run_json) if run_json.is_file() else None,
                sk_meta=str(cand / "sk_meta") if (cand / "sk_meta").is_dir() else None,
                pids_in_folder=0,
            )
        )
    return out


__all__ = ["RANK_DIR_RE", "Discovery", "RankSpec", "discover", "expand", "rank_folder", "rank_from_name"]
