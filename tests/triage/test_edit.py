"""Proposal editing (skdbg.triage.edit): live cut checks and re-planning on the bundled scenes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.edit import check_cut, mark_blocked, replan
from skdbg.triage.engine import analyze_context
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis
from skdbg.triage.stages import Localization

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def _open(name: str) -> tuple[TriageContext, Localization, Analysis]:
    ctx = open_context(SCENES / name)
    return ctx, localize(ctx), analyze_context(ctx)


def test_cache_edge_refuses_leaving_the_reader_behind() -> None:
    ctx, loc, _ = _open("event-bound-split")
    assert loc.instance is not None
    check = check_cut(ctx, loc.instance, [104])
    assert not check.ok
    assert check.rule == "§4.2(e) cache"
    assert "FlashAttentionScore_3b8e (nodeId 105)" in check.detail
    assert check.evidence is not None and check.evidence.startswith(
        "sk_meta/48213/model_48_1/sk_fused_nodes.log:6"
    )
    assert check.required == (104, 105)


def test_whole_scope_and_unknown_and_empty_cuts_are_refused() -> None:
    ctx, loc, _ = _open("event-bound-split")
    inst = loc.instance
    assert inst is not None
    assert check_cut(ctx, inst, [100, 101, 104, 105, 106]).rule == "§4.4 rule 3"
    unknown = check_cut(ctx, inst, [999])
    assert not unknown.ok and "999" in unknown.detail
    assert not check_cut(ctx, inst, []).ok
    legal = check_cut(ctx, inst, [105, 104])
    assert legal.ok and legal.excluded == (104, 105)


def test_replan_with_engine_choice_reproduces_the_engine_diff() -> None:
    ctx, loc, a = _open("event-bound-split")
    p = replan(ctx, loc, a.verdict, a.proposal, a.proposal.excluded, "dependency_aligned_split")
    assert p.status == "proposed"
    assert p.excluded == a.proposal.excluded
    assert p.diff == a.proposal.diff


def test_replan_other_mechanism_changes_the_marker_edits() -> None:
    ctx, loc, a = _open("aiv-fault-add-custom")
    assert a.proposal.mechanism == "explicit_none_exclusion"
    p = replan(ctx, loc, a.verdict, a.proposal, [121], "close_reopen_exclusion")
    assert p.mechanism == "close_reopen_exclusion"
    assert (
        'super_kernel_scope_end("decoder.layer.0.mlp")  # skdbg: close before excluded add_custom' in p.diff
    )
    assert "super_kernel_scope_begin(None)" not in p.diff


def test_replan_refuses_illegal_cut_and_unknown_mechanism() -> None:
    ctx, loc, a = _open("event-bound-split")
    with pytest.raises(ValueError, match="§4.2"):
        replan(ctx, loc, a.verdict, a.proposal, [104], "dependency_aligned_split")
    with pytest.raises(ValueError, match="unknown mechanism"):
        replan(ctx, loc, a.verdict, a.proposal, [104, 105], "magic")


def test_mark_blocked_records_the_reason() -> None:
    _, _, a = _open("aiv-fault-add-custom")
    p = mark_blocked(a.proposal, "owner says the kernel is fine")
    assert (p.status, p.route, p.blocked_reason, p.diff) == (
        "blocked",
        "R6",
        "owner says the kernel is fine",
        "",
    )
