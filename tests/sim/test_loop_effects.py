"""What the loop relies on: determinism, marker edits changing fusion the way the proposal says,
interaction and flaky semantics, the COND wrap of large scopes, debug options changing the evidence."""

from __future__ import annotations

import re
from pathlib import Path

from sim_support import model, node_of, scene

from skdbg.codegen.fusion.candidate import candidate_dag
from skdbg.codegen.fusion.plan import plan_scopes
from skdbg.codegen.fusion.plan_scene import compare_plan, dag_from_model, models_of_scene, observed_scopes
from skdbg.parsers.markers import apply_edits_text
from skdbg.sim import load_model, write_scene
from skdbg.sim.api import emulate
from skdbg.sim.models import synthetic, write_model


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_a_byte_identical_scene(tmp_path: Path) -> None:
    m = model(tmp_path, 12, 7, "fused", streams=2)
    write_scene(m, tmp_path / "a", seed=9)
    write_scene(m, tmp_path / "b", seed=9)
    write_scene(m, tmp_path / "c", seed=10)
    a, b, c = _files(tmp_path / "a"), _files(tmp_path / "b"), _files(tmp_path / "c")
    assert len(a) > 10 and a == b
    assert a != c  # another seed: another pid, other clocks, other cores


def _edited(tmp_path: Path, m_text: str, edits: object) -> Path:
    path = tmp_path / "edited_model.py"
    path.write_text(apply_edits_text(m_text, edits), encoding="utf-8")  # type: ignore[arg-type]
    return path


def test_applied_exclusion_unfuses_the_child_and_the_fused_fault_disappears(tmp_path: Path) -> None:
    m = model(tmp_path, 10, 4, "fused")
    _res, a = scene(m, tmp_path / "failed")
    assert a.proposal.status == "proposed"
    src = _edited(tmp_path, m.marker_text, a.proposal.marker_edits)
    res, b = scene(m, tmp_path / "fixed", seed=2, source=src)
    assert (res.outcome, res.exit_status) == ("clean", 0)
    assert all("k4" not in sk for sk in res.fused)  # k4 runs unfused …
    assert res.fused == [["k0", "k1", "k2", "k3"], ["k5", "k6", "k7", "k8", "k9"]]  # … the rest stays fused
    # the candidate the proposal predicts (codegen's planner over the FAILED scene) is what ran (V3)
    (failed_model,) = models_of_scene(tmp_path / "failed")
    new_dag, _names = candidate_dag(dag_from_model(failed_model), a.proposal.to_json())
    (fixed_model,) = models_of_scene(tmp_path / "fixed")
    assert compare_plan(plan_scopes(new_dag), observed_scopes(fixed_model)) == []
    # the scene's source is the edited file, its sites follow the shifted lines
    assert (tmp_path / "fixed" / "src" / "model.py").read_text() == src.read_text()


def test_applied_exclusion_turns_an_operator_fault_into_a_non_sk_fault(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 3, "operator")
    _res, a = scene(m, tmp_path / "failed")
    src = _edited(tmp_path, m.marker_text, a.proposal.marker_edits)
    res, b = scene(m, tmp_path / "after", seed=2, source=src)
    assert res.outcome == "device_fault" and res.culprit == "k3"
    assert b.fault.kind == "non_sk"
    assert (b.verdict.confidence, b.verdict.rule) == ("n/a", "C0") and "X3" in b.routes
    plog = res.plog.read_text()
    assert f"fault kernel_name={m.op_named('k3').func_name}," in plog


def test_interaction_faults_only_while_both_share_an_sk(tmp_path: Path) -> None:
    m = model(tmp_path, 8, [2, 5], "interaction")
    _res, a = scene(m, tmp_path / "failed")
    assert a.verdict.suspect is not None and a.verdict.suspect.node_id == node_of(m, "k5")
    # exclude the suspect: the pair no longer shares an SK
    res, _b = scene(m, tmp_path / "x5", source=_edited(tmp_path, m.marker_text, a.proposal.marker_edits))
    assert res.outcome == "clean"
    # split the scope between them into two named halves (N1-style): two SKs, no fault
    lines = m.marker_text.splitlines()
    k3 = m.op_named("k3").line
    split = (
        lines[:k3]
        + [
            '        torch.npu.super_kernel_scope_end("synthetic.scope")',
            '        torch.npu.super_kernel_scope_begin("synthetic.scope.b")',
        ]
        + [ln.replace('_end("synthetic.scope")', '_end("synthetic.scope.b")') for ln in lines[k3:]]
    )
    (tmp_path / "split.py").write_text("\n".join(split) + "\n")
    res = write_scene(m, tmp_path / "split", source=tmp_path / "split.py", seed=1)
    assert res.outcome == "clean"
    assert res.fused == [["k0", "k1", "k2", "k3"], ["k4", "k5", "k6", "k7"]]
    # SyncAll between children keeps them from overlapping: the interaction is masked (R4 material)
    res, c = scene(m, tmp_path / "syncall", debug={"debug_sync_all": 1})
    assert res.outcome == "clean"


def test_flaky_rate_follows_its_probability_over_seeds(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 3, "flaky", probability=0.3)
    hits = sum(emulate(m, source=None, seed=s, options=None).outcome.result == "sk_fault" for s in range(400))
    # binomial(400, 0.3): mean 120, sd ≈ 9.2 — a ±4 sd band
    assert 83 <= hits <= 157
    # a flaky op that is not fused never faults
    m1 = model(tmp_path, 1, 0, "flaky", probability=1.0)
    assert all(emulate(m1, source=None, seed=s, options=None).outcome.result == "clean" for s in range(20))


