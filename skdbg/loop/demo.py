"""``skdbg demo``: the whole loop on the emulator, offline — fail, analyze, propose, regenerate, re-launch, verify.

Why: it shows in one run what skdbg is for, and it is the end-to-end check of every layer: the emulator
(:mod:`skdbg.sim`) writes a real failure scene, the ledger freezes it and the triage engine analyses it
(:mod:`skdbg.workflow`), the proposal opens a round, ``codegen candidate`` predicts the new SKs, the round
is re-launched through the same path a user's job takes (:mod:`skdbg.loop.relaunch`, a ``python -m
skdbg.sim job`` process), timed against the same model with SK fusion off (three clean processes each,
gate V5) and verified V1–V5 against the failed attempt. A low-confidence failure is
narrowed by :func:`skdbg.loop.bisect.bisect` first.

Everything lands in one folder: ``model/`` (the emulator model), ``failed-run/`` (the failing scene),
``ledger/`` (the session: every attempt, analysis and verify result), ``candidate/``. Nothing is faked:
each step's output is what the real command prints or records, and a story whose loop cannot end in a
verified exclusion (an operator bug, an SK-entry fault) says so and where it stopped.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.codegen.fusion.candidate import build_candidate, write_candidate
from skdbg.loop.bisect import BisectError, BisectRefused, bisect
from skdbg.loop.demo_model import BISECT_STORY, STORIES, demo_model
from skdbg.loop.launcher import relaunch_runner
from skdbg.loop.relaunch import RelaunchRequest, relaunch
from skdbg.sessions.attempts import materialised, propose
from skdbg.sessions.store import AttemptInfo, Ledger
from skdbg.sim import load_model, write_scene
from skdbg.sim.models import write_model
from skdbg.workflow import freeze

#: seeds tried for a story whose fault may not show on the first run (flaky)
MAX_SEEDS = 64
#: V5's clean timed processes per side (baseline with SK fusion off, candidate), the least V5 accepts
PERF_RUNS = 3
#: the steps in the order the demo prints them
STEPS = ("failing run", "analyze", "propose", "codegen candidate", "relaunch", "verify")


class DemoError(Exception):
    """The demo cannot start (unknown story, folder in the way); nothing was run."""


@dataclass
class DemoStep:
    """One printed step: its number and title, the lines that say what happened, the command behind it."""

    number: int
    title: str
    lines: list[str]
    command: str = ""


@dataclass
class DemoResult:
    """Where the demo ended. ``outcome``: ``verified`` (V1–V5 held as far as the run can show) or the
    honest end of a story that has no verified exclusion (``still_failing``, ``no_exclusion``, …)."""

    folder: Path
    story: str
    session_id: str
    outcome: str
    summary: str
    steps: list[DemoStep] = field(default_factory=list)
    gates: dict[str, str] = field(default_factory=dict)
    exclusion_round: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "story": self.story,
            "session": self.session_id,
            "outcome": self.outcome,
            "summary": self.summary,
            "exclusion_round": self.exclusion_round,
            "gates": self.gates,
            "steps": [
                {"step": s.number, "title": s.title, "lines": s.lines, "command": s.command}
                for s in self.steps
            ],
        }


Say = Callable[[DemoStep], None]
Progress = Callable[[str], None]


def prepare_folder(folder: Path, force: bool) -> None:
    """The demo's folder must be new or empty; ``force`` empties one that is not (never a file)."""
    if folder.exists() and not folder.is_dir():
        raise DemoError(f"{folder}: exists and is not a directory")
    if folder.is_dir() and any(folder.iterdir()):
        if not force:
            raise DemoError(f"{folder}: exists and is not empty (use --force to replace it)")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)


def _suspect(analysis: Mapping[str, Any]) -> str:
    s = analysis.get("verdict", {}).get("suspect") or {}
    if not s:
        return "no child named"
    return f"{s.get('func_name')} (task {s.get('task_index')}, nodeId {s.get('node_id')})"


def _verdict_line(analysis: Mapping[str, Any]) -> str:
    v = analysis.get("verdict") or {}
    return f"verdict: {v.get('confidence')} by rule {v.get('rule')} — suspect {_suspect(analysis)}"


