"""Failure-scene report folder (triage.md §6.1 nine fields, §6.2 eight items + layout, §2.3 index)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import jinja2
import pytest

from skdbg.atomic import OutputNotEmptyError
from skdbg.scenebuilder.scene import BuiltScene, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage import report as report_mod
from skdbg.triage.context import open_context
from skdbg.triage.model import (
    Analysis,
    ChildRef,
    CoreFinding,
    EvidenceItem,
    FaultInfo,
    GateCheck,
    GateResult,
    MarkerEdit,
    Proposal,
    SafetyNote,
    SceneInfo,
    Verdict,
)
from skdbg.triage.report import (
    LABELS,
    NINE_FIELDS,
    REPORT_FILES,
    ReportError,
    redact,
    render_template,
    write_report,
)
from skdbg.triage.schema import validate_analysis

KIDS = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Kernel("Dequant_9a", "AIV_ONLY"),
]


def scene(tmp: Path, **kw: object) -> BuiltScene:
    spec = SceneSpec(children=KIDS, cores=[FaultCore(3, "AIV", pc=("child", 2))], **kw)  # type: ignore[arg-type]
    return build_scene(spec, tmp / "scene")


def hand_analysis(b: BuiltScene) -> Analysis:
    ids = b.node_ids
    child = ChildRef(2, ids[2], "Dequant_9a", "AIV_ONLY", 0, 7, "decoder.layer.0.mlp", "48_1", occurrence=0)
    plog = b.plog.relative_to(b.root).as_posix()
    fault_ev = EvidenceItem("L1", "plog", plog, 5, "fault kernel_name=sk_entry_aiv password=hunter2", True)
    return Analysis(
        scene=SceneInfo(".", 48213, 3, 3),
        gate=GateResult(True, checks=(("G1", "passed"), ("F1", "passed"))),
        fault=FaultInfo(
            "sk",
            "device_fault",
            entry="sk_entry_aiv",
            dialect="D5",
            scope_id=7,
            model="48_1",
            cores=(CoreFinding(3, "AIV", 1, 2, "implicated", task_index=2),),
            evidence=(fault_ev,),
        ),  # fmt: skip
        verdict=Verdict(
            "high",
            "C3",
            "E2 PC names task 2",
            child,
            (child, replace(child, task_index=1, node_id=ids[1], func_name="QuantMatmul_5b21")),
            evidence=(fault_ev,),
            residual_risk=("nodeId not stable across processes",),
        ),
        routes=("R3",),
        next_steps=(),
        proposal=Proposal(
            status="proposed",
            mechanism="explicit_none_exclusion",
            child=child,
            original=tuple(ids),
            excluded=(ids[2],),
            before=tuple(ids[:2]),
            marker_edits=(
                MarkerEdit("src/model.py", 9, "insert", "torch.npu.super_kernel_scope_begin(None)"),
            ),
            safety=(SafetyNote("stream", "single stream", "sk_fused_nodes.log:2"),),
        ),
    )


def test_folder_layout_nine_fields_and_eight_items(tmp_path: Path) -> None:
    b = scene(tmp_path)
    a = hand_analysis(b)
    out = tmp_path / "reports" / "EX1-BASE-attempt-001"
    files = write_report(open_context(b.root), a, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(REPORT_FILES)
    assert files == [out / n for n in REPORT_FILES]
    rec = json.loads((out / "failure_isolation.json").read_text())
    assert list(rec) == [k for k, _ in NINE_FIELDS]
    assert rec["confidence"] == {"level": "high", "rule": "C3", "why": "E2 PC names task 2"}
    assert rec["suspect_child"]["func_name"] == "Dequant_9a"
    assert rec["failure_phase"] == "device_fault"
    assert [v["gate"] for v in rec["verification"]] == ["V1", "V2", "V3", "V4", "V5"]
    assert all(v["result"] == "not_run" and v["reason"] for v in rec["verification"])
    assert "nodeId not stable across processes" in rec["residual_risk"]
    md = (out / "FAILURE_SCENE.md").read_text()
    for i in range(1, 9):
        assert LABELS["en"][f"item{i}"] in md
    for key, label in NINE_FIELDS:
        assert f"{label} (`{key}`)" in md
    # the nine-field JSON is bound verbatim inside the md
    for key, _ in NINE_FIELDS:
        assert json.dumps(rec[key], ensure_ascii=False, indent=2) in md
    assert "QuantMatmul_5b21" in md  # the alternative candidate is named (§6.2 item 6)
    validate_analysis(json.loads((out / "analysis.json").read_text()))
    idx = (out / "REPORT_INDEX.md").read_text()
    for col in (
        "Experiment/Round/Attempt",
        "Failure phase",
        "Local report",
        "Scene artifacts",
        "Fallback",
        "Next diagnosis",
    ):
        assert col in idx
    assert "EX1-BASE-attempt-001/FAILURE_SCENE.md" in idx


def test_evidence_index_sha256_matches_files_and_lists_missing(tmp_path: Path) -> None:
    b = scene(tmp_path, files=frozenset({"fused_nodes", "device_args", "super_kernel_log"}))
    out = tmp_path / "rep"
    write_report(open_context(b.root), hand_analysis(b), out)
    record = json.loads((out / "evidence_index.json").read_text())
    assert set(record) >= {"run", "candidate", "artifacts", "fault_lines", "dialect", "diagnostic_mode"}
    assert record["run"]["pid"] == 48213 and record["candidate"]["scope_names"] == ["decoder.layer.0.mlp"]
    assert record["fault_lines"] and all(f["relpath"].startswith("log/plog/") for f in record["fault_lines"])
    assert record["diagnostic_mode"] == {
        "op_trace": False,
        "sync_all": False,
        "cross_core_check": False,
        "per_op_max_core": False,
        "prof_sk_on": False,
    }
    idx = record["artifacts"]
    present = [r for r in idx if r["status"] == "present"]
    assert {r["role"] for r in present} >= {"plog", "run_json", "fused_nodes", "device_args", "marker_file"}
    for r in present:
        data = (b.root / r["relpath"]).read_bytes()
        assert r["sha256"] == hashlib.sha256(data).hexdigest()
        assert r["size"] == len(data)
    plog = next(r for r in present if r["role"] == "plog")
    assert plog["first_ts"] and plog["last_ts"] and plog["first_ts"] <= plog["last_ts"]
    fused = next(r for r in present if r["role"] == "fused_nodes")
    assert fused["producer_pid"] == 48213 and fused["first_ts"]
    missing = {r["role"]: r["status"] for r in idx if r["status"] != "present"}
    assert set(missing) == {"task_queue", "fail_reasons", "scope_split"}
    assert all(s.startswith("missing(") for s in missing.values())
    md = (out / "FAILURE_SCENE.md").read_text()
    assert "| task_queue | — |" in md


def test_diagnostic_mode_recorded(tmp_path: Path) -> None:
    b = scene(tmp_path, debug_options={"debug_sync_all": 1})
    out = tmp_path / "rep"
    write_report(open_context(b.root), hand_analysis(b), out)
    mode = json.loads((out / "evidence_index.json").read_text())["diagnostic_mode"]
    assert mode["sync_all"] is True and mode["cross_core_check"] is False


def test_zh_labels(tmp_path: Path) -> None:
    b = scene(tmp_path)
    out = tmp_path / "zh"
    write_report(open_context(b.root), hand_analysis(b), out, lang="zh")
    md = (out / "FAILURE_SCENE.md").read_text(encoding="utf-8")
    for i in range(1, 9):
        assert LABELS["zh"][f"item{i}"] in md
    assert LABELS["zh"]["record"] in md and LABELS["en"]["item1"] not in md
    assert "失败索引" in (out / "REPORT_INDEX.md").read_text(encoding="utf-8")
    with pytest.raises(ReportError):
        write_report(open_context(b.root), hand_analysis(b), tmp_path / "fr", lang="fr")


def test_verification_results_are_recorded(tmp_path: Path) -> None:
    b = scene(tmp_path)
    checks = [
        GateCheck("V1", "passed", "probe ready"),
        GateCheck("V2", "failed", "exit status 1"),
        GateCheck("V3", "not_run", "not run: V2 failed"),
    ]
    out = tmp_path / "v"
    write_report(open_context(b.root), hand_analysis(b), out, verification=checks)
    rec = json.loads((out / "failure_isolation.json").read_text())
    assert rec["verification"] == [
        {"gate": "V1", "result": "passed", "artifact": "probe ready"},
        {"gate": "V2", "result": "failed", "reason": "exit status 1"},
        {"gate": "V3", "result": "not_run", "reason": "not run: V2 failed"},
    ]
    assert "last passed: V1; failed: V2" in (out / "FAILURE_SCENE.md").read_text()


def test_strict_undefined_catches_missing_field() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render_template("report_index.md.j2", L=LABELS["en"], run={}, report_dir="x")


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = scene(tmp_path)
    parent = tmp_path / "reports"
    parent.mkdir()

    def boom(doc: object) -> str:
        raise RuntimeError("disk full")

    monkeypatch.setattr(report_mod, "_dump", boom)
    with pytest.raises(RuntimeError):
        write_report(open_context(b.root), hand_analysis(b), parent / "r")
    assert list(parent.iterdir()) == []


def test_refuses_out_dir_inside_scene_and_existing_report(tmp_path: Path) -> None:
    b = scene(tmp_path)
    before = sorted(p.relative_to(b.root) for p in b.root.rglob("*"))
    ctx = open_context(b.root)
    for inside in (b.root, b.root / "report", b.root / "sk_meta" / "r"):
        with pytest.raises(OutputNotEmptyError, match=r"inside .*: it is sealed"):
            write_report(ctx, hand_analysis(b), inside)
    assert sorted(p.relative_to(b.root) for p in b.root.rglob("*")) == before
    out = tmp_path / "r"
    write_report(ctx, hand_analysis(b), out)
    with pytest.raises(OutputNotEmptyError, match="already exists"):
        write_report(ctx, hand_analysis(b), out)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert write_report(ctx, hand_analysis(b), empty)[0].is_file()


def test_secrets_redacted(tmp_path: Path) -> None:
    b = scene(tmp_path, run={"command": "python infer.py --api_key=sk-123 --token abcdef --steps 4"})
    out = tmp_path / "r"
    write_report(open_context(b.root), hand_analysis(b), out)
    for name in ("FAILURE_SCENE.md", "failure_isolation.json"):
        text = (out / name).read_text()
        assert "sk-123" not in text and "abcdef" not in text and "hunter2" not in text
        assert "<redacted>" in text and "--steps 4" in text
    assert redact("Authorization: Bearer abc.def") == "Authorization: <redacted>"
    assert redact("password=x1 user=a") == "password=<redacted> user=a"


def test_gate_failure_without_run_json_still_writes_a_scene(tmp_path: Path) -> None:
    b = scene(tmp_path, run=None, probe=None)
    a = hand_analysis(b)
    a = replace(
        a,
        gate=GateResult(False, failed=("G1",), checks=(("G1", "failed"),)),
        verdict=Verdict("n/a", "C0", "entry gate failed (G1)", missing=("run.json: command, rank",)),
        proposal=Proposal(status="none", reason="gate failed"),
        routes=("R1",),
    )
    out = tmp_path / "r"
    write_report(open_context(b.root), a, out)
    rec = json.loads((out / "failure_isolation.json").read_text())
    assert rec["suspect_child"] is None and rec["exclusion_proposal"]["status"] == "none"
    assert rec["failed_attempt"]["command"] is None and rec["failed_attempt"]["pid"] == 48213
    assert any("run.json: command, rank" in r for r in rec["residual_risk"])
    md = (out / "FAILURE_SCENE.md").read_text()
    assert "failed entry-gate checks: G1 run identity known" in md and "suspect: none" in md
    idx = json.loads((out / "evidence_index.json").read_text())["artifacts"]
    assert {r["role"] for r in idx if r["status"].startswith("missing(")} >= {"run_json", "env_probe"}


def test_engine_analysis_reports(tmp_path: Path) -> None:
    engine = pytest.importorskip("skdbg.triage.engine")
    for name, kw in {"sk": {}, "non_sk": {"fault": "non_sk"}, "hang": {"fault": "none"}}.items():
        b = build_scene(
            SceneSpec(children=KIDS, cores=[FaultCore(3, "AIV", pc=("child", 2))], **kw), tmp_path / name
        )  # type: ignore[arg-type]
        ctx = open_context(b.root)
        files = write_report(ctx, engine.analyze_context(ctx), tmp_path / "reports" / name, lang="zh")
        assert [f.name for f in files] == list(REPORT_FILES)
        validate_analysis(json.loads(files[3].read_text()))
