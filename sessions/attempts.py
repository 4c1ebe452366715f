"""Freezing a scene as an attempt, R7 stale-evidence refusal, tamper checks and revalidation.

Why here and not in the CLI: ``skdbg session add-attempt``, ``skdbg analyze --session`` and the TUI
all freeze the same way. The scene is inventoried by :func:`skdbg.scene.open_scene`, analysed by the
triage engine (the verdict snapshot is ``Analysis.to_json()``), its report rendered by
:mod:`skdbg.triage.report` (the §6.2 section frozen with the attempt, both languages), and the whole
attempt is appended in one transaction. Revalidation reuses :func:`skdbg.triage.verify.verify` on
the *frozen* copies, so a scene edited after freezing can never pass a gate.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg.sessions.blobs import hash_file
from skdbg.sessions.errors import LedgerError, NotFound, StaleEvidenceError, TamperError
from skdbg.sessions.store import AttemptInfo, FrozenArtifact, Ledger, NewAttempt, ProposalInfo, attempt_key

if TYPE_CHECKING:
    from skdbg.triage.context import TriageContext
    from skdbg.triage.model import Analysis
    from skdbg.triage.verify import AttemptFacts

STORAGES = ("copy", "reference")
REPORT_LANGS = ("en", "zh")
#: snapshot name of each frozen report file, per language (English at the top, others in a subfolder)
_MD_FILES = ("FAILURE_SCENE.md", "REPORT_INDEX.md")
_JSON_FILES = ("failure_isolation.json", "evidence_index.json", "analysis.json")


def canonical_sha256(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def report_dir_name(round_id: str, no: int) -> str:
    """The folder name of an attempt's report (also its folder in an export)."""
    return f"{round_id}.{attempt_key(no)}"


# ------------------------------------------------------------------------------------------ status


def attempt_outcome(analysis: Analysis, derived: bool) -> tuple[str, str]:
    """(attempt status, why) from the scene itself; a derived round's clean attempt waits for verify.

    The outcome of the launch is :func:`skdbg.triage.verify.launch_outcome` — the one ``skdbg
    verify`` uses — so the ledger and ``verify`` read a run the same way.
    """
    from skdbg.triage.verify import AttemptFacts, launch_outcome

    facts = AttemptFacts.from_summary(
        analysis.run, analysis.fault.kind, None, fault_phase=analysis.fault.phase
    )
    status, why = launch_outcome(facts)
    if status == "passed" and derived:
        return "running", "awaiting revalidation (skdbg session verify)"
    return status, why


def _marker_sha(artifacts: list[FrozenArtifact]) -> str | None:
    return next((a.sha256 for a in artifacts if a.role == "marker_file"), None)


def frozen_facts(ledger: Ledger, attempt: AttemptInfo) -> AttemptFacts | None:
    """:class:`AttemptFacts` of a frozen attempt (its analysis snapshot + marker hash), in its ledger round."""
    from skdbg.triage.verify import AttemptFacts

    doc = ledger.snapshot_json(attempt.pk, "analysis.json")
    if not isinstance(doc, dict):
        return None
    fault = doc.get("fault") or {}
    return AttemptFacts.from_summary(
        doc.get("run"),
        str(fault.get("kind") or "none"),
        _marker_sha(ledger.artifacts(attempt.pk)),
        round_id=attempt.round_id,
        fault_phase=fault.get("phase"),
    )


def _frozen_text(ledger: Ledger, attempt: AttemptInfo, role: str) -> tuple[str, str] | None:
    """(relpath, text) of the attempt's frozen file of ``role`` (the object store, or the referenced file)."""
    art = next((a for a in ledger.artifacts(attempt.pk) if a.role == role and a.sha256 is not None), None)
    if art is None or art.sha256 is None:
        return None
    path = (
        ledger.objects.path(art.sha256)
        if attempt.storage == "copy"
        else Path(attempt.scene_root or ".") / art.relpath
    )
    try:
        return art.relpath, path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def declared_change_mismatch(
    ledger: Ledger, session_id: str, round_id: str, ctx: TriageContext
) -> str | None:
    """§6.3: why the scene's model source is not the declared change of the exclusion that opened
    ``round_id`` (None when it is, or when nothing declared can be compared)."""
    from skdbg.triage.model import MarkerEdit
    from skdbg.triage.verify import edits_for, materialisation_mismatch

    try:
        prop = ledger.proposal(session_id, round_id)
    except NotFound:
        return None
    if prop.body.get("status") != "proposed" or not prop.body.get("mechanism"):
        return None  # narrowing rounds and blocked proposals declare no marker change
    marker = ctx.marker_file()
    old = _frozen_text(
        ledger, ledger.attempt(session_id, prop.source_round, prop.source_attempt), "marker_file"
    )
    if marker is None or not marker.is_file() or old is None:
        return None
    rel, old_text = old
    edits = [
        MarkerEdit(str(e["file"]), int(e["line"]), str(e["op"]), str(e["text"]))
        for e in prop.body.get("marker_edits") or []
    ]
    new_text = marker.read_text(encoding="utf-8", errors="replace")
    _, why = materialisation_mismatch(old_text, new_text, edits_for(edits, rel), str(prop.body["mechanism"]))
    return why


