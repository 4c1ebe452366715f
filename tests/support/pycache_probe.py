"""Run a probe script in a fresh interpreter whose bytecode (and skdbg's tables beside it) live under a
prefix of the test's own, so it starts without a table and never touches the checkout's __pycache__."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def analyze_probe(table: str) -> str:
    """A probe that analyses the scene given as its argument and prints the exit code, the stats and
    path of ``skdbg.<table>`` (classcode or regexcode) and a hash of the output."""
    return f"""
import hashlib, json, sys
from click.testing import CliRunner
from skdbg import {table} as table
from skdbg.cli import main
result = CliRunner().invoke(main, ["analyze", sys.argv[1], "--format", "json", "--no-cache"])
print(json.dumps({{"exit": result.exit_code, "stats": table.stats(), "path": str(table.cache_path()),
                  "output": hashlib.sha256(result.output.encode()).hexdigest()}}))
"""


def run_probe(
    probe: str, args: list[str], prefix: Path, *, write: bool = True, python_flags: tuple[str, ...] = ()
) -> dict[str, object]:
    """The JSON object the probe prints last; bytecode (and table) writing on unless ``write`` is False."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, *python_flags, "-c", probe, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return doc
