"""``skdbg relaunch`` with a real subprocess: a small Python script stands in for the user's job.

The stand-in reads what skdbg gives it (``ASCEND_PROCESS_LOG_PATH``, the cwd, the options file) and
writes what a real job writes there: the plog of its own pid under ``<log>/debug/plog/`` and
``sk_meta/<pid>/`` in its cwd (built with the scene builder, times = now). The session is the bundled
``high-single-stream`` failure, its exclusion proposal opening ``EX1-BASE-X1``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from session_support import FAILING

from skdbg.cli import main
from skdbg.loop.relaunch import RelaunchError, RelaunchRequest, relaunch, round_edits
from skdbg.sessions.attempts import check_attempt, propose
from skdbg.sessions.blobs import hash_file
from skdbg.sessions.errors import NotFound
from skdbg.sessions.store import Ledger
from skdbg.workflow import freeze

ROUND = "EX1-BASE-X1"

STANDIN = r"""
import json, os, shutil, subprocess, sys, time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

mode = sys.argv[1]
cwd = Path.cwd()
pid = os.getpid()
seen = {k: os.environ.get(k) for k in (
    "ASCEND_OP_COMPILE_SAVE_KERNEL_META", "ASCEND_PROCESS_LOG_PATH", "ASCEND_GLOBAL_LOG_LEVEL",
    "SKDBG_NPUGRAPH_EX_OPTIONS", "SKDBG_SIM_SEED")}
opts = json.loads(Path(seen["SKDBG_NPUGRAPH_EX_OPTIONS"]).read_text())
model = cwd / "src" / "model.py"
(cwd / "job_seen.json").write_text(json.dumps({
    "env": seen, "options": opts, "pid": pid, "pgid": os.getpgid(0), "argv": sys.argv,
    "model_has_none_scope": "super_kernel_scope_begin(None)" in model.read_text()}))
print(f"stand-in job {mode} pid {pid}", flush=True)


def write_evidence(spec):
    t0 = datetime.now()
    spec = replace(spec, pid=pid, seed=pid, run_start=t0, build_ts=t0 + timedelta(milliseconds=10),
                   fault_ts=t0 + timedelta(milliseconds=20), run_end=t0 + timedelta(milliseconds=30))
    from skdbg.scenebuilder.scene import build_scene
    built = build_scene(spec, cwd / "_build")
    plog_dir = Path(seen["ASCEND_PROCESS_LOG_PATH"]) / "debug" / "plog"
    plog_dir.mkdir(parents=True, exist_ok=True)
    for p in (built.root / "log" / "plog").iterdir():
        shutil.move(str(p), plog_dir / p.name)
    shutil.move(str(built.root / "sk_meta" / str(pid)), cwd / "sk_meta" / str(pid))
    shutil.rmtree(built.root)


if mode == "fixed":
    from skdbg.scenebuilder.examples import high_single_stream_fixed
    write_evidence(replace(high_single_stream_fixed(), run={}))
    print("step 7 done", flush=True)
elif mode == "fault":
    from skdbg.scenebuilder.examples import high_single_stream
    write_evidence(replace(high_single_stream(), run={}))
    print("device fault", file=sys.stderr, flush=True)
    sys.exit(7)
elif mode == "launcher":  # like torchrun: the SuperKernel process is a child of the job
    sys.exit(subprocess.run([sys.executable, __file__, "fixed"]).returncode)
elif mode == "nothing":
    sys.exit(0)
elif mode == "stubborn":  # ignores SIGTERM: only SIGKILL ends it
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (cwd / "pids.json").write_text(json.dumps([pid]))
    print("ignoring SIGTERM", flush=True)
    time.sleep(600)
elif mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (cwd / "pids.json").write_text(json.dumps([pid, child.pid]))
    print("hanging", flush=True)
    time.sleep(600)
