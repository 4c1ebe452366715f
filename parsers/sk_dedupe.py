"""Merging the copies of one SK fault (row 47): the handler block is printed to plog and routed to
``super_kernel.log``; both parse to incidents, and the same fault must count once with the provenance
of both copies kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass
from skdbg.parsers.sk_records import Incident

# --------------------------------------------------------------------------------------------- dedupe


def _fingerprint(inc: Incident) -> tuple[Any, Any, Any]:
    cores = tuple((c.core_id, c.current_pc, c.node) for c in inc.cores if c.callback == "A")
    dfx = tuple((n.node, n.bin_hdl, n.func_hdl_ori) for n in inc.dfx.nodes) if inc.dfx is not None else None
    head = inc.header.model_scope_value if inc.header is not None else None
    return (cores or None, dfx, head)


def _same_fault(a: Incident, b: Incident, window: timedelta) -> bool:
    if a.pid is not None and b.pid is not None and a.pid != b.pid:
        return False
    if a.entry is not None and b.entry is not None and a.entry != b.entry:
        return False
    if a.first_ts is not None and b.first_ts is not None and abs(a.first_ts - b.first_ts) > window:
        return False
    fa, fb = _fingerprint(a), _fingerprint(b)
    compared = 0
    for x, y in zip(fa, fb, strict=True):
        if x is not None and y is not None:
            if x != y:
                return False
            compared += 1
    return compared > 0


def _merge(primary: Incident, other: Incident) -> Incident:
    """Fill what the primary lacks from the other copy; provenance of both is kept (row 47)."""
    updates: dict[str, Any] = {}
    for f in fields(Incident):
        name = f.name
        pv, ov = getattr(primary, name), getattr(other, name)
        if name in ("origins", "files"):
            updates[name] = tuple(dict.fromkeys((*pv, *ov)))
        elif name == "merged_from":
            updates[name] = (*pv, other.src, *ov)
        elif name == "line_count":
            updates[name] = max(pv, ov)
        elif name == "first_ts":
            updates[name] = min((t for t in (pv, ov) if t is not None), default=None)
        elif name == "last_ts":
            updates[name] = max((t for t in (pv, ov) if t is not None), default=None)
        elif name in ("dialect", "dialect_candidates"):
            continue
        elif (pv is None or pv == () or pv == "") and ov not in (None, (), ""):
            updates[name] = ov
    if primary.anchor is None and other.anchor is not None:
        updates["src"] = other.src
    merged = replace(primary, **updates)
    if primary.dialect == "unknown" and other.dialect != "unknown":
        merged = replace(merged, dialect=other.dialect, dialect_candidates=other.dialect_candidates)
    elif primary.dialect != "unknown" and other.dialect not in ("unknown", primary.dialect):
        merged = replace(merged, dialect="unknown", dialect_candidates=())
    return merged


def _primary_rank(inc: Incident) -> tuple[bool, int]:
    """The plog copy is cited first when it holds the core blocks (it is what users grep and share);
    otherwise the copy with more lines (the file logger also keeps DEBUG lines)."""
    return ("plog" in inc.origins and bool(inc.cores), inc.line_count)


def dedupe_incidents(incidents: Iterable[Incident], *, window_seconds: float = 5.0) -> list[Incident]:
    """Merge copies of one fault found in plog and in ``super_kernel.log`` (row 47).

    Two incidents are the same fault when pid and entry agree (where known), first timestamps lie within
    ``window_seconds`` and at least one fingerprint (exception cores + PCs, DfxInfo node table, header
    model/scope value) is present in both and equal, with none differing. The copy with more lines is
    kept as primary (the plog copy when it holds the core blocks); missing parts are filled from the other; ``origins``/``files``/``merged_from`` keep both.
    """
    window = timedelta(seconds=window_seconds)
    out: list[Incident] = []
    for inc in incidents:
        for i, kept in enumerate(out):
            if _same_fault(kept, inc, window) and (
                set(kept.files) != set(inc.files) or kept.origins != inc.origins
            ):
                primary, other = (kept, inc) if _primary_rank(kept) >= _primary_rank(inc) else (inc, kept)
                out[i] = _merge(primary, other)
                break
        else:
            out.append(inc)
    return out
