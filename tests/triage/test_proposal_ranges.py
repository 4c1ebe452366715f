"""Proposal ranges and the cache rule at the fixpoint (triage.md §1, §4.1, §4.2, §4.3; issue 11 items 1–2).

Every expectation below is written by hand from the spec: the ranges list every child node of the
SK — kernels, events and memory wait/write alike — in SK (fused-node) order; ``excluded`` is the
fragment F, ``collateral`` is F minus the suspect, and before + excluded + after is the original
list. A cross-stream cache reader joins F only when the exclusion would lose the writer→reader
ordering; an event pair that leaves the SK with F keeps it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.scenebuilder.scene import BuiltScene, Event, Kernel, SceneSpec, build_scene
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.edit import check_cut, replan
from skdbg.triage.fragment import compute_fragment, fragment_input
from skdbg.triage.markers import apply_edits, balanced
from skdbg.triage.model import FaultInfo, Proposal, Verdict
from skdbg.triage.proposal import propose
from skdbg.triage.schema import SchemaError, check_ranges
from skdbg.triage.skview import instances_of
from skdbg.triage.stages import Localization

SCOPE = "decoder.layer.0.mlp"


def _scene(root: Path, children: list[Kernel | Event], **kw: object) -> BuiltScene:
    return build_scene(SceneSpec(children=children, **kw), root)  # type: ignore[arg-type]


def _propose(b: BuiltScene, position: int) -> tuple[Proposal, TriageContext, Localization, Verdict]:
    """The proposal for the child at ``position`` under a high (C3) verdict."""
    ctx = open_context(b.root)
    inst = instances_of(ctx.evidence.model_evidence[0])[0]
    loc = Localization(pid=48213, fault=FaultInfo(kind="sk", phase="device_fault"), instance=inst)
    v = Verdict(confidence="high", rule="C3", reason="test", suspect=inst.child(b.task_index[position]))
    return propose(ctx, loc, v), ctx, loc, v


def _applied(b: BuiltScene, p: Proposal) -> list[str]:
    return apply_edits((b.root / "src" / "model.py").read_text().splitlines(), p.marker_edits)


def _statement(b: BuiltScene, node_id: int) -> str:
    return (b.root / "src" / "model.py").read_text().splitlines()[b.source_lines[node_id] - 1].strip()


def _between_halves(b: BuiltScene, p: Proposal) -> list[str]:
    """The statements the split leaves between ``end(<scope>.pre)`` and ``begin(<scope>.post)``."""
    out = [ln.strip() for ln in _applied(b, p)]
    lo = next(
        i for i, t in enumerate(out) if t.startswith(f'torch.npu.super_kernel_scope_end("{SCOPE}.pre")')
    )
    hi = next(
        i for i, t in enumerate(out) if t.startswith(f'torch.npu.super_kernel_scope_begin("{SCOPE}.post")')
    )
    return out[lo + 1 : hi]


def _gated_rope(notify: str, wait: str) -> list[Kernel | Event]:
    """RmsNorm, QuantMatmul (stream 0), ``notify`` id 1 (stream 0), ``wait`` id 1 (stream 1), the
    suspect Rope (stream 1, position 4), Add, Mul (stream 0): nodeIds 100..106."""
    return [
        Kernel("RmsNorm_5c1d"),
        Kernel("QuantMatmul_5b21", "AIC_ONLY"),
        Event(notify, event_id=1, stream=0),
        Event(wait, event_id=1, stream=1),
        Kernel("RopeCache_77", stream=1),
        Kernel("Add_99aa"),
        Kernel("Mul_98bb"),
    ]


# ------------------------------------------------------------------------------ item 1: ranges


def test_events_inside_the_fragment_are_in_excluded_and_original(tmp_path: Path) -> None:
    """Scene: two streams; the faulting Rope (stream 1) is gated by an EventWait (eventId 1, notify on
    stream 0) and publishes an EventNotify (eventId 2) waited on stream 0. F = both pairs + Rope; the
    kernel the eventId 2 wait gates (Add) is not pulled in (§4.2 b)."""
    b = _scene(
        tmp_path / "s",
        [
            Kernel("RmsNorm_5c1d"),  # 100
            Kernel("QuantMatmul_5b21", "AIC_ONLY"),  # 101
            Event("EventNotify", event_id=1, stream=0),  # 102
            Event("EventWait", event_id=1, stream=1),  # 103
            Kernel("RopeCache_77", stream=1),  # 104 child
            Event("EventNotify", event_id=2, stream=1),  # 105
            Event("EventWait", event_id=2, stream=0),  # 106
            Kernel("Add_99aa"),  # 107
            Kernel("Mul_98bb"),  # 108
        ],
    )
    assert b.node_ids == list(range(100, 109))
    p, *_ = _propose(b, 4)
    assert (p.status, p.mechanism, p.route) == ("proposed", "dependency_aligned_split", "R5")
    assert p.original == (100, 101, 102, 103, 104, 105, 106, 107, 108)
    assert p.before == (100, 101)
    assert p.excluded == (102, 103, 104, 105, 106)
    assert p.after == (107, 108)
    assert p.collateral == (102, 103, 105, 106)
    # the cut: .pre closes right before ev1.record(), .post opens right after ev2.wait()
    assert [(e.line, e.op) for e in p.marker_edits] == [
        (b.source_lines[100] - 1, "replace"),
        (b.source_lines[102], "insert"),
        (b.source_lines[106] + 1, "insert"),
        (b.source_lines[108] + 1, "replace"),
    ]
    assert _between_halves(b, p) == [_statement(b, i) for i in (102, 103, 104, 105, 106)]
    assert balanced("\n".join(_applied(b, p)) + "\n")


def test_events_in_the_before_and_after_halves_are_listed_there(tmp_path: Path) -> None:
    """Scene: the faulting Add (stream 0) has no attached event: the eventId 1 pair (notify after
    RmsNorm) sits in the before half, a memory write/wait pair (flag 2, write after Cast) in the after
    half. Single-child exclusion; every event node appears in before/after, in SK order."""
    b = _scene(
        tmp_path / "s",
        [
            Kernel("RmsNorm_5c1d"),  # 100
            Event("EventNotify", event_id=1, stream=0),  # 101
            Event("EventWait", event_id=1, stream=1),  # 102
            Kernel("RopeCache_77", stream=1),  # 103
            Kernel("AddCustom_11aa"),  # 104 child
            Kernel("Cast_22bb"),  # 105
            Event("MemoryWrite", event_id=2, stream=0),  # 106
            Event("MemoryWait", event_id=2, stream=1),  # 107
            Kernel("Mul_33cc", stream=1),  # 108
        ],
    )
    p, *_ = _propose(b, 4)
    assert (p.status, p.mechanism, p.route) == ("proposed", "explicit_none_exclusion", None)
    assert p.original == tuple(range(100, 109))
    assert (p.before, p.excluded, p.after, p.collateral) == (
        (100, 101, 102, 103),
        (104,),
        (105, 106, 107, 108),
        (),
    )
    assert [(e.line, e.op) for e in p.marker_edits] == [
        (b.source_lines[104], "insert"),
        (b.source_lines[104] + 1, "insert"),
    ]


def test_memory_wait_and_write_in_the_fragment(tmp_path: Path) -> None:
    """Scene: the faulting Rope (stream 1) waits on a value (MemoryWait flag 1) written on stream 0
    after QuantMatmul. F = {MemoryWrite, MemoryWait, Rope}: the memory pair is listed in excluded and
    original like any event, and the split cuts before the flag write and after Rope."""
    b = _scene(tmp_path / "s", _gated_rope("MemoryWrite", "MemoryWait"))
    p, *_ = _propose(b, 4)
    assert (p.status, p.mechanism, p.route) == ("proposed", "dependency_aligned_split", "R5")
    assert p.original == tuple(range(100, 107))
    assert (p.before, p.excluded, p.after, p.collateral) == (
        (100, 101),
        (102, 103, 104),
        (105, 106),
        (102, 103),
    )
    assert {s.kind for s in p.safety} >= {"memory_event", "stream"}
    assert [(e.line, e.op) for e in p.marker_edits][1:3] == [
        (b.source_lines[102], "insert"),
        (b.source_lines[104] + 1, "insert"),
    ]
    assert _between_halves(b, p) == ["flag1.write(1)", "flag1.wait_value(1)", _statement(b, 104)]


# ------------------------------------------------------------------------------ item 2: cache readers


def _scatter_then_attention(*, ordered: bool) -> list[Kernel | Event]:
    """RmsNorm (100, stream 0), eventId 1 notify/wait (101 stream 0, 102 stream 1), the suspect
    ScatterKv (103, stream 1, cache writer); with ``ordered`` an eventId 2 notify (104, stream 1) and
    wait (105, stream 0); then Attention (cache reader, stream 0) and OProj."""
    pair = [Event("EventNotify", event_id=2, stream=1), Event("EventWait", event_id=2, stream=0)]
    return [
        Kernel("RmsNorm_5c1d"),
        Event("EventNotify", event_id=1, stream=0),
        Event("EventWait", event_id=1, stream=1),
        Kernel("ScatterKv_3c4d", stream=1),
        *(pair if ordered else []),
        Kernel("Attention_7a8b", "AIC_ONLY"),
        Kernel("OProj_9c0d", "AIC_ONLY"),
    ]


def test_cache_reader_stays_fused_when_an_event_pair_leaving_with_f_orders_it(tmp_path: Path) -> None:
    """Scene: ScatterKv (stream 1) writes a cache read by Attention (stream 0); ScatterKv publishes
    eventId 2, which Attention's stream waits on right before it. The pair leaves the SK with F, so
    the writer→reader order survives the exclusion: Attention is NOT pulled in (§4.2 e, §4.3)."""
    b = _scene(tmp_path / "s", _scatter_then_attention(ordered=True), cache_writers={103: [106]})
    p, *_ = _propose(b, 3)
    assert (p.status, p.mechanism, p.route) == ("proposed", "dependency_aligned_split", "R5")
    assert p.original == tuple(range(100, 108))
    assert (p.before, p.excluded, p.after) == ((100,), (101, 102, 103, 104, 105), (106, 107))
    assert p.collateral == (101, 102, 104, 105)
    (cache,) = [s for s in p.safety if s.kind == "cache"]
    assert "kept by the event pair(s) EventNotify(eventId=2) nodeId 104" in cache.detail
    assert "EventWait(eventId=2) nodeId 105" in cache.detail and "stays fused" in cache.detail
    assert not cache.blocks
    assert _between_halves(b, p) == [_statement(b, i) for i in (101, 102, 103, 104, 105)]


def test_cache_reader_is_pulled_in_when_the_only_ordering_is_sk_internal(tmp_path: Path) -> None:
    """Scene: as above but without the eventId 2 pair: nothing but the SK's own order puts the
    ScatterKv write (stream 1) before the Attention read (stream 0). Leaving Attention in the SK would
    lose that ordering, so it joins F, and the §4.3 cache note says why."""
    b = _scene(tmp_path / "s", _scatter_then_attention(ordered=False), cache_writers={103: [104]})
    p, *_ = _propose(b, 3)
    assert (p.status, p.mechanism, p.route) == ("proposed", "dependency_aligned_split", "R5")
    assert (p.original, p.before, p.excluded, p.after) == (
        tuple(range(100, 106)),
        (100,),
        (101, 102, 103, 104),
        (105,),
    )
    assert p.collateral == (101, 102, 104)
    (cache,) = [s for s in p.safety if s.kind == "cache"]
    assert "the only ordering between them is SK-internal" in cache.detail
    assert "would lose the writer→reader ordering (§4.3 cache mutation)" in cache.detail
    assert "adds nodeIds [104]" in cache.detail and cache.blocks
    assert cache.evidence.startswith("sk_meta/48213/model_48_1/sk_fused_nodes.log:")


def test_an_event_pair_left_inside_the_sk_does_not_count_as_kept_ordering(tmp_path: Path) -> None:
    """Scene: ScatterKv (stream 1, no attached event) → Cast (stream 1) → notify eventId 2 → wait on
    stream 0 → Attention reads the cache. The only pair ordering writer → reader is attached to Cast,
    so it would stay inside the SK (SK-internal): the reader is pulled in, then its wait, the notify
    and the Cast between them join F by (a), (b) and the source collateral."""
    b = _scene(
        tmp_path / "s",
        [
            Kernel("RmsNorm_5c1d"),  # 100
            Kernel("ScatterKv_3c4d", stream=1),  # 101 child, cache writer
            Kernel("Cast_22bb", stream=1),  # 102
            Event("EventNotify", event_id=2, stream=1),  # 103
            Event("EventWait", event_id=2, stream=0),  # 104
            Kernel("Attention_7a8b", "AIC_ONLY"),  # 105 cache reader
            Kernel("OProj_9c0d", "AIC_ONLY"),  # 106
        ],
        cache_writers={101: [105]},
    )
    p, *_ = _propose(b, 1)
    assert (p.before, p.excluded, p.after) == ((100,), (101, 102, 103, 104, 105), (106,))
    assert p.collateral == (102, 103, 104, 105)
    assert any("SK-internal" in s.detail and "adds nodeIds [105]" in s.detail for s in p.safety)


def test_the_reader_as_suspect_keeps_its_writer_fused_when_the_pair_leaves_with_it(tmp_path: Path) -> None:
    """Scene: Attention (stream 0) is the suspect and reads the cache ScatterKv (stream 1) writes; the
    eventId 2 wait right before Attention pairs with the notify right after ScatterKv. Both leave with
    F, so the writer→reader order is kept and ScatterKv stays fused (the rule is symmetric)."""
    b = _scene(
        tmp_path / "s",
        [
            Kernel("RmsNorm_5c1d"),  # 100
            Kernel("ScatterKv_3c4d", stream=1),  # 101 cache writer
            Event("EventNotify", event_id=2, stream=1),  # 102
            Event("EventWait", event_id=2, stream=0),  # 103
            Kernel("Attention_7a8b", "AIC_ONLY"),  # 104 child, cache reader
            Kernel("OProj_9c0d", "AIC_ONLY"),  # 105
        ],
        cache_writers={101: [104]},
    )
    p, *_ = _propose(b, 4)
    assert (p.before, p.excluded, p.after, p.collateral) == ((100, 101), (102, 103, 104), (105,), (102, 103))
    assert any(
        s.kind == "cache" and "stays fused" in s.detail and "ScatterKv_3c4d" in s.detail for s in p.safety
    )


# ------------------------------------------------------------------------------ contiguity and editing


def test_fragment_split_by_an_unrelated_node_is_blocked_without_source(tmp_path: Path) -> None:
    """Scene (no model source): the writer ScatterKv and its cross-stream reader Attention have Cast
    between them in SK order and no event at all: F = {ScatterKv, Attention} is not contiguous, so
    before + excluded + after cannot be the original order and the proposal is blocked (§4.4 rule 3)."""
    b = _scene(
        tmp_path / "s",
        [
            Kernel("RmsNorm_5c1d"),  # 100
            Kernel("ScatterKv_11aa"),  # 101 child
            Kernel("Cast_22bb"),  # 102
            Kernel("Attention_33cc", stream=1),  # 103
            Kernel("Mul_44dd"),  # 104
        ],
        cache_writers={101: [103]},
        source=False,
    )
    p, *_ = _propose(b, 1)
    assert (p.status, p.route, p.mechanism) == ("blocked", "R6", None)
    assert "not contiguous in SK order" in (p.blocked_reason or "") and "nodeId 102" in (
        p.blocked_reason or ""
    )
    assert (p.before, p.excluded, p.after) == ((100,), (101, 103), (102, 104))


def test_edited_cut_accepts_the_event_ids_of_excluded_and_replans_full_ranges(tmp_path: Path) -> None:
    """Scene: Rope (stream 1) gated by an eventId 1 pair from stream 0; the TUI hands back the
    proposal's ``excluded`` (events included) plus Add (105). The check judges kernels only; the
    re-planned ranges list every node."""
    b = _scene(tmp_path / "s", _gated_rope("EventNotify", "EventWait"))
    p, ctx, loc, v = _propose(b, 4)
    assert p.excluded == (102, 103, 104)
    inst = loc.instance
    assert inst is not None
    check = check_cut(ctx, inst, {*p.excluded, 105})
    assert check.ok and check.excluded == (104, 105) and check.required == (104, 105)
    q = replan(ctx, loc, v, p, {*p.excluded, 105}, "dependency_aligned_split")
    assert (q.original, q.before, q.excluded, q.after, q.collateral) == (
        tuple(range(100, 107)),
        (100, 101),
        (102, 103, 104, 105),
        (106,),
        (102, 103, 105),
    )
    assert _between_halves(b, q) == [_statement(b, i) for i in (102, 103, 104, 105)]
    # the same set as the engine's reproduces the engine's proposal ranges and diff
    same = replan(ctx, loc, v, p, p.excluded, "dependency_aligned_split")
    assert (same.before, same.excluded, same.after, same.diff) == (p.before, p.excluded, p.after, p.diff)
    # an event id alone is no choice of its own: nothing would leave
    assert not check_cut(ctx, inst, {102}).ok


# ------------------------------------------------------------------------------ property


_KINDS = ["kernel", "kernel", "EventNotify", "EventWait", "MemoryWrite", "MemoryWait"]


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[list[Kernel | Event], int, dict[int, list[int]]]:
    n = draw(st.integers(3, 10))
    kids: list[Kernel | Event] = []
    for i in range(n):
        what = draw(st.sampled_from(_KINDS))
        stream = draw(st.integers(0, 1))
        if what == "kernel":
            kids.append(Kernel(f"Op{i}_{i:04x}", stream=stream))
        else:
            kids.append(Event(what, event_id=draw(st.integers(1, 2)), stream=stream))
    if not any(isinstance(k, Kernel) for k in kids):
        kids[0] = Kernel("Op0_0000")
    kernels = [i for i, k in enumerate(kids) if isinstance(k, Kernel)]
    child = draw(st.sampled_from(kernels))
    writers: dict[int, list[int]] = {}
    if len(kernels) >= 2 and draw(st.booleans()):
        w, r = draw(st.permutations(kernels))[:2]
        writers[100 + w] = [100 + r]
    return kids, child, writers


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_layouts())
def test_ranges_partition_the_sk_and_excluded_is_f(
    tmp_path: Path, layout: tuple[list[Kernel | Event], int, dict[int, list[int]]]
) -> None:
    """For random built two-stream scenes with events and memory events: original lists every node
    in SK order, excluded = F, collateral = F − {suspect}; a proposed exclusion satisfies
    before + excluded + after = original, and any proposal partitions the original list."""
    kids, child, writers = layout
    root = tmp_path / f"s{abs(hash((tuple(map(repr, kids)), child, repr(writers))))}"
    b = _scene(root, kids, cache_writers=writers)
    p, ctx, loc, _ = _propose(b, child)
    inst = loc.instance
    assert inst is not None
    frag = compute_fragment(
        fragment_input(
            inst,
            b.node_ids[child],
            cache_writers=ctx.run.cache_writers if ctx.run is not None else {},
            lines=b.source_lines,
        )
    )
    check_ranges(p.to_json())
    assert p.original == tuple(b.node_ids)
    assert p.excluded == frag.members
    assert p.collateral == tuple(i for i in frag.members if i != b.node_ids[child])
    if p.status == "proposed":
        assert p.before + p.excluded + p.after == p.original
    assert sorted(p.before + p.excluded + p.after) == sorted(p.original)
    for part in (p.before, p.excluded, p.after):
        assert list(part) == [i for i in p.original if i in set(part)]


# ------------------------------------------------------------------------------ contract rule


def _ranges_doc(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "status": "proposed",
        "child": {"node_id": 104},
        "original": [100, 101, 102, 103, 104, 105],
        "before": [100, 101],
        "excluded": [102, 103, 104],
        "collateral": [102, 103],
        "after": [105],
    }
    return {**base, **over}


def test_contract_rule_ranges_partition_original_and_collateral_is_f_minus_suspect() -> None:
    """skdbg.analysis/1 cross-field rule (§4.1, §4.2): hand-made proposal objects."""
    check_ranges(_ranges_doc())
    check_ranges({"status": "none", "original": [], "before": [], "excluded": [], "after": []})
    bad = {
        "event listed twice": _ranges_doc(after=[103, 105]),
        "out of SK order": _ranges_doc(before=[101, 100]),
        "events only in collateral": _ranges_doc(excluded=[104], collateral=[102, 103]),
        "suspect in collateral": _ranges_doc(collateral=[102, 103, 104]),
    }
    for why, proposal in bad.items():
        with pytest.raises(SchemaError):
            check_ranges(proposal)
            pytest.fail(f"accepted: {why}")
