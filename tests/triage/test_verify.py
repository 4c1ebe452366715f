"""Revalidation V1–V5 and R7 (triage.md §5, §7 R7; analysis-json.md verify contract).

OLD = a built failure scene (fault in child 2 of a 4-child SK); NEW = the scene rebuilt the way the
runtime would after the exclusion: the excluded child ``unfusible`` with IN_UNFUSIBLE_SCOPE, the SK
split into before/after SKs, a new pid, exit 0, no fault, and ``src/model.py`` = OLD + the edits.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import apply_edits_text as apply_edits
from skdbg.parsers.markers import classify_mechanism, scan_text
from skdbg.scenebuilder.scene import BuiltScene, Event, FaultCore, Kernel, SceneSpec, SkDef, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.model import ChildRef, MarkerEdit, Proposal
from skdbg.triage.schema import validate_verify
from skdbg.triage.verify import R7_REASON, VerifyResult, verify

SCOPE = "decoder.layer.0.mlp"
K = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Kernel("DequantSwiglu_9a", "AIV_ONLY"),
    Kernel("QuantMatmul_77", "AIC_ONLY"),
]
NEW_RUN = {"round_id": "EX-BASE-X1", "attempt": 1, "exit": {"status": 0, "signal": None, "timeout": False}}
OLD_RUN = {"round_id": "EX-BASE", "attempt": 1}


@dataclass
class Pair:
    old: BuiltScene
    new: BuiltScene
    proposal: Proposal

    def run(self, **kw: Any) -> VerifyResult:
        res = verify(open_context(self.old.root), open_context(self.new.root), self.proposal, **kw)
        validate_verify(res.to_json())  # every result follows the contract
        return res


def _wrap_edits(old: BuiltScene, first: int, after_last: int, arg: str = "None") -> tuple[MarkerEdit, ...]:
    ind = " " * 8
    return (
        MarkerEdit("src/model.py", first, "insert", f"{ind}torch.npu.super_kernel_scope_begin({arg})"),
        MarkerEdit("src/model.py", after_last, "insert", f"{ind}torch.npu.super_kernel_scope_end({arg})"),
    )


def make_pair(
    tmp: Path,
    *,
    new_spec: dict[str, Any] | None = None,
    source: Callable[[str, Proposal], str] | None = None,
    mechanism: str = "explicit_none_exclusion",
) -> Pair:
    old = build_scene(
        SceneSpec(children=K, cores=[FaultCore(3, "AIV", pc=("child", 2))], run=OLD_RUN), tmp / "old"
    )
    ids = old.node_ids
    child = ChildRef(2, ids[2], "DequantSwiglu_9a", "AIV_ONLY", 0, 7, SCOPE, "48_1", occurrence=0)
    lines = old.source_lines
    proposal = Proposal(
        status="proposed",
        mechanism=mechanism,
        child=child,
        original=tuple(ids),
        excluded=(ids[2],),
        before=tuple(ids[:2]),
        after=(ids[3],),
        marker_edits=_wrap_edits(old, lines[ids[2]], lines[ids[3]]),
    )
    spec: dict[str, Any] = {
        "children": K[:2],
        "extra_sks": [SkDef(8, SCOPE, [K[3]])],
        "unfusible": [(K[2], "IN_UNFUSIBLE_SCOPE")],
        "pid": 50001,
        "fault": "none",
        "run": NEW_RUN,
    }
    spec.update(new_spec or {})
    new = build_scene(SceneSpec(**spec), tmp / "new")
    old_src = (old.root / "src/model.py").read_text()
    text = source(old_src, proposal) if source else apply_edits(old_src, proposal.marker_edits)
    (new.root / "src/model.py").write_text(text)
    return Pair(old, new, proposal)


def results(res: VerifyResult) -> list[str]:
    return [g.result for g in res.verification]


def edit_json(path: Path, fn: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


# ------------------------------------------------------------------------------------------ pass


def test_all_gates_pass_r7_and_ledger(tmp_path: Path) -> None:
    res = make_pair(tmp_path).run()
    assert results(res) == ["passed", "passed", "passed", "not_run", "not_run"]
    assert "not needed" in res.gate("V4").detail
    assert ">= 3" in res.gate("V5").detail
    assert res.routes == ("R7",)
    assert res.round_status == "passed_gates(V1..V3)"
    assert res.round_id == "EX-BASE-X1"
    assert res.attempt.status == "passed"
    # the failed attempt stays failed (negative evidence), the new one appends
    assert [(e.round_id, e.status) for e in res.ledger] == [("EX-BASE", "failed"), ("EX-BASE-X1", "passed")]
    assert res.refused_evidence == ()
    assert res.mechanism_found == "explicit_none_exclusion"
    ev = res.gate("V3").evidence
    assert any("sk_fusion_fail_reasons.log" in e.file and "DequantSwiglu_9a" in e.excerpt for e in ev)


# ------------------------------------------------------------------------------------------ V1


def test_v1_probe_not_ready_stops_later_gates(tmp_path: Path) -> None:
    res = make_pair(tmp_path, new_spec={"probe": {"ready": False}}).run()
    assert results(res) == ["failed", "not_run", "not_run", "not_run", "not_run"]
    assert "ready" in res.gate("V1").detail
    assert all(g.detail == "not run: V1 failed" for g in res.verification[1:])
    assert res.routes == ()
    assert res.attempt.status == "failed" and res.round_status == "failed"


def test_v1_none_exclusion_needs_accepted_probe(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    probe = pair.new.probe_json or pair.new.root / "env/check_environment.json"
    edit_json(probe, lambda d: d["scope_capabilities"]["explicit_none_exclusion"].update(accepted=False))
    res = pair.run()
    assert results(res)[0] == "failed" and "explicit_none_exclusion" in res.gate("V1").detail


def test_v1_t8_string_none(tmp_path: Path) -> None:
    res = make_pair(
        tmp_path,
        source=lambda s, p: apply_edits(s, _wrap_edits(None, *[e.line for e in p.marker_edits], '"None"')),  # type: ignore[arg-type]
    ).run()
    assert results(res)[0] == "failed"
    assert "T8" in res.gate("V1").detail
    assert res.gate("V1").evidence[0].file == "src/model.py"
    # §6.3: the string is not the declared None literal — a materialisation mismatch, so invalid, not failed
    assert res.attempt.status == "invalid" and res.round_status == "open"


def test_v1_unbalanced_markers(tmp_path: Path) -> None:
    """No declared diff to compare with: NEW's unbalanced markers fail V1 (a static check, §5.1)."""
    pair = make_pair(tmp_path, source=lambda s, p: apply_edits(s, p.marker_edits[:1]))
    pair.proposal = replace(pair.proposal, marker_edits=())
    res = pair.run()
    assert results(res)[0] == "failed" and "unbalanced" in res.gate("V1").detail
    assert res.attempt.status == "failed"


