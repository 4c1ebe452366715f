"""Find the ``sk_meta`` model directories of a scene (artifacts.md §3.1, rows 76–79).

Users point skdbg at whatever folder they copied: a result root, ``sk_meta``, ``sk_meta/<pid>``
or one ``model_*`` directory. All four resolve to the same typed layout here, with every
missing file recorded as a capability downgrade (a :class:`Gap`), never a failure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skdbg import regexcode
from skdbg.parsers.common import Gap, ParseError, Source
from skdbg.parsers.fsguard import file_problem, listed_file_ok, real_path

MODEL_DIR_RE = regexcode.compile(r"^model_(?:(?P<rts>\d{1,19})_(?P<call>\d{1,19})|unknown)$")
PROF_RE = regexcode.compile(r"^(?:sk_prof_device|sk_event_dev_device)_(?P<dev>\d{1,19})\.json$")

#: role -> file name inside ``model_<m>/`` (artifacts.md §3.1)
MODEL_FILES: dict[str, str] = {
    "super_kernel_log": "super_kernel.log",
    "fused_nodes": "sk_fused_nodes.log",
    "node_detail": "sk_node_detail.log",
    "scope_split": "sk_scope_split.log",
    "fail_reasons": "sk_fusion_fail_reasons.log",
    "device_args": "sk_device_args.log",
    "task_queue": "sk_task_queue.json",
    "graph_origin": "sk_graph_origin.json",
    "graph_updated": "sk_graph_updated.json",
    "mdl_origin": "sk_mdl_origin.json",
    "mdl_updated": "sk_mdl_updated.json",
}

#: what each missing file costs, and how to get it next time (capability downgrade, row 78)
MISSING_COST: dict[str, str] = {
    "super_kernel_log": "no build facts (binDevAddr, split symbols, reorder lines) and no handler copy",
    "fused_nodes": "no child list per SK: L4 cross-check and child identity unavailable",
    "node_detail": "no per-node scope tagging",
    "scope_split": "no scope break history",
    "fail_reasons": "no unfusible-kernel list",
    "device_args": "no direct task index -> nodeId map (T6 guard weaker)",
    "task_queue": "no structured task queue: L3 COND/opId correlation weaker",
    "bin_files": "no kernel ELFs: PC -> symbol lookup unavailable",
}
COLLECT_META = "rerun with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 and copy sk_meta/<pid>/ from the process cwd"

_SEARCH_DEPTH = 3


@dataclass(frozen=True, slots=True)
class ModelDir:
    """One ``sk_meta/<pid>/model_<rts>_<call>`` directory and the files it holds."""

    pid: int | None  # None when the pid folder name is not numeric (e.g. a rank label)
    pid_label: str
    label: str  # "model_48_1" / "model_unknown"
    path: Path
    files: dict[str, Path]  # role -> path (only present files)
    bin_files: tuple[Path, ...]
    constant_codegen: tuple[Path, ...]

    @property
    def model_id(self) -> str | None:
        """``<rtsId>_<callCount>`` as printed in plog ``ModelId=`` (None for model_unknown)."""
        m = MODEL_DIR_RE.match(self.label)
        if m is None or m.group("rts") is None:
            return None
        return f"{m.group('rts')}_{m.group('call')}"

    def missing(self) -> list[str]:
        roles = [r for r in MISSING_COST if r != "bin_files" and r not in self.files]
        if not self.bin_files:
            roles.append("bin_files")
        return roles


@dataclass(slots=True)
class SkMetaLayout:
    """All model dirs found under a scene, grouped by pid label, plus profiling files."""

    root: Path
    models: list[ModelDir] = field(default_factory=list)
    prof_files: list[Path] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    #: ``root`` resolved: files whose real path leaves it are refused (fsguard)
    resolved_root: Path | None = None
    #: files refused by :func:`~skdbg.parsers.fsguard.file_problem` (each reported once, as a gap)
    refused: set[Path] = field(default_factory=set)

    #: every ``sk_meta`` folder seen (even an empty one): the user did collect metadata
    sk_meta_dirs: list[Path] = field(default_factory=list)

    @property
    def pid_labels(self) -> list[str]:
        return sorted({m.pid_label for m in self.models}, key=_natural)

    def models_of(self, pid_label: str) -> list[ModelDir]:
        return [m for m in self.models if m.pid_label == pid_label]


def _natural(s: str) -> tuple[int, str]:
    return (int(s), "") if s.isdigit() else (1 << 62, s)


def _natural_path(p: Path) -> tuple[int, str]:
    return _natural(p.name)


def _is_model_dir(p: Path) -> bool:
    if MODEL_DIR_RE.match(p.name):
        return True
    return any((p / name).is_file() for name in MODEL_FILES.values())


def _model_children(p: Path) -> list[Path]:
    try:
        kids = sorted((c for c in p.iterdir() if c.is_dir()), key=lambda c: c.name)
    except OSError:
        return []
    return [c for c in kids if MODEL_DIR_RE.match(c.name)]


def _usable(
    p: Path, layout: SkMetaLayout, real_dir: Path | None = None, *, regular: bool | None = None
) -> bool:
    """True for a regular file inside the scene; anything else present is recorded as a gap.

    ``real_dir``: ``p.parent`` resolved once by the caller; ``regular``: what its listing said of ``p``
    (see :func:`file_problem`)."""
    if layout.refused and p in layout.refused:  # no hash of the path while nothing is refused
        return False
    gap = file_problem(p, layout.resolved_root, real_dir=real_dir, regular=regular)
    if gap is not None:
        layout.refused.add(p)
        layout.gaps.append(gap)
    return gap is None


def _present(p: Path) -> bool:
    """Something (even a dangling link or a FIFO) stands at ``p``: worth a check and maybe a gap."""
    return p.is_symlink() or p.exists()


def _load_model(path: Path, pid_label: str, layout: SkMetaLayout) -> ModelDir:
    files = {
        role: path / name
        for role, name in MODEL_FILES.items()
        if _present(path / name) and _usable(path / name, layout)
    }
    bin_dir, cc_dir = path / "bin_files", path / "constant_codegen"
    bins = _bin_files(bin_dir, layout) if bin_dir.is_dir() else ()
    cc = tuple(p for p in sorted(cc_dir.iterdir()) if _usable(p, layout)) if cc_dir.is_dir() else ()
    return ModelDir(
        pid=int(pid_label) if pid_label.isdigit() else None,
        pid_label=pid_label,
        label=path.name,
        path=path,
        files=files,
        bin_files=bins,
        constant_codegen=cc,
    )


def _bin_files(bin_dir: Path, layout: SkMetaLayout) -> tuple[Path, ...]:
    """The usable kernel ELFs of ``bin_dir``: what ``sorted(bin_dir.glob("*.o"))`` lists (every entry
    whose name ends in ``.o``, dot-files too; none when the folder cannot be listed), each checked.

    Why a listing of our own: a scene holds thousands of ELFs in one folder; ``glob`` and sorting
    ``Path`` objects (one parent: the order of the names) cost ~10 ms on 2,000, and the listing's file
    type spares the ``lstat`` of each plain regular file (see :func:`file_problem`)."""
    try:
        with os.scandir(bin_dir) as it:
            kinds = {e.name: _plain_file(e) for e in it if e.name.endswith(".o")}
    except PermissionError:
        return ()  # as glob: an unlistable folder lists nothing
    real_bin = real_path(bin_dir)
    usable: list[Path] = []
    # a plain readable file inside the scene is checked by its text (fsguard.listed_file_ok, the full
    # check's quick case): the Path of each of two thousand ELFs need not make its string form for the
    # ``access`` call. Anything else takes the full check (_usable), which records its gap
    prefix = os.path.join(os.fspath(bin_dir), "")
    root, refused = layout.resolved_root, layout.refused
    for name in sorted(kinds):
        regular = kinds[name]
        p = bin_dir / name
        if listed_file_ok(prefix + name, real_bin, root, regular=regular):
            if not (refused and p in refused):  # as _usable: a path refused before stays refused
                usable.append(p)
        elif _usable(p, layout, real_bin, regular=regular):
            usable.append(p)
    return tuple(usable)


def _plain_file(entry: os.DirEntry[str]) -> bool:
    """A regular file and not a link, by the listing's file type (an ``lstat`` only where the file
    system gives none); False when that fails, which takes the full check."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _add_pid_dir(layout: SkMetaLayout, pid_dir: Path) -> None:
    for model in _model_children(pid_dir):
        layout.models.append(_load_model(model, pid_dir.name, layout))
    for f in sorted(pid_dir.iterdir()):
        if PROF_RE.match(f.name) and _usable(f, layout):
            layout.prof_files.append(f)


