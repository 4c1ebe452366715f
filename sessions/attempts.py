"""The ledger's own reads of a frozen attempt: tamper checks, the frozen scene as a folder, and the
proposal an attempt's frozen analysis declares.

Why only this: the ledger stores bytes and JSON. Freezing a scene (analysis, report rendering, the R7
stale-evidence refusal) and revalidation (V1–V5) run triage and live in :mod:`skdbg.workflow`, one
layer up; everything here reads what was frozen and never analyses anything itself.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skdbg.sessions.blobs import hash_file
from skdbg.sessions.errors import LedgerError, TamperError
from skdbg.sessions.store import AttemptInfo, FrozenArtifact, Ledger, attempt_key

STORAGES = ("copy", "reference")
REPORT_LANGS = ("en", "zh")


def canonical_sha256(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def report_dir_name(round_id: str, no: int) -> str:
    """The folder name of an attempt's report (also its folder in an export)."""
    return f"{round_id}.{attempt_key(no)}"


def marker_sha(artifacts: list[FrozenArtifact]) -> str | None:
    """SHA-256 of the model source frozen with an attempt (role ``marker_file``), if any."""
    return next((a.sha256 for a in artifacts if a.role == "marker_file"), None)


def frozen_text(ledger: Ledger, attempt: AttemptInfo, role: str) -> tuple[str, str] | None:
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


__all__ = [
    "REPORT_LANGS",
    "STORAGES",
    "canonical_sha256",
    "check_attempt",
    "frozen_text",
    "marker_sha",
    "materialised",
    "propose",
    "report_dir_name",
]


def propose(
    ledger: Ledger,
    session_id: str,
    round_id: str,
    no: int | None = None,
    *,
    kind: str = "exclusion",
    edited: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """Record the frozen analysis's proposal of an attempt and open the round it defines.

    Exclusion (``-X<n>``) needs a proposal (``proposed`` or ``blocked``); narrowing (``-N<n>``) takes
    the analysis's next steps (D1–D3/N1) as its declared change. ``edited``: the proposal as the
    user edited it (the TUI's Proposal screen) instead of the one the analysis froze — recorded the
    same way, under the same checks. Returns (new round id, status).
    """
    if kind not in ("exclusion", "narrowing"):
        raise LedgerError(f"unknown round kind {kind!r} (exclusion, narrowing)")
    if edited is not None and kind != "exclusion":
        raise LedgerError("an edited proposal opens an exclusion round (a narrowing round has no cut)")
    source = ledger.attempt(session_id, round_id, no)
    analysis = ledger.snapshot_json(source.pk, "analysis.json")
    if analysis is None:
        raise LedgerError(f"{round_id}/{source.key} has no frozen analysis to take a proposal from")
    body: dict[str, Any] = analysis["proposal"] if edited is None else edited
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
