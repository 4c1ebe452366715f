"""Shared fixtures: where the upstream data lives and a scratch scene folder."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.fixture(autouse=True, scope="session")
def _private_analysis_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The suite never reads or writes the user's analysis cache (subprocesses inherit the variable)."""
    import os

    os.environ["SKDBG_CACHE_DIR"] = str(tmp_path_factory.mktemp("analysis-cache"))
