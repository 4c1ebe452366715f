"""Analyse two scenes at once and compare them (``skdbg diff``).

Why a second process: one analysis is mostly parsing in Python (the GIL is held), so two threads
would take as long as two analyses in a row. Scene A is analysed in one forked worker while scene B
is analysed here; the worker returns plain facts (picklable), never parser objects. The worker is
started before this process starts any thread (the analysis hashes files in a thread pool), so
forking is safe; where fork is unavailable, or another thread runs, the spawn start method is used.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from skdbg.diffing.compare import DiffResult, compare
from skdbg.diffing.facts import SceneFacts, scene_facts
from skdbg.parsers.common import ParseError
from skdbg.triage.context import check_inputs, open_context
from skdbg.triage.engine import analyze_context


class DiffInputError(ValueError):
    """A scene that cannot be compared: missing, not a scene, malformed (CLI exit 3)."""


def facts_of(path: str | os.PathLike[str], *, use_cache: bool = True, label: str | None = None) -> SceneFacts:
    """Open, analyse (through the result cache unless told not to) and reduce one scene to facts."""
    ctx = open_context(path)
    check_inputs(ctx)
    if use_cache:
        from skdbg.triage.cache import AnalysisCache

        analysis = AnalysisCache().analyze(ctx, analyze_context)
    else:
        analysis = analyze_context(ctx)
    return scene_facts(ctx, analysis, label if label is not None else str(path))


def _worker(path: str, use_cache: bool, label: str) -> SceneFacts | str:
    """Facts, or the one-line message of bad input (exceptions of our own never cross as pickles)."""
    try:
        return facts_of(path, use_cache=use_cache, label=label)
    except (ParseError, OSError) as exc:
        return str(exc)


def _check(result: SceneFacts | str) -> SceneFacts:
    if isinstance(result, str):
        raise DiffInputError(result)
    return result


def _start_method() -> str:
    """``fork`` when this process runs no other thread (cheap: the imports are shared), else ``spawn``.

    A thread of an earlier analysis (``verify --diff`` analysed both scenes first) could hold a lock at
    the moment of the fork and leave the child waiting on it forever; spawn starts a clean interpreter."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def diff_scenes(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    use_cache: bool = True,
    parallel: bool = True,
) -> DiffResult:
    """Compare scene ``a`` with scene ``b``; raises :class:`DiffInputError` naming the bad path."""
    la, lb = str(a), str(b)
    if not parallel:
        return compare(_check(_worker(la, use_cache, la)), _check(_worker(str(b), use_cache, lb)))
    mp = multiprocessing.get_context(_start_method())
    with ProcessPoolExecutor(max_workers=1, mp_context=mp) as pool:
        fut = pool.submit(_worker, str(Path(a)), use_cache, la)
        local = _worker(str(Path(b)), use_cache, lb)
        remote = fut.result()
    return compare(_check(remote), _check(local))


__all__ = ["DiffInputError", "diff_scenes", "facts_of"]
