"""The scan's outputs: the ``skdbg.scan/1`` document, the per-rank CSV rows and the terminal summary.

Why one module: ``scan.json``, ``ranks.csv`` and the table printed to the terminal must say the same
thing — the table is rendered from the document, never from the signatures a second way.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from skdbg.fleet.signature import RankSignature
from skdbg.fleet.verdict import Verdict

SCHEMA = "skdbg.scan/1"
#: ranks.csv columns, in order
CSV_COLUMNS = (
    "rank",
    "rank_source",
    "status",
    "folder",
    "pid",
    "device",
    "device_source",
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
    "follower_patterns",
    "follower_lines",
    "reason",
)


def _time(t: datetime | None) -> str | None:
    return t.isoformat(timespec="microseconds") if t is not None else None


def rank_doc(s: RankSignature, status: str) -> dict[str, Any]:
    """One rank's entry of ``scan.json``."""
    return {
        "rank": s.rank,
        "rank_source": s.rank_source,
        "status": status,
        "folder": s.folder,
        "pid": s.pid,
        "device": s.device,
        "device_source": s.device_source,
        "first_error": _time(s.first_time),
        "fault_time": _time(s.fault_time),
        "fault_at": s.fault_at,
        "fault_kind": s.fault_kind,
        "error_class": s.error_class,
        "error_code": s.error_code,
        "sk_entry": s.sk_entry,
        "scope": s.scope,
        "child": s.child,
        "cores": s.cores,
        "evidence": s.evidence,
        "gate": s.gate,
        "follower_lines": [{"at": c.where, "pattern": c.what, "time": _time(c.ts)} for c in s.follower_lines],
        "reason": s.reason,
        "notes": list(s.notes),
    }


def _label(s: RankSignature) -> str:
    return f"rank {s.rank}" if s.rank is not None else f"{s.folder} (pid {s.pid})"


def scan_doc(
    v: Verdict, *, roots: Sequence[str], problems: Sequence[tuple[str, str]], engine: str
) -> dict[str, Any]:
    """The ``skdbg.scan/1`` document (docs/scan.md describes every field)."""
    ranks = [rank_doc(s, v.status[i]) for i, s in enumerate(v.ranks)]
    first: dict[str, Any] | None = None
    if v.first is not None:
        s = v.ranks[v.first]
        first = {
            "index": v.first,
            "rank": s.rank,
            "folder": s.folder,
            "pid": s.pid,
            "time": _time(s.first_time),
            "at": s.fault_at
            if s.fault_time is not None
            else (s.follower_lines[0].where if s.follower_lines else None),
            "own_fault": v.leader_has_fault,
            "tie": [v.ranks[i].rank for i in v.tie],
            "tie_folders": [v.ranks[i].folder for i in v.tie],
            "tie_rule": v.tie_rule,
            "next": f"skdbg analyze {s.folder}",
        }
    followers = [i for i, st in v.status.items() if st == "follower"]
    unreadable = [i for i, st in v.status.items() if st == "unreadable"]
    return {
        "schema": SCHEMA,
        "roots": list(roots),
        "engine": engine,
        "skew_ms": v.skew_ms,
        "tie_rule": "within skew_ms: own SK/device fault over follow-up error, then lowest rank id",
        "counts": {st: sum(1 for x in v.status.values() if x == st) for st in _STATUS_ORDER},
        "first_failing": first,
        "followers": sorted(followers),
        "groups": [
            {"key": list(key), "count": len(idx), "ranks": [v.ranks[i].rank for i in idx], "indices": idx}
            for key, idx in v.groups
        ],
        "no_evidence": [i for i, st in v.status.items() if st == "no_evidence"],
        "unreadable": [
            {"index": i, "folder": v.ranks[i].folder, "reason": v.ranks[i].reason} for i in unreadable
        ]
        + [{"index": None, "folder": path, "reason": why} for path, why in problems],
        "ranks": ranks,
    }


