"""Benchmark aid: what a first ``skdbg analyze`` of the 200 MB bench scene waits for.

Run as ``python bench/critical_path.py [--plog-mb 200] [--kernels 2000] [--samples 7] [--keep]``. The scene
is ``bench/analyze.py``'s (``scene_spec`` + ``pad_plog``), read once to warm the page cache. Each sample is
one whole ``skdbg analyze SCENE --format json --no-cache`` process with a few functions wrapped to stamp
the moment they return, on the clock both processes share (``time.perf_counter``, monotonic):

* in the parent: sk_meta parsed (``read_sk_meta``), the work that reads no plog line done
  (``prepare_late_stages``: its main thread then asks for the plogs), the last batch of the plog scan
  received from the child (its records made), the plogs filed (every file's lines filed and sorted), the
  plog copy of the exception block derived, the stages done and the output written;
* in the plog scan's child (forked where the analysis forks it): numpy loaded (the standby child ready),
  the plog scan done, its share of the other work done (artifacts' SHA-256, logs read ahead).

It prints the median and the minimum of each stamp, in ms from the start of the wrapped run (the
interpreter's start-up, ~20 ms, and the script's own imports come before it), then, over the runs, what
the parent's main thread waited for when it asked for the plogs, with the median margin: nothing, in the
runs where the plogs were filed before it was ready (the parent's own CPU is then the run's critical
path), or the plogs (the child's scan and their filing) in the others. No target: it says where time
goes, so a change is aimed at the side the run waits for. With ``SKDBG_NO_FORK=1`` (or on one CPU) there
is no child: its stamps, and the batches received, are missing (listed as never stamped).

The wrapped runs start in the scene's temporary folder: ``python -c`` puts the folder it starts in first
on ``sys.path``, and from a source checkout the checkout would be imported instead of the installed skdbg.

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
#: (a generator when it is exhausted) in the process of its side; the child's stamps come from a child forked
#: with the wrappers in place
STAMPS = (
    ("skdbg.parsers.scan_child", "_get_ready", "numpy loaded (standby ready)", "child"),
    ("skdbg.parsers.plog_fork", "scan_files", "plog scan done", "child"),
    ("skdbg.parsers.plog_fork", "_do_share", "its share of the other work done", "child"),
    ("skdbg.triage.engine", "read_sk_meta", "sk_meta parsed", "parent"),
    ("skdbg.triage.engine", "prepare_late_stages", "ready for the plogs", "parent"),
    ("skdbg.parsers.plog_fork", "_unpack_items", "last plog batch received", "parent"),
    ("skdbg.parsers.evidence", "Evidence._load_plogs", "plogs filed", "parent"),
    ("skdbg.parsers.sk_copies", "derive_plog_copy", "plog copy derived", "parent"),
    ("skdbg.triage.engine", "analyze_staged", "stages done", "parent"),
)

#: the wrapped run: ``python -c _CHILD SCENE STAMPS``; the parent's stamps come as one ``STAMPS {json}``
#: line on stderr at its end (with the watched modules the analysis never loaded: a misspelt name), each
#: child stamp as a ``STAMP name ms`` line as it happens (the child ends without flushing Python's buffers:
#: written with ``os.write``). ``t0`` is taken after the script's own imports (``json``, ``inspect``: a few
#: ms, the same for every stamp)
_CHILD = (
    """
import functools, importlib.util, inspect, json, os, sys, time
t0 = time.perf_counter()
main_pid = os.getpid()
stamps = {}

def stamp(name, side):
    in_child = os.getpid() != main_pid
    if in_child != (side == "child"):
        return  # a child's step run in this process (no fork, a lost child's files): not that stamp
    ms = (time.perf_counter() - t0) * 1000
    if in_child:
        os.write(2, f"STAMP {json.dumps(name)} {ms:.1f}\\n".encode())
    else:
        stamps[name] = ms  # the last return counts (the last batch received)

def wrap(module, attr, label):
    name, side = label
    *path, attr = attr.split(".")  # a method: "Class.method"
    for p in path:
        module = getattr(module, p)
    if isinstance(inspect.getattr_static(module, attr), (staticmethod, classmethod)):
        raise TypeError(f"{attr}: a static or class method is not stamped (wrap its function)")
    f = getattr(module, attr)
    if inspect.isgeneratorfunction(f):
        def stamped(*a, __f=f, **k):
            result = yield from __f(*a, **k)
            stamp(name, side)
            return result
    else:
        def stamped(*a, __f=f, **k):
            result = __f(*a, **k)
            stamp(name, side)
            return result
    setattr(module, attr, functools.wraps(f)(stamped))

