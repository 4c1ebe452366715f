"""Compare the facts of two scenes: one record per differing field, with why it matters.

Why separate from the extraction: the comparison is a pure function of two plain records, so tests
can drive it with hand-written facts and the renderers share its result. A field present in one scene
only (an SK that exists in A but not in B) is a difference whose missing side is ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skdbg.diffing.facts import GROUPS, Fact, SceneFacts

DIFF_SCHEMA = "skdbg.diff/1"

#: the run-identity group: expected to differ between two processes (another rank, a re-launch)
IDENTITY_GROUPS = ("run",)

#: why a difference in a field matters (the field's group when the field has no entry of its own)
WHY: dict[str, str] = {
    "fault.kind": "the failure changed nature (an SK fault, a non-SK fault, or none at all)",
    "fault.phase": "the run failed in another phase (device fault, hang, timeout, wrong result)",
    "fault.dialect": "the logs come from another runtime dialect: the evidence available differs",
    "gate.failed": "the entry gate decides whether a child may be named at all",
    "verdict": "the confidence rule changed: the evidence chain is not the same",
    "proposal.status": "one scene supports an exclusion proposal and the other does not",
    "sk.entry": "another SK entry faulted (or none): a different SuperKernel or a debug entry",
    "sk.op_trace": "the op-trace entry (debug_op_exec_trace) gives L1 evidence only when on",
    "sk.scope": "the fault sits in another fusion scope",
    "sk.node_count": "the faulting SK holds a different number of children",
    "suspect": "a different child is blamed (or one scene names none)",
    "suspect.kernel_type": "the suspect runs on another core type",
    "suspect.stream": "the suspect runs on another stream",
    "cores.count": "a different number of cores raised an exception",
    "cores.children": "the exception cores were running different children",
    "cores.pc_relative": "the faulting instruction differs inside the child (PC less the child's start)",
    "cores.cond": "the COND register records a different task state",
    "cores.state": "the cores' roles or op states differ (implicated vs bystander)",
    "errors.bits": "the device reported other error codes: another failure mode",
    "fused": "the SK's children differ: a child left or joined the SK",
    "breaks": "fusion broke for other reasons: the SK boundaries were decided differently",
    "options.debug": "debug options change fusion and timing (F9): evidence is from a diagnostic run",
    "options.optimize": "optimize options change what is fused",
    "options.diagnostic": "one run is a diagnostic attempt (F9)",
    "env": "the wrapper environment differs: what the runtime accepts may differ",
    "run": "another process or attempt (expected across ranks and re-launches)",
}


@dataclass(frozen=True, slots=True)
class Difference:
    """One field whose value differs between A and B, with why it matters and both sides' citations."""

    field: str
    group: str
    a: Any
    b: Any
    why: str
    cites_a: tuple[str, ...]
    cites_b: tuple[str, ...]
    identity: bool  # a run-identity field: expected to differ across processes

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "group": self.group,
            "a": self.a,
            "b": self.b,
            "why": self.why,
            "identity": self.identity,
            "cites": {"a": list(self.cites_a), "b": list(self.cites_b)},
        }


@dataclass(frozen=True, slots=True)
class DiffResult:
    """The comparison of two scenes (``skdbg.diff/1``)."""

    a: SceneFacts
    b: SceneFacts
    differences: tuple[Difference, ...]
    equal: tuple[str, ...]  # fields with the same value in both scenes

    @property
    def findings(self) -> tuple[Difference, ...]:
        """The differences that are not run identity (those are expected across processes)."""
        return tuple(d for d in self.differences if not d.identity)

    @property
    def same(self) -> bool:
        """True when the scenes agree on every compared field outside run identity."""
        return not self.findings

    def summary(self) -> str:
        n, ident = len(self.findings), len(self.differences) - len(self.findings)
        head = "same findings" if n == 0 else f"{n} finding(s) differ"
        tail = f"; {ident} run-identity field(s) differ" if ident else ""
        return f"{head}{tail}; {len(self.equal)} field(s) equal"

    def to_json(self) -> dict[str, Any]:
        groups: dict[str, dict[str, list[str]]] = {}
        for g in GROUPS:
            diff = [d.field for d in self.differences if d.group == g]
            eq = [f for f in self.equal if _group_of(self.a, self.b, f) == g]
            if diff or eq:
                groups[g] = {"differ": diff, "equal": eq}
        return {
            "schema": DIFF_SCHEMA,
            "a": _side(self.a),
            "b": _side(self.b),
            "same": self.same,
            "summary": self.summary(),
            "differences": [d.to_json() for d in self.differences],
            "equal": list(self.equal),
            "groups": groups,
        }


def _side(s: SceneFacts) -> dict[str, Any]:
    return {
        "scene": s.scene,
        "pid": s.pid,
        "facts": {f.field: f.value for f in s.facts},
        "context": s.context,
    }


def _group_of(a: SceneFacts, b: SceneFacts, name: str) -> str:
    f = a.by_field().get(name) or b.by_field()[name]
    return f.group


def _why(f: Fact, a: Any, b: Any) -> str:
    base = WHY.get(f.field) or WHY.get(f.group, "")
    if f.group == "fused":
        return f"{base} ({_fused_change(a, b)})"
    return base


def _fused_change(a: Any, b: Any) -> str:
    """What happened to a scope's SKs from A to B: children that left or joined, or a regrouping."""
    if a is None or b is None:
        return f"the scope is fused only in {'A' if b is None else 'B'}"
    in_a = {c for sk in a for c in sk}
    in_b = {c for sk in b for c in sk}
    parts = []
    if in_a - in_b:
        parts.append(f"left in B: {', '.join(sorted(in_a - in_b))}")
    if in_b - in_a:
        parts.append(f"joined in B: {', '.join(sorted(in_b - in_a))}")
    if len(a) != len(b):
        parts.append(f"{len(a)} SK(s) in A, {len(b)} in B")
    return "; ".join(parts) or "same children, grouped or ordered differently"


def compare(a: SceneFacts, b: SceneFacts) -> DiffResult:
    """Every field of either scene, in A's order then B's extra fields: a difference or an equal field."""
    fa, fb = a.by_field(), b.by_field()
    names = list(fa) + [n for n in fb if n not in fa]
    order = {g: i for i, g in enumerate(GROUPS)}
    names.sort(key=lambda n: order.get((fa.get(n) or fb[n]).group, len(order)))
    diffs: list[Difference] = []
    equal: list[str] = []
    for name in names:
        xa, xb = fa.get(name), fb.get(name)
        va = None if xa is None else xa.value
        vb = None if xb is None else xb.value
        if xa is not None and xb is not None and va == vb:
            equal.append(name)
            continue
        ref = xa or xb
        assert ref is not None
        diffs.append(
            Difference(
                field=name,
                group=ref.group,
                a=va,
                b=vb,
                why=_why(ref, va, vb),
                cites_a=() if xa is None else xa.cites,
                cites_b=() if xb is None else xb.cites,
                identity=ref.group in IDENTITY_GROUPS,
            )
        )
    return DiffResult(a=a, b=b, differences=tuple(diffs), equal=tuple(equal))


__all__ = ["DIFF_SCHEMA", "WHY", "DiffResult", "Difference", "compare"]
