"""``analyze --format json --no-cache`` loads only what the analysis uses (issue 18: analyze CPU).

Why: every module imported on the analyze path costs its class creation (Python 3.11 compiles each
dataclass method one by one) on every first run. The result cache (its snapshot classes, pickle,
platformdirs), the glossary (``skdbg explain``'s JSON package data) and the wait-for graph of a hang
(six dataclasses) are used only on their own paths: a ``--no-cache`` analysis of a scene without a
bystander core must not load them. Each probe runs in a fresh interpreter so modules imported by other
tests cannot hide a violation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENES = REPO / "examples" / "scenes"
WATCHED = ("skdbg.triage.cache", "platformdirs", "skdbg.glossary", "skdbg.triage.waitfor")

_PROBE = """
import json, sys
from click.testing import CliRunner
from skdbg.cli import main
watched = json.loads(sys.argv[1])
result = CliRunner().invoke(main, sys.argv[2:])
print(json.dumps({"exit": result.exit_code, "output": result.output[:300],
                  "loaded": sorted(m for m in watched if m in sys.modules)}))
"""


def _loaded(args: list[str], cache_dir: Path) -> list[str]:
    env = {**os.environ, "SKDBG_CACHE_DIR": str(cache_dir)}  # never the user's cache
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(WATCHED), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
    )
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0, doc["output"]
    loaded: list[str] = doc["loaded"]
    return loaded


@pytest.mark.parametrize("scene", ["high-single-stream", "non-sk-fault", "event-bound-split"])
def test_analyze_json_no_cache_loads_no_cache_glossary_or_wait_for(scene: str, tmp_path: Path) -> None:
    args = ["analyze", str(SCENES / scene), "--format", "json", "--no-cache"]
    assert _loaded(args, tmp_path) == []


def test_analyze_with_the_cache_loads_the_cache(tmp_path: Path) -> None:
    """The probe's counterpart: without ``--no-cache`` the cache module is loaded (and used)."""
    args = ["analyze", str(SCENES / "high-single-stream"), "--format", "json"]
    assert "skdbg.triage.cache" in _loaded(args, tmp_path)
    assert any(tmp_path.iterdir())  # an entry was stored
