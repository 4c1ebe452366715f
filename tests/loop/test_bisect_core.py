"""The pure N1 core: units, the layout safety check, probe marker edits, the search and its probe bounds."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.loop.bisect_plan import Done, PlanMismatch, Probe, Search, replay
from skdbg.loop.narrow import Group, Layout, Unit, assignment, check_layout, probe_edits, units_of
from skdbg.loop.narrow_signature import classify, majority, signature_of
from skdbg.parsers.markers import MarkerEdit, apply_edits_text, balanced, scan_text
from skdbg.triage.fragment import BarrierGroup, FNode, FragmentInput

# ------------------------------------------------------------------------------ scopes by hand


def k(nid: int, pos: int, stream: int = 0) -> FNode:
    return FNode(nid, pos, "kernel", stream, func_name=f"K{nid}")


def ev(nid: int, pos: int, etype: str, eid: int, stream: int) -> FNode:
    return FNode(nid, pos, "event", stream, event_type=etype, event_id=eid)


def test_an_event_pair_binds_the_kernels_between_its_statements() -> None:
    # K0 | K1 notify(e5) on s0 ... wait(e5) on s1 before K3 | K4 | K5 ; K2 lies between the pair's statements
    nodes = (
        k(0, 0),
        k(1, 1),
        ev(10, 2, "EventNotify", 5, 0),
        k(2, 3),
        ev(11, 4, "EventWait", 5, 1),
        k(3, 5, 1),
        k(4, 6),
        k(5, 7),
    )
    inp = FragmentInput(nodes=nodes, child=0, lines={n.node_id: 10 + n.position for n in nodes})
    units = units_of(inp, {n.node_id: n.position for n in nodes})
    assert [u.kernels for u in units] == [(0,), (1, 2, 3), (4,), (5,)]
    assert set(units[1].nodes) == {1, 10, 2, 11, 3}


def test_a_barrier_group_is_one_unit() -> None:
    nodes = tuple(k(i, i) for i in range(5))
    inp = FragmentInput(
        nodes=nodes, child=0, barrier_groups=(BarrierGroup(frozenset({2, 3}), "ALL_SYNC", "b"),)
    )
    units = units_of(inp, {i: i for i in range(5)})
    assert [u.kernels for u in units] == [(0,), (1,), (2, 3), (4,)]


def test_two_children_of_one_statement_are_one_unit() -> None:
    nodes = tuple(k(i, i) for i in range(4))
    units = units_of(FragmentInput(nodes=nodes, child=0), {0: 0, 1: 1, 2: 1, 3: 2})
    assert [u.kernels for u in units] == [(0,), (1, 2), (3,)]


def test_check_layout_names_a_split_pair_and_a_split_barrier() -> None:
    nodes = (k(0, 0), ev(10, 1, "EventNotify", 7, 0), k(1, 2), ev(11, 3, "EventWait", 7, 0), k(2, 4))
    inp = FragmentInput(
        nodes=nodes, child=0, barrier_groups=(BarrierGroup(frozenset({0, 1}), "ALL_SYNC", "b"),)
    )
    bad = check_layout(inp, {0: "a", 10: "a", 1: "b", 11: "b", 2: "b"})
    assert any("event pair nodeIds 10/11" in p for p in bad)
    assert any("barrier group [0, 1]" in p for p in bad)
    assert check_layout(inp, {0: "a", 10: "a", 1: "a", 11: "a", 2: "a"}) == []


def test_check_layout_finds_a_cycle_between_two_sks() -> None:
    # stream 0: A(a) then B(b); stream 1: C(b) then D(a): a -> b on s0, b -> a on s1
    nodes = (k(0, 0, 0), k(1, 1, 1), k(2, 2, 0), k(3, 3, 1))
    bad = check_layout(FragmentInput(nodes=nodes, child=0), {0: "a", 2: "b", 1: "b", 3: "a"})
    assert any("wait on each other" in p for p in bad)


# ------------------------------------------------------------------------------ marker edits

SOURCE = """import torch


def forward(x):
    torch.npu.super_kernel_scope_begin("blk")
    a = op0(x)
    b = op1(a)
    c = op2(b)
    d = op3(c)
    torch.npu.super_kernel_scope_end("blk")
    return d