def test_flaky_draw_is_deterministic_per_seed(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 3, "flaky", probability=0.5)
    first = [emulate(m, source=None, seed=s, options=None).outcome.result for s in range(30)]
    again = [emulate(m, source=None, seed=s, options=None).outcome.result for s in range(30)]
    assert first == again and {"clean", "sk_fault"} <= set(first)


def _two_scopes(tmp_path: Path, n: int, culprit: int) -> Path:
    """A one-kernel scope first, then a scope of ``n`` children: the big SK gets scope id 2, so the
    index bits that leak into the COND scope field (index ≥ 256) are visible (T5)."""
    doc, src = synthetic(n, culprit, "fused")
    lines = src.splitlines()
    begin = next(i for i, ln in enumerate(lines) if "scope_begin" in ln)
    pre = [
        '        torch.npu.super_kernel_scope_begin("warmup")',
        "        w = torch_npu.npu_cast(x0)",
        '        torch.npu.super_kernel_scope_end("warmup")',
    ]
    lines[begin:begin] = pre
    for op in doc["ops"]:
        op["line"] += len(pre)
    doc["ops"].insert(0, {"name": "warmup_cast", "op_type": "Cast", "kernel_type": "AIV", "line": begin + 2})
    return write_model(tmp_path / "two", doc, "\n".join(lines) + "\n")


def test_more_than_256_children_exercise_the_cond_wrap(tmp_path: Path) -> None:
    m = load_model(_two_scopes(tmp_path, 300, 270))
    res, a = scene(m, tmp_path / "s")
    assert res.fused[1][270] == "k270" and len(res.fused[1]) == 300
    text = res.plog.read_text()
    # the COND register carries the task index modulo 256 (270 → 14) and leaks index>>8 into the scope
    m_cond = re.search(r"COND register value: 0x([0-9a-f]+) \(opState=2, opIndex=(\d+)\)", text)
    assert m_cond is not None and int(m_cond.group(2)) == 14
    value = int(m_cond.group(1), 16)
    assert (value >> 16) & 0xFFFF == 2 | 1  # scope id 2 with the leaked bit (270 >> 8 = 1)
    assert "cond_index_overflow" in a.verdict.flags
    # the unique PC match still names the child (E2), confirmed by the task queue
    assert a.verdict.suspect is not None and a.verdict.suspect.task_index == 270
    assert a.verdict.suspect.node_id == node_of(m, "k270")


def test_exec_trace_adds_the_op_trace_entry_and_counters(tmp_path: Path) -> None:
    m = model(tmp_path, 8, 5, "fused")
    _res, plain = scene(m, tmp_path / "plain")
    res, a = scene(m, tmp_path / "trace", debug={"debug_op_exec_trace": 1})
    text = res.plog.read_text()
    assert plain.fault.entry is not None and a.fault.entry == plain.fault.entry + "_op_trace"
    assert "=== SkCounterInfo" in text and "op_trace=true" in text
    assert a.gate.diagnostic  # F9: a diagnostic attempt
    core = a.fault.cores[0]
    assert core.e1 == 5  # L1: the child's start record
    assert (a.verdict.confidence, a.verdict.suspect.task_index if a.verdict.suspect else None) == ("high", 5)


def test_sync_all_puts_a_syncall_between_children(tmp_path: Path) -> None:
    import json

    m = model(tmp_path, 6, 2, "fused")
    res, _a = scene(m, tmp_path / "s", debug={"debug_sync_all": 1})
    (queue,) = (tmp_path / "s").rglob("sk_task_queue.json")
    doc = json.loads(queue.read_text())
    tasks = [
        t
        for q in doc["scopes"][0]["taskQueues"].values()
        if q.get("taskQue")
        for t in q["taskQue"]["taskInfos"]
    ]
    syncs = [t for t in tasks if t["type"] == "SYNC"]
    funcs = [t for t in tasks if t["type"] == "FUNC"]
    assert syncs and all(int(t["args"], 16) == 0 for t in syncs)  # ALL_SYNC
    assert len(syncs) == len(funcs)  # one after every child
    assert all(t["debugOptions"] & 0x2 for t in funcs)  # debug_sync_all bit


def test_per_op_max_core_makes_every_kernel_its_own_sk(tmp_path: Path) -> None:
    m = model(tmp_path, 5, 2, "fused")
    res, a = scene(m, tmp_path / "s", debug={"debug_per_op_max_core_num": 1})
    assert res.fused == [["k0"], ["k1"], ["k2"], ["k3"], ["k4"]]
    assert res.outcome == "clean"  # alone in its SK, the fusion-induced fault cannot show
    (split,) = (tmp_path / "s").rglob("sk_scope_split.log")
    assert split.read_text().count("breakReason=DEBUG_PER_OP_MAX_CORE") >= 4
    assert "R4" in a.routes  # the fault disappears only under debug mode
    # an operator bug still faults, in its own SK
    m2 = model(tmp_path, 5, 2, "operator")
    res2, b = scene(m2, tmp_path / "s2", debug={"debug_per_op_max_core_num": 1})
    assert res2.outcome == "device_fault" and b.fault.kind == "sk"
    assert b.verdict.suspect is not None and b.verdict.suspect.node_id == node_of(m2, "k2")
