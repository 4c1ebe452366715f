"""The triage pipeline: localise → gate → attribute → grade → propose → route (triage.md §1–§7).

Why a thin orchestrator: each stage is a pure function of the context and the earlier results, so
the CLI runs them in one call, the TUI can run them one by one in workers, and tests can drive a
single stage. Analysis never writes into the scene.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.evidence import ModelEvidence
from skdbg.parsers.run_identity import RunIdentity
from skdbg.scene import iso_seconds
from skdbg.triage.attribution import attribute
from skdbg.triage.confidence import grade
from skdbg.triage.context import TriageContext, TriageOptions, check_run_json, open_context, start_reading
from skdbg.triage.fragment import barrier_groups_of, fnodes_of
from skdbg.triage.gate import draft_gate, f8_reads_source, read_f8_markers_ahead
from skdbg.triage.localize import localize
from skdbg.triage.model import Analysis, ArtifactRef, GateResult, NextStep, Proposal, SceneInfo, Verdict
from skdbg.triage.proposal import propose, read_proposal_inputs_ahead
from skdbg.triage.routing import route
from skdbg.triage.skview import instances_of
from skdbg.triage.stages import STAGES, Cancelled, Localization, StageCallback

#: ``ArtifactRef(kind, path, sha256, mtime, size)`` without the frozen ``__init__`` (one per artifact)
_new_ref = frozen_builder(ArtifactRef)


def scene_info(ctx: TriageContext, pid: int | None, device: int | None) -> SceneInfo:
    """The scene block of the analysis JSON: identity plus every artifact with its SHA-256 (G5)."""
    run = ctx.run
    refs = []
    seconds: dict[int, str] = {}
    for a in ctx.input_artifacts:
        # the digest first: an unreadable artifact raises its ParseError, not stat's
        sha256, size, stamp = a.listed()
        refs.append(_new_ref(a.kind, a.relpath, sha256, iso_seconds(stamp, seconds), size))
    arts = tuple(refs)
    return SceneInfo(
        root=".",
        pid=pid,
        rank=run.rank if run is not None else None,
        device=device if device is not None else (run.device if run is not None else None),
        artifacts=arts,
    )


def run_summary(run: RunIdentity | None) -> dict[str, Any]:
    """The run identity as read, for the report (never invented: missing stays missing)."""
    if run is None:
        return {}
    cand = run.candidate
    return {
        "experiment_id": run.experiment_id,
        "round_id": run.round_id,
        "attempt": run.attempt,
        "command": run.command,
        "cwd": run.cwd,
        "rank": run.rank,
        "device": run.device,
        "pid": run.pid,
        "start": run.start_text,
        "end": run.end_text,
        "exit": None
        if run.exit is None
        else {"status": run.exit.status, "signal": run.exit.signal, "timeout": run.exit.timeout},
        "failure_phase": run.failure_phase,
        "candidate": None
        if cand is None
        else {
            "scope_names": list(cand.scope_names),
            "marker_file": cand.marker_file,
            "super_kernel_optimize_options": cand.optimize_options,
            "super_kernel_debug_options": cand.debug_options,
            "source_revision": cand.source_revision,
            "config_fingerprint": cand.config_fingerprint,
        },
        "failing_path": run.failing_path,
    }


#: the kinds of evidence gap an analysis reports as warnings: gaps of reading a file, never of parsing
#: its lines (so whether super_kernel.log's facts were parsed cannot change the warnings; a test holds
#: the facts parser to it)
WARNING_GAP_KINDS = ("unreadable", "malformed_json")


def _one_rank(models: Sequence[ModelEvidence]) -> bool:
    """The scene's sk_meta is one rank's (or none): :func:`read_sk_meta` then parses all of it."""
    return len({me.model.pid for me in models}) <= 1


def read_sk_meta(ctx: TriageContext) -> None:
    """Parse the sk_meta the analysis will need, while the plog scan runs: every file of a scene with
    one rank's sk_meta (super_kernel.log's facts only when it may hold deferred waits, the one fact
    triage reads); of a scene with several ranks', only each super_kernel.log's exception blocks (which
    localisation compares), the faulting rank's other files once it is known.

    Why not every rank's files: a scene copied from a job holds each rank's ``sk_meta/<pid>/``, ~0.25 s
    each on the bench model, and the verdict reads one rank's."""
    models = ctx.evidence.model_evidence
    if _one_rank(models):
        ctx.evidence.load_models(None, facts=False)
    else:
        for me in models:
            _ = me.handler


