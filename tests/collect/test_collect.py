"""``skdbg collect`` on a fake machine (tests/collect/machine_support.py): listing, picking, copying exactly
one process's files, run.json from the evidence, the missing-part messages and the exit codes.

Expectations are written from the spec and the machine's own description (pids, times, device, entry
names), never from collect's formatter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from machine_support import CLEAN, DEVICE, NEW_FAIL, OLD_FAIL, Machine, build_machine

from skdbg import cli_collect
from skdbg.cli import main
from skdbg.parsers.plog import read_plog
from skdbg.parsers.run_identity import parse_run_json
from skdbg.scenebuilder.scene import build_scene

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def run(*args: str, cwd: Path | None = None, stdin: str | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        res = runner.invoke(main, ["collect", *args], input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return build_machine(tmp_path)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}"


def collect_pid(m: Machine, pid: int, out: Path, *extra: str, meta: str = "") -> tuple[int, str, str]:
    """``skdbg collect --pid PID`` with the machine's log root and working directory (or its ``meta`` subfolder)."""
    work = m.work / meta if meta else m.work
    return run("--pid", str(pid), "--log-dir", str(m.log), "--sk-meta", str(work), "-o", str(out), *extra)


def _full(m: Machine, pid: int, out: Path) -> tuple[int, str, str]:
    """Every option a user can give."""
    launch = ("--command", "python3 infer.py --config e7.yaml", "--exit-status", "1", "--rank", "3")
    return collect_pid(m, pid, out, "--source-root", str(m.src), *launch)


# ------------------------------------------------------------------------------------------ listing


def test_without_pid_lists_failed_newest_first_and_exits_2_without_a_terminal(
    machine: Machine, tmp_path: Path
) -> None:
    """No --pid, no terminal, no --latest: the two failed pids (not the clean one), newest first, each with
    its kernel fault line; then a one-line hint and exit 2 — nothing written."""
    code, out, err = run("--log-dir", str(machine.log), "-o", str(tmp_path / "s"))
    assert not (tmp_path / "s").exists()
    assert code == 2
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("  ")]
    assert [int(r[0]) for r in rows] == [NEW_FAIL, OLD_FAIL]
    assert str(CLEAN) not in out
    assert "fault kernel_name=sk_entry_mix11," in out.splitlines()[1]
    assert "fault kernel_name=sk_entry_mix11_op_trace" in out.splitlines()[2]
    assert f"plog-{NEW_FAIL}_" in out.splitlines()[1]
    assert len(err.strip().splitlines()) == 1 and "--latest" in err and "--pid" in err


def test_latest_collects_the_newest_failed_process(machine: Machine, tmp_path: Path) -> None:
    code, _, err = run(
        "--log-dir", str(machine.log), "--latest", "--sk-meta", str(machine.work), "-o", str(tmp_path / "s")
    )
    assert code == 0, err
    doc = json.loads((tmp_path / "s" / "run.json").read_text())
    assert doc["pid"] == NEW_FAIL
    names = _files(tmp_path / "s")
    assert f"log/plog/{machine.plogs(NEW_FAIL)[0].name}" in names
    assert not any(str(OLD_FAIL) in n for n in names)


