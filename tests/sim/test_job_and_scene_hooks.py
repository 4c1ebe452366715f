"""run_job (what a job leaves where), profiling, entry names, and the scene-builder hooks the
emulator added (launch position, verbatim BreakInfo, capture-order graph rows, unfused events)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

from sim_support import model, scene

from skdbg.codegen.fusion.plan_scene import dag_from_model, models_of_scene, observed_scopes
from skdbg.parsers.sk_prof import ProfReader
from skdbg.sim import load_model, run_job, write_scene
from skdbg.sim.api import emulate
from skdbg.sim.models import synthetic, write_model
from skdbg.sim.planning import build_dag
from skdbg.sim.scopes import op_scopes

STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3})")


def test_run_job_places_files_like_a_job_and_stamps_them_now(tmp_path: Path) -> None:
    m = model(tmp_path, 6, 2, "fused")
    before = datetime.now()
    res = run_job(m, source=None, log_dir=tmp_path / "log", cwd=tmp_path / "cwd", seed=0, options={},
                  save_kernel_meta=True, pid=4242)  # fmt: skip
    assert (res.pid, res.outcome, res.exit_status) == (4242, "device_fault", 1)
    assert res.plog.parent == tmp_path / "log" / "debug" / "plog" and res.plog.name.startswith("plog-4242_")
    assert res.sk_meta == tmp_path / "cwd" / "sk_meta" / "4242"
    assert (res.sk_meta / "model_48_1" / "sk_task_queue.json").is_file()
    # every plog line is stamped within the job's lifetime (F2 freshness against the run's clock)
    stamps = [datetime.strptime(s, "%Y-%m-%d-%H:%M:%S.%f") for s in STAMP.findall(res.plog.read_text())]
    assert stamps and min(stamps) >= before - timedelta(seconds=5) and max(stamps) <= datetime.now()
    assert sorted(p.name for p in (tmp_path / "log" / "debug" / "plog").iterdir()) == [res.plog.name]


def test_run_job_without_kernel_meta_but_profiled_leaves_only_the_recorder_file(tmp_path: Path) -> None:
    m = model(tmp_path, 6, 2, "unmatched_wait")
    res = run_job(m, source=None, log_dir=tmp_path / "log", cwd=tmp_path, seed=0, options={},
                  save_kernel_meta=False, pid=77, profiling=True)  # fmt: skip
    assert (res.outcome, res.exit_status) == ("hang", 1)
    assert [p.name for p in (tmp_path / "sk_meta" / "77").iterdir()] == ["sk_prof_device_0.json"]


def test_profile_records_only_children_that_finished(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 5, "fused")
    write_scene(m, tmp_path / "s", profiling=True)
    (prof,) = (tmp_path / "s").rglob("sk_prof_device_0.json")
    events = list(ProfReader(prof))
    assert sorted({e.node_id for e in events if e.node_id is not None}) == [0, 1, 2, 3, 4]  # k5 faulted
    assert all(e.pid in ("AIC", "AIV") for e in events)
    # a clean run: every child, and one SK-level event
    m2 = model(tmp_path, 4, [], "none")
    write_scene(m2, tmp_path / "c", profiling=True)
    (prof2,) = (tmp_path / "c").rglob("sk_prof_device_0.json")
    ev2 = list(ProfReader(prof2))
    assert sorted({e.node_id for e in ev2 if e.node_id is not None}) == [0, 1, 2, 3]
    assert len([e for e in ev2 if e.node_id is None]) == 1


def test_entry_names_follow_the_runtime_suffix_order(tmp_path: Path) -> None:
    m = model(tmp_path, 6, 2, "fused")
    _r, a = scene(m, tmp_path / "a", debug={"debug_sync_all": 1, "debug_op_exec_trace": 1})
    assert a.fault.entry is not None and re.fullmatch(
        r"sk_entry_(aic|aiv|mix11|mix12)_debug_op_trace", a.fault.entry
    )
    res = write_scene(
        m, tmp_path / "b", profiling=True, options={"super_kernel_debug_options": {"debug_sync_all": 1}}
    )
    assert "_debug_dump_profiling" in res.plog.read_text()
    m2 = model(tmp_path, 6, 2, "operator")
    _r, c = scene(m2, tmp_path / "c", debug={"debug_per_op_max_core_num": 1})
    assert c.fault.entry is not None and c.fault.entry.startswith("sk_entry_mix12")  # forced by per-op


def test_job_process_profiles_with_ascend_prof_sk_on(tmp_path: Path) -> None:
    doc, src = synthetic(4, [], "none")
    d = write_model(tmp_path / "m", doc, src)
    env = dict(os.environ, ASCEND_PROCESS_LOG_PATH=str(tmp_path / "log"), ASCEND_PROF_SK_ON="64")
    env.pop("ASCEND_OP_COMPILE_SAVE_KERNEL_META", None)
    proc = subprocess.run([sys.executable, "-m", "skdbg.sim", "job", str(d)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "sk_meta").glob("*/sk_prof_device_0.json"))) == 1
    bad = subprocess.run([sys.executable, "-m", "skdbg.sim", "job", str(tmp_path / "nothing")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 3 and "nothing" in bad.stderr


def _two_scope_model(tmp_path: Path) -> Path:
    """Scope A (2 kernels), an unscoped kernel, scope B (event pair across streams + 2 kernels)."""
    src = "\n".join(
        [
            "import torch",
            "import torch_npu",
            "",
            "",
            "def forward(x0, side, ev):",
            '    torch.npu.super_kernel_scope_begin("a")',
            "    x1 = torch_npu.npu_add(x0)",  # 7
            "    x2 = torch_npu.npu_mul(x1)",  # 8
            '    torch.npu.super_kernel_scope_end("a")',
            "    x3 = torch_npu.npu_cast(x2)",  # 10
            '    torch.npu.super_kernel_scope_begin("b")',
            "    x4 = torch_npu.npu_gelu(x3)",  # 12
            "    ev.record()",  # 13
            "    ev.wait(side)",  # 14
            "    x5 = torch_npu.npu_rms_norm(x4, stream=side)",  # 15
            "    x6 = torch_npu.npu_swiglu(x4)",  # 16
            '    torch.npu.super_kernel_scope_end("b")',
            "    return x5, x6",
            "",
        ]
    )
    doc = {
        "ops": [
            {"name": "add", "op_type": "Add", "kernel_type": "AIV", "line": 7},
            {"name": "mul", "op_type": "Mul", "kernel_type": "AIC", "line": 8},
            {"name": "cast", "op_type": "Cast", "kernel_type": "AIV", "line": 10},
            {"name": "gelu", "op_type": "Gelu", "kernel_type": "AIV", "line": 12},
            {"name": "rec", "kind": "notify", "event": 5, "line": 13},
            {"name": "wait", "kind": "wait", "event": 5, "stream": 1, "line": 14},
            {"name": "norm", "op_type": "RmsNorm", "kernel_type": "AIV", "stream": 1, "line": 15},
            {"name": "swiglu", "op_type": "SwiGlu", "kernel_type": "AIV", "line": 16},
        ],
        "fault": {"kind": "fused", "op": "swiglu"},
    }
    return write_model(tmp_path / "two", doc, src)


def test_scene_metadata_replays_to_the_emulated_graph(tmp_path: Path) -> None:
    m = load_model(_two_scope_model(tmp_path))
    res, a = scene(m, tmp_path / "s")
    assert res.fused == [["add", "mul"], ["gelu", "rec", "wait", "norm", "swiglu"]]
    # the faulting SK is the second one launched: the handler names scope id 2
    assert a.fault.scope_id == 2 and a.verdict.suspect is not None
    assert a.verdict.suspect.node_id == m.op_named("swiglu").node_id
    (md,) = models_of_scene(tmp_path / "s")
    got = dag_from_model(md)
    want, _flags, _names = build_dag(m, op_scopes(m)[0])
    # capture order, kinds, scope flags and fail reasons come back exactly from the metadata
    key = lambda n: (n.node_id, n.kind, n.stream, n.scope_flags, n.fail_reason, n.event_id)  # noqa: E731
    assert [key(n) for n in got.nodes] == [key(n) for n in want.nodes]
    assert [(o.node_ids, o.break_reason) for o in observed_scopes(md)] == [
        ((100, 101), "NONE"),
        ((103, 104, 105, 106, 107), "NONE"),
    ]


def test_excluded_event_fragment_runs_unfused_events_included(tmp_path: Path) -> None:
    m = load_model(_two_scope_model(tmp_path))
    lines = m.marker_text.splitlines()
    # close b before the event pair, reopen after the side-stream kernel (a §4.4 rule 2 split)
    edited = lines[:12] + ['    torch.npu.super_kernel_scope_end("b")'] + lines[12:15]
    edited += ['    torch.npu.super_kernel_scope_begin("b")'] + lines[15:]
    (tmp_path / "e.py").write_text("\n".join(edited) + "\n")
    em = emulate(m, source=tmp_path / "e.py", seed=0, options=None)
    assert em.planned.plan.unfused == {
        104: "NOT_IN_SCOPE",
        105: "NOT_IN_SCOPE",
        106: "NOT_IN_SCOPE",
        102: "NOT_IN_SCOPE",
    }
    res = write_scene(m, tmp_path / "s", source=tmp_path / "e.py")
    assert res.fused == [["add", "mul"], ["gelu"], ["swiglu"]]
    (md,) = models_of_scene(tmp_path / "s")
    kinds = {n.node_id: n.kind for n in dag_from_model(md).nodes}
    assert (kinds[104], kinds[105]) == ("NOTIFY", "WAIT")  # the unfused events are in the graph
    assert res.outcome == "clean"  # swiglu is alone in its SK now


def test_ge_form_scope_is_read_too(tmp_path: Path) -> None:
    src = "\n".join(
        [
            "import torchair",
            "import torch_npu",
            "",
            "",
            "def forward(x0):",
            '    with torchair.scope.super_kernel("g"):',
            "        x1 = torch_npu.npu_add(x0)",
            "        x2 = torch_npu.npu_mul(x1)",
            "    return torch_npu.npu_cast(x2)",
            "",
        ]
    )
    doc = {
        "ops": [
            {"name": "add", "op_type": "Add", "kernel_type": "AIV", "line": 7},
            {"name": "mul", "op_type": "Mul", "kernel_type": "AIV", "line": 8},
            {"name": "cast", "op_type": "Cast", "kernel_type": "AIV", "line": 9},
        ]
    }
    m = load_model(write_model(tmp_path / "g", doc, src))
    em = emulate(m, source=None, seed=0, options=None)
    assert [list(s.node_ids) for s in em.planned.plan.scopes] == [[100, 101]]
    assert em.planned.plan.unfused == {102: "NOT_IN_SCOPE"}


def test_auto_op_parallel_defers_waits_and_triage_maps_the_task_index_back(tmp_path: Path) -> None:
    """T6: with the customised queue the wait on stream 1 moves to just before k3 (its stream's next
    kernel), so k2 sits at fused position 4 but runs as task 3; the handler reports task 3 and the
    suspect is still k2 (resolved through sk_device_args.log idx → nodeId)."""
    src = "\n".join(
        [
            "import torch",
            "import torch_npu",
            "",
            "",
            "def forward(x0, side, ev):",
            '    torch.npu.super_kernel_scope_begin("s")',
        ]
        + [f"    x0 = torch_npu.npu_op{i}(x0)" for i in range(7)]
        + ['    torch.npu.super_kernel_scope_end("s")', "    return x0", ""]
    )
    k = lambda name, stream=0: {"name": name, "op_type": "Add", "kernel_type": "AIV", "stream": stream}  # noqa: E731
    ops = [k("k0"), {"name": "rec", "kind": "notify", "event": 1}, {"name": "wait", "kind": "wait", "event": 1, "stream": 1},
           k("k1"), k("k2"), k("k3", 1), k("k4")]  # fmt: skip
    for i, op in enumerate(ops):
        op["line"] = 7 + i
    m = load_model(write_model(tmp_path / "m", {"ops": ops, "fault": {"kind": "fused", "op": "k2"}}, src))
    opts = {"super_kernel_optimize_options": {"auto_op_parallel": 1}}
    res = write_scene(m, tmp_path / "s", options=opts)
    text = res.plog.read_text()
    assert "Found in node[3]" in text  # task index 3, not fused position 4
    (log,) = (tmp_path / "s").rglob("super_kernel.log")
    assert "task reorder: place deferred wait node" in log.read_text()
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    a = analyze_context(open_context(tmp_path / "s"))
    assert a.verdict.suspect is not None
    assert (a.verdict.suspect.node_id, a.verdict.suspect.task_index) == (m.op_named("k2").node_id, 3)
    assert a.verdict.confidence == "high"
    # without the option the task order is the fused order
    plain = write_scene(m, tmp_path / "p")
    assert "Found in node[4]" in plain.plog.read_text()
