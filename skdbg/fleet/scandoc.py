"""Read a ``skdbg.scan/1`` document back, and say what opening one of its ranks gives.

Why here (headless): ``skdbg scan --open`` and ``skdbg tui --scan scan.json`` both hand a scan document to
the TUI's Ranks screen. A document re-read from disk may be hand-edited, truncated or from another
version: it is checked once, here, with a message naming the file and the field (exit 3), so the screen
only ever draws a well-formed document. What a rank folder can be opened as (a full scene, plogs only,
nothing) is derived from the scan's own ``evidence``/``gate`` fields, never guessed again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skdbg.fleet.report import SCHEMA
from skdbg.parsers.common import ParseError

#: keys every rank object must carry (the Ranks screen reads them all)
RANK_KEYS = (
    "rank",
    "status",
    "folder",
    "pid",
    "first_error",
    "fault_at",
    "fault_kind",
    "error_class",
    "error_code",
    "sk_entry",
    "scope",
    "child",
    "cores",
    "evidence",
    "gate",
    "follower_lines",
    "reason",
)
#: top-level keys of the document the Ranks screen reads
DOC_KEYS = (
    "schema",
    "skew_ms",
    "counts",
    "first_failing",
    "followers",
    "groups",
    "no_evidence",
    "unreadable",
    "ranks",
)


def _need(cond: bool, path: str, field: str, expected: str) -> None:
    if not cond:
        raise ParseError(path, f"{expected} at {field} (a skdbg scan --format json / scan.json document)")


def check_scan_doc(doc: Any, path: str = "<scan>") -> dict[str, Any]:
    """``doc`` if it is a well-formed ``skdbg.scan/1`` document, else :class:`ParseError` naming the field."""
    _need(isinstance(doc, dict), path, "the top level", "a JSON object")
    _need(doc.get("schema") == SCHEMA, path, "schema", f'"{SCHEMA}"')
    for key in DOC_KEYS:
        _need(key in doc, path, key, "a value")
    _need(isinstance(doc["skew_ms"], (int, float)), path, "skew_ms", "a number")
    ranks = doc["ranks"]
    _need(isinstance(ranks, list), path, "ranks", "a list")
    n = len(ranks)
    for i, r in enumerate(ranks):
        _need(isinstance(r, dict), path, f"ranks[{i}]", "an object")
        for key in RANK_KEYS:
            _need(key in r, path, f"ranks[{i}].{key}", "a value")
        _need(isinstance(r["folder"], str) and bool(r["folder"]), path, f"ranks[{i}].folder", "a folder path")
        _need(r["pid"] is None or _is_int(r["pid"]), path, f"ranks[{i}].pid", "an integer or null")
        _need(r["rank"] is None or _is_int(r["rank"]), path, f"ranks[{i}].rank", "an integer or null")
        _need(isinstance(r["follower_lines"], list), path, f"ranks[{i}].follower_lines", "a list")
        for j, c in enumerate(r["follower_lines"]):
            _need(
                isinstance(c, dict) and isinstance(c.get("at"), str) and isinstance(c.get("pattern"), str),
                path,
                f"ranks[{i}].follower_lines[{j}]",
                "an object with at and pattern",
            )

    def index(v: Any, field: str) -> None:
        _need(_is_int(v) and 0 <= v < n, path, field, f"an index into ranks (0..{n - 1})")

    first = doc["first_failing"]
    if first is not None:
        _need(isinstance(first, dict), path, "first_failing", "an object or null")
        index(first.get("index"), "first_failing.index")
        _need(isinstance(first.get("tie", []), list), path, "first_failing.tie", "a list")
    for key in ("followers", "no_evidence"):
        _need(isinstance(doc[key], list), path, key, "a list")
        for k, v in enumerate(doc[key]):
            index(v, f"{key}[{k}]")
    _need(isinstance(doc["groups"], list), path, "groups", "a list")
    for k, g in enumerate(doc["groups"]):
        _need(isinstance(g, dict), path, f"groups[{k}]", "an object")
        _need(isinstance(g.get("key"), list), path, f"groups[{k}].key", "a list")
        _need(isinstance(g.get("indices"), list), path, f"groups[{k}].indices", "a list")
        for m, v in enumerate(g["indices"]):
            index(v, f"groups[{k}].indices[{m}]")
    _need(isinstance(doc["unreadable"], list), path, "unreadable", "a list")
    for k, u in enumerate(doc["unreadable"]):
        _need(isinstance(u, dict) and "folder" in u and "reason" in u, path, f"unreadable[{k}]", "an object")
        if u.get("index") is not None:
            index(u["index"], f"unreadable[{k}].index")
    _need(isinstance(doc["counts"], dict), path, "counts", "an object")
    checked: dict[str, Any] = doc
    return checked


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def load_scan_doc(path: Path) -> dict[str, Any]:
    """Read and check ``scan.json`` (``skdbg scan -o DIR`` or ``--format json``); a folder means its
    ``scan.json``. Raises :class:`ParseError` (file and field named) for anything else."""
    p = path / "scan.json" if path.is_dir() else path
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ParseError(
            str(p), "a scan.json file (skdbg scan -o DIR writes one; path does not exist)"
        ) from exc
    except (OSError, UnicodeError) as exc:
        raise ParseError(str(p), f"a readable UTF-8 scan.json file ({exc})") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(str(p), f"JSON ({exc.msg})", line=exc.lineno) from exc
    return check_scan_doc(doc, str(p))


def rank_name(r: dict[str, Any]) -> str:
    """How the screens name a rank: ``rank 17``, else its folder and pid."""
    if r["rank"] is not None:
        return f"rank {r['rank']}"
    return f"{Path(r['folder']).name} (pid {r['pid']})" if r["pid"] is not None else Path(r["folder"]).name


def open_note(r: dict[str, Any]) -> str:
    """What opening this rank's folder in the TUI gives (from the scan's ``gate``/``evidence``)."""
    if r["status"] == "unreadable":
        return f"cannot be opened: unreadable ({r['reason']})"
    gate, evidence = r["gate"], r["evidence"]
    if gate == "complete":
        return "a full scene (plog, sk_meta/<pid>, run.json): the analysis runs as for skdbg tui SCENE"
    if gate == "none" or "plog" not in str(evidence).split("+"):
        return (
            f"no plog ({evidence}): the analysis can only name the gaps (what to collect); "
            "the Log screen stays empty"
        )
    missing = [n for n in ("sk_meta", "run.json") if n not in str(evidence).split("+")]
    return (
        f"not a full scene — {evidence} only (no {', no '.join(missing)}): "
        "its plogs open in the Log screen and the analysis names the gaps"
    )


def is_openable(r: dict[str, Any]) -> bool:
    """A rank the TUI can open: any read rank (an unreadable one has nothing the UI could show)."""
    return bool(r["status"] != "unreadable")


__all__ = [
    "DOC_KEYS",
    "RANK_KEYS",
    "check_scan_doc",
    "is_openable",
    "load_scan_doc",
    "open_note",
    "rank_name",
]
