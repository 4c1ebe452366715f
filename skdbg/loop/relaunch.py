"""``skdbg relaunch``: run a round's candidate and record what happened as its next attempt.

Why one function for the whole step: re-launching by hand means applying the marker edits, setting
four environment variables, finding the new pid's plog and ``sk_meta``, writing ``run.json``, freezing
and verifying — each a place to get it subtly wrong (a stale plog, the string ``"None"``, a debug option
left on). :func:`relaunch` does it in order:

1. materialise the round's declared marker edits (:mod:`.relaunch_source`) — not the declared change
   → the attempt is recorded ``invalid`` and the job is not run (§6.3);
2. run ARGV (or ``python -m skdbg.sim job``) without a shell in its own process group
   (:mod:`.runner`), with the candidate's environment and options file;
3. collect the new pid's evidence into the attempt's scene and write ``run.json``
   (:mod:`.relaunch_scene`);
4. freeze it into the round and, for an exclusion round, verify V1–V5 against the failed attempt
   (:mod:`skdbg.workflow`).

Every attempt folder lives under the session's folder in the ledger home:
``<home>/<session>/<round>.<attempt-NNN>/`` holding ``source/`` (the materialised copy),
``log/`` (``ASCEND_PROCESS_LOG_PATH``), ``options.json``, ``runner.log`` and ``scene/`` (what is frozen).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.atomic import safe_name
from skdbg.loop.perf import PerfError, measure
from skdbg.loop.relaunch_scene import (
    collect_scene,
    place_env_probe,
    place_marker,
    run_document,
    write_run_json,
)
from skdbg.loop.relaunch_source import (
    Declared,
    Materialised,
    RelaunchError,
    check_applied,
    materialise,
)
from skdbg.loop.runner import RunnerError, RunOutcome, RunSpec, resolve_program, run
from skdbg.parsers.markers import MarkerEdit
from skdbg.sessions.attempts import frozen_text
from skdbg.sessions.errors import NotFound
from skdbg.sessions.store import AttemptInfo, Ledger, ProposalInfo, RoundInfo, attempt_key
from skdbg.spans import MAX_WAIT_SECONDS, span_expected, span_ok
from skdbg.workflow import freeze, verify_round

#: CANN slog level 1 = INFO: the SK exception handler's header, task queues and counters are INFO lines
#: (artifacts.md §0.1); at the default ERROR only its ERROR lines reach the plog
HANDLER_LOG_LEVEL = 1
OPTIONS_ENV = "SKDBG_NPUGRAPH_EX_OPTIONS"
SEED_ENV = "SKDBG_SIM_SEED"
OPTION_KEYS = ("super_kernel_optimize_options", "super_kernel_debug_options")


@dataclass(frozen=True, slots=True)
class RelaunchRequest:
    """What to re-launch (the ``skdbg relaunch`` options). Exactly one of ``argv`` and ``sim_model``."""

    session_id: str
    round_id: str
    argv: list[str] | None
    sim_model: Path | None
    source_root: Path | None
    applied: bool = False  # ``source_root`` already holds the edits (--applied): checked, not copied
    cwd: Path | None = None
    timeout: float | None = None
    seed: int | None = None
    options: Mapping[str, Any] | None = None
    progress: Callable[[str], None] | None = None
    candidate: Path | None = None  # a ``skdbg codegen candidate`` folder: its env and compile options
    grace: float = 5.0
    perf_runs: int = 0  # V5: K clean baseline + K clean candidate processes after a clean evidence run
    #: the TUI's live view: ``cancel`` ends the job as Ctrl-C does (recorded ``interrupted``);
    #: ``output`` receives the job's own lines (default: ``progress``); ``started`` its pid
    cancel: threading.Event | None = None
    output: Callable[[str], None] | None = None
    started: Callable[[int], None] | None = None


@dataclass(frozen=True, slots=True)
class RelaunchResult:
    attempt: AttemptInfo
    status: str
    verify: dict[str, Any] | None
    scene: Path
    next_step: str
    exit: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt.to_json(),
            "status": self.status,
            "scene": str(self.scene),
            "exit": self.exit,
            "verify": self.verify,
            "next_step": self.next_step,
            "notes": self.notes,
        }


# ------------------------------------------------------------------------------------------ the round


def round_edits(ledger: Ledger, session_id: str, round_id: str) -> list[MarkerEdit]:
    """The declared marker edits of a round: its proposal's ``marker_edits`` (each {file, line, op,
    text}; ``file`` defaults to the proposal's ``marker_file``); none for a base round.
    :class:`RelaunchError` names the field of a malformed edit."""
    ledger.round(session_id, round_id)  # NotFound for an unknown round
    try:
        prop = ledger.proposal(session_id, round_id)
    except NotFound:
        return []  # a base round declares no change
    return _edits(prop)


def _edits(prop: ProposalInfo) -> list[MarkerEdit]:
    body = prop.body
    raw = body.get("marker_edits") or []
    default_file = body.get("marker_file")
    where = f"proposal of {prop.round_id}"
    if not isinstance(raw, list):
        raise RelaunchError(f"{where}: marker_edits: expected a list, got {type(raw).__name__}")
    out: list[MarkerEdit] = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise RelaunchError(f"{where}: marker_edits[{i}]: expected an object")
        file = e.get("file") or default_file
        line, op, text = e.get("line"), e.get("op"), e.get("text", "")
        if not isinstance(file, str) or not file:
            raise RelaunchError(f"{where}: marker_edits[{i}].file: missing (and no marker_file)")
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            raise RelaunchError(f"{where}: marker_edits[{i}].line: expected a 1-based line, got {line!r}")
        if op not in ("insert", "replace", "delete"):
            raise RelaunchError(f"{where}: marker_edits[{i}].op: expected insert|replace|delete, got {op!r}")
        if not isinstance(text, str):
            raise RelaunchError(f"{where}: marker_edits[{i}].text: expected a string")
        out.append(MarkerEdit(file, line, op, text))
    return out


@dataclass(frozen=True, slots=True)
class _Plan:
    rnd: RoundInfo
    source: AttemptInfo  # the attempt the round's proposal came from
    declared: Declared
    exclusion: bool  # exclusion rounds get V1–V5; narrowing rounds are frozen and analysed only
    failed_run: dict[str, Any]
    env_probe: bytes | None
    retest: bool = False  # a base round re-run as first launched (its options included)


def _plan(ledger: Ledger, req: RelaunchRequest) -> _Plan:
    ledger.session(req.session_id)
    rnd = ledger.round(req.session_id, req.round_id)
    try:
        prop: ProposalInfo | None = ledger.proposal(req.session_id, req.round_id)
    except NotFound:
        prop = None  # a base round: re-run its candidate as first launched (a retest, no declared change)
    if prop is not None:
        edits = _edits(prop)
        source = ledger.attempt(req.session_id, prop.source_round, prop.source_attempt)
    else:
        launched = ledger.attempts(req.session_id, req.round_id)
        if not launched:
            raise RelaunchError(
                f"{req.round_id}: not opened by a proposal and without an attempt: nothing to re-launch "
                "(skdbg session propose opens a round from a failed attempt)"
            )
        edits, source = [], launched[0]
    frozen = frozen_text(ledger, source, "marker_file")
    if frozen is None:
        raise RelaunchError(
            f"{source.round_id}/{source.key} froze no model source (run.json candidate.marker_file): there "
            "is nothing to materialise the round's source from"
        )
    rel, old_text = frozen
    mine = [e for e in edits if e.file == rel] or [e for e in edits if Path(e.file).name == Path(rel).name]
    others = sorted({e.file for e in edits} - {e.file for e in mine})
    if others:
        raise RelaunchError(
            f"proposal of {req.round_id}: marker edits of {', '.join(others)}, but the failed attempt's model "
            f"source is {rel} (one marker file per candidate)"
        )
    exclusion = prop is not None and rnd.kind == "exclusion"
    mechanism = prop.body.get("mechanism") if prop is not None and exclusion else None
    if prop is not None and exclusion and prop.body.get("status") != "proposed":
        raise RelaunchError(
            f"{req.round_id}: its proposal is {prop.body.get('status')} ({prop.body.get('reason') or 'blocked'}); "
            "a blocked exclusion is not re-launched"
        )
    run_doc = ledger_json(ledger, source, "run_json")
    probe = _frozen_bytes(ledger, source, "env_probe")
    return _Plan(
        rnd,
        source,
        Declared(rel, old_text, mine, str(mechanism) if mechanism else None),
        exclusion,
        run_doc,
        probe,
        retest=prop is None,
    )


def _frozen_bytes(ledger: Ledger, attempt: AttemptInfo, role: str) -> bytes | None:
    art = next((a for a in ledger.artifacts(attempt.pk) if a.role == role and a.sha256 is not None), None)
    if art is None or art.sha256 is None:
        return None
    path = (
        ledger.objects.path(art.sha256)
        if attempt.storage == "copy"
        else Path(attempt.scene_root or ".") / art.relpath
    )
    try:
        return path.read_bytes()
    except OSError:
        return None


def ledger_json(ledger: Ledger, attempt: AttemptInfo, role: str) -> dict[str, Any]:
    """A frozen JSON file of an attempt (``{}`` when absent or not an object)."""
    data = _frozen_bytes(ledger, attempt, role)
    if data is None:
        return {}
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


# ------------------------------------------------------------------------------------------ options


def _candidate_manifest(folder: Path, declared: Declared) -> dict[str, Any]:
    """``candidate.json`` of a ``skdbg codegen candidate`` folder, checked against the round's edits."""
    path = folder / "candidate.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RelaunchError(f"{path}: cannot read the candidate ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise RelaunchError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("relaunch"), dict):
        raise RelaunchError(f"{path}: relaunch: missing (not a skdbg codegen candidate folder)")
    change = doc.get("change") or {}
    theirs = [(str(e.get("line")), e.get("op"), e.get("text")) for e in change.get("marker_edits") or []]
    ours = [(str(e.line), e.op, e.text) for e in declared.edits]
    if theirs != ours:
        raise RelaunchError(
            f"{path}: change.marker_edits: not the edits of this round's proposal (a candidate of another round)"
        )
    return doc