def test_v1_half_materialised_change_is_invalid(tmp_path: Path) -> None:
    """NEW holds only the begin(None) of the declared pair: not the declared change -> invalid (§6.3)."""
    pair = make_pair(tmp_path, source=lambda s, p: apply_edits(s, p.marker_edits[:1]))
    res = pair.run()
    end_line = pair.proposal.marker_edits[1].line
    assert results(res)[0] == "failed" and res.attempt.status == "invalid"
    detail = res.gate("V1").detail
    assert "super_kernel_scope_end(None) is missing" in detail and "unbalanced" in detail
    # cited where the end marker was expected: before OLD's line end_line, one lower in NEW (begin added)
    assert res.gate("V1").evidence[0].line == end_line + 1


def test_v1_materialisation_mismatch_is_invalid(tmp_path: Path) -> None:
    res = make_pair(tmp_path, source=lambda s, p: s).run()  # NEW source lacks the declared change
    assert results(res)[0] == "failed"
    assert res.attempt.status == "invalid"
    assert res.ledger[0].status == "failed"


def test_v1_mechanism_differs_from_declared(tmp_path: Path) -> None:
    res = make_pair(tmp_path, mechanism="close_reopen_exclusion").run()
    assert results(res)[0] == "failed"
    assert "declared close_reopen_exclusion" in res.gate("V1").detail


