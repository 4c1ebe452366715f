"""Benchmark: build and render the core × task timeline of a 2,000-child SK (target ≤ 200 ms).

Run as ``python bench/timeline.py [--kernels 2000] [--samples 5] [--width 160]``. The scene is written
with the project's scene builder (``skdbg.scenebuilder.scene``, the same SK as ``bench/analyze.py``: one
SK of ``--kernels`` children plus event pairs, ≈5,000 queued tasks) with eight exception cores — the
faulting one and seven bystanders of both core types — and analysed once, untimed. Then, ``--samples``
times each (min and median printed):

* **timeline** — :func:`skdbg.pictures.timeline.build_timeline` from the analysis records plus a render of
  :class:`skdbg.pictures.render.TimelineView` into a Rich console of ``--width`` columns (what the TUI's
  Timeline screen and ``skdbg report`` do); target ≤ 200 ms by median;
* for information, the scope graph (build + render, windowed as in the report), the SVG export of
  the timeline, and with ``--tui`` the Timeline screen's redraw in a headless ``skdbg tui``.

In-process timing (``time.perf_counter``): the picture is drawn inside an already running ``skdbg``; the
interpreter start-up is ``bench/tui_open.py``'s business. Exits non-zero when the median misses the
target or the picture does not mark the planted child.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from skdbg.pictures.export import cut_fragment, to_svg
from skdbg.pictures.render import GraphView, TimelineView
from skdbg.pictures.scope import build_scope_graph
from skdbg.pictures.timeline import build_timeline, marked
from skdbg.scenebuilder.scene import FaultCore, Kernel, build_scene
from skdbg.triage.context import check_inputs, open_context
from skdbg.triage.engine import analyze_staged

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import scene_spec  # noqa: E402  (a sibling module: the same 2,000-child SK)

TARGET_S = 0.200


def sample(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def show(name: str, xs: list[float], target: float | None = None) -> bool:
    med = statistics.median(xs)
    ok = target is None or med <= target
    goal = "" if target is None else f"  target ≤ {target * 1000:.0f} ms: {'ok' if ok else 'MISSED'}"
    print(f"{name:<34} min {min(xs) * 1000:7.1f} ms   median {med * 1000:7.1f} ms   (n={len(xs)}){goal}")
    return ok


def tui_samples(root: Path, n: int) -> list[float]:
    """The Timeline screen of a headless ``skdbg tui`` (160×48): each sample rebuilds the picture from
    the analysis and waits for Textual to lay it out and paint it (``populate`` + one refresh)."""
    import asyncio

    from skdbg.tui.app import SkdbgApp
    from skdbg.tui.screens.timeline import TimelineScreen

    out: list[float] = []

    async def run() -> None:
        app = SkdbgApp(root, start_mode="timeline")
        async with app.run_test(size=(160, 48)) as pilot:
            while app.state is None:
                await pilot.pause(0.05)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TimelineScreen) and app.state is not None
            for _ in range(n):
                t0 = time.perf_counter()
                screen.populate(app.state)
                await pilot.pause()
                out.append(time.perf_counter() - t0)

    asyncio.run(run())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--width", type=int, default=160)
    ap.add_argument(
        "--tui", action="store_true", help="also time the Timeline screen's redraw in a headless TUI (info)"
    )
    args = ap.parse_args()
    if args.samples < 5:
        print("--samples must be at least 5", file=sys.stderr)
        return 2
    spec, target = scene_spec(args.kernels)
    fault = spec.cores[0]
    aic = [p for p, c in enumerate(spec.children) if isinstance(c, Kernel) and c.kernel_type == "AIC_ONLY"]
    aiv = [p for p, c in enumerate(spec.children) if isinstance(c, Kernel) and c.kernel_type == "AIV_ONLY"]
    bystanders = [
        FaultCore(core_id=i, core_type=t, pc=("entry",), state=("OP_FINISHED", ks[len(ks) // (i + 2)]))
        for i, (t, ks) in enumerate([("AIC", aic), ("AIV", aiv)] * 4)
        if i < 7
    ]
    spec = replace(spec, cores=[fault, *bystanders], name="bench-timeline")
    with tempfile.TemporaryDirectory(prefix="skdbg-bench-timeline-") as tmp:
        built = build_scene(spec, Path(tmp) / "scene")
        ctx = open_context(built.root)
        check_inputs(ctx)
        t0 = time.perf_counter()
        loc, analysis = analyze_staged(ctx)
        inst = loc.instance
        tasks = len(inst.tasks) if inst is not None else 0
        print(
            f"scene: {args.kernels} kernels, {len(spec.children)} fused nodes, {tasks} queued tasks, "
            f"{len(analysis.fault.cores)} exception cores (analysed once, untimed: {time.perf_counter() - t0:.1f} s)"
        )
        if inst is None:
            print("the analysis resolved no SK instance: nothing to draw", file=sys.stderr)
            return 1

        def timeline() -> str:
            console = Console(
                width=args.width, file=io.StringIO(), color_system="truecolor", force_terminal=True
            )
            console.print(TimelineView(build_timeline(inst, analysis.fault, analysis.verdict)))
            out = console.file
            assert isinstance(out, io.StringIO)
            return out.getvalue()

        def graph() -> None:
            console = Console(width=args.width, file=io.StringIO(), force_terminal=True)
            pic = build_scope_graph(inst, analysis.proposal, cut_fragment(ctx, inst, analysis.proposal))
            console.print(GraphView(pic, max_rows=80))

        tl = build_timeline(inst, analysis.fault, analysis.verdict)
        want = built.task_index[target]
        pcs = marked(tl.rows, "pc")
        ok_mark = any(k == want for _, k in pcs)
        print(f"picture marks the faulting PC in task(s) {sorted({k for _, k in pcs})} (planted: {want})")
        timeline()  # one warm-up (first-use costs of Rich's caches are start-up, not drawing)
        ok = show("timeline build + render", sample(timeline, args.samples), TARGET_S)
        show("scope graph build + render (info)", sample(graph, args.samples))
        show("timeline SVG export (info)", sample(lambda: to_svg(TimelineView(tl), "t"), args.samples))
        if args.tui:
            show("TUI Timeline screen redraw (info)", tui_samples(built.root, args.samples))
    if not ok_mark:
        print("the timeline does not mark the planted child's task", file=sys.stderr)
    return 0 if ok and ok_mark else 1


if __name__ == "__main__":
    raise SystemExit(main())
