"""The bisection search over a scope's units, as a replayable state machine (no ledger, no process).

Why replayable: the state of a bisection lives in the ledger (one ``-N<k>`` round per probe, one
outcome each). Resuming after ``kill -9`` means feeding the recorded outcomes back, in order, to a
fresh :class:`Search` and asking for the next probe — the planned probe of each recorded step must be
the one recorded, or the ledger belongs to another plan (:class:`PlanMismatch`).

Strategy (units ``0..n-1``; a probe fuses each :class:`~skdbg.loop.narrow.Group` as its own SK and
leaves every other unit unfused):

* **halve** ``[lo, hi)``: fuse ``[lo, mid)`` as half ``a`` and ``[mid, hi)`` as half ``b``. The half
  whose SK shows the failure signature holds the culprit (outcome ``a``/``b``); one unit left → found.
  A failure that cannot be tied to a half (``fail``: the failing SK is not resolved, e.g. a wrong
  result) costs one *attribution* probe fusing ``a`` alone, and from then on every probe fuses one
  half only (the other half is decided by elimination, and the last unit is confirmed).
* **padding**: one kernel alone is not fused (an SK needs two), so a half with fewer than two kernels
  takes cleared units next to it (outside ``[lo, hi)``, innocent by then); a half that cannot be
  padded stays unfused and the other half's run decides, by elimination; a unit found only by
  elimination gets one *confirm* probe (fused with a cleared neighbour) before it is reported.
* **complement**: when the failing SK names no child (an SK fault in entry code, a hang), "which half
  failed" only says which SK failed *first*; an isolated unit is then also checked the other way — every
  other unit fused, it unfused — and a failure there makes the result ``inconsistent`` (one more probe).
* **interaction**: when neither half fails but their union did, the failure needs one unit from
  each side (delta debugging over contiguous fragments — an SK is a contiguous run of statements). The
  window ``[x, hi)`` fails iff it reaches the left culprit: binary search for the largest such ``x``;
  then ``[a, y)`` fails iff it reaches the right culprit: the smallest such ``y``. The minimal pair is
  ``(a, y-1)``.

Probe counts (baseline re-runs not counted): one culprit — ⌈log2 n⌉, plus one confirm probe when
the last step was decided by elimination, when every failing SK is attributable; one attribution
probes more when the failures are not attributable (one attribution probe, one confirm probe); an interaction pair — at most
``d + 1 + ⌈log2 |A|⌉ + ⌈log2 |B|⌉ ≤ 2·⌈log2 n⌉`` (``d`` halvings before the pair split).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skdbg.loop.narrow import Group

#: outcomes of one probe (majority over its runs)
OUTCOMES = ("a", "b", "fail", "pass", "drift", "unattributed", "flaky")


@dataclass(frozen=True, slots=True)
class Probe:
    """One planned probe: its step number (1-based), phase and fused groups."""

    step: int
    phase: str  # halve | attribute | confirm | complement | left | right
    groups: tuple[Group, ...]

    def to_json(self) -> dict[str, object]:
        return {"step": self.step, "phase": self.phase, "groups": [g.to_json() for g in self.groups]}


@dataclass(frozen=True, slots=True)
class Done:
    """The end of a search. ``status``: isolated (one unit) | pair (two units) | not_separable (the
    scope is one unit) | drift | unattributed | flaky (a probe's runs disagree)."""

    status: str  # isolated | pair | not_separable | inconsistent | drift | unattributed | flaky
    units: tuple[int, ...]
    detail: str
    step: int | None = None  # the probe that decided it (drift/flaky/unattributed), or the last one


class PlanMismatch(ValueError):
    """A recorded probe differs from the one this plan would run at that step."""


class Search:
    """Feed outcomes with :meth:`feed`; :meth:`next` gives the next :class:`Probe` or :class:`Done`.

    ``sizes``: kernels per unit (an int ``n`` means ``n`` one-kernel units). A fused half needs at
    least ``min_kernels`` kernels to be an SK at all (one kernel alone is not fused), so a half that
    is too small is **padded** with units already cleared (outside the candidate range); a half that
    cannot be padded is left unfused, and when the search ends on a unit found only by elimination a
    *confirm* probe fuses it with a cleared neighbour."""

    def __init__(
        self, sizes: int | Sequence[int], *, min_kernels: int = 2, check_complement: bool = False
    ) -> None:
        self.sizes = [1] * sizes if isinstance(sizes, int) else list(sizes)
        n = len(self.sizes)
        if n < 1:
            raise ValueError("a search needs at least one unit")
        self.n = n
        self.min_kernels = min_kernels
        self.step = 0
        self.last: int | None = None
        self.done: Done | None = None
        self.state = ""
        self.lo, self.hi = 0, n
        self.mid = 0
        self.confirmed = True
        self.single = False
        self.xl = self.xh = self.a = self.yl = self.yh = 0
        # the failing SK names no child: "which half faulted" is only which SK faulted *first*, so an
        # isolated unit must also be shown sufficient — everything else fused without it passes
        self.check_complement = check_complement
        self.pending: Done | None = None
        if n == 1:
            self.done = Done("not_separable", (0,), "the scope is one unit: no dependency-safe cut exists")
        else:
            self.state = "halve"

    # ------------------------------------------------------------------ padding

    def _k(self, lo: int, hi: int) -> int:
        return sum(self.sizes[lo:hi])

    def _pad_left(self, lo: int, hi: int, tag: str) -> Group | None:
        while self._k(lo, hi) < self.min_kernels and lo > 0:
            lo -= 1
        return Group(lo, hi, tag) if self._k(lo, hi) >= self.min_kernels else None

    def _pad_right(self, lo: int, hi: int, tag: str) -> Group | None:
        while self._k(lo, hi) < self.min_kernels and hi < self.n:
            hi += 1
        return Group(lo, hi, tag) if self._k(lo, hi) >= self.min_kernels else None

    def _halves(self) -> tuple[Group | None, Group | None]:
        return self._pad_left(self.lo, self.mid, "a"), self._pad_right(self.mid, self.hi, "b")

    def _complement(self) -> tuple[Group, ...]:
        u = self.lo
        left = Group(0, u, "l") if self._k(0, u) >= self.min_kernels else None
        right = Group(u + 1, self.n, "r") if self._k(u + 1, self.n) >= self.min_kernels else None
        return tuple(g for g in (left, right) if g is not None)

    def _isolated(self, found: Done) -> Probe | Done:
        """``found`` (one unit), after the complement probe when :attr:`check_complement` asks for it."""
        if self.check_complement and self._complement():
            self.pending, self.state = found, "complement"
            return self.next()
        self.done = found
        return found

    def _confirm_group(self) -> Group | None:
        g = self._pad_right(self.lo, self.lo + 1, "c")
        if g is None:
            g = self._pad_left(self.lo, self.lo + 1, "c")
        return g

    # ------------------------------------------------------------------ planning

    def next(self) -> Probe | Done:
        if self.done is not None:
            return self.done
        s = self.state
        k = self.step + 1
        if s == "complement":
            return Probe(k, "complement", self._complement())
        if s == "halve":
            if self.hi - self.lo == 1:
                if self.confirmed:
                    return self._isolated(Done("isolated", (self.lo,), f"unit {self.lo}", self.last))
                g = self._confirm_group()
                if g is None:
                    return self._isolated(
                        Done("isolated", (self.lo,), f"unit {self.lo} (by elimination)", self.last)
                    )
                return Probe(k, "confirm", (g,))
            self.mid = (self.lo + self.hi) // 2
            groups = tuple(g for g in self._halves() if g is not None)
            if self.single and groups:  # failures are not attributable: one fused half per probe
                groups = groups[:1]
            if not groups:
                self.done = Done(
                    "not_separable",
                    tuple(range(self.lo, self.hi)),
                    f"units {self.lo}..{self.hi - 1}: no half can be fused on its own",
                    self.last,
                )
                return self.done
            return Probe(k, "halve", groups)
        if s == "attribute":
            ga, gb = self._halves()
            g = ga if ga is not None else gb
            assert g is not None
            return Probe(k, "attribute", (g,))
        if s == "left":
            if self.xh - self.xl == 1:
                self.a = self.xl
                self.state = "right"
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
        failed = outcome != "pass"
        phase = probe.phase
        if phase == "halve" and len(probe.groups) == 2:
            if outcome == "a":
                self.hi, self.confirmed = self.mid, True
            elif outcome == "b":
                self.lo, self.confirmed = self.mid, True
            elif outcome == "fail":
                # the failing SK cannot be told apart: from now on each probe fuses one half only
                self.state = "attribute"
                self.single = True
            else:  # pass: neither half alone → a pair across the cut
                self.state = "left"
                self.xl, self.xh = self.lo, self.mid
        elif phase in ("halve", "attribute"):
            # one fused half (the other could not be fused, or the attribution probe)
            in_a = probe.groups[0].tag == "a"
            if failed == in_a:
                self.hi = self.mid
            else:
                self.lo = self.mid
            self.confirmed = failed
            self.state = "halve"
        elif phase == "complement":
            found = self.pending
            assert found is not None
            if failed:
                self.done = Done(
                    "inconsistent",
                    found.units,
                    f"unit {self.lo} was isolated, but with it unfused and every other unit fused the failure "
                    "persists: it is not a single child's (SK entry code, or more than one culprit)",
                    probe.step,
                )
            else:
                self.done = Done(
                    found.status, found.units, f"{found.detail}; its complement passes", probe.step
                )
        elif phase == "confirm":
            if failed:
                self.confirmed = True
                self._isolated(Done("isolated", (self.lo,), f"unit {self.lo} (confirmed)", probe.step))
            else:
                self.done = Done(
                    "inconsistent",
                    (self.lo,),
                    f"unit {self.lo} was left by elimination but fusing it with a cleared neighbour passes: "
                    "the failure is not a single child's",
                    probe.step,
                )
        elif phase == "left":
            x = probe.groups[0].lo
            if failed:
                self.xl = x
            else:
                self.xh = x
        else:
            y = probe.groups[0].hi
            if failed:
                self.yh = y
            else:
                self.yl = y


def replay(
    sizes: int | Sequence[int], history: list[tuple[Probe, str]], *, check_complement: bool = False
) -> Search:
    """A search with ``history`` fed in order (resume)."""
    s = Search(sizes, check_complement=check_complement)
    for probe, outcome in history:
        s.feed(probe, outcome)
    return s


__all__ = ["OUTCOMES", "Done", "PlanMismatch", "Probe", "Search", "replay"]
