"""Scan rules: the clock-skew tie, unreadable ranks, rank-id sources, the follow-up table, no dask import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fleet_support import clean_lines, follower_lines, hccl_init, sk_fault_lines, write_plog

from skdbg.cli import main
from skdbg.fleet.discover import rank_folder, rank_from_name
from skdbg.fleet.patterns import follower_pattern

T0 = datetime(2026, 6, 10, 15, 0, 0)


def _scan(*args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["scan", *args, "--format", "json"])
    return res.exit_code, json.loads(res.stdout)


@pytest.fixture
def tie_job(tmp_path: Path) -> Path:
    """rank 9 faults at T0, rank 4 300 ms later, rank 1 only times out 100 ms before T0, rank 2 2 s later."""
    root = tmp_path / "tie"
    write_plog(root / "rank9", 9009, sk_fault_lines(9009, T0))
    write_plog(root / "rank4", 9004, sk_fault_lines(9004, T0 + timedelta(milliseconds=300)))
    write_plog(root / "rank1", 9001, follower_lines(9001, T0 - timedelta(milliseconds=100), 1, remote=9))
    write_plog(root / "rank2", 9002, sk_fault_lines(9002, T0 + timedelta(seconds=2)))
    return root


def test_ranks_within_the_skew_tie_and_the_lowest_own_fault_wins(tie_job: Path) -> None:
    code, doc = _scan(str(tie_job))  # default tolerance 1000 ms: ranks 9, 4 and 1 tie, rank 2 does not
    assert code == 0
    first = doc["first_failing"]
    assert first["rank"] == 4
    assert sorted(first["tie"]) == [1, 4, 9]
    assert first["tie_rule"] == "lowest rank id"
    status = {r["rank"]: r["status"] for r in doc["ranks"]}
    assert status == {1: "follower", 2: "own_fault", 4: "first_failing", 9: "own_fault"}


def test_a_narrow_skew_keeps_the_earliest_and_prefers_its_own_fault_over_a_follower(tie_job: Path) -> None:
    code, doc = _scan(str(tie_job), "--skew-ms", "150")  # rank 1 (follower, -100 ms) ties with rank 9 only
    assert code == 0
    first = doc["first_failing"]
    assert first["rank"] == 9
    assert sorted(first["tie"]) == [1, 9]
    assert first["tie_rule"] == "own fault over follow-up error"


def test_zero_skew_names_the_earliest_fault_alone(tie_job: Path) -> None:
    _, doc = _scan(str(tie_job), "--skew-ms", "0")
    assert doc["first_failing"]["rank"] == 9 and doc["first_failing"]["tie"] == []


def test_followers_only_name_the_earliest_and_say_no_rank_faulted(tmp_path: Path) -> None:
    root = tmp_path / "hang"
    write_plog(root / "rank3", 7003, follower_lines(7003, T0 + timedelta(seconds=5), 3))
    write_plog(root / "rank6", 7006, follower_lines(7006, T0, 6))
    write_plog(root / "rank7", 7007, clean_lines(7007, T0))
    code, doc = _scan(str(root))
    assert code == 0
    assert doc["first_failing"]["rank"] == 6
    assert doc["first_failing"]["own_fault"] is False
    assert [doc["ranks"][i]["rank"] for i in doc["followers"]] == [3]


def test_an_unreadable_rank_is_listed_with_its_reason_and_the_scan_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    write_plog(root / "rank0", 8000, sk_fault_lines(8000, T0))
    write_plog(root / "rank1", 8001, follower_lines(8001, T0 + timedelta(seconds=1800), 1))
    binary = root / "rank2" / "plog-8002_20260610140058000.log"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    res = CliRunner().invoke(main, ["scan", str(root), "--format", "json"])
    assert res.exit_code == 3
    doc = json.loads(res.stdout)
    assert doc["first_failing"]["rank"] == 0
    assert [doc["ranks"][i]["rank"] for i in doc["followers"]] == [1]
    bad = {u["folder"]: u["reason"] for u in doc["unreadable"]}
    assert list(bad) == [str(root / "rank2")]
    assert str(binary) in bad[str(root / "rank2")] and "binary" in bad[str(root / "rank2")].lower()
    assert "unreadable" in res.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_permission_denied_plog_is_unreadable(tmp_path: Path) -> None:
    root = tmp_path / "perm"
    write_plog(root / "rank0", 8100, sk_fault_lines(8100, T0))
    locked = write_plog(root / "rank1", 8101, sk_fault_lines(8101, T0))
    locked.chmod(0)
    try:
        res = CliRunner().invoke(main, ["scan", str(root), "--format", "json"])
    finally:
        locked.chmod(0o644)
    assert res.exit_code == 3
    doc = json.loads(res.stdout)
    (u,) = doc["unreadable"]
    assert u["folder"] == str(root / "rank1") and "Permission denied" in u["reason"]
    assert doc["first_failing"]["rank"] == 0


def test_nothing_found_and_a_missing_root_are_exit_3(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(main, ["scan", str(tmp_path / "empty")])
    assert res.exit_code == 3 and "no rank found" in res.stderr
    res = CliRunner().invoke(main, ["scan", str(tmp_path / "nope"), "--format", "json"])
    assert res.exit_code == 3
    assert json.loads(res.stdout)["unreadable"] == [
        {"index": None, "folder": str(tmp_path / "nope"), "reason": "no such file or folder"}
    ]


def test_rank_id_from_run_json_beats_the_plog_which_beats_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "ids"
    a = root / "node1" / "rank3"  # folder says 3, plog's HCCL init says 11, run.json says 21
    write_plog(a / "debug" / "plog", 5001, [hccl_init(5001, T0, 11), *clean_lines(5001, T0)])
    (a / "run.json").write_text(json.dumps({"rank": 21, "device": 5, "pid": 5001}))
    b = root / "node1" / "rank_4"  # folder says 4, plog says 12
    write_plog(b / "run" / "plog", 5002, [hccl_init(5002, T0, 12)])
    c = root / "node2" / "rank-5"  # folder only
    write_plog(c / "debug" / "plog", 5003, clean_lines(5003, T0))
    d = root / "node2" / "rank6"  # run.json of another pid: not used for this plog
    write_plog(d / "debug" / "plog", 5004, sk_fault_lines(5004, T0, device=3))
    (d / "run.json").write_text(json.dumps({"rank": 30, "pid": 999}))
    _, doc = _scan(str(root))
    got = {r["folder"]: (r["rank"], r["rank_source"], r["device"], r["device_source"]) for r in doc["ranks"]}
    assert got == {
        str(a): (21, "run.json", 5, "run.json"),
        str(b): (12, "plog", None, "none"),
        str(c): (5, "folder", None, "none"),
        str(d): (6, "folder", 3, "plog"),
    }


def test_rank_folder_of_the_usual_layouts(tmp_path: Path) -> None:
    assert rank_folder(Path("/j/rank3/debug/plog/plog-1_2.log")) == Path("/j/rank3")
    assert rank_folder(Path("/j/rank3/run/plog/plog-1_2.log")) == Path("/j/rank3")
    assert rank_folder(Path("/j/scene/log/plog/plog-1_2.log")) == Path("/j/scene")
    assert rank_folder(Path("/j/host1/plog-1_2.log")) == Path("/j/host1")
    assert rank_from_name(Path("/j/node1/rank3"), Path("/j")) == (3, "/j/node1/rank3")
    assert rank_from_name(Path("/j/Rank_07/x"), Path("/j")) == (7, "/j/Rank_07")
    assert rank_from_name(Path("/j/node1/x"), Path("/j")) == (None, None)
    # a rank-looking folder above the root given is not the user's rank folder
    assert rank_from_name(Path("/rank9/job/x"), Path("/rank9/job")) == (None, None)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times "
            "out. Reason: The Notify register has not received the Notify record from remote rank [unknown].",
            "hccl_notify_timeout",
        ),
        (
            "EI0006: [PID: 176930] 2025-07-01-00:40:04.135.732 Getting socket times out. Reason: Remote Rank "
            "did not send the data in time.",
            "hccl_socket_timeout",
        ),
        (
            "[ERROR] HCCL(2111665,all_reduce_test):2025-10-24-11:18:29.499.235 [task_exception_handler.cc:908] "
            "[2111665][TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2]",
            "hccl_task_timeout",
        ),
        (
            "[ERROR] 2026-07-07-07:20:43 (PID:163686, Device:1, RankID:-1) ERR02005 DIST internal error",
            "dist_internal_error",
        ),
        (
            "    Cluster Exception Location[IP/ID]:[90.90.92.240/1], Arrival Time:[Thu Nov 28 11:56:34 2024], "
            "Discoverer:[90.90.92.240/0], ExceptionType:[Heartbeat Lost Occurred]",
            "hccl_cluster_exception",
        ),
        ("rtStreamSynchronize:ErrCode=107022, desc=[task abort], InnerCode=0x7150050", "task_abort"),
        # not follow-ups: an HCCL entry line, a device fault, a line that only mentions a timeout
        (
            "[INFO] HCCL(1,p):2026-06-10-14:01:03.203.931 [hccl_communicator.cc:153][1]Entry-HcclAllReduce:tag[x]",
            None,
        ),
        ("rtStreamSynchronize ErrCode=507035, desc=[vector core exception], InnerCode=0x715005e", None),
        ("Task run failed once and was retried", None),
    ],
)
def test_the_follow_up_table_matches_real_wording_only(line: str, expected: str | None) -> None:
    got = follower_pattern(line)
    assert (got.id if got else None) == expected


def test_the_default_scan_never_imports_dask(tmp_path: Path) -> None:
    root = tmp_path / "nodask"
    write_plog(root / "rank0", 8200, sk_fault_lines(8200, T0))
    write_plog(root / "rank1", 8201, clean_lines(8201, T0))
    code = (
        "import sys\n"
        "from skdbg.cli import main\n"
        "try:\n"
        f"    main(['scan', {str(root)!r}, '--workers', '2', '--format', 'json'])\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print('IMPORTED', bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "IMPORTED []"
    assert '"first_failing"' in proc.stdout