def _routes(analysis: Mapping[str, Any]) -> str:
    routes = [str(r) for r in analysis.get("routes") or []]
    steps = [str(s.get("id")) for s in analysis.get("next_steps") or []]
    return f"routes {', '.join(routes) or 'none'}; next steps {', '.join(steps) or 'none'}"


def _failing_seed(model_dir: Path, scene: Path) -> tuple[int, Any]:
    """The first seed whose emulated run fails (every story but ``flaky`` fails at seed 0)."""
    model = load_model(model_dir)
    for seed in range(MAX_SEEDS):
        result = write_scene(model, scene, seed=seed, force=True)
        if result.outcome != "clean":
            return seed, result
    raise DemoError(f"the emulated run never failed in {MAX_SEEDS} seeds")


def run_demo(
    folder: Path,
    story: str | None = None,
    *,
    use_bisect: bool = False,
    force: bool = False,
    say: Say | None = None,
    progress: Progress | None = None,
) -> DemoResult:
    """Run the loop for ``story`` in ``folder`` (see the module docstring); ``say`` gets each step."""
    name = story or (BISECT_STORY if use_bisect else "fused")
    if name not in STORIES:
        raise DemoError(f"unknown story {name!r} (one of {', '.join(STORIES)})")
    prepare_folder(folder, force)
    steps: list[DemoStep] = []

    def emit(title: str, lines: list[str], command: str = "") -> None:
        step = DemoStep(len(steps) + 1, title, lines, command)
        steps.append(step)
        if say is not None:
            say(step)

    model_dir = write_model(folder / "model", *demo_model(name))
    failed = folder / "failed-run"
    seed, run = _failing_seed(model_dir, failed)
    emit(
        "failing run",
        [
            f"story: {name} — {STORIES[name].summary}",
            f"the emulated device ran {', '.join('+'.join(sk) for sk in run.fused) or 'no SK'} fused"
            f" (seed {seed}, pid {run.pid}): {run.outcome} — {run.message}",
            f"scene written: {failed} (plog, sk_meta/{run.pid}/, run.json, src/model.py)",
        ],
        f"skdbg sim {model_dir} -o {failed} --seed {seed}",
    )
    home = folder / "ledger"
    with Ledger(home) as ledger:
        sid = ledger.new_session(f"skdbg demo: {name}")
        base = freeze(ledger, sid, failed)
        analysis = ledger.snapshot_json(base.pk, "analysis.json") or {}
        emit(
            "analyze",
            [
                f"fault: {analysis.get('fault', {}).get('kind')} in {analysis.get('fault', {}).get('entry')}",
                _verdict_line(analysis),
                _routes(analysis),
                f"frozen as {base.round_id}/{base.key}: {base.status}",
            ],
            f"skdbg session add-attempt {sid} {failed} --session-dir {home}",
        )
        result = DemoResult(folder, name, sid, "", "", steps)
        proposal = analysis.get("proposal") or {}
        confidence = (analysis.get("verdict") or {}).get("confidence")
        if proposal.get("status") == "proposed" and not use_bisect:
            xround, status = propose(ledger, sid, base.round_id)
            emit(
                "propose",
                [
                    f"{xround} {status}: {proposal.get('mechanism')} of "
                    f"{', '.join(str(n) for n in proposal.get('excluded') or [])} "
                    f"(collateral {proposal.get('collateral') or 'none'})",
                    *(
                        ln
                        for ln in str(proposal.get("diff") or "").splitlines()
                        if ln.startswith(("+ ", "- ", "+", "-")) and not ln.startswith(("+++", "---"))
                    ),
                ],
                f"skdbg session propose {sid} {base.round_id} --session-dir {home}",
            )
        elif confidence in ("low", "medium") or use_bisect:
            narrowed = _narrow(ledger, sid, base, model_dir, emit, progress, home)
            if narrowed is None:
                return _end(result, "not_isolated", "the bisection did not isolate a child (see the ledger)")
            xround = narrowed
        else:
            why = proposal.get("reason") or "no exclusion proposed"
            emit("propose", [f"no exclusion: {why}", _routes(analysis)])
            return _end(
                result, "no_exclusion", f"the analysis proposes no exclusion ({why}); follow its routes"
            )
        result.exclusion_round = xround
        prop = ledger.proposal(sid, xround)
        source_attempt = ledger.attempt(sid, prop.source_round, prop.source_attempt)
        cand_dir = folder / "candidate"
        with materialised(ledger, source_attempt) as scene:
            cand = build_candidate(scene, prop.body, where=f"{xround} proposal")
            write_candidate(cand, cand_dir, force=True)
        pred = cand.manifest["prediction"]
        emit(
            "codegen candidate",
            [
                *(f"predicted SK: {' + '.join(map(str, s['functions']))}" for s in pred["candidate_sks"]),
                f"agrees with the proposal: {pred['agrees_with_proposal']}",
                f"candidate folder: {cand_dir} (marker.patch, candidate.json, predicted SK task queues)",
            ],
            f"skdbg codegen candidate {source_attempt.round_id} --proposal … -o {cand_dir}",
        )
        rel = relaunch(
            ledger,
            RelaunchRequest(
                session_id=sid,
                round_id=xround,
                argv=None,
                sim_model=model_dir,
                source_root=None,
                candidate=cand_dir,
                seed=seed,
                progress=progress,
                perf_runs=PERF_RUNS,
            ),
        )
        emit(
            "relaunch",
            [
                f"{xround}/{rel.attempt.key}: {rel.status} — exit {rel.exit.get('status')}"
                + (f", signal {rel.exit.get('signal')}" if rel.exit.get("signal") else ""),
                f"new scene: {rel.scene}",
            ],
            f"skdbg relaunch {sid} {xround} --sim {model_dir} --candidate {cand_dir} --perf-runs {PERF_RUNS} "
            f"--session-dir {home}",
        )
        gates = {
            str(g.get("gate")): str(g.get("result")) for g in (rel.verify or {}).get("verification") or []
        }
        result.gates = gates
        lines = [
            f"{g.get('gate')}: {g.get('result')}"
            + (f" — {g.get('detail') or g.get('reason')}" if g.get("detail") or g.get("reason") else "")
            for g in (rel.verify or {}).get("verification") or []
        ]
        emit("verify", [*lines, f"next: {rel.next_step}"], f"skdbg session show {sid} --session-dir {home}")
        if rel.status == "passed":
            return _end(
                result, "verified", f"{xround} passed: the child is out of the SK, the rest still fused"
            )
        return _end(result, "still_failing", f"{xround} {rel.status}: {rel.next_step}")


