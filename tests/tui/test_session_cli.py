"""``skdbg tui --session ID``: the Session screen first, the newest attempt's scene behind the other
screens; an unknown id or a missing ledger is one line and exit 3, a wrong combination exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from session_tui_support import SID, base_session

from skdbg.cli import main
from skdbg.tui.app import SkdbgApp


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["tui", *args])
    return res.exit_code, res.stderr


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the app would show, recorded instead of running it (the scene folder is a temp copy
    that only lives while the app runs, so it is looked at here)."""
    calls: list[dict[str, Any]] = []

    def fake_run(self: SkdbgApp, *args: object, **kwargs: object) -> None:
        scene = self.scene
        calls.append(
            {
                "mode": self.start_mode,
                "session": self.session,
                "run_json": scene is not None and (scene / "run.json").is_file(),
                "sub_title": self.sub_title,
            }
        )

    monkeypatch.setattr(SkdbgApp, "run", fake_run)
    return calls


def test_session_opens_the_session_screen_on_the_newest_attempt(
    tmp_path: Path, started: list[dict[str, Any]]
) -> None:
    home = tmp_path / "ledger"
    base_session(home)
    code, err = _run("--session", SID, "--session-dir", str(home))
    assert code == 0, err
    assert len(started) == 1
    call = started[0]
    assert call["mode"] == "session" and call["run_json"]
    assert (call["session"].session_id, call["session"].attempt) == (SID, ("EX1-BASE-X1", 1))
    assert call["sub_title"] == "session S1 · EX1-BASE-X1/attempt-001"
    # --screen still chooses the first screen
    code, err = _run("--session", SID, "--session-dir", str(home), "--screen", "proposal")
    assert code == 0 and started[1]["mode"] == "proposal"


def test_unknown_session_or_missing_ledger_is_exit_3_without_traceback(
    tmp_path: Path, started: list[dict[str, Any]]
) -> None:
    code, err = _run("--session", "nope", "--session-dir", str(tmp_path / "none"))
    assert code == 3 and len(err.splitlines()) == 1
    assert "no ledger at" in err and "Traceback" not in err
    home = tmp_path / "ledger"
    base_session(home, verified=False)
    code, err = _run("--session", "nope", "--session-dir", str(home))
    assert code == 3 and len(err.splitlines()) == 1
    assert "no session 'nope'" in err and "Traceback" not in err
    assert started == []


def test_session_with_a_scene_or_diff_is_a_usage_error(tmp_path: Path, started: list[dict[str, Any]]) -> None:
    code, err = _run("--session", SID, str(tmp_path))
    assert code == 2 and "--session opens the session's newest attempt" in err
    assert started == []


def test_session_without_attempts_opens_with_a_clear_message(
    tmp_path: Path, started: list[dict[str, Any]]
) -> None:
    from skdbg.sessions.store import Ledger

    home = tmp_path / "ledger"
    with Ledger(home) as ledger:
        ledger.new_session("empty", session_id="E1")
    code, err = _run("--session", "E1", "--session-dir", str(home))
    assert code == 0
    assert "session E1 has no attempt yet" in err
    assert started[0]["mode"] == "session" and not started[0]["run_json"]
