"""Where an exclusion cuts the model source, and the marker edits that make the cut (triage.md §4.4–§4.6).

Why this module: *reading* markers (which calls are markers, their regions, aliases, comments and
strings ignored) and *writing* them (call spelling, edit order, applying, the declared-change check)
belong to :mod:`skdbg.parsers.markers`, the one marker model shared with the gate, ``verify`` and the
codegen candidate. What stays here is proposal logic: whether a child's statement sits inside a loop or
conditional arm different from the marker's, or shares one statement with another child, decides split
vs block (§4.4 rule 3); §4.6 infers a child's statement from its op type; and mechanisms A/B/C choose
which marker lines to insert, move or rename. ``end_lineno`` gives the exact last line of a multi-line
statement so edits never land inside one.

The ``None`` exclusion always uses the Python null literal — a scope literally named ``"None"`` is an
ordinary named scope (trap T8) and is reported as such.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skdbg import regexcode
from skdbg.parsers.markers import (
    MarkerCall,
    MarkerEdit,
    MarkerSource,
    Region,
    apply_edits,
    balanced,
    check_edits,
    parse_source,
    read_source,
    requote,
    unified_diff,
)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_CONDS: tuple[type[ast.stmt], ...] = (ast.If, ast.Try)
if hasattr(ast, "Match"):
    _CONDS = (*_CONDS, ast.Match)
if hasattr(ast, "TryStar"):
    _CONDS = (*_CONDS, ast.TryStar)
_WITHS = (ast.With, ast.AsyncWith)


@dataclass(frozen=True, slots=True)
class Span:
    """The statements to move out of the SK: ``body[first:last+1]`` of one statement list."""

    first_line: int
    last_line: int
    indent: str
    stmts: tuple[ast.stmt, ...] = field(compare=False, repr=False)
    in_region_body: bool  # the span sits directly in the marker's statement list
    pre_empty: bool  # no statement between the begin marker and the span
    post_empty: bool  # no statement between the span and the end marker
    spelling: tuple[str, str] = ("torch.npu.super_kernel_scope_begin", "torch.npu.super_kernel_scope_end")

    def call(self, kind: str, arg: str) -> str:
        """A marker call in the file's own spelling of the API (an alias stays an alias)."""
        return f"{self.spelling[0] if kind == 'begin' else self.spelling[1]}({arg})"


@dataclass(frozen=True, slots=True)
class SpanBlock:
    """Why no span can be cut (§4.4 rule 3)."""

    reason: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class InferredSite:
    """A statement inferred to emit a child (§4.6): its line, or None with why none was found."""

    line: int | None
    detail: str


#: model sources already built, by (path, name, text): the input check and the proposal of one analysis
#: share one (a ModelSource is never modified after it is built); bounded for a long TUI session
_SOURCES: dict[tuple[str, str, str], ModelSource] = {}
_SOURCES_MAX = 4


def load_model_source(path: Path, rel: str) -> ModelSource:
    """The :class:`ModelSource` of ``path`` (named ``rel`` in messages), parsed once per content:
    the file is read each time, so an edited file is parsed again. :class:`ParseError` as the class."""
    text = read_source(path, rel)
    key = (str(path), rel, text)
    hit = _SOURCES.get(key)
    if hit is None:
        hit = ModelSource(path, rel, text=text)
        if len(_SOURCES) >= _SOURCES_MAX:
            _SOURCES.clear()
        _SOURCES[key] = hit
    return hit


def check_model_source(path: Path, rel: str) -> None:
    """Read and parse the model source only (the input check): :class:`ParseError` as
    :func:`load_model_source` raises it; the tree is kept for the proposal's full model."""
    parse_source(read_source(path, rel), rel)


