"""Benchmark aid: what a first ``skdbg analyze`` of the 200 MB bench scene waits for.

Run as ``python bench/critical_path.py [--plog-mb 200] [--kernels 2000] [--samples 7] [--keep]``. The scene
is ``bench/analyze.py``'s (``scene_spec`` + ``pad_plog``), read once to warm the page cache. Each sample is
one whole ``skdbg analyze SCENE --format json --no-cache`` process with a few functions wrapped to stamp
the moment they return, on the clock both processes share (``time.perf_counter``, monotonic):

* in the parent: sk_meta parsed (``read_sk_meta``), the work that reads no plog line done
  (``prepare_late_stages``: from there on it waits for the plogs), the last batch of the plog scan filed,
  the plog copy of the exception block derived, the stages done and the output written;
* in the plog scan's child (forked where the analysis forks it): numpy loaded (the standby child ready),
  the plog scan done, its share of the other work (the artifacts' SHA-256) done.

It prints the median of each stamp, in ms from the start of the wrapped run (the interpreter's own
start-up, ~20 ms, comes before it), and per sample which side the parent waited for when it came to the
plogs: its own work (it was ready after the child's scan had ended: the parent is the run's critical
path, and only its CPU counts) or the child's scan (it was ready first). No target: it says where time
goes, so a change is aimed at the side the run waits for. With ``SKDBG_NO_FORK=1`` (or on one CPU) there
is no child and the child's stamps are missing.

Why stamps and not a profile: both processes run at once on two CPUs, and a sampling profiler slows the
one it samples; a wrapper around a handful of calls costs microseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import all_files, pad_plog, scene_spec, warm  # noqa: E402  (sibling modules)
from benchenv import NOTE, WRAP_ON_LOAD, prime, user_env  # noqa: E402

from skdbg.scenebuilder.scene import build_scene  # noqa: E402

#: (module, function or ``Class.method``, stamp name, side): the wrapped calls, each stamped when it returns
#: (a generator when it is exhausted); the child's stamps come from a child forked with the wrappers in place
STAMPS = (
    ("skdbg.parsers.scan_child", "_get_ready", "numpy loaded (standby ready)", "child"),
    ("skdbg.parsers.plog_fork", "scan_files", "plog scan done", "child"),
    ("skdbg.parsers.plog_fork", "_do_share", "its share of the hashing done", "child"),
    ("skdbg.triage.engine", "read_sk_meta", "sk_meta parsed", "parent"),
    ("skdbg.triage.engine", "prepare_late_stages", "ready for the plogs", "parent"),
    ("skdbg.parsers.plog_fork", "_unpack_items", "last plog batch filed", "parent"),
    ("skdbg.parsers.sk_copies", "derive_plog_copy", "plog copy derived", "parent"),
    ("skdbg.triage.engine", "analyze_staged", "stages done", "parent"),
)

#: the wrapped run: ``python -c _CHILD SCENE STAMPS``; the parent's stamps come as one ``STAMPS {json}``
#: line on stderr at its end, each child stamp as a ``STAMP name ms`` line as it happens (the child ends
#: without flushing Python's buffers: written with ``os.write``)
_CHILD = (
    """
import functools, importlib.util, inspect, json, os, sys, time
t0 = time.perf_counter()
main_pid = os.getpid()
stamps = {}

def stamp(name):
    ms = (time.perf_counter() - t0) * 1000
    if os.getpid() == main_pid:
        stamps[name] = ms  # the last return counts (the last batch filed)
    else:
        os.write(2, f"STAMP {json.dumps(name)} {ms:.1f}\\n".encode())

def wrap(module, attr, name):
    *path, attr = attr.split(".")  # a method: "Class.method"
    for p in path:
        module = getattr(module, p)
    f = getattr(module, attr)
    if inspect.isgeneratorfunction(f):
        def stamped(*a, __f=f, __name=name, **k):
            yield from __f(*a, **k)
            stamp(__name)
    else:
        def stamped(*a, __f=f, __name=name, **k):
            try:
                return __f(*a, **k)
            finally:
                stamp(__name)
    setattr(module, attr, functools.wraps(f)(stamped))

