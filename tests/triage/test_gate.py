"""Entry gate G1–G5 and freshness predicates F1–F9 (triage.md §1, §7 R1/X1/X2/X3/X6/X7).

Each failure case starts from a consistent built scene (which passes) and changes one fact — a renamed
plog, a shifted run.json time, metadata written by another pid — so the failing id is the one asserted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from triage_support import TWO_STREAM_CHILDREN, TWO_STREAM_CORE, build_two_stream

from skdbg.scenebuilder.scene import BuiltScene, Kernel
from skdbg.triage.context import open_context
from skdbg.triage.gate import run_gate
from skdbg.triage.localize import localize
from skdbg.triage.model import GateResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"

CHILDREN = TWO_STREAM_CHILDREN
CORE = TWO_STREAM_CORE


def build(tmp_path: Path, **kw: Any) -> BuiltScene:
    return build_two_stream(tmp_path, **{"device": 0, **kw})


def gate_of(root: Path, **kw: Any) -> GateResult:
    ctx = open_context(root, **kw)
    return run_gate(ctx, localize(ctx))


def checks(g: GateResult) -> dict[str, str]:
    return dict(g.checks)


def gaps(g: GateResult, gid: str) -> list[str]:
    return [x.detail for x in g.gaps if x.id == gid]


def collects(g: GateResult, gid: str) -> list[str]:
    return [x.collect for x in g.gaps if x.id == gid]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def rewrite_run(root: Path, **changes: Any) -> None:
    p = root / "run.json"
    doc = json.loads(p.read_text())
    for k, v in changes.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    p.write_text(json.dumps(doc))


# ------------------------------------------------------------------------------------------ passing scenes


def test_example_scene_passes_every_check() -> None:
    g = gate_of(EXAMPLE)
    assert g.passed and g.failed == ()
    # triage.md §1.1/§1.2: five gate conditions and nine freshness predicates, written out by hand
    assert sorted(checks(g)) == sorted([*(f"G{i}" for i in range(1, 6)), *(f"F{i}" for i in range(1, 10))])
    assert all(v == "passed" for v in checks(g).values())
    # F9: the example ran with debug_op_exec_trace (recorded, so not a contradiction)
    assert g.diagnostic and any("_op_trace" in r for r in g.diagnostic_reasons)


def test_consistent_built_scene_passes(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path).root)
    assert g.passed, g.gaps
    assert all(v == "passed" for v in checks(g).values())
    assert not g.diagnostic and g.route_hints == ()


def test_every_dialect_passes(tmp_path: Path) -> None:
    for d in ("D0", "D1", "D2", "D3", "D4", "D5"):
        g = gate_of(build(tmp_path / d, dialect=d).root)
        assert g.passed, (d, g.gaps)


# ------------------------------------------------------------------------------------------ G1


def test_g1_missing_run_json_fails_with_what_to_record(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, run=None).root)
    assert "G1" in g.failed and not g.passed
    assert any("rank" in c and "command" in c for c in collects(g, "G1"))


def test_g1_command_and_rank_must_come_from_the_manifest(tmp_path: Path) -> None:
    b = build(tmp_path, run={"command": None, "rank": None})
    g = gate_of(b.root)
    assert "G1" in g.failed
    assert any("command" in d and "rank" in d for d in gaps(g, "G1"))
    assert any("RANK" in c and "node_rank" in c for c in collects(g, "G1"))


def test_g1_pid_and_device_may_be_auto_filled(tmp_path: Path) -> None:
    b = build(tmp_path, run={"pid": None, "device": None})
    g = gate_of(b.root)
    assert "G1" not in g.failed and checks(g)["G1"] == "passed"
    details = " ".join(gaps(g, "G1"))
    assert "pid 48213 auto-filled" in details and "device 0 auto-filled" in details


def test_g1_missing_start_fails(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, run={"start": None}).root)
    assert "G1" in g.failed and checks(g)["F2"] == "unknown"


# ------------------------------------------------------------------------------------------ F1 (R1)


def test_f1_plog_of_another_pid_is_not_used(tmp_path: Path) -> None:
    b = build(tmp_path, plog_pid=51000)
    g = gate_of(b.root)
    assert {"F1", "G2"} <= set(g.failed)
    assert "R1" in g.route_hints
    assert any("51000" in d for d in gaps(g, "F1"))
    assert any("plog-48213_" in c for c in collects(g, "F1"))


def test_f1_renamed_plog_file_no_longer_belongs_to_p(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.plog.rename(b.plog.with_name(b.plog.name.replace("48213", "51000")))
    g = gate_of(b.root)
    assert "F1" in g.failed


def test_f1_foreign_header_line_inside_ps_plog(tmp_path: Path) -> None:
    b = build(tmp_path)
    lines = b.plog.read_text().splitlines(keepends=True)
    fault = next(i for i, x in enumerate(lines) if "fault kernel_name" in x)
    lines.insert(fault, lines[fault].replace("(48213,", "(51000,"))
    b.plog.write_text("".join(lines))
    g = gate_of(b.root)
    assert "F1" in g.failed
    gap = next(x for x in g.gaps if x.id == "F1")
    assert gap.line == fault + 1 and "51000" in gap.detail


def test_f1_content_identified_copy_is_not_named_like_a_plog(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.plog.rename(b.plog.with_name("plog_excerpt.log"))
    g = gate_of(b.root)
    assert "F1" in g.failed
    assert any("not named" in d for d in gaps(g, "F1"))


def test_r1_no_plog_at_all(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.plog.unlink()
    g = gate_of(b.root)
    assert {"F1", "G2"} <= set(g.failed) and "R1" in g.route_hints


# ------------------------------------------------------------------------------------------ F2


def test_f2_plog_lines_outside_the_attempt_window(tmp_path: Path) -> None:
    b = build(tmp_path)
    doc = json.loads((b.root / "run.json").read_text())
    start = datetime.fromisoformat(doc["start"]) + timedelta(days=1)
    end = datetime.fromisoformat(doc["end"]) + timedelta(days=1)
    rewrite_run(
        b.root, start=start.isoformat(timespec="milliseconds"), end=end.isoformat(timespec="milliseconds")
    )
    g = gate_of(b.root)
    assert "F2" in g.failed
    gap = next(x for x in g.gaps if x.id == "F2")
    assert gap.file is not None and gap.file.startswith("log/plog/") and gap.line is not None


def test_f2_grace_option_is_respected(tmp_path: Path) -> None:
    from skdbg.triage.context import TriageOptions

    b = build(tmp_path)
    doc = json.loads((b.root / "run.json").read_text())
    # end well before the fault line: fails with the default grace, passes with a huge one
    end = datetime.fromisoformat(doc["start"]) + timedelta(seconds=1)
    rewrite_run(b.root, end=end.isoformat(timespec="milliseconds"))
    assert "F2" in gate_of(b.root).failed
    big = TriageOptions(grace=timedelta(days=1))
    assert "F2" not in gate_of(b.root, options=big).failed


# ------------------------------------------------------------------------------------------ F3


def test_f3_metadata_of_another_pid_is_never_substituted(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, sk_meta_pid=51000).root)
    assert {"F3", "G2"} <= set(g.failed)
    assert any("51000" in d and "never substituted" in d for d in gaps(g, "F3"))
    assert any("ASCEND_OP_COMPILE_SAVE_KERNEL_META=1" in c for c in collects(g, "F3"))


def test_r1_no_sk_meta_at_all(tmp_path: Path) -> None:
    b = build(tmp_path)
    shutil.rmtree(b.root / "sk_meta")
    g = gate_of(b.root)
    assert {"F3", "G2"} <= set(g.failed) and "R1" in g.route_hints


# ------------------------------------------------------------------------------------------ F4 / F7


def test_f4_and_f7_metadata_written_by_another_pid(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, meta_pid=51000).root)
    assert {"F4", "F7"} <= set(g.failed)
    gap = next(x for x in g.gaps if x.id == "F4")
    assert gap.file is not None and gap.file.startswith("sk_meta/48213/") and gap.line is not None


def test_f4_stale_metadata_built_before_the_attempt(tmp_path: Path) -> None:
    b = build(tmp_path, build_ts=datetime(2026, 6, 9, 9, 0, 0))
    g = gate_of(b.root)
    assert "F4" in g.failed and "F7" not in g.failed
    assert any("stale" in d for d in gaps(g, "F4"))


def test_f4_metadata_written_after_the_fault(tmp_path: Path) -> None:
    b = build(tmp_path, build_ts=datetime(2026, 6, 10, 14, 3, 30))
    assert "F4" in gate_of(b.root).failed


def test_f4_unprefixed_metadata_uses_the_mtime(tmp_path: Path) -> None:
    b = build(tmp_path, meta_prefix=False)
    g = gate_of(b.root)
    assert "F4" not in g.failed
    assert checks(g)["F7"] == "unknown"  # producer pid not provable without the prefix
    old = datetime(2026, 1, 1).timestamp()
    log = b.model_dir / "sk_fused_nodes.log"
    os.utime(log, (old, old))
    g2 = gate_of(b.root)
    assert "F4" in g2.failed
    assert any("mtime" in d for d in gaps(g2, "F4"))


# ------------------------------------------------------------------------------------------ F5 / F6


def test_f5_model_dir_named_by_modelid_is_missing(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.model_dir.rename(b.model_dir.parent / "model_48_9")
    g = gate_of(b.root)
    assert {"F5", "G2"} <= set(g.failed)


def test_f5_ambiguity_is_a_soft_gap_for_c1(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, dialect="D3", extra_models=["48_2"]).root)
    assert g.passed and checks(g)["F5"] == "unknown"
    assert any("ambiguous" in d for d in gaps(g, "F5"))


def test_f6_scope_id_without_sk_record(tmp_path: Path) -> None:
    b = build(tmp_path)
    edit(b.plog, "SkScopeId=7", "SkScopeId=8")
    g = gate_of(b.root)
    assert "F6" in g.failed and checks(g)["F5"] == "passed"


def test_f6_node_count_differs_from_dfx_nodecnt(tmp_path: Path) -> None:
    b = build(tmp_path)
    edit(b.plog, "nodeCnt: 5", "nodeCnt: 6")
    g = gate_of(b.root)
    assert "F6" in g.failed
    assert any("Node Count 5" in d and "nodeCnt 6" in d for d in gaps(g, "F6"))


# ------------------------------------------------------------------------------------------ F8


def test_f8_run_override_for_another_candidate(tmp_path: Path) -> None:
    b = build(tmp_path)
    doc = json.loads((b.root / "run.json").read_text())
    doc["candidate"]["source_revision"] = "deadbeef"
    over = tmp_path / "other-run.json"
    over.write_text(json.dumps(doc))
    g = gate_of(b.root, run_json=over)
    assert "F8" in g.failed
    assert any("source_revision" in d for d in gaps(g, "F8"))


def test_f8_marker_file_without_the_candidate_scope(tmp_path: Path) -> None:
    b = build(tmp_path)
    edit(
        b.root / "src" / "model.py",
        'super_kernel_scope_begin("decoder.layer.0.mlp")',
        'super_kernel_scope_begin("decoder.layer.1.mlp")',
    )
    g = gate_of(b.root)
    assert "F8" in g.failed
    gap = next(x for x in g.gaps if x.id == "F8")
    assert gap.file == "src/model.py"


def test_f8_faulting_sk_outside_the_candidate_scopes(tmp_path: Path) -> None:
    b = build(tmp_path, run={"candidate": {"scope_names": ["encoder.block.3"]}}, source=False)
    g = gate_of(b.root)
    assert "F8" in g.failed
    assert any("encoder.block.3" in d for d in gaps(g, "F8"))


# ------------------------------------------------------------------------------------------ F9


def test_f9_clean_manifest_but_op_trace_entry_is_labelled_diagnostic_and_reported(tmp_path: Path) -> None:
    """The runtime's own output records the mode (§2.1): the gate goes on, the evidence is labelled
    diagnostic, and the manifest gap is named (analysis-json.md's example: _op_trace entry, empty map)."""
    g = gate_of(build(tmp_path, op_trace=True).root)
    assert g.passed and "F9" not in g.failed and checks(g)["F9"] == "passed"
    assert g.diagnostic and any("_op_trace" in r for r in g.diagnostic_reasons)
    assert any("_op_trace" in d and "run.json records no debug options" in d for d in gaps(g, "F9"))


def test_f9_recorded_diagnostic_attempt_passes_and_is_labelled(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, op_trace=True, debug_options={"debug_op_exec_trace": 1}).root)
    assert g.passed and checks(g)["F9"] == "passed"
    assert g.diagnostic and any("debug_op_exec_trace" in r for r in g.diagnostic_reasons)


