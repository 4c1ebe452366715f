"""``python -m fuzz``: run the fuzz targets for a while and report inputs, failures and speed.

Short run (CI): ``python -m fuzz --seconds-per-target 2 --scenes 20``.
Long run: ``python -m fuzz --minutes 30`` (time split evenly over the parser targets, then scenes).
Exit status 1 when any input broke the oracle; each such input is saved under ``fuzz/crashers/``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from fuzz.mutate import bounded_mutate as mutate
from fuzz.oracle import CRASHERS, Failure, bounded, save_crasher
from fuzz.scenes import run_recipe, run_scene_case
from fuzz.targets import TARGETS, run_target


def _fuzz_target(name: str, seconds: float, rng: random.Random, work: Path) -> tuple[int, list[Failure]]:
    target = TARGETS[name]
    seeds = [p.read_bytes() for p in target.seed_files()]
    failures: list[Failure] = []
    inputs = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = mutate(rng.choice(seeds), rng)
        inputs += 1
        failure = bounded(name, lambda d=data: run_target(target, d, work))  # type: ignore[misc]
        if failure is not None:
            failure.path = save_crasher(name, data, failure)
            failures.append(failure)
    return inputs, failures


def _fuzz_scenes(count: int, seconds: float, rng: random.Random, work: Path) -> tuple[int, list[Failure]]:
    failures: list[Failure] = []
    done = 0
    end = time.monotonic() + seconds
    while done < count or (count == 0 and time.monotonic() < end):
        if count and done >= count:
            break
        done += 1
        failure = run_scene_case(rng, work / f"case{done % 4}")
        if failure is not None:
            failures.append(failure)
    return done, failures


def replay() -> int:
    """Run every saved crasher again; each must now pass the oracle (the regression suite)."""
    failed = 0
    count = 0
    with tempfile.TemporaryDirectory(prefix="skdbg-fuzz-") as tmp:
        work = Path(tmp)
        for folder in sorted(p for p in CRASHERS.iterdir() if p.is_dir()) if CRASHERS.is_dir() else []:
            for case in sorted(folder.iterdir()):
                if folder.name == "scene" and case.suffix == ".json":
                    recipe = json.loads(case.read_text(encoding="utf-8"))
                    failure = bounded("scene", lambda r=recipe: _raise_on(run_recipe(r, work / "replay")))  # type: ignore[misc]
                elif case.suffix == ".bin" and folder.name in TARGETS:
                    data = case.read_bytes()
                    failure = bounded(
                        folder.name, lambda d=data, t=TARGETS[folder.name]: run_target(t, d, work)
                    )  # type: ignore[misc]
                else:
                    continue
                count += 1
                if failure is not None:
                    failed += 1
                    print(f"{folder.name}/{case.name}: {failure.summary()}", flush=True)
    print(f"replay: {count} saved inputs, {failed} failures", flush=True)
    return 1 if failed else 0


def _raise_on(failure: Failure | None) -> None:
    if failure is not None:
        raise AssertionError(failure.summary())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--target", action="append", choices=sorted(TARGETS) + ["scene"], help="only these targets"
    )
    ap.add_argument("--seconds-per-target", type=float, default=None, help="time per parser target")
    ap.add_argument("--minutes", type=float, default=None, help="total time, split over the parser targets")
    ap.add_argument("--scenes", type=int, default=None, help="whole-scene cases to run (0: none)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time-based, printed)")
    ap.add_argument("--replay", action="store_true", help="only re-run the saved crashers (regression mode)")
    args = ap.parse_args(argv)
    if args.replay:
        return replay()

    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    names = [n for n in (args.target or sorted(TARGETS)) if n != "scene"]
    scenes = args.scenes if args.scenes is not None else (200 if args.minutes else 20)
    if args.target and "scene" not in args.target:
        scenes = 0
    if args.target and args.target == ["scene"]:
        names = []
    if args.minutes is not None:
        per = args.minutes * 60 * 0.8 / max(1, len(names))
    else:
        per = args.seconds_per_target if args.seconds_per_target is not None else 2.0

    print(f"fuzz: seed {seed}; {len(names)} parser targets × {per:.1f} s; {scenes} scene cases", flush=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="skdbg-fuzz-") as tmp:
        work = Path(tmp)
        for name in names:
            t0 = time.monotonic()
            inputs, failures = _fuzz_target(name, per, rng, work)
            rate = inputs / max(1e-9, time.monotonic() - t0)
            failed += len(failures)
            print(f"{name:18} {inputs:9d} inputs {rate:9.0f}/s {len(failures):4d} failures", flush=True)
            for f in failures[:5]:
                print(f"    {f.summary()}", flush=True)
        if scenes:
            t0 = time.monotonic()
            n, failures = _fuzz_scenes(scenes, 0.0, rng, work)
            rate = n / max(1e-9, time.monotonic() - t0)
            failed += len(failures)
            print(f"{'scene':18} {n:9d} inputs {rate:9.1f}/s {len(failures):4d} failures", flush=True)
            for f in failures[:5]:
                print(f"    {f.summary()}", flush=True)
    print(f"fuzz: {failed} failures", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
