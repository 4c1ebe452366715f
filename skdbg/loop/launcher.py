"""The production launcher of a round: one ``skdbg relaunch`` per call, as bisect and demo need it.

Why a module of its own: ``skdbg bisect`` and ``skdbg demo`` both hand a *runner* (``round id → the
attempt it recorded``) to the bisection; it must launch exactly as ``skdbg relaunch`` does — the same
materialised source, environment, collection, freeze and gates — so it is a thin closure over
:func:`skdbg.loop.relaunch.relaunch`, written once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from skdbg.loop.relaunch import RelaunchRequest, relaunch
from skdbg.sessions.store import AttemptInfo, Ledger

Runner = Callable[[str], AttemptInfo]


def relaunch_runner(
    ledger: Ledger,
    session_id: str,
    *,
    sim: Path | None,
    argv: list[str] | None,
    timeout: float | None = None,
    cwd: Path | None = None,
    source_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Runner:
    """``runner(round_id)``: relaunch one attempt of the round and return it.

    Each launch gets its own seed — the number of attempts the session holds — so a flaky fault can
    show across probes, and a resumed bisection re-uses the seeds of the launches it already made."""

    def run(round_id: str) -> AttemptInfo:
        seed = sum(len(ledger.attempts(session_id, r.round_id)) for r in ledger.rounds(session_id))
        req = RelaunchRequest(
            session_id=session_id,
            round_id=round_id,
            argv=argv or None,
            sim_model=sim,
            source_root=source_root,
            cwd=cwd,
            timeout=timeout,
            seed=seed,
            progress=progress,
        )
        return relaunch(ledger, req).attempt

    return run


__all__ = ["Runner", "relaunch_runner"]