def test_f9_sync_all_debug_bit_in_a_clean_manifest_is_diagnostic(tmp_path: Path) -> None:
    kids = [Kernel("RmsNorm_5c1d", "AIV_ONLY", debug_options=0x2), Kernel("QuantMatmul_5b21", "AIC_ONLY")]
    g = gate_of(build(tmp_path, children=kids).root)
    assert "F9" not in g.failed and g.diagnostic
    assert any("0x2" in r for r in g.diagnostic_reasons)
    assert gaps(g, "F9")


def test_f9_dcci_bits_are_not_diagnostic(tmp_path: Path) -> None:
    kids = [Kernel("RmsNorm_5c1d", "AIV_ONLY", debug_options=0x4), Kernel("QuantMatmul_5b21", "AIC_ONLY")]
    g = gate_of(build(tmp_path, children=kids).root)
    assert "F9" not in g.failed and not g.diagnostic


def test_f9_unrecorded_debug_options_are_decided_from_the_evidence(tmp_path: Path) -> None:
    b = build(tmp_path, op_trace=True, run={"candidate": {"super_kernel_debug_options": None}})
    g = gate_of(b.root)
    assert "F9" not in g.failed and g.diagnostic
    assert any("does not record" in d for d in gaps(g, "F9"))


# ------------------------------------------------------------------------------------------ G3 (X1, X2)


