"""The fuzz harness in CI: a short run of every target, and every saved crasher replayed.

Both run ``python -m fuzz`` from the repository root in a subprocess, exactly as a developer would
(the harness is a tool of the repository, not part of the installed package).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _fuzz(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fuzz", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_saved_crashers_stay_fixed() -> None:
    proc = _fuzz("--replay", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failures" in proc.stdout


def test_short_fuzz_run_finds_nothing() -> None:
    proc = _fuzz("--seconds-per-target", "1", "--scenes", "12", "--seed", "20261202", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if " inputs " in ln]
    assert len(lines) == 15  # 14 parser targets and the whole-scene target all ran
    assert all(int(ln.split()[1]) > 0 for ln in lines)