def prepare_late_stages(ctx: TriageContext) -> None:
    """Work of the stages after localisation that reads no plog line, done before localisation waits for
    the plogs: the module the plog copy of an exception block is derived with (localisation imports it
    whatever the scene), and the marker scan of the model source when gate F8 will read it (run.json's
    candidate names scopes). F8 then takes it from the scan cache, and so does the proposal when it names
    the file as F8 does (its path in the scene, as run.json gives it: not with ``--source-root``, for
    one). What a proposal for any child reads first: ``source_sites.json`` and, where F8 reads the model
    source too, the proposal's model of it with its line index
    (:func:`~skdbg.triage.proposal.read_proposal_inputs_ahead`, which reports nothing: the proposal
    takes them, or meets their errors itself). And, when the scene's sk_meta holds a single SK (the one
    localisation names when it names one: it may name none, for a fault of another process), that SK
    with its nodes, its node index, tasks and the fragment inputs the proposal derives from it (kept on
    the SK: :func:`~skdbg.triage.skview.instances_of`). The verdict is the same: each is what a stage
    asks for first, made earlier.

    Why: on a scene with a large plog the scan's child finishes last, and this process, its sk_meta
    read, waits for it; every step after the plogs then runs alone. On the bench scene the first two were
    ~9 ms of that last stretch (the model source's tree index alone ~5 ms), the SK's ~10 ms more, the
    proposal's inputs and the node index ~7 ms more (thirty-sixth round), now taken from the wait.
    Whatever the scan raises (a source that is not Python, a read that failed) is left as it is: F8
    scans again, meets it and reports it, as without this step (a failed scan is not kept).
    The SK is made only where :func:`read_sk_meta` parsed the files it reads (a single rank's sk_meta),
    but for super_kernel.log's facts where the file may hold deferred waits and they were not parsed
    yet (its exception blocks read first): the stages after the plogs parse them then anyway, so no
    file is parsed that would not be, and the gaps and errors reported are the same."""
    import skdbg.parsers.sk_copies  # noqa: F401 - Evidence.handler imports it once the plogs are in

    read_f8_markers_ahead(ctx)
    read_proposal_inputs_ahead(ctx, source=f8_reads_source(ctx))
    models = ctx.evidence.model_evidence
    if _one_rank(models):
        # what raises here is kept nowhere: the stage that asks for it meets it, in its place
        with contextlib.suppress(Exception):
            sks = [sk for me in models for sk in instances_of(me)]
            if len(sks) == 1:
                barrier_groups_of(sks[0])
                fnodes_of(sks[0])
                sks[0].node_by_id(0)  # its node index: child resolution and the proposal look up nodes there


#: what the stages after the gate give: the verdict, the proposal, the routes and the next steps
_AfterGate = tuple[Verdict, Proposal, tuple[str, ...], tuple[NextStep, ...]]
T = TypeVar("T")