pending = {}
for mod, attr, name, _side in json.loads(sys.argv[2]):
    pending.setdefault(mod, []).append((attr, name))

"""
    + WRAP_ON_LOAD
    + """sys.argv = ["skdbg", "analyze", sys.argv[1], "--format", "json", "--no-cache"]
import skdbg.cli as cli
try:
    cli.main(standalone_mode=False)
finally:
    stamp("output written")
    sys.stderr.write("STAMPS " + json.dumps(stamps) + "\\n")
"""
)

#: the parent's stamp that says it came to the plogs, and the child's that says they were scanned
_READY, _SCANNED = "ready for the plogs", "plog scan done"


def one_run(root: Path) -> dict[str, float]:
    """The stamps of one wrapped ``analyze`` of ``root`` (ms from the wrapped run's start)."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), json.dumps(STAMPS)],
        capture_output=True,
        check=False,
        env=user_env(),
    )
    out: dict[str, float] = {}
    for line in proc.stderr.decode(errors="replace").splitlines():
        if line.startswith("STAMP "):
            name, _, ms = line[len("STAMP ") :].rpartition(" ")
            out[json.loads(name)] = float(ms)
        elif line.startswith("STAMPS "):
            out.update(json.loads(line[len("STAMPS ") :]))
    if proc.returncode != 0 or "output written" not in out:
        raise RuntimeError(proc.stderr.decode(errors="replace"))
    return out


def report(runs: list[dict[str, float]]) -> None:
    """The median of each stamp in time order, then which side the parent waited for in each run."""
    sides = {name: side for _, _, name, side in STAMPS} | {"output written": "parent"}
    names = sorted(
        {n for r in runs for n in r}, key=lambda n: statistics.median(r[n] for r in runs if n in r)
    )
    print(f"stamps of a first run, warm (median of {len(runs)}; ms from the wrapped run's start):")
    for n in names:
        got = [r[n] for r in runs if n in r]
        print(f"  {sides.get(n, '?'):6} {n:32} {statistics.median(got):7.1f}  (min {min(got):.1f})")
    parent_bound = []
    child_bound = []
    for r in runs:
        if _READY in r and _SCANNED in r:
            margin = r[_READY] - r[_SCANNED]
            (parent_bound if margin > 0 else child_bound).append(abs(margin))
    if not parent_bound and not child_bound:
        print("no plog scan child in these runs (one CPU, SKDBG_NO_FORK or small plogs)")
        return
    if parent_bound:
        print(
            f"waited for its own work in {len(parent_bound)} of {len(runs)} runs: ready for the plogs "
            f"{statistics.median(parent_bound):.0f} ms (median) after the child's scan ended"
        )
    if child_bound:
        print(
            f"waited for the child's scan in {len(child_bound)} of {len(runs)} runs: ready for the plogs "
            f"{statistics.median(child_bound):.0f} ms (median) before it ended"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plog-mb", type=float, default=200.0)
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=7, help="wrapped runs (medians printed)")
    ap.add_argument("--keep", action="store_true", help="keep the generated scene and print its path")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-bench-critical-"))
    root = tmp / "scene"
    os.environ["SKDBG_CACHE_DIR"] = str(tmp / "cache")  # never the user's cache (and --no-cache anyway)
    try:
        print(NOTE)
        spec, _ = scene_spec(args.kernels)
        built = build_scene(spec, root)
        pad_plog(built.plog, int(args.plog_mb * 1e6))
        files = all_files(root)
        warm(files)
        prime([sys.executable, "-m", "skdbg.cli", "analyze", str(root), "--format", "json", "--no-cache"])
        runs = []
        for _ in range(args.samples):
            warm(files)
            runs.append(one_run(root))
        print(
            f"scene: {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB; load average {os.getloadavg()[0]:.2f}"
        )
        report(runs)
        return 0
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