def test_listing_without_output_folder_says_how_to_collect(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even on a terminal, without -o there is nothing to ask for: list, then the one-line hint, exit 2."""
    monkeypatch.setattr(cli_collect, "_stdin_is_terminal", lambda: True)
    code, out, err = run("--log-dir", str(machine.log))
    assert code == 2 and f"  {NEW_FAIL} " in out
    assert err.strip() == (
        "skdbg: error: to collect one, rerun with --pid PID -o SCENE (or --latest -o SCENE for the newest)"
    )


def test_interactive_prompt_picks_the_typed_pid(
    machine: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_collect, "_stdin_is_terminal", lambda: True)
    code, _, err = run(
        "--log-dir", str(machine.log), "--sk-meta", str(machine.work), "-o", str(tmp_path / "s"), stdin=f"{OLD_FAIL}\n"
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "s" / "run.json").read_text())["pid"] == OLD_FAIL


def test_no_failed_process_is_a_usage_error(tmp_path: Path) -> None:
    """Only a clean process under the log root: nothing to list, exit 2 pointing at --pid."""
    m = build_machine(tmp_path, git=False)
    for pid in (OLD_FAIL, NEW_FAIL):
        for p in m.plogs(pid):
            p.unlink()
    code, out, err = run("--log-dir", str(m.log))
    assert code == 2 and out == "" and "no failed process" in err and "--pid" in err


# ------------------------------------------------------------------------------------------ collecting


def test_collects_exactly_the_files_of_the_pid_and_establishes_run_json(
    machine: Machine, tmp_path: Path
) -> None:
    """Full collection of OLD_FAIL: its plog, its device log of this run (not the one of the day before
    with the same pid), sk_meta/48213/ and nothing of the other pids; run.json from the evidence."""
    out = tmp_path / "scene"
    code, stdout, err = _full(machine, OLD_FAIL, out)
    assert code == 0, err
    meta = machine.work / "sk_meta" / str(OLD_FAIL)
    expected = {f"log/plog/{p.name}" for p in machine.plogs(OLD_FAIL)}
    expected |= {
        f"log/debug/device-{DEVICE}/{p.name}" for p in machine.device_logs(OLD_FAIL) if "20260610" in p.name
    }
    expected |= {
        f"sk_meta/{OLD_FAIL}/{p.relative_to(meta).as_posix()}" for p in meta.rglob("*") if p.is_file()
    }
    expected |= {"run.json", "src/model.py"}
    assert _files(out) == expected
    assert {Path(ln).relative_to(out).as_posix() for ln in stdout.splitlines()} == expected
    assert "device-48213_20260609" in err and "note [device log]" in err
    # copies keep the metadata mtimes (F4 reads them for prefix-less files)
    src = next(p for p in meta.rglob("*.log"))
    assert (out / "sk_meta" / str(OLD_FAIL) / src.relative_to(meta)).stat().st_mtime == src.stat().st_mtime

    doc = json.loads((out / "run.json").read_text())
    records = read_plog(machine.plogs(OLD_FAIL)).records
    times = [r.ts for r in records if r.ts is not None]
    # the file-name stamp is the log's creation, before its first line (artifacts.md §1.1)
    stamp = machine.plogs(OLD_FAIL)[0].stem.split("_")[1]
    times.append(datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(microsecond=int(stamp[14:]) * 1000))
    head = git("rev-parse", "HEAD", cwd=machine.src)
    assert doc["pid"] == OLD_FAIL and doc["device"] == DEVICE and doc["rank"] == 3
    assert doc["start"] == _iso(min(times)) and doc["end"] == _iso(max(times))
    assert doc["command"] == "python3 infer.py --config e7.yaml" and doc["exit"] == {"status": 1}
    assert doc["failure_phase"] == "device_fault"
    assert doc["cwd"] == str(machine.work.resolve())
    cand = doc["candidate"]
    assert cand["source_revision"] == head
    assert cand["super_kernel_debug_options"] == {"debug_op_exec_trace": 1}  # entry sk_entry_mix11_op_trace
    assert cand["marker_file"] == "src/model.py" and cand["scope_names"] == ["decoder.layer.0.mlp"]
    assert (out / "src" / "model.py").read_bytes() == (machine.src / "model.py").read_bytes()
    # the run identity parser reads every field back, with nothing unrecognised or invalid
    parsed = parse_run_json(out / "run.json")
    assert parsed.gaps == [] and parsed.unrecognized == []
    assert parsed.identity.start == min(times).replace(microsecond=min(times).microsecond // 1000 * 1000)
    assert parsed.identity.candidate is not None and parsed.identity.candidate.diagnostic is True
    # nothing the user could have supplied is reported missing; the probe (G4) is the gate's own finding
    assert "missing [" not in err
    assert "gate G4: no archived environment probe" in err

    code, text, _ = CliRunnerAnalyze(out)
    assert code == 0 and "high (C3 " in text and "SwiGlu_41d9e0" in text


def CliRunnerAnalyze(scene: Path) -> tuple[int, str, str]:  # noqa: N802 - reads as the command it runs
    res = CliRunner().invoke(main, ["analyze", str(scene)], catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_clean_entry_records_empty_debug_options(machine: Machine, tmp_path: Path) -> None:
    code, _, err = _full(machine, NEW_FAIL, tmp_path / "s")
    assert code == 0, err
    assert (
        json.loads((tmp_path / "s" / "run.json").read_text())["candidate"]["super_kernel_debug_options"] == {}
    )


def test_link_makes_hard_links_to_the_originals(machine: Machine, tmp_path: Path) -> None:
    """--link: every collected file is the original's inode (a regular file inside the scene, same mtime),
    except run.json, which collect writes."""
    out = tmp_path / "linked"
    code, _, err = collect_pid(machine, OLD_FAIL, out, "--link")
    assert code == 0, err
    plog = out / "log" / "plog" / machine.plogs(OLD_FAIL)[0].name
    assert not plog.is_symlink() and plog.samefile(machine.plogs(OLD_FAIL)[0])
    meta = machine.work / "sk_meta" / str(OLD_FAIL)
    for src in meta.rglob("*"):
        if src.is_file():
            assert (out / "sk_meta" / str(OLD_FAIL) / src.relative_to(meta)).samefile(src)
    assert (out / "run.json").stat().st_nlink == 1  # written, not linked
    assert "note [link]" not in err


def test_link_falls_back_to_copies_and_says_so(
    machine: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file system (EXDEV): the files are copied, and a note says how many and why."""
    import errno

    from skdbg.collect import build

    def cross_device(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(build.os, "link", cross_device)
    out = tmp_path / "linked"
    code, _, err = collect_pid(machine, OLD_FAIL, out, "--link")
    assert code == 0, err
    plog = out / "log" / "plog" / machine.plogs(OLD_FAIL)[0].name
    assert (
        not plog.samefile(machine.plogs(OLD_FAIL)[0])
        and plog.read_bytes() == machine.plogs(OLD_FAIL)[0].read_bytes()
    )
    n = len(_files(out)) - 1  # all but run.json
    assert f"note [link] {n} file(s) could not be hard-linked and were copied" in err
    assert os.strerror(errno.EXDEV) in err


# ------------------------------------------------------------------------------------------ missing parts


def test_missing_sk_meta_is_reported_under_f3(machine: Machine, tmp_path: Path) -> None:
    """No --sk-meta and no ./sk_meta where collect runs: note F3 (where it looked) and the gate's F3 gap."""
    code, _, err = run(
        "--pid", str(OLD_FAIL), "--log-dir", str(machine.log), "-o", str(tmp_path / "s"), cwd=tmp_path
    )
    assert code == 0, err
    assert f"missing [F3] no sk_meta/{OLD_FAIL}/" in err and "--sk-meta" in err
    assert f"gate F3: no sk_meta/{OLD_FAIL}/ model directory" in err
    assert "ASCEND_OP_COMPILE_SAVE_KERNEL_META=1" in err  # the gate's "next time"
    assert not (tmp_path / "s" / "sk_meta").exists()


def test_missing_device_logs(tmp_path: Path) -> None:
    m = build_machine(tmp_path, git=False, device_logs=False)
    code, _, err = collect_pid(m, OLD_FAIL, tmp_path / "s")
    assert code == 0, err
    assert f"missing [device log] no device log of process {OLD_FAIL}" in err
    doc = json.loads((tmp_path / "s" / "run.json").read_text())
    assert doc["device"] == DEVICE  # from device_id= in the plog


def test_source_root_not_a_git_repository(tmp_path: Path) -> None:
    m = build_machine(tmp_path, git=False)
    code, _, err = collect_pid(m, OLD_FAIL, tmp_path / "s", "--source-root", str(m.src))
    assert code == 0, err
    assert f"missing [G4] source revision unknown: {m.src} is not a git repository" in err
    assert "gate G4: source revision not recorded" in err and "git rev-parse HEAD" in err
    assert "source_revision" not in json.loads((tmp_path / "s" / "run.json").read_text())["candidate"]


@needs_git
def test_uncommitted_changes_are_recorded_as_dirty(machine: Machine, tmp_path: Path) -> None:
    (machine.src / "model.py").write_text((machine.src / "model.py").read_text() + "# local edit\n")
    code, _, err = _full(machine, OLD_FAIL, tmp_path / "s")
    assert code == 0
    rev = json.loads((tmp_path / "s" / "run.json").read_text())["candidate"]["source_revision"]
    assert rev == git("rev-parse", "HEAD", cwd=machine.src) + "-dirty" and "uncommitted changes" in err


def test_no_source_root_no_command_no_exit_status_no_rank(machine: Machine, tmp_path: Path) -> None:
    """Only the pid and the folders: every launch fact is reported missing with the option that supplies
    it, and the gate explains G1 (command, rank) and G4 (revision) in its own words."""
    code, _, err = collect_pid(machine, OLD_FAIL, tmp_path / "s")
    assert code == 0, err
    assert "missing [G1] launch command unknown" in err and "--command" in err
    assert "missing [G1] rank unknown" in err and "--rank" in err
    assert "missing [exit status]" in err and "--exit-status" in err
    assert "missing [G4] no --source-root given" in err
    assert "gate G1: run.json lacks command, rank" in err
    assert "gate G4: source revision not recorded" in err
    doc = json.loads((tmp_path / "s" / "run.json").read_text())
    assert not {"command", "rank", "exit"} & set(doc)


def test_several_marker_files_are_not_guessed(machine: Machine, tmp_path: Path) -> None:
    shutil.copy2(machine.src / "model.py", machine.src / "model_copy.py")
    code, _, err = _full(machine, OLD_FAIL, tmp_path / "s")
    assert code == 0
    assert "missing [marker file] 2 files (model.py, model_copy.py)" in err
    assert "marker_file" not in json.loads((tmp_path / "s" / "run.json").read_text())["candidate"]


def test_a_pid_without_plogs_but_with_sk_meta_is_collected_with_f1(tmp_path: Path) -> None:
    """The plog of the pid is gone (no device log either), its sk_meta is there: collected, F1 reported."""
    m = build_machine(tmp_path, git=False, device_logs=False)
    for p in m.plogs(OLD_FAIL):
        p.unlink()
    code, _, err = collect_pid(m, OLD_FAIL, tmp_path / "s", meta="sk_meta")
    assert code == 0, err
    assert (
        f"missing [F1] no plog-{OLD_FAIL}_<stamp>.log" in err
        and f"gate F1: no plog of process {OLD_FAIL}" in err
    )


# ------------------------------------------------------------------------------------------ exit codes


def test_existing_output_folder_exit_2_and_force_replaces(machine: Machine, tmp_path: Path) -> None:
    out = tmp_path / "s"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    code, stdout, err = collect_pid(machine, OLD_FAIL, out)
    assert code == 2 and stdout == ""
    assert (
        err.strip()
        == f"skdbg: error: output folder already exists: {out} is not empty (use --force to replace it)"
    )
    assert _files(out) == {"mine.txt"}
    code, _, err = collect_pid(machine, OLD_FAIL, out, "--force")
    assert code == 0, err
    assert "mine.txt" not in _files(out) and (out / "run.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left


def test_force_never_replaces_the_folder_being_collected(machine: Machine) -> None:
    """`-o <the log folder's parent> --force` would delete the logs it collects: refused, exit 2."""
    before = _files(machine.log)
    code, _, err = collect_pid(machine, OLD_FAIL, machine.log.parent, "--force")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert _files(machine.log) == before


def test_usage_and_input_errors(machine: Machine, tmp_path: Path) -> None:
    out = str(tmp_path / "s")
    code, _, err = run("--pid", "7", "--latest", "--log-dir", str(machine.log), "-o", out)
    assert code == 2 and "either --pid or --latest" in err
    code, _, err = run("--pid", str(OLD_FAIL), "--log-dir", str(machine.log))
    assert code == 2 and "-o SCENE is required" in err
    code, _, err = run("--pid", str(OLD_FAIL), "--log-dir", str(tmp_path / "nope"), "-o", out)
    assert code == 3 and "nope: expected a CANN log folder" in err and len(err.strip().splitlines()) == 1
    code, _, err = collect_pid(machine, 424242, Path(out))
    assert code == 3 and "plog-424242_<stamp>.log" in err and "found none" in err
    assert not Path(out).exists()  # a failed run leaves nothing behind
    code, _, err = collect_pid(machine, OLD_FAIL, Path(out), "--source-root", str(tmp_path / "nosrc"))
    assert code == 3 and "--source-root" in err and not Path(out).exists()
    code, _, err = collect_pid(machine, OLD_FAIL, Path(out), meta="no-such-folder")
    assert (
        code == 3 and "no-such-folder: expected the run's working directory" in err and not Path(out).exists()
    )


def test_default_log_dir_is_ascend_process_log_path(
    machine: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("ASCEND_PROCESS_LOG_PATH", str(machine.log))
    code, out, _ = run()
    assert code == 2 and f"under {machine.log}" in out  # ASCEND_PROCESS_LOG_PATH wins
    monkeypatch.delenv("ASCEND_PROCESS_LOG_PATH")
    monkeypatch.setenv("ASCEND_WORK_PATH", str(machine.log.parent))
    code, out, _ = run()
    assert code == 2 and f"under {machine.log.parent}" in out and f"  {NEW_FAIL} " in out
    monkeypatch.delenv("ASCEND_WORK_PATH")
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/ascend/log is machine.log's place under tmp_path
    code, out, _ = run()
    assert code == 2 and f"under {tmp_path / 'ascend' / 'log'}" in out


def test_sk_meta_may_name_the_pid_folder_itself(machine: Machine, tmp_path: Path) -> None:
    """--sk-meta work/sk_meta/48213: same files as --sk-meta work; the run's cwd is its grandparent."""
    code, _, err = collect_pid(machine, OLD_FAIL, tmp_path / "s", meta=f"sk_meta/{OLD_FAIL}")
    assert code == 0, err
    want = {
        p.relative_to(machine.work).as_posix()
        for p in (machine.work / "sk_meta" / str(OLD_FAIL)).rglob("*.o")
    }
    assert want and want <= _files(tmp_path / "s")
    assert json.loads((tmp_path / "s" / "run.json").read_text())["cwd"] == str(machine.work.resolve())


def test_a_long_silence_between_plogs_of_one_pid_is_pointed_out(machine: Machine, tmp_path: Path) -> None:
    """A process of the day before got pid 48213 too: its plog is collected (no silent guess about which
    process is meant), and the note names the file and the silence so the user can drop it."""
    day_before = replace(machine.specs[CLEAN], pid=OLD_FAIL, seed=3)
    day_before = replace(
        day_before,
        run_start=machine.specs[OLD_FAIL].run_start - timedelta(days=1),
        run_end=machine.specs[OLD_FAIL].run_end - timedelta(days=1),
        build_ts=machine.specs[OLD_FAIL].build_ts - timedelta(days=1),
        fault_ts=machine.specs[OLD_FAIL].fault_ts - timedelta(days=1),
    )
    older = build_scene(day_before, tmp_path / "older").plog
    (machine.log / "run" / "plog").mkdir(parents=True)
    shutil.move(older, machine.log / "run" / "plog" / older.name)
    code, _, err = collect_pid(machine, OLD_FAIL, tmp_path / "s")
    assert code == 0, err
    current = machine.plogs(OLD_FAIL)[0].name
    assert f"note [F2] {current} was created 23:5" in err  # a day minus the older run's length
    assert {f"log/plog/{older.name}", f"log/plog/{current}"} <= _files(tmp_path / "s")
    assert json.loads((tmp_path / "s" / "run.json").read_text())["start"].startswith("2026-06-09T14:00:58")
