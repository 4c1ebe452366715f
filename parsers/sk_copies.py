"""The plog copy of a ``super_kernel.log`` handler block, derived instead of parsed (row 47, issue 18).

Why: the SK logger prints every handler line to plog and to the model's ``super_kernel.log`` (§1.3).
Both copies used to go through the state machine and :func:`~skdbg.parsers.sk_dedupe.dedupe_incidents`
merged them. The state machine is deterministic in the message texts and function tags: sources,
timestamps and the pid are only carried along. So when the plog's SK messages are, in order, the same
(function, text) pairs as the messages one ``super_kernel.log`` parse consumed, the plog parse is that
parse with each source swapped for its plog twin, and the per-incident bookkeeping (pid, first/last
timestamp, origins, files, line count) recomputed from the plog lines.

Two differences are allowed. The file logger records DEBUG lines a plog at INFO level lacks, and the
handler's only DEBUG line inside an incident is A6 (``Aclgraph superkernel aicore exception occurred``,
§1.4.1): the parser marks an A6 it only noted into an open incident (``ParseTrace.inert``); such a line
may be missing from the plog copy, and its note is dropped from the derived incident. And the plog holds
the SK lines of other components (graph build, at INFO level) that ``super_kernel.log``'s handler
selection left out: a line the parser would only count as foreign (no catalogue match, no handler tag)
may be in the plog only, and is counted. Anything else (one differing text, another line only in one
copy, several pids or files, another incident order) is not a copy, and the caller parses the plog
messages as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass, replace
from functools import partial
from operator import is_, is_not
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from skdbg import regexcode
from skdbg.classcode import generated_code
from skdbg.parsers import sk_records
from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.sk_lines import HANDLER_FUNCS, classify
from skdbg.parsers.sk_records import (
    AbortInfo,
    AllCoreTrace,
    CallbackB,
    CondInfo,
    CoreTrace,
    CounterEntry,
    CounterTable,
    DfxNode,
    DfxTable,
    DumpRecord,
    DumpTensor,
    ExceptionCore,
    Incident,
    ModelMap,
    NonSkFault,
    ParseTrace,
    QueueTask,
    SkHandlerResult,
    SkHeaderInfo,
    SkipDuplicate,
    TaskQueue,
    TraceSymbol,
)

if TYPE_CHECKING:
    from skdbg.parsers.plog_rows import SkColumns

_RECORDS: tuple[type, ...] = (
    AbortInfo,
    AllCoreTrace,
    CallbackB,
    CondInfo,
    CoreTrace,
    CounterEntry,
    CounterTable,
    DfxNode,
    DfxTable,
    DumpRecord,
    DumpTensor,
    ExceptionCore,
    Incident,
    ModelMap,
    NonSkFault,
    QueueTask,
    SkHeaderInfo,
    SkipDuplicate,
    TaskQueue,
    TraceSymbol,
    Gap,
    Unrecognized,
)
_NAMES = {cls.__name__: cls for cls in _RECORDS}
_TYPE_NAME = regexcode.compile(r"[A-Za-z_]\w*")

#: ``M`` maps id(source of the parsed copy) → the twin source; ``R`` re-sources a nested record
Resourcer = Callable[[Any, dict[int, Source], Callable[[Any], Any]], Any]


def _field_expr(name: str, annotation: str, obj: str = "o") -> str:
    """Python expression re-sourcing field ``name`` of ``obj``, chosen from its annotation.

    A tuple of records (5,000 queue tasks, 2,500 DFX nodes on the bench scene) is re-sourced by one
    comprehension that builds each element in place (:func:`_element_expr`): dispatching every element
    through ``R`` cost two Python calls a record, half of the derivation's time."""
    a = annotation.replace(" ", "")
    v = f"{obj}.{name}"
    if a == "Source":
        return f"M[id({v})]"
    if a == "Source|None":
        return f"(None if {v} is None else M[id({v})])"
    if a in ("Sources", "tuple[tuple[str,Source],...]"):
        return f"tuple([(k, M[id(s)]) for k, s in {v}])"
    if a == "tuple[tuple[int,int,Source],...]":
        return f"tuple([(i, n, M[id(s)]) for i, n, s in {v}])"
    if a == "tuple[Source,...]":
        return f"tuple([M[id(s)] for s in {v}])"
    base = a.removesuffix("|None")
    if base in _NAMES:
        return f"(None if {v} is None else R({v}))" if base != a else f"R({v})"
    if base.startswith("tuple[") and base.endswith(",...]") and base[6:-5] in _NAMES:
        if obj != "o":  # an element's own tuples of records: through R (no record here has any)
            return f"tuple([R(x) for x in {v}])"
        return f"tuple([{_element_expr(_NAMES[base[6:-5]])} for e in {v}])"
    if "Source" in a or any(n in a for n in _NAMES) or _nests_a_source(a):
        raise TypeError(f"sk_copies: no rule to re-source field {name}: {annotation}")
    return v


