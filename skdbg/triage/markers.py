"""Scope markers in the model source, and the marker edits of an exclusion (triage.md §4.5, §4.6).

Why ``ast`` and not text search: the markers MUST be the direct calls
``torch.npu.super_kernel_scope_begin(<name>)`` / ``…_end(<name>)`` balanced in one statement list
(§4.5.1); whether a child's statement sits inside a loop or conditional arm different from the
marker's, or shares one statement with another child, decides split vs block (§4.4 rule 3). Only
the syntax tree answers that exactly; ``end_lineno`` gives the exact last line of a multi-line
statement so edits never land inside one.

Edits follow analysis-json.md: 1-based lines of the original file, ``insert`` puts whole lines
before a line, ``replace``/``delete`` act on one line, ascending, never overlapping. The ``None``
exclusion always uses the Python null literal — a scope literally named ``"None"`` is an ordinary
named scope (trap T8) and is reported as such.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skdbg.parsers.common import ParseError
from skdbg.triage.model import MarkerEdit

BEGIN = "super_kernel_scope_begin"
END = "super_kernel_scope_end"
_PREFIX = "torch.npu."
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_CONDS: tuple[type[ast.stmt], ...] = (ast.If, ast.Try)
if hasattr(ast, "Match"):
    _CONDS = (*_CONDS, ast.Match)
if hasattr(ast, "TryStar"):
    _CONDS = (*_CONDS, ast.TryStar)
_WITHS = (ast.With, ast.AsyncWith)


@dataclass(frozen=True, slots=True)
class MarkerCall:
    """One direct ``torch.npu.super_kernel_scope_begin/end(<arg>)`` statement.

    ``name`` is the string literal's value; ``is_none`` the null literal (an exclusion scope);
    ``literal`` the argument's source text (None for a non-literal argument, which skdbg cannot
    match to a scope name)."""

    kind: str  # begin | end
    line: int
    end_line: int
    name: str | None
    is_none: bool
    literal: str | None
    arg_col: int | None
    arg_end_col: int | None
    stmt: ast.stmt = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Region:
    """A balanced begin/end pair of one scope name inside one statement list."""

    name: str
    begin: MarkerCall
    end: MarkerCall
    body: list[ast.stmt] = field(compare=False, repr=False)
    start: int  # index of the begin statement in body
    stop: int  # index of the end statement in body
    func: str | None

    def contains(self, line: int) -> bool:
        return self.begin.end_line < line < self.end.line

    @property
    def inner(self) -> list[ast.stmt]:
        return self.body[self.start + 1 : self.stop]


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


@dataclass(frozen=True, slots=True)
class SpanBlock:
    """Why no span can be cut (§4.4 rule 3)."""

    reason: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class InferredSite:
    line: int | None
    detail: str


class ModelSource:
    """A parsed marker file. Raises :class:`ParseError` on unreadable or non-Python text."""

    def __init__(self, path: Path, rel: str) -> None:
        self.path = path
        self.rel = rel
        try:
            self.text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ParseError(rel, "a Python model source", got=str(exc)) from exc
        try:
            self.tree = ast.parse(self.text, filename=rel)
        except SyntaxError as exc:
            raise ParseError(rel, "a Python model source", line=exc.lineno, got=exc.msg) from exc
        except ValueError as exc:  # e.g. NUL bytes
            raise ParseError(rel, "a Python model source", got=str(exc)) from exc
        self.lines = self.text.splitlines()
        self._parent: dict[ast.stmt, tuple[list[ast.stmt], ast.AST]] = {}
        self._up: dict[ast.AST, ast.AST] = {}
        for owner in ast.walk(self.tree):
            for child in ast.iter_child_nodes(owner):
                self._up[child] = owner
            for _, value in ast.iter_fields(owner):
                if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                    for st in value:
                        self._parent[st] = (value, owner)
        self.markers = [m for st in self._parent if (m := _marker(st)) is not None]
        self.markers.sort(key=lambda m: m.line)
        self._depth: dict[ast.stmt, int] = {st: len(self.chain(st)) for st in self._parent}
        self._calls: list[tuple[int, ast.Call]] = sorted(
            ((n.lineno, n) for n in ast.walk(self.tree) if isinstance(n, ast.Call)), key=lambda t: t[0]
        )

    # ------------------------------------------------------------------ structure

    def chain(self, st: ast.stmt) -> list[ast.stmt]:
        """Enclosing statements from the outermost down to ``st``."""
        out = [st]
        cur: ast.AST | None = self._up.get(st)
        while cur is not None:
            if isinstance(cur, ast.stmt):
                out.append(cur)
            cur = self._up.get(cur)
        return out[::-1]

    def body_of(self, st: ast.stmt) -> list[ast.stmt]:
        return self._parent[st][0]

    def innermost(self, line: int) -> ast.stmt | None:
        best: ast.stmt | None = None
        depth = -1
        for st, d in self._depth.items():
            if st.lineno <= line <= (st.end_lineno or st.lineno) and d > depth:
                best, depth = st, d
        return best

    def func_of(self, st: ast.stmt) -> str | None:
        for s in reversed(self.chain(st)):
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef):
                return s.name
        return None

    def indent(self, line: int) -> str:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return text[: len(text) - len(text.lstrip())]

    # ------------------------------------------------------------------ markers

    def string_none_markers(self) -> list[MarkerCall]:
        """Markers whose argument is the *string* ``"None"`` — an ordinary named scope (T8)."""
        return [m for m in self.markers if m.name == "None"]

    def regions(self, name: str) -> tuple[list[Region], list[str]]:
        """Balanced begin/end pairs of ``name`` (LIFO within one statement list) and problems found
        (unmatched begin/end, a pair split across statement lists)."""
        problems: list[str] = []
        found: list[Region] = []
        named = [m for m in self.markers if m.name == name]
        seen: set[int] = set()
        bodies: list[list[ast.stmt]] = []
        for m in named:
            body = self.body_of(m.stmt)
            if id(body) not in seen:
                seen.add(id(body))
                bodies.append(body)
        paired: set[int] = set()
        for body in bodies:
            stack: list[tuple[int, MarkerCall]] = []
            for i, st in enumerate(body):
                mk = _marker(st)
                if mk is None or mk.name != name:
                    continue
                if mk.kind == "begin":
                    stack.append((i, mk))
                elif stack:
                    j, b = stack.pop()
                    found.append(Region(name, b, mk, body, j, i, self.func_of(st)))
                    paired.update((b.line, mk.line))
        for m in named:
            if m.line not in paired:
                problems.append(
                    f"{self.rel}:{m.line}: super_kernel_scope_{m.kind}({m.literal}) has no matching "
                    f"{'end' if m.kind == 'begin' else 'begin'} in the same statement list"
                )
        found.sort(key=lambda r: r.begin.line)
        return found, problems

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
        )

    def statement_lines(self, line: int) -> tuple[int, int] | None:
        """First and last line of the innermost simple statement holding ``line``."""
        st = self.innermost(line)
        if st is None:
            return None
        return st.lineno, st.end_lineno or st.lineno

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


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    cur: ast.expr = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    if isinstance(cur, ast.Name):
        parts.append(cur.id)
        return ".".join(reversed(parts))
    return None


def _marker(st: ast.stmt) -> MarkerCall | None:
    if not isinstance(st, ast.Expr) or not isinstance(st.value, ast.Call):
        return None
    call = st.value
    dotted = _dotted(call.func)
    if dotted not in (_PREFIX + BEGIN, _PREFIX + END):
        return None
    kind = "begin" if dotted.endswith(BEGIN) else "end"
    name: str | None = None
    is_none = False
    literal: str | None = None
    col: int | None = None
    end_col: int | None = None
    if len(call.args) == 1 and not call.keywords:
        arg = call.args[0]
        if isinstance(arg, ast.Constant) and (arg.value is None or isinstance(arg.value, str)):
            is_none = arg.value is None
            name = arg.value if isinstance(arg.value, str) else None
            literal = repr(arg.value)
            if arg.lineno == arg.end_lineno:
                col, end_col = arg.col_offset, arg.end_col_offset
    return MarkerCall(
        kind=kind,
        line=st.lineno,
        end_line=st.end_lineno or st.lineno,
        name=name,
        is_none=is_none,
        literal=literal,
        arg_col=col,
        arg_end_col=end_col,
        stmt=st,
    )


# ------------------------------------------------------------------------------ op-type matching

_HASHLIKE = re.compile(r"^(?:\d+|(?=[0-9a-f]*\d)[0-9a-f]{4,})$")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VERSION = re.compile(r"^v\d+$")
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


def requote(literal: str | None, name: str) -> str:
    """A string literal for ``name`` in the quote style of ``literal`` (double quotes by default)."""
    q = '"'
    if literal and literal[0] in "\"'" and not literal.startswith(('"""', "'''")):
        q = literal[0]
    if q in name or "\\" in name or "\n" in name:
        return repr(name)
    return f"{q}{name}{q}"


