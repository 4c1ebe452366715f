"""Shared by the bisect tests: a low-confidence failing scope of N children and an in-process stand-in
runner that answers each probe with a scene-builder scene and freezes it.

Why a stand-in: until the emulator drives ``relaunch``, the ledger flow of ``bisect`` (rounds, runs,
resume, flaky, drift, majority) is tested with real frozen scenes whose outcome follows a fault model
written here by hand: the probe's fused half that holds every culprit fails (an anchor-only SK
timeout: low confidence, no child named), every other layout runs clean.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.scenebuilder.scene import ALL_FILES, Kernel, SceneSpec, build_scene
from skdbg.sessions.store import AttemptInfo, Ledger
from skdbg.workflow import freeze

SCOPE = "decoder.layer.0.mlp"


def kernels(n: int) -> list[Kernel]:
    return [
        Kernel(f"Op{i:03d}_a{i:04x}", "AIV_ONLY" if i % 3 else "AIC_ONLY", node_id=100 + i) for i in range(n)
    ]


def low_spec(
    children: Sequence[Kernel], *, scope: str = SCOPE, pid: int = 48213, name: str = "low"
) -> SceneSpec:
    """An SK that hung with only the handler's anchor line: C6 low, no child named."""
    return SceneSpec(
        name=name,
        children=list(children),
        scope_name=scope,
        fault="none",
        handler="anchor_only",
        dialect="D5",
        op_trace=False,
        files=ALL_FILES - {"task_queue", "device_args"},
        failure_phase="timeout",
        noise_lines=2,
        pid=pid,
    )


def clean_spec(children: Sequence[Kernel], *, scope: str, pid: int) -> SceneSpec:
    return SceneSpec(
        name="clean",
        children=list(children),
        scope_name=scope,
        fault="none",
        op_trace=False,
        pid=pid,
        noise_lines=2,
        run={"exit": {"status": 0, "signal": None, "timeout": False}},
    )


@dataclass
class StandIn:
    """``runner(round_id)``: builds the probe's scene from its recorded groups and freezes it.

    ``culprits``: funcNames that must share one fused half for the failure; ``script``: optional
    per-launch overrides ("pass", "fail", "drift") consumed in order; ``crash_after``: raise after that
    many launches (a killed bisection)."""

    ledger: Ledger
    session: str
    tmp: Path
    children: list[Kernel]
    culprits: set[str]
    script: list[str] = field(default_factory=list)
    crash_after: int | None = None
    interrupt_at: int | None = None  # the launch (1-based) that ends interrupted (Ctrl-C)
    launches: int = 0
    pids: itertools.count[int] = field(default_factory=lambda: itertools.count(60001))

    def _groups(self, rid: str) -> list[dict[str, Any]]:
        body = self.ledger.proposal(self.session, rid).body
        return list(body["bisect"]["groups"])

    def __call__(self, rid: str) -> AttemptInfo:
        if self.crash_after is not None and self.launches >= self.crash_after:
            raise KeyboardInterrupt("killed")
        self.launches += 1
        pid = next(self.pids)
        groups = self._groups(rid)
        by_name = {k.func_name: k for k in self.children}
        forced = self.script.pop(0) if self.script else None
        failing: tuple[str, list[Kernel]] | None = None
        if not groups:  # baseline
            failing = (SCOPE, self.children)
        for g in groups:
            fns = [c["func_name"] for c in g["children"]]
            if self.culprits <= set(fns):
                failing = (g["name"], [by_name[f] for f in fns])
        if forced == "pass":
            failing = None
        elif forced == "fail" and failing is None:
            failing = (groups[0]["name"] if groups else SCOPE, self.children)
        dest = self.tmp / f"scene-{pid}"
        if forced == "drift":
            spec = low_spec(self.children, pid=pid)
            spec = SceneSpec(**{**spec.__dict__, "failure_phase": "device_fault"})
        elif failing is None:
            scope = groups[0]["name"] if groups else SCOPE
            spec = clean_spec(self.children, scope=scope, pid=pid)
        else:
            spec = low_spec(failing[1], scope=failing[0], pid=pid)
        no = len(self.ledger.attempts(self.session, rid)) + 1
        spec = SceneSpec(**{**spec.__dict__, "run": {**(spec.run or {}), "round_id": rid, "attempt": no}})
        build_scene(spec, dest)
        if self.interrupt_at == self.launches:
            return freeze(self.ledger, self.session, dest, round_id=rid, status="interrupted")
        return freeze(self.ledger, self.session, dest, round_id=rid)


def failed_session(tmp: Path, n: int) -> tuple[Ledger, str, str, list[Kernel]]:
    """A ledger with one session whose base round holds the failed low-confidence attempt of ``n`` children."""
    ledger = Ledger(tmp / "home")
    sid = ledger.new_session("bisect")
    ks = kernels(n)
    build_scene(low_spec(ks), tmp / "failed")
    att = freeze(ledger, sid, tmp / "failed")
    return ledger, sid, att.round_id, ks


Runner = Callable[[str], AttemptInfo]
