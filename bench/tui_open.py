"""Benchmark: launch → first painted log line of a 1 GiB plog: ``skdbg tui SCENE`` vs toolong (issues 4, 18).

Run as ``python bench/tui_open.py [--size-gib 1] [--runs 5] [--toolong-python PY] [--keep]``.

Three programs are measured the same way: a fresh Python process (interpreter start-up and imports
included) runs a Textual app headless at 160×50; a wrapper around the viewer's Line-API ``render_line``
(skdbg ``LogView``, toolong ``LogLines``) notes the wall-clock time of the first strip that shows a plog
record, and the process exits. The programs: ``skdbg tui SCENE --screen log`` — the real command on a
scene whose plog is the 1 GiB file (the scene is opened and checked, the Log screen opens the plog at
once, and the analysis worker imports the triage stack and starts once that first line is painted);
skdbg's ``LogView`` alone; and toolong. The parent takes the time just
before spawning; the figure is the difference. The file is read once first so both see it in the
page cache. toolong pins ``textual<0.59`` (skdbg pins 8.2.8), so it lives in its own virtual
environment: ``--toolong-python``, or one created under the user cache dir with ``pip install toolong``.
The median of ``--runs`` runs is compared; the ratio skdbg/toolong is printed (target ≤ 1.0×) and the
script exits non-zero above it. Only the standard library is imported at module level, because the
same file is the child program in both environments.
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchenv import NOTE, user_env  # noqa: E402  (a sibling module; only the standard library)

SIZE = (160, 50)
MARK = "python3):"  # every generated plog record carries "(<pid>,python3):"
TIMEOUT = 120.0
TOOLONG = "toolong==1.5.0"


def _child(viewer: str, path: str, t_spawn: float) -> int:
    """Run one viewer headless until its first painted plog line; print the elapsed time as JSON."""
    from textual.app import App
    from textual.strip import Strip

    state: dict[str, float] = {}
    app: App[None] | None = None
    if viewer == "skdbg-tui":
        from textual.app import App as _App

        from skdbg.cli import main as skdbg_main
        from skdbg.tui.app import SkdbgApp
        from skdbg.tui.logview import LogView

        target = LogView
        real_run = _App.run

        def headless_run(self: App[None], *args: object, **kwargs: object) -> None:
            nonlocal app
            app = self
            self.call_later(self.set_timer, TIMEOUT, give_up)
            real_run(self, headless=True, size=SIZE)

        SkdbgApp.run = headless_run  # type: ignore[assignment,method-assign]
    elif viewer == "skdbg":
        from textual.app import ComposeResult

        from skdbg.tui.logview import LogView

        target: type = LogView

        class Host(App[None]):
            def compose(self) -> ComposeResult:
                yield LogView([path], id="log")

        app = Host()
    else:
        from toolong.log_lines import LogLines
        from toolong.ui import UI

        target = LogLines
        app = UI([path], merge=False)

    original = target.render_line

    def render_line(self: object, y: int) -> Strip:
        strip: Strip = original(self, y)
        if "first" not in state and MARK in strip.text:
            state["first"] = time.time() - t_spawn
            assert app is not None
            app.call_later(app.exit)
        return strip

    target.render_line = render_line  # type: ignore[attr-defined]

    def give_up() -> None:
        state.setdefault("timeout", TIMEOUT)
        assert app is not None
        app.exit()

    if viewer == "skdbg-tui":
        skdbg_main(["tui", path, "--screen", "log"], standalone_mode=False)
    else:
        app.call_later(app.set_timer, TIMEOUT, give_up)
        app.run(headless=True, size=SIZE)
    print(json.dumps(state))
    return 0 if "first" in state else 1


def _toolong_python(explicit: str | None) -> str:
    if explicit:
        return explicit
    import platformdirs

    venv = Path(platformdirs.user_cache_dir("skdbg")) / "bench" / "toolong-venv"
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():
        print(f"creating {venv} with {TOOLONG} (toolong pins textual<0.59)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", TOOLONG], check=True)
    return str(py)


def _measure(python: str, viewer: str, path: Path) -> float:
    """Seconds from spawning ``viewer`` on ``path`` to its first painted plog line."""
    env = user_env()
    t0 = time.time()
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--child", viewer, str(path), repr(t0)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
        env=env,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"{viewer} run failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    got = json.loads(lines[-1])
    return float(got["first"])


def _scene(tmp: Path, plog: Path) -> Path:
    """A copy of the bundled high-single-stream scene whose plog is the generated file (hard-linked)."""
    src = HERE.parent / "examples" / "scenes" / "high-single-stream"
    scene = tmp / "scene"
    shutil.copytree(src, scene)
    plog_dir = scene / "log" / "plog"
    for old in plog_dir.glob("plog-*.log"):
        old.unlink()
    os.link(plog, plog_dir / plog.name)
    return scene


def _generate(path: Path, size: int) -> None:
    sys.path.insert(0, str(HERE))
    from plog_scan import generate  # the plog_scan benchmark's generator: noise blocks + SK incidents

    generate(path, size, 5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--toolong-python", help="python of an environment with toolong installed")
    ap.add_argument("--keep", action="store_true", help="keep the generated plog and print its path")
    ap.add_argument("--child", nargs=3, metavar=("VIEWER", "PATH", "T0"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        viewer, path, t0 = args.child
        return _child(viewer, path, float(t0))

    toolong_py = _toolong_python(args.toolong_python)
    tmp = Path(tempfile.mkdtemp(prefix="skdbg-tuiopen-"))
    path = tmp / "plog-48213_20260610140321518.log"
    try:
        t0 = time.perf_counter()
        _generate(path, int(args.size_gib * (1 << 30)))
        size = path.stat().st_size
        print(f"generated {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s")
        with path.open("rb", buffering=0) as fh:  # page cache warm for both viewers
            while fh.read(16 << 20):
                pass
        scene = _scene(tmp, path)
        print(NOTE)
        for py, viewer, target in ((sys.executable, "skdbg-tui", scene), (sys.executable, "skdbg", path)):
            _measure(py, viewer, target)  # priming run: writes the bytecode caches, not timed
        _measure(toolong_py, "toolong", path)
        app_runs: list[float] = []
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.runs):  # interleaved, so drift hits all alike
            app_runs.append(_measure(sys.executable, "skdbg-tui", scene))
            ours.append(_measure(sys.executable, "skdbg", path))
            theirs.append(_measure(toolong_py, "toolong", path))
        a, v, b = statistics.median(app_runs), statistics.median(ours), statistics.median(theirs)
        row = "{:<22}: {}  min {:.2f} s  median {:.2f} s"
        print(row.format("skdbg tui SCENE", " ".join(f"{t:.2f}" for t in app_runs), min(app_runs), a))
        print(row.format("skdbg LogView alone", " ".join(f"{t:.2f}" for t in ours), min(ours), v))
        print(row.format("toolong", " ".join(f"{t:.2f}" for t in theirs), min(theirs), b))
        print(f"load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(
            f"ratio skdbg tui SCENE / toolong: {a / b:.2f}x by median, {min(app_runs) / min(theirs):.2f}x by min (target <= 1.0x)"
        )
        print(f"ratio LogView alone / toolong: {v / b:.2f}x by median")
        from skdbg.parsers.lineindex import LineIndex

        t0 = time.perf_counter()
        ix = LineIndex(path).build_all()
        dt = time.perf_counter() - t0
        print(
            f"(skdbg full line index, in process: {ix.lines:,} lines in {dt:.2f} s, {size / 1e6 / dt:.0f} MB/s)"
        )
        return 0 if a <= b else 1
    finally:
        if args.keep:
            print(f"kept {path}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
