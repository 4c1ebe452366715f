"""`skdbg report` writes timeline.svg and scope-graph.svg into the report folder and links them."""

from __future__ import annotations

import html
import re
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def svg_text(path: Path) -> str:
    """The visible text of a Rich SVG export (spans joined, non-breaking spaces as spaces)."""
    body = path.read_text(encoding="utf-8")
    assert body.lstrip().startswith("<svg")
    return html.unescape("".join(re.findall(r"<text[^>]*>([^<]*)</text>", body))).replace("\xa0", " ")


def test_report_writes_both_pictures_and_links_them(tmp_path: Path) -> None:
    out = tmp_path / "report"
    res = CliRunner().invoke(main, ["report", str(SCENES / "event-bound-split"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    listed = {Path(line).name for line in res.output.splitlines()}
    assert {"timeline.svg", "scope-graph.svg", "REPORT_INDEX.md", "analysis.json"} <= listed
    index = (out / "REPORT_INDEX.md").read_text(encoding="utf-8")
    assert "[`timeline.svg`](timeline.svg)" in index and "[`scope-graph.svg`](scope-graph.svg)" in index
    timeline = svg_text(out / "timeline.svg")
    assert "core 30 AIV implicated" in timeline
    assert "◆▶★f4" in timeline  # core 30's running child: PC, COND and suspect on task 4
    graph = svg_text(out / "scope-graph.svg")
    assert "◆ 104 KvRopeCache_77a0" in graph
    assert "stream 0" in graph and "stream 1" in graph


def test_report_of_a_non_sk_fault_says_there_is_no_scope(tmp_path: Path) -> None:
    out = tmp_path / "report"
    res = CliRunner().invoke(main, ["report", str(SCENES / "non-sk-fault"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    graph = svg_text(out / "scope-graph.svg")
    assert "there is no scope to draw" in graph
    assert (out / "timeline.svg").is_file()


def test_session_export_carries_the_pictures_of_a_failed_attempt(tmp_path: Path) -> None:
    from skdbg.sessions.store import Ledger
    from skdbg.workflow import export_session, freeze

    with Ledger(tmp_path / "home") as ledger:
        sid = ledger.new_session("pictures")
        attempt = freeze(ledger, sid, SCENES / "event-bound-split")
        out = tmp_path / "export"
        export_session(ledger, sid, out)
    folder = out / f"{attempt.round_id}.attempt-001"
    for lang_dir in (folder, folder / "zh"):
        index = (lang_dir / "REPORT_INDEX.md").read_text(encoding="utf-8")
        assert "[`timeline.svg`](timeline.svg)" in index, lang_dir
        assert "core 30 AIV implicated" in svg_text(lang_dir / "timeline.svg")
        assert "◆ 104 KvRopeCache_77a0" in svg_text(lang_dir / "scope-graph.svg")
