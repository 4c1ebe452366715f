"""A synthetic multi-rank job for the scan tests: emulator scenes for ranks that fault, hand-written
plogs for followers (HCCL / runtime follow-up wording as real logs print it) and clean ranks.

The expectations of the tests are written from this layout, not from the scanner's output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.parsers.plog_line import format_plog_ts
from skdbg.sim import load_model, write_scene
from skdbg.sim.models import synthetic, write_model

LEADER = 17
INDEPENDENT = (5, 30, 50)  # later SK faults of their own (rank 30 also logs a timeout afterwards)
_OTHERS = [r for r in range(64) if r != LEADER and r not in INDEPENDENT]
FOLLOWERS = tuple(_OTHERS[:40])
CLEAN = tuple(_OTHERS[40:58])
NO_EVIDENCE = tuple(_OTHERS[58:])
#: the emulator's fault happens 146 s after a start of 14:00:58 + seed seconds (skdbg.sim.render.Clock.fixed)
LEADER_SEED = 100
INDEPENDENT_SEEDS = {5: 160, 30: 220, 50: 300}
GROUP = "10.0.0.1%eth0_60000_0_1781097610000000"


def ts(t: datetime) -> str:
    return format_plog_ts(t)


def hccl_init(pid: int, t: datetime, rank: int) -> str:
    """HCCL's communicator-init line in the run log (states ranks[] and rank[])."""
    return (
        f"[INFO] HCCL({pid},python3):{ts(t)} [op_base.cc:1292] [{pid}]Entry-HcclCommInitRootInfoInner:"
        f"ranks[64], rank[{rank}], rootinfo: host ip[10.0.0.1] port[60000] nicDeploy[1] identifier[{GROUP}], "
        f"deviceLogicId[{rank % 8}]"
    )


def follower_lines(pid: int, t: datetime, rank: int, remote: int = LEADER) -> list[str]:
    """What a rank waiting in an AllReduce on a dead peer logs when HCCL_EXEC_TIMEOUT expires."""
    return [
        f"[INFO] GE({pid},python3):{ts(t - timedelta(seconds=1800))} [davinci_model.cc:3219]{pid + 3} "
        f"LaunchKernel: [Launch] op MatMulV3_380 type MatMulV3 launched on stream 60, iteration 32318",
        f"[ERROR] HCCL({pid},python3):{ts(t)} [task_exception_handler.cc:908] [{pid}][TaskExecStage][Timeout]"
        f"[Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_{GROUP}], "
        f"AlgType(level 0-1-2):[fullmesh-ring-NHR].",
        f"[ERROR] HCCL({pid},python3):{ts(t + timedelta(microseconds=12))} [task_exception_handler.cc:771] "
        f"[{pid}][TaskExecStage][Timeout][Host]Task run failed, groupRank information is group:[{GROUP}], "
        f"user define information[], rankSize[64], rankId[{rank}].",
        f"EI0002: [PID: {pid}] {ts(t + timedelta(microseconds=40))} The wait execution of the Notify register "
        f"times out. Reason: The Notify register has not received the Notify record from remote rank "
        f"[{remote}].base information: [streamID:[2], taskID[21], tag[AllReduce_{GROUP}], "
        f"AlgType(level 0-1-2):[fullmesh-ring-NHR].] task information: []",
        f"[ERROR] RUNTIME({pid},python3):{ts(t + timedelta(milliseconds=2))} [stream.cc:1509]{pid} "
        f"rtStreamSynchronize:ErrCode=107022, desc=[task abort], InnerCode=0x7150050",
    ]


def clean_lines(pid: int, t: datetime) -> list[str]:
    return [
        f"[INFO] HCCL({pid},python3):{ts(t)} [hccl_communicator.cc:153][{pid}]Entry-HcclAllReduce:"
        f"tag[AllReduce_{GROUP}], count[454515], dataType[float16], op[sum], localRank[6], streamId[35]",
        f"[INFO] RUNTIME({pid},python3):{ts(t + timedelta(seconds=1))} [logger.cc:488]{pid} StreamSynchronize:"
        f"[EXEC][EXEC]Stream synchronize succeeded, stream_id=11, cost=2964us",
    ]


