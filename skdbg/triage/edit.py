"""Editing a proposal: check a user's excluded set live and re-plan the marker edits for it.

Why a separate headless module: the TUI's Proposal screen lets a person add or remove children from
the excluded set and pick the §4.5 mechanism. Every such edit must be judged by the same rules the
engine applies (§4.2 fragment closure, §4.4 rule 3), so the judgement lives here — no textual import,
testable without a terminal — and the UI only displays the verdict. An illegal cut is refused with
the rule that forbids it and the evidence line the edge came from; it is never silently "fixed".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from skdbg.triage.context import TriageContext
from skdbg.triage.fragment import Edge, Fragment, compute_fragment, fragment_input
from skdbg.triage.model import MECHANISMS, ChildRef, Proposal, Verdict
from skdbg.triage.proposal import METHOD, Decision, ProposalBuilder
from skdbg.triage.skview import SkInstance
from skdbg.triage.stages import Localization


@dataclass(frozen=True, slots=True)
class CutCheck:
    """The judgement of one requested excluded set (kernel nodeIds).

    ``ok`` False means refused: ``rule`` names the rule (``§4.2(a) event``, ``§4.4 rule 3`` …),
    ``detail`` says what the cut would break, ``evidence`` is ``file:line — excerpt`` of the edge.
    ``required`` is the closure of the requested set under the fragment rules (kernels only).
    """

    ok: bool
    excluded: tuple[int, ...]
    required: tuple[int, ...]
    rule: str | None = None
    detail: str = ""
    evidence: str | None = None

    @property
    def message(self) -> str:
        if self.ok:
            return f"legal cut: nodeIds {list(self.excluded)} leave the SK"
        ev = f" [{self.evidence}]" if self.evidence else ""
        return f"refused ({self.rule}): {self.detail}{ev}"


def _cite(ctx: TriageContext, edge: Edge) -> str | None:
    if edge.src is None:
        return None
    item = ctx.cite("L4", edge.kind, edge.src)
    return f"{item.where} — {item.excerpt}" if item.excerpt else item.where


def closure(
    ctx: TriageContext, inst: SkInstance, nodes: Iterable[int], lines: dict[int, int] | None = None
) -> Fragment:
    """The §4.2 fragment grown from every requested kernel at once (one fixpoint, SK order), so the
    cache rule (e) sees the event pairs the whole request moves out. Event and memory nodes in the
    request (a proposal's ``excluded`` lists them) are not seeds: they follow their kernels."""
    kernels = {k.node_id for k in inst.kernels}
    asked = list(dict.fromkeys(nodes))
    wanted = [i for i in asked if i in kernels] or asked
    if not wanted:
        raise ValueError("an exclusion needs at least one child")
    writers = ctx.run.cache_writers if ctx.run is not None else {}
    fin = fragment_input(inst, wanted[0], cache_writers=writers, lines=lines)
    joint = compute_fragment(fin, also=wanted[1:])
    if len(wanted) > 1:
        # when the first kernel's own fragment is the same set, its edges say why each node joined
        alone = compute_fragment(fin)
        if alone.members == joint.members:
            return alone
    return joint


def check_cut(ctx: TriageContext, inst: SkInstance, excluded: Iterable[int]) -> CutCheck:
    """Is excluding exactly these kernels legal? Refuse with the first rule that forbids it.

    Event and memory wait/notify nodes of the SK may be in the request (a proposal's ``excluded``
    lists them): they are not choices of their own — they follow their kernels through the fragment
    rules — so only the requested kernels are judged."""
    kernels = {k.node_id for k in inst.kernels}
    order = [k.node_id for k in inst.kernels]
    everything = {n.node_id for n in inst.nodes}
    req = set(excluded)
    asked = tuple(i for i in order if i in req)
    unknown = sorted(req - everything)
    if unknown:
        return CutCheck(False, asked, (), "§4.1", f"nodeIds {unknown} are not children of this SK")
    if not asked:
        return CutCheck(False, (), (), "§4.1", "the excluded set holds no kernel: nothing would leave the SK")
    frag = closure(ctx, inst, asked)
    required = tuple(i for i in frag.members if i in kernels)
    missing = [i for i in required if i not in req]
    if missing:
        edge = next((e for e in frag.edges if set(e.added) & set(missing)), None)
        names = ", ".join(_kernel_label(inst, i) for i in missing)
        if edge is None:  # pragma: no cover - every added member comes from a recorded edge
            return CutCheck(False, asked, required, "§4.2", f"{names} must leave with the cut")
        return CutCheck(
            False,
            asked,
            required,
            f"§4.2({edge.rule}) {edge.kind}",
            f"{names} must leave with the cut: {edge.detail}",
            _cite(ctx, edge),
        )
    if len(required) == len(kernels):
        return CutCheck(
            False,
            asked,
            required,
            "§4.4 rule 3",
            "the excluded set is the whole scope: no fusible child would remain in the SK",
        )
    return CutCheck(True, asked, required)


def _kernel_label(inst: SkInstance, node_id: int) -> str:
    node = inst.node_by_id(node_id)
    name = node.func_name if node is not None else None
    return f"{name or '?'} (nodeId {node_id})"


def _child_ref(inst: SkInstance, suspect: ChildRef, node_id: int) -> ChildRef:
    """The anchor child when the user's set leaves the suspect in the SK: by task, else by position."""
    task = next((t.index for t in inst.tasks if t.node_id == node_id), None)
    if task is not None:
        return inst.child(task)
    node = inst.node_by_id(node_id)
    pos = node.position if node is not None else suspect.task_index
    return suspect if pos is None else inst.child(pos)


def replan(
    ctx: TriageContext,
    loc: Localization,
    verdict: Verdict,
    base: Proposal,
    excluded: Iterable[int],
    mechanism: str,
) -> Proposal:
    """The proposal for a user-chosen excluded set and mechanism (§4.4, §4.5), with fresh marker edits.

    Refuses (``ValueError``) an illegal cut — call :func:`check_cut` first to show why. A mechanism
    the scene cannot express (e.g. close/reopen without a named scope) yields a ``blocked`` proposal
    with the reason, exactly as the engine would.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r} (one of {', '.join(MECHANISMS)})")
    inst = loc.instance
    if inst is None or base.child is None:
        raise ValueError("no resolved SK instance with a suspect child: nothing to re-plan")
    check = check_cut(ctx, inst, excluded)
    if not check.ok:
        raise ValueError(check.message)
    b = ProposalBuilder(ctx, inst, base.child, verdict)
    names = b.scope_names()
    automatic = not names
    b.load_source()
    b.lines = b.explicit_sites()
    anchor = base.child.node_id if base.child.node_id in check.excluded else check.excluded[0]
    b.find_region(names, b.lines.get(anchor))
    b.infer_sites()
    frag = closure(ctx, inst, check.excluded, b.lines)
    frag = Fragment(anchor, frag.members, frag.edges)
    if anchor != base.child.node_id:
        b.child = _child_ref(inst, base.child, anchor)
    fin = fragment_input(inst, anchor)
    b.edge_notes(frag)
    b.extra_notes(frag, dict(fin.dcci))
    sides = b.sides(frag)  # straddles and ranges ask it of the same fragment and sites
    b.straddles(frag, fin.nodes, sides)
    rng = b.ranges(frag, sides)
    decision = Decision("proposed", mechanism, None if frag.single else "R5")
    if automatic and mechanism != "explicit_none_exclusion":
        decision = Decision(
            "blocked",
            None,
            "R6",
            "automatic-AOT candidate (no named scope): only the None pair can exclude a child (§4.5)",
        )
    decision, edits, diff = b.anchor(frag, rng, decision, automatic)
    declared = (
        {
            "only_change": f"fusion participation of nodeIds {list(frag.members)} (edited in the TUI)",
            "method": METHOD[decision.mechanism],
        }
        if decision.mechanism
        else {}
    )
    return replace(
        base,
        status=decision.status,
        mechanism=decision.mechanism,
        child=b.child,
        original=rng.original,
        excluded=rng.excluded,
        collateral=frag.collateral,
        before=rng.before,
        after=rng.after,
        marker_edits=edits,
        diff=diff,
        declared_change=declared,
        safety=tuple(b.safety),
        blocked_reason=decision.blocked,
        route=decision.route,
        notes=(*b.notes, "edited: excluded set and mechanism chosen by the user"),
    )


def mark_blocked(proposal: Proposal, why: str) -> Proposal:
    """The user refuses the proposal: status blocked, route R6, the reason recorded verbatim."""
    reason = why.strip() or "marked blocked by the user"
    return replace(proposal, status="blocked", route="R6", blocked_reason=reason, marker_edits=(), diff="")


__all__ = ["CutCheck", "check_cut", "closure", "mark_blocked", "replan"]