def _options(req: RelaunchRequest, plan: _Plan, manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    """The npugraph_ex options of the launch: the candidate folder's, else the failed attempt's optimize
    options with no debug options (an exclusion round is a clean run; a base round's retest keeps them
    all); each map given in ``req.options`` replaces its default."""
    base: dict[str, Any]
    if manifest is not None:
        base = dict(manifest["relaunch"].get("compile_options") or {})
    else:
        cand = plan.failed_run.get("candidate") or {}
        base = {"super_kernel_optimize_options": cand.get("super_kernel_optimize_options") or {}}
        if plan.retest:  # the same candidate: its debug options too
            base["super_kernel_debug_options"] = cand.get("super_kernel_debug_options") or {}
    base.update(req.options or {})
    out: dict[str, Any] = {}
    for key in OPTION_KEYS:
        value = base.get(key) or {}
        if not isinstance(value, Mapping):
            raise RelaunchError(f"options: {key}: expected an object, got {type(value).__name__}")
        out[key] = dict(value)
    return out


def job_environment(
    base: Mapping[str, str],
    *,
    log_dir: Path,
    options_file: Path,
    seed: int | None,
    extra: Mapping[str, str] = {},
) -> dict[str, str]:
    """The job's environment: the caller's, plus what makes a run leave the evidence skdbg reads."""
    env = dict(base)
    env.update({k: str(v) for k, v in extra.items()})
    env["ASCEND_OP_COMPILE_SAVE_KERNEL_META"] = "1"
    env["ASCEND_PROCESS_LOG_PATH"] = str(log_dir)
    level = env.get("ASCEND_GLOBAL_LOG_LEVEL", "").strip()
    if not level.isdigit() or int(level) > HANDLER_LOG_LEVEL:
        env["ASCEND_GLOBAL_LOG_LEVEL"] = str(HANDLER_LOG_LEVEL)  # DEBUG (0) stays: it includes INFO
    env[OPTIONS_ENV] = str(options_file)
    if seed is not None:
        env[SEED_ENV] = str(seed)
    else:
        env.pop(SEED_ENV, None)
    return env


# ------------------------------------------------------------------------------------------ folders


def attempt_folder(ledger: Ledger, session_id: str, round_id: str, no: int) -> Path:
    """A fresh folder for the attempt under the session's folder (a second folder of the same number,
    left by a re-launch that never got frozen, gets a suffix)."""
    base = ledger.home / safe_name(session_id)
    name = f"{safe_name(round_id)}.{attempt_key(no)}"
    path = base / name
    k = 2
    while path.exists():
        path = base / f"{name}.{k}"
        k += 1
    path.mkdir(parents=True)
    return path


def _next_no(ledger: Ledger, session_id: str, round_id: str) -> int:
    previous = ledger.attempts(session_id, round_id)
    return previous[-1].no + 1 if previous else 1


def sim_argv(model_dir: Path, marker: Path) -> list[str]:
    """The emulator as a job: the same process path as a user's ARGV."""
    return [sys.executable, "-m", "skdbg.sim", "job", str(model_dir), "--source", str(marker)]


# ------------------------------------------------------------------------------------------ relaunch


def _say(req: RelaunchRequest, text: str) -> None:
    if req.progress is not None:
        req.progress(text)


def relaunch(ledger: Ledger, req: RelaunchRequest) -> RelaunchResult:
    """Materialise, run, collect, freeze and verify one attempt of ``req.round_id`` (module docstring).

    Raises :class:`RelaunchError` (bad input: nothing recorded, no job run) or a ledger error.
    """
    if (req.argv is None) == (req.sim_model is None):
        raise RelaunchError("give either the job after `--` or --sim MODEL_DIR (exactly one)")
    if req.sim_model is not None and not req.sim_model.is_dir():
        raise RelaunchError(f"{req.sim_model}: the emulator model folder given by --sim (not a directory)")
    if req.applied and req.source_root is None:
        raise RelaunchError("--applied needs the folder that holds the applied change")
    if req.timeout is not None and not span_ok(req.timeout, positive=True, most=MAX_WAIT_SECONDS):
        # NaN passes a ``<= 0`` check, and a NaN deadline never comes: the runner polled for ever
        expected = span_expected(positive=True, most=MAX_WAIT_SECONDS)
        raise RelaunchError(f"--timeout: expected {expected}, got {req.timeout}")
    if not span_ok(req.grace, most=MAX_WAIT_SECONDS):
        # the wait between SIGTERM and SIGKILL: a NaN one would never end in SIGKILL
        raise RelaunchError(f"grace: expected {span_expected(most=MAX_WAIT_SECONDS)}, got {req.grace}")
    plan = _plan(ledger, req)
    manifest = _candidate_manifest(req.candidate, plan.declared) if req.candidate is not None else None
    options = _options(req, plan, manifest)
    job: list[str] | None = None
    if req.argv is not None:
        # ARGV[0] must exist before anything is recorded (exit 3). A relative path is taken from where
        # skdbg was started (as the shell the user typed it in would), then run as an absolute path
        try:
            job = [resolve_program(req.argv, Path.cwd(), os.environ), *req.argv[1:]]
        except RunnerError as exc:
            raise RelaunchError(str(exc)) from exc
    if req.cwd is not None and not req.cwd.is_dir():
        raise RelaunchError(f"{req.cwd}: the working directory given by --cwd (not a directory)")
    if req.applied and req.source_root is not None:
        src = check_applied(plan.declared, req.source_root)
    else:
        src = None
    no = _next_no(ledger, req.session_id, req.round_id)
    folder = attempt_folder(ledger, req.session_id, req.round_id, no)
    if src is None:
        _say(req, f"materialising {plan.declared.rel} with {len(plan.declared.edits)} marker edit(s)")
        src = materialise(plan.declared, folder / "source", req.source_root)
    scene = folder / "scene"
    failed_ref = f"{plan.source.round_id}/{plan.source.key}"
    extra = {
        "failed_attempt": failed_ref,
        "attempt_folder": str(folder),
        "options_file": "../options.json",
        "runner_log": "../runner.log",
        "materialised_source": str(src.marker),
    }
    argv = job if job is not None else sim_argv((req.sim_model or Path()).resolve(), src.marker)
    cwd = req.cwd if req.cwd is not None else src.root
    if src.problem is not None:
        return _record_invalid(ledger, req, plan, src, scene, no, argv, cwd, options, extra)
    options_file = folder / "options.json"
    options_file.write_text(json.dumps(options, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    env_extra = {str(k): str(v) for k, v in (manifest or {}).get("relaunch", {}).get("env", {}).items()}
    env = job_environment(
        os.environ, log_dir=folder / "log", options_file=options_file, seed=req.seed, extra=env_extra
    )
    if req.cancel is not None and req.cancel.is_set():
        raise RelaunchError(f"cancelled before the job started: nothing was run or recorded ({folder})")
    _say(req, f"running {argv[0]} in {cwd} (attempt {req.round_id}/{attempt_key(no)})")
    outcome = run(
        RunSpec(
            argv=argv,
            cwd=cwd,
            env=env,
            log=folder / "runner.log",
            timeout=req.timeout,
            grace=req.grace,
            progress=req.output if req.output is not None else req.progress,
            cancel=req.cancel,
            started=req.started,
        )
    )
    _say(req, f"pid {outcome.pid} ended: {_exit_text(outcome)}; collecting its evidence")
    collected, r1, notes = collect_scene(scene, outcome, folder / "log", cwd, argv)
    doc = _document(plan, req, src, scene, no, argv, cwd, options, extra, collected, outcome)
    write_run_json(scene, doc)
    status, why = _forced_status(outcome, r1)
    if req.perf_runs and plan.exclusion and status is None and outcome.status == 0 and outcome.signal is None:
        _say(req, f"V5: {req.perf_runs} clean baseline and candidate processes, interleaved")
        try:
            perf = measure(
                argv=argv,
                cwd=cwd,
                env=env,
                folder=folder,
                options=options,
                runs=req.perf_runs,
                timeout=req.timeout,
                progress=req.progress,
            )
        except PerfError as exc:
            notes = [*notes, f"V5 not measured: {exc}"]
        else:
            (scene / "perf.json").write_text(json.dumps(perf, indent=2) + "\n", encoding="utf-8")
    notes = [*notes, r1] if r1 is not None else notes
    for note in notes:
        _say(req, note)
    _say(req, f"freezing {scene}")
    attempt = freeze(
        ledger,
        req.session_id,
        scene,
        round_id=req.round_id,
        change=f"retest of {failed_ref} as launched (skdbg relaunch)"
        if plan.retest
        else f"relaunch of {req.round_id}: {len(plan.declared.edits)} declared marker edit(s)",
        status=status,
        status_detail=why,
    )
    verify_doc: dict[str, Any] | None = None
    if plan.exclusion and status is None:
        _say(req, f"verifying V1–V5 against {failed_ref}")
        verify_doc = verify_round(ledger, req.session_id, req.round_id, attempt.no)
    elif attempt.status == "running":
        # a narrowing probe has no V gates: its clean run is the probe's answer, not a pending verify
        ledger.set_status(
            "attempt",
            attempt.pk,
            "passed",
            "narrowing probe: exit 0, no fault (a narrowing round has no V gates)",
        )
    final = ledger.attempt(req.session_id, req.round_id, attempt.no)
    return RelaunchResult(
        attempt=final,
        status=final.status,
        verify=verify_doc,
        scene=scene,
        next_step=next_step(req.session_id, plan, final, verify_doc, _fault_kind(ledger, final)),
        exit=outcome.exit_record(),
        notes=notes,
    )


def verdict_lines(doc: Mapping[str, Any]) -> list[str]:
    """The verdict of a re-launch as `skdbg relaunch` prints it (and the TUI's live view shows it):
    the attempt's status, the exit record, the scene, V1–V5 and the next step."""
    a = doc["attempt"]
    ex = doc["exit"]
    detail = a.get("status_detail")
    lines = [f"{a['round_id']}/{a['attempt']}: {doc['status']}" + (f" ({detail})" if detail else "")]
    if ex:
        lines.append(f"exit: status={ex.get('status')} signal={ex.get('signal')} timeout={ex.get('timeout')}")
    lines.append(f"scene: {doc['scene']}")
    verify = doc.get("verify")
    if verify is not None:
        for g in verify.get("verification") or []:
            why = g.get("detail") or g.get("reason") or ""
            lines.append(f"  {g.get('gate')}: {g.get('result')}" + (f" — {why}" if why else ""))
    for note in doc.get("notes") or []:
        lines.append(f"note: {note}")
    lines.append(f"next: {doc['next_step']}")
    return lines


def _fault_kind(ledger: Ledger, attempt: AttemptInfo) -> str | None:
    doc = ledger.snapshot_json(attempt.pk, "analysis.json")
    fault = doc.get("fault") if isinstance(doc, dict) else None
    return str(fault.get("kind")) if isinstance(fault, dict) and fault.get("kind") else None


def _exit_text(o: RunOutcome) -> str:
    if o.timed_out:
        return f"timed out (ended by {o.signal or 'exit'})"
    if o.interrupted:
        return f"interrupted (ended by {o.signal or 'exit'})"
    return f"signal {o.signal}" if o.signal is not None else f"exit {o.status}"


def _forced_status(outcome: RunOutcome, r1: str | None) -> tuple[str | None, str | None]:
    """A status the launch itself decides (None: the scene and verify decide)."""
    if outcome.interrupted:
        return (
            "interrupted",
            f"interrupted: Ctrl-C (or Esc in the TUI) ended the job's process group ({outcome.signal or 'exit'})",
        )
    if outcome.timed_out:
        return "timed_out", f"the runner's timeout ended the job's process group ({outcome.signal or 'exit'})"
    if r1 is not None:
        return "failed", r1
    return None, None


def _document(
    plan: _Plan,
    req: RelaunchRequest,
    src: Materialised,
    scene: Path,
    no: int,
    argv: list[str],
    cwd: Path,
    options: Mapping[str, Any],
    extra: Mapping[str, Any],
    collected: Mapping[str, Any],
    outcome: RunOutcome | None,
) -> dict[str, Any]:
    place_marker(scene, plan.declared.rel, src.marker)
    probe = place_env_probe(scene, plan.env_probe)
    inherited: dict[str, Any] = {}
    if plan.failed_run.get("failing_path") is not None:
        inherited["failing_path"] = plan.failed_run["failing_path"]
    for key in ("rank", "device", "experiment_id"):
        # the same launch setup re-run: the rank and device the failed attempt ran on, unless the new
        # evidence itself says (collect reads a device id from the runtime's fault line)
        if collected.get(key) is None and plan.failed_run.get(key) is not None:
            inherited[key] = plan.failed_run[key]
    doc = run_document(
        collected=collected,
        round_id=req.round_id,
        attempt=no,
        argv=argv,
        cwd=cwd,
        outcome=outcome,
        marker_rel=plan.declared.rel,
        marker_text=src.text,
        options=options,
        source_root=req.source_root,
        env_probe=probe,
        inherited=inherited,
        extra=extra,
    )
    cand = doc["candidate"]
    if not cand.get("source_revision"):
        # not a clean git checkout (e.g. the frozen marker file plus the round's edits): the revision the
        # failed attempt recorded plus this round, and the materialised file's own fingerprint (G4)
        digest = hashlib.sha256(src.text.encode("utf-8")).hexdigest()
        failed_rev = (plan.failed_run.get("candidate") or {}).get("source_revision")
        cand["source_revision"] = f"{failed_rev}+{req.round_id}" if failed_rev else f"sha256:{digest[:16]}"
        cand["source_fingerprint"] = f"sha256:{digest}"
    return doc


def _record_invalid(
    ledger: Ledger,
    req: RelaunchRequest,
    plan: _Plan,
    src: Materialised,
    scene: Path,
    no: int,
    argv: list[str],
    cwd: Path,
    options: Mapping[str, Any],
    extra: Mapping[str, Any],
) -> RelaunchResult:
    """§6.3: not the declared change — the attempt is recorded ``invalid`` and the job never starts."""
    scene.mkdir(parents=True, exist_ok=True)
    doc = _document(plan, req, src, scene, no, argv, cwd, options, extra, {}, None)
    write_run_json(scene, doc)
    why = f"invalid (materialisation mismatch): {src.problem}; the job was not run"
    _say(req, why)
    attempt = freeze(
        ledger,
        req.session_id,
        scene,
        round_id=req.round_id,
        change=f"relaunch of {req.round_id} (not run: the source is not the declared change)",
        status="invalid",
        status_detail=why,
    )
    final = ledger.attempt(req.session_id, req.round_id, attempt.no)
    return RelaunchResult(
        attempt=final,
        status=final.status,
        verify=None,
        scene=scene,
        next_step=next_step(req.session_id, plan, final, None),
        exit={},
        notes=[why],
    )


def next_step(
    session_id: str,
    plan: _Plan,
    attempt: AttemptInfo,
    verify_doc: dict[str, Any] | None,
    fault_kind: str | None = None,
) -> str:
    """What the user does next, as a command line (``fault_kind``: the new attempt's analysis)."""
    rid = attempt.round_id
    ref = f"{rid}/{attempt.key}"
    show = f"skdbg session show {session_id}"
    if attempt.status == "invalid":
        return (
            f"fix the model source so it is exactly the declared change (skdbg codegen candidate writes "
            f"marker.patch), then `skdbg relaunch {session_id} {rid} …` again (the next attempt of {rid})"
        )
    if attempt.status in ("timed_out", "interrupted"):
        return f"retry clean: `skdbg relaunch {session_id} {rid} …` (the next attempt of {rid}); `{show}`"
    if plan.retest:
        return (
            f"a retest of {rid} as first launched: compare it with {plan.source.round_id}/{plan.source.key} in "
            f"`{show}` (a fault that comes and goes is flaky: repeat, or bisect with --repeat)"
        )
    if not plan.exclusion:
        return (
            f"a narrowing probe (no V gates): read its analysis in `{show}` ({ref}), then narrow further or "
            f"propose from it: `skdbg session propose {session_id} {ref}`"
        )
    if attempt.status == "passed":
        checks = (verify_doc or {}).get("verification") or []
        held = ", ".join(str(g.get("gate")) for g in checks if g.get("result") == "passed") or "no gate"
        skipped = [g for g in checks if g.get("result") == "not_run"]
        why_not = "; ".join(
            f"{g.get('gate')} not run: {str(g.get('detail') or '').split(' (')[0]}" for g in skipped
        )
        more = (
            f" — measure V5 with `skdbg relaunch {session_id} {rid} … --perf-runs 3`"
            if any(g.get("gate") == "V5" for g in skipped)
            else ""
        )
        return (
            f"{rid} passed {held}" + (f" ({why_not})" if why_not else "") + ": the exclusion holds"
            f"{more}; hand it to the parent with `skdbg session export {session_id} -o <dir>` ({show})"
        )
    if attempt.status == "failed" and fault_kind == "non_sk":
        return (
            f"the fault persists outside the SuperKernel with the child unfused: an operator bug, not a fusion "
            f"fault (route X3: ordinary operator debugging); `skdbg session show {session_id}` ({ref})"
        )
    if attempt.status == "failed" and verify_doc is not None:
        return (
            f"the candidate did not verify: `skdbg session verify {session_id} {ref}` shows the gate; analyse "
            f"the new failure and propose from it: `skdbg session propose {session_id} {ref}`"
        )
    return f"`{show}`; `skdbg session verify {session_id} {ref}`"


__all__ = [
    "HANDLER_LOG_LEVEL",
    "OPTIONS_ENV",
    "RelaunchError",
    "RelaunchRequest",
    "RelaunchResult",
    "attempt_folder",
    "job_environment",
    "next_step",
    "relaunch",
    "round_edits",
    "sim_argv",
    "verdict_lines",
]
