"""What the screens show: one opened scene, its analysis and the proposal as the user edits it.

Why a plain object (no textual): the worker builds it off the UI thread and the screens only read
it; tests can build one directly. The stages run one by one so the UI can show progress and the
user can cancel between them (``cancelled`` is polled after every stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from skdbg.triage.attribution import attribute
from skdbg.triage.confidence import grade
from skdbg.triage.context import TriageContext, check_inputs, open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.gate import run_gate
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis, Proposal
from skdbg.triage.skview import SkInstance
from skdbg.triage.stages import Localization

STAGES = ("open scene", "localise", "gate", "attribute", "grade", "propose + route")


class Cancelled(Exception):
    """The user cancelled the analysis (escape)."""


@dataclass
class TriageState:
    scene: Path
    ctx: TriageContext
    loc: Localization
    analysis: Analysis
    proposal: Proposal
    accepted: bool = False
    history: list[str] = field(default_factory=list)

    @property
    def instance(self) -> SkInstance | None:
        return self.loc.instance

    def plog_paths(self) -> list[Path]:
        """Every plog of the scene (absolute), for the Log screen."""
        return [a.path for a in self.ctx.scene.artifacts if a.kind == "plog"]

    def set_proposal(self, proposal: Proposal, what: str) -> None:
        self.proposal = proposal
        self.accepted = False
        self.history.append(what)

    def final_analysis(self) -> Analysis:
        """The analysis with the edited proposal, as exported."""
        return replace(self.analysis, proposal=self.proposal)


def run_analysis(
    scene: Path,
    progress: Callable[[str, int, int], None],
    cancelled: Callable[[], bool],
    *,
    ctx: TriageContext | None = None,
) -> TriageState:
    """Open and analyse ``scene`` stage by stage; raises :class:`Cancelled` when asked to stop.

    ``ctx``: the scene already opened and checked (``skdbg tui`` did it before the UI started);
    otherwise it is opened and checked here exactly as ``skdbg analyze`` does (ParseError)."""
    total = len(STAGES)

    def step(i: int) -> None:
        if cancelled():
            raise Cancelled(f"cancelled after {STAGES[i - 1] if i else 'start'}")
        progress(STAGES[i], i, total)

    step(0)
    if ctx is None:
        ctx = open_context(scene)
        check_inputs(ctx)
    step(1)
    loc = localize(ctx)
    step(2)
    gate = run_gate(ctx, loc)
    step(3)
    att = attribute(ctx, loc)
    step(4)
    grade(ctx, gate, loc, att)
    step(5)
    # analyze_context re-runs the cheap stages on the warm context and adds the chain lead-in
    analysis = analyze_context(ctx)
    if cancelled():
        raise Cancelled("cancelled after propose")
    progress("done", total, total)
    return TriageState(scene=scene, ctx=ctx, loc=loc, analysis=analysis, proposal=analysis.proposal)


__all__ = ["STAGES", "Cancelled", "TriageState", "run_analysis"]
