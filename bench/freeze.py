"""Benchmark: ``skdbg analyze SCENE --session ID`` (the scene frozen into a ledger) vs a durable ``cp -r``.

Run as ``python bench/freeze.py [--plog-mb 200] [--kernels 2000] [--samples 5] [--dir DIR] [--keep]``. The
scene is ``bench/analyze.py``'s (one SK of ``--kernels`` children, each with its kernel ELF, a plog padded
with noise to ``--plog-mb``), written once with the project's scene builder and read once to warm the page
cache. Everything is written under ``--dir`` (default: the system's temporary folder): the freeze's cost is
the disk's, so give a folder on the disk you care about. The script prints that folder's file system type
and warns when it is ``tmpfs`` (memory: a flush there does nothing, and the figures mean little).

Timed, each ``--samples`` times, alternated (wall time, min and median printed):

* **fresh store**: ``skdbg analyze SCENE --session ID --session-dir DIR --format json --no-cache`` into a
  ledger whose object store is empty: the analysis, then every file of the scene copied into the store
  and flushed to the disk, the report in both languages, the ledger's transaction;
* **store holding the files**: the same into a ledger that froze the scene once already (a scene frozen
  again; the kernel ELFs every attempt of a relaunch loop share): the files are hashed, not copied;
* **analysis alone**: ``skdbg analyze SCENE --format json --no-cache``, what the freeze adds to;
* **anchor**: ``cp -r SCENE DEST`` then ``sync -f DEST`` (coreutils 8.24 or later: the file system of
  ``DEST`` flushed); where ``sync -f`` is refused (older coreutils, BSD, macOS), a plain ``sync``, and
  the script says so. A durable copy of the same bytes by the system's own tools.

Every timed step starts after a ``sync``, so no sample waits for the previous one's writes. Printed:
each one's min and median, and the two freezes' ratios to the anchor and what they add to the analysis
alone. No target (issue 18 sets none for the freeze); the script exits non-zero when a command fails or
a freeze does not report the attempt it recorded. Ledgers live under ``--dir``, never the user's; the
result cache is off. Children run with bytecode caches on, as a user's install has them (see
``benchenv.py``).
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
from skdbg.sessions.location import filesystem_type, read_mounts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import all_files, pad_plog, scene_spec, warm  # noqa: E402  (sibling modules)
from benchenv import NOTE, prime, user_env  # noqa: E402

ANCHOR = "anchor: cp -r + flush"


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=user_env(), capture_output=True, text=True, check=False)


def _gone(folder: Path) -> None:
    """Remove ``folder`` (its read-only objects too); a failure ends the benchmark (a "fresh" store that is
    not empty, or a copy into an existing folder, would measure something else)."""
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        raise SystemExit(f"could not remove {folder}")


def sync_takes_a_folder(folder: Path) -> bool:
    """The system's ``sync`` flushes one file system (``sync -f FOLDER``: coreutils 8.24+); when not, the
    anchor uses a plain ``sync`` (every file system), and says so."""
    if subprocess.run(["sync", "-f", str(folder)], capture_output=True, check=False).returncode == 0:
        return True
    print("note: `sync -f` is refused here; the anchor flushes with a plain `sync` (every file system)")
    return False


def new_session(skdbg: str, ledger: Path) -> str:
    """A new session in ``ledger`` (created when absent): its id."""
    done = _run([skdbg, "session", "new", "--session-dir", str(ledger)])
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"skdbg session new failed: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


def timed(argv: list[str], *, expect_on_stderr: str | None = None) -> float:
    """Wall time of ``argv`` (stdout dropped), started after a ``sync`` (the previous sample's writes are
    not this one's to wait for); a failure, or stderr without ``expect_on_stderr``, ends the benchmark."""
    subprocess.run(["sync"], check=False)
    t = time.perf_counter()
    done = subprocess.run(argv, env=user_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} … exited {done.returncode}: {done.stderr.strip()}")
    if expect_on_stderr is not None and expect_on_stderr not in done.stderr:
        raise SystemExit(f"{' '.join(argv[:3])} … did not say {expect_on_stderr!r}: {done.stderr.strip()}")
    return elapsed


def freeze_once(skdbg: str, scene: Path, ledger: Path, *, fresh: bool) -> float:
    """One timed freeze of ``scene`` into ``ledger`` (removed first when ``fresh``); it must report the
    attempt it recorded."""
    if fresh:
        _gone(ledger)
    sid = new_session(skdbg, ledger)
    argv = [skdbg, "analyze", str(scene), "--session", sid, "--session-dir", str(ledger), "--format", "json"]
    return timed([*argv, "--no-cache"], expect_on_stderr=f"in session {sid}")


def copy_once(scene: Path, dest: Path, per_folder: bool) -> float:
    """The anchor: ``cp -r`` of the scene, then the destination's file system flushed (``sync -f DEST``,
    or a plain ``sync`` where ``per_folder`` is False)."""
    _gone(dest)
    subprocess.run(["sync"], check=False)
    t = time.perf_counter()
    subprocess.run(["cp", "-r", str(scene), str(dest)], check=True)
    subprocess.run(["sync", "-f", str(dest)] if per_folder else ["sync"], check=True)
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
    ap.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where the scene, ledgers and copies go (default: the temp folder)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the scene and the ledgers and print where")
    args = ap.parse_args()
    # this interpreter's own console script first (the install being measured), then PATH's
    beside = Path(sys.executable).with_name("skdbg")
    skdbg = str(beside) if beside.exists() else shutil.which("skdbg") or ""
    if not skdbg or shutil.which("cp") is None or shutil.which("sync") is None:
        print("needs the `skdbg` console script, `cp` and `sync`", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-bench-freeze-", dir=args.dir))
    os.environ["SKDBG_CACHE_DIR"] = str(tmp / "cache")  # never the user's cache (and --no-cache anyway)
    try:
        print(NOTE)
        fs = filesystem_type(tmp.resolve(), read_mounts()) or "unknown"
        print(f"folder: {tmp} (file system {fs})")
        if fs == "tmpfs":
            print("warning: tmpfs is memory: a flush does nothing there; give --dir a folder on a disk")
        scene = tmp / "scene"
        spec, _ = scene_spec(args.kernels)
        built = build_scene(spec, scene)
        pad_plog(built.plog, int(args.plog_mb * 1e6))
        files = all_files(scene)
        print(f"scene: {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB in {len(files)} files")
        per_folder = sync_takes_a_folder(tmp)
        warm(files)
        fresh, again = tmp / "ledger-fresh", tmp / "ledger-again"
        prime([skdbg, "analyze", str(scene), "--format", "json", "--no-cache"])
        freeze_once(skdbg, scene, again, fresh=True)  # fills the store the "again" runs find
        alone = [skdbg, "analyze", str(scene), "--format", "json", "--no-cache"]
        runs: dict[str, Callable[[], float]] = {
            "fresh store": lambda: freeze_once(skdbg, scene, fresh, fresh=True),
            "store holding the files": lambda: freeze_once(skdbg, scene, again, fresh=False),
            "analysis alone": lambda: timed(alone),
            ANCHOR: lambda: copy_once(scene, tmp / "copy", per_folder),
        }
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.samples):
            for name, run in runs.items():
                samples[name].append(run())
        print(f"anchor's flush: {'sync -f DEST' if per_folder else 'sync'}")
        medians = {name: _line(name, values) for name, values in samples.items()}
        for name in ("fresh store", "store holding the files"):
            print(
                f"{name}: {medians[name] / medians[ANCHOR]:.2f}x the durable copy, "
                f"{medians[name] - medians['analysis alone']:+.2f} s over the analysis alone (medians; no target)"
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
