"""Scoped regeneration: `skdbg codegen candidate` on the bundled scenes (exclusion, split, refusal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main

ROOT = Path(__file__).resolve().parents[3]
SCENES = ROOT / "examples" / "scenes"


def _analysis(tmp_path: Path, scene: str) -> Path:
    res = CliRunner().invoke(main, ["analyze", str(SCENES / scene), "--format", "json"])
    assert res.exit_code == 0, res.output
    path = tmp_path / "analysis.json"
    path.write_text(res.stdout)
    return path


def _candidate(tmp_path: Path, scene: str, proposal: Path) -> tuple[int, Path, str]:
    out = tmp_path / "cand"
    res = CliRunner().invoke(
        main, ["codegen", "candidate", str(SCENES / scene), "--proposal", str(proposal), "-o", str(out)]
    )
    return res.exit_code, out, res.stderr


def test_single_child_exclusion(tmp_path: Path) -> None:
    code, out, err = _candidate(tmp_path, "high-single-stream", _analysis(tmp_path, "high-single-stream"))
    assert code == 0, err
    manifest = json.loads((out / "candidate.json").read_text())
    assert manifest["change"]["mechanism"] == "explicit_none_exclusion"
    pred = manifest["prediction"]
    assert [s["kernels"] for s in pred["candidate_sks"]] == [[100, 101], [103]]
    assert pred["agrees_with_proposal"] and pred["unfused"] == {"102": "IN_UNFUSIBLE_SCOPE"}
    assert manifest["relaunch"]["env"] == {"ASCEND_OP_COMPILE_SAVE_KERNEL_META": "1"}
    assert manifest["relaunch"]["compile_options"]["super_kernel_debug_options"] == {}
    assert manifest["relaunch"]["dropped_debug_options"] == {"debug_op_exec_trace": 1}
    assert [g["gate"] for g in manifest["verification_plan"]] == ["V1", "V2", "V3", "V4", "V5"]
    assert manifest["verification_plan"][2]["expected_reason"] == "IN_UNFUSIBLE_SCOPE"
    patch = (out / "marker.patch").read_text()
    assert "+        torch.npu.super_kernel_scope_begin(None)" in patch and patch.startswith(
        "--- a/src/model.py"
    )
    sk0 = json.loads((out / "sk" / "sk_0_decoder.layer.0.mlp.json").read_text())
    assert sk0["break"].startswith("breakReason=UNFUSIBLE_NODE, triggerNode=102")
    assert sk0["sk_function"].startswith("sk_7_decoder.layer.0.mlp_start_")
    assert not list(tmp_path.glob(".cand.tmp-*"))


def test_dependency_aligned_split_keeps_event_edges(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, "event-bound-split")
    proposal = json.loads(analysis.read_text())["proposal"]
    bare = tmp_path / "proposal.json"
    bare.write_text(json.dumps(proposal))  # the bare "proposal" object is accepted too
    code, out, err = _candidate(tmp_path, "event-bound-split", bare)
    assert code == 0, err
    manifest = json.loads((out / "candidate.json").read_text())
    assert manifest["change"]["mechanism"] == "dependency_aligned_split"
    sks = manifest["prediction"]["candidate_sks"]
    assert [s["kernels"] for s in sks] == [[100, 101], [106]]
    assert {Path(s["file"]).name for s in sks} == {
        "sk_0_decoder.layer.0.mlp.pre.json",
        "sk_1_decoder.layer.0.mlp.post.json",
    }
    assert set(manifest["prediction"]["unfused"]) == {"102", "103", "104", "105"}
    pre = json.loads((out / sks[0]["file"]).read_text())
    # a scope the edit creates has no runtime id yet
    assert (
        pre["sk_function"]
        == "sk_?_decoder.layer.0.mlp.pre_start_RmsNorm_5c1d07aa_end_QuantBatchMatmulV3_8ab2c4f1"
    )
    assert pre["edges"] == []  # the event pair left the SK together with its fragment
    assert manifest["verification_plan"][2]["expected_reason"] == "NOT_IN_SCOPE"
    assert manifest["verification_plan"][3]["needed"] is True
    # the event pair (102 notify / 103 wait) stays together outside both SKs, in order
    assert "ev1.record()" in (SCENES / "event-bound-split" / "src" / "model.py").read_text()
    patch = (out / "marker.patch").read_text()
    assert '+        torch.npu.super_kernel_scope_end("decoder.layer.0.mlp.pre")' in patch


def test_blocked_proposal_is_refused_and_nothing_written(tmp_path: Path) -> None:
    doc = json.loads(_analysis(tmp_path, "high-single-stream").read_text())
    doc["proposal"]["status"] = "blocked"
    doc["proposal"]["blocked_reason"] = "F equals the whole scope"
    path = tmp_path / "blocked.json"
    path.write_text(json.dumps(doc))
    code, out, err = _candidate(tmp_path, "high-single-stream", path)
    assert code == 3
    assert "blocked (F equals the whole scope)" in err
    assert not out.exists() and not list(tmp_path.glob(".cand*"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not JSON"),
        ('{"x": 1}', "expected the skdbg.analysis/1"),
        ('{"status": "none"}', 'only a "proposed"'),
    ],
)
def test_bad_proposals_exit_3(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    code, out, err = _candidate(tmp_path, "high-single-stream", path)
    assert code == 3 and message in err and not out.exists()


def test_existing_output_is_not_overwritten(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, "high-single-stream")
    (tmp_path / "cand").mkdir()
    (tmp_path / "cand" / "keep.txt").write_text("x")
    code, out, err = _candidate(tmp_path, "high-single-stream", analysis)
    assert code == 2 and "already exists" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_event_pair_inside_a_remaining_sk_is_kept_as_internal_edge(tmp_path: Path) -> None:
    """Excluding the last child of the event-bound scene keeps the notify/wait pair inside SK 0."""
    proposal = json.loads(_analysis(tmp_path, "event-bound-split").read_text())["proposal"]
    proposal.update(
        mechanism="explicit_none_exclusion",
        excluded=[106],
        collateral=[],
        before=[100, 101, 104, 105],
        after=[],
        marker_edits=[
            {
                "file": "src/model.py",
                "line": 18,
                "op": "insert",
                "text": "        torch.npu.super_kernel_scope_begin(None)",
            },
            {
                "file": "src/model.py",
                "line": 19,
                "op": "insert",
                "text": "        torch.npu.super_kernel_scope_end(None)",
            },
        ],
    )
    path = tmp_path / "p.json"
    path.write_text(json.dumps(proposal))
    code, out, err = _candidate(tmp_path, "event-bound-split", path)
    assert code == 0, err
    (sk,) = sorted((out / "sk").iterdir())
    desc = json.loads(sk.read_text())
    assert desc["kernels"] == [100, 101, 104, 105]
    assert (
        desc["sk_function"] == "sk_7_decoder.layer.0.mlp_start_RmsNorm_5c1d07aa_end_FlashAttentionScore_3b8e"
    )
    assert (desc["kernel_type"], desc["entry"]) == ("MIX_AIC_1_2", "sk_entry_mix12")
    edges = {(e["node"], e["partner"], e["partner_location"]) for e in desc["edges"]}
    assert edges == {(102, 103, "internal"), (103, 102, "internal")}
    types = [(t["node_id"], t["type"], t["queue"]) for t in desc["tasks"]]
    # NOTIFY takes the previous kernel's queue (AIC matmul), WAIT the next kernel's (AIV rope)
    assert (102, "EVENT_NOTIFY", "aic") in types and (103, "EVENT_WAIT", "aiv") in types


def test_unbalanced_marker_edit_is_refused(tmp_path: Path) -> None:
    doc = json.loads(_analysis(tmp_path, "high-single-stream").read_text())
    doc["proposal"]["marker_edits"] = doc["proposal"]["marker_edits"][:1]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    code, out, err = _candidate(tmp_path, "high-single-stream", path)
    assert code == 3 and "unbalanced" in err and not out.exists()


def test_v3_compares_by_function_name(tmp_path: Path) -> None:
    """The candidate's expected SKs are funcName lists; compare_functions checks a fresh scene with them."""
    from skdbg.codegen.fusion.plan_scene import compare_functions, models_of_scene

    code, out, err = _candidate(tmp_path, "high-single-stream", _analysis(tmp_path, "high-single-stream"))
    assert code == 0, err
    v3 = json.loads((out / "candidate.json").read_text())["verification_plan"][2]
    expected = v3["expected_functions"]
    assert expected == [["RmsNorm_5c1d07aa", "QuantBatchMatmulV3_8ab2c4f1"], ["Cast_9f3e21"]]
    assert '"step": 7' in json.loads((out / "candidate.json").read_text())["verification_plan"][1]["check"]
    (old_model,) = models_of_scene(SCENES / "high-single-stream")
    problems = compare_functions(expected, old_model)  # the failed scene still has one SK: V3 must fail
    assert problems and "expected 2 SK(s)" in problems[0]
    assert (
        compare_functions(
            [["RmsNorm_5c1d07aa", "QuantBatchMatmulV3_8ab2c4f1", "SwiGlu_41d9e0", "Cast_9f3e21"]], old_model
        )
        == []
    )


