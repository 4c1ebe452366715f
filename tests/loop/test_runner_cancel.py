"""The runner's cancellation from another thread (the TUI's Esc): the job's whole process group is
ended the way a first Ctrl-C ends it, and the outcome says `interrupted`."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from skdbg.loop.runner import RunSpec, run


def test_cancel_event_ends_the_process_group_and_reports_interrupted(tmp_path: Path) -> None:
    # the job starts a child of its own; both must be gone when run() returns
    script = tmp_path / "job.py"
    marker = tmp_path / "child.pid"
    script.write_text(
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    cancel = threading.Event()
    started: list[int] = []
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if line == "ready":
            cancel.set()

    t0 = time.monotonic()
    outcome = run(
        RunSpec(
            argv=[sys.executable, str(script)],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            log=tmp_path / "runner.log",
            grace=2.0,
            progress=progress,
            cancel=cancel,
            started=started.append,
        )
    )
    assert time.monotonic() - t0 < 30
    assert outcome.interrupted and not outcome.timed_out
    assert outcome.signal == "SIGTERM" and outcome.status is None
    assert started == [outcome.pid] and lines == ["ready"]
    child = int(marker.read_text())
    # the group got SIGTERM before run() returned; the kernel may still be tearing the grandchild
    # down (state R while it exits): it must be gone, or a zombie, within a few seconds
    deadline = time.monotonic() + 5
    status = ""
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except FileNotFoundError:
            return
        if "zombie" in status or "Z (" in status:
            return
        time.sleep(0.05)
    raise AssertionError(f"the job's child {child} still runs after the cancel: {status[:200]}")


def test_without_cancel_the_job_runs_to_its_end(tmp_path: Path) -> None:
    outcome = run(
        RunSpec(
            argv=[sys.executable, "-c", "print('done')"],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            log=tmp_path / "runner.log",
            cancel=threading.Event(),
        )
    )
    assert (outcome.status, outcome.interrupted) == (0, False)
    assert (tmp_path / "runner.log").read_text() == "done\n"