def sk_fault_lines(pid: int, t: datetime, device: int = 0, entry: str = "sk_entry_mix11") -> list[str]:
    """The runtime's own-fault lines (kernel execute failed naming an SK entry)."""
    return [
        f"[ERROR] RUNTIME({pid},python3):{ts(t)} [davinci_kernel_task.cc:1200]{pid} PreCheckTaskErr:[INIT][DEFAULT]"
        f"An error occurred in the kernel task, retCode=0x31, [vector core exception].",
        f"[ERROR] RUNTIME({pid},python3):{ts(t + timedelta(microseconds=37))} [davinci_kernel_task.cc:1639]{pid} "
        f"PrintErrorInfoForDavinciTask:[DFX_INFO]Aicore kernel execute failed, device_id={device}, stream_id=2, "
        f"report_stream_id=2, task_id=1, flip_num=0, fault kernel_name={entry}, fault kernel info ext=none, "
        f"program id=1, hash=9430089888170931922.",
    ]


def write_plog(folder: Path, pid: int, lines: list[str], stamp: str = "20260610140058000") -> Path:
    path = folder / f"plog-{pid}_{stamp}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Job:
    root: Path
    leader_fault: datetime
    folders: dict[int, Path] = field(default_factory=dict)
    rank_source: dict[int, str] = field(default_factory=dict)


def _sim_scene(tmp: Path, out: Path, rank: int, seed: int, culprit: int) -> None:
    doc, src = synthetic(6, culprit, "fused")
    doc["rank"], doc["device"] = rank, rank % 8
    model_dir = write_model(tmp / f"model-{rank}", doc, src)
    write_scene(load_model(model_dir), out, seed=seed)


def build_job(base: Path) -> Job:
    """The 64-rank job of issue 17's acceptance (module constants say which rank is what)."""
    root = base / "job"
    leader_fault = datetime(2026, 6, 10, 14, 0, 58) + timedelta(seconds=LEADER_SEED + 146)
    job = Job(root, leader_fault)
    for rank, seed, culprit in [(LEADER, LEADER_SEED, 2), *((r, s, 4) for r, s in INDEPENDENT_SEEDS.items())]:
        folder = root / "scenes" / f"s{rank:02d}"
        _sim_scene(base / "models", folder, rank, seed, culprit)
        job.folders[rank], job.rank_source[rank] = folder, "run.json"
    # rank 30 also times out in a collective after its own fault: still its own fault, not a follower
    plog30 = next((job.folders[30] / "log" / "plog").glob("plog-*.log"))
    late = leader_fault + timedelta(seconds=1900)
    with plog30.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(follower_lines(31000, late, 30)[1:]) + "\n")
    t_timeout = leader_fault + timedelta(seconds=1800)
    for k, rank in enumerate(FOLLOWERS):
        pid = 40000 + rank
        t = t_timeout + timedelta(milliseconds=7 * k)
        if k < 20:  # one folder per rank under its host: node<k>/rank<N>/ (ASCEND_PROCESS_LOG_PATH per rank)
            folder = root / f"node{rank // 8}" / f"rank{rank}"
            write_plog(folder / "debug" / "plog", pid, follower_lines(pid, t, rank))
            job.rank_source[rank] = "folder"
        elif k < 30:  # rank_<N> with the plog right in it
            folder = root / f"host{rank // 8}" / f"rank_{rank}"
            write_plog(folder, pid, follower_lines(pid, t, rank))
            job.rank_source[rank] = "folder"
        else:  # a folder without a rank in its name: the rank comes from HCCL's init line
            folder = root / "misc" / f"p{pid}"
            write_plog(
                folder / "run" / "plog", pid, [hccl_init(pid, leader_fault - timedelta(seconds=120), rank)]
            )
            write_plog(
                folder / "debug" / "plog", pid, follower_lines(pid, t, rank), stamp="20260610140100000"
            )
            job.rank_source[rank] = "plog"
        job.folders[rank] = folder
    for rank in CLEAN:
        folder = root / f"node{rank // 8}" / f"rank{rank}"
        write_plog(folder / "debug" / "plog", 50000 + rank, clean_lines(50000 + rank, leader_fault))
        job.folders[rank], job.rank_source[rank] = folder, "folder"
    for rank in NO_EVIDENCE:
        folder = root / f"node{rank // 8}" / f"rank{rank}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps({"rank": rank, "device": rank % 8, "pid": 60000 + rank}))
        job.folders[rank], job.rank_source[rank] = folder, "run.json"
    return job
