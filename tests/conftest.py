"""Shared fixtures: where the upstream data lives and a scratch scene folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

#: No test is timed (performance lives in bench/): hypothesis's per-example deadline would make a
#: property test fail on a loaded machine (seen under `-n 2` beside a benchmark), so it is off for all.
settings.register_profile("skdbg", deadline=None)
settings.load_profile("skdbg")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
UPSTREAM = DATA / "upstream"


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The real upstream data copied into the repository (each folder has its SOURCE.txt)."""
    return UPSTREAM


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _private_analysis_cache(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own (not yet created) analysis cache directory: the suite never touches the
    user's cache, and no test is served a verdict another test computed (subprocesses inherit it)."""
    import hashlib

    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "analysis-cache" / name))


@pytest.fixture(autouse=True, scope="session")
def _no_user_analysis_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Session-wide default for fixtures wider than one test (they run before the per-test directory)."""
    import os

    os.environ["SKDBG_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "analysis-cache" / "shared")


@pytest.fixture(autouse=True)
def _allocator_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that reads one scene also tunes the C allocator of its process (skdbg.heap), which no
    call puts back: a CLI test run in this process leaves it alone (tests/test_heap.py runs the tuning
    in processes of its own; tests/test_cli.py checks which commands ask for it)."""
    import skdbg.cli

    monkeypatch.setattr(skdbg.cli, "keep_freed_memory", lambda: None)


@pytest.fixture(autouse=True)
def _interpreter_tuning_restored() -> Iterator[None]:
    """The batch commands tune the collector and the thread switch interval for their process
    (skdbg.cli); a CLI test run in this process must not leave that tuning to the tests after it."""
    import gc
    import sys

    thresholds, interval, enabled = gc.get_threshold(), sys.getswitchinterval(), gc.isenabled()
    yield
    gc.set_threshold(*thresholds)
    sys.setswitchinterval(interval)
    if enabled:
        gc.enable()  # a one-scene command pauses the collector; one left off must not hide that
