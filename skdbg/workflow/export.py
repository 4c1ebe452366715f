"""Export a session as the §6.2 failure-scene report folder.

Why in the workflow layer: the parent controller reads Markdown (``REPORT.md`` failure index,
``EXPERIMENT_REPORT.md`` with one subsection per attempt) rendered with the triage report templates,
and each failed attempt's frozen section — eight items plus the nine-field record — is bound verbatim
(it was rendered by :mod:`skdbg.triage.report` when the attempt was frozen). The ledger hands out the
``session.json`` document and the files (:func:`skdbg.sessions.exchange.session_document`); this
module renders and writes them by the output-folder convention of :mod:`skdbg.atomic`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from skdbg.atomic import ensure_fresh_dir, write_tree
from skdbg.sessions.attempts import REPORT_LANGS, report_dir_name
from skdbg.sessions.errors import LedgerError
from skdbg.sessions.exchange import session_document
from skdbg.sessions.store import Ledger

#: attempt statuses whose frozen failure section is bound into the experiment report
FAILED = ("failed", "timed_out", "interrupted", "invalid")


def _demote(md: str, levels: int = 3) -> str:
    """Headings of a bound section one level under the attempt heading (text otherwise verbatim)."""
    out, fence = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("#"):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def _render(doc: dict[str, Any], files: dict[str, bytes], lang: str) -> dict[str, str]:
    from skdbg.triage.report import LABELS, environment  # jinja2: only when exporting

    labels = LABELS[lang]
    rows: list[str] = []
    for r in doc["rounds"]:
        for a in r["attempts"]:
            a["n_artifacts"] = len(a["artifacts"])
            a["section"] = None
            if a["status"] not in FAILED:
                continue
            folder = report_dir_name(r["round_id"], a["no"])
            scene = files.get(f"{folder}/FAILURE_SCENE.md")
            if scene is not None:
                a["section"] = _demote(scene.decode("utf-8"))
            index = files.get(f"{folder}/REPORT_INDEX.md")
            if index is not None:
                lines = index.decode("utf-8").splitlines()
                sep = next((i for i, line in enumerate(lines) if line.startswith("|---")), None)
                if sep is not None:
                    rows += [line for line in lines[sep + 1 :] if line.startswith("|")]
    env = environment()
    ctx = {
        "L": labels,
        "session": doc["session"],
        "rounds": doc["rounds"],
        "notes": doc["notes"],
        "rows": rows,
    }
    return {
        "EXPERIMENT_REPORT.md": env.get_template("session_report.md.j2").render(**ctx),
        "REPORT.md": env.get_template("session_index.md.j2").render(**ctx),
    }


#: how the export folder is named in the refusal messages
EXPORT_WHAT = "export folder"


def export_session(
    ledger: Ledger,
    session_id: str,
    out_dir: str | os.PathLike[str],
    *,
    lang: str = "en",
    force: bool = False,
) -> list[Path]:
    """Write the export folder by the output-folder convention of :mod:`skdbg.atomic` (whole or
    nothing; a non-empty ``out_dir`` is refused unless ``force`` replaces it, never the ledger's own
    folder)."""
    if lang not in REPORT_LANGS:
        raise LedgerError(f"unknown report language {lang!r} (en, zh)")
    out = Path(out_dir).resolve()
    keep = [ledger.home]
    ensure_fresh_dir(out, force=force, what=EXPORT_WHAT, inputs=keep)
    doc, files = session_document(ledger, session_id, lang)
    texts = _render(json.loads(json.dumps(doc)), files, lang)
    tree: dict[str, str | bytes] = dict(texts)
    tree["session.json"] = json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    tree.update(sorted(files.items()))
    return write_tree(out, tree, force=force, what=EXPORT_WHAT, inputs=keep)


__all__ = ["FAILED", "export_session"]
