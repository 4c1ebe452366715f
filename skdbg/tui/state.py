"""What the screens show: one opened scene, its analysis and the proposal as the user edits it.

Why a plain object (no textual): the worker builds it off the UI thread and the screens only read
it; tests can build one directly. The engine runs its stages once and reports each, so the UI can
show progress and the user can cancel between them (``cancelled`` is polled before every stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skdbg.triage.stages import STAGES as ENGINE_STAGES
from skdbg.triage.stages import Cancelled

if TYPE_CHECKING:  # the triage stack loads in the analysis worker, after the first screen painted
    from skdbg.triage.context import TriageContext
    from skdbg.triage.model import Analysis, Decision, Proposal
    from skdbg.triage.skview import SkInstance
    from skdbg.triage.stages import Localization

#: what the progress line names: opening the scene, then the engine's own stages
STAGES = ("open scene", *ENGINE_STAGES)


@dataclass
class TriageState:
    scene: Path
    ctx: TriageContext
    loc: Localization
    analysis: Analysis
    proposal: Proposal
    accepted: bool = False
    history: list[str] = field(default_factory=list)
    decision: Decision | None = None  # where the accepted proposal was recorded (None: not accepted)

    @property
    def instance(self) -> SkInstance | None:
        return self.loc.instance

    def set_proposal(self, proposal: Proposal, what: str) -> None:
        self.proposal = proposal
        self.accepted = False
        self.decision = None
        self.history.append(what)

    def edits(self) -> tuple[str, ...]:
        """The user's edits since the engine's proposal (what an acceptance records with it)."""
        out: list[str] = []
        for what in self.history:
            if what == "reset":
                out = []
            elif not what.startswith("accepted"):
                out.append(what)
        return tuple(out)

    def final_analysis(self) -> Analysis:
        """The analysis with the edited proposal, as exported (with the decision once accepted)."""
        decision = self.decision if self.accepted else None
        return replace(self.analysis, proposal=replace(self.proposal, decision=decision))


def run_analysis(
    scene: Path,
    progress: Callable[[str, int, int], None],
    cancelled: Callable[[], bool],
    *,
    ctx: TriageContext | None = None,
) -> TriageState:
    """Open and analyse ``scene``, every stage once; raises :class:`Cancelled` when asked to stop.

    ``ctx``: the scene already opened and checked (``skdbg tui`` did it before the UI started);
    otherwise it is opened and checked here exactly as ``skdbg analyze`` does (ParseError). The
    engine reports each stage to ``progress`` and polls ``cancelled`` between them."""
    from skdbg.triage.context import check_inputs, open_context
    from skdbg.triage.engine import analyze_staged

    total = len(STAGES)
    if cancelled():
        raise Cancelled("cancelled after start")
    progress(STAGES[0], 0, total)
    if ctx is None:
        ctx = open_context(scene)
        check_inputs(ctx)

    def stage(name: str, done: int, _total: int) -> None:
        if name != "done":
            progress(name, done + 1, total)

    loc, analysis = analyze_staged(ctx, on_stage=stage, cancelled=cancelled)
    progress("done", total, total)
    return TriageState(scene=scene, ctx=ctx, loc=loc, analysis=analysis, proposal=analysis.proposal)


__all__ = ["STAGES", "Cancelled", "TriageState", "run_analysis"]