def test_g3_x1_compile_failure(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, failure_phase="compile").root)
    assert "G3" in g.failed and "X1" in g.route_hints


def test_g3_x2_no_fused_nodes(tmp_path: Path) -> None:
    files = {"node_detail", "scope_split", "fail_reasons", "super_kernel_log"}
    g = gate_of(build(tmp_path, files=files).root)
    assert "G3" in g.failed and "X2" in g.route_hints


def test_g3_x2_candidate_scope_produced_no_sk(tmp_path: Path) -> None:
    b = build(tmp_path)
    edit(b.model_dir / "sk_fused_nodes.log", "decoder.layer.0.mlp", "decoder.layer.9.attn")
    g = gate_of(b.root, source_root=None)
    assert "G3" in g.failed and "X2" in g.route_hints


def test_g3_unknown_phase_is_decided_by_the_fault_line(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, failure_phase="unknown").root)
    assert "G3" not in g.failed
    assert any("fault evidence" in d for d in gaps(g, "G3"))


def test_g3_unknown_phase_without_fault_evidence_fails(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, fault="none", failure_phase="unknown").root)
    assert "G3" in g.failed


def test_g3_hang_passes(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, fault="none", failure_phase="hang").root)
    assert "G3" not in g.failed and checks(g)["G3"] == "passed"