class ModelSource(MarkerSource):
    """A parsed marker file (:class:`MarkerSource`) with the proposal's questions: which statements a
    cut covers (§4.4 rule 3) and which statement emits a child (§4.6)."""

    def __init__(self, path: Path, rel: str, *, text: str | None = None) -> None:
        super().__init__(path, rel, text=text)
        self._calls: list[tuple[int, ast.Call]] = sorted(
            ((n.lineno, n) for n, _ in self.index.calls), key=lambda t: t[0]
        )

    # ------------------------------------------------------------------ spans (§4.4 rule 2/3)

    def span(self, lines: Iterable[int], base: Sequence[ast.stmt], region: Region | None) -> Span | SpanBlock:
        """The statement run covering ``lines`` inside ``base`` (the marker's statement list, or the
        function body for an automatic-AOT candidate). Descends into ``with`` blocks shared by all
        lines; a line inside a loop body or conditional arm of its own blocks the cut (§4.4 rule 3)."""
        base_ids = {id(s) for s in base}
        paths: list[tuple[int, list[ast.stmt]]] = []
        for line in sorted(set(lines)):
            st = self.innermost(line)
            if st is None:
                return SpanBlock(f"line {line} is not inside a statement", line)
            ch = self.chain(st)
            k = next((i for i, s in enumerate(ch) if id(s) in base_ids), None)
            if k is None:
                where = f"the scope markers of {region.name!r}" if region is not None else "the function"
                return SpanBlock(f"line {line} is outside {where}", line)
            paths.append((line, ch[k:]))
        if not paths:
            return SpanBlock("no source line is known for the fragment")
        d = 0
        body: Sequence[ast.stmt] = base
        while all(len(p) > d + 1 for _, p in paths) and len({id(p[d]) for _, p in paths}) == 1:
            top = paths[0][1][d]
            if not isinstance(top, _WITHS):
                break
            body = top.body
            d += 1
        for line, p in paths:
            unit = p[d]
            if len(p) > d + 1:
                inner = p[d:-1]
                bad = next((s for s in inner if isinstance(s, _LOOPS + _CONDS)), None)
                if bad is not None:
                    what = "loop body" if isinstance(bad, _LOOPS) else "conditional arm"
                    return SpanBlock(
                        f"line {line} is inside a {what} (line {bad.lineno}) different from the marker's",
                        line,
                    )
                if not isinstance(unit, _WITHS):
                    return SpanBlock(
                        f"line {line} is inside the compound statement at line {unit.lineno}", line
                    )
        units = {id(p[d]) for _, p in paths}
        idx = [i for i, s in enumerate(body) if id(s) in units]
        i, j = min(idx), max(idx)
        first, last = body[i], body[j]
        first_line, last_line = first.lineno, last.end_lineno or last.lineno
        if i > 0 and (body[i - 1].end_lineno or body[i - 1].lineno) >= first_line:
            return SpanBlock(f"line {first_line} holds another statement before the fragment", first_line)
        if j + 1 < len(body) and body[j + 1].lineno <= last_line:
            return SpanBlock(f"line {last_line} holds another statement after the fragment", last_line)
        in_region = region is not None and any(s is first for s in region.inner)
        pre_empty = region is not None and region.body[region.start + 1] is first
        post_empty = region is not None and region.body[region.stop - 1] is last
        return Span(
            first_line,
            last_line,
            self.indent(first_line),
            tuple(body[i : j + 1]),
            in_region,
            pre_empty,
            post_empty,
            (self.scan.spelling("begin"), self.scan.spelling("end")),
        )

    # ------------------------------------------------------------------ §4.6 inference

    def calls_in(self, lo: int, hi: int) -> list[tuple[int, list[str]]]:
        """(statement first line, call-name tokens) for every call between lines lo..hi."""
        out: list[tuple[int, list[str]]] = []
        for ln, node in self._calls:
            if lo <= ln <= hi:
                toks = call_tokens(node.func)
                if toks:
                    st = self.innermost(node.lineno)
                    out.append((st.lineno if st is not None else node.lineno, toks))
        return out

    def infer_line(
        self, func_name: str | None, ordinal: int, same_type: int, lo: int, hi: int
    ) -> InferredSite:
        """§4.6 (2): the ``ordinal``-th statement between lo..hi calling the child's op type.

        ``same_type`` is how many SK kernels share the child's op type; the statements found must
        be exactly that many, else several statements could emit the child (§4.4 rule 3)."""
        ot = op_tokens(func_name)
        if not ot:
            return InferredSite(None, f"no op type can be read from funcName {func_name!r}")
        hits = sorted({ln for ln, ct in self.calls_in(lo, hi) if tokens_match(ct, ot)})
        label = "".join(t.capitalize() for t in ot)
        if not hits:
            return InferredSite(None, f"no call emitting op type {label} between lines {lo} and {hi}")
        if len(hits) != same_type:
            return InferredSite(
                None,
                f"{len(hits)} statements call op type {label} (lines {hits}) but the SK has "
                f"{same_type} such children: the child's statement is ambiguous",
            )
        return InferredSite(
            hits[ordinal], f"occurrence {ordinal} of op type {label} among lines {hits} (inferred, §4.6)"
        )

    def infer_event_line(
        self, event_type: str | None, ordinal: int, same_type: int, lo: int, hi: int
    ) -> InferredSite:
        """§4.6 (2) for event nodes: the ``ordinal``-th ``.record()``/``.wait()``/``.reset()``-style
        call between lo..hi; the count must equal the SK's event nodes of that type (compiler-
        inserted events have no statement, and then nothing is inferred)."""
        names = EVENT_METHODS.get(event_type or "", frozenset())
        hits = sorted(
            {
                st.lineno
                for ln, node in self._calls
                if lo <= ln <= hi
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in names
                and (st := self.innermost(ln)) is not None
            }
        )
        if not hits or len(hits) != same_type:
            return InferredSite(
                None, f"{len(hits)} {event_type} statements (lines {hits}) for {same_type} such event nodes"
            )
        return InferredSite(
            hits[ordinal], f"occurrence {ordinal} of {event_type} among lines {hits} (inferred, §4.6)"
        )


