"""Benchmark: ``skdbg analyze SCENE --session ID`` (the scene frozen into a ledger) vs a durable ``cp -r``.

Run as ``python bench/freeze.py [--plog-mb 200] [--kernels 2000] [--samples 5] [--keep]``. The scene is
``bench/analyze.py``'s (one SK of ``--kernels`` children, a plog padded with noise to ``--plog-mb``,
2,000 kernel ELFs), written once with the project's scene builder and read once to warm the page cache.

Timed, each ``--samples`` times, alternated (wall time, min and median printed):

* **fresh store**: ``skdbg analyze SCENE --session ID --session-dir DIR --format json --no-cache`` into a
  ledger whose object store is empty: the analysis, then every file of the scene copied into the store
  and flushed to the disk, the report in both languages, the ledger's transaction;
* **store holding the files**: the same into a ledger that froze the scene once already (a scene frozen
  again; the kernel ELFs every attempt of a relaunch loop shares): the files are hashed, not copied;
* **analysis alone**: ``skdbg analyze SCENE --format json --no-cache``, what the freeze adds to;
* **anchor**: ``cp -r SCENE DEST`` then ``sync -f DEST`` (coreutils: the file system of ``DEST`` flushed),
  a durable copy of the same bytes by the system's own tools.

Printed: each one's min and median, and the ratios of the two freezes to the anchor and to the analysis
alone. No target (issue 18 sets none for the freeze); the script exits non-zero when a freeze fails or
records no attempt. Ledgers live in a temporary folder, never the user's (``--session-dir``); the result
cache is off. Children run with bytecode caches on, as a user's install has them (see ``benchenv.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skdbg.scenebuilder.scene import build_scene

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import all_files, pad_plog, scene_spec, warm  # noqa: E402  (sibling modules)
from benchenv import NOTE, prime, user_env  # noqa: E402


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=user_env(), capture_output=True, text=True, check=False)


def new_session(skdbg: str, ledger: Path) -> str:
    """A new session in ``ledger`` (created when absent): its id."""
    done = _run([skdbg, "session", "new", "--session-dir", str(ledger)])
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"skdbg session new failed: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


def timed(argv: list[str]) -> float:
    """Wall time of ``argv`` (stdout dropped); a failure ends the benchmark with its message."""
    t = time.perf_counter()
    done = subprocess.run(argv, env=user_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} … exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def freeze_once(skdbg: str, scene: Path, ledger: Path, *, fresh: bool) -> float:
    """One timed freeze of ``scene`` into ``ledger`` (emptied first when ``fresh``)."""
    if fresh:
        shutil.rmtree(ledger, ignore_errors=True)
    sid = new_session(skdbg, ledger)
    subprocess.run(["sync"], check=False)  # the previous sample's writes are not this one's to wait for
    return timed(
        [
            skdbg,
            "analyze",
            str(scene),
            "--session",
            sid,
            "--session-dir",
            str(ledger),
            "--format",
            "json",
            "--no-cache",
        ]
    )


def copy_once(scene: Path, dest: Path) -> float:
    """The anchor: ``cp -r`` of the scene and a flush of the destination's file system."""
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(["sync"], check=False)
    t = time.perf_counter()
    subprocess.run(["cp", "-r", str(scene), str(dest)], check=True)
    subprocess.run(["sync", "-f", str(dest)], check=True)
    return time.perf_counter() - t


def _line(label: str, samples: list[float]) -> float:
    median = statistics.median(samples)
    print(f"{label:<28} min {min(samples):6.2f} s median {median:6.2f} s")
    return median


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plog-mb", type=float, default=200.0)
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=5, help="timed runs of each (min and median printed)")
    ap.add_argument("--keep", action="store_true", help="keep the scene and the ledgers and print where")
    args = ap.parse_args()
    skdbg = shutil.which("skdbg") or str(Path(sys.executable).with_name("skdbg"))
    if not Path(skdbg).exists() or shutil.which("cp") is None or shutil.which("sync") is None:
        print("needs the `skdbg` console script, `cp` and `sync` on PATH", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-bench-freeze-"))
    os.environ["SKDBG_CACHE_DIR"] = str(tmp / "cache")  # never the user's cache (and --no-cache anyway)
    try:
        print(NOTE)
        scene = tmp / "scene"
        spec, _ = scene_spec(args.kernels)
        built = build_scene(spec, scene)
        pad_plog(built.plog, int(args.plog_mb * 1e6))
        files = all_files(scene)
        print(f"scene: {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB in {len(files)} files")
        warm(files)
        fresh, again = tmp / "ledger-fresh", tmp / "ledger-again"
        prime([skdbg, "analyze", str(scene), "--format", "json", "--no-cache"])
        freeze_once(skdbg, scene, again, fresh=True)  # fills the store the "again" runs find
        runs: dict[str, Callable[[], float]] = {
            "fresh store": lambda: freeze_once(skdbg, scene, fresh, fresh=True),
            "store holding the files": lambda: freeze_once(skdbg, scene, again, fresh=False),
            "analysis alone": lambda: timed([skdbg, "analyze", str(scene), "--format", "json", "--no-cache"]),
            "anchor: cp -r + sync -f": lambda: copy_once(scene, tmp / "copy"),
        }
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.samples):
            for name, run in runs.items():
                samples[name].append(run())
        medians = {name: _line(name, values) for name, values in samples.items()}
        anchor, alone = medians["anchor: cp -r + sync -f"], medians["analysis alone"]
        for name in ("fresh store", "store holding the files"):
            print(
                f"{name}: {medians[name] / anchor:.2f}x the durable copy, "
                f"{medians[name] - alone:+.2f} s over the analysis alone (medians; no target)"
            )
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