_STATUS_ORDER = ("first_failing", "own_fault", "follower", "clean", "no_evidence", "unreadable")


def csv_text(doc: dict[str, Any]) -> str:
    """``ranks.csv``: one row per rank, :data:`CSV_COLUMNS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in doc["ranks"]:
        row = dict(r)
        row["follower_patterns"] = ";".join(sorted({c["pattern"] for c in r["follower_lines"]}))
        row["follower_lines"] = ";".join(c["at"] for c in r["follower_lines"])
        w.writerow(["" if row.get(c) is None else row[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """The terminal summary (plain text lines; the CLI prints them)."""
    ranks = doc["ranks"]

    def name(i: int) -> str:
        r = ranks[i]
        return f"rank {r['rank']}" if r["rank"] is not None else f"{r['folder']} (pid {r['pid']})"

    out: list[str] = []
    c = doc["counts"]
    out.append(
        f"{len(ranks)} ranks: "
        + ", ".join(f"{c[k]} {k}" for k in _STATUS_ORDER if c.get(k))
        + f"  (clock-skew tolerance {doc['skew_ms']:g} ms; engine {doc['engine']})"
    )
    sources: dict[str, int] = {}
    for r in ranks:
        sources[r["rank_source"]] = sources.get(r["rank_source"], 0) + 1
    out.append("rank ids from: " + ", ".join(f"{k} {n}" for k, n in sorted(sources.items())))
    first = doc["first_failing"]
    if first is None:
        out.append("first failing rank: none (no rank shows a fault or a follow-up error)")
    else:
        r = ranks[first["index"]]
        what = (
            " ".join(x for x in (r["fault_kind"], r["error_class"], r["error_code"]) if x)
            or "follow-up error"
        )
        where = ", ".join(f"{k} {r[k]}" for k in ("sk_entry", "scope", "child", "cores") if r[k] is not None)
        out.append(
            f"first failing: {name(first['index'])} at {first['time']} — {what}"
            + (f" ({where})" if where else "")
        )
        out.append(f"  line {first['at']}; rank id from {r['rank_source']}")
        if not first["own_fault"]:
            out.append(
                "  no rank shows a fault of its own: every failing rank only timed out waiting for a peer"
            )
        if first["tie"]:
            tied = ", ".join(str(x) for x in first["tie"])
            out.append(f"  tie within {doc['skew_ms']:g} ms: ranks {tied}; decided by: {first['tie_rule']}")
    if doc["followers"]:
        out.append(f"followers ({len(doc['followers'])}): only follow-up errors of another rank's fault")
        for i in doc["followers"][:8]:
            lines = ranks[i]["follower_lines"]
            cites = ", ".join(f"{x['at']} [{x['pattern']}]" for x in lines[:2])
            more = f" (+{len(lines) - 2} more)" if len(lines) > 2 else ""
            out.append(f"  {name(i)}: {cites}{more}")
        if len(doc["followers"]) > 8:
            out.append(f"  … {len(doc['followers']) - 8} more (see scan.json / --format csv)")
    out.append("groups (by signature):")
    for g in doc["groups"]:
        ids = [str(x) if x is not None else "?" for x in g["ranks"]]
        shown = ",".join(ids[:16]) + (f",… (+{len(ids) - 16})" if len(ids) > 16 else "")
        key = " ".join(k for k in g["key"] if k)
        out.append(f"  {g['count']:>5}  {key}  ranks {shown}")
    if doc["no_evidence"]:
        out.append("no evidence: " + ", ".join(name(i) for i in doc["no_evidence"]))
    for u in doc["unreadable"]:
        out.append(f"unreadable: {u['folder']}: {u['reason']}")
    if first is not None:
        out.append(f"next: {first['next']}")
    return out


__all__ = ["CSV_COLUMNS", "SCHEMA", "csv_text", "rank_doc", "scan_doc", "summary_lines"]