#: method calls that emit an event node (torch.npu.Event / stream API; §4.6 for event nodes)
EVENT_METHODS: dict[str, frozenset[str]] = {
    "EventNotify": frozenset({"record", "record_event"}),
    "EventWait": frozenset({"wait", "wait_event"}),
    "EventReset": frozenset({"reset"}),
    "MemoryWrite": frozenset({"write", "write_value"}),
    "MemoryWait": frozenset({"wait_value"}),
}


# ------------------------------------------------------------------------------ op-type matching

_HASHLIKE = regexcode.compile(r"^(?:\d+|(?=[0-9a-f]*\d)[0-9a-f]{4,})$")
_CAMEL = regexcode.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VERSION = regexcode.compile(r"^v\d+$")
_STRIP_PREFIXES = ("static_kernel_", "te_", "aclnn_")


def _split_words(text: str) -> list[str]:
    out: list[str] = []
    for part in text.split("_"):
        words = _CAMEL.findall(part)
        merged: list[str] = []
        for w in words:  # "V3" splits into "V", "3": glue digits to the previous word
            if w.isdigit() and merged:
                merged[-1] += w
            else:
                merged.append(w)
        out.extend(w.lower() for w in merged if w)
    return [w for w in out if not _VERSION.match(w)]


def op_tokens(func_name: str | None) -> list[str]:
    """Op-type words of a kernel funcName: ``QuantBatchMatmulV3_8ab2c4f1_1`` → quant, batch, matmul."""
    if not func_name:
        return []
    name = func_name
    for p in _STRIP_PREFIXES:
        if name.startswith(p):
            name = name[len(p) :]
    parts = name.split("_")
    keep: list[str] = []
    for p in parts:
        if keep and _HASHLIKE.match(p.lower()):
            break
        keep.append(p)
    return _split_words("_".join(keep))


def call_tokens(func: ast.expr) -> list[str]:
    """Words of a call's name: ``torch_npu.npu_quant_matmul`` → quant, matmul."""
    if isinstance(func, ast.Attribute):
        name = func.attr
    elif isinstance(func, ast.Name):
        name = func.id
    else:
        return []
    for p in ("npu_", "aclnn_"):
        if name.startswith(p):
            name = name[len(p) :]
    return op_tokens(name)