"""


def _standin(tmp: Path) -> Path:
    path = tmp / "standin_job.py"
    path.write_text(STANDIN)
    return path


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, str]:
    home = tmp_path / "home"
    with Ledger(home) as led:
        sid = led.new_session("relaunch")
        failed = freeze(led, sid, FAILING)
        rid, status = propose(led, sid, failed.round_id)
    assert (rid, status) == (ROUND, "proposed")
    return home, sid


def _tree_hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hash_file(p).sha256 for p in root.rglob("*") if p.is_file()}


def _req(sid: str, argv: list[str] | None, source_root: Path | None = None, **kw: Any) -> RelaunchRequest:
    return RelaunchRequest(sid, ROUND, argv, None, source_root, **kw)


def test_round_edits_are_the_proposal_marker_edits(session: tuple[Path, str]) -> None:
    home, sid = session
    with Ledger(home) as led:
        edits = round_edits(led, sid, ROUND)
    # the bundled proposal: begin(None) before SwiGlu's statement, end(None) after it (analysis-json.md)
    assert [(e.file, e.op) for e in edits] == [("src/model.py", "insert"), ("src/model.py", "insert")]
    assert "super_kernel_scope_begin(None)" in edits[0].text
    assert "super_kernel_scope_end(None)" in edits[1].text
    assert edits[1].line == edits[0].line + 1


def test_clean_relaunch_freezes_and_passes_v1_to_v4(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    before = _tree_hashes(FAILING)
    lines: list[str] = []
    with Ledger(home) as led:
        failed = led.attempts(sid, "EX1-BASE")[0]
        res = relaunch(
            led, _req(sid, [sys.executable, str(_standin(tmp_path)), "fixed"], progress=lines.append)
        )
        check_attempt(led, failed)  # the failed attempt's frozen files are unchanged
        gates = {g["gate"]: g["result"] for g in led.gates(res.attempt.pk)}
        rnd = led.round(sid, ROUND)
    assert _tree_hashes(FAILING) == before
    assert res.status == "passed"
    assert res.verify is not None
    # V4 is not needed (one stream); V5 needs >= 3 clean runs, which one relaunch cannot give
    assert gates == {"V1": "passed", "V2": "passed", "V3": "passed", "V4": "not_run", "V5": "not_run"}
    assert rnd.status == "passed_gates(V1..V3)"
    assert res.exit == {"status": 0, "signal": None, "timeout": False}
    seen = json.loads((res.scene.parent / "source" / "job_seen.json").read_text())
    assert seen["env"]["ASCEND_OP_COMPILE_SAVE_KERNEL_META"] == "1"
    assert seen["env"]["ASCEND_PROCESS_LOG_PATH"] == str(res.scene.parent / "log")
    assert seen["env"]["ASCEND_GLOBAL_LOG_LEVEL"] == "1"
    assert seen["env"]["SKDBG_SIM_SEED"] is None
    assert seen["options"] == {"super_kernel_debug_options": {}, "super_kernel_optimize_options": {}}
    assert seen["model_has_none_scope"] is True
    # its own process group, not skdbg's (start_new_session)
    assert seen["pgid"] == seen["pid"] != os.getpgid(0)
    run = json.loads((res.scene / "run.json").read_text())
    assert run["pid"] == seen["pid"] == res.attempt.pid
    assert run["round_id"] == ROUND and run["attempt"] == 1
    assert run["argv"][1:] == [str(tmp_path / "standin_job.py"), "fixed"]
    assert run["candidate"]["marker_file"] == "src/model.py"
    assert (res.scene / "sk_meta" / str(seen["pid"])).is_dir()
    log = (res.scene.parent / "runner.log").read_text()
    assert f"stand-in job fixed pid {seen['pid']}" in log and "step 7 done" in log
    assert "step 7 done" in lines


def test_nonzero_exit_with_a_fault_is_a_failed_attempt(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, [sys.executable, str(_standin(tmp_path)), "fault"]))
        rnd = led.round(sid, ROUND)
    assert res.exit == {"status": 7, "signal": None, "timeout": False}
    assert res.status == "failed"
    assert rnd.status == "failed"
    assert "device fault" in (res.scene.parent / "runner.log").read_text()


def test_no_artifacts_is_recorded_r1_not_a_crash(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, [sys.executable, str(_standin(tmp_path)), "nothing"]))
        history = led.status_history("attempt", res.attempt.pk)
    assert res.status == "failed"
    assert res.verify is None
    assert history[-1]["detail"].startswith("R1: no fresh plog or sk_meta of pid")
    assert json.loads((res.scene / "run.json").read_text())["exit"]["status"] == 0


def _pids_dead(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        # a zombie of an exited child counts as dead
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"):
            continue
        return False
    return True


def test_timeout_kills_the_process_group(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    with Ledger(home) as led:
        res = relaunch(
            led, _req(sid, [sys.executable, str(_standin(tmp_path)), "hang"], timeout=3.0, grace=1.0)
        )
    pids = json.loads((res.scene.parent / "source" / "pids.json").read_text())
    assert _pids_dead(pids)  # the job and the child it started
    assert res.status == "timed_out"
    assert res.exit["timeout"] is True and res.exit["signal"] == "SIGTERM"


def _cli_relaunch(home: Path, sid: str, *job: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skdbg.cli",
            "relaunch",
            sid,
            ROUND,
            "--session-dir",
            str(home),
            "--format",
            "json",
            "--",
            *job,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_ctrl_c_kills_the_group_and_records_interrupted(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    proc = _cli_relaunch(home, sid, sys.executable, str(_standin(tmp_path)), "hang")
    pids_file: Path | None = None
    deadline = time.monotonic() + 60
    while pids_file is None and time.monotonic() < deadline:
        found = list((home / sid).glob("*/source/pids.json"))
        pids_file = found[0] if found else None
        if pids_file is None:
            time.sleep(0.05)
    assert pids_file is not None, proc.stderr.read() if proc.stderr else ""
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: SIGINT to skdbg's foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    assert _pids_dead(json.loads(pids_file.read_text()))
    with Ledger(home) as led:
        assert led.attempt(sid, ROUND, 1).status == "interrupted"


def test_materialisation_mismatch_is_invalid_and_the_job_never_runs(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    home, sid = session
    applied = tmp_path / "applied"
    (applied / "src").mkdir(parents=True)
    text = (FAILING / "src" / "model.py").read_text()
    with Ledger(home) as led:
        edits = round_edits(led, sid, ROUND)
    # the user typed the string "None" instead of the None literal (T8)
    lines = text.splitlines(keepends=True)
    at = edits[0].line - 1
    lines.insert(at + 1, edits[1].text.replace("(None)", '("None")') + "\n")
    lines.insert(at, edits[0].text.replace("(None)", '("None")') + "\n")
    (applied / "src" / "model.py").write_text("".join(lines))
    marker = tmp_path / "ran"
    job = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('ran')"]
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, job, source_root=applied, applied=True))
        history = led.status_history("attempt", res.attempt.pk)
    assert res.status == "invalid"
    assert not marker.exists()
    assert history[-1]["detail"].startswith("invalid (materialisation mismatch)")


def test_a_source_tree_that_drifted_from_the_frozen_one_is_invalid(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    home, sid = session
    src = tmp_path / "src_tree"
    (src / "src").mkdir(parents=True)
    drifted = (FAILING / "src" / "model.py").read_text().replace("def forward", "def forward_renamed", 1)
    assert "forward_renamed" in drifted
    (src / "src" / "model.py").write_text(drifted)
    ran = tmp_path / "ran"
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, [sys.executable, "-c", f"open({str(ran)!r}, 'w')"], source_root=src))
    assert res.status == "invalid"
    assert not ran.exists()


def test_missing_argv0_is_exit_3_and_records_nothing(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    r = CliRunner().invoke(
        main, ["relaunch", sid, ROUND, "--session-dir", str(home), "--", str(tmp_path / "no-such-job")]
    )
    assert r.exit_code == 3, r.output
    assert "no-such-job: no such file" in r.output
    r2 = CliRunner().invoke(
        main, ["relaunch", sid, ROUND, "--session-dir", str(home), "--", "no-such-cmd-x7"]
    )
    assert r2.exit_code == 3
    assert "command not found" in r2.output
    with Ledger(home) as led:
        assert led.attempts(sid, ROUND) == []
    assert not (home / sid).exists()


def test_nothing_runs_through_a_shell(session: tuple[Path, str], tmp_path: Path) -> None:
    """Shell syntax in ARGV reaches the job as literal arguments."""
    home, sid = session
    witness = tmp_path / "pwned"
    job = [
        sys.executable,
        "-c",
        "import sys, json; print(json.dumps(sys.argv[1:]))",
        f"; touch {witness}",
        "$HOME",
    ]
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, job))
    assert not witness.exists()
    log = (res.scene.parent / "runner.log").read_text()
    assert json.loads(log.splitlines()[0]) == [f"; touch {witness}", "$HOME"]


def test_a_base_round_is_retested_as_first_launched(session: tuple[Path, str], tmp_path: Path) -> None:
    """No proposal: the round's candidate re-runs unchanged (its debug options too) as its next attempt."""
    home, sid = session
    job = [sys.executable, str(_standin(tmp_path)), "fault"]
    with Ledger(home) as led:
        assert round_edits(led, sid, "EX1-BASE") == []
        res = relaunch(led, RelaunchRequest(sid, "EX1-BASE", job, None, None))
        with pytest.raises(NotFound, match="EX1-BASE-X9"):
            relaunch(led, RelaunchRequest(sid, "EX1-BASE-X9", job, None, None))
    assert (res.attempt.round_id, res.attempt.no, res.status, res.verify) == ("EX1-BASE", 2, "failed", None)
    seen = json.loads((res.scene.parent / "source" / "job_seen.json").read_text())
    # the bundled failure ran with debug_op_exec_trace (its run.json): a retest keeps it
    frozen_run = json.loads((FAILING / "run.json").read_text())
    assert (
        seen["options"]["super_kernel_debug_options"] == frozen_run["candidate"]["super_kernel_debug_options"]
    )
    assert seen["options"]["super_kernel_debug_options"] != {}
    ran = res.scene.parent / "source" / "src" / "model.py"
    assert ran.read_bytes() == (FAILING / "src" / "model.py").read_bytes()
    assert "retest" in res.next_step