"""


def _layout() -> Layout:
    return Layout(
        rel="src/model.py",
        scope="blk",
        begin_line=5,
        end_line=10,
        begin_call="torch.npu.super_kernel_scope_begin",
        end_call="torch.npu.super_kernel_scope_end",
        literal='"blk"',
        stmts=((6, 6), (7, 7), (8, 8), (9, 9)),
        indents=("    ",) * 4,
    )


def _units4() -> list[Unit]:
    return [Unit(i, (i,), (i,), i, i) for i in range(4)]


def test_halves_become_two_named_scopes_and_the_original_markers_go() -> None:
    edits = probe_edits(_layout(), _units4(), [Group(0, 2, "a"), Group(2, 4, "b")], 1)
    assert [(e.line, e.op) for e in edits] == [
        (5, "delete"),
        (6, "insert"),
        (8, "insert"),
        (10, "insert"),
        (10, "delete"),
    ]
    out = apply_edits_text(SOURCE, edits)
    body = [ln.split("  #")[0].strip() for ln in out.splitlines()[4:12]]
    assert body == [
        'torch.npu.super_kernel_scope_begin("blk.n1a")',
        "a = op0(x)",
        "b = op1(a)",
        'torch.npu.super_kernel_scope_end("blk.n1a")',
        'torch.npu.super_kernel_scope_begin("blk.n1b")',
        "c = op2(b)",
        "d = op3(c)",
        'torch.npu.super_kernel_scope_end("blk.n1b")',
    ]
    assert balanced(out)


def test_a_window_leaves_the_rest_unfused() -> None:
    edits = probe_edits(_layout(), _units4(), [Group(1, 3, "w")], 4)
    out = apply_edits_text(SOURCE, edits)
    names = [(m.kind, m.name) for m in scan_text(out).markers]
    assert names == [("begin", "blk.n4w"), ("end", "blk.n4w")]
    lines = out.splitlines()
    body = [ln.split("  #")[0].strip() for ln in lines[4:10]]
    assert body == [
        "a = op0(x)",
        'torch.npu.super_kernel_scope_begin("blk.n4w")',
        "b = op1(a)",
        "c = op2(b)",
        'torch.npu.super_kernel_scope_end("blk.n4w")',
        "d = op3(c)",
    ]
    assert all(isinstance(e, MarkerEdit) for e in edits) and balanced(out)


# ------------------------------------------------------------------------------ search bounds


def oracle(culprits: set[int], sizes: list[int]):  # type: ignore[no-untyped-def]
    """The device as the emulator models it: a group fails when it holds every culprit and is fused
    at all (two kernels or more)."""

    def run(p: Probe) -> str:
        for g in p.groups:
            if culprits <= set(range(g.lo, g.hi)) and sum(sizes[g.lo : g.hi]) >= 2:
                return g.tag if len(p.groups) > 1 else "fail"
        return "pass"

    return run


def search(n: int, culprits: set[int], sizes: list[int] | None = None) -> tuple[Done, int]:
    sizes = sizes or [1] * n
    s, run, probes = Search(sizes), oracle(culprits, sizes), 0
    while True:
        nxt = s.next()
        if isinstance(nxt, Done):
            return nxt, probes
        probes += 1
        s.feed(nxt, run(nxt))


def test_one_culprit_within_log2_n_plus_2_probes() -> None:
    rng = random.Random(15)
    for n in (8, 32, 128, 512):
        positions = range(n) if n <= 32 else rng.sample(range(n), 40)
        for c in positions:
            done, probes = search(n, {c})
            assert done.status == "isolated" and done.units == (c,)
            assert probes <= math.ceil(math.log2(n)) + 2


def test_every_fused_half_holds_two_kernels_and_edges_are_confirmed() -> None:
    for n in range(2, 20):
        for c in range(n):
            s, run = Search(n), oracle({c}, [1] * n)
            while not isinstance(nxt := s.next(), Done):
                assert all(g.hi - g.lo >= 2 for g in nxt.groups), nxt
                s.feed(nxt, run(nxt))
            if n == 2:
                assert (nxt.status, nxt.units) == ("not_separable", (0, 1))
            else:
                assert (nxt.status, nxt.units) == ("isolated", (c,)), (n, c, nxt)


def test_culprit_at_the_edge_of_three_is_confirmed() -> None:
    s = Search(3)
    p1 = s.next()
    assert p1 == Probe(1, "halve", (Group(1, 3, "b"),))  # [0,1) alone cannot be fused
    s.feed(p1, "pass")
    p2 = s.next()
    assert p2 == Probe(2, "confirm", (Group(0, 2, "c"),))
    s.feed(p2, "fail")
    assert s.next() == Done("isolated", (0,), "unit 0 (confirmed)", 2)


def test_mixed_unit_sizes_keep_the_bound() -> None:
    rng = random.Random(3)
    for n in (8, 32, 128):
        sizes = [rng.choice((1, 1, 2, 3)) for _ in range(n)]
        for c in rng.sample(range(n), min(n, 12)):
            done, probes = search(n, {c}, sizes)
            assert (done.status, done.units) == ("isolated", (c,))
            assert probes <= math.ceil(math.log2(n)) + 2


def test_interaction_pair_within_4_log2_n_probes() -> None:
    rng = random.Random(7)
    for n in (8, 32, 128, 512):
        for _ in range(40):
            a, b = sorted(rng.sample(range(n), 2))
            done, probes = search(n, {a, b})
            assert done.units in ((a, b), (a,), (b,)) or done.status == "isolated"
            if done.status == "pair":
                assert done.units == (a, b)
            assert probes <= 4 * math.ceil(math.log2(n))


def test_pair_straddling_the_first_cut_is_reported_as_the_pair() -> None:
    done, _ = search(16, {3, 12})
    assert (done.status, done.units) == ("pair", (3, 12))


def test_unattributed_failures_switch_to_one_fused_half_per_probe() -> None:
    s = Search(8)
    p1 = s.next()
    assert isinstance(p1, Probe)
    s.feed(p1, "fail")
    p2 = s.next()
    assert isinstance(p2, Probe) and p2.phase == "attribute" and p2.groups == (Group(0, 4, "a"),)
    s.feed(p2, "pass")
    p3 = s.next()
    assert isinstance(p3, Probe) and p3.groups == (Group(4, 6, "a"),)


def test_unattributed_failures_keep_the_bound() -> None:
    """A wrong result names no SK: a failing two-half probe says only "fail"."""
    rng = random.Random(5)
    for n in (8, 32, 128, 512):
        for c in (0, n - 1, *rng.sample(range(n), min(n, 10))):
            sizes = [1] * n
            s, run, probes = Search(sizes), oracle({c}, sizes), 0
            while not isinstance(nxt := s.next(), Done):
                probes += 1
                out = run(nxt)
                s.feed(nxt, "fail" if out in ("a", "b") else out)
            assert (nxt.status, nxt.units) == ("isolated", (c,)), (n, c, nxt)
            assert probes <= math.ceil(math.log2(n)) + 2, (n, c, probes)


def test_replay_refuses_a_foreign_history() -> None:
    try:
        replay(8, [(Probe(1, "halve", (Group(0, 3, "a"), Group(3, 8, "b"))), "a")])
    except PlanMismatch:
        return
    raise AssertionError("a probe this plan never makes was accepted")


def test_drift_stops_the_search() -> None:
    s = Search(8)
    p = s.next()
    assert isinstance(p, Probe)
    s.feed(p, "drift")
    assert s.next() == Done("drift", (), "probe 1: drift", 1)


# ------------------------------------------------------------------------------ property: safe probes


@st.composite
def scopes(draw: st.DrawFn) -> FragmentInput:
    n = draw(st.integers(2, 24))
    streams = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    nodes: list[FNode] = []
    nid = 100
    pos = 0
    pending: list[tuple[int, int, int]] = []  # (before kernel index, event id, stream)
    eid = 1
    for i in range(n):
        for _j, e, s in [p for p in pending if p[0] == i]:
            nodes.append(ev(nid, pos, "EventWait", e, s))
            nid += 1
            pos += 1
        nodes.append(k(i, pos, streams[i]))
        pos += 1
        if i + 1 < n and draw(st.booleans()) and draw(st.integers(0, 3)) == 0:
            target = draw(st.integers(i + 1, n - 1))
            nodes.append(ev(nid, pos, "EventNotify", eid, streams[i]))
            nid += 1
            pos += 1
            pending.append((target, eid, streams[target]))
            eid += 1
    barriers = []
    for i in range(n - 1):
        if draw(st.integers(0, 9)) == 0:
            barriers.append(BarrierGroup(frozenset({i, i + 1}), "ALL_SYNC", "b"))
    writers: dict[int, tuple[int, ...]] = {}
    if n > 3 and draw(st.booleans()):
        w = draw(st.integers(0, n - 2))
        r = draw(st.integers(w + 1, n - 1))
        writers[w] = (r,)
    return FragmentInput(nodes=tuple(nodes), child=0, barrier_groups=tuple(barriers), cache_writers=writers)


def _pairs_kept(inp: FragmentInput, where: dict[int, str | None]) -> bool:
    """Hand check, independent of check_layout: equal eventIds and barrier members share a side."""
    by_eid: dict[int, set[str | None]] = {}
    for n in inp.nodes:
        if n.event_id is not None:
            by_eid.setdefault(n.event_id, set()).add(where[n.node_id])
    if any(len(v) > 1 for v in by_eid.values()):
        return False
    return all(len({where[m] for m in g.members}) == 1 for g in inp.barrier_groups)


@settings(max_examples=150, deadline=None)
@given(scopes(), st.lists(st.sampled_from(["a", "b", "pass", "fail"]), min_size=1, max_size=20))
def test_every_probe_is_a_safe_candidate(inp: FragmentInput, answers: list[str]) -> None:
    stmt_of = {n.node_id: n.position for n in inp.nodes}
    units = units_of(inp, stmt_of)
    assert sorted(x for u in units for x in u.nodes) == sorted(n.node_id for n in inp.nodes)
    s = Search(len(units))
    for ans in answers:
        nxt = s.next()
        if isinstance(nxt, Done):
            break
        where = assignment(units, nxt.groups)
        assert check_layout(inp, where) == []
        assert _pairs_kept(inp, where)
        lo = min(g.lo for g in nxt.groups)
        hi = max(g.hi for g in nxt.groups)
        assert 0 <= lo < hi <= len(units)
        s.feed(nxt, ans if len(nxt.groups) > 1 or ans in ("pass", "fail") else "fail")


# ------------------------------------------------------------------------------ signature


def _doc(
    kind: str, phase: str, sk: str | None, conf: str = "low", child: str | None = None
) -> dict[str, object]:
    return {
        "fault": {"kind": kind, "phase": phase, "entry": "sk_entry_mix11", "sk_name": sk, "cores": []},
        "verdict": {"confidence": conf, "rule": "C6", "suspect": {"func_name": child} if child else None},
        "run": {"exit": {"timeout": phase == "timeout"}},
    }


def test_the_failing_half_is_read_from_the_sk_name() -> None:
    base = signature_of(_doc("sk", "timeout", "sk_7_blk_start_A_end_B"))
    probe = signature_of(_doc("sk", "timeout", "sk_9_blk.n3b_start_C_end_D"))
    assert classify(base, probe, {"blk.n3a": "a", "blk.n3b": "b"}) == ("b", "failing SK of scope 'blk.n3b'")


def test_another_error_class_is_drift_and_clean_is_pass() -> None:
    base = signature_of(_doc("sk", "timeout", "sk_7_blk_start_A_end_B"))
    other = signature_of(_doc("non_sk", "device_fault", None))
    assert classify(base, other, {"blk.n1a": "a", "blk.n1b": "b"})[0] == "drift"
    clean = signature_of({"fault": {"kind": "none", "phase": "none"}, "verdict": {}, "run": {"exit": {}}})
    assert classify(base, clean, {"blk.n1a": "a"}) == ("pass", "clean run")


def test_majority_needs_more_than_half() -> None:
    assert majority(["a", "a", "b"]) == "a"
    assert majority(["a", "b"]) == "flaky"


def test_a_wrong_result_without_a_fault_line_is_a_failure() -> None:
    wrong = {
        "fault": {"kind": "none", "phase": "correctness", "sk_name": None, "cores": []},
        "verdict": {"confidence": "low", "rule": "C6", "suspect": None},
        "run": {"exit": {"status": 1, "signal": None, "timeout": False}},
    }
    sig = signature_of(wrong)
    assert (sig.failed, sig.error_class) == (True, "none/exit")
    clean = {"fault": {"kind": "none", "phase": "timeout"}, "verdict": {}, "run": {"exit": {"status": 0}}}
    assert signature_of(clean).failed is False
    assert classify(sig, signature_of(wrong), {"b.n1a": "a", "b.n1b": "b"})[0] == "fail"


def test_complement_probe_turns_an_any_sk_failure_into_inconsistent() -> None:
    """An SK-entry fault fails every fused SK; the first SK to run is the one the evidence names, so the
    halving always follows half a. The complement probe (every other unit fused) fails too: the result
    is ``inconsistent``, never an isolated child."""
    from skdbg.loop.bisect_plan import Done, Probe, Search

    s = Search(8, check_complement=True)
    phases = []
    while True:
        nxt = s.next()
        if isinstance(nxt, Done):
            break
        assert isinstance(nxt, Probe)
        phases.append(nxt.phase)
        s.feed(nxt, "a" if len(nxt.groups) == 2 and nxt.phase == "halve" else "fail")
    assert nxt.status == "inconsistent" and phases[-1] == "complement"
    assert len(phases) <= 3 + 2


def test_complement_probe_confirms_a_real_culprit() -> None:
    from skdbg.loop.bisect_plan import Done, Probe, Search

    culprit = 5
    s = Search(8, check_complement=True)
    while True:
        nxt = s.next()
        if isinstance(nxt, Done):
            break
        assert isinstance(nxt, Probe)
        hit = [g for g in nxt.groups if g.lo <= culprit < g.hi]
        if nxt.phase == "halve" and len(nxt.groups) == 2:
            outcome = hit[0].tag if hit else "pass"
        else:
            outcome = "fail" if hit else "pass"
        s.feed(nxt, outcome)
    assert (nxt.status, nxt.units) == ("isolated", (culprit,))
    assert "its complement passes" in nxt.detail
