"""The JSON citation locator follows the whole path, not the first occurrence of its last key."""

from __future__ import annotations

from skdbg.tui.app import SkdbgApp
from skdbg.tui.jsonpath import json_path_line, parse_json_path
from skdbg.tui.screens.source import SourceScreen
from tests.support.tui_support import SIZE, scene, settle

# two queues, each an array of objects with the same keys; lines numbered by hand
REPEATED = """{
  "q": {
    "aic": {"infos": [
      {"id": 1, "infos": []},
      {"id": 2}
    ]},
    "aiv": {"infos": [
      {"id": 1},
      {"id": 2,
       "infos": [7, [8, 9]]}
    ]}
  },
  "tail": {"x": "a.b[1]", "infos": 0}
}"""


def test_path_steps() -> None:
    assert parse_json_path("scopes[0].taskQueues.aiv.taskInfos[1]") == [
        "scopes",
        0,
        "taskQueues",
        "aiv",
        "taskInfos",
        1,
    ]
    assert parse_json_path("") is None


def test_repeated_keys_resolve_to_the_addressed_child() -> None:
    assert json_path_line(REPEATED, "q.aic.infos") == 3
    assert json_path_line(REPEATED, "q.aic.infos[0].infos") == 4
    assert json_path_line(REPEATED, "q.aic.infos[1]") == 5
    assert json_path_line(REPEATED, "q.aiv") == 7
    assert json_path_line(REPEATED, "q.aiv.infos[1]") == 9
    assert json_path_line(REPEATED, "q.aiv.infos[1].infos") == 10
    assert json_path_line(REPEATED, "q.aiv.infos[1].infos[1][1]") == 10
    assert json_path_line(REPEATED, "tail.infos") == 13


def test_missing_or_malformed_is_none_not_a_guess() -> None:
    assert json_path_line(REPEATED, "q.aiv.infos[2]") is None
    assert json_path_line(REPEATED, "q.aie.infos") is None
    assert json_path_line(REPEATED, "q.aic.infos.id") is None
    assert json_path_line('{"a": [1, 2', "a[1]") == 1
    assert json_path_line('{"a": [1, oops, 3]}', "a[2]") is None


async def test_palette_jump_lands_on_aiv_task_info_1() -> None:
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"L3 sk_meta")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SourceScreen)
        # sk_task_queue.json: the aiv queue opens at line 42, its taskInfos[1] at line 62
        assert app.screen.line == 62
