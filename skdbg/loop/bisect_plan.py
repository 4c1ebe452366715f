"""The bisection search over a scope's units, as a replayable state machine (no ledger, no process).

Why replayable: the state of a bisection lives in the ledger (one ``-N<k>`` round per probe, one
outcome each). Resuming after ``kill -9`` means feeding the recorded outcomes back, in order, to a
fresh :class:`Search` and asking for the next probe — the planned probe of each recorded step must be
the one recorded, or the ledger belongs to another plan (:class:`PlanMismatch`).

Strategy (units ``0..n-1``; a probe fuses each :class:`~skdbg.loop.narrow.Group` as its own SK and
leaves every other unit unfused):

* **halve** ``[lo, hi)``: fuse ``[lo, mid)`` as half ``a`` and ``[mid, hi)`` as half ``b``. The half
  whose SK shows the failure signature holds the culprit (outcome ``a``/``b``); one unit left → found.
  A failure that cannot be tied to a half (``fail``) costs one *attribution* probe fusing ``a`` alone.
* **interaction**: when neither half fails but their union did, the failure needs one unit from
  each side (delta debugging over contiguous fragments — an SK is a contiguous run of statements). The
  window ``[x, hi)`` fails iff it reaches the left culprit: binary search for the largest such ``x``;
  then ``[a, y)`` fails iff it reaches the right culprit: the smallest such ``y``. The minimal pair is
  ``(a, y-1)``.

Probe counts (baseline re-runs not counted): one culprit — ⌈log2 n⌉ when every failing SK is
attributable, up to 2·⌈log2 n⌉ with attribution probes; an interaction pair — at most
``d + 1 + ⌈log2 |A|⌉ + ⌈log2 |B|⌉ ≤ 2·⌈log2 n⌉`` (``d`` halvings before the pair split).
"""

from __future__ import annotations

from dataclasses import dataclass

from skdbg.loop.narrow import Group

#: outcomes of one probe (majority over its runs)
OUTCOMES = ("a", "b", "fail", "pass", "drift", "unattributed", "flaky")


@dataclass(frozen=True, slots=True)
class Probe:
    """One planned probe: its step number (1-based), phase and fused groups."""

    step: int
    phase: str  # halve | attribute | left | right
    groups: tuple[Group, ...]

    def to_json(self) -> dict[str, object]:
        return {"step": self.step, "phase": self.phase, "groups": [g.to_json() for g in self.groups]}


@dataclass(frozen=True, slots=True)
class Done:
    """The end of a search. ``status``: isolated (one unit) | pair (two units) | not_separable (the
    scope is one unit) | drift | unattributed | flaky (a probe's runs disagree)."""

    status: str
    units: tuple[int, ...]
    detail: str
    step: int | None = None  # the probe that decided it (drift/flaky/unattributed), or the last one


class PlanMismatch(ValueError):
    """A recorded probe differs from the one this plan would run at that step."""


class Search:
    """Feed outcomes with :meth:`feed`; :meth:`next` gives the next :class:`Probe` or :class:`Done`."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("a search needs at least one unit")
        self.n = n
        self.step = 0
        self.last: int | None = None
        self.done: Done | None = None
        self.state: tuple[str, ...] = ()
        self.lo, self.hi = 0, n
        self.mid = 0
        self.xl = self.xh = self.a = self.yl = self.yh = 0
        if n == 1:
            self.done = Done("not_separable", (0,), "the scope is one unit: no dependency-safe cut exists")
        else:
            self.state = ("halve",)

    def next(self) -> Probe | Done:
        if self.done is not None:
            return self.done
        s = self.state[0]
        k = self.step + 1
        if s == "halve":
            if self.hi - self.lo == 1:
                self.done = Done("isolated", (self.lo,), f"unit {self.lo}", self.last)
                return self.done
            self.mid = (self.lo + self.hi) // 2
            return Probe(k, "halve", (Group(self.lo, self.mid, "a"), Group(self.mid, self.hi, "b")))
        if s == "attribute":
            return Probe(k, "attribute", (Group(self.lo, self.mid, "a"),))
        if s == "left":
            if self.xh - self.xl == 1:
                self.a = self.xl
                self.state = ("right",)
                self.yl, self.yh = self.mid, self.hi
                return self.next()
            x = (self.xl + self.xh) // 2
            return Probe(k, "left", (Group(x, self.hi, "w"),))
        # right
        if self.yh - self.yl == 1:
            self.done = Done("pair", (self.a, self.yh - 1), f"units {self.a} and {self.yh - 1}", self.last)
            return self.done
        y = (self.yl + self.yh) // 2
        return Probe(k, "right", (Group(self.a, y, "w"),))

    def feed(self, probe: Probe, outcome: str) -> None:
        """Apply the outcome of ``probe`` (which must be what :meth:`next` plans now)."""
        planned = self.next()
        if planned != probe:
            raise PlanMismatch(
                f"step {probe.step}: recorded probe {probe.to_json()} is not the planned {planned}"
            )
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        self.step = probe.step
        self.last = probe.step
        if outcome in ("drift", "unattributed", "flaky"):
            self.done = Done(outcome, (), f"probe {probe.step}: {outcome}", probe.step)
            return
        s = probe.phase
        if s == "halve":
            if outcome == "a":
                self.hi = self.mid
            elif outcome == "b":
                self.lo = self.mid
            elif outcome == "fail":
                self.state = ("attribute",)
            else:  # pass: neither half alone → a pair across the cut
                self.state = ("left",)
                self.xl, self.xh = self.lo, self.mid
        elif s == "attribute":
            if outcome in ("a", "fail"):
                self.hi = self.mid
            else:
                self.lo = self.mid
            self.state = ("halve",)
        elif s == "left":
            x = probe.groups[0].lo
            if outcome in ("fail", "a", "w"):
                self.xl = x
            else:
                self.xh = x
        else:
            y = probe.groups[0].hi
            if outcome in ("fail", "a", "w"):
                self.yh = y
            else:
                self.yl = y


def replay(n: int, history: list[tuple[Probe, str]]) -> Search:
    """A search with ``history`` fed in order (resume)."""
    s = Search(n)
    for probe, outcome in history:
        s.feed(probe, outcome)
    return s


__all__ = ["OUTCOMES", "Done", "PlanMismatch", "Probe", "Search", "replay"]
