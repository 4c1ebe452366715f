"""The triage workflow over the ledger: freeze → analyse → verify, in one place.

Why a layer of its own: the ledger (:mod:`skdbg.sessions`) stores bytes and JSON and never runs
triage; the CLI, the TUI, ``skdbg relaunch`` and ``skdbg bisect`` all freeze and revalidate attempts
through these functions, so every caller reads a run the same way.

Modules: :mod:`.freezing` (freeze a scene as an attempt), :mod:`.stale` (R7), :mod:`.facts` (launch
outcome, frozen facts, the §6.3 declared-change check), :mod:`.revalidate` (V1–V5 of a round) and
:mod:`.export` (the §6.2 report folder of a session).
"""

from __future__ import annotations

from skdbg.workflow.export import export_session
from skdbg.workflow.facts import attempt_outcome, declared_change_mismatch, declared_edits, frozen_facts
from skdbg.workflow.freezing import analyze_scene, freeze
from skdbg.workflow.revalidate import verify_round
from skdbg.workflow.stale import check_stale

__all__ = [
    "analyze_scene",
    "attempt_outcome",
    "check_stale",
    "declared_change_mismatch",
    "declared_edits",
    "export_session",
    "freeze",
    "frozen_facts",
    "verify_round",
]