# ------------------------------------------------------------------------------------------ R7


def check_stale(ledger: Ledger, session_id: str, ctx: TriageContext, pid: int | None) -> None:
    """R7: refuse evidence of another pid, or of an attempt already in the session."""
    from skdbg.triage.verify import PRODUCED_KINDS  # the kinds verify's R7 compares by content

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


# ------------------------------------------------------------------------------------------ freeze


def _freeze_artifacts(ledger: Ledger, ctx: TriageContext, storage: str) -> list[FrozenArtifact]:
    out: list[FrozenArtifact] = []
    seen: set[str] = set()
    items: list[tuple[str, Path, str, str | None, Any]] = [
        (a.kind, a.path, a.relpath, a.pid_label, a) for a in ctx.scene.artifacts
    ]
    marker = ctx.marker_file()
    if marker is not None and marker.is_file():
        # the model source the candidate was launched with (V1 re-reads it from the frozen copy)
        items.append(("marker_file", marker, ctx.relpath(marker), None, None))
    for kind, path, rel, pid_label, art in items:
        if rel in seen:
            continue
        seen.add(rel)
        try:
            st = path.stat()
            digest = ledger.objects.put_file(path) if storage == "copy" else hash_file(path)
        except FileNotFoundError as exc:
            reason = f"missing(unreadable: {exc.strerror})"
            out.append(FrozenArtifact(kind, rel, None, None, None, pid_label, reason))
            continue
        if art is not None:
            art.remember_digest(digest.size, digest.sha256)  # hashed once: the engine and the report reuse it
        out.append(
            FrozenArtifact(kind, rel, digest.sha256, digest.size, _iso(st.st_mtime), pid_label, "present")
        )
    return out


def _iso(ts: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def _report_snapshots(ctx: TriageContext, analysis: Analysis, name: str) -> dict[str, bytes]:
    """The §6.2 report of this attempt in every language, rendered once by skdbg.triage.report."""
    from skdbg.triage.report import write_report

    out: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="skdbg-report-") as tmp:
        for lang in REPORT_LANGS:
            files = write_report(ctx, analysis, Path(tmp) / lang / name, lang=lang)
            for f in files:
                if f.name in _JSON_FILES:
                    if lang == REPORT_LANGS[0]:
                        out[f.name] = f.read_bytes()
                else:
                    out[f.name if lang == REPORT_LANGS[0] else f"{lang}/{f.name}"] = f.read_bytes()
    return out


