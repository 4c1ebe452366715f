"""``skdbg session …``, ``skdbg locate`` and ``skdbg analyze --session``: JSON for scripts, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from session_support import FAILING, build_fixed_scene

from skdbg.cli import main


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)
    return res.exit_code, res.stdout, res.stderr


def js(*args: str) -> Any:
    code, out, err = run(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_full_cli_loop(tmp_path: Path) -> None:
    d = ["--session-dir", str(tmp_path / "s")]
    sid = js("session", "new", "--name", "demo", *d)["id"]
    code, out, err = run("analyze", str(FAILING), "--session", sid, *d)
    assert code == 0 and "SwiGlu_41d9e0" in out
    assert f"recorded EX1-BASE/attempt-001 (failed) in session {sid}" in err
    assert js("session", "propose", sid, "EX1-BASE", *d) == {"round_id": "EX1-BASE-X1", "status": "proposed"}
    assert js("session", "apply", sid, "EX1-BASE-X1", *d)["status"] == "applied"
    code, _, err = run("session", "apply", sid, "EX1-BASE-X1", *d)
    assert code == 0  # applying again is a no-op, not a backwards move
    proposal = js("session", "show", sid, *d)["proposals"][0]
    assert proposal["round_id"] == "EX1-BASE-X1"
    from skdbg.sessions.store import Ledger

    with Ledger(tmp_path / "s") as led:
        body = led.proposal(sid, "EX1-BASE-X1").body
    fixed = build_fixed_scene(tmp_path / "fixed", "EX1-BASE-X1", body)
    added = js("session", "add-attempt", sid, str(fixed), "--change", "SwiGlu excluded (begin/end None)", *d)
    assert (added["round_id"], added["attempt"], added["status"]) == ("EX1-BASE-X1", "attempt-001", "running")
    doc = js("session", "verify", sid, "EX1-BASE-X1/attempt-001", *d)
    assert doc["round"]["status"] == "passed_gates(V1..V3)"
    code, _, err = run("session", "verify", sid, "EX1-BASE-X1", *d)
    assert code == 3 and "never re-verified" in err
    assert js("session", "note", sid, "kept for the parent", "--attempt", "EX1-BASE/attempt-001", *d) == {
        "notes": 1
    }
    show = js("session", "show", sid, *d)
    assert [(r["round_id"], r["status"]) for r in show["rounds"]] == [
        ("EX1-BASE", "failed"),
        ("EX1-BASE-X1", "passed_gates(V1..V3)"),
    ]
    assert show["verdicts"][0]["verdict.rule"] == "C3"
    assert js("session", "list", *d)["sessions"][0]["attempts"] == 2
    assert js("session", "check", sid, *d) == {"attempts": 2, "integrity": "ok"}
    files = js("session", "export", sid, "-o", str(tmp_path / "exp"), *d)["files"]
    assert str(tmp_path / "exp" / "REPORT.md") in files
    t = ["--session-dir", str(tmp_path / "t")]
    doc = js("session", "import", str(tmp_path / "exp"), "--rename", "EX1-BASE-X1=EXP7-R2", *t)
    assert doc == {"id": sid, "aliases": {"EXP7-R2": "EX1-BASE-X1"}}
    # the parent's name resolves to skdbg's round; the mapping travels with the next export
    assert js("session", "note", sid, "parent name", "--attempt", "EXP7-R2/attempt-001", *t) == {"notes": 2}
    files = js("session", "export", sid, "-o", str(tmp_path / "exp2"), *t)["files"]
    assert json.loads((tmp_path / "exp2" / "session.json").read_text())["aliases"] == {
        "EXP7-R2": "EX1-BASE-X1"
    }


def test_session_new_text_prints_only_the_id(tmp_path: Path) -> None:
    code, out, _ = run("session", "new", "--session-dir", str(tmp_path))
    assert code == 0 and len(out.split()) == 1


def test_skdbg_home_and_locate(tmp_path: Path) -> None:
    env = {"SKDBG_HOME": str(tmp_path)}
    code, out, _ = run("locate", "--format", "json", env=env)
    doc = json.loads(out)
    assert code == 0 and doc["ledger"] == str((tmp_path / "sessions" / "ledger.db").resolve())
    assert doc["journal_mode"] in ("WAL", "DELETE")
    code, out, _ = run("session", "new", "--format", "json", env=env)
    assert (tmp_path / "sessions" / "ledger.db").is_file()


def test_errors_are_one_line_exit_3(tmp_path: Path) -> None:
    d = ["--session-dir", str(tmp_path)]
    code, _, err = run("session", "show", "nope", *d)
    assert code == 3 and "no session 'nope'" in err and "Traceback" not in err
    sid = json.loads(run("session", "new", "--format", "json", *d)[1])["id"]
    assert run("session", "add-attempt", sid, str(FAILING), *d)[0] == 0
    code, _, err = run("session", "add-attempt", sid, str(FAILING), *d)
    assert code == 3 and "R7" in err
    code, _, err = run("session", "propose", sid, "EX1-BASE/x", *d)
    assert code == 2
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "ledger.db").write_bytes(b"garbage" * 200)
    code, _, err = run("session", "list", "--session-dir", str(tmp_path / "bad"))
    assert code == 3 and "corrupted" in err
