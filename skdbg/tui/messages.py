"""App-level messages shared by several screens (widget-owned messages live in their widget).

Why messages: the analysis runs in a thread worker; it reports back by posting these (thread-safe)
instead of touching widgets, so the UI never blocks and never races the worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from skdbg.tui.state import TriageState


@dataclass
class AnalysisProgress(Message):
    """A stage finished (``done`` of ``total``); progress messages replace each other in the queue."""

    stage: str
    done: int
    total: int
    opened: int | None = None  # which opening of the scene (SkdbgApp.opened)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AnalysisProgress) and message.opened == self.opened


@dataclass
class SceneOpened(Message):
    """The scene is inventoried: its plog files are known, so the Log screen need not wait for the
    analysis (the slow part)."""

    plogs: list[Path]
    scene: Path | None = None  # whose plogs (a replaced scene's late message is ignored)
    opened: int | None = None  # which opening of it (SkdbgApp.opened: two ranks may share a folder)


@dataclass
class AnalysisReady(Message):
    state: TriageState
    opened: int | None = None  # which opening of the scene (SkdbgApp.opened)


@dataclass
class AnalysisFailed(Message):
    error: str
    scene: Path | None = None  # which scene's analysis (a replaced scene's late message is ignored)
    opened: int | None = None  # which opening of it (SkdbgApp.opened)


@dataclass
class ProposalChanged(Message):
    """The proposal was edited, accepted or blocked: overview and scope redraw."""


__all__ = ["AnalysisFailed", "AnalysisProgress", "AnalysisReady", "ProposalChanged", "SceneOpened"]
