"""Shared fixtures: where the upstream data lives and a scratch scene folder."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream"


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The upstream fixtures folder (shared/fixtures/upstream beside the checkout)."""
    if not UPSTREAM.is_dir():
        pytest.fail(f"upstream fixtures not found at {UPSTREAM}; CI lays shared/ beside the clone")
    return UPSTREAM


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
