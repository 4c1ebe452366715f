"""A fake machine for ``skdbg collect`` tests: a CANN log root, a run's working directory, a git checkout.

Every log is written by the scene builder's writers (real plog format). Three processes:

* ``OLD_FAIL`` (48213): an SK fault at 14:03:21 with op_trace (entry ``sk_entry_mix11_op_trace``), its
  device log in ``debug/device-3/`` and, from a process a day earlier that had the same pid, a stale one;
* ``NEW_FAIL`` (51234): an SK fault an hour later without op_trace (entry ``sk_entry_mix11``);
* ``CLEAN`` (52001): a run without any fault line.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.scenebuilder.examples import high_single_stream
from skdbg.scenebuilder.plog import noise_lines
from skdbg.scenebuilder.scene import SceneSpec, build_scene
from skdbg.scenebuilder.skmeta import write_lines

OLD_FAIL, NEW_FAIL, CLEAN = 48213, 51234, 52001
DEVICE = 3
HOUR = timedelta(hours=1)


@dataclass
class Machine:
    log: Path  # the CANN log root ($ASCEND_PROCESS_LOG_PATH)
    work: Path  # the run's working directory (holds sk_meta/)
    src: Path  # the model source checkout
    specs: dict[int, SceneSpec]

    def plogs(self, pid: int) -> list[Path]:
        return sorted((self.log / "debug" / "plog").glob(f"plog-{pid}_*.log"))

    def device_logs(self, pid: int) -> list[Path]:
        return sorted((self.log / "debug").glob(f"device-*/device-{pid}_*.log"))


def _shift(spec: SceneSpec, by: timedelta) -> SceneSpec:
    return replace(
        spec,
        run_start=spec.run_start + by,
        run_end=spec.run_end + by,
        build_ts=spec.build_ts + by,
        fault_ts=spec.fault_ts + by,
    )


def _stamp(ts: datetime) -> str:
    return ts.strftime("%Y%m%d%H%M%S") + f"{ts.microsecond // 1000:03d}"


def _device_log(log: Path, pid: int, start: datetime, seed: int) -> Path:
    lines = noise_lines(random.Random(seed), 6, pid=pid, start=start)
    return write_lines(log / "debug" / f"device-{DEVICE}" / f"device-{pid}_{_stamp(start)}.log", lines)


def build_machine(tmp: Path, *, git: bool = True, device_logs: bool = True) -> Machine:
    """Write the machine under ``tmp`` (see module docstring); ``git=False`` leaves the source unversioned."""
    base = high_single_stream()
    specs = {
        OLD_FAIL: replace(base, pid=OLD_FAIL),
        NEW_FAIL: _shift(replace(base, pid=NEW_FAIL, op_trace=False, debug_options={}, seed=NEW_FAIL), HOUR),
        CLEAN: _shift(
            replace(base, pid=CLEAN, fault="none", cores=[], op_trace=False, debug_options={}, seed=CLEAN),
            2 * HOUR,
        ),
    }
    log, work, src = tmp / "ascend" / "log", tmp / "work", tmp / "model"
    for pid, spec in specs.items():
        built = build_scene(spec, tmp / "built" / str(pid))
        dest = log / "debug" / "plog" / built.plog.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(built.plog, dest)
        shutil.copytree(
            built.root / "sk_meta" / str(pid), work / "sk_meta" / str(pid), copy_function=shutil.copy2
        )
        if device_logs and pid != CLEAN:
            _device_log(log, pid, spec.build_ts, pid)
    if device_logs:  # a process of the day before that had the same pid as OLD_FAIL
        _device_log(log, OLD_FAIL, specs[OLD_FAIL].build_ts - timedelta(days=1), 7)
    src.mkdir(parents=True)
    shutil.copy2(tmp / "built" / str(OLD_FAIL) / "src" / "model.py", src / "model.py")
    (src / "README.txt").write_text("model of the fake machine\n")
    if git:
        env = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
        for args in (["init", "-q"], ["add", "."], [*env, "commit", "-q", "-m", "model"]):
            subprocess.run(["git", "-C", str(src), *args], check=True, capture_output=True)
    shutil.rmtree(tmp / "built")
    return Machine(log, work, src, specs)
