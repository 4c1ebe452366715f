"""Issue 17 acceptance: a 64-rank job where rank 17 faults first and 40 ranks follow with timeouts."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fleet_support import CLEAN, FOLLOWERS, INDEPENDENT, LEADER, NO_EVIDENCE, Job, build_job

from skdbg.cli import main
from skdbg.fleet import decide, discover, scan_all, scan_doc


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    return build_job(tmp_path_factory.mktemp("fleet"))


def _by_rank(doc: dict) -> dict[int, dict]:
    return {r["rank"]: r for r in doc["ranks"]}


def _scan(job: Job, *extra: str) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["scan", str(job.root), "--format", "json", *extra])
    return res.exit_code, json.loads(res.stdout)


def test_names_rank_17_and_groups_the_40_followers(job: Job) -> None:
    code, doc = _scan(job, "--workers", "2")
    assert code == 0
    assert doc["schema"] == "skdbg.scan/1"
    assert doc["first_failing"]["rank"] == LEADER
    assert doc["first_failing"]["tie"] == []
    assert doc["first_failing"]["next"] == f"skdbg analyze {job.folders[LEADER]}"
    ranks = _by_rank(doc)
    assert sorted(ranks) == list(range(64))
    followers = {ranks_i["rank"] for ranks_i in (doc["ranks"][i] for i in doc["followers"])}
    assert followers == set(FOLLOWERS)
    # independent SK faults are never followers, even rank 30 which also timed out afterwards
    assert {r for r, x in ranks.items() if x["status"] == "own_fault"} == set(INDEPENDENT)
    assert ranks[30]["follower_lines"], "rank 30's own timeout lines are still reported"
    assert {r for r, x in ranks.items() if x["status"] == "clean"} == set(CLEAN)
    assert {doc["ranks"][i]["rank"] for i in doc["no_evidence"]} == set(NO_EVIDENCE)
    assert doc["counts"] == {
        "first_failing": 1,
        "own_fault": 3,
        "follower": 40,
        "clean": 18,
        "no_evidence": 2,
        "unreadable": 0,
    }


def test_the_leaders_signature_comes_from_its_handler_block(job: Job) -> None:
    _, doc = _scan(job)
    leader = _by_rank(doc)[LEADER]
    # the emulator's model: culprit k2 (QuantMatmul), one fused SK, one exception core, run.json present
    assert leader["status"] == "first_failing"
    assert leader["fault_kind"] == "sk"
    assert leader["sk_entry"] == "sk_entry_mix11"
    assert leader["child"].startswith("QuantMatmul_")
    assert leader["cores"] == 1
    assert leader["error_code"] == "507035"
    assert leader["gate"] == "complete" and leader["evidence"] == "plog+sk_meta+run.json"
    assert leader["device"] == LEADER % 8 and leader["device_source"] == "run.json"
    assert leader["fault_time"].startswith("2026-06-10T14:05:0")


def test_each_follower_cites_the_lines_that_made_it_one(job: Job) -> None:
    _, doc = _scan(job)
    ranks = _by_rank(doc)
    rank = FOLLOWERS[0]
    lines = ranks[rank]["follower_lines"]
    plog = next((job.folders[rank] / "debug" / "plog").glob("plog-*.log"))
    # follower_lines() writes: 1 GE launch (noise), 2-3 HCCL Task run failed, 4 EI0002 text, 5 task abort
    assert [(x["at"], x["pattern"]) for x in lines] == [
        (f"{plog}:2", "hccl_task_timeout"),
        (f"{plog}:3", "hccl_task_timeout"),
        (f"{plog}:4", "hccl_notify_timeout"),
        (f"{plog}:5", "task_abort"),
    ]
    groups = {tuple(g["key"]): g for g in doc["groups"]}
    fg = groups[("follower", "hccl_notify_timeout,hccl_task_timeout,task_abort")]
    assert fg["count"] == 40 and sorted(fg["ranks"]) == sorted(FOLLOWERS)


def test_rank_ids_say_where_they_came_from(job: Job) -> None:
    _, doc = _scan(job)
    got = {r["rank"]: r["rank_source"] for r in doc["ranks"]}
    assert got == job.rank_source
    assert set(got.values()) == {"run.json", "plog", "folder"}


def test_local_pool_and_dask_local_cluster_agree(job: Job) -> None:
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (skdbg[dask])")
    found = discover([str(job.root)])
    local = scan_doc(decide(scan_all(found.ranks, workers=2)), roots=[str(job.root)], problems=[], engine="x")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        remote_sigs = scan_all(found.ranks, dask=client)
        # the CLI path: the scheduler's address, a client of skdbg's own
        res = CliRunner().invoke(
            main, ["scan", str(job.root), "--dask", cluster.scheduler_address, "--format", "json"]
        )
    assert res.exit_code == 0, res.output
    via_cli = json.loads(res.stdout)
    assert via_cli["engine"] == f"dask {cluster.scheduler_address}"
    assert via_cli["first_failing"]["rank"] == LEADER and len(via_cli["followers"]) == 40
    remote = scan_doc(decide(remote_sigs), roots=[str(job.root)], problems=[], engine="x")
    assert remote == local
    assert remote["first_failing"]["rank"] == LEADER
    assert len(remote["followers"]) == 40


def test_output_folder_holds_scan_json_and_ranks_csv(job: Job, tmp_path: Path) -> None:
    out = tmp_path / "scan-out"
    res = CliRunner().invoke(main, ["scan", str(job.root), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "first failing: rank 17" in res.stdout
    # layout of build_job: 6 run.json (4 scenes, 2 empty ranks), 10 HCCL init lines, 48 rank-named folders
    assert "rank ids from: folder 48, plog 10, run.json 6" in res.stdout
    assert f"next: skdbg analyze {job.folders[LEADER]}" in res.stdout
    doc = json.loads((out / "scan.json").read_text())
    assert doc["first_failing"]["rank"] == LEADER
    rows = list(csv.DictReader(io.StringIO((out / "ranks.csv").read_text())))
    assert len(rows) == 64
    assert {int(r["rank"]) for r in rows if r["status"] == "follower"} == set(FOLLOWERS)
    again = CliRunner().invoke(main, ["scan", str(job.root), "-o", str(out)])
    assert again.exit_code == 2  # an existing non-empty output folder is refused


def test_a_glob_root_selects_ranks(job: Job) -> None:
    res = CliRunner().invoke(main, ["scan", str(job.root / "node0" / "rank*"), "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert sorted(int(r["rank"]) for r in rows) == [r for r in range(8) if r not in (LEADER, *INDEPENDENT)]


def test_dask_without_the_extra_is_a_usage_error(job: Job) -> None:
    code = (
        "import sys\n"
        "sys.modules['distributed'] = None  # as if skdbg[dask] were not installed\n"
        "from skdbg.cli import main\n"
        f"main(['scan', {str(job.root)!r}, '--dask', 'tcp://127.0.0.1:1'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "pip install 'skdbg[dask]'" in proc.stderr


def test_an_unreachable_scheduler_is_exit_3(job: Job) -> None:
    pytest.importorskip("distributed", reason="dask.distributed is not installed (skdbg[dask])")
    res = CliRunner().invoke(main, ["scan", str(job.root), "--dask", "tcp://127.0.0.1:9"])
    assert res.exit_code == 3
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in res.stderr