# ------------------------------------------------------------------------------------------ G4


def test_g4_missing_source_revision_fails(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, run={"candidate": {"source_revision": None}}).root)
    assert "G4" in g.failed
    assert any("source_revision" in c for c in collects(g, "G4"))


def test_g4_missing_probe_is_a_soft_gap_with_the_assumption(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, probe=None).root)
    assert "G4" not in g.failed
    assert any("close/reopen" in d for d in gaps(g, "G4"))


def test_g4_unready_probe_is_a_soft_gap(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, probe={"ready": False}).root)
    assert "G4" not in g.failed and any("ready=False" in d for d in gaps(g, "G4"))


def test_g4_unknown_dialect_is_a_soft_gap(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, handler="anchor_only").root)
    assert "G4" not in g.failed and any("dialect" in d for d in gaps(g, "G4"))


# ------------------------------------------------------------------------------------------ G5


def test_g5_unreadable_artifact(tmp_path: Path) -> None:
    b = build(tmp_path)
    ctx = open_context(b.root)
    loc = localize(ctx)
    (b.root / "source_sites.json").unlink()  # vanished after the inventory: cannot be hashed
    g = run_gate(ctx, loc)
    assert "G5" in g.failed
    assert any("source_sites.json" in d for d in gaps(g, "G5"))


