"""A result cache for ``skdbg analyze``: an unchanged scene is triaged once.

Why: a repeat ``analyze`` of the same scene (the TUI, a script looping over rounds, a user re-reading a
verdict) re-parsed every artifact. The cache looks an earlier analysis up by a cheap *stat key* — the
tool version, the options that change a verdict (``--run``, ``--source-root``, ``--pid``, ``--skew``,
``--grace``), the scene's inventory and each input's device/inode/size/mtime_ns — and then lets the
*content* decide: the entry stores the SHA-256 of every input and is used only if each file still
hashes the same. A same-size edit whose mtime was put back therefore misses, and the hashes the check
computes are the ones G5 reports anyway (each file is read once for them).

Entries are pickles of the :class:`~skdbg.triage.model.Analysis`, written atomically with owner-only
permissions under :func:`cache_dir` (``$SKDBG_CACHE_DIR``, else the platform user cache dir). A cache
that cannot be read or written (read-only disk, a foreign entry, another Python) is skipped silently:
the analysis is then simply computed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from skdbg import __version__
from skdbg.parsers.common import ParseError
from skdbg.scene import Artifact
from skdbg.triage.context import TriageContext
from skdbg.triage.model import Analysis

ENV_CACHE = "SKDBG_CACHE_DIR"
_FORMAT = 2  # 2: Analysis gained wait_for (an older pickle would lack the slot)


def cache_dir(env: dict[str, str] | None = None) -> Path:
    """Where analyses are cached: ``$SKDBG_CACHE_DIR`` or ``<user cache dir>/skdbg/analysis``."""
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_CACHE)
    if explicit:
        return Path(explicit).expanduser()
    return platformdirs.user_cache_path("skdbg") / "analysis"


@dataclass(frozen=True, slots=True)
class _Input:
    """One file an analysis read: a label for the key, and the file whose content must not change."""

    label: str
    artifact: Artifact


def _inputs(ctx: TriageContext) -> list[_Input]:
    """Every file the verdict depends on: the scene's artifacts, ``--run`` and the model source."""
    items = [_Input(f"{a.kind}:{a.relpath}", a) for a in ctx.scene.artifacts]
    if ctx.run_override is not None:
        items.append(_Input("--run", Artifact("run_override", Path(ctx.run_override.file), ctx.root)))
    marker = ctx.marker_file()
    if marker is not None:
        items.append(_Input("model_source", Artifact("marker_file", marker, ctx.root)))
    return items


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _sha256(item: _Input) -> str | None:
    """The content hash; for a scene artifact the one G5 reports (computed once, kept on the artifact)."""
    try:
        return item.artifact.sha256
    except (ParseError, OSError):
        return None  # unreadable now: never trust (nor store) a verdict for it


def cache_key(ctx: TriageContext, inputs: list[_Input]) -> str:
    """The stat key: version, verdict-changing options, the scene inventory and each input's stat."""
    doc: dict[str, Any] = {
        "format": _FORMAT,
        "version": __version__,
        "root": str(ctx.scene.root.resolve()),
        "pid": ctx.evidence.pid,
        "source_root": str(ctx.source_root) if ctx.source_root is not None else None,
        "skew": ctx.options.skew.total_seconds(),
        "grace": ctx.options.grace.total_seconds(),
        "gaps": [[g.kind, g.detail] for g in ctx.scene.gaps],
        "inputs": [[i.label, str(i.artifact.path), _stat(i.artifact.path)] for i in inputs],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


class AnalysisCache:
    """Look up and store analyses under one directory; every failure is a silent miss."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else cache_dir()

    def analyze(self, ctx: TriageContext, compute: Callable[[TriageContext], Analysis]) -> Analysis:
        """The cached analysis of ``ctx`` when its inputs are unchanged, else ``compute(ctx)`` (stored)."""
        inputs = _inputs(ctx)
        key = cache_key(ctx, inputs)
        entry = self._load(key)
        if entry is not None:
            stored: dict[str, str | None] = entry["hashes"]
            if stored == {i.label: _sha256(i) for i in inputs} and None not in stored.values():
                analysis: Analysis = entry["analysis"]
                return analysis
        analysis = compute(ctx)
        hashes = {i.label: _sha256(i) for i in inputs}
        if None not in hashes.values():
            self._store(key, {"format": _FORMAT, "hashes": hashes, "analysis": analysis})
        return analysis

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.pickle"

    def _load(self, key: str) -> dict[str, Any] | None:
        try:
            with self._path(key).open("rb") as fh:
                entry = pickle.load(fh)
        except Exception:
            return None  # absent, unreadable, truncated or from another Python: a miss
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
            return None
        if not isinstance(entry.get("analysis"), Analysis) or not isinstance(entry.get("hashes"), dict):
            return None
        return entry

    def _store(self, key: str, entry: dict[str, Any]) -> None:
        tmp: str | None = None
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".pickle")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self._path(key))
            tmp = None
        except Exception:
            return  # a cache that cannot be written is skipped: the analysis stands on its own
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


__all__ = ["ENV_CACHE", "AnalysisCache", "cache_dir", "cache_key"]
