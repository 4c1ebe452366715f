"""``skdbg tui --diff A B``: the diff as a table; the highlighted row explains and cites its field."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from textual.widgets import DataTable, Static

from skdbg.cli import main
from skdbg.diffing import diff_scenes
from skdbg.tui.diffapp import DiffApp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
BEFORE, AFTER = EXAMPLES / "high-single-stream", EXAMPLES / "high-single-stream-fixed"


async def test_diff_view_rows_and_detail() -> None:
    result = diff_scenes(BEFORE, AFTER, use_cache=False, parallel=False)
    app = DiffApp(result)
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.query_one(DataTable)
        assert table.row_count == len(result.differences)
        assert table.get_row_at(0)[:2] == ["≠", "fault.kind"]
        detail = str(app.query_one("#diff-detail", Static).render())
        assert detail.startswith("fault.kind: the failure changed nature")
        assert "A at: log/plog/plog-48213_20260610140058123.log:23" in detail
        fused_row = next(i for i, d in enumerate(result.differences) if d.field.startswith("fused["))
        for _ in range(fused_row):
            await pilot.press("down")
        await pilot.pause()
        detail = str(app.query_one("#diff-detail", Static).render())
        assert "left in B: SwiGlu_41d9e0#0" in detail


def test_tui_diff_needs_two_scenes() -> None:
    res = CliRunner().invoke(main, ["tui", "--diff", str(BEFORE)])
    assert res.exit_code == 2
    assert "--diff needs two scene folders" in res.stderr
    res = CliRunner().invoke(main, ["tui", "--diff", str(BEFORE), str(BEFORE / "nope")])
    assert res.exit_code == 3
    assert str(BEFORE / "nope") in res.stderr
