"""Issue 17 item 3: the hang's wait-for graph is drawn — in the report folder (wait-for.svg) and under
the TUI's timeline — with the generic lane-graph renderer. The scene: two bystander cores waiting on
each other through SYNC wait kinds 6 and 5 with no SET in either queue (triage.md §3.3, X5)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console
from wait_scenes import circular_hang

from skdbg.cli import main
from skdbg.pictures.render import GraphView
from skdbg.pictures.waitgraph import build_wait_graph
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def svg_text(path: Path) -> str:
    body = path.read_text(encoding="utf-8")
    return html.unescape("".join(re.findall(r"<text[^>]*>([^<]*)</text>", body))).replace("\xa0", " ")


def test_wait_graph_picture_has_a_lane_per_core_and_names_the_cycle(tmp_path: Path) -> None:
    a = analyze_context(open_context(circular_hang(tmp_path)))
    assert a.wait_for is not None
    pic = build_wait_graph(a.wait_for)
    assert pic.title == "wait-for graph — circular_wait"
    assert any(n.startswith("circular_wait across cores") for n in pic.notes)
    # the cycle's four nodes are kept in view and styled as the cycle
    assert set(pic.focus) == {"core:24", "sync:aic:1", "core:25", "sync:aiv:1"}
    assert {n.id for n in pic.nodes if n.style == "cycle"} == set(pic.focus)
    console = Console(width=140, record=True, color_system=None)
    with console.capture() as cap:
        console.print(GraphView(pic))
    text = cap.get()
    assert "wait-for graph — circular_wait" in text and "in the circular wait" in text


def test_report_writes_wait_for_svg_only_for_a_hang_with_a_graph(tmp_path: Path) -> None:
    out = tmp_path / "report"
    res = CliRunner().invoke(main, ["report", str(circular_hang(tmp_path)), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "[`wait-for.svg`](wait-for.svg)" in (out / "REPORT_INDEX.md").read_text(encoding="utf-8")
    assert "circular_wait across cores" in svg_text(out / "wait-for.svg")
    other = tmp_path / "other"
    res = CliRunner().invoke(main, ["report", str(SCENES / "event-bound-split"), "-o", str(other)])
    assert res.exit_code == 0, res.output
    assert not (other / "wait-for.svg").exists()