def add_attempt(
    ledger: Ledger,
    session_id: str,
    scene: str | os.PathLike[str] | None = None,
    *,
    round_id: str | None = None,
    change: str | None = None,
    storage: str = "copy",
    status: str | None = None,
    ctx: TriageContext | None = None,
    analysis: Analysis | None = None,
) -> AttemptInfo:
    """Freeze ``scene`` (or an opened ``ctx``) as the next attempt of ``round_id``.

    The round defaults to the scene's ``run.json`` round id (opened as a base round if new), else
    ``BASE``. Raises :class:`StaleEvidenceError` (R7) before any ledger row is written.
    """
    if storage not in STORAGES:
        raise LedgerError(f"unknown storage {storage!r} (copy, reference)")
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    ledger.session(session_id)
    if ctx is None:
        if scene is None:
            raise LedgerError("add_attempt needs a scene path or an opened context")
        ctx = open_context(scene)
    run = ctx.run
    rid = round_id or (run.round_id if run is not None and run.round_id else "BASE")
    known = {r.round_id: r for r in ledger.rounds(session_id)}
    existing = known.get(rid)
    derived = existing is not None and existing.derived_from is not None
    # hash once: freezing streams every file through SHA-256 (copying it into the store) and caches the
    # digest on the scene's artifacts, which the engine and the R7 check then reuse. Objects stored for
    # an attempt that R7 refuses below are inert: no ledger row cites them.
    artifacts = _freeze_artifacts(ledger, ctx, storage)
    if analysis is None:
        analysis = analyze_context(ctx)
    pid = analysis.scene.pid if analysis.scene.pid is not None else (run.pid if run is not None else None)
    check_stale(ledger, session_id, ctx, pid)
    previous = ledger.attempts(session_id, rid)
    no = previous[-1].no + 1 if previous else 1
    decision = None
    if previous:
        from skdbg.triage.verify import AttemptFacts, diagnostic_rerun

        before = frozen_facts(ledger, previous[-1])
        now_facts = AttemptFacts.from_summary(
            analysis.run,
            analysis.fault.kind,
            _marker_sha(artifacts),
            round_id=rid,
            fault_phase=analysis.fault.phase,
        )
        decision = diagnostic_rerun(before, now_facts) if before is not None else None
    if change is None:
        if not previous and derived:
            d = (existing.derived_from if existing is not None else None) or {}
            change = f"applies proposal {str(d.get('proposal_sha256'))[:12]} of {d.get('round')}/{d.get('attempt')}"
        elif not previous:
            change = "the candidate as launched (base round)"
        elif decision is not None:
            from skdbg.triage.verify import show_options

            change = f"diagnostic: adds {show_options(decision.added)} (candidate unchanged)"
        else:
            change = "not declared"
    if decision is not None:
        # §3.9/§6.3: same candidate + debug options = a diagnostic attempt of the same round (R4 when it passes)
        auto_status, why = decision.status, decision.why
    else:
        auto_status, why = attempt_outcome(analysis, derived)
    mismatch = declared_change_mismatch(ledger, session_id, rid, ctx) if derived else None
    if mismatch is not None:
        # §6.3: not the round's declared change — invalid, whatever the run did (also under debug options)
        auto_status, why = "invalid", f"invalid (materialisation mismatch): {mismatch}"
    final_status = status or auto_status
    snapshots = _report_snapshots(ctx, analysis, report_dir_name(rid, no))
    new = NewAttempt(
        change=change,
        scene_root=str(ctx.root),
        pid=pid,
        storage=storage,
        artifacts=artifacts,
        status=final_status,
        status_detail=why if status is None else "set by the user",
        snapshots=snapshots,
        round_status="failed" if final_status in ("failed", "timed_out") else None,
    )
    if existing is None:
        # only once nothing can refuse the attempt any more; a concurrent first attempt may have opened it
        ledger.open_round(session_id, rid, exist_ok=True)
    return ledger.record_attempt(session_id, rid, new)


# ------------------------------------------------------------------------------------------ integrity


def check_attempt(ledger: Ledger, attempt: AttemptInfo) -> None:
    """Re-hash every frozen file of ``attempt``; :class:`TamperError` names the first that changed."""
    for art in ledger.artifacts(attempt.pk):
        if art.sha256 is None:
            continue
        if attempt.storage == "copy":
            path = ledger.objects.path(art.sha256)
        elif attempt.storage == "reference":
            path = Path(attempt.scene_root or ".") / art.relpath
        else:
            continue
        what = f"{attempt.round_id}/{attempt.key}: {art.relpath}"
        try:
            digest = hash_file(path)
        except OSError as exc:
            raise TamperError(
                f"{what}: {path} is gone ({exc.strerror}); the frozen evidence was removed"
            ) from exc
        if digest.sha256 != art.sha256:
            raise TamperError(
                f"{what}: {path} was modified after freezing (sha256 {digest.sha256[:16]}…, frozen {art.sha256[:16]}…)"
            )
    for name in ledger.snapshot_names(attempt.pk):
        ledger.snapshot(attempt.pk, name)


@contextmanager
def materialised(ledger: Ledger, attempt: AttemptInfo) -> Iterator[Path]:
    """The attempt's frozen scene as a folder, after a tamper check (a temp copy for copy storage)."""
    check_attempt(ledger, attempt)
    if attempt.storage == "reference":
        yield Path(attempt.scene_root or ".")
        return
    if attempt.storage != "copy":
        raise LedgerError(
            f"{attempt.round_id}/{attempt.key}: the evidence files are not held by this ledger (imported "
            "from an export, which cites paths and hashes only)"
        )
    with tempfile.TemporaryDirectory(prefix=f"skdbg-{attempt.key}-") as tmp:
        root = Path(tmp) / "scene"
        for art in ledger.artifacts(attempt.pk):
            if art.sha256 is None:
                continue
            dest = root / art.relpath
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ledger.objects.path(art.sha256), dest)
        yield root


# ------------------------------------------------------------------------------------------ verify