def _nests_a_source(annotation: str, seen: frozenset[str] = frozenset()) -> bool:
    """True when a record type named in ``annotation`` (one of sk_records' dataclasses not re-sourced
    here) holds a :class:`Source` somewhere inside: copying it unchanged would keep the other copy's
    lines, so such a field needs a rule of its own (the import fails until it has one)."""
    for name in set(_TYPE_NAME.findall(annotation)) - seen:
        cls = getattr(sk_records, name, None)
        if cls is None or not is_dataclass(cls):
            continue
        for f in fields(cls):
            inner = str(f.type)
            if "Source" in inner or _nests_a_source(inner, seen | {name}):
                return True
    return False


def _element_expr(cls: type) -> str:
    """Expression re-sourcing element ``e`` of a tuple of ``cls``: built in place when ``e`` is exactly a
    ``cls`` (what :func:`resource` would build through ``R``), else through ``R`` (its rule or KeyError)."""
    args = ", ".join(_field_expr(f.name, str(f.type), "e") for f in fields(cls))
    return f"(B_{cls.__name__}({args}) if type(e) is K_{cls.__name__} else R(e))"


def _compile(cls: type) -> Resourcer:
    """One constructor call per record, generated from the dataclass fields (positional, in order)."""
    args = ", ".join(_field_expr(f.name, str(f.type)) for f in fields(cls))
    code = f"def resource(o, M, R):\n    return C({args})\n"
    # ``C``: the same record, without the frozen __init__; ``B_``/``K_``: those of :func:`_element_expr`
    namespace: dict[str, Any] = {"C": _BUILDERS[f"B_{cls.__name__}"], **_BUILDERS}
    exec(generated_code(code), namespace)  # noqa: S102 - code built from this module's field rules only
    fn: Resourcer = namespace["resource"]
    return fn


_BUILDERS: dict[str, Any] = {f"B_{c.__name__}": frozen_builder(c) for c in _RECORDS} | {
    f"K_{c.__name__}": c for c in _RECORDS
}
_RESOURCERS: dict[type, Resourcer] = {cls: _compile(cls) for cls in _RECORDS}


def resource(obj: Any, smap: dict[int, Source]) -> Any:
    """``obj`` (a handler record) with every source replaced through ``smap`` (KeyError: unmapped)."""

    def rec(o: Any) -> Any:
        return _RESOURCERS[type(o)](o, smap, rec)

    return rec(obj)


class _NotACopy(Exception):
    """The plog messages are not a copy of the parsed ones (the caller parses them)."""


class _Alignment(NamedTuple):
    kept: list[Source]  # sources of the parsed messages that have a plog twin, in order
    # the positions of their twins among the plog's SK lines, in the same order: ``range`` when the
    # list comparison matched (nothing dropped, or every inert A6): the k-th kept message's twin is the
    # k-th SK line (else a list, which the greedy pairing may also find to be 0..n-1)
    twins: Sequence[int]
    dropped: set[int]  # ids of the sources of the parsed messages without a twin (inert A6 lines)
    foreign: int  # plog-only lines of other SK components (each counted as a foreign line)


def _foreign(func: str | None, text: str) -> bool:
    """A plog SK line of another component that the parser would only count: not a catalogue line
    and not tagged with a handler function (e.g. the graph-build lines a plog at INFO holds)."""
    return func is not None and func not in HANDLER_FUNCS and classify(text) is None


def _align(texts: list[str], funcs: list[str | None], trace: ParseTrace) -> _Alignment:
    """Pair the parsed messages one to one with the plog's SK lines (``texts``, ``funcs``: same function
    tag and text, in order). Unpaired parsed messages must be inert A6 lines; unpaired plog lines must
    be foreign lines."""
    # the two usual cases, compared list to list: the plog holds every line, or every line but the A6s
    for drop in (frozenset(), trace.inert):
        if len(trace.srcs) - len(drop) != len(texts):
            continue
        kt, kf, ks = list(trace.texts), list(trace.funcs), list(trace.srcs)
        for i in sorted(drop, reverse=True):
            del kt[i], kf[i], ks[i]
        if kt == texts and kf == funcs:
            return _Alignment(ks, range(len(texts)), {id(trace.srcs[i]) for i in drop}, 0)
    # otherwise pair greedily (either choice at a line that is both inert and foreign is the same)
    twins: list[int] = []
    out = _Alignment([], twins, set(), 0)
    foreign = 0
    j, n = 0, len(texts)
    for i, (text, func, src) in enumerate(zip(trace.texts, trace.funcs, trace.srcs, strict=True)):
        while True:
            if j < n and texts[j] == text and funcs[j] == func:
                out.kept.append(src)
                twins.append(j)
                j += 1
            elif i in trace.inert:
                out.dropped.add(id(src))
            elif j < n and _foreign(funcs[j], texts[j]):
                foreign += bool(texts[j].strip())  # the parser skips blank texts without counting
                j += 1
                continue
            else:
                raise _NotACopy
            break
    for k in range(j, n):
        if not _foreign(funcs[k], texts[k]):
            raise _NotACopy
        foreign += bool(texts[k].strip())
    return out._replace(foreign=foreign)


