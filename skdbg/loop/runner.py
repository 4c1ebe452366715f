"""Run one job as a process of its own: no shell, its own process group, a timeout, Ctrl-C, a log.

Why this shape: a re-launch must end *everything* the job started when it times out or the user
presses Ctrl-C (a training script forks workers; a shell would hide the real pid), and the exit
record (status, signal, timeout) goes into ``run.json`` where ``verify`` (V2) reads it. The job runs
in a new session (``start_new_session=True``), so its group id is its pid and a terminal's Ctrl-C
reaches only skdbg, which then ends the group: SIGTERM first, SIGKILL after a grace period.
stdout and stderr are merged, written byte for byte to ``runner.log`` and handed line by line to a
progress callback.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

#: seconds between SIGTERM and SIGKILL when the group has to be ended
GRACE_SECONDS = 5.0
#: seconds between two looks at :attr:`RunSpec.cancel` while the job runs
CANCEL_POLL = 0.1


class RunnerError(ValueError):
    """The job cannot be started (ARGV[0] missing or not executable, cwd missing): bad input, exit 3."""


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What to run and how."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    log: Path  # runner.log: the job's merged stdout/stderr
    timeout: float | None = None
    grace: float = GRACE_SECONDS
    progress: Callable[[str], None] | None = None
    #: set by another thread (the TUI's Esc) to end the job as Ctrl-C does: SIGTERM, then SIGKILL
    cancel: threading.Event | None = None
    started: Callable[[int], None] | None = None  # told the job's pid once it runs


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How the process ended. ``status`` is the exit code (None when a signal ended it)."""

    pid: int
    start: datetime
    end: datetime
    status: int | None
    signal: str | None
    timed_out: bool
    interrupted: bool

    def exit_record(self) -> dict[str, object]:
        """The ``run.json`` ``exit`` object (scene-layout.md)."""
        return {"status": self.status, "signal": self.signal, "timeout": self.timed_out}


def resolve_program(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> str:
    """ARGV[0] as the path that will be executed; :class:`RunnerError` when it does not exist or is
    not executable (checked before anything is recorded)."""
    if not argv:
        raise RunnerError("no command given: pass the job after `--` (or --sim MODEL_DIR)")
    if not cwd.is_dir():
        raise RunnerError(f"{cwd}: the working directory of the job does not exist")
    prog = argv[0]
    if os.sep in prog:
        path = Path(prog) if Path(prog).is_absolute() else cwd / prog
        if not path.is_file():
            raise RunnerError(f"{prog}: no such file (ARGV[0], relative to {cwd})")
        if not os.access(path, os.X_OK):
            raise RunnerError(f"{prog}: not executable (ARGV[0])")
        return str(path)
    found = shutil.which(prog, path=env.get("PATH", os.defpath))
    if found is None:
        raise RunnerError(f"{prog}: command not found on PATH (ARGV[0]; nothing runs through a shell)")
    return found


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _pump(stream: IO[bytes], log: IO[bytes], progress: Callable[[str], None] | None) -> None:
    """Copy the job's output to the log as it comes, and each line to the progress callback."""
    for raw in iter(stream.readline, b""):
        log.write(raw)
        log.flush()
        if progress is not None:
            progress(raw.decode("utf-8", errors="replace").rstrip("\r\n"))


def run(spec: RunSpec) -> RunOutcome:
    """Start ``spec.argv`` (no shell) in its own process group and wait for it (see module docstring)."""
    program = resolve_program(spec.argv, spec.cwd, spec.env)
    spec.log.parent.mkdir(parents=True, exist_ok=True)
    with spec.log.open("wb") as log:
        start = datetime.now()
        proc = subprocess.Popen(  # noqa: S603 — argv list, never a shell
            [program, *spec.argv[1:]],
            cwd=spec.cwd,
            env=dict(spec.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            shell=False,
        )
        assert proc.stdout is not None
        if spec.started is not None:
            spec.started(proc.pid)
        pump = threading.Thread(target=_pump, args=(proc.stdout, log, spec.progress), daemon=True)
        pump.start()
        timed_out = interrupted = False
        deadline = time.monotonic() + spec.timeout if spec.timeout is not None else None
        kill_at: float | None = None
        while True:
            due = [d for d in (deadline, kill_at) if d is not None]
            if spec.cancel is not None and not interrupted:
                due.append(time.monotonic() + CANCEL_POLL)
            wait = max(0.0, min(due) - time.monotonic()) if due else None
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if spec.cancel is not None and spec.cancel.is_set() and not interrupted:
                    # the same path as a first Ctrl-C: the attempt is recorded `interrupted`
                    interrupted = True
                    deadline = None
                    _kill_group(proc.pid, signal.SIGTERM)
                    kill_at = now + spec.grace
                elif kill_at is not None and now >= kill_at:
                    _kill_group(proc.pid, signal.SIGKILL)
                    kill_at = None
                elif deadline is not None and now >= deadline:
                    timed_out = True
                    deadline = None
                    _kill_group(proc.pid, signal.SIGTERM)
                    kill_at = now + spec.grace
            except KeyboardInterrupt:
                if interrupted:  # a second Ctrl-C: no more grace
                    _kill_group(proc.pid, signal.SIGKILL)
                    kill_at = None
                    continue
                interrupted = True
                deadline = None
                _kill_group(proc.pid, signal.SIGTERM)
                kill_at = time.monotonic() + spec.grace
        end = datetime.now()
        if _group_alive(proc.pid):
            # the leader is gone but what it started still runs (and may hold the output pipe)
            _kill_group(proc.pid, signal.SIGTERM)
            pump.join(spec.grace)
            _kill_group(proc.pid, signal.SIGKILL)
        pump.join()
        proc.stdout.close()
    rc = proc.returncode
    return RunOutcome(
        pid=proc.pid,
        start=start,
        end=end,
        status=rc if rc >= 0 else None,
        signal=_signal_name(-rc) if rc < 0 else None,
        timed_out=timed_out,
        interrupted=interrupted,
    )


__all__ = ["GRACE_SECONDS", "RunOutcome", "RunSpec", "RunnerError", "resolve_program", "run"]
