"""Freeze a scene as the next attempt of a round: inventory → analyse → R7 → status → one transaction.

Why one function: ``skdbg session add-attempt``, ``skdbg analyze --session``, ``skdbg relaunch`` and
``skdbg bisect`` all freeze the same way. The scene is inventoried by :func:`skdbg.scene.open_scene`
(through the triage context), analysed by the triage engine (the verdict snapshot is
``Analysis.to_json()``), its report rendered by :mod:`skdbg.triage.report` (the §6.2 section frozen
with the attempt, both languages), and the ledger (:mod:`skdbg.sessions`) records the bytes and JSON
in one transaction.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from skdbg.atomic import file_bytes
from skdbg.sessions.attempts import REPORT_LANGS, STORAGES, marker_sha, report_dir_name
from skdbg.sessions.blobs import CHUNK, Digest, hash_file
from skdbg.sessions.errors import LedgerError
from skdbg.sessions.store import AttemptInfo, FrozenArtifact, Ledger, NewAttempt
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis
from skdbg.triage.verify import AttemptFacts, diagnostic_rerun, show_options
from skdbg.workflow.facts import attempt_outcome, declared_change_mismatch, frozen_facts
from skdbg.workflow.stale import check_stale

#: snapshot name of each frozen report file, per language (English at the top, others in a subfolder)
_JSON_FILES = ("failure_isolation.json", "evidence_index.json", "analysis.json")


def analyze_scene(scene: str | os.PathLike[str], **open_kwargs: Any) -> tuple[TriageContext, Analysis]:
    """Open ``scene`` (keyword arguments as :func:`skdbg.triage.context.open_context`) and analyse it."""
    ctx = open_context(scene, **open_kwargs)
    return ctx, analyze_context(ctx)


def _freeze_artifacts(ledger: Ledger, ctx: TriageContext, storage: str) -> list[FrozenArtifact]:
    out: list[FrozenArtifact] = []
    seen: set[str] = set()
    items: list[tuple[str, Path, str, str | None, Any]] = [
        (a.kind, a.path, a.relpath, a.pid_label, a) for a in ctx.scene.artifacts
    ]
    marker = ctx.marker_file()
    if marker is not None and marker.is_file():
        # the model source the candidate was launched with (V1 re-reads it from the frozen copy); the
        # analysis listed it for G5 (hashed there: reused, not read again)
        hashed = next((a for a in ctx.input_artifacts if a.kind == "marker_file"), None)
        items.append(("marker_file", marker, ctx.relpath(marker), None, hashed))
    # each artifact once, by its relative path: its stat (a missing one is recorded as missing), then
    # all of them stored together (one flush of their copies: sessions/blobs.py)
    stats: list[tuple[str, Path, str, str | None, Any, os.stat_result | FileNotFoundError]] = []
    for kind, path, rel, pid_label, art in items:
        if rel in seen:
            continue
        seen.add(rel)
        try:
            st: os.stat_result | FileNotFoundError = path.stat()
        except FileNotFoundError as exc:
            st = exc
        stats.append((kind, path, rel, pid_label, art, st))
    listed = [(path, art) for _, path, _, _, art, st in stats if not isinstance(st, FileNotFoundError)]
    present = [path for path, _ in listed]
    if storage == "copy":
        # what the analysis hashed already: content the store holds is then read, not copied again
        known = [None if art is None or (d := art.known_digest()) is None else d[1] for _, art in listed]
        stored = iter(ledger.objects.put_files(present, known))
    else:
        stored = iter(_hash_each(present))
    for kind, _path, rel, pid_label, art, st in stats:
        digest = st if isinstance(st, FileNotFoundError) else next(stored)
        if isinstance(digest, FileNotFoundError):
            reason = f"missing(unreadable: {digest.strerror})"
            out.append(FrozenArtifact(kind, rel, None, None, None, pid_label, reason))
            continue
        assert not isinstance(st, FileNotFoundError)
        if art is not None:
            art.remember_digest(digest.size, digest.sha256)  # hashed once: the engine and the report reuse it
        out.append(
            FrozenArtifact(kind, rel, digest.sha256, digest.size, _iso(st.st_mtime), pid_label, "present")
        )
    return out


def _hash_each(paths: list[Path]) -> list[Digest | FileNotFoundError]:
    """:func:`hash_file` of each of ``paths`` (storage ``reference``: nothing is copied), or the
    FileNotFoundError of one that vanished since it was listed."""
    out: list[Digest | FileNotFoundError] = []
    buf = bytearray(CHUNK)
    for path in paths:
        try:
            out.append(hash_file(path, buf))
        except FileNotFoundError as exc:
            out.append(exc)
    return out


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def _report_snapshots(ctx: TriageContext, analysis: Analysis, name: str) -> dict[str, bytes]:
    """The §6.2 report of this attempt in every language, rendered by skdbg.triage.report (what no
    language changes made once), with its pictures (timeline.svg, scope-graph.svg: drawn once, linked
    from each language's index): the bytes ``skdbg report`` writes into each language's folder named
    ``name``, the JSON documents once (the same in every language)."""
    from skdbg.pictures.export import faulting_instance, report_pictures
    from skdbg.triage.report import report_files  # jinja2: only when a report is rendered

    out: dict[str, bytes] = {}
    pictures = report_pictures(ctx, faulting_instance(ctx), analysis)
    rendered = report_files(ctx, analysis, report_dir=name, langs=REPORT_LANGS, pictures=pictures)
    for lang in REPORT_LANGS:
        for file_name, text in rendered[lang].items():
            if file_name in _JSON_FILES:
                if lang == REPORT_LANGS[0]:
                    out[file_name] = file_bytes(text)
            else:
                out[file_name if lang == REPORT_LANGS[0] else f"{lang}/{file_name}"] = file_bytes(text)
    return out


def freeze(
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
    status_detail: str | None = None,
) -> AttemptInfo:
    """Freeze ``scene`` (or an opened ``ctx``) as the next attempt of ``round_id``.

    The round defaults to the scene's ``run.json`` round id (opened as a base round if new), else
    ``BASE``. ``status`` overrides the status read from the scene (``status_detail`` says why; by
    default "set by the user"). Raises :class:`~skdbg.sessions.errors.StaleEvidenceError` (R7) before any ledger row is
    written.
    """
    if storage not in STORAGES:
        raise LedgerError(f"unknown storage {storage!r} (copy, reference)")
    ledger.session(session_id)
    if ctx is None:
        if scene is None:
            raise LedgerError("freezing an attempt needs a scene path or an opened context")
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
        before = frozen_facts(ledger, previous[-1])
        now_facts = AttemptFacts.from_summary(
            analysis.run,
            analysis.fault.kind,
            marker_sha(artifacts),
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
        status_detail=why if status is None else (status_detail or "set by the user"),
        snapshots=snapshots,
        round_status="failed" if final_status in ("failed", "timed_out") else None,
    )
    if existing is None:
        # only once nothing can refuse the attempt any more; a concurrent first attempt may have opened it
        ledger.open_round(session_id, rid, exist_ok=True)
    return ledger.record_attempt(session_id, rid, new)


__all__ = ["analyze_scene", "freeze"]