def _call(kind: str, arg: str) -> str:
    return f"torch.npu.super_kernel_scope_{kind}({arg})"


def _line(indent: str, code: str, comment: str) -> str:
    return f"{indent}{code}  # skdbg: {comment}"


def edits_none(rel: str, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism A: wrap the span in ``begin(None)``/``end(None)`` — the null literal, never ``"None"``."""
    return [
        MarkerEdit(
            rel, span.first_line, "insert", _line(span.indent, _call("begin", "None"), f"exclude {label}")
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, _call("end", "None"), "end of exclusion"),
        ),
    ]


def _marker_literal(src: ModelSource, m: MarkerCall) -> str:
    if m.arg_col is not None and m.arg_end_col is not None:
        return src.lines[m.line - 1][m.arg_col : m.arg_end_col]
    return requote(None, m.name or "")


def edits_close_reopen(src: ModelSource, region: Region, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism B: end the named scope before the span and begin the *same* name after it. When the
    span touches a marker the marker is moved instead (no empty scope pair is created)."""
    lit = _marker_literal(src, region.begin)
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
                _line(span.indent, _call("begin", lit), f"reopen after excluded {label}"),
            ),
        ]
    if span.post_empty and single_end:
        return [
            MarkerEdit(
                rel,
                span.first_line,
                "insert",
                _line(span.indent, _call("end", lit), f"close before excluded {label}"),
            ),
            MarkerEdit(rel, region.end.line, "delete", ""),
        ]
    return [
        MarkerEdit(
            rel,
            span.first_line,
            "insert",
            _line(span.indent, _call("end", lit), f"close before excluded {label}"),
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, _call("begin", lit), f"reopen after excluded {label}"),
        ),
    ]


