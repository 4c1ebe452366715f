"""A result cache for ``skdbg analyze``: an unchanged scene is triaged once.

Why: a repeat ``analyze`` of the same scene (the TUI, a script looping over rounds, a user re-reading a
verdict) re-parsed every artifact, and before this design a hit still re-hashed every input (232 MB on
the bench scene). An entry is found by the *options key* — the tool version, the resolved scene root and
the options that change a verdict (``--run``, ``--source-root``, ``--pid``, ``--skew``, ``--grace``) —
and is used only when the scene is provably the one the verdict was computed from.

What guards a hit, precisely:

* **The tree snapshot.** Every directory and file under the scene root, by relative path, with its
  type and permission bits, device, inode, size, ``mtime_ns`` and ``ctime_ns``. The snapshot is taken
  before the triage stages run (the scene was opened and run.json/model source checked just before:
  an edit in that window is within :data:`RACY_NS`, see below) and again before storing; the entry is stored only when both agree (nothing
  changed while it was computed), and a lookup hits only when a fresh snapshot equals it. A file added,
  removed, renamed, replaced, resized, chmod-ed or written misses. The kernel sets ``ctime`` to the
  current time on every write, truncate, chmod and ``utime`` call and offers no call that sets it back,
  so a same-size edit whose mtime was put back (``touch -d``, ``os.utime``) changes ``ctime`` and misses.
  Content is not re-read on a hit: what this does not see is a change that bypasses the kernel's inode
  update (writing the block device underneath, a clock stepped back to the stored ``ctime`` during the
  edit, a network file system that does not maintain ``ctime``); ``--no-cache`` is the way out there.
* **Racy files are checked by content.** Timestamps have a granularity (a jiffy on Linux, up to seconds
  elsewhere): a file whose ``ctime`` is within :data:`RACY_NS` of the snapshot could be edited again in
  the same tick without a visible change (git's "racy clean" problem). For such files the entry stores the
  SHA-256 and every lookup re-hashes them; a freshly copied scene analysed at once is therefore checked
  by content, an older one by its inodes.
* **Files outside the scene** the verdict reads — the ``--run`` manifest and each path the model source
  is looked for (``--source-root`` first) — are recorded the same way (absent ones as absent).
* A scene holding a symbolic link or a special file is not snapshot: for it the entry keeps the SHA-256
  of every input (the G5 hashes the analysis computed) and a lookup re-hashes them all, as before.

The G5 hashes a hit reports are the ones computed when the entry was stored, from the same inodes.

The key's tool version is :data:`skdbg.__version__` and the code it runs: the size and ``mtime_ns`` of
every source and data file of the installed package (:func:`code_stamp`), so a checkout edited without a
new version number does not answer with the verdicts of the code before the edit.

Entries are pickles of the :class:`~skdbg.triage.model.Analysis`, written atomically with owner-only
permissions under :func:`cache_dir` (``$SKDBG_CACHE_DIR``, else the platform user cache dir), one per
options key (a new analysis of an edited scene replaces the old entry). Each file starts with
:data:`_MAGIC` and the SHA-256 of the rest: a byte changed on disk (a bad block, a stray write, a
truncated copy) is a miss, never a verdict printed from damaged bytes. A cache that cannot be read or
written (read-only disk, a foreign entry, another Python) is skipped silently: the analysis is then simply
computed. This module imports no parser: ``analyze`` answers a hit without loading the parser stack.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pickle
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg import __version__, regexcode
from skdbg.triage.jsontext import analysis_json_text  # re-exported: the entry stores the printed text

if TYPE_CHECKING:
    from skdbg.triage.context import TriageContext
    from skdbg.triage.model import Analysis

ENV_CACHE = "SKDBG_CACHE_DIR"
#: 3: stat-guarded entries holding the printed output, and Analysis gained wait_for; 4: the file's
#: SHA-256 in front of it, the code stamp in the key
_FORMAT = 4
#: what an entry file starts with, then the SHA-256 (32 bytes) of the pickle that follows
_MAGIC = b"skdbg-analysis-cache\n"
_DIGEST_SIZE = 32
#: an entry's file name (:meth:`CacheKey.digest`): what :meth:`AnalysisCache._drop_other_builds` may remove
_ENTRY_NAME = regexcode.compile(r"[0-9a-f]{64}-[0-9a-f]{32}\.pickle")
#: the packages whose directories :func:`code_stamp` reads: ``skdbg`` and the subpackages mapped to
#: folders of their own (pyproject ``[tool.setuptools.package-dir]``; tests/triage/test_cache.py holds
#: the two lists equal); every other subpackage lies inside one of their folders
_CODE_PACKAGES = ("skdbg", "skdbg.parsers", "skdbg.codegen", "skdbg.sessions")
#: the files of those folders that are code or data the analysis reads
_CODE_SUFFIXES = (".py", ".json", ".j2", ".tcss", ".md")
_HASH_CHUNK = 1 << 20
#: a file whose ctime is this close to the snapshot is verified by content (timestamp granularity)
RACY_NS = 3_000_000_000

#: (mode, device, inode, size, mtime_ns, ctime_ns) of one file or directory
StatRow = tuple[int, int, int, int, int, int]


def cache_dir(env: dict[str, str] | None = None) -> Path:
    """Where analyses are cached: ``$SKDBG_CACHE_DIR`` or ``<user cache dir>/skdbg/analysis``."""
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_CACHE)
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs  # only when no $SKDBG_CACHE_DIR: `analyze --no-cache` never asks (3 ms of imports)

    return platformdirs.user_cache_path("skdbg") / "analysis"


@functools.cache
def code_stamp() -> str:
    """:func:`stamp_of` the installed package's folders (:data:`_CODE_PACKAGES`): part of every cache key.

    Why not the version alone: an editable install or a patched copy runs new code under the same
    version number, and a verdict the old code computed would be answered for it. Computed once per
    process (~300 files listed and stat-ed in ~1.5 ms)."""
    import importlib.util

    roots: set[str] = set()
    for name in _CODE_PACKAGES:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations is not None:
                roots.update(spec.submodule_search_locations)
    return stamp_of(sorted(roots))


def tool_digest() -> str:
    """What identifies the running skdbg in an entry's name: the entry format, the version and
    :func:`code_stamp` (32 hex digits)."""
    doc = json.dumps([_FORMAT, __version__, code_stamp()])
    return hashlib.sha256(doc.encode()).hexdigest()[:32]


def stamp_of(roots: list[str]) -> str:
    """SHA-256 of each root and of the relative path, size and ``mtime_ns`` of every code and data file
    under it (:data:`_CODE_SUFFIXES`; ``__pycache__`` left out). A link to a file counts by its target's
    stat, a broken one (an editor's lock file such as ``.#engine.py``) as unreadable, and the listing
    goes on; a link to a folder is not followed. Stats, not contents: an edit changes the size or the
    mtime (and one that puts both back is no change of the tool a user makes by accident)."""
    rows: list[tuple[int, str, int, int]] = []
    for index, root in enumerate(roots):
        pending = [("", root)]
        while pending:
            rel, folder = pending.pop()
            try:
                with os.scandir(folder) as it:
                    entries = list(it)
            except OSError:
                continue  # an unreadable folder counts for nothing
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            pending.append((f"{rel}{e.name}/", e.path))
                        continue
                    if not e.name.endswith(_CODE_SUFFIXES):
                        continue
                    st = e.stat()
                    rows.append((index, rel + e.name, st.st_size, st.st_mtime_ns))
                except OSError:
                    rows.append((index, rel + e.name, -1, -1))  # seen, unreadable: the rest still counts
    rows.sort()
    return hashlib.sha256(json.dumps([roots, rows]).encode()).hexdigest()


def _row(st: os.stat_result) -> StatRow:
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def tree_snapshot(root: Path) -> tuple[tuple[str, StatRow], ...] | None:
    """Every entry under ``root`` (and ``root`` itself as ``""``) with its :data:`StatRow`, sorted by
    relative path; None when the tree holds a symbolic link or a special file, or cannot be listed
    (what such a scene resolves to is not a function of these stats alone)."""
    try:
        rows: list[tuple[str, StatRow]] = [("", _row(os.stat(root)))]
    except OSError:
        return None
    pending: list[tuple[str, str]] = [("", str(root))]
    while pending:
        rel, path = pending.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
            for e in entries:
                st = e.stat(follow_symlinks=False)
                name = rel + e.name
                if stat.S_ISDIR(st.st_mode):
                    pending.append((name + "/", e.path))
                elif not stat.S_ISREG(st.st_mode):
                    return None  # a link, FIFO, device or socket
                rows.append((name, _row(st)))
        except OSError:
            return None
    rows.sort()
    return tuple(rows)


def _path_row(path: Path) -> StatRow | None:
    try:
        return _row(os.stat(path))
    except OSError:
        return None


def _file_sha256(path: Path) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(_HASH_CHUNK):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state of everything a verdict read, as the guard of a cached entry (see the module doc)."""

    tree: tuple[tuple[str, StatRow], ...] | None
    #: absolute path → stat row (None: absent) of the inputs outside the tree
    extras: tuple[tuple[str, StatRow | None], ...]
    taken_ns: int

    def same_as(self, other: Snapshot) -> bool:
        return self.tree == other.tree and self.extras == other.extras

    def racy(self, root: Path) -> list[Path]:
        """The files whose ctime is too close to the snapshot to tell an edit in the same tick."""
        horizon = self.taken_ns - RACY_NS
        out = [root / rel for rel, row in self.tree or () if stat.S_ISREG(row[0]) and row[5] >= horizon]
        out += [
            Path(p)
            for p, row in self.extras
            if row is not None and stat.S_ISREG(row[0]) and row[5] >= horizon
        ]
        return out


def take_snapshot(root: Path, extras: list[Path]) -> Snapshot:
    taken = time.time_ns()
    return Snapshot(tree_snapshot(root), tuple((str(p), _path_row(p)) for p in extras), taken)


@dataclass(frozen=True, slots=True)
class CacheKey:
    """The options an entry is looked up by (everything but the scene's content)."""

    root: Path
    run_json: Path | None
    source_root: Path | None
    pid: int | None
    skew: float
    grace: float

    def digest(self) -> str:
        """The entry's name: the digest of the options (:meth:`options_digest`), then the tool's
        (:func:`tool_digest`). A new entry for the same options replaces those of other builds."""
        return f"{self.options_digest()}-{tool_digest()}"

    def options_digest(self) -> str:
        doc: dict[str, Any] = {
            "format": _FORMAT,
            "root": str(self.root),
            "run_json": None if self.run_json is None else str(self.run_json),
            "source_root": None if self.source_root is None else str(self.source_root),
            "pid": self.pid,
            "skew": self.skew,
            "grace": self.grace,
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()

    @classmethod
    def of(cls, ctx: TriageContext) -> CacheKey:
        run = ctx.run_override
        return cls(
            root=ctx.scene.root,
            run_json=None if run is None else Path(os.path.abspath(run.file)),
            source_root=ctx.source_root,
            pid=ctx.evidence.pid,
            skew=ctx.options.skew.total_seconds(),
            grace=ctx.options.grace.total_seconds(),
        )


@dataclass(frozen=True, slots=True)
class CachedAnalysis:
    """A hit: what ``analyze`` prints, without unpickling the analysis unless a format needs it.

    ``json_text`` is the analysis JSON as ``analyze --format json`` prints it (rendered once, when
    stored: the indented encoder is pure Python and costs as much as the rest of a hit); ``sk_meta``
    says whether the scene held SuperKernel metadata (``analyze``'s note)."""

    json_text: str
    warnings: tuple[str, ...]
    fault_kind: str
    sk_meta: bool
    blob: bytes

    @property
    def analysis(self) -> Analysis:
        from skdbg.triage.model import Analysis

        analysis = pickle.loads(self.blob)
        if not isinstance(analysis, Analysis):
            raise TypeError("the cache entry does not hold an analysis")
        return analysis

    def load(self) -> Analysis | None:
        """:attr:`analysis`, or None when the stored one does not load (a miss for the caller: the
        file's digest held, so this is an entry the running code cannot read back)."""
        try:
            return self.analysis
        except Exception:
            return None


def _extras(ctx: TriageContext) -> list[Path]:
    """The inputs outside the tree, by their real paths (a ``..`` after a linked folder leads where the
    system opens it, not where the text folds it)."""
    run = ctx.run_override
    out = [] if run is None else [Path(os.path.realpath(run.file))]
    return out + [Path(os.path.realpath(p)) for p in ctx.marker_candidates()]


def _input_hashes(ctx: TriageContext) -> dict[str, str | None]:
    """Label → SHA-256 of every input (the G5 hashes; None for an unreadable one)."""
    from skdbg.parsers.common import ParseError

    out: dict[str, str | None] = {}
    for a in ctx.scene.artifacts:
        try:
            out[f"{a.kind}:{a.relpath}"] = a.sha256
        except (ParseError, OSError):
            out[f"{a.kind}:{a.relpath}"] = None  # unreadable now: never trust (nor store) a verdict for it
    # the model source is an input artifact too (G5 hashed it): its hash is not read a second time
    listed = {str(a.path): a for a in ctx.input_artifacts if a.kind == "marker_file"}
    for p in _extras(ctx):
        if p.is_file():
            art = listed.get(str(p))
            if art is None:
                out[f"extra:{p}"] = _file_sha256(p)
                continue
            try:
                out[f"extra:{p}"] = art.sha256
            except (ParseError, OSError):
                out[f"extra:{p}"] = None
    return out


class AnalysisCache:
    """Look up and store analyses under one directory; every failure is a silent miss."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else cache_dir()

    # ------------------------------------------------------------------ look-up without parsing

    def lookup(self, key: CacheKey) -> CachedAnalysis | None:
        """The cached analysis for ``key`` when the scene is unchanged, without opening the scene.

        Only snapshot entries answer here; a scene with links or special files goes the slow way
        (:meth:`analyze`, which re-hashes its inputs)."""
        entry = self._load(key.digest())
        if entry is None or entry["snapshot"].tree is None:
            return None
        stored: Snapshot = entry["snapshot"]
        fresh = take_snapshot(key.root, [Path(p) for p, _ in stored.extras])
        if not fresh.same_as(stored) or not self._racy_ok(entry):
            return None
        return CachedAnalysis(
            entry["json"], tuple(entry["warnings"]), entry["fault_kind"], entry["sk_meta"], entry["analysis"]
        )

    # ------------------------------------------------------------------ the analysis path

    def analyze(self, ctx: TriageContext, compute: Callable[[TriageContext], Analysis]) -> Analysis:
        """The cached analysis of ``ctx`` when its inputs are unchanged, else ``compute(ctx)`` (stored)."""
        key = CacheKey.of(ctx)
        digest = key.digest()
        extras = _extras(ctx)
        before = take_snapshot(key.root, extras)
        entry = self._load(digest)
        if entry is not None and self._valid(entry, ctx, before):
            cached = CachedAnalysis("", (), "", False, entry["analysis"]).load()
            if cached is not None:  # an entry that does not unpickle is a miss
                return cached
        analysis = compute(ctx)
        after = take_snapshot(key.root, extras)
        if not after.same_as(before):
            return analysis  # the scene changed while it was analysed: not a verdict to keep
        if ctx.read_failed:
            return analysis  # an input's read failed (an I/O error): it may read whole next time
        hashes = _input_hashes(ctx)
        if None in hashes.values():
            return analysis
        # a racy file's hash: the one G5 computed while the analysis read it, else read now
        known = {str(a.path): a._sha256 for a in ctx.scene.artifacts}
        racy = {
            str(p): known.get(str(p)) or hashes.get(f"extra:{p}") or _file_sha256(p)
            for p in before.racy(key.root)
        }
        if None in racy.values():
            return analysis
        layout = ctx.scene.layout
        self._store(
            digest,
            {
                "format": _FORMAT,
                "snapshot": before,
                "racy": racy,
                "hashes": hashes,
                "sk_meta": bool(layout.models or layout.prof_files),
                "fault_kind": analysis.fault.kind,
                "warnings": list(analysis.warnings),
                "json": analysis_json_text(analysis),
                # pickled apart: a hit printing JSON never loads the triage model
                "analysis": pickle.dumps(analysis, protocol=pickle.HIGHEST_PROTOCOL),
            },
        )
        return analysis

    def _valid(self, entry: dict[str, Any], ctx: TriageContext, fresh: Snapshot) -> bool:
        stored: Snapshot = entry["snapshot"]
        if stored.tree is not None:
            return fresh.same_as(stored) and self._racy_ok(entry)
        # no snapshot (links or special files in the scene): every input's content decides
        hashes: dict[str, str | None] = entry["hashes"]
        return hashes == _input_hashes(ctx) and fresh.extras == stored.extras

    @staticmethod
    def _racy_ok(entry: dict[str, Any]) -> bool:
        racy: dict[str, str] = entry["racy"]
        return all(_file_sha256(Path(p)) == sha for p, sha in racy.items())

    # ------------------------------------------------------------------ storage

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.pickle"

    def _load(self, key: str) -> dict[str, Any] | None:
        try:
            data = self._path(key).read_bytes()
            head, body = len(_MAGIC), len(_MAGIC) + _DIGEST_SIZE
            rest = memoryview(data)[body:]  # the pickle, hashed and loaded in place (no copy of it)
            if data[:head] != _MAGIC or hashlib.sha256(rest).digest() != data[head:body]:
                return None  # not an entry of this format, or its bytes changed since it was written
            entry = pickle.loads(rest)
        except Exception:
            return None  # absent, unreadable, truncated or from another Python: a miss
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
            return None
        if not isinstance(entry.get("analysis"), bytes) or not isinstance(entry.get("snapshot"), Snapshot):
            return None
        if not isinstance(entry.get("json"), str) or not isinstance(entry.get("fault_kind"), str):
            return None
        if not isinstance(entry.get("racy"), dict) or not isinstance(entry.get("hashes"), dict):
            return None
        return entry

    def _drop_other_builds(self, key: str) -> None:
        """Remove the entries other builds of skdbg stored for the same options (one entry per options
        key, whatever the code: editing a checkout would otherwise leave one per edit)."""
        options, _, _ = key.partition("-")
        for other in self.root.glob(f"{options}-*.pickle"):
            if other.name != f"{key}.pickle" and _ENTRY_NAME.fullmatch(other.name):
                with contextlib.suppress(OSError):
                    other.unlink()

    def _store(self, key: str, entry: dict[str, Any]) -> None:
        tmp: str | None = None
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".pickle")
            body = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + hashlib.sha256(body).digest() + body)
            os.replace(tmp, self._path(key))
            tmp = None
            self._drop_other_builds(key)
        except Exception:
            return  # a cache that cannot be written is skipped: the analysis stands on its own
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


__all__ = [
    "ENV_CACHE",
    "RACY_NS",
    "AnalysisCache",
    "CacheKey",
    "CachedAnalysis",
    "Snapshot",
    "analysis_json_text",
    "cache_dir",
    "code_stamp",
    "stamp_of",
    "take_snapshot",
    "tool_digest",
    "tree_snapshot",
]
