"""The job-wide verdict: the first failing rank, the followers, signature groups, ranks without evidence.

Why these rules (docs/scan.md):

* **first failing rank** — among ranks with a fault of their own, the earliest fault time ``t0``. Plog
  clocks of different hosts disagree a little, so every failing rank whose time (its own fault's, else
  its first follow-up error's) lies within ``skew_ms`` of ``t0`` (before or after) is a *tie*. A tie is broken by (1) a fault of the rank's own (SK or
  device/runtime fault) over a follow-up error, then (2) the lowest rank id (a rank without an id last,
  then by folder). When no rank has its own fault (a job-wide communication timeout), the earliest
  follower is named under the same rules, and the verdict says so.
* **followers** — ranks whose only errors match the follow-up table (:mod:`skdbg.fleet.patterns`), when
  another rank has its own fault: they are grouped under it, each with the lines that made it one.
  A rank with an SK or device fault of its own is never a follower, however late its fault came.
* **groups** — ranks with the same signature (status, fault kind, error class and code, SK entry, scope,
  child; followers by their follow-up pattern ids), largest group first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from skdbg.fleet.signature import RankSignature
from skdbg.spans import MAX_WINDOW_SECONDS, span_ok

#: default clock-skew tolerance between ranks' plog clocks (milliseconds)
DEFAULT_SKEW_MS = 1000.0

#: the statuses a rank ends with after the verdict (glossary ids)
STATUSES = ("first_failing", "own_fault", "follower", "clean", "no_evidence", "unreadable")


@dataclass(slots=True)
class Verdict:
    """The job-wide result over all rank signatures (ranks are sorted by rank id, then folder, pid)."""

    ranks: list[RankSignature]
    status: dict[int, str]  # index in ranks -> final status
    first: int | None  # index of the first failing rank
    tie: list[int] = field(default_factory=list)  # indices within the skew window (first included)
    tie_rule: str | None = None  # which rule decided a tie
    leader_has_fault: bool = True  # False: every failing rank only shows follow-up errors
    groups: list[tuple[tuple[str, ...], list[int]]] = field(default_factory=list)
    skew_ms: float = DEFAULT_SKEW_MS


def _rank_key(s: RankSignature) -> tuple[int, int, str, int]:
    return (s.rank is None, s.rank if s.rank is not None else 0, s.folder, s.pid or 0)


def signature_key(s: RankSignature, status: str) -> tuple[str, ...]:
    """What two ranks must share to be in one group."""
    if status == "follower":
        return ("follower", ",".join(sorted({c.what for c in s.follower_lines})))
    if status in ("first_failing", "own_fault"):
        return (
            "fault",
            s.fault_kind or "",
            s.error_class or "",
            s.error_code or "",
            s.sk_entry or "",
            s.scope or "",
            s.child or "",
        )
    return (status,)


#: the widest clock-skew tolerance, in ms: a year (``timedelta`` and the ranks' times hold it)
MAX_SKEW_MS = MAX_WINDOW_SECONDS * 1000


def decide(signatures: Sequence[RankSignature], *, skew_ms: float = DEFAULT_SKEW_MS) -> Verdict:
    """Apply the rules of the module docstring to the rank signatures."""
    if not span_ok(skew_ms, most=MAX_SKEW_MS):
        raise ValueError(
            f"--skew-ms must be a finite number from 0 to {MAX_SKEW_MS:,.0f} (a year), got {skew_ms:g}"
        )
    ranks = sorted(signatures, key=_rank_key)
    v = Verdict(ranks, {i: s.status for i, s in enumerate(ranks)}, None, skew_ms=skew_ms)
    faulted = [i for i, s in enumerate(ranks) if s.status == "fault"]
    followers = [i for i, s in enumerate(ranks) if s.status == "follower"]
    timed = [i for i in faulted if ranks[i].fault_time is not None]
    pool = timed or [i for i in followers if ranks[i].follower_time is not None]
    v.leader_has_fault = bool(timed)
    # a rank's time is its own fault's when it has one, else its first follow-up error's
    first_times = {
        i: t
        for i in (*faulted, *followers)
        if (t := ranks[i].fault_time if ranks[i].status == "fault" else ranks[i].follower_time) is not None
    }
    if pool:
        t0 = min(first_times[i] for i in pool)
        skew = timedelta(milliseconds=skew_ms)
        tie = [i for i, t in first_times.items() if t0 - skew <= t <= t0 + skew]
        tie.sort(key=lambda i: (ranks[i].status != "fault", _rank_key(ranks[i])))
        v.first, v.tie = tie[0], (tie if len(tie) > 1 else [])
        if len(tie) > 1:
            own = [i for i in tie if ranks[i].status == "fault"]
            v.tie_rule = (
                "own fault over follow-up error"
                if 0 < len(own) < len(tie) and len(own) == 1
                else "lowest rank id"
            )
    elif faulted:
        v.first = faulted[0]  # faults without any timestamp: lowest rank id
    for i in faulted:
        v.status[i] = "own_fault"
    if v.first is not None:
        v.status[v.first] = "first_failing"
    groups: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(ranks)):
        groups.setdefault(signature_key(ranks[i], v.status[i]), []).append(i)
    v.groups = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    return v


__all__ = ["DEFAULT_SKEW_MS", "STATUSES", "Verdict", "decide", "signature_key"]