class _HeldError(Exception):
    """What a stage after the gate raised on the gate G5 was assumed to pass (``error``), held until G5
    is known (:func:`analyze_staged`): raised when it passes, dropped when it fails (the stages then run
    on the real gate, which may not come to what raised)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def analyze_staged(
    ctx: TriageContext,
    *,
    on_stage: StageCallback | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> tuple[Localization, Analysis]:
    """Run every stage once on an opened context; also return the localisation (the TUI draws from it).

    ``on_stage`` is told before each stage; ``cancelled`` is polled before each stage (and once more
    after the last, when gate G5 has been read) and raises :class:`Cancelled` naming the last finished
    one. Why here and not in the UI: one pass of the stages, whoever asks — the TUI used to run them for
    its progress line and then again for the result. (Gate G5 is read after grade, propose and route,
    which run on the gate as it is when every artifact reads; only should one not read are those three
    run again, on the real gate: see :class:`~skdbg.triage.gate.GateDraft`.)
    A malformed run.json (or ``--run`` file) is bad input, not a gap: the gate would otherwise
    report a run identity that was merely unreadable as "missing" (exit 3).
    """
    total = len(STAGES)

    def step(i: int) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled(f"cancelled after {STAGES[i - 1] if i else 'opening the scene'}")
        if on_stage is not None:
            on_stage(STAGES[i], i, total)

    check_run_json(ctx)
    start_reading(ctx)
    read_sk_meta(ctx)  # this thread parses sk_meta meanwhile: localisation needs it next
    prepare_late_stages(ctx)
    step(0)
    loc = localize(ctx)
    step(1)
    draft = draft_gate(ctx, loc)
    gate = draft.assuming_readable()  # G5 is checked after the stages that read the gate (GateDraft)
    step(2)
    att = attribute(ctx, loc)

    def after_gate(gate: GateResult, first: bool) -> _AfterGate:
        """Grade, propose and route on ``gate``. The first time (on the assumed gate), each stage is
        announced (``step``: a cancel or a callback's error is raised at once, as ever) and what a stage
        raises comes wrapped in :class:`_HeldError`, for the caller to decide on once G5 is known."""

        def stage(i: int, run: Callable[[], T]) -> T:
            if not first:
                return run()
            step(i)
            try:
                return run()
            except Exception as exc:
                raise _HeldError(exc) from None

        verdict = stage(3, lambda: grade(ctx, gate, loc, att))
        proposal = stage(4, lambda: propose(ctx, loc, verdict))
        routes, steps = stage(5, lambda: route(ctx, gate, loc, att, verdict, proposal))
        return verdict, proposal, routes, steps

    later: _AfterGate | Exception
    try:
        later = after_gate(gate, True)
    except _HeldError as held:  # raised below, unless G5 fails: then the real gate decides
        later = held.error
    checked = draft.finish()  # G5: every artifact's SHA-256, the child's by now
    if checked != gate:  # an artifact cannot be read: the stages on the real gate (it may fail sooner)
        gate, later = checked, after_gate(checked, False)
    elif isinstance(later, Exception):
        raise later
    if cancelled is not None and cancelled():
        raise Cancelled(f"cancelled after {STAGES[-1]}")
    verdict, proposal, routes, steps = later
    fault = replace(loc.fault, cores=att.cores)
    # the chain starts with where the fault is (runtime line, handler anchor, SK identity lines)
    seen = {(e.file, e.line, e.json_path, e.level) for e in verdict.evidence}
    lead = tuple(e for e in loc.evidence if (e.file, e.line, e.json_path, e.level) not in seen)
    verdict = replace(verdict, evidence=lead + verdict.evidence)
    if verdict.rule == "C0" and loc.fault.kind not in ("sk", "none"):
        # not an SK fault (X3/X6): per-level "missing" lines would suggest collecting child evidence
        verdict = replace(verdict, missing=())
    # the faulting rank's files are all read, whatever triage asked of them: their gaps are reported.
    # super_kernel.log's facts are not parsed for it: its read gave the file's gaps; the facts parse
    # adds none the analysis reports, and no fact but the deferred waits is read. Nor are
    # sk_node_detail.log's nodes: its outline's read gives its gaps, and no node is read.
    ctx.evidence.load_models(loc.pid, facts=False)
    warnings = tuple(f"{g.kind}: {g.detail}" for g in ctx.evidence.gaps if g.kind in WARNING_GAP_KINDS)
    analysis = Analysis(
        scene=scene_info(ctx, loc.pid, fault.device_id),
        gate=gate,
        fault=fault,
        verdict=verdict,
        routes=routes,
        next_steps=steps,
        proposal=proposal,
        run=run_summary(ctx.run),
        warnings=warnings,
        wait_for=att.wait_for,
    )
    if on_stage is not None:
        on_stage("done", total, total)
    return loc, analysis


def analyze_context(
    ctx: TriageContext,
    *,
    on_stage: StageCallback | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Analysis:
    """Run every stage on an opened context (see :func:`analyze_staged` for the callback and token)."""
    return analyze_staged(ctx, on_stage=on_stage, cancelled=cancelled)[1]


def analyze(
    scene: str | os.PathLike[str],
    *,
    run_json: str | os.PathLike[str] | None = None,
    source_root: str | os.PathLike[str] | None = None,
    pid: int | None = None,
    options: TriageOptions | None = None,
) -> Analysis:
    """Analyse one failure scene (``skdbg analyze``). Raises ParseError only for a missing scene,
    a malformed ``--run`` file or a missing ``--source-root`` (CLI exit 3)."""
    ctx = open_context(scene, run_json=run_json, source_root=source_root, pid=pid, options=options)
    return analyze_context(ctx)


__all__ = [
    "STAGES",
    "Cancelled",
    "StageCallback",
    "analyze",
    "analyze_context",
    "analyze_staged",
    "run_summary",
    "scene_info",
    "start_reading",
]
