"""Which ledger session the TUI works in, and the two ledger writes the Proposal screen makes.

Why no textual here: the Session screen, the Proposal screen's Accept and ``skdbg tui --session``
share this record and these functions, and tests call them directly. Everything written goes
through the functions the CLI uses (:func:`skdbg.sessions.attempts.propose`,
:func:`skdbg.workflow.freeze`), so a proposal accepted in the TUI is the same ledger row as one
recorded by ``skdbg session propose``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from skdbg.sessions.attempts import materialised, propose
from skdbg.sessions.errors import LedgerError, NotFound
from skdbg.sessions.location import session_home
from skdbg.sessions.store import AttemptInfo, Ledger
from skdbg.triage.context import TriageContext
from skdbg.triage.model import Analysis, Decision, Proposal

#: what the no-session Accept prompt takes to mean "open a new session"
NEW_SESSION = "new"


@dataclass(frozen=True, slots=True)
class SessionRef:
    """The ledger (``home``), the session in it (None: not chosen yet) and the attempt whose scene
    the other screens show (None: a scene opened from disk, or a session with no attempt)."""

    home: Path
    session_id: str | None = None
    attempt: tuple[str, int] | None = None
    #: a read-only connection the command already opened (and checked) in the UI thread; the
    #: Session screen reads through it instead of opening and checking the file a second time
    reader: Ledger | None = field(default=None, compare=False, repr=False)

    @classmethod
    def default(cls, session_dir: Path | None = None) -> SessionRef:
        """The ledger ``skdbg session …`` uses (--session-dir, $SKDBG_HOME, the platform dir)."""
        return cls(session_home(session_dir))

    def open(self, *, read_only: bool = False) -> Ledger:
        """A ledger connection for the calling thread (SQLite connections stay in their thread)."""
        exists = (self.home / "ledger.db").is_file()
        return Ledger(self.home, read_only=read_only and exists)

    @property
    def attempt_ref(self) -> str | None:
        return None if self.attempt is None else f"{self.attempt[0]}/attempt-{self.attempt[1]:03d}"


def no_session_text(scene: Path) -> str:
    """How an accepted proposal gets recorded when the TUI runs without a session (exact commands)."""
    return (
        "an accepted proposal is recorded in a session ledger: answer the prompt with a session id or "
        f"`{NEW_SESSION}`, or from a shell: `skdbg session new`, then `skdbg analyze {scene} --session ID` "
        "and `skdbg tui --session ID`"
    )


def _source_attempt(
    ledger: Ledger, ref: SessionRef, sid: str, ctx: TriageContext, analysis: Analysis
) -> AttemptInfo:
    """The attempt the proposal comes from: the one the TUI opened, else the session's newest attempt
    of this very scene folder, else the scene frozen now as a new attempt (as ``analyze --session``)."""
    if ref.session_id == sid and ref.attempt is not None:
        return ledger.attempt(sid, ref.attempt[0], ref.attempt[1])
    root = str(Path(ctx.root).resolve())
    same = [
        a
        for a in ledger.attempts(sid)
        if a.scene_root is not None and str(Path(a.scene_root).resolve()) == root
    ]
    if same:
        return same[-1]
    from skdbg.workflow import freeze

    return freeze(ledger, sid, ctx=ctx, analysis=analysis)


def record_acceptance(
    ref: SessionRef,
    session: str,
    *,
    ctx: TriageContext,
    analysis: Analysis,
    proposal: Proposal,
    edits: tuple[str, ...],
) -> tuple[SessionRef, Decision]:
    """Record ``proposal`` (as edited) in ``session`` (``new``: a new one) the way
    ``skdbg session propose`` does: it opens the exclusion round it defines. Returns the session
    record to use from now on and the decision the exported analysis carries.

    Raises :class:`LedgerError` (unknown session, R7 stale evidence, a proposal that is not
    ``proposed``/``blocked``) — nothing is recorded then."""
    answer = session.strip()
    if not answer:
        raise LedgerError("no session given: nothing was recorded")
    with ref.open() as ledger:
        sid = ledger.new_session(f"tui {Path(ctx.root).name}") if answer == NEW_SESSION else answer
        ledger.session(sid)
        source = _source_attempt(ledger, ref, sid, ctx, analysis)
        body = proposal.body_json()
        rid, _status = propose(ledger, sid, source.round_id, source.no, edited=body)
        recorded = ledger.proposal(sid, rid)
    decision = Decision(
        status="accepted",
        session=sid,
        round_id=rid,
        proposal_sha256=recorded.sha256,
        ledger_status=recorded.status,
        source_attempt=f"{source.round_id}/{source.key}",
        edits=edits,
    )
    return SessionRef(ref.home, sid, (source.round_id, source.no)), decision


@contextmanager
def session_scene(ref: SessionRef) -> Iterator[tuple[SessionRef, Path | None, str | None]]:
    """``skdbg tui --session ID``: the session's newest attempt as a scene folder for the other
    screens (a temp copy of the frozen files, checked against their hashes, removed on exit).

    Yields (the session record with that attempt, the scene folder or None, why there is none).
    Raises :class:`LedgerError` for an unknown session or a missing ledger."""
    if ref.session_id is None:
        raise LedgerError("no session id given")
    if not (ref.home / "ledger.db").is_file():
        raise LedgerError(f"no ledger at {ref.home / 'ledger.db'} (skdbg locate; --session-dir)")
    with ExitStack() as stack:
        ledger = stack.enter_context(ref.open(read_only=True))
        ledger.session(ref.session_id)
        try:
            newest = ledger.newest_attempt(ref.session_id)
        except NotFound:
            yield (
                SessionRef(ref.home, ref.session_id, None, ledger),
                None,
                f"session {ref.session_id} has no attempt yet: the other screens have no scene",
            )
            return
        try:
            root = stack.enter_context(materialised(ledger, newest))
        except LedgerError as exc:
            yield (
                SessionRef(ref.home, ref.session_id, None, ledger),
                None,
                f"{newest.round_id}/{newest.key} cannot be opened as a scene: {exc}",
            )
            return
        yield SessionRef(ref.home, ref.session_id, (newest.round_id, newest.no), ledger), root, None


__all__ = ["NEW_SESSION", "SessionRef", "no_session_text", "record_acceptance", "session_scene"]
