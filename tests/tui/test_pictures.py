"""Pilot tests of the pictures in the TUI: the Timeline mode (key 8) and the Scope screen's graph (g).

Expectations come from the bundled scenes' descriptions (examples/scenes/README.md): in
``event-bound-split`` core 30 (AIV) runs child ``KvRopeCache_77a0`` (task 4, node 104, stream 1), gated
by EventWait 103 whose EventNotify 102 is on stream 0; the cut excludes [102, 103, 104, 105] with
collateral [102, 103, 105].
"""

from __future__ import annotations

from pathlib import Path

from tui_support import SIZE, scene, settle
from wait_scenes import circular_hang

from skdbg.pictures.timeline import TaskCell, marked
from skdbg.tui.app import SkdbgApp
from skdbg.tui.screens.scope import ScopeScreen
from skdbg.tui.screens.timeline import TimelineScreen
from skdbg.tui.widgets.scopegraph import ScopeGraphWidget
from skdbg.tui.widgets.timeline import TimelineWidget


async def test_timeline_mode_marks_the_faulting_task_of_core_30() -> None:
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        tl = app.screen.query_one("#timeline", TimelineWidget).timeline
        assert tl is not None
        assert [(r.core_id, r.queue) for r in tl.rows] == [(30, "aiv")]
        assert marked(tl.rows, "pc") == [(30, 4)]
        assert marked(tl.rows, "cond") == [(30, 4)]
        assert marked(tl.rows, "suspect") == [(30, 4)]
        row = tl.rows[0]
        # everything queued before the running child finished, nothing after it did
        cells = [c for c in row.cells if isinstance(c, TaskCell)]
        at = next(i for i, c in enumerate(cells) if "pc" in c.marks)
        assert all("finished" in c.marks for c in cells[:at])
        assert not any("finished" in c.marks for c in cells[at:])
        text = app.screen.copy_text()
        assert text is not None and "core 30 AIV implicated" in text and "◆▶★f4" in text


async def test_scope_screen_toggles_between_tables_and_graph() -> None:
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        assert isinstance(app.screen, ScopeScreen)
        graph_view = app.screen.query_one("#scope-graph-view")
        tables = app.screen.query_one("#scope-body")
        assert (graph_view.display, tables.display) == (False, True)
        await pilot.press("g")
        await settle(pilot)
        assert (graph_view.display, tables.display) == (True, False)
        pic = app.screen.query_one("#scope-graph", ScopeGraphWidget).picture
        assert pic is not None
        lanes = {n.id: n.lane for n in pic.nodes}
        assert lanes == {
            "100": "stream 0",
            "101": "stream 0",
            "102": "stream 0",
            "103": "stream 1",
            "104": "stream 1",
            "105": "stream 0",
            "106": "stream 0",
        }
        styles = {n.id: n.style for n in pic.nodes}
        assert styles["104"] == "suspect"
        assert {i for i, s in styles.items() if s == "collateral"} == {"102", "103", "105"}
        assert [(e.src, e.dst, e.kind) for e in pic.edges] == [("102", "103", "event")]
        await pilot.press("g")
        await settle(pilot)
        assert (graph_view.display, tables.display) == (False, True)


async def test_timeline_screen_draws_a_hangs_wait_for_graph(tmp_path: Path) -> None:
    app = SkdbgApp(circular_hang(tmp_path), start_mode="timeline")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        graph = app.screen.query_one("#wait-graph", ScopeGraphWidget)
        assert graph.display and graph.picture is not None
        assert graph.picture.title == "wait-for graph — circular_wait"
    # a fault that is not a hang has no wait-for graph: the widget is hidden
    app = SkdbgApp(scene("event-bound-split"), start_mode="timeline")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#wait-graph", ScopeGraphWidget).display
