"""The ledger side of a session export (the §6.2 failure-scene report folder): the ``session.json``
document and the attempt files it lists, and importing such a folder back.

Why split from the rendering: the Markdown of the export (``REPORT.md``, ``EXPERIMENT_REPORT.md``) is
rendered with the triage report templates by :func:`skdbg.workflow.export_session`; the ledger only
hands out its bytes and JSON. ``session.json`` carries the ledger itself so :func:`import_session`
can rebuild it; export → import → export is byte-identical. Evidence files are cited by relative path
and SHA-256, never copied (§6.2 "no large log copies").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from skdbg.sessions.attempts import REPORT_LANGS, check_attempt, report_dir_name
from skdbg.sessions.blobs import hash_bytes
from skdbg.sessions.errors import LedgerError, TamperError
from skdbg.sessions.store import Ledger

EXPORT_SCHEMA = "skdbg.session_export/1"


def _export_name(name: str, lang: str) -> str:
    """Where a snapshot goes in an attempt folder: ``lang``'s Markdown at the top, others in ``<lang>/``."""
    first = REPORT_LANGS[0]
    if lang == first:
        return name
    if name.startswith(f"{lang}/"):
        return name[len(lang) + 1 :]
    if name.endswith(".md") and "/" not in name:
        return f"{first}/{name}"
    return name


def session_document(ledger: Ledger, session_id: str, lang: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """``session.json`` of the export and the attempt files it lists (path → bytes), tamper-checked."""
    info = ledger.session(session_id)
    files: dict[str, bytes] = {}
    rounds: list[dict[str, Any]] = []
    for r in ledger.rounds(session_id):
        attempts = []
        for a in ledger.attempts(session_id, r.round_id):
            check_attempt(ledger, a)
            folder = report_dir_name(r.round_id, a.no)
            snaps = []
            for name in ledger.snapshot_names(a.pk):
                data = ledger.snapshot(a.pk, name) or b""
                rel = f"{folder}/{_export_name(name, lang)}"
                files[rel] = data
                snaps.append({"name": name, "file": rel, "sha256": hash_bytes(data).sha256})
            attempts.append(
                {
                    "no": a.no,
                    "key": a.key,
                    "change": a.change,
                    "scene_root": a.scene_root,
                    "pid": a.pid,
                    "created": a.created,
                    "status": a.status,
                    "history": ledger.status_history("attempt", a.pk),
                    "artifacts": [x.to_json() for x in ledger.artifacts(a.pk)],
                    "gates": ledger.gates(a.pk),
                    "snapshots": snaps,
                }
            )
        rounds.append(r.to_json() | {"history": ledger.status_history("round", r.pk), "attempts": attempts})
    proposals = [
        {
            "source_round": p.source_round,
            "source_attempt": p.source_attempt,
            "round_id": p.round_id,
            "sha256": p.sha256,
            "created": p.created,
            "history": ledger.status_history("proposal", p.pk),
            "proposal": p.body,
        }
        for p in ledger.proposals(session_id)
    ]
    doc = {
        "schema": EXPORT_SCHEMA,
        "lang": lang,
        "session": {"id": info.id, "name": info.name, "created": info.created},
        "rounds": rounds,
        "proposals": proposals,
        "notes": ledger.notes(session_id),
        "aliases": ledger.aliases(session_id),
    }
    return doc, files


# ------------------------------------------------------------------------------------------ import


def _read_doc(folder: Path) -> dict[str, Any]:
    path = folder / "session.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LedgerError(
            f"{path}: cannot read the export ({exc.strerror}); expected a skdbg session export folder"
        ) from exc
    except json.JSONDecodeError as exc:
        raise LedgerError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
    if not isinstance(doc, dict) or doc.get("schema") != EXPORT_SCHEMA:
        raise LedgerError(
            f"{path}: expected schema {EXPORT_SCHEMA!r}, got {doc.get('schema') if isinstance(doc, dict) else doc!r}"
        )
    return doc


