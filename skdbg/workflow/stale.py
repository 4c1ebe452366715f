"""R7: refuse evidence that is not this attempt's own (triage.md §6.3 "stale evidence").

Why in the workflow layer: the byte-identity check compares only the artifact kinds that revalidation
compares by content (``skdbg.triage.verify.PRODUCED_KINDS``), so freezing and verify cannot disagree
about what counts as a copy of an older attempt.
"""

from __future__ import annotations

from skdbg.sessions.errors import StaleEvidenceError
from skdbg.sessions.store import Ledger, attempt_key
from skdbg.triage.context import TriageContext
from skdbg.triage.verify import PRODUCED_KINDS


def check_stale(ledger: Ledger, session_id: str, ctx: TriageContext, pid: int | None) -> None:
    """R7: refuse evidence of another pid, or of an attempt already in the session."""
    scene = ctx.scene
    if pid is not None:
        for a in scene.artifacts:
            if a.pid_label is not None and a.pid_label.isdigit() and int(a.pid_label) != pid:
                raise StaleEvidenceError(
                    f"{a.relpath}: evidence of pid {a.pid_label}, but this attempt is pid {pid} (R7); "
                    "freeze each process's scene separately"
                )
        for old in ledger.attempts(session_id):
            if old.pid == pid:
                raise StaleEvidenceError(
                    f"{scene.root}: pid {pid} is the process of {old.round_id}/{old.key} (R7: an older "
                    "attempt's evidence); a new attempt needs a fresh process"
                )
    run = ctx.run
    if run is not None and run.round_id and run.attempt:
        for old in ledger.attempts(session_id, None):
            if old.round_id == run.round_id and old.no == run.attempt:
                raise StaleEvidenceError(
                    f"{scene.root / 'run.json'}: names {run.round_id}/{attempt_key(run.attempt)}, which is "
                    "already frozen (R7: evidence of an older attempt)"
                )
    frozen = ledger.session_artifact_hashes(session_id)
    for a in scene.artifacts:
        if a.kind not in PRODUCED_KINDS:
            continue
        try:
            if a.size == 0:
                continue
            digest = a.sha256
        except OSError:
            continue
        if digest in frozen:
            rnd, no, rel, _ = frozen[digest]
            raise StaleEvidenceError(
                f"{a.relpath}: byte-identical to {rel} of {rnd}/{attempt_key(no)} (R7: evidence of an older attempt)"
            )


__all__ = ["check_stale"]