def _find_sk_meta_dirs(root: Path) -> list[Path]:
    found: list[Path] = []
    root_depth = len(root.parts)
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if here.name == "sk_meta":
            found.append(here)
            dirnames[:] = []
            continue
        if len(here.parts) - root_depth >= _SEARCH_DEPTH:
            dirnames[:] = []
        dirnames.sort()
    return found


def discover_sk_meta(path: str | os.PathLike[str]) -> SkMetaLayout:
    """Resolve a result root, ``sk_meta``, ``sk_meta/<pid>`` or ``model_*`` dir to model dirs (row 76).

    Raises :class:`ParseError` only when ``path`` is not a directory; an empty result is a gap.
    """
    root = Path(path)
    if not root.exists():
        raise ParseError(str(root), "a scene directory (path does not exist)")
    if not root.is_dir():
        raise ParseError(str(root), "a scene directory, got a file")
    layout = SkMetaLayout(root=root, resolved_root=root.resolve())
    if _is_model_dir(root) and not _model_children(root):
        parent = root.parent
        layout.models.append(_load_model(root, parent.name if parent != root else "?", layout))
    elif _model_children(root):
        _add_pid_dir(layout, root)  # sk_meta/<pid>
    elif root.name == "sk_meta":
        layout.sk_meta_dirs.append(root)
        for pid_dir in sorted((c for c in root.iterdir() if c.is_dir()), key=_natural_path):
            _add_pid_dir(layout, pid_dir)
    else:
        layout.sk_meta_dirs.extend(_find_sk_meta_dirs(root))
        for sk_meta in layout.sk_meta_dirs:
            for pid_dir in sorted(
                (c for c in sk_meta.iterdir() if c.is_dir()), key=lambda c: _natural(c.name)
            ):
                _add_pid_dir(layout, pid_dir)
    # profiling files may also sit beside sk_meta (msprof copies; the auto-tune fixture keeps it at the root)
    known = set(layout.prof_files)
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).parts) - len(root.parts)
        if depth >= _SEARCH_DEPTH:
            dirnames[:] = []
        dirnames.sort()
        for name in sorted(filenames):
            if not PROF_RE.match(name):
                continue  # no Path for every kernel ELF of the scene
            p = Path(dirpath) / name
            if p not in known:
                known.add(p)
                if _usable(p, layout):
                    layout.prof_files.append(p)
    if not layout.models:
        layout.gaps.append(
            Gap(
                "no_sk_meta",
                f"no sk_meta model directory found under {root}",
                Source(str(root)),
                COLLECT_META,
            )
        )
    for model in layout.models:
        for role in model.missing():
            name = MODEL_FILES.get(role, "bin_files/")
            layout.gaps.append(
                Gap(
                    "missing_file",
                    f"{model.label}: {name} missing — {MISSING_COST[role]}",
                    Source(str(model.path / name)),
                    COLLECT_META,
                )
            )
    return layout
