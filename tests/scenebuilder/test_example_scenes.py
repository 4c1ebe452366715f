"""The bundled example scenes of issue item 10 (skdbg/scenebuilder/examples.py → examples/scenes/<name>).

Why: the committed scenes are what users and the engine's acceptance tests run on; they must never drift
from their descriptions (byte-identical regeneration), stay small, and read back through the real parsers
with the facts each scene is meant to show (the verdict assertions are the engine's tests).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skdbg.parsers.runtime_faults import KernelFaultLine
from skdbg.scenebuilder import examples
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.skview import all_instances

SCENES_DIR = Path(__file__).resolve().parents[2] / "examples" / "scenes"
NAMES = [s.name for s in examples.SCENES]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("examples")
    examples.build_examples(dest)
    return dest


def _ctx(name: str) -> TriageContext:
    return open_context(SCENES_DIR / name)


def _faults(ctx: TriageContext) -> list[KernelFaultLine]:
    return [f for p in ctx.evidence.plogs for f in p.faults if isinstance(f, KernelFaultLine)]


@pytest.mark.parametrize("name", NAMES)
def test_committed_scene_is_byte_identical_to_a_fresh_build(fresh: Path, name: str) -> None:
    built = _files(fresh / name)
    committed = _files(SCENES_DIR / name)
    assert sorted(built) == sorted(committed)
    for rel, data in built.items():
        assert committed[rel] == data, rel


@pytest.mark.parametrize("name", NAMES)
def test_scene_is_small_and_documented(name: str) -> None:
    assert sum(len(b) for b in _files(SCENES_DIR / name).values()) <= 200_000
    readme = (SCENES_DIR / "README.md").read_text(encoding="utf-8")
    assert f"`{name}`" in readme


def test_main_writes_all_scenes_and_keeps_others(tmp_path: Path) -> None:
    dest = tmp_path / "scenes"
    (dest / "aiv-fault-add-custom").mkdir(parents=True)
    (dest / "aiv-fault-add-custom" / "keep.txt").write_text("x")
    assert examples.main([str(dest)]) == 0
    assert (dest / "aiv-fault-add-custom" / "keep.txt").exists()
    assert sorted(p.name for p in dest.iterdir()) == sorted([*NAMES, "aiv-fault-add-custom"])
    (dest / NAMES[0] / "stale.txt").write_text("x")
    assert examples.main([str(dest)]) == 0
    assert not (dest / NAMES[0] / "stale.txt").exists()
    bad = tmp_path / "bad"
    (bad / NAMES[0]).mkdir(parents=True)
    (bad / NAMES[0] / "mine.txt").write_text("x")
    assert examples.main([str(bad)]) == 2
    assert (bad / NAMES[0] / "mine.txt").exists()


def test_high_single_stream_facts() -> None:
    ctx = _ctx("high-single-stream")
    inc = ctx.evidence.incidents[0]
    assert inc.dialect == "D5" and inc.op_trace
    core = inc.cores[0]
    assert (core.core_id, core.node, core.matched) == (30, 2, True)
    assert inc.counters is not None
    assert {(e.core, e.index, e.op_state) for e in inc.counters.entries if e.core == 30} == {(30, 2, 2)}
    (inst,) = list(all_instances(ctx.evidence))
    assert inst.streams() == [0]
    func2 = [t for t in inst.tasks if t.index == 2 and t.type == "FUNC"]
    assert func2 and core.entry_addr in func2[0].entries
    me = ctx.evidence.model_evidence[0]
    assert me.images is not None and core.current_pc is not None
    assert me.images.locate(core.current_pc).image.func_name == "SwiGlu_41d9e0"  # type: ignore[union-attr]


def test_duplicate_symbol_medium_facts() -> None:
    ctx = _ctx("duplicate-symbol-medium")
    inc = ctx.evidence.incidents[0]
    assert not inc.op_trace
    core = inc.cores[0]
    assert core.node == 1  # T4: the handler's first match, not the faulting task
    assert core.cond is not None and core.cond.decoded.state_name == "OP_LAUNCHED"
    assert core.cond.decoded.op_index == 3
    assert inc.dfx is not None
    n1, n3 = inc.dfx.nodes[1], inc.dfx.nodes[3]
    assert (n1.bin_hdl, n1.aic_size, n1.origin_name) == (n3.bin_hdl, n3.aic_size, n3.origin_name)
    (inst,) = list(all_instances(ctx.evidence))
    assert inst.index_to_node_id[3] == 103
    assert [n.func_name for n in inst.nodes][3] == "MatMulV3_e07b3c19"


def test_entry_only_low_facts() -> None:
    ctx = _ctx("entry-only-low")
    assert _faults(ctx) == []
    (inc,) = ctx.evidence.incidents
    assert inc.entry == "sk_entry_mix11" and inc.dfx is None and inc.cores == ()
    me = ctx.evidence.model_evidence[0]
    assert me.task_queue is None and me.device_args is None
    assert ctx.run is not None and ctx.run.failure_phase == "timeout"


def test_event_bound_split_facts() -> None:
    ctx = _ctx("event-bound-split")
    inc = ctx.evidence.incidents[0]
    assert inc.cores[0].node == 4
    (inst,) = list(all_instances(ctx.evidence))
    assert inst.streams() == [0, 1]
    events = {n.node_id: n for n in inst.nodes if not n.is_kernel}
    assert sorted(events) == [102, 103]
    assert inst.node_by_id(104).stream_id == 1  # type: ignore[union-attr]
    assert ctx.run is not None
    assert ctx.run.cache_writers == {104: (105,)}
    sites = ctx.evidence.source_sites
    assert sites is not None
    by_node = sites.by_node
    lines = [by_node[n] for n in (102, 103, 104, 105)]
    assert lines == list(range(lines[0], lines[0] + 4))  # the fragment is contiguous: a split is possible
    src = (SCENES_DIR / "event-bound-split" / "src" / "model.py").read_text().splitlines()
    begin = next(i + 1 for i, ln in enumerate(src) if "super_kernel_scope_begin" in ln)
    end = next(i + 1 for i, ln in enumerate(src) if "super_kernel_scope_end" in ln)
    assert begin < by_node[100] < lines[0] and lines[-1] < by_node[106] < end  # fused children on both sides


def test_non_sk_fault_facts() -> None:
    ctx = _ctx("non-sk-fault")
    (fault,) = _faults(ctx)
    assert fault.kernel_name == "Add_7c1e_kernel0" and fault.kind == "non_sk"
    assert ctx.evidence.incidents == []
    (inst,) = list(all_instances(ctx.evidence))
    assert "Add_7c1e" in [n.func_name for n in inst.nodes]


def test_fixed_scene_is_a_new_attempt_with_the_engines_proposal_applied() -> None:
    """high-single-stream-fixed = the re-launch of high-single-stream: the model source is the failed
    attempt's source with the marker edits the engine itself proposes (byte for byte), and the run is a
    new process of the next round that started later and exited 0."""
    from skdbg.parsers.markers import apply_edits_text as apply_edits
    from skdbg.triage.engine import analyze_context

    failing, fixed = SCENES_DIR / "high-single-stream", SCENES_DIR / "high-single-stream-fixed"
    analysis = analyze_context(open_context(failing))
    assert analysis.proposal is not None and analysis.proposal.status == "proposed"
    expected = apply_edits((failing / "src" / "model.py").read_text(), analysis.proposal.marker_edits)
    assert (fixed / "src" / "model.py").read_text() == expected
    old, new = _ctx("high-single-stream").run, _ctx("high-single-stream-fixed").run
    assert old is not None and new is not None
    assert new.pid != old.pid and new.start is not None and old.end is not None and new.start > old.end
    assert new.round_id == f"{old.round_id}-X1" and new.exit is not None and new.exit.status == 0
    assert not _faults(_ctx("high-single-stream-fixed"))


def test_skdbg_verify_passes_v1_to_v3_on_the_fixed_pair() -> None:
    """``skdbg verify high-single-stream high-single-stream-fixed``: V1–V3 passed, V4 not needed (one
    stream), V5 not run (one process cannot show performance); the round passes V1..V3 with route R7."""
    from click.testing import CliRunner

    from skdbg.cli import main

    old, new = SCENES_DIR / "high-single-stream", SCENES_DIR / "high-single-stream-fixed"
    res = CliRunner().invoke(main, ["verify", str(old), str(new), "--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert [(g["gate"], g["result"]) for g in doc["verification"]] == [
        ("V1", "passed"),
        ("V2", "passed"),
        ("V3", "passed"),
        ("V4", "not_run"),
        ("V5", "not_run"),
    ]
    assert doc["round"] == {**doc["round"], "round_id": "EX1-BASE-X1", "status": "passed_gates(V1..V3)"}
    assert doc["routes"] == ["R7"] and doc.get("refused_evidence", []) == []