def test_g5_hashes_every_artifact(tmp_path: Path) -> None:
    """G5: every inventoried artifact is frozen with the SHA-256 of its bytes (computed here with
    hashlib from the file itself, independently of skdbg), and the inventory covers the plog,
    run.json and the fused-node log of the scene."""
    b = build(tmp_path)
    ctx = open_context(b.root)
    run_gate(ctx, localize(ctx))
    arts = {a.relpath: a.sha256 for a in ctx.scene.artifacts}
    assert arts == {rel: hashlib.sha256((b.root / rel).read_bytes()).hexdigest() for rel in arts}
    plog = b.plog.relative_to(b.root).as_posix()
    fused = (b.model_dir / "sk_fused_nodes.log").relative_to(b.root).as_posix()
    assert {plog, "run.json", fused} <= set(arts)


# ------------------------------------------------------------------------------------------ X3 / X6 / X7


def test_x3_non_sk_fault_is_marked(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, fault="non_sk").root)
    assert "X3" in g.route_hints
    assert checks(g)["F5"] == "not_run" and checks(g)["F6"] == "not_run"


def test_x6_ge_mode_cannot_pass_g2(tmp_path: Path) -> None:
    g = gate_of(build(tmp_path, fault="ge_sk").root)
    assert "G2" in g.failed and "X6" in g.route_hints and "R1" not in g.route_hints
    assert any("X6" in d for d in gaps(g, "G2"))


def test_x7_environment_failure_before_start(tmp_path: Path) -> None:
    b = build(tmp_path, probe={"ready": False, "runtime_environment": {"loaded": False}})
    b.plog.unlink()
    shutil.rmtree(b.root / "sk_meta")
    g = gate_of(b.root)
    assert not g.passed and g.failed == ("G3",) and g.route_hints == ("X7",)
    assert checks(g)["G1"] == "not_run" and checks(g)["F1"] == "not_run"
    assert any("not_run" in c for c in collects(g, "G3"))


def test_x7_needs_the_environment_to_be_down(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.plog.unlink()
    shutil.rmtree(b.root / "sk_meta")
    g = gate_of(b.root)
    assert "X7" not in g.route_hints and "R1" in g.route_hints


def test_g1_device_disagreeing_with_the_fault_line_is_reported_not_failed(tmp_path: Path) -> None:
    b = build(tmp_path)
    rewrite_run(b.root, device=3)
    g = gate_of(b.root)
    assert "G1" not in g.failed
    assert any("differs from the runtime fault line device_id=0" in d for d in gaps(g, "G1"))