def verify_round(ledger: Ledger, session_id: str, round_id: str, no: int | None = None) -> dict[str, Any]:
    """Revalidate the round's attempt (newest by default) against the attempt its proposal came from.

    Records V1–V5 and the implied moves: attempt passed/failed/invalid, round failed or
    passed_gates(V1..Vk), proposal applied → verified (passed) or blocked (failed). An attempt that
    re-runs the previous attempt of its round with only debug options added is a diagnostic attempt
    (§3.9): it is compared with that attempt, its status and R4 come from the same decision
    :func:`add_attempt` used, and the proposal does not move. Returns the ``skdbg.verify/1`` document.
    """
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context
    from skdbg.triage.verify import diagnostic_rerun, verify

    target = ledger.attempt(session_id, round_id, no)
    rid = target.round_id
    earlier = [a for a in ledger.attempts(session_id, rid) if a.no < target.no]
    decision = None
    if earlier:
        before, after = frozen_facts(ledger, earlier[-1]), frozen_facts(ledger, target)
        decision = diagnostic_rerun(before, after) if before is not None and after is not None else None
    prop: ProposalInfo | None = None
    if decision is not None:
        source = earlier[-1]
    else:
        try:
            prop = ledger.proposal(session_id, round_id)
        except NotFound as exc:
            raise NotFound(
                f"{exc}; and {rid}/{target.key} is not a diagnostic re-run of an earlier attempt of the round "
                "(same candidate, only debug options added): nothing to revalidate"
            ) from exc
        source = ledger.attempt(session_id, prop.source_round, prop.source_attempt)
    with materialised(ledger, source) as old_dir, materialised(ledger, target) as new_dir:
        old_ctx, new_ctx = open_context(old_dir), open_context(new_dir)
        analysis = analyze_context(old_ctx)
        result = verify(
            old_ctx,
            new_ctx,
            analysis.proposal,
            old_analysis=analysis,
            round_ids=(source.round_id, rid),
            declared_mismatch=declared_change_mismatch(ledger, session_id, rid, new_ctx)
            if decision
            else None,
        )
    doc = result.to_json()
    if prop is not None and canonical_sha256(analysis.proposal.to_json()) != prop.sha256:
        doc["notes"] = [
            *doc["notes"],
            "the proposal recomputed from the frozen scene differs from the recorded one",
        ]
    a_status = result.attempt.status
    current = ledger.status("attempt", target.pk)
    attempt_move = a_status if a_status in ledger.allowed("attempt", current) else None
    rnd = ledger.round(session_id, round_id)
    r_status = result.round_status if result.round_status != "open" else None
    round_move = (rnd.pk, r_status) if r_status and r_status in ledger.allowed("round", rnd.status) else None
    prop_move: tuple[int, str] | None = None
    if prop is not None and a_status in ("passed", "failed", "timed_out"):
        wanted = "verified" if a_status == "passed" else "blocked"
        if prop.status == "proposed":
            ledger.set_status("proposal", prop.pk, "applied", f"{round_id}/{target.key} launched")
        if wanted in ledger.allowed("proposal", ledger.status("proposal", prop.pk)):
            prop_move = (prop.pk, wanted)
    ledger.record_gates(
        target,
        [(g.gate, g.result, g.detail) for g in result.verification],
        attempt_status=attempt_move,
        round_status=round_move,
        proposal_status=prop_move,
        detail="skdbg session verify",
        snapshots={"verify.json": (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()},
    )
    return doc


__all__ = [
    "REPORT_LANGS",
    "STORAGES",
    "add_attempt",
    "attempt_outcome",
    "canonical_sha256",
    "check_attempt",
    "check_stale",
    "declared_change_mismatch",
    "frozen_facts",
    "materialised",
    "propose",
    "report_dir_name",
    "verify_round",
]


def propose(
    ledger: Ledger, session_id: str, round_id: str, no: int | None = None, *, kind: str = "exclusion"
) -> tuple[str, str]:
    """Record the frozen analysis's proposal of an attempt and open the round it defines.

    Exclusion (``-X<n>``) needs a proposal (``proposed`` or ``blocked``); narrowing (``-N<n>``) takes
    the analysis's next steps (D1–D3/N1) as its declared change. Returns (new round id, status).
    """
    if kind not in ("exclusion", "narrowing"):
        raise LedgerError(f"unknown round kind {kind!r} (exclusion, narrowing)")
    source = ledger.attempt(session_id, round_id, no)
    analysis = ledger.snapshot_json(source.pk, "analysis.json")
    if analysis is None:
        raise LedgerError(f"{round_id}/{source.key} has no frozen analysis to take a proposal from")
    body: dict[str, Any] = analysis["proposal"]
    if kind == "exclusion":
        if body.get("status") not in ("proposed", "blocked"):
            raise LedgerError(
                f"{round_id}/{source.key}: the analysis proposes no exclusion ({body.get('reason') or 'no suspect'}); "
                "open a narrowing round instead (--narrowing)"
            )
        status = str(body["status"])
    else:
        body = {"next_steps": analysis.get("next_steps", []), "routes": analysis.get("routes", [])}
        status = "proposed"
    info = ledger.add_proposal(session_id, source, body, canonical_sha256(body), kind=kind, status=status)
    return info.round_id, info.status
