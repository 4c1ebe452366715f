"""The committed example model (examples/models/mlp_fused): one scope of nine nodes on two streams,
a ``fused`` fault in SwiGlu (the seventh node, mid-scope, main stream, no event attached).

Expectations from triage.md: a unique PC match in the child confirmed by the task queue → C3 high
(§3.8); the child has no attached edge, so F = {child} and a single-child exclusion is proposed
(§4.4 rule 1) with the None pair (the probe accepts it, §4.5.1 A).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from skdbg.sim import load_model, write_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "models" / "mlp_fused"


def test_example_gives_a_high_verdict_and_a_single_exclusion(tmp_path: Path) -> None:
    model = load_model(EXAMPLE)
    res = write_scene(model, tmp_path / "scene", seed=3)
    assert res.outcome == "device_fault" and res.exit_status == 1 and res.culprit == "swiglu"
    a = analyze_context(open_context(tmp_path / "scene"))
    assert a.fault.kind == "sk" and a.fault.entry == "sk_entry_mix12"
    assert (a.verdict.confidence, a.verdict.rule) == ("high", "C3")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == 106
    assert a.verdict.suspect.task_index == 6
    p = a.proposal
    assert p is not None and p.status == "proposed"
    assert list(p.excluded) == [106] and list(p.collateral) == []
    # the None pair wraps line 21 (the SwiGlu statement) of src/model.py
    assert [(e.line, e.op) for e in p.marker_edits] == [(21, "insert"), (22, "insert")]


def test_job_process_writes_plog_and_sk_meta_where_a_job_would(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(
        ASCEND_PROCESS_LOG_PATH=str(tmp_path / "logs"),
        ASCEND_OP_COMPILE_SAVE_KERNEL_META="1",
        SKDBG_SIM_SEED="5",
    )
    env.pop("SKDBG_NPUGRAPH_EX_OPTIONS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.sim", "job", str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    plogs = list((tmp_path / "logs" / "debug" / "plog").glob("plog-*.log"))
    assert len(plogs) == 1
    pid = int(plogs[0].name.split("-")[1].split("_")[0])
    assert (tmp_path / "sk_meta" / str(pid) / "model_48_1" / "sk_fused_nodes.log").is_file()
    assert f"pid {pid}: device_fault" in proc.stdout
    # nothing else lands in the log root (no staging left behind)
    assert [p.name for p in (tmp_path / "logs" / "debug" / "plog").iterdir()] == [plogs[0].name]


def test_job_without_save_kernel_meta_writes_no_sk_meta(tmp_path: Path) -> None:
    env = dict(os.environ, ASCEND_PROCESS_LOG_PATH=str(tmp_path / "logs"))
    env.pop("ASCEND_OP_COMPILE_SAVE_KERNEL_META", None)
    opts = tmp_path / "opts.json"
    opts.write_text(json.dumps({"super_kernel_debug_options": {"debug_per_op_max_core_num": 1}}))
    env["SKDBG_NPUGRAPH_EX_OPTIONS"] = str(opts)
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.sim", "job", str(EXAMPLE), "--seed", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # per-op max core: every kernel is its own SK, the fusion-induced fault cannot show
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "sk_meta").exists()
    assert "clean" in proc.stdout


def test_job_runs_the_edited_marker_file_given_with_source(tmp_path: Path) -> None:
    """What relaunch does: the proposal's edits applied to a copy, ``--source`` pointing at it."""
    from skdbg.parsers.markers import apply_edits_text

    model = load_model(EXAMPLE)
    write_scene(model, tmp_path / "failed", seed=3)
    a = analyze_context(open_context(tmp_path / "failed"))
    copy = tmp_path / "copy" / "src" / "model.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(apply_edits_text(model.marker_text, a.proposal.marker_edits))
    env = dict(
        os.environ, ASCEND_PROCESS_LOG_PATH=str(tmp_path / "logs"), ASCEND_OP_COMPILE_SAVE_KERNEL_META="1"
    )
    env.pop("SKDBG_NPUGRAPH_EX_OPTIONS", None)
    for source in (copy, tmp_path / "copy"):  # the file, or a copy of the model folder
        proc = subprocess.run(
            [sys.executable, "-m", "skdbg.sim", "job", str(EXAMPLE), "--source", str(source), "--seed", "2"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "clean" in proc.stdout and "swiglu" not in proc.stdout.split("SKs", 1)[1]


def test_job_refuses_a_bad_options_file_with_exit_3(tmp_path: Path) -> None:
    opts = tmp_path / "opts.json"
    opts.write_text('{"super_kernel_debug_option": {}}')
    env = dict(
        os.environ, ASCEND_PROCESS_LOG_PATH=str(tmp_path / "logs"), SKDBG_NPUGRAPH_EX_OPTIONS=str(opts)
    )
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.sim", "job", str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3
    assert f"{opts}: super_kernel_debug_option: unknown option" in proc.stderr
    assert not (tmp_path / "logs").exists()  # nothing ran