def _narrow(
    ledger: Ledger,
    sid: str,
    base: AttemptInfo,
    model_dir: Path,
    emit: Callable[[str, list[str], str], None],
    progress: Progress | None,
    home: Path,
) -> str | None:
    """Bisect the failing scope (N1) and return the exclusion round it opened (None: not isolated)."""
    runner = relaunch_runner(ledger, sid, sim=model_dir, argv=None, progress=progress)
    try:
        res = bisect(ledger, sid, base.round_id, runner=runner, progress=progress, force=True)
    except (BisectRefused, BisectError) as exc:
        emit("propose", [f"the scope cannot be narrowed: {exc}"], "")
        return None
    lines = [f"no child named: skdbg bisects the scope across re-launches (N1, bisection {res.bisect_id})"]
    for st in res.steps:
        runs = ", ".join(str(r.get("status") or r.get("outcome") or "?") for r in st.runs)
        lines.append(f"  step {st.step} {st.role} {st.round_id}: {st.outcome or ''} ({runs})")
    lines.append(f"result: {res.status} after {res.probes} probe(s) — {res.detail}")
    if res.verdict:
        lines.append(f"verdict: {res.verdict.get('confidence')} by rule {res.verdict.get('rule')}")
    if res.exclusion_round:
        lines.append(f"{res.exclusion_round} {res.exclusion_status}: the exclusion of the isolated child")
    emit("propose", lines, f"skdbg bisect {sid} {base.round_id} --sim {model_dir} --session-dir {home}")
    return res.exclusion_round


def _end(result: DemoResult, outcome: str, summary: str) -> DemoResult:
    result.outcome = outcome
    result.summary = summary
    return result


__all__ = ["STEPS", "DemoError", "DemoResult", "DemoStep", "run_demo"]