def _subseq(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(w == b for b in it) for w in small)


def tokens_match(call: list[str], op: list[str]) -> bool:
    """A call emits an op type when their words are equal, or one is an ordered subsequence of the
    other and the shorter still names at least two words or six letters (weak: flagged inferred)."""
    if not call or not op:
        return False
    if call == op or "".join(call) == "".join(op):
        return True
    small, big = (call, op) if len(call) <= len(op) else (op, call)
    strong = len(small) >= 2 or len("".join(small)) >= 6
    return strong and _subseq(small, big)


# ------------------------------------------------------------------------------ edit builders


def _line(indent: str, code: str, comment: str) -> str:
    return f"{indent}{code}  # skdbg: {comment}"


def edits_none(rel: str, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism A: wrap the span in ``begin(None)``/``end(None)`` — the null literal, never ``"None"``."""
    return [
        MarkerEdit(
            rel, span.first_line, "insert", _line(span.indent, span.call("begin", "None"), f"exclude {label}")
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, span.call("end", "None"), "end of exclusion"),
        ),
    ]


def edits_close_reopen(src: ModelSource, region: Region, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism B: end the named scope before the span and begin the *same* name after it. When the
    span touches a marker the marker is moved instead (no empty scope pair is created)."""
    lit = src.literal_of(region.begin)
    rel = src.rel
    single_begin = region.begin.line == region.begin.end_line
    single_end = region.end.line == region.end.end_line
    if span.pre_empty and single_begin:
        return [
            MarkerEdit(rel, region.begin.line, "delete", ""),
            MarkerEdit(
                rel,
                span.last_line + 1,
                "insert",
                _line(span.indent, src.call_text("begin", lit), f"reopen after excluded {label}"),
            ),
        ]
    if span.post_empty and single_end:
        return [
            MarkerEdit(
                rel,
                span.first_line,
                "insert",
                _line(span.indent, src.call_text("end", lit), f"close before excluded {label}"),
            ),
            MarkerEdit(rel, region.end.line, "delete", ""),
        ]
    return [
        MarkerEdit(
            rel,
            span.first_line,
            "insert",
            _line(span.indent, src.call_text("end", lit), f"close before excluded {label}"),
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, src.call_text("begin", lit), f"reopen after excluded {label}"),
        ),
    ]


def split_names(name: str) -> tuple[str, str]:
    """§4.5 C: deterministic distinct names for the two halves."""
    return f"{name}.pre", f"{name}.post"


def edits_split(src: ModelSource, region: Region, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism C (``dependency_aligned_split``): the halves become ``<name>.pre`` / ``<name>.post``
    and the fragment between them leaves the SK. A missing half degrades to moving one marker."""
    if span.pre_empty or span.post_empty or not span.in_region_body:
        return edits_close_reopen(src, region, span, label)
    old = src.literal_of(region.begin)
    pre, post = (requote(old, n) for n in split_names(region.name))
    new_begin = src.replace_arg(region.begin, pre)
    new_end = src.replace_arg(region.end, post)
    if new_begin is None or new_end is None:
        return edits_close_reopen(src, region, span, label)
    rel = src.rel
    return [
        MarkerEdit(rel, region.begin.line, "replace", new_begin),
        MarkerEdit(
            rel,
            span.first_line,
            "insert",
            _line(span.indent, src.call_text("end", pre), f"close before excluded {label}"),
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, src.call_text("begin", post), f"reopen after excluded {label}"),
        ),
        MarkerEdit(rel, region.end.line, "replace", new_end),
    ]


__all__ = [
    "InferredSite",
    "MarkerCall",
    "MarkerEdit",
    "ModelSource",
    "Region",
    "check_model_source",
    "load_model_source",
    "Span",
    "SpanBlock",
    "apply_edits",
    "balanced",
    "call_tokens",
    "check_edits",
    "edits_close_reopen",
    "edits_none",
    "edits_split",
    "op_tokens",
    "requote",
    "split_names",
    "tokens_match",
    "unified_diff",
]