def test_v1_same_round_is_not_a_new_candidate(tmp_path: Path) -> None:
    res = make_pair(tmp_path, new_spec={"run": {**NEW_RUN, "round_id": "EX-BASE"}}).run()
    assert results(res)[0] == "failed" and "new round" in res.gate("V1").detail


def test_v1_diagnostics_off_unless_declared(tmp_path: Path) -> None:
    pair = make_pair(tmp_path, new_spec={"debug_options": {"debug_op_exec_trace": 1}})
    res = pair.run()
    assert results(res)[0] == "failed" and "F9" in res.gate("V1").detail
    assert pair.run(declared_diagnostic=True).gate("V1").result == "passed"


def test_v1_option_not_accepted_by_probe(tmp_path: Path) -> None:
    pair = make_pair(tmp_path, new_spec={"run": {**NEW_RUN}})
    edit_json(
        pair.new.root / "run.json",
        lambda d: d["candidate"].update(super_kernel_optimize_options={"auto_op_parallel": 7}),
    )
    res = pair.run()
    assert results(res)[0] == "failed" and "auto_op_parallel" in res.gate("V1").detail


def test_v1_profiler_is_diagnostic(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    (pair.new.root / "sk_meta/50001/sk_prof_device_3.json").write_text("[]")
    res = pair.run()
    assert results(res)[0] == "failed" and "profiler" in res.gate("V1").detail


def test_v1_no_proposal(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    pair.proposal = Proposal(status="blocked", reason="R6")
    assert results(pair.run())[0] == "failed"


# ------------------------------------------------------------------------------------------ V2


@pytest.mark.parametrize(
    ("exit", "status", "word"),
    [
        ({"status": 1, "signal": None, "timeout": False}, "failed", "exit status 1"),
        ({"status": None, "signal": None, "timeout": True}, "timed_out", "timed out"),
        ({"status": None, "signal": "SIGKILL", "timeout": False}, "failed", "signal"),
    ],
)
def test_v2_exit(tmp_path: Path, exit: dict[str, Any], status: str, word: str) -> None:
    res = make_pair(tmp_path, new_spec={"run": {**NEW_RUN, "exit": exit}}).run()
    assert results(res) == ["passed", "failed", "not_run", "not_run", "not_run"]
    assert word in res.gate("V2").detail
    assert res.attempt.status == status


def test_v2_fault_line_in_new_plog(tmp_path: Path) -> None:
    res = make_pair(
        tmp_path, new_spec={"fault": "non_sk", "cores": [FaultCore(1, "AIV", pc=("child", 0))]}
    ).run()
    assert results(res)[:2] == ["passed", "failed"]
    assert "fault line" in res.gate("V2").detail
    assert res.gate("V2").evidence and res.gate("V2").evidence[0].file.startswith("log/")


def test_v2_all_ranks(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    # OLD ran two ranks: a second plog of another pid; NEW has one rank only
    other = pair.old.plog.with_name(pair.old.plog.name.replace("48213", "48214"))
    other.write_text(pair.old.plog.read_text().replace("(48213,", "(48214,"))
    res = pair.run()
    assert results(res)[:2] == ["passed", "failed"] and "all ranks" in res.gate("V2").detail


def test_v2_failing_path_must_match(tmp_path: Path) -> None:
    res = make_pair(
        tmp_path, new_spec={"run": {**NEW_RUN, "failing_path": {"prompt_id": "other", "step": 1}}}
    ).run()
    assert results(res)[:2] == ["passed", "failed"] and "failing path" in res.gate("V2").detail


def test_v2_failing_path_compared_by_contract_fields(tmp_path: Path) -> None:
    """OLD declares {prompt_id, step} plus a note key, NEW records {prompt_id, step} plus a wall time:
    the same path by its contract fields (prompt_id, step), so V2 passes; a different step fails."""
    old_path = {"prompt_id": "p-0001", "step": 7, "note": "seen after warm-up"}
    new_path = {"prompt_id": "p-0001", "step": 7, "wall_s": 12.5}
    pair = make_pair(tmp_path, new_spec={"run": {**NEW_RUN, "failing_path": new_path}})
    edit_json(pair.old.root / "run.json", lambda d: d.update(failing_path=old_path))
    res = pair.run()
    assert results(res)[:3] == ["passed", "passed", "passed"]
    edit_json(pair.new.root / "run.json", lambda d: d.update(failing_path={**new_path, "step": 8}))
    res = pair.run()
    assert results(res)[:2] == ["passed", "failed"]
    assert "step 8 ≠ declared 7" in res.gate("V2").detail


# ------------------------------------------------------------------------------------------ V3


def test_close_reopen_passes_with_not_in_scope(tmp_path: Path) -> None:
    ind = " " * 8

    def close_reopen(src: str, p: Proposal) -> str:
        first, after = (e.line for e in p.marker_edits)
        return apply_edits(
            src,
            [
                MarkerEdit(
                    "src/model.py", first, "insert", f'{ind}torch.npu.super_kernel_scope_end("{SCOPE}")'
                ),
                MarkerEdit(
                    "src/model.py", after, "insert", f'{ind}torch.npu.super_kernel_scope_begin("{SCOPE}")'
                ),
            ],
        )

    pair = make_pair(
        tmp_path,
        mechanism="close_reopen_exclusion",
        source=close_reopen,
        new_spec={"unfusible": [(K[2], "NOT_IN_SCOPE")]},
    )
    pair.proposal = replace(pair.proposal, marker_edits=())  # no declared diff: mechanism check only
    res = pair.run()
    assert results(res)[:3] == ["passed", "passed", "passed"], res.verification
    assert res.mechanism_found == "close_reopen_exclusion"
    assert "NOT_IN_SCOPE" in res.gate("V3").detail


def test_v3_same_pid(tmp_path: Path) -> None:
    res = make_pair(tmp_path, new_spec={"pid": 48213}).run()
    assert results(res)[:3] == ["passed", "passed", "failed"] and "pid" in res.gate("V3").detail


def test_r7_stale_metadata_fails_v3(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    # a NEW metadata file replaced by the failed attempt's copy (byte-identical): V3 refuses it
    name = "sk_node_detail.log"
    shutil.copy(pair.old.model_dir / name, pair.new.model_dir / name)
    res = pair.run()
    assert [r.path for r in res.refused_evidence] == [f"sk_meta/50001/model_48_1/{name}"]
    assert results(res)[:3] == ["passed", "passed", "failed"] and "R7" in res.gate("V3").detail


def test_v3_metadata_written_by_another_pid(tmp_path: Path) -> None:
    res = make_pair(tmp_path, new_spec={"meta_pid": 47000}).run()
    assert results(res)[:3] == ["passed", "passed", "failed"]
    assert "F4" in res.gate("V3").detail


def test_v3_child_still_fused(tmp_path: Path) -> None:
    # the edit "worked" at the API level but the SK still holds the child (e.g. scope named None)
    res = make_pair(tmp_path, new_spec={"children": K, "extra_sks": [], "unfusible": []}).run()
    assert results(res)[2] == "failed"
    assert "DequantSwiglu_9a" in res.gate("V3").detail
    assert res.routes == ()


def test_v3_wrong_fail_reason_for_mechanism(tmp_path: Path) -> None:
    res = make_pair(tmp_path, new_spec={"unfusible": [(K[2], "NOT_IN_SCOPE")]}).run()
    assert results(res)[2] == "failed" and "IN_UNFUSIBLE_SCOPE" in res.gate("V3").detail


def test_v3_before_after_multisets(tmp_path: Path) -> None:
    # after-range child dropped from fusion as well: the proposed after SK is missing
    res = make_pair(
        tmp_path,
        new_spec={"extra_sks": [], "unfusible": [(K[2], "IN_UNFUSIBLE_SCOPE"), (K[3], "IN_UNFUSIBLE_SCOPE")]},
    ).run()
    assert results(res)[2] == "failed" and "after" in res.gate("V3").detail


def test_v3_scope_named_none(tmp_path: Path) -> None:
    res = make_pair(
        tmp_path,
        new_spec={"extra_sks": [SkDef(8, SCOPE, [K[3]]), SkDef(9, "None", [Kernel("Cast_1", "AIV_ONLY")])]},
    ).run()
    assert results(res)[2] == "failed" and "T8" in res.gate("V3").detail


def _retrigger(pair: Pair, reason: str, node_id: int) -> None:
    """Make NEW's recorded ``reason`` a node-level fusion fail reason triggered by ``node_id``."""
    for f in pair.new.model_dir.glob("*.log"):
        text = f.read_text()
        text = re.sub(
            rf"breakReason={reason}\b", f"breakReason=UNFUSIBLE_NODE, fusionFailReason={reason}", text
        )
        text = re.sub(r"triggerNode=\d+, ", "", text)
        text = text.replace(f"fusionFailReason={reason}", f"triggerNode={node_id}, fusionFailReason={reason}")
        f.write_text(text)


def _new_id(pair: Pair, func: str) -> int:
    text = (pair.new.model_dir / "sk_fusion_fail_reasons.log").read_text()
    m = re.search(rf"nodeId:(\d+),[^\n]*funcName:{func}\b", text)
    assert m is not None
    return int(m.group(1))


def test_v3_no_new_deadlock_reason_for_the_fragment(tmp_path: Path) -> None:
    pair = make_pair(tmp_path, new_spec={"scope_reasons": ["ISOLATED_EVENT"]})
    _retrigger(pair, "ISOLATED_EVENT", _new_id(pair, "DequantSwiglu_9a"))
    res = pair.run()
    assert results(res)[2] == "failed" and "ISOLATED_EVENT" in res.gate("V3").detail
    assert "DequantSwiglu_9a" in res.gate("V3").detail


def test_v3_deadlock_reason_of_another_node_is_not_the_fragments(tmp_path: Path) -> None:
    pair = make_pair(tmp_path, new_spec={"scope_reasons": ["ISOLATED_EVENT"]})
    _retrigger(pair, "ISOLATED_EVENT", pair.new.node_ids[0])  # RmsNorm, outside the fragment
    assert pair.run().gate("V3").result == "passed"


def test_v3_scope_level_deadlock_reason_counts(tmp_path: Path) -> None:
    # a reason with no trigger node cannot be cleared for the fragment: conservative failure
    pair = make_pair(tmp_path, new_spec={"scope_reasons": ["ISOLATED_EVENT"]})
    _retrigger(pair, "ISOLATED_EVENT", 0)
    for f in pair.new.model_dir.glob("*.log"):
        f.write_text(f.read_text().replace("triggerNode=0, ", ""))
    res = pair.run()
    assert results(res)[2] == "failed" and "ISOLATED_EVENT" in res.gate("V3").detail


# ------------------------------------------------------------------------------------------ R7


def test_r7_byte_identical_plog_refused(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    stale = pair.new.root / "log/plog" / pair.old.plog.name
    shutil.copy(pair.old.plog, stale)
    res = pair.run()
    refused = {r.path: r.reason for r in res.refused_evidence}
    assert f"log/plog/{pair.old.plog.name}" in refused
    assert all(R7_REASON in r for r in refused.values())
    # the copied plog also carries OLD's fault lines: whichever gate sees it first fails, never a pass;
    # stale evidence routes R7 whatever the gates say, and the launch proved nothing: invalid, round open
    assert "failed" in results(res)[:3] and res.routes == ("R7",)
    assert res.attempt.status == "invalid" and res.round_status == "open"


def test_r7_old_sk_meta_refused(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    shutil.copytree(pair.old.root / "sk_meta/48213", pair.new.root / "sk_meta/48213")
    res = pair.run()
    paths = [r.path for r in res.refused_evidence]
    assert paths and all(p.startswith("sk_meta/48213/") for p in paths)
    # bin files are refused by location even though R7 does not compare kernel images by content
    assert any("bin_files" in p for p in paths)
    assert "failed" in results(res)[:3] and res.routes == ("R7",)
    assert res.attempt.status == "invalid"


# ------------------------------------------------------------------------------------------ V4


def _multistream_pair(tmp: Path, before_events: bool = False) -> Pair:
    kids: Sequence[Any] = [
        Kernel("RmsNorm_5c1d", "AIV_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("RopeCache_77", "AIV_ONLY", stream=1),
        Kernel("QuantMatmul_77", "AIC_ONLY"),
    ]
    old = build_scene(
        SceneSpec(children=kids, cores=[FaultCore(3, "AIV", pc=("child", 3))], run=OLD_RUN), tmp / "old"
    )
    ids, lines = old.node_ids, old.source_lines
    proposal = Proposal(
        status="proposed",
        mechanism="explicit_none_exclusion",
        child=ChildRef(3, ids[3], "RopeCache_77", "AIV_ONLY", 1, 7, SCOPE, "48_1", occurrence=0),
        original=tuple(ids),
        excluded=(ids[3],),
        collateral=(ids[1], ids[2]),
        before=(ids[0],),
        after=(ids[4],),
        marker_edits=_wrap_edits(old, lines[ids[1]], lines[ids[4]]),
    )
    new = build_scene(
        SceneSpec(
            children=[kids[0], kids[1]] if before_events else [kids[0]],
            extra_sks=[SkDef(8, SCOPE, [kids[4]])],
            unfusible=[(kids[3], "IN_UNFUSIBLE_SCOPE")],  # type: ignore[list-item]
            pid=50001,
            fault="none",
            run=NEW_RUN,
        ),
        tmp / "new",
    )
    (new.root / "src/model.py").write_text(
        apply_edits((old.root / "src/model.py").read_text(), proposal.marker_edits)
    )
    return Pair(old, new, proposal)


def test_v4_needed_for_multistream_fragment(tmp_path: Path) -> None:
    pair = _multistream_pair(tmp_path)
    res = pair.run()
    assert results(res)[:3] == ["passed", "passed", "passed"]
    assert res.gate("V4").result == "not_run" and "needed" in res.gate("V4").detail
    assert "ASCEND_PROF_SK_ON" in res.gate("V4").detail


def test_v4_passes_with_complete_profile_in_declared_diagnostic_round(tmp_path: Path) -> None:
    pair = _multistream_pair(tmp_path)
    (pair.new.root / "sk_meta/50001/sk_prof_device_3.json").write_text("[]")
    res = pair.run(declared_diagnostic=True)
    assert results(res) == ["passed", "passed", "passed", "passed", "not_run"]
    assert res.round_status == "passed_gates(V1..V4)"


def test_v3_fragment_event_left_alone_in_an_sk(tmp_path: Path) -> None:
    # the notify of the excluded fragment stayed fused in the before SK while its wait left
    res = _multistream_pair(tmp_path, before_events=True).run()
    assert results(res)[2] == "failed"
    assert "EventNotify" in res.gate("V3").detail and "alone" in res.gate("V3").detail


def test_v4_buffer_full_fails(tmp_path: Path) -> None:
    pair = _multistream_pair(tmp_path)
    skl = pair.new.model_dir / "super_kernel.log"
    with skl.open("a") as fh:
        fh.write("buffer is full, stop dump the time of nodes\n")
    res = pair.run()
    assert res.gate("V4").result == "failed" and "buffer is full" in res.gate("V4").detail
    assert res.gate("V5").result == "not_run" and res.round_status == "failed"


# ------------------------------------------------------------------------------------------ markers


def test_marker_scan_and_mechanism_classification() -> None:
    old = 'def f():\n    torch.npu.super_kernel_scope_begin("s")\n    a()\n    b()\n    torch.npu.super_kernel_scope_end("s")\n'
    a = old.replace(
        "    b()\n",
        "    torch.npu.super_kernel_scope_begin(None)\n    b()\n    torch.npu.super_kernel_scope_end(None)\n",
    )
    b = old.replace(
        "    b()\n",
        '    torch.npu.super_kernel_scope_end("s")\n    b()\n    torch.npu.super_kernel_scope_begin("s")\n',
    )
    c = old.replace(
        "    b()\n",
        '    torch.npu.super_kernel_scope_end("s")\n    torch.npu.super_kernel_scope_begin("s.post")\n    b()\n',
    ).replace('end("s")\n', 'end("s.post")\n', 1)
    m_old = scan_text(old)
    assert [(m.kind, m.name) for m in m_old.markers] == [("begin", "s"), ("end", "s")]
    assert classify_mechanism(m_old, scan_text(a)) == "explicit_none_exclusion"
    assert classify_mechanism(m_old, scan_text(b)) == "close_reopen_exclusion"
    assert classify_mechanism(m_old, scan_text("# torch.npu.super_kernel_scope_begin(None)\n" + old)) is None
    assert scan_text(a).balance() is None
    assert scan_text(b).balance() is None
    assert (
        "never closed"
        in (scan_text(old.replace('    torch.npu.super_kernel_scope_end("s")\n', "")).balance() or (0, ""))[1]
    )
    assert scan_text(c).markers  # parses
    with pytest.raises(ParseError) as exc:
        scan_text("def f(:\n    torch.npu.super_kernel_scope_begin(None)  # x\n", "m.py")
    assert exc.value.line == 1  # a broken source is a precise error, never a guessed marker list


def test_apply_edits_insert_replace_delete() -> None:
    text = "a\nb\nc\n"
    edits = [
        MarkerEdit("f", 1, "insert", "x"),
        MarkerEdit("f", 2, "replace", "B"),
        MarkerEdit("f", 3, "delete", ""),
    ]
    assert apply_edits(text, edits) == "x\na\nB\n"
    assert apply_edits(text, [MarkerEdit("f", 4, "insert", "z")]) == "a\nb\nc\nz\n"


@pytest.mark.parametrize(
    "how",
    [
        lambda t: t.replace(
            "torch.npu.super_kernel_scope_begin(None)", "# torch.npu.super_kernel_scope_begin(None)"
        ).replace("torch.npu.super_kernel_scope_end(None)", "# torch.npu.super_kernel_scope_end(None)"),
        lambda t: t.replace(
            "torch.npu.super_kernel_scope_begin(None)", '"torch.npu.super_kernel_scope_begin(None)"'
        ).replace("torch.npu.super_kernel_scope_end(None)", '"torch.npu.super_kernel_scope_end(None)"'),
    ],
    ids=["commented-out", "string-literal"],
)
def test_v1_commented_or_string_markers_never_count(tmp_path: Path, how: Callable[[str], str]) -> None:
    """NEW carries the declared None pair only as comments / as a string statement: the declared change
    is not materialised — invalid (§6.3), and V1 names the marker that is missing."""
    res = make_pair(tmp_path, source=lambda s, p: how(apply_edits(s, p.marker_edits))).run()
    assert results(res)[0] == "failed" and res.attempt.status == "invalid"
    assert "super_kernel_scope_begin(None)" in res.gate("V1").detail
    # with no declared diff (mechanism check only) the comment still does not count
    pair = make_pair(tmp_path / "nodiff", source=lambda s, p: how(apply_edits(s, p.marker_edits)))
    pair.proposal = replace(pair.proposal, marker_edits=())
    res = pair.run()
    assert results(res)[0] == "failed"
    assert res.mechanism_found != "explicit_none_exclusion"


def test_proposal_is_not_mutated(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    before = replace(pair.proposal)
    pair.run()
    assert pair.proposal == before


# ------------------------------------------------------------------------------------------ end to end


def _stage_proposal(ctx: Any) -> Proposal:
    """OLD's proposal from the committed pipeline stages (localize → gate → attribute → grade → propose)."""
    from skdbg.triage.attribution import attribute
    from skdbg.triage.confidence import grade
    from skdbg.triage.gate import run_gate
    from skdbg.triage.localize import localize
    from skdbg.triage.proposal import propose

    loc = localize(ctx)
    verdict = grade(ctx, run_gate(ctx, loc), loc, attribute(ctx, loc))
    return propose(ctx, loc, verdict)


def _rebuild_new(tmp: Path, old: BuiltScene, p: Proposal) -> BuiltScene:
    """NEW = what the runtime writes after the proposal: before SK, after SK, fragment unfusible."""
    by_id = dict(zip(old.node_ids, K, strict=True))
    new = build_scene(
        SceneSpec(
            children=[by_id[i] for i in p.before],
            extra_sks=[SkDef(8, SCOPE, [by_id[i] for i in p.after])],
            unfusible=[(by_id[i], "IN_UNFUSIBLE_SCOPE") for i in p.excluded],
            pid=50001,
            fault="none",
            run=NEW_RUN,
        ),
        tmp / "new",
    )
    (new.root / "src/model.py").write_text(
        apply_edits((old.root / "src/model.py").read_text(), p.marker_edits)
    )
    return new


def test_end_to_end_with_the_pipeline_proposal(tmp_path: Path) -> None:
    old = build_scene(
        SceneSpec(children=K, cores=[FaultCore(3, "AIV", pc=("child", 2))], run=OLD_RUN), tmp_path / "old"
    )
    octx = open_context(old.root)
    p = _stage_proposal(octx)
    assert p.status == "proposed" and p.excluded == (old.node_ids[2],)
    new = _rebuild_new(tmp_path, old, p)
    res = verify(octx, open_context(new.root), p)
    validate_verify(res.to_json())
    assert results(res)[:3] == ["passed", "passed", "passed"], res.verification
    assert res.mechanism_found == p.mechanism and res.routes == ("R7",)


def test_verify_scenes_runs_the_engine_on_old(tmp_path: Path) -> None:
    pytest.importorskip("skdbg.triage.engine")
    from skdbg.triage.verify import verify_scenes

    old = build_scene(
        SceneSpec(children=K, cores=[FaultCore(3, "AIV", pc=("child", 2))], run=OLD_RUN), tmp_path / "old"
    )
    p = _stage_proposal(open_context(old.root))
    new = _rebuild_new(tmp_path, old, p)
    res = verify_scenes(old.root, new.root)
    validate_verify(res.to_json())
    assert results(res)[:3] == ["passed", "passed", "passed"]


def test_end_to_end_dependency_aligned_split(tmp_path: Path) -> None:
    kids: list[Any] = [
        Kernel("RmsNorm_5c1d", "AIV_ONLY"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("Rope_1", "AIV_ONLY", stream=1),
        Kernel("QuantMatmul_77", "AIC_ONLY"),
    ]
    old = build_scene(
        SceneSpec(children=kids, cores=[FaultCore(3, "AIV", pc=("child", 4))], run=OLD_RUN), tmp_path / "old"
    )
    octx = open_context(old.root)
    p = _stage_proposal(octx)
    if p.mechanism != "dependency_aligned_split":
        pytest.skip(f"the proposal stage chose {p.mechanism} for this scene")
    by_id = dict(zip(old.node_ids, kids, strict=True))
    new = build_scene(
        SceneSpec(
            children=[by_id[i] for i in p.before],
            scope_name=f"{SCOPE}.pre",
            extra_sks=[SkDef(8, f"{SCOPE}.post", [by_id[i] for i in p.after])],
            # the ranges list event nodes too (§4.1); the builder lists unfused kernels only
            unfusible=[(by_id[i], "NOT_IN_SCOPE") for i in p.excluded if isinstance(by_id[i], Kernel)],
            pid=50001,
            fault="none",
            run=NEW_RUN,
        ),
        tmp_path / "new",
    )
    (new.root / "src/model.py").write_text(
        apply_edits((old.root / "src/model.py").read_text(), p.marker_edits)
    )
    res = verify(octx, open_context(new.root), p)
    validate_verify(res.to_json())
    assert results(res)[:3] == ["passed", "passed", "passed"], res.verification
    assert res.mechanism_found == "dependency_aligned_split"
    # the fragment spans two streams: V4 is needed, and without sk_prof it is not run (never passed)
    assert res.gate("V4").result == "not_run" and "needed" in res.gate("V4").detail


def test_unreadable_new_marker_file_fails_closed(tmp_path: Path) -> None:
    pair = make_pair(tmp_path)
    (pair.new.root / "src/model.py").write_bytes(b"\xff\xfe\x00 not python (")
    res = pair.run()
    assert results(res) == ["failed", "not_run", "not_run", "not_run", "not_run"]