_NOT_NONE = partial(is_not, None)


def _bookkeeping(plog: SkColumns, mine: Sequence[int]) -> dict[str, Any]:
    """What :meth:`~skdbg.parsers.sk_builders._IncidentB.touch` accumulates (in touch order), over the
    plog twins (their positions, ``mine``) of the messages an incident counted: the first pid, the
    earliest and latest stamp, origins and files in first-seen order, the count."""
    if type(mine) is range and mine == range(len(plog.stamps)):  # every line, in order (the usual copy)
        stamps = list(filter(_NOT_NONE, plog.stamps))
        files = tuple(dict.fromkeys(plog.files))
    else:
        stamps = list(filter(_NOT_NONE, map(plog.stamps.__getitem__, mine)))
        files = tuple(dict.fromkeys(map(plog.files.__getitem__, mine)))
    return {
        "pid": plog.pids[mine[0]] if mine else None,
        "first_ts": plog.to_time(min(stamps)) if stamps else None,
        "last_ts": plog.to_time(max(stamps)) if stamps else None,
        "origins": ("plog",) if mine else (),
        "files": files,
        "line_count": len(mine),
    }


def derive_plog_copy(plog: SkColumns, parsed: SkHandlerResult) -> SkHandlerResult | None:
    """The result :func:`parse_sk_messages` would give for one pid's plog SK lines (``plog``, in time
    order: :func:`~skdbg.parsers.plog_rows.sk_columns`), derived from ``parsed`` (one
    ``super_kernel.log``); None when they are not a copy of it."""
    trace = parsed.trace
    if trace is None or not trace.single_stream or not trace.srcs:
        return None
    if len(plog.texts) < len(trace.srcs) - len(trace.inert) or len(set(plog.pids)) != 1:
        return None  # too few lines to hold every message but the A6s, or several processes
    try:
        al = _align(plog.texts, plog.funcs, trace)
        ids = list(map(id, al.kept))
        # the usual copy (every plog SK line the twin of the kept message of its rank): the lines' own
        # sources in order, and no map from message to twin position unless an incident counted only
        # some messages or a declined fault (``non_aot``) needs its twin's pid and stamp
        whole = type(al.twins) is range
        twin_srcs = plog.srcs if whole else map(plog.srcs.__getitem__, al.twins)
        smap: dict[int, Source] = dict(zip(ids, twin_srcs, strict=False))  # (the columns are as long)
        if len(smap) != len(al.kept) or any(map(smap.__contains__, al.dropped)):
            # two messages share one source object (kept ones, or a kept one and a dropped A6): the
            # mapping would be ambiguous
            return None
        twin: dict[int, int] = {}  # message source id -> its twin's position, made when first needed

        def twin_map() -> dict[int, int]:
            if not twin:
                twin.update(zip(ids, al.twins, strict=True))
            return twin

        out = SkHandlerResult(foreign_lines=parsed.foreign_lines + al.foreign)
        for inc, touched in zip(parsed.incidents, trace.touched, strict=True):
            mine: Sequence[int]
            if whole and len(touched) == len(trace.srcs) and all(map(is_, touched, trace.srcs)):
                mine = range(len(ids))  # every message counted, in order: every twin, in order
            else:
                mine = cast("list[int]", list(filter(_NOT_NONE, map(twin_map().get, map(id, touched)))))
            notes = tuple(n for n in inc.notes if id(n[1]) not in al.dropped)
            new = resource(replace(inc, notes=notes), smap)
            out.incidents.append(replace(new, **_bookkeeping(plog, mine)))
        keys = [(i.src.file, i.src.line or 0) for i in out.incidents]
        if keys != sorted(keys):
            return None  # the parser would order (and so freeze) them differently
        for rec in parsed.non_aot:
            k = twin_map()[id(rec.src)]
            out.non_aot.append(
                replace(resource(rec, smap), pid=plog.pids[k], ts=plog.to_time(plog.stamps[k]))
            )
        out.unrecognized = [resource(u, smap) for u in parsed.unrecognized]
        out.gaps = [g if g.src is None else resource(g, smap) for g in parsed.gaps]
    except (_NotACopy, KeyError):
        return None
    return out