def split_names(name: str) -> tuple[str, str]:
    """§4.5 C: deterministic distinct names for the two halves."""
    return f"{name}.pre", f"{name}.post"


def _replace_arg(src: ModelSource, m: MarkerCall, new_literal: str) -> str | None:
    if m.arg_col is None or m.arg_end_col is None or m.line != m.end_line:
        return None
    text = src.lines[m.line - 1]
    return text[: m.arg_col] + new_literal + text[m.arg_end_col :]


def edits_split(src: ModelSource, region: Region, span: Span, label: str) -> list[MarkerEdit]:
    """Mechanism C (``dependency_aligned_split``): the halves become ``<name>.pre`` / ``<name>.post``
    and the fragment between them leaves the SK. A missing half degrades to moving one marker."""
    if span.pre_empty or span.post_empty or not span.in_region_body:
        return edits_close_reopen(src, region, span, label)
    old = _marker_literal(src, region.begin)
    pre, post = (requote(old, n) for n in split_names(region.name))
    new_begin = _replace_arg(src, region.begin, pre)
    new_end = _replace_arg(src, region.end, post)
    if new_begin is None or new_end is None:
        return edits_close_reopen(src, region, span, label)
    rel = src.rel
    return [
        MarkerEdit(rel, region.begin.line, "replace", new_begin),
        MarkerEdit(
            rel,
            span.first_line,
            "insert",
            _line(span.indent, _call("end", pre), f"close before excluded {label}"),
        ),
        MarkerEdit(
            rel,
            span.last_line + 1,
            "insert",
            _line(span.indent, _call("begin", post), f"reopen after excluded {label}"),
        ),
        MarkerEdit(rel, region.end.line, "replace", new_end),
    ]


# ------------------------------------------------------------------------------ applying edits


def check_edits(edits: Sequence[MarkerEdit]) -> None:
    """analysis-json.md: ascending lines, no two edits on one line (an insert before line L and a
    replace/delete of L would overlap)."""
    lines = [e.line for e in edits]
    if lines != sorted(lines) or len(set(lines)) != len(lines):
        raise ValueError(f"marker edits not ascending or overlapping: {lines}")


def apply_edits(lines: Sequence[str], edits: Sequence[MarkerEdit]) -> list[str]:
    """The file after the edits (used for the diff and by tests)."""
    check_edits(edits)
    by_line = {e.line: e for e in edits}
    out: list[str] = []
    for i, text in enumerate(lines, 1):
        e = by_line.get(i)
        if e is None:
            out.append(text)
        elif e.op == "insert":
            out.extend(e.text.splitlines())
            out.append(text)
        elif e.op == "replace":
            out.extend(e.text.splitlines())
        # delete: drop the line
    tail = by_line.get(len(lines) + 1)
    if tail is not None and tail.op == "insert":
        out.extend(tail.text.splitlines())
    return out


def unified_diff(rel: str, before: Sequence[str], after: Sequence[str]) -> str:
    return "\n".join(
        difflib.unified_diff(list(before), list(after), fromfile=f"a/{rel}", tofile=f"b/{rel}", lineterm="")
    )


def marker_sequence(text: str) -> list[tuple[str, str | None, bool]]:
    """(kind, name, is_none) of every direct marker call in source order (balance checks, tests)."""
    tree = ast.parse(text)
    found = [m for st in ast.walk(tree) if isinstance(st, ast.stmt) and (m := _marker(st)) is not None]
    found.sort(key=lambda m: m.line)
    return [(m.kind, m.name, m.is_none) for m in found]


def balanced(text: str) -> bool:
    """Every end closes the innermost open scope of the same name; nothing stays open (LIFO)."""
    stack: list[tuple[str | None, bool]] = []
    for kind, name, is_none in marker_sequence(text):
        if kind == "begin":
            stack.append((name, is_none))
        elif not stack or stack[-1] != (name, is_none):
            return False
        else:
            stack.pop()
    return not stack


__all__ = [
    "InferredSite",
    "MarkerCall",
    "ModelSource",
    "Region",
    "Span",
    "SpanBlock",
    "apply_edits",
    "balanced",
    "call_tokens",
    "check_edits",
    "edits_close_reopen",
    "edits_none",
    "edits_split",
    "marker_sequence",
    "op_tokens",
    "requote",
    "split_names",
    "tokens_match",
    "unified_diff",
]
