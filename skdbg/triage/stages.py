"""Hand-off records between triage stages that are not part of the public JSON contract.

Why separate from :mod:`skdbg.triage.model`: these carry parser objects (the chosen incident, the
resolved SK instance) that the later stages need but the JSON never shows. The order of stages is
localise → gate → attribute → grade → propose → route (see :mod:`skdbg.triage.engine`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing the stage records must not load the parsers
    from datetime import datetime

    from skdbg.parsers.runtime_faults import KernelFaultLine
    from skdbg.parsers.sk_handler import Incident
    from skdbg.triage.model import EvidenceItem, FaultInfo
    from skdbg.triage.skview import SkInstance

#: the stages in the order they run, as reported to a stage callback (the TUI's progress line)
STAGES = ("localise", "gate", "attribute", "grade", "propose", "route")

#: ``on_stage(name, done, total)``: called before each stage runs (``done`` stages finished so far)
StageCallback = Callable[[str, int, int], None]


class Cancelled(Exception):
    """The caller's cancellation token turned true between two stages; nothing was returned."""


@dataclass
class Localization:
    """Where the fault is (triage.md §3.1–§3.3), before any child attribution.

    * ``pid`` — the process P the analysis is about (run.json pid, else the faulting plog's pid).
    * ``fault`` — kind/phase/entry/op_trace/dialect/scope/model; ``cores`` stays empty here (the
      attribution stage fills it).
    * ``incident`` — the SK exception-handler block chosen for P (None: no handler output, e.g. a
      hang without DFX, a non-SK fault, or D-less runtime-only logs); ``incidents`` all of P's.
    * ``runtime_fault`` — the first runtime ``fault kernel_name=`` line of P (None when absent).
    * ``fault_time`` — Tf, the timestamp of the first fault line (F4 upper bound).
    * ``instance`` — the SK the fault names in the fresh metadata (F5/F6); ``instance_candidates``
      holds every SK that could be meant when the choice is ambiguous (C1); ``instance_rule`` says
      how it was resolved: ``model_id`` (D5 ModelId + SkScopeId), ``scope_id`` (SkScopeId/header/COND
      in a single model dir or by child-list match), ``origin_names`` (ordered DFX names, D0–D1),
      ``single_sk`` (no DFX block, exactly one SK), ``ambiguous``, ``none``.
    * ``dialect_known`` — False caps the verdict at low (G4, C1).
    * ``evidence`` — cited lines: the runtime fault line, the handler anchor, the model/scope lines.
    """

    pid: int | None
    fault: FaultInfo
    incident: Incident | None = None
    incidents: list[Incident] = field(default_factory=list)
    runtime_fault: KernelFaultLine | None = None
    fault_time: datetime | None = None
    instance: SkInstance | None = None
    instance_candidates: list[SkInstance] = field(default_factory=list)
    instance_rule: str = "none"
    dialect_known: bool = False
    evidence: list[EvidenceItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def is_sk(self) -> bool:
        return self.fault.kind == "sk"


__all__ = ["STAGES", "Cancelled", "Localization", "StageCallback"]