pending = {}
for mod, attr, name, side in json.loads(sys.argv[2]):
    pending.setdefault(mod, []).append((attr, (name, side)))

"""
    + WRAP_ON_LOAD
    + """sys.argv = ["skdbg", "analyze", sys.argv[1], "--format", "json", "--no-cache"]
import skdbg.cli as cli
cli.main(standalone_mode=False)
stamp("output written", "parent")
sys.stderr.write("STAMPS " + json.dumps({"stamps": stamps, "never_loaded": sorted(pending)}) + "\\n")
"""
)

#: the parent's stamps that say its main thread came to the plogs and that the plogs were in
_READY, _FILED = "ready for the plogs", "plogs filed"


def one_run(root: Path, folder: Path) -> tuple[dict[str, float], list[str]]:
    """The stamps of one wrapped ``analyze`` of ``root`` (ms from the wrapped run's start) and the watched
    modules it never loaded. Run from ``folder``: ``python -c`` puts the folder it starts in first on
    ``sys.path``, and from a source checkout that would be the checkout, not the installed skdbg."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), json.dumps(STAMPS)],
        capture_output=True,
        check=False,
        env=user_env(),
        cwd=folder,
    )
    err = proc.stderr.decode(errors="replace")
    out: dict[str, float] = {}
    never: list[str] = []
    ended = False
    for line in err.splitlines():
        if line.startswith("STAMP "):
            name, _, ms = line[len("STAMP ") :].rpartition(" ")
            out[json.loads(name)] = float(ms)
        elif line.startswith("STAMPS "):
            got = json.loads(line[len("STAMPS ") :])
            out.update(got["stamps"])
            never = got["never_loaded"]
            ended = True
    if proc.returncode != 0 or not ended:
        raise RuntimeError(f"the wrapped `skdbg analyze {root}` exited {proc.returncode}:\n{err}")
    return out, never


def report(runs: list[dict[str, float]], never_loaded: set[str]) -> None:
    """The median of each stamp in time order, then what the parent's main thread waited for when it came
    to the plogs: nothing (the plogs were filed before it was ready: the parent's own work is the run's
    critical path, its CPU is what counts) or the plogs (the child's scan and their filing)."""
    sides = {name: side for _, _, name, side in STAMPS} | {"output written": "parent"}
    names = sorted(
        {n for r in runs for n in r}, key=lambda n: statistics.median(r[n] for r in runs if n in r)
    )
    print(f"stamps of a first run, warm (median of {len(runs)}; ms from the wrapped run's start):")
    for n in names:
        got = [r[n] for r in runs if n in r]
        print(f"  {sides.get(n, '?'):6} {n:34} {statistics.median(got):7.1f}  (min {min(got):.1f})")
    unstamped = [name for _, _, name, _ in STAMPS if name not in names]
    if unstamped:
        print(
            f"never stamped: {', '.join(unstamped)} (no plog scan child: one CPU, SKDBG_NO_FORK, small plogs)"
        )
    if never_loaded:
        print(
            f"watched modules the analysis never loaded (a misspelt name?): {', '.join(sorted(never_loaded))}"
        )
    own = [r[_READY] - r[_FILED] for r in runs if _READY in r and _FILED in r and r[_READY] >= r[_FILED]]
    plogs = [r[_FILED] - r[_READY] for r in runs if _READY in r and _FILED in r and r[_READY] < r[_FILED]]
    if own:
        print(
            f"its own work in {len(own)} of {len(runs)} runs: the main thread was ready for the plogs "
            f"{statistics.median(own):.0f} ms (median) after they were filed"
        )
    if plogs:
        print(
            f"the plogs in {len(plogs)} of {len(runs)} runs: the main thread was ready for them "
            f"{statistics.median(plogs):.0f} ms (median) before they were filed"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plog-mb", type=float, default=200.0)
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=7, help="wrapped runs (medians printed)")
    ap.add_argument("--keep", action="store_true", help="keep the generated scene and print its path")
    args = ap.parse_args()
    if args.samples < 1:
        ap.error("--samples must be 1 or more")
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
        # the bytecode caches written once, from the same folder as the timed runs (see one_run)
        prime(
            [sys.executable, "-m", "skdbg.cli", "analyze", str(root), "--format", "json", "--no-cache"], tmp
        )
        runs: list[dict[str, float]] = []
        never: set[str] = set()
        for _ in range(args.samples):
            warm(files)
            stamps, unloaded = one_run(root, tmp)
            runs.append(stamps)
            never.update(unloaded)
        print(
            f"scene: {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB; load average {os.getloadavg()[0]:.2f}"
        )
        report(runs, never)
        return 0
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
