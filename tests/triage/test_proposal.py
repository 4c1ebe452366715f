"""The exclusion proposal (triage.md §4, §3.8 consequences, §7 R5/R6, §8.1 eval 3) on scenes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.scenebuilder.scene import BuiltScene, Event, Kernel, SceneSpec, build_scene
from skdbg.triage import proposal as proposal_mod
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.markers import apply_edits, balanced
from skdbg.triage.model import FaultInfo, Proposal, Verdict
from skdbg.triage.proposal import ge_exclusion_text, propose
from skdbg.triage.skview import instances_of
from skdbg.triage.stages import Localization

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"
NOT_ACCEPTED = {"scope_capabilities": {"explicit_none_exclusion": {"accepted": False, "status": "rejected"}}}


def _propose(
    root: Path, task: int, confidence: str = "high", kind: str = "sk", **ctx_kw: str
) -> tuple[Proposal, TriageContext]:
    ctx = open_context(root, **ctx_kw)  # type: ignore[arg-type]
    inst = instances_of(ctx.evidence.model_evidence[0])[0] if ctx.evidence.model_evidence else None
    loc = Localization(pid=48213, fault=FaultInfo(kind=kind, phase="device_fault"), instance=inst)
    suspect = inst.child(task) if inst is not None else None
    rule = {"high": "C3", "medium": "C4", "low": "C6"}[confidence]
    v = Verdict(confidence=confidence, rule=rule, reason=f"test verdict for task {task}", suspect=suspect)
    return propose(ctx, loc, v), ctx


def _build(
    tmp_path: Path, *children: Kernel | Event, edit: Callable[[BuiltScene], None] | None = None, **kw: object
) -> BuiltScene:
    b = build_scene(SceneSpec(children=list(children), **kw), tmp_path / "scene")  # type: ignore[arg-type]
    if edit is not None:
        edit(b)
    return b


def _applied(root: Path, p: Proposal) -> str:
    lines = (root / "src" / "model.py").read_text().splitlines()
    return "\n".join(apply_edits(lines, p.marker_edits)) + "\n"


# ------------------------------------------------------------------------------ single child (§4.4 rule 1)


def test_example_scene_single_child_none_pair() -> None:
    p, _ = _propose(EXAMPLE, 1)
    assert (p.status, p.mechanism, p.route) == ("proposed", "explicit_none_exclusion", None)
    assert p.child is not None and (p.child.node_id, p.child.func_name) == (121, "add_custom")
    assert (p.original, p.before, p.excluded, p.after, p.collateral) == (
        (120, 121, 122),
        (120,),
        (121,),
        (122,),
        (),
    )
    assert [(e.file, e.line, e.op) for e in p.marker_edits] == [
        ("src/model.py", 18, "insert"),
        ("src/model.py", 19, "insert"),
    ]
    assert p.marker_edits[0].text.endswith(
        "super_kernel_scope_begin(None)  # skdbg: exclude add_custom (task 1, nodeId 121)"
    )
    assert p.declared_change["method"] == "explicit_none_scope"
    assert p.probe_evidence is not None and "explicit_none_exclusion.accepted = true" in p.probe_evidence
    assert p.source_site == "explicit"
    assert (
        "+        b = add_custom(a, bias)" not in p.diff
        and "+        torch.npu.super_kernel_scope_begin(None)" in p.diff
    )
    assert p.confidence == "high" and p.reason.startswith("C3")
    json.dumps(p.to_json())


def test_close_reopen_when_probe_does_not_accept_none(tmp_path: Path) -> None:
    b = _build(
        tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), probe=NOT_ACCEPTED
    )
    p, _ = _propose(b.root, 1)
    assert (p.status, p.mechanism) == ("proposed", "close_reopen_exclusion")
    assert p.declared_change["method"] == "outer_scope_split"
    assert "accepted = false" in (p.probe_evidence or "")
    texts = [e.text.strip() for e in p.marker_edits]
    assert texts[0].startswith('torch.npu.super_kernel_scope_end("decoder.layer.0.mlp")')
    assert texts[1].startswith('torch.npu.super_kernel_scope_begin("decoder.layer.0.mlp")')
    assert [e.line for e in p.marker_edits] == [
        b.source_lines[b.node_ids[1]],
        b.source_lines[b.node_ids[1]] + 1,
    ]
    assert balanced(_applied(b.root, p))


def test_no_probe_assumes_close_reopen_and_says_so(tmp_path: Path) -> None:
    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), probe=None)
    p, _ = _propose(b.root, 1)
    assert p.mechanism == "close_reopen_exclusion"
    assert "no env probe" in (p.probe_evidence or "")


def test_medium_verdict_proposes_with_its_confidence(tmp_path: Path) -> None:
    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"))
    p, _ = _propose(b.root, 1, confidence="medium")
    assert p.status == "proposed" and p.confidence == "medium" and p.reason.startswith("C4")


# ------------------------------------------------------------------------------ no proposal (§3.8, X6)


def test_low_verdict_never_excludes() -> None:
    p, _ = _propose(EXAMPLE, 1, confidence="low")
    assert p.status == "none" and p.marker_edits == () and p.mechanism is None and "C6" in p.reason


def test_ge_mode_gets_no_proposal_but_the_ge_form(tmp_path: Path) -> None:
    p, _ = _propose(EXAMPLE, 1, kind="ge_sk")
    assert p.status == "none" and "X6" in p.reason and "torchair.scope.super_kernel(None)" in p.reason
    text = ge_exclusion_text(None, "b = torch_npu.npu_dequant_swiglu_quant(a)", indent="    ")
    assert text.splitlines() == [
        "    with torchair.scope.super_kernel(None):  # skdbg: exclude the suspect child (GE mode)",
        "        b = torch_npu.npu_dequant_swiglu_quant(a)",
    ]
    assert '"None"' not in text


# ------------------------------------------------------------------------------ R5 split (§4.4 rule 2, eval 3)


def test_event_bound_child_is_split_at_the_dependency_boundary(tmp_path: Path) -> None:
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("RopeCache_77", stream=1),
        Kernel("Add_99aa"),
        Kernel("Mul_98bb"),
    )
    ids = b.node_ids
    p, _ = _propose(b.root, b.task_index[4])
    assert (p.status, p.mechanism, p.route) == ("proposed", "dependency_aligned_split", "R5")
    assert p.collateral == (ids[2], ids[3])
    # §4.1/§4.2: the ranges list every child node, the event pair included; excluded = F
    assert p.original == tuple(ids)
    assert (p.before, p.excluded, p.after) == ((ids[0], ids[1]), (ids[2], ids[3], ids[4]), (ids[5], ids[6]))
    kinds = {s.kind for s in p.safety}
    assert {"event", "stream"} <= kinds
    assert all(s.evidence.startswith("sk_meta/") for s in p.safety if s.kind == "event")
    texts = [e.text for e in p.marker_edits]
    assert '"decoder.layer.0.mlp.pre"' in texts[0] and '"decoder.layer.0.mlp.post"' in texts[-1]
    first, last = b.source_lines[ids[2]], b.source_lines[ids[4]]
    assert [e.line for e in p.marker_edits][1:3] == [first, last + 1]
    out = _applied(b.root, p)
    assert balanced(out)
    assert p.declared_change["method"] == "dependency_aligned_split"


def test_eval3_event_edge_plus_cross_stream_cache_mutation(tmp_path: Path) -> None:
    """§8.1 eval 3: the child sits between a record/wait edge and a cross-stream cache write."""
    children = [
        Kernel("QkvProj_1a2b", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("ScatterKv_3c4d", stream=1, debug_options=0x20),
        Event("EventNotify", event_id=2, stream=1),
        Kernel("QNorm_5e6f"),
        Event("EventWait", event_id=2, stream=0),
        Kernel("Attention_7a8b", "AIC_ONLY"),
        Kernel("OProj_9c0d", "AIC_ONLY"),
    ]
    b = build_scene(SceneSpec(children=children, cache_writers={103: [107]}), tmp_path / "s")
    ids = b.node_ids
    p, _ = _propose(b.root, b.task_index[3])
    assert (p.status, p.route, p.mechanism) == ("proposed", "R5", "dependency_aligned_split")
    # both sides of both events and the statement between them leave together; the cache reader
    # (Attention, stream 0) stays fused: the eventId 2 pair that orders writer → reader leaves with F
    # (§4.2(e) evaluated at the fixpoint; the §4.5 C example keeps attention in the .post SK)
    assert p.collateral == (ids[1], ids[2], ids[4], ids[5], ids[6])
    assert p.original == tuple(ids)
    assert (p.before, p.excluded, p.after) == ((ids[0],), tuple(ids[1:7]), (ids[7], ids[8]))
    kept = next(s for s in p.safety if s.kind == "cache" and "kept by the event pair" in s.detail)
    assert f"nodeId {ids[4]}" in kept.detail and f"nodeId {ids[6]}" in kept.detail and not kept.blocks
    kinds = {s.kind for s in p.safety}
    assert {"event", "cache", "stream", "source"} <= kinds
    src_note = next(s for s in p.safety if s.kind == "source")
    assert src_note.evidence.startswith(f"src/model.py:{b.source_lines[ids[5]]} — ")
    out = _applied(b.root, p)
    assert balanced(out)
    # the fragment's statements stay in order between the two halves
    order = [ln.strip() for ln in out.splitlines() if "super_kernel_scope" in ln or "ev" in ln and "()" in ln]
    assert order.index("ev1.record()") > next(i for i, t in enumerate(order) if ".pre" in t and "end" in t)


# ------------------------------------------------------------------------------ blocked (§4.4 rule 3)


def test_fragment_equal_to_the_whole_scope_is_blocked(tmp_path: Path) -> None:
    b = _build(tmp_path, Kernel("Add_11aa", sync_after=0), Kernel("Cast_22bb"))
    p, _ = _propose(b.root, 0)
    assert (p.status, p.route, p.mechanism) == ("blocked", "R6", None)
    assert "whole scope" in (p.blocked_reason or "") and p.marker_edits == ()
    assert any(s.kind == "barrier" for s in p.safety)


def test_one_statement_emitting_several_children_is_blocked(tmp_path: Path) -> None:
    stmt = "y = torch_npu.npu_fused_block(x0)"
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("FusedA_11aa", statement=stmt),
        Kernel("FusedB_22bb", statement=stmt, same_statement_as=1),
        Kernel("Cast_33cc"),
    )
    p, _ = _propose(b.root, 1)
    assert (p.status, p.route) == ("blocked", "R6")
    assert "one statement" in (p.blocked_reason or "")


def test_non_contiguous_fragment_is_blocked(tmp_path: Path) -> None:
    # the cache reader on stream 1 is pulled in, the unrelated kernel between them is not
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("ScatterKv_11aa"),
        Kernel("Cast_22bb"),
        Kernel("Attention_33cc", stream=1),
        Kernel("Mul_44dd"),
        cache_writers={101: [103]},
    )
    p, _ = _propose(b.root, 1)
    assert (p.status, p.route) == ("blocked", "R6")
    assert "not contiguous" in (p.blocked_reason or "")
    assert any(s.kind == "cache" for s in p.safety)


def test_loop_statement_is_blocked(tmp_path: Path) -> None:
    def loopify(b: BuiltScene) -> None:
        path = b.root / "src" / "model.py"
        lines = path.read_text().splitlines()
        k = b.source_lines[b.node_ids[1]] - 1
        lines[k : k + 1] = ["        for _ in range(1):", "    " + lines[k]]
        path.write_text("\n".join(lines) + "\n")
        sites = {str(n): (ln if ln <= k else ln + 1) for n, ln in b.source_lines.items()}
        sites[str(b.node_ids[1])] = k + 2
        (b.root / "source_sites.json").write_text(json.dumps(sites))

    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), edit=loopify)
    p, _ = _propose(b.root, 1)
    assert (p.status, p.route) == ("blocked", "R6") and "loop body" in (p.blocked_reason or "")


def test_automatic_candidate_without_none_pair_is_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = _build(
        tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), probe=NOT_ACCEPTED
    )
    monkeypatch.setattr(proposal_mod.ProposalBuilder, "scope_names", lambda self: [])
    p, _ = _propose(b.root, 1)
    assert (p.status, p.route) == ("blocked", "R6") and "automatic-AOT" in (p.blocked_reason or "")
    # with the None pair accepted the automatic candidate gets mechanism A
    b2 = build_scene(
        SceneSpec(children=[Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb")]),
        tmp_path / "s2",
    )
    p2, _ = _propose(b2.root, 1)
    assert (p2.status, p2.mechanism) == ("proposed", "explicit_none_exclusion")


# ------------------------------------------------------------------------------ safety notes (§4.3)


def test_collective_child_gets_a_collective_note(tmp_path: Path) -> None:
    b = _build(
        tmp_path, Kernel("RmsNorm_5c1d"), Kernel("MatmulAllReduce_11aa", "AIC_ONLY"), Kernel("Cast_22bb")
    )
    p, _ = _propose(b.root, 1)
    notes = [s for s in p.safety if s.kind == "collective"]
    assert notes and "every rank" in notes[0].detail


def test_dcci_child_gets_a_cache_note(tmp_path: Path) -> None:
    b = _build(
        tmp_path, Kernel("RmsNorm_5c1d"), Kernel("ScatterKv_11aa", debug_options=0x8), Kernel("Cast_22bb")
    )
    p, _ = _propose(b.root, 1)
    assert p.status == "proposed"
    cache = [s for s in p.safety if s.kind == "cache"]
    assert cache and "DCCI" in cache[0].detail and "cache_writers" in cache[0].detail


def test_straddling_pair_is_listed_for_v3(tmp_path: Path) -> None:
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Event("EventNotify", event_id=4, stream=0),
        Kernel("AddCustom_11aa"),
        Event("EventWait", event_id=4, stream=1),
        Kernel("RopeCache_22bb", stream=1),
        Kernel("Cast_33cc"),
    )
    p, _ = _propose(b.root, b.task_index[2])
    assert p.status == "proposed" and p.excluded == (b.node_ids[2],) and p.collateral == ()
    straddle = [s for s in p.safety if s.kind == "straddle"]
    assert straddle and "V3" in straddle[0].detail and str(b.node_ids[1]) in straddle[0].detail


def test_deadlock_sensitive_reason_is_listed(tmp_path: Path) -> None:
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("AddCustom_11aa"),
        Kernel("Cast_22bb"),
        scope_reasons=["DEADLOCK_DETECTED"],
    )
    p, _ = _propose(b.root, 1)
    dead = [s for s in p.safety if s.kind == "deadlock"]
    assert dead and "DEADLOCK_DETECTED" in dead[0].detail


def test_string_none_scope_is_an_ordinary_named_scope(tmp_path: Path) -> None:
    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("AddCustom_11aa"),
        Kernel("Cast_22bb"),
        scope_name="None",
        probe=NOT_ACCEPTED,
    )
    p, _ = _propose(b.root, 1)
    t8 = [s for s in p.safety if s.kind == "source"]
    assert t8 and "T8" in t8[0].detail
    assert p.mechanism == "close_reopen_exclusion"  # the string "None" scope is closed/reopened by its name
    assert all('"None"' in e.text for e in p.marker_edits)
    b2 = build_scene(
        SceneSpec(
            children=[Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb")],
            scope_name="None",
        ),
        tmp_path / "s2",
    )
    p2, _ = _propose(b2.root, 1)
    assert p2.mechanism == "explicit_none_exclusion"
    assert p2.marker_edits[0].text.strip().startswith("torch.npu.super_kernel_scope_begin(None)")
    assert balanced(_applied(b2.root, p2))


# ------------------------------------------------------------------------------ source sites (§4.6)


def test_inferred_source_site_is_flagged(tmp_path: Path) -> None:
    def drop_site(b: BuiltScene) -> None:
        sites = {str(n): ln for n, ln in b.source_lines.items() if n != b.node_ids[1]}
        (b.root / "source_sites.json").write_text(json.dumps(sites))

    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Kernel("Cast_22bb"),
        edit=drop_site,
    )
    p, _ = _propose(b.root, 1)
    assert p.status == "proposed" and p.source_site == "inferred"
    assert p.marker_edits[0].line == b.source_lines[b.node_ids[1]]
    assert any("inferred" in n and "confirmation" in n for n in p.notes)


def test_without_marker_file_ranges_stay_and_a_note_names_the_file(tmp_path: Path) -> None:
    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), source=False)
    p, _ = _propose(b.root, 1)
    assert p.status == "proposed" and p.marker_edits == () and p.diff == ""
    assert p.before == (b.node_ids[0],) and p.after == (b.node_ids[2],)
    assert any("src/model.py" in n for n in p.notes)


def test_malformed_model_source_raises_parse_error(tmp_path: Path) -> None:
    def garble(b: BuiltScene) -> None:
        (b.root / "src" / "model.py").write_text("def forward(self, x:\n    return x\n")

    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"), edit=garble)
    with pytest.raises(ParseError) as ei:
        _propose(b.root, 1)
    assert "src/model.py" in str(ei.value) and "Python model source" in str(ei.value)


def test_source_root_overrides_the_scene_copy(tmp_path: Path) -> None:
    b = _build(tmp_path, Kernel("RmsNorm_5c1d"), Kernel("AddCustom_11aa"), Kernel("Cast_22bb"))
    other = tmp_path / "checkout"
    (other / "src").mkdir(parents=True)
    text = (b.root / "src" / "model.py").read_text()
    (other / "src" / "model.py").write_text(text)
    p, _ = _propose(b.root, 1, source_root=str(other))
    assert p.status == "proposed" and len(p.marker_edits) == 2


def test_sync_all_nodes_break_info_joins_a_barrier_group(tmp_path: Path) -> None:
    def add_sync_all(b: BuiltScene) -> None:
        path = b.model_dir / "sk_scope_split.log"
        ids = b.node_ids
        text = path.read_text().replace(
            "BreakInfo: breakReason=NONE", f"BreakInfo: breakReason=NONE, syncAllNodes=[{ids[1]},{ids[2]}]"
        )
        path.write_text(text)

    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("AddCustom_11aa"),
        Kernel("Cast_22bb"),
        Kernel("Mul_33cc"),
        edit=add_sync_all,
    )
    p, _ = _propose(b.root, 1)
    assert (p.status, p.route, p.collateral) == ("proposed", "R5", (b.node_ids[2],))
    barrier = [s for s in p.safety if s.kind == "barrier"]
    assert barrier and "syncAllNodes" in barrier[0].detail
    assert barrier[0].evidence.startswith("sk_meta/") and "syncAllNodes" in barrier[0].evidence


def test_suspect_that_is_not_a_kernel_node_is_blocked() -> None:
    ctx = open_context(EXAMPLE)
    inst = instances_of(ctx.evidence.model_evidence[0])[0]
    loc = Localization(pid=48213, fault=FaultInfo(kind="sk", phase="device_fault"), instance=inst)
    ghost = inst.child(1).__class__(
        task_index=9, node_id=999, func_name="x", kernel_type=None, stream_id=None, scope_id=3
    )
    p = propose(ctx, loc, Verdict(confidence="high", rule="C3", reason="r", suspect=ghost))
    assert (p.status, p.route) == ("blocked", "R6") and p.marker_edits == ()


def test_split_anchored_on_inferred_kernel_and_event_sites(tmp_path: Path) -> None:
    def drop_sites(b: BuiltScene) -> None:
        (b.root / "source_sites.json").write_text("{}")

    children = (
        Kernel("RmsNorm_5c1d"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("RopeCache_77aa", stream=1),
        Kernel("Add_99aa"),
    )
    explicit = build_scene(SceneSpec(children=list(children)), tmp_path / "explicit")
    p_explicit, _ = _propose(explicit.root, explicit.task_index[4])
    b = _build(tmp_path, *children, edit=drop_sites)
    p, _ = _propose(b.root, b.task_index[4])
    assert p.source_site == "inferred" and p_explicit.source_site == "explicit"
    assert p.marker_edits == p_explicit.marker_edits and p.marker_edits
    assert p.collateral == (b.node_ids[2], b.node_ids[3])


def test_unlocated_fragment_node_omits_the_edits(tmp_path: Path) -> None:
    def drop_event_sites(b: BuiltScene) -> None:
        events = {b.node_ids[2], b.node_ids[3]}
        sites = {str(n): ln for n, ln in b.source_lines.items() if n not in events}
        (b.root / "source_sites.json").write_text(json.dumps(sites))
        path = b.root / "src" / "model.py"  # compiler-inserted events: no statement in the source
        path.write_text(path.read_text().replace("ev1.record()", "pass").replace("ev1.wait()", "pass"))

    b = _build(
        tmp_path,
        Kernel("RmsNorm_5c1d"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("RopeCache_77aa", stream=1),
        Kernel("Add_99aa"),
        edit=drop_event_sites,
    )
    p, _ = _propose(b.root, b.task_index[4])
    assert p.status == "proposed" and p.route == "R5" and p.marker_edits == ()
    assert any("no source line" in n for n in p.notes)