def import_session(ledger: Ledger, folder: str | os.PathLike[str]) -> str:
    """Rebuild a session from an export folder (one transaction); returns its id.

    Every attempt file is checked against the SHA-256 in ``session.json`` first (tamper → error naming
    the file); statuses are replayed through the store's forward-only rule; the evidence itself is
    not held (storage ``none``: the export cites paths and hashes only).
    """
    root = Path(folder)
    doc = _read_doc(root)
    try:
        blobs: dict[str, bytes] = {}
        for r in doc["rounds"]:
            for a in r["attempts"]:
                for s in a["snapshots"]:
                    path = root / s["file"]
                    try:
                        data = path.read_bytes()
                    except OSError as exc:
                        raise TamperError(
                            f"{path}: listed in session.json but unreadable ({exc.strerror})"
                        ) from exc
                    if hash_bytes(data).sha256 != s["sha256"]:
                        raise TamperError(
                            f"{path}: does not match its SHA-256 in session.json (edited after export)"
                        )
                    blobs[s["sha256"]] = data
        sid = str(doc["session"]["id"])
        if ledger._session_rows(sid):
            raise LedgerError(f"session {sid} already exists in {ledger.db_path}; sessions are immutable")
        digests = dict(zip(blobs, ledger.objects.put_many(list(blobs.values())), strict=True))
        proposals = {p["round_id"]: p for p in doc["proposals"]}
        with ledger.write() as db:
            s = doc["session"]
            db.execute(
                "INSERT INTO sessions (id, name, created) VALUES (?, ?, ?)", (sid, s["name"], s["created"])
            )
            attempt_pks: dict[tuple[str, int], int] = {}
            for r in doc["rounds"]:
                d = r["derived_from"] or {}
                d_no = int(str(d["attempt"]).rsplit("-", 1)[1]) if d else None
                cur = db.execute(
                    "INSERT INTO rounds (session_id, round_id, kind, derived_round, derived_attempt, derived_proposal, "
                    "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        sid,
                        r["round_id"],
                        r["kind"],
                        d.get("round"),
                        d_no,
                        d.get("proposal_sha256"),
                        r["created"],
                    ),
                )
                rpk = int(cur.lastrowid or 0)
                for h in r["history"]:
                    ledger.insert_status(db, "round", rpk, h["status"], h["detail"], h["created"])
                if r["round_id"] in proposals:
                    p = proposals[r["round_id"]]
                    src = attempt_pks[(p["source_round"], int(p["source_attempt"]))]
                    cur = db.execute(
                        "INSERT INTO proposals (attempt_pk, sha256, body, round_pk, created) VALUES (?, ?, ?, ?, ?)",
                        (
                            src,
                            p["sha256"],
                            json.dumps(p["proposal"], sort_keys=True, ensure_ascii=False),
                            rpk,
                            p["created"],
                        ),
                    )
                    ppk = int(cur.lastrowid or 0)
                    for h in p["history"]:
                        ledger.insert_status(db, "proposal", ppk, h["status"], h["detail"], h["created"])
                for a in r["attempts"]:
                    cur = db.execute(
                        "INSERT INTO attempts (round_pk, no, change, scene_root, pid, storage, n_artifacts, created) "
                        "VALUES (?, ?, ?, ?, ?, 'none', ?, ?)",
                        (
                            rpk,
                            a["no"],
                            a["change"],
                            a["scene_root"],
                            a["pid"],
                            len(a["artifacts"]),
                            a["created"],
                        ),
                    )
                    apk = int(cur.lastrowid or 0)
                    attempt_pks[(r["round_id"], int(a["no"]))] = apk
                    db.executemany(
                        "INSERT INTO artifacts (attempt_pk, role, relpath, sha256, size, mtime, pid, status) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            (
                                apk,
                                x["role"],
                                x["relpath"],
                                x["sha256"],
                                x["size"],
                                x["mtime"],
                                x["pid"],
                                x["status"],
                            )
                            for x in a["artifacts"]
                        ],
                    )
                    for snap in a["snapshots"]:
                        dg = digests[snap["sha256"]]
                        db.execute(
                            "INSERT OR IGNORE INTO blobs (sha256, size) VALUES (?, ?)", (dg.sha256, dg.size)
                        )
                        db.execute(
                            "INSERT INTO snapshots (attempt_pk, name, sha256) VALUES (?, ?, ?)",
                            (apk, snap["name"], dg.sha256),
                        )
                    db.executemany(
                        "INSERT INTO gate_results (attempt_pk, gate, result, detail, created) VALUES (?, ?, ?, ?, ?)",
                        [(apk, g["gate"], g["result"], g["detail"], g["created"]) for g in a["gates"]],
                    )
                    for h in a["history"]:
                        ledger.insert_status(db, "attempt", apk, h["status"], h["detail"], h["created"])
            for alias, round_id in doc.get("aliases", {}).items():
                db.execute(
                    "INSERT INTO round_aliases (round_pk, alias, created) "
                    "SELECT pk, ?, ? FROM rounds WHERE session_id = ? AND round_id = ?",
                    (alias, doc["session"]["created"], sid, round_id),
                )
            for n in doc["notes"]:
                db.execute(
                    "INSERT INTO notes (session_id, round_id, attempt_no, text, created) VALUES (?, ?, ?, ?, ?)",
                    (sid, n["round_id"], n["attempt_no"], n["text"], n["created"]),
                )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise LedgerError(
            f"{root / 'session.json'}: not a complete skdbg session export ({type(exc).__name__}: {exc})"
        ) from exc
    return sid


__all__ = ["EXPORT_SCHEMA", "import_session", "session_document"]
