"""skdbg.analysis/1 and skdbg.verify/1 schemas + the cross-field rules (analysis-json.md, triage.md §5.1)."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from skdbg.scenebuilder.scene import Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.model import (
    Analysis,
    ChildRef,
    CoreFinding,
    EvidenceItem,
    FaultInfo,
    GateResult,
    MarkerEdit,
    NextStep,
    Proposal,
    SafetyNote,
    SceneInfo,
    Verdict,
)
from skdbg.triage.schema import (
    SchemaError,
    check_marker_edits,
    load_schema,
    validate_analysis,
    validate_verify,
)

CHILD = ChildRef(2, 122, "DequantSwiglu_9a", "AIV_ONLY", 0, 7, "decoder.layer.0.mlp", "48_1", "sym", 0, 2)


def analysis(confidence: str = "high", status: str = "proposed") -> Analysis:
    ev = EvidenceItem("L2", "plog", "log/plog/plog-1_2.log", 17, "[Core 3] CurrentPC: 0x12c0", True)
    prop = Proposal(
        status=status,
        mechanism="explicit_none_exclusion" if status == "proposed" else None,
        child=CHILD,
        original=(120, 121, 122, 123),
        excluded=(122,),
        before=(120, 121),
        after=(123,),
        marker_edits=(
            MarkerEdit("src/model.py", 12, "insert", "        torch.npu.super_kernel_scope_begin(None)"),
            MarkerEdit("src/model.py", 13, "insert", "        torch.npu.super_kernel_scope_end(None)"),
        ),
        safety=(SafetyNote("stream", "single stream", "sk_fused_nodes.log:3"),),
    )
    return Analysis(
        scene=SceneInfo(".", 48213, 3, 3),
        gate=GateResult(True, checks=(("G1", "passed"),)),
        fault=FaultInfo(
            "sk",
            "device_fault",
            entry="sk_entry_aiv",
            op_trace=False,
            dialect="D5",
            scope_id=7,
            model="48_1",
            cores=(CoreFinding(3, "AIV", 0x1000, 0x1234, "implicated", task_index=2),),
        ),
        verdict=Verdict(confidence, "C3", "E2 names task 2", CHILD, (CHILD,), evidence=(ev,)),
        routes=("R3",),
        next_steps=(NextStep("D1", {"debug_op_exec_trace": 1}, "trace"),),
        proposal=prop,
    )


def doc(**kw: Any) -> dict[str, Any]:
    return analysis(**kw).to_json()


def verify_doc() -> dict[str, Any]:
    return {
        "schema": "skdbg.verify/1",
        "routes": ["R7"],
        "verification": [
            {
                "gate": "V1",
                "result": "passed",
                "detail": "ok",
                "evidence": [{"file": "run.json", "line": 3, "excerpt": "x"}],
            },
            {"gate": "V2", "result": "failed", "detail": "exit 1", "evidence": []},
            {"gate": "V3", "result": "not_run", "detail": "V2 failed", "evidence": []},
        ],
        "round": {"round_id": "S3-BASE-X1", "status": "failed"},
        "attempt": {"round_id": "S3-BASE-X1", "attempt": 1, "status": "failed"},
        "ledger": [{"round_id": "S3-BASE", "attempt": 1, "status": "failed"}],
        "refused_evidence": [{"path": "sk_meta/48213/x.log", "reason": "belongs to the failed attempt (R7)"}],
    }


def test_schemas_are_draft_2020_12() -> None:
    for name in ("analysis.schema.json", "verify.schema.json"):
        assert load_schema(name)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_valid_analysis_passes_and_extra_keys_are_allowed() -> None:
    d = doc()
    validate_analysis(d)
    d["future_key"] = {"anything": 1}
    d["verdict"]["new_field"] = []
    validate_analysis(d)


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("fault", "kind"), "sk_entry", "/fault/kind"),
        (("fault", "phase"), "crash", "/fault/phase"),
        (("fault", "dialect"), "D9", "/fault/dialect"),
        (("verdict", "confidence"), "certain", "/verdict/confidence"),
        (("verdict", "rule"), "C9", "/verdict/rule"),
        (("proposal", "status"), "maybe", "/proposal/status"),
        (("proposal", "mechanism"), "delete_op", "/proposal/mechanism"),
        (("proposal", "excluded"), ["122"], "/proposal/excluded/0"),
        (("routes",), ["R8"], "/routes/0"),
        (("schema",), "skdbg.analysis/2", "/schema"),
    ],
)
def test_bad_values_are_rejected(path: tuple[str, ...], value: Any, where: str) -> None:
    d = doc()
    obj = d
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value
    with pytest.raises(SchemaError) as exc:
        validate_analysis(d)
    assert exc.value.where == where


def test_addresses_are_hex_strings_and_roles_enumerated() -> None:
    d = doc()
    d["fault"]["cores"][0]["current_pc"] = 4660
    with pytest.raises(SchemaError, match="current_pc"):
        validate_analysis(d)
    d = doc()
    d["fault"]["cores"][0]["role"] = "culprit"
    with pytest.raises(SchemaError):
        validate_analysis(d)


def test_required_keys() -> None:
    for key in ("scene", "gate", "fault", "verdict", "routes", "next_steps", "proposal"):
        d = doc()
        del d[key]
        with pytest.raises(SchemaError, match=key):
            validate_analysis(d)


def test_evidence_needs_line_or_json_path() -> None:
    d = doc()
    d["verdict"]["evidence"][0]["line"] = None
    with pytest.raises(SchemaError, match="/verdict/evidence/0"):
        validate_analysis(d)
    d["verdict"]["evidence"][0]["json_path"] = "$.scopes[0].taskQueues"
    validate_analysis(d)


def test_elf_evidence_may_have_no_line() -> None:
    # an ELF image has no lines: allowed only for source bin_files and a .o file
    d = doc()
    item = {"level": "L2", "source": "bin_files", "file": "sk_meta/1/m/bin_files/a_0x1.o", "line": None,
            "excerpt": "PC 0x10 at image offset 0x10", "agrees": True}  # fmt: skip
    d["verdict"]["evidence"].append(item)
    validate_analysis(d)
    item["source"] = "plog"
    with pytest.raises(SchemaError):
        validate_analysis(d)
    item["source"], item["file"] = "bin_files", "sk_meta/1/m/sk_device_args.log"
    with pytest.raises(SchemaError):
        validate_analysis(d)


def test_proposed_needs_a_mechanism() -> None:
    d = doc()
    d["proposal"]["mechanism"] = None
    with pytest.raises(SchemaError, match="/proposal/mechanism"):
        validate_analysis(d)


@pytest.mark.parametrize("confidence", ["low", "n/a"])
def test_low_or_na_never_proposed(confidence: str) -> None:
    with pytest.raises(SchemaError, match="never carries a 'proposed'"):
        validate_analysis(doc(confidence=confidence))
    validate_analysis(doc(confidence=confidence, status="blocked"))
    validate_analysis(doc(confidence=confidence, status="none"))


def test_marker_edits_ascending_and_non_overlapping() -> None:
    d = doc()
    d["proposal"]["marker_edits"].reverse()
    with pytest.raises(SchemaError, match="ascending"):
        validate_analysis(d)
    d = doc()
    d["proposal"]["marker_edits"][1]["line"] = 12
    with pytest.raises(SchemaError, match="overlaps"):
        validate_analysis(d)
    # an insert before line 12 and a replace of line 12 do not overlap; other files are independent
    ok = [
        {"file": "a.py", "line": 12, "op": "insert", "text": "x"},
        {"file": "a.py", "line": 12, "op": "replace", "text": "y"},
        {"file": "b.py", "line": 3, "op": "delete", "text": ""},
        {"file": "a.py", "line": 14, "op": "delete", "text": ""},
    ]
    check_marker_edits(ok)
    with pytest.raises(SchemaError, match="overlaps"):
        check_marker_edits([*ok, {"file": "a.py", "line": 14, "op": "replace", "text": "z"}])


def test_model_round_trip_is_valid() -> None:
    a = analysis()
    validate_analysis(a.to_json())
    validate_analysis(replace(a, proposal=Proposal(status="none", reason="no suspect")).to_json())


def test_valid_verify_document() -> None:
    validate_verify(verify_doc())
    d = verify_doc()
    d["round"]["status"] = "passed_gates(V1..V3)"
    d["extra"] = 1
    validate_verify(d)


def test_gate_after_failed_must_be_not_run() -> None:
    d = verify_doc()
    d["verification"][2]["result"] = "passed"
    with pytest.raises(SchemaError, match="after V2 failed"):
        validate_verify(d)
    d["verification"][2]["result"] = "failed"
    with pytest.raises(SchemaError, match="not_run"):
        validate_verify(d)


def test_gate_order_and_uniqueness() -> None:
    d = verify_doc()
    d["verification"].reverse()
    with pytest.raises(SchemaError, match="order"):
        validate_verify(d)
    d = verify_doc()
    d["verification"][1]["gate"] = "V1"
    with pytest.raises(SchemaError, match="unique"):
        validate_verify(d)


@pytest.mark.parametrize(
    ("key", "field", "value"),
    [
        ("round", "status", "passed"),
        ("round", "status", "passed_gates(V1..V7)"),
        ("attempt", "status", "succeeded"),
        ("attempt", "attempt", 0),
    ],
)
def test_bad_round_and_attempt_statuses(key: str, field: str, value: Any) -> None:
    d = copy.deepcopy(verify_doc())
    d[key][field] = value
    with pytest.raises(SchemaError):
        validate_verify(d)


def test_verify_requires_every_contract_key() -> None:
    for key in ("routes", "verification", "round", "attempt", "ledger", "refused_evidence"):
        d = verify_doc()
        del d[key]
        with pytest.raises(SchemaError, match=key):
            validate_verify(d)


# ------------------------------------------------------------------------------------------ engine output


ENGINE_SCENES: dict[str, dict[str, Any]] = {
    "sk_child": {"cores": [FaultCore(3, "AIV", pc=("child", 4))]},
    "sk_entry_d2": {"cores": [FaultCore(3, "AIV", pc=("entry",))], "dialect": "D2"},
    "pc_zero_no_run": {"cores": [FaultCore(3, "AIV", pc=("zero",))], "run": None, "probe": None},
    "non_sk": {"fault": "non_sk"},
    "ge_sk": {"fault": "ge_sk"},
    "hang": {"fault": "none"},
}


@pytest.mark.parametrize("name", sorted(ENGINE_SCENES))
def test_engine_output_follows_the_contract(tmp_path: Path, name: str) -> None:
    engine = pytest.importorskip("skdbg.triage.engine")
    kids = [
        Kernel("RmsNorm_5c1d", "AIV_ONLY"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("Rope_1", "AIV_ONLY", stream=1),
        Kernel("QuantMatmul_77", "AIC_ONLY"),
    ]
    built = build_scene(SceneSpec(children=kids, **ENGINE_SCENES[name]), tmp_path / name)
    validate_analysis(engine.analyze_context(open_context(built.root)).to_json())


def test_engine_output_on_the_example_scene() -> None:
    engine = pytest.importorskip("skdbg.triage.engine")
    root = Path(__file__).resolve().parents[2] / "examples/scenes/aiv-fault-add-custom"
    validate_analysis(engine.analyze_context(open_context(root)).to_json())
