"""The source a re-launch runs: the round's declared marker edits, materialised and checked (§6.3).

Why a check even after skdbg applied the edits itself: the declared change is the failed attempt's
*frozen* model source plus the proposal's edits. A ``--source`` tree that drifted from what was frozen,
or a user who applied the edits by hand (``--applied``) and wrote ``"None"`` for ``None`` (T8), runs
another program; such an attempt is ``invalid`` and its job is never started.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from skdbg.collect.identity import marker_files
from skdbg.parsers.markers import (
    EditError,
    MarkerEdit,
    apply_edits_text,
    declared_mismatch,
    materialised_problem,
)


class RelaunchError(ValueError):
    """Bad input to a re-launch (a folder, the round, ARGV): exit 3, nothing recorded."""


@dataclass(frozen=True, slots=True)
class Declared:
    """What the round declares: the failed attempt's frozen model source and the edits on it."""

    rel: str  # the marker file's path in the failed attempt's scene (e.g. ``src/model.py``)
    old_text: str  # its frozen text
    edits: list[MarkerEdit]  # the edits of that file
    mechanism: str | None  # the exclusion mechanism (None for narrowing probes)


@dataclass(frozen=True, slots=True)
class Materialised:
    """The source tree the job runs in and its marker file; ``problem`` when it is not the declared change."""

    root: Path
    marker: Path
    text: str
    problem: str | None


def find_marker(root: Path, rel: str) -> Path:
    """The marker file in ``root``: at ``rel``, else by its name at the top, else the one file under
    ``root`` that calls a scope marker."""
    for cand in (root / rel, root / Path(rel).name):
        if cand.is_file():
            return cand
    found = marker_files(root)
    if len(found) == 1:
        return root / found[0]
    what = "no Python file" if not found else f"{len(found)} files ({', '.join(map(str, found[:5]))})"
    raise RelaunchError(
        f"{root}: cannot tell which file is the model source {rel} of the failed attempt: not at {rel}, and "
        f"{what} call super_kernel_scope_begin("
    )


def declared_problem(declared: Declared, new_text: str) -> str | None:
    """Why ``new_text`` is not the declared change (None when it is): the declared edits applied to the
    frozen source (comments and formatting aside), and the declared mechanism in its markers."""
    rel = declared.rel
    if declared.edits:
        try:
            mm = declared_mismatch(declared.old_text, declared.edits, new_text, rel)
        except EditError as exc:
            return f"the declared marker edits cannot be applied to the frozen {rel} ({exc.message})"
        if mm is not None:
            return f"{rel}:{mm.line}: {mm.detail}" if mm.line is not None else mm.detail
    if declared.mechanism is not None:
        mm = materialised_problem(declared.old_text, new_text, declared.mechanism, rel)
        if mm is not None:
            return mm.detail
    return None


def _copy_tree(src: Path, dest: Path) -> None:
    """A copy of the user's source tree (symlinks kept as links; earlier run output left out)."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("sk_meta", "__pycache__", ".git"))


def materialise(declared: Declared, dest: Path, source_root: Path | None) -> Materialised:
    """Write the declared change into ``dest``: a copy of ``source_root`` with the edits applied to its
    marker file, or (no source root) the frozen marker file with the edits at ``dest/<rel>``."""
    if source_root is not None:
        if not source_root.is_dir():
            raise RelaunchError(f"{source_root}: the model source folder given by --source (not a directory)")
        _copy_tree(source_root, dest)
        marker = find_marker(dest, declared.rel)
        base = marker.read_text(encoding="utf-8", errors="replace")
    else:
        dest.mkdir(parents=True, exist_ok=True)
        marker = dest / declared.rel
        marker.parent.mkdir(parents=True, exist_ok=True)
        base = declared.old_text
    try:
        text = apply_edits_text(base, declared.edits)
    except EditError as exc:
        marker.write_text(base, encoding="utf-8")
        return Materialised(
            dest, marker, base, f"the declared marker edits cannot be applied to {marker} ({exc.message})"
        )
    marker.write_text(text, encoding="utf-8")
    return Materialised(dest, marker, text, declared_problem(declared, text))


def check_applied(declared: Declared, root: Path) -> Materialised:
    """``--applied DIR``: the user's own tree, which must already hold exactly the declared change."""
    if not root.is_dir():
        raise RelaunchError(f"{root}: the model source folder given by --applied (not a directory)")
    marker = find_marker(root, declared.rel)
    try:
        text = marker.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RelaunchError(f"{marker}: unreadable model source ({exc})") from exc
    return Materialised(root, marker, text, declared_problem(declared, text))


__all__ = [
    "Declared",
    "Materialised",
    "RelaunchError",
    "check_applied",
    "declared_problem",
    "find_marker",
    "materialise",
]