def test_debug_options_on_the_command_line_reach_the_job(session: tuple[Path, str], tmp_path: Path) -> None:
    home, sid = session
    r = CliRunner().invoke(
        main,
        [
            "relaunch",
            sid,
            ROUND,
            "--session-dir",
            str(home),
            "--debug",
            "debug_op_exec_trace=1",
            "--format",
            "json",
            "--",
            sys.executable,
            str(_standin(tmp_path)),
            "fixed",
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    seen = json.loads((Path(doc["scene"]).parent / "source" / "job_seen.json").read_text())
    assert seen["options"] == {
        "super_kernel_debug_options": {"debug_op_exec_trace": 1},
        "super_kernel_optimize_options": {},
    }
    run = json.loads((Path(doc["scene"]) / "run.json").read_text())
    assert run["candidate"]["super_kernel_debug_options"] == {"debug_op_exec_trace": 1}
    # a clean-looking pass under debug options is no proof (F9): V1 fails for an undeclared diagnostic
    gates = {g["gate"]: g["result"] for g in doc["verify"]["verification"]}
    assert gates["V1"] == "failed"
    assert doc["status"] == "failed"


def test_a_narrowing_round_is_frozen_and_analysed_without_v_gates(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    home, sid = session
    with Ledger(home) as led:
        rid, _ = propose(led, sid, "EX1-BASE", kind="narrowing")
        assert rid == "EX1-BASE-N1"
        assert round_edits(led, sid, rid) == []  # a narrowing round from next steps declares no marker edit
        job = [sys.executable, str(_standin(tmp_path)), "fixed"]
        clean = relaunch(led, RelaunchRequest(sid, rid, job, None, None))
        faulty = relaunch(led, RelaunchRequest(sid, rid, [*job[:-1], "fault"], None, None))
        gates = led.gates(clean.attempt.pk) + led.gates(faulty.attempt.pk)
    assert (clean.status, clean.verify) == ("passed", None)
    assert (faulty.status, faulty.verify) == ("failed", None)
    assert gates == []
    # the source ran unchanged: the failed attempt's frozen marker file, byte for byte
    ran = clean.scene.parent / "source" / "src" / "model.py"
    assert ran.read_bytes() == (FAILING / "src" / "model.py").read_bytes()


def test_source_tree_copy_and_applied_tree_both_verify(session: tuple[Path, str], tmp_path: Path) -> None:
    """--source: a copy of the user's tree gets the edits (the tree itself is untouched); --applied: the
    user's tree already holds them and the job runs there."""
    home, sid = session
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "model.py").write_bytes((FAILING / "src" / "model.py").read_bytes())
    (tree / "configs").mkdir()
    (tree / "configs" / "e7.yaml").write_text("steps: 7\n")
    pristine = _tree_hashes(tree)
    job = [sys.executable, str(_standin(tmp_path)), "fixed"]
    with Ledger(home) as led:
        copied = relaunch(led, _req(sid, job, source_root=tree))
        edits = round_edits(led, sid, ROUND)
    assert copied.status == "passed"
    assert _tree_hashes(tree) == pristine
    assert (copied.scene.parent / "source" / "configs" / "e7.yaml").read_text() == "steps: 7\n"
    from skdbg.parsers.markers import apply_edits_text

    (tree / "src" / "model.py").write_text(
        apply_edits_text((FAILING / "src" / "model.py").read_text(), edits)
    )
    with Ledger(home) as led:
        applied = relaunch(led, _req(sid, job, source_root=tree, applied=True))
    assert applied.status == "passed"
    assert applied.attempt.no == 2
    assert json.loads((tree / "job_seen.json").read_text())["pid"] == applied.attempt.pid


def test_candidate_folder_gives_env_and_options_and_must_be_of_this_round(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    home, sid = session
    analysis = tmp_path / "analysis.json"
    r = CliRunner().invoke(main, ["analyze", str(FAILING), "--format", "json", "--no-cache"])
    assert r.exit_code == 0, r.output
    analysis.write_text(r.stdout)
    cand = tmp_path / "cand"
    r = CliRunner().invoke(
        main, ["codegen", "candidate", str(FAILING), "--proposal", str(analysis), "-o", str(cand)]
    )
    assert r.exit_code == 0, r.output
    manifest = json.loads((cand / "candidate.json").read_text())
    manifest["relaunch"]["compile_options"]["super_kernel_optimize_options"] = {"auto_op_parallel": 1}
    (cand / "candidate.json").write_text(json.dumps(manifest))
    job = [sys.executable, str(_standin(tmp_path)), "fixed"]
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, job, candidate=cand))
    seen = json.loads((res.scene.parent / "source" / "job_seen.json").read_text())
    assert seen["options"]["super_kernel_optimize_options"] == {"auto_op_parallel": 1}
    assert seen["options"]["super_kernel_debug_options"] == {}
    run = json.loads((res.scene / "run.json").read_text())
    assert run["candidate"]["super_kernel_optimize_options"] == {"auto_op_parallel": 1}
    # a candidate of another change is refused before anything runs
    manifest["change"]["marker_edits"] = manifest["change"]["marker_edits"][:1]
    (cand / "candidate.json").write_text(json.dumps(manifest))
    with Ledger(home) as led:
        n = len(led.attempts(sid, ROUND))
        with pytest.raises(RelaunchError, match=r"change\.marker_edits: not the edits of this round"):
            relaunch(led, _req(sid, job, candidate=cand))
        assert len(led.attempts(sid, ROUND)) == n


def test_a_launcher_job_is_collected_through_its_child(session: tuple[Path, str], tmp_path: Path) -> None:
    """ARGV is a launcher (torchrun-like): the evidence is its child's, found in the fresh log folder."""
    home, sid = session
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, [sys.executable, str(_standin(tmp_path)), "launcher"]))
    child = json.loads((res.scene.parent / "source" / "job_seen.json").read_text())["pid"]
    run = json.loads((res.scene / "run.json").read_text())
    assert res.status == "passed"
    assert res.attempt.pid == run["pid"] == child
    assert run["launcher_pid"] != child
    assert any(f"collected its child process {child}" in n for n in res.notes)


def test_a_job_that_ignores_sigterm_is_killed_after_the_grace(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    home, sid = session
    job = [sys.executable, str(_standin(tmp_path)), "stubborn"]
    with Ledger(home) as led:
        res = relaunch(led, _req(sid, job, timeout=3.0, grace=0.5))
    assert _pids_dead(json.loads((res.scene.parent / "source" / "pids.json").read_text()))
    assert (res.status, res.exit) == ("timed_out", {"status": None, "signal": "SIGKILL", "timeout": True})