def test_close_reopen_exclusion_predicts_not_in_scope(tmp_path: Path) -> None:
    """Mechanism B: the same scope closed before and reopened after the child — two SKs, NOT_IN_SCOPE."""
    doc = json.loads(_analysis(tmp_path, "high-single-stream").read_text())
    name = '"decoder.layer.0.mlp"'
    doc["proposal"].update(
        mechanism="close_reopen_exclusion",
        marker_edits=[
            {
                "file": "src/model.py",
                "line": 13,
                "op": "insert",
                "text": f"        torch.npu.super_kernel_scope_end({name})",
            },
            {
                "file": "src/model.py",
                "line": 14,
                "op": "insert",
                "text": f"        torch.npu.super_kernel_scope_begin({name})",
            },
        ],
    )
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    code, out, err = _candidate(tmp_path, "high-single-stream", path)
    assert code == 0, err
    manifest = json.loads((out / "candidate.json").read_text())
    pred = manifest["prediction"]
    assert [s["kernels"] for s in pred["candidate_sks"]] == [[100, 101], [103]]
    assert pred["unfused"] == {"102": "NOT_IN_SCOPE"} and pred["agrees_with_proposal"]
    # a named-scope boundary, not a break: both halves keep the scope's id
    assert all(s["break"] == "breakReason=NONE" for s in pred["candidate_sks"])
    assert manifest["verification_plan"][2]["expected_reason"] == "NOT_IN_SCOPE"
