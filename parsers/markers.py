"""Scope markers in a model source: the one reader and writer (triage.md §4.5, F8, V1; codegen candidate).

Why one module: the entry gate (F8: does the source hold the candidate's scope?), the proposal
(where to cut), ``verify`` (V1: is the NEW source the declared change?) and the codegen candidate
(does ``marker.patch`` materialise the mechanism?) must agree on what *is* a marker. They used to read
markers three ways (a regex that counted commented-out calls, an ``ast`` walk that took any
``…super_kernel_scope_begin`` prefix, and one that accepted only ``torch.npu.``). Here is the only
definition:

* **npugraph_ex form** (§4.5.1): a call of ``super_kernel_scope_begin`` / ``super_kernel_scope_end``
  that *resolves* to torch_npu's API — ``torch.npu.…`` or ``torch_npu.npu[.<submodule>].…`` —
  through the file's imports: ``import torch_npu as tn`` → ``tn.npu.super_kernel_scope_begin``,
  ``from torch_npu.npu import super_kernel_scope_begin as skb`` → ``skb``, ``import torch.npu as
  tnpu`` → ``tnpu.…``. A call that does not resolve there (a repository wrapper, ``self.helper.…``, an
  unimported bare name) is *not* a marker (§4.5.1 "not a torchair context manager, decorator, or
  repository wrapper"); it is listed in :attr:`MarkerScan.ignored` so a message can say why.
* **GE form** (§4.5.2): a call of ``torchair.scope.super_kernel(scope, options='')`` (also reached as
  ``torch_npu.dynamo.torchair`` or through ``import torchair as tng``), normally a ``with`` item.
* Comments and string literals never count: the source is read with :mod:`ast` (the tokenizer
  drops comments; a marker spelled inside a string is a ``Constant``, not a ``Call``). ``torch``,
  ``torch_npu`` and ``torchair`` used without an import are taken as those modules (examples in the
  docs omit the import); rebinding them by an import makes them whatever was imported.

Writing: generated marker calls reuse the spelling the file already uses for the API (an alias stays an
alias), and edits follow analysis-json.md — 1-based original lines; ``insert`` puts whole lines before a
line, ``replace``/``delete`` act on one line; per file the order key is ``(line, insert < replace|delete)``,
strictly ascending (so an insert before line L and a replace of L are fine, two inserts before L or two
changes of L overlap). Edit checks, the JSON-schema check and :func:`apply_edits` all use that one rule.
"""

from __future__ import annotations

import ast
import bisect
import copy
import difflib
import io
import tokenize
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from skdbg.parsers.common import ParseError, ReadFailure
from skdbg.parsers.fsguard import read_regular

BEGIN = "super_kernel_scope_begin"
END = "super_kernel_scope_end"
GE_FUNC = "super_kernel"
#: modules whose ``super_kernel_scope_begin/end`` are the npugraph_ex markers (torch_npu patches torch.npu)
NPU_OWNERS = ("torch.npu", "torch_npu.npu")
#: the torchair GE-mode scope (§4.5.2)
GE_CALLEES = ("torchair.scope.super_kernel", "torch_npu.dynamo.torchair.scope.super_kernel")
#: top-level names taken as the module of that name when the file does not import them
_IMPLICIT = frozenset({"torch", "torch_npu", "torchair"})
#: the exclusion mechanisms of §4.5.1 A/B/C
EXPLICIT_NONE = "explicit_none_exclusion"
CLOSE_REOPEN = "close_reopen_exclusion"
SPLIT = "dependency_aligned_split"
EDIT_OPS = ("insert", "replace", "delete")
_OP_RANK = {"insert": 0, "replace": 1, "delete": 1}


# ------------------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class MarkerEdit:
    """One line edit of the marker file (analysis-json.md: 1-based line in the original, no overlaps)."""

    file: str
    line: int
    op: str  # insert | replace | delete
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "op": self.op, "text": self.text}


class EditLike(Protocol):
    """Anything shaped like a marker edit (a :class:`MarkerEdit` or the triage model's record)."""

    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def op(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class MarkerCall:
    """One scope-marker call.

    ``kind`` is ``begin``/``end`` (npugraph_ex form) or ``ge`` (``torchair.scope.super_kernel``).
    ``name`` is the string literal's value, ``is_none`` the null literal (an exclusion scope),
    ``literal`` the argument's source text (None when the argument is not a literal: skdbg cannot match
    it to a scope name, ``missing`` when there is no argument at all). ``direct`` says the call is a
    whole expression statement (what §4.5.1 requires of the npugraph_ex form)."""

    kind: str
    line: int
    end_line: int
    name: str | None
    is_none: bool
    literal: str | None
    arg_col: int | None
    arg_end_col: int | None
    direct: bool
    callee: str  # resolved dotted name, e.g. torch.npu.super_kernel_scope_begin
    spelling: str  # the callee as written, e.g. tn.npu.super_kernel_scope_begin
    missing: bool = False
    expr: str | None = None  # the argument's expression text when it is not a literal
    stmt: ast.stmt | None = field(default=None, compare=False, repr=False)

    @property
    def form(self) -> str:
        return "ge" if self.kind == "ge" else "npugraph_ex"

    @property
    def string_none(self) -> bool:
        """The *string* ``"None"``: an ordinary scope literally named None (trap T8)."""
        return self.name == "None"

    @property
    def key(self) -> tuple[str, str | None, bool]:
        """What makes two markers the same marker: kind, literal name, null literal."""
        return (self.kind, self.name if self.literal is not None else f"<{self.expr}>", self.is_none)

    @property
    def scope(self) -> str:
        """The argument as a reader sees it: ``None``, ``"name"`` (quoted), or the expression text."""
        if self.missing:
            return ""
        if self.is_none:
            return "None"
        if self.name is not None:
            return '"' + self.name.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return self.literal or self.expr or "…"

    @property
    def label(self) -> str:
        short = GE_FUNC if self.kind == "ge" else (BEGIN if self.kind == "begin" else END)
        return f"{short}({self.scope})"


@dataclass(frozen=True, slots=True)
class Ignored:
    """A call that looks like a marker by its last name but is not the API (a wrapper, another module)."""

    line: int
    spelling: str
    reason: str


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Where a materialised source differs from the declared change."""

    line: int | None
    detail: str


class EditError(ValueError):
    """Marker edits that break the analysis-json.md rules (order, overlap, range, op)."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


# ------------------------------------------------------------------------------------------ reading


#: syntax trees by source text (the file name only names errors): the input check parses the model
#: source, the marker scan reuses the tree. Trees are read, never modified (bounded)
_TREES: dict[str, ast.Module] = {}
_TREES_MAX = 4


def parse_source(text: str, file: str) -> ast.Module:
    """The syntax tree of a model source; :class:`ParseError` (file, line, what) when it is not Python.

    Parsed once per text; callers share the tree and must not modify it."""
    hit = _TREES.get(text)
    if hit is not None:
        return hit
    try:
        tree = ast.parse(text, filename=file)
    except SyntaxError as exc:
        raise ParseError(file, "a Python model source", line=exc.lineno, got=exc.msg) from exc
    except ValueError as exc:  # e.g. NUL bytes
        raise ParseError(file, "a Python model source", got=str(exc)) from exc
    except (MemoryError, RecursionError) as exc:
        # CPython's parser gives up this way on some damaged sources (nesting beyond its limits),
        # found by the scene fuzzer: still bad input, not an internal error
        raise ParseError(
            file, "a Python model source", got=f"text the Python parser cannot handle ({type(exc).__name__})"
        ) from exc
    if len(_TREES) >= _TREES_MAX:
        _TREES.clear()
    _TREES[text] = tree
    return tree


def read_source(path: Path, file: str) -> str:
    """The text of a model source (a regular file only, opened through :mod:`skdbg.parsers.fsguard`);
    :class:`ParseError` naming ``file`` when it cannot be read or is not UTF-8."""
    try:
        raw = read_regular(path, what="a Python model source")
    except ParseError as exc:
        # named as the caller names it (relative to the scene); a failed read stays a ReadFailure
        cls = ReadFailure if isinstance(exc, ReadFailure) else ParseError
        raise cls(file, exc.expected, got=exc.got) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(file, "a UTF-8 Python model source", got=str(exc)) from None


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


def import_map(tree: ast.AST) -> dict[str, str]:
    """Local name → dotted module path, from every absolute ``import``/``from … import`` in the file."""
    return _imports_of(n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))


def _imports_of(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """The import map of these import statements, taken in order (a later one rebinds a name)."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split(".", 1)[0]
                    out[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def resolve(spelling: str, imports: Mapping[str, str]) -> str | None:
    """The dotted path a callee spelling names, through the file's imports (None: unknown origin)."""
    head, _, rest = spelling.partition(".")
    base = imports.get(head)
    if base is None:
        if head not in _IMPLICIT:
            return None
        base = head
    return f"{base}.{rest}" if rest else base


def _npu_marker_kind(callee: str) -> str | None:
    owner, _, func = callee.rpartition(".")
    if func not in (BEGIN, END):
        return None
    if owner == "torch.npu" or owner == "torch_npu.npu" or owner.startswith("torch_npu.npu."):
        return "begin" if func == BEGIN else "end"
    return None


def _argument(call: ast.Call, keyword: str | None) -> tuple[ast.expr | None, bool]:
    """The scope argument (first positional, else the keyword) and whether it is missing."""
    if call.args:
        return call.args[0], False
    for kw in call.keywords:
        if kw.arg is not None and (keyword is None or kw.arg == keyword):
            return kw.value, False
    return None, True


class MarkerScan:
    """Every marker call of one parsed source, in source order, plus the look-alikes that are not markers."""

    def __init__(self, tree: ast.Module, lines: Sequence[str], file: str) -> None:
        self.file = file
        self.tree = tree
        self.lines = list(lines)
        #: the one traversal of the tree (imports, calls, statement structure), shared with
        #: :class:`MarkerSource` so a proposal built on this scan walks nothing again
        self.index = index = _TreeIndex(tree)
        self.imports = index.imports
        found: list[MarkerCall] = []
        ignored: list[Ignored] = []
        for node, stmt in index.candidates():
            spelling = _dotted(node.func)
            if spelling is None:
                continue
            callee = resolve(spelling, self.imports)
            last = (callee or spelling).rsplit(".", 1)[-1]
            if last not in _MARKER_FUNCS:
                continue
            kind: str | None = None
            if callee is not None:
                kind = "ge" if callee in GE_CALLEES else _npu_marker_kind(callee)
            if kind is None:
                if last != GE_FUNC or "scope" in spelling.split("."):
                    origin = f"resolves to {callee}" if callee else "is not imported from torch_npu/torchair"
                    ignored.append(Ignored(node.lineno, spelling, f"{spelling} {origin}: not the scope API"))
                continue
            found.append(_marker(node, kind, callee or spelling, spelling, stmt, self.lines))
        found.sort(key=lambda m: (m.line, m.arg_col or 0))
        self.markers = [m for m in found if m.kind != "ge"]
        self.ge = [m for m in found if m.kind == "ge"]
        self.ignored = sorted(ignored, key=lambda i: i.line)
        self._marker_stmts = {id(m.stmt) for m in self.markers if m.direct}

    @cached_property
    def _simple(self) -> list[tuple[int, int]]:
        """(first, last line) of every simple (body-less) statement that is not a marker."""
        return sorted(
            (n.lineno, n.end_lineno or n.lineno) for n in self.index.simple if id(n) not in self._marker_stmts
        )

    @cached_property
    def _stmt_lines(self) -> list[int]:
        return [a for a, _ in self._simple]

    # ------------------------------------------------------------------ questions

    def begun_names(self) -> set[str]:
        """Scope names opened by a string literal in either form (``None`` scopes are no names)."""
        return {m.name for m in (*self.markers, *self.ge) if m.kind != "end" and m.name is not None}

    def computed(self) -> list[MarkerCall]:
        """Markers whose scope argument is not a literal (cannot be matched statically)."""
        return [m for m in (*self.markers, *self.ge) if m.literal is None]

    def string_none(self) -> list[MarkerCall]:
        """Markers passing the string ``"None"`` (T8)."""
        return [m for m in (*self.markers, *self.ge) if m.string_none]

    def spelling(self, kind: str) -> str:
        """How this file spells the npugraph_ex ``begin``/``end`` call (aliases kept), for generated edits."""
        func = BEGIN if kind == "begin" else END
        same = next((m.spelling for m in self.markers if m.kind == kind), None)
        if same is not None:
            return same
        other = next((m.spelling for m in self.markers), None)
        if other is not None and "." in other:
            return other.rsplit(".", 1)[0] + "." + func
        return f"{NPU_OWNERS[0]}.{func}"

    def call_text(self, kind: str, arg: str) -> str:
        """The source text of a marker call with argument text ``arg`` (``None``, ``"name"``)."""
        return f"{self.spelling(kind)}({arg})"

    def layout(self) -> list[tuple[int, tuple[str, str | None, bool]]]:
        """(non-marker statements before it, key) of every npugraph_ex marker: where the markers sit
        relative to the program, independent of line numbers (two sources differing only in their
        markers have equal non-marker statements)."""
        return [(bisect.bisect_left(self._stmt_lines, m.line), m.key) for m in self.markers]

    def line_after(self, index: int) -> int:
        """The line right after the ``index``-th non-marker simple statement (1 before the first)."""
        return self._simple[index - 1][1] + 1 if 0 < index <= len(self._simple) else 1

    def program(self) -> str:
        """The syntax tree without the direct marker statements: what the edits must leave unchanged."""
        at = {(m.stmt.lineno, m.stmt.col_offset) for m in self.markers if m.direct and m.stmt is not None}
        tree = copy.deepcopy(self.tree)
        for owner in ast.walk(tree):
            for name, value in ast.iter_fields(owner):
                if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                    setattr(owner, name, [v for v in value if (v.lineno, v.col_offset) not in at])
        return ast.dump(tree)

    def balance(self) -> tuple[int, str] | None:
        """(line, why) of the first LIFO violation of the npugraph_ex markers, None when balanced."""
        return balance_problem(self.markers)


#: node types that hold no call and no statement: the traversal does not descend into them
_LEAVES = (
    ast.Name,
    ast.Constant,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.boolop,
    ast.alias,
)
_MARKER_FUNCS = frozenset({BEGIN, END, GE_FUNC})


class _TreeIndex:
    """What every reader of a model source asks of its tree, gathered in one traversal.

    Why: the marker scan (gate F8, ``verify``), the proposal's statement structure and its §4.6 call
    inference each used to walk the whole tree (``ast.walk``/``iter_child_nodes``, one generator per
    node); on a 2,700-line model that was three walks of 25k nodes. This walk skips the leaves
    (names, constants, contexts, operators) and records:

    * ``imports``: local name → dotted module path, as :func:`import_map` (same overwrite order);
    * ``calls``: every call with its enclosing statement, in the order of the marker scan's
      traversal (depth first, last child first: ties of the marker sort keep their order);
    * ``simple``: the body-less statements; ``parent``: statement → (its statement list, owner);
      ``up``: statement → enclosing statement; ``depth``: statement nesting (1 = module level).
    """

    __slots__ = ("calls", "depth", "imports", "parent", "simple", "up")

    #: fields that hold only names, numbers, flags or leaf nodes in every Python's grammar (identifiers,
    #: ``ctx``, operators, import aliases): the walk never descends from them, so it does not read them
    _NO_CHILDREN = frozenset(
        {
            "arg", "attr", "conversion", "ctx", "id", "is_async", "kind", "kwd_attrs", "level", "module",
            "name", "names", "op", "ops", "rest", "simple", "tag", "type_comment",
        }
    )  # fmt: skip

    def __init__(self, tree: ast.AST) -> None:
        calls: list[tuple[ast.Call, ast.stmt | None]] = []
        simple: list[ast.stmt] = []
        parent: dict[ast.stmt, tuple[list[ast.stmt], ast.AST]] = {}
        up: dict[ast.stmt, ast.stmt | None] = {}
        depth: dict[ast.stmt, int] = {}
        imports: list[tuple[int, int, int, ast.Import | ast.ImportFrom]] = []
        stmt_t, call_t = ast.stmt, ast.Call
        import_t = (ast.Import, ast.ImportFrom)
        # type → role, filled on first sight (the roles depend on the type only); type → its fields
        # that may hold a child
        roles: dict[type, int] = {}
        role_of = roles.get
        walked: dict[type, tuple[str, ...]] = {}
        no_children = self._NO_CHILDREN
        stack: list[tuple[ast.AST, ast.stmt | None, int]] = [(tree, None, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            node, stmt, level = pop()
            if isinstance(node, stmt_t):
                up[node] = stmt
                depth[node] = depth[stmt] + 1 if stmt is not None else 1
                stmt = node
                if isinstance(node, import_t):
                    imports.append((level, node.lineno, node.col_offset, node))
                if not hasattr(node, "body"):
                    simple.append(node)
            elif type(node) is call_t:
                calls.append((node, stmt))
            level += 1
            names = walked.get(type(node))
            if names is None:
                names = walked[type(node)] = tuple(f for f in node._fields if f not in no_children)
            for name in names:
                value: Any = getattr(node, name, None)  # a node, a list, a name, a number or None
                t = type(value)
                if t is list:
                    if value and isinstance(value[0], stmt_t):
                        for child in value:
                            parent[child] = (value, node)
                    for child in value:
                        r = role_of(type(child))
                        if r is None:
                            r = roles[type(child)] = _role(child)
                        if r:
                            push((child, stmt, level))
                else:
                    r = role_of(t)
                    if r is None:
                        r = roles[t] = _role(value)
                    if r:
                        push((value, stmt, level))
        self.calls = calls
        self.simple = simple
        self.parent = parent
        self.up = up
        self.depth = depth
        # ast.walk (breadth first) order: by tree level, then left to right — a later import of the
        # same local name wins, as in import_map
        imports.sort(key=lambda t: t[:3])
        self.imports = _imports_of(t[3] for t in imports)

    def candidates(self) -> Iterator[tuple[ast.Call, ast.stmt | None]]:
        """The calls whose callee can resolve to a marker function's name: ``….<marker name>(…)``,
        or a bare name that is a marker name or an imported one (resolved through the imports)."""
        imported = self.imports
        for node, stmt in self.calls:
            func = node.func
            if type(func) is ast.Attribute:
                if func.attr in _MARKER_FUNCS:
                    yield node, stmt
            elif type(func) is ast.Name and (func.id in _MARKER_FUNCS or func.id in imported):
                yield node, stmt

    def chain(self, st: ast.stmt) -> list[ast.stmt]:
        """Enclosing statements from the outermost down to ``st``."""
        out = [st]
        cur = self.up.get(st)
        while cur is not None:
            out.append(cur)
            cur = self.up.get(cur)
        return out[::-1]


def _role(value: object) -> int:
    """1 when the traversal descends into ``value`` (a node that may hold a call or a statement),
    else 0 (a leaf node, or a plain value: str, int, None); the same for every value of its type."""
    return int(isinstance(value, ast.AST) and not isinstance(value, _LEAVES))


def _marker(
    call: ast.Call, kind: str, callee: str, spelling: str, stmt: ast.stmt | None, lines: Sequence[str]
) -> MarkerCall:
    arg, missing = _argument(call, "scope" if kind == "ge" else None)
    name: str | None = None
    is_none = False
    literal: str | None = None
    col: int | None = None
    end_col: int | None = None
    if (
        arg is not None
        and isinstance(arg, ast.Constant)
        and (arg.value is None or isinstance(arg.value, str))
    ):
        is_none = arg.value is None
        name = arg.value if isinstance(arg.value, str) else None
        literal = repr(arg.value)
        if arg.lineno == arg.end_lineno and 0 < arg.lineno <= len(lines):
            col, end_col = arg.col_offset, arg.end_col_offset
            literal = _slice(lines[arg.lineno - 1], col, end_col) or literal
    expr = None if arg is None or literal is not None else ast.unparse(arg)
    direct = isinstance(stmt, ast.Expr) and stmt.value is call
    line = stmt.lineno if direct and stmt is not None else call.lineno
    end_line = (stmt.end_lineno if direct and stmt is not None else call.end_lineno) or line
    return MarkerCall(
        kind=kind,
        line=line,
        end_line=end_line,
        name=name,
        is_none=is_none,
        literal=literal if not missing else "",
        arg_col=col,
        arg_end_col=end_col,
        direct=direct,
        callee=callee,
        spelling=spelling,
        missing=missing,
        expr=expr,
        stmt=stmt,
    )


def _slice(text: str, col: int | None, end_col: int | None) -> str | None:
    """``ast`` columns are UTF-8 byte offsets; slice the line accordingly."""
    if col is None or end_col is None:
        return None
    raw = text.encode("utf-8")
    return raw[col:end_col].decode("utf-8", errors="replace")


#: scans already made, by (text, file name): one analysis asks about the same model source from the
#: input check, the gate (F8) and the proposal — it is parsed once (bounded: a TUI session opens few)
_SCANS: dict[tuple[str, str], MarkerScan] = {}
_SCANS_MAX = 4


def scan_text(text: str, file: str = "<source>") -> MarkerScan:
    """Parse ``text`` and collect its markers; :class:`ParseError` (file, line) when it is not Python.

    The scan is shared by every caller asking about the same (text, file): it is never modified."""
    key = (text, file)
    hit = _SCANS.get(key)
    if hit is None:
        hit = MarkerScan(parse_source(text, file), text.splitlines(), file)
        if len(_SCANS) >= _SCANS_MAX:
            _SCANS.clear()
        _SCANS[key] = hit
    return hit


def read_markers(path: Path, file: str) -> MarkerScan:
    """Read and scan a model source file (``file`` is the name used in messages)."""
    return scan_text(read_source(path, file), file)


# ------------------------------------------------------------------------------------------ balance


def balance_problem(markers: Sequence[MarkerCall]) -> tuple[int, str] | None:
    """Every ``end`` closes the innermost open scope of the identical argument; nothing stays open
    (§4.5.1 "must be called in pairs", LIFO). Returns (line, why) of the first violation."""
    stack: list[MarkerCall] = []
    for m in markers:
        if m.kind == "ge":
            continue
        if m.kind == "begin":
            stack.append(m)
            continue
        if not stack:
            return m.line, f"line {m.line}: {m.label} without a begin"
        top = stack.pop()
        if top.key[1:] != m.key[1:]:
            return m.line, f"line {m.line}: {m.label} closes {top.label} of line {top.line}"
    if stack:
        return stack[-1].line, f"line {stack[-1].line}: {stack[-1].label} is never closed"
    return None


def balanced(text: str) -> bool:
    """True when ``text`` parses and its npugraph_ex markers are balanced (LIFO, identical names)."""
    try:
        return scan_text(text).balance() is None
    except ParseError:
        return False


# ------------------------------------------------------------------------------------------ mechanism


def classify_mechanism(old: MarkerScan, new: MarkerScan) -> str | None:
    """The §4.5.1 mechanism NEW's markers implement relative to OLD's (None: no marker change).

    A: more ``None`` scopes begun; C: a new non-``None`` name begun (the ``.pre``/``.post`` halves);
    B: the same names, but begun more often or moved relative to the program (closed and reopened —
    moving the begin or end marker past the unit is the no-empty-pair variant)."""
    old_names = Counter(m.key for m in old.markers if m.kind == "begin")
    new_names = Counter(m.key for m in new.markers if m.kind == "begin")
    none_key = ("begin", None, True)
    if new_names[none_key] > old_names[none_key]:
        return EXPLICIT_NONE
    if any(k != none_key and k not in old_names for k in new_names):
        return SPLIT
    if any(new_names[k] < n for k, n in old_names.items()):
        return None  # a scope lost its markers: no exclusion mechanism removes a named scope
    if any(new_names[k] > n for k, n in old_names.items()):
        return CLOSE_REOPEN
    # a moved marker: only comparable when nothing but markers changed
    if new.layout() != old.layout() and new.program() == old.program():
        return CLOSE_REOPEN
    return None


# ------------------------------------------------------------------------------------------ edits


def edit_order_problem(edits: Iterable[tuple[str, int, str]]) -> tuple[int, str] | None:
    """(index, why) of the first edit that breaks the analysis-json.md order, None when all are fine.

    Items are ``(file, line, op)``. Per file the key ``(line, insert < replace|delete)`` must strictly
    ascend: an insert before line L then a replace/delete of L is fine; two inserts before L (no
    defined order) or two changes of L overlap."""
    last: dict[str, tuple[int, int]] = {}
    for i, (file, line, op) in enumerate(edits):
        if op not in _OP_RANK:
            return i, f"unknown op {op!r} (one of {', '.join(EDIT_OPS)})"
        key = (line, _OP_RANK[op])
        prev = last.get(file)
        if prev is not None:
            if key == prev:
                return i, f"overlaps the previous edit of {file} at line {line}"
            if key < prev:
                return i, f"not in ascending line order (line {line} after line {prev[0]} of {file})"
        last[file] = key
    return None


def check_edits(edits: Sequence[EditLike], n_lines: int | None = None) -> None:
    """Raise :class:`EditError` unless the edits follow analysis-json.md (order, overlap, op) and, when
    ``n_lines`` is given, address the file: replace/delete within 1..n, insert within 1..n+1."""
    bad = edit_order_problem((e.file, int(e.line), e.op) for e in edits)
    if bad is not None:
        raise EditError(*bad)
    if n_lines is not None:
        for i, e in enumerate(edits):
            top = n_lines + 1 if e.op == "insert" else n_lines
            if not 1 <= e.line <= top:
                raise EditError(i, f"{e.op} at line {e.line} is outside 1..{top} of {e.file}")


def apply_edits(lines: Sequence[str], edits: Sequence[EditLike]) -> list[str]:
    """The file's lines after the edits (all of one file; checked first)."""
    check_edits(edits, len(lines))
    by_line: dict[int, list[EditLike]] = {}
    for e in edits:
        by_line.setdefault(e.line, []).append(e)
    out: list[str] = []
    for i in range(1, len(lines) + 2):
        keep = i <= len(lines)
        for e in by_line.get(i, ()):
            if e.op == "insert":
                out.extend(e.text.splitlines())
            elif e.op == "replace":
                out.extend(e.text.splitlines())
                keep = False
            else:
                keep = False
        if keep:
            out.append(lines[i - 1])
    return out


def apply_edits_text(text: str, edits: Sequence[EditLike]) -> str:
    """``text`` after the edits; a final newline is kept when the original had one."""
    out = apply_edits(text.splitlines(), edits)
    tail = "\n" if text.endswith(("\n", "\r")) or not text else ""
    return "\n".join(out) + (tail if out else "")


def unified_diff(rel: str, before: Sequence[str], after: Sequence[str]) -> str:
    return "\n".join(
        difflib.unified_diff(list(before), list(after), fromfile=f"a/{rel}", tofile=f"b/{rel}", lineterm="")
    )


def requote(literal: str | None, name: str) -> str:
    """A string literal for ``name`` in the quote style of ``literal`` (double quotes by default)."""
    q = '"'
    if literal and literal[0] in "\"'" and not literal.startswith(('"""', "'''")):
        q = literal[0]
    if q in name or "\\" in name or "\n" in name:
        return repr(name)
    return f"{q}{name}{q}"


def marker_text(kind: str, arg: str, owner: str = "torch.npu") -> str:
    """A npugraph_ex marker call (§4.5.1), e.g. ``torch.npu.super_kernel_scope_begin("blk")``; ``arg`` is
    the argument's source text (``None`` or a quoted name)."""
    return f"{owner}.{BEGIN if kind == 'begin' else END}({arg})"


def ge_scope_text(arg: str) -> str:
    """The GE-mode scope header (§4.5.2), e.g. ``with torchair.scope.super_kernel(None):``."""
    return f"with torchair.scope.super_kernel({arg}):"


# ------------------------------------------------------------------------------------------ declared change


def same_program(a: str, b: str) -> bool:
    """Equal up to comments and formatting: the syntax trees when both parse, else the token streams
    without comments and blank lines (a broken file is still compared, never guessed)."""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except (SyntaxError, ValueError):
        return _tokens(a) == _tokens(b)


def _tokens(text: str) -> list[tuple[int, str]] | str:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        return [
            (t.type, t.string)
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in skip
        ]
    except (tokenize.TokenError, SyntaxError):
        return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip())


def declared_mismatch(old_text: str, edits: Sequence[EditLike], new_text: str, file: str) -> Mismatch | None:
    """None when ``new_text`` is ``old_text`` with exactly the declared marker edits (comments and
    formatting aside); else where and how the materialised source differs (§6.3: such an attempt is
    ``invalid``, not ``failed``). Raises :class:`EditError` when the declared edits cannot be applied."""
    expected = apply_edits_text(old_text, edits)
    if same_program(expected, new_text):
        return None
    want = _scan_or_mismatch(expected, file, "the declared change")
    if isinstance(want, Mismatch):
        return want
    got = _scan_or_mismatch(new_text, file, f"{file} (the declared change parses)")
    if isinstance(got, Mismatch):
        return got
    return _first_marker_difference(want, got, file) or _first_line_difference(expected, new_text, file)


def _scan_or_mismatch(text: str, file: str, what: str) -> MarkerScan | Mismatch:
    """The scan of ``text``, or a mismatch saying that ``what`` does not parse (with its line)."""
    try:
        return scan_text(text, file)
    except ParseError as exc:
        return Mismatch(exc.line, f"{what} does not parse ({exc})")


def _first_marker_difference(want: MarkerScan, got: MarkerScan, file: str) -> Mismatch | None:
    """The first marker the NEW source lacks, adds or changes relative to the declared result."""
    wl, gl = want.layout(), got.layout()
    ops = difflib.SequenceMatcher(a=wl, b=gl, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        w = want.markers[i1] if i1 < i2 else None
        g = got.markers[j1] if j1 < j2 else None
        if g is None:
            assert w is not None
            prev = got.markers[j1 - 1].end_line if j1 > 0 else 0
            line = max(got.line_after(wl[i1][0]), prev + 1)
            detail = f"{file}:{line}: the declared {w.label} is missing"
        elif w is None:
            detail, line = f"{file}:{g.line}: {g.label} is not part of the declared change", g.line
        else:
            detail, line = f"{file}:{g.line}: declared {w.label}, found {g.label}", g.line
            if w.is_none and g.string_none:
                detail += ' — the string "None" is an ordinary scope named None, not the null exclusion (T8)'
            elif wl[i1][1] == gl[j1][1]:
                detail += " at another place in the program"
        bad = got.balance()
        if bad is not None:
            detail += f"; the materialised markers are unbalanced ({bad[1]})"
        return Mismatch(line, detail)
    return None


def _first_line_difference(expected: str, got: str, file: str) -> Mismatch:
    a, b = expected.splitlines(), got.splitlines()
    for tag, i1, _i2, j1, _j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        line = j1 + 1 if j1 < len(b) else len(b)
        want = a[i1].strip() if i1 < len(a) else "(end of file)"
        found = b[j1].strip() if j1 < len(b) else "(end of file)"
        return Mismatch(line, f"{file}:{line}: declared {want!r}, found {found!r} (outside the markers)")
    return Mismatch(None, f"{file} differs from the declared change")


def materialised_problem(old_text: str, new_text: str, mechanism: str, file: str) -> Mismatch | None:
    """Does ``new_text`` (the edited source) realise ``mechanism`` over ``old_text``? It must parse, its
    npugraph_ex markers must balance, no marker may pass the string ``"None"`` where the old source did
    not (T8), and the mechanism its markers implement must be the declared one."""
    new = _scan_or_mismatch(new_text, file, "the edited source")
    if isinstance(new, Mismatch):
        return new
    old = _scan_or_mismatch(old_text, file, "the source before the edits")
    if isinstance(old, Mismatch):
        return old
    bad = new.balance()
    if bad is not None:
        return Mismatch(bad[0], f"{file}: scope markers unbalanced after the edits: {bad[1]}")
    if new.program() != old.program():
        return Mismatch(
            None,
            f"{file}: the edits change statements other than the scope markers (an exclusion changes fusion "
            "participation only, §4.2; a marker written as a string or comment is no marker)",
        )
    t8 = new.string_none()
    if t8 and not old.string_none():  # a scope already named "None" may legitimately be closed/reopened
        m = t8[0]
        return Mismatch(
            m.line, f'{file}:{m.line}: {m.label} passes the string "None", not the null literal (T8)'
        )
    found = classify_mechanism(old, new)
    if found != mechanism:
        return Mismatch(
            None,
            f"{file}: the edited markers implement {found or 'no marker change'}, declared {mechanism} "
            "(commented-out or string-literal markers never count)",
        )
    return None


# ------------------------------------------------------------------------------------------ structure


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


class MarkerSource:
    """A model source file with its markers and statement structure (who encloses whom, which
    statement list holds a marker). Raises :class:`ParseError` on unreadable or non-Python text."""

    def __init__(self, path: Path, rel: str, *, text: str | None = None) -> None:
        self.path = path
        self.rel = rel
        self.text = read_source(path, rel) if text is None else text
        self.scan = scan_text(self.text, rel)
        self.tree = self.scan.tree
        self.lines = self.text.splitlines()
        #: the scan's one traversal (statement lists, enclosing statements, nesting depth)
        self.index = self.scan.index
        self._parent = self.index.parent
        #: the direct marker statements (§4.5.1), by statement
        self._by_stmt: dict[int, MarkerCall] = {
            id(m.stmt): m for m in self.scan.markers if m.direct and m.stmt is not None
        }
        self.markers = [m for m in self.scan.markers if m.direct]

    def marker_of(self, st: ast.stmt) -> MarkerCall | None:
        return self._by_stmt.get(id(st))

    def chain(self, st: ast.stmt) -> list[ast.stmt]:
        """Enclosing statements from the outermost down to ``st``."""
        return self.index.chain(st)

    def body_of(self, st: ast.stmt) -> list[ast.stmt]:
        return self._parent[st][0]

    def innermost(self, line: int) -> ast.stmt | None:
        """The deepest statement whose lines hold ``line`` (of equally deep ones, the first)."""
        return self._innermost.get(line)

    @cached_property
    def _innermost(self) -> dict[int, ast.stmt]:
        """Line → innermost statement, built once: shallow statements first, deeper ones overwrite,
        an equally deep later one does not (the first statement of a line wins)."""
        depth = self.index.depth
        best: dict[int, ast.stmt] = {}
        level: dict[int, int] = {}
        for st in sorted(depth, key=lambda s: (depth[s], s.lineno, s.col_offset)):
            d = depth[st]
            for ln in range(st.lineno, (st.end_lineno or st.lineno) + 1):
                if level.get(ln, 0) < d:
                    level[ln] = d
                    best[ln] = st
        return best

    def func_of(self, st: ast.stmt) -> str | None:
        for s in reversed(self.chain(st)):
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef):
                return s.name
        return None

    def indent(self, line: int) -> str:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return text[: len(text) - len(text.lstrip())]

    def statement_lines(self, line: int) -> tuple[int, int] | None:
        """First and last line of the innermost simple statement holding ``line``."""
        st = self.innermost(line)
        if st is None:
            return None
        return st.lineno, st.end_lineno or st.lineno

    def string_none_markers(self) -> list[MarkerCall]:
        """Markers whose argument is the *string* ``"None"`` — an ordinary named scope (T8)."""
        return [m for m in self.markers if m.string_none]

    def regions(self, name: str) -> tuple[list[Region], list[str]]:
        """Balanced begin/end pairs of ``name`` (LIFO within one statement list) and problems found
        (unmatched begin/end, a pair split across statement lists)."""
        problems: list[str] = []
        found: list[Region] = []
        named = [m for m in self.markers if m.name == name]
        seen: set[int] = set()
        bodies: list[list[ast.stmt]] = []
        for m in named:
            assert m.stmt is not None
            body = self.body_of(m.stmt)
            if id(body) not in seen:
                seen.add(id(body))
                bodies.append(body)
        paired: set[int] = set()
        for body in bodies:
            stack: list[tuple[int, MarkerCall]] = []
            for i, st in enumerate(body):
                mk = self.marker_of(st)
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
                    f"{self.rel}:{m.line}: {m.label} has no matching "
                    f"{'end' if m.kind == 'begin' else 'begin'} in the same statement list"
                )
        found.sort(key=lambda r: r.begin.line)
        return found, problems

    def call_text(self, kind: str, arg: str) -> str:
        """A marker call in this file's own spelling (see :meth:`MarkerScan.spelling`)."""
        return self.scan.call_text(kind, arg)

    def replace_arg(self, m: MarkerCall, new_literal: str) -> str | None:
        """The marker's line with its argument replaced (None when the argument spans lines)."""
        if m.arg_col is None or m.arg_end_col is None or m.line != m.end_line:
            return None
        raw = self.lines[m.line - 1].encode("utf-8")
        return raw[: m.arg_col].decode() + new_literal + raw[m.arg_end_col :].decode()

    def literal_of(self, m: MarkerCall) -> str:
        """The marker's argument as written (quote style kept)."""
        return m.literal if m.literal else requote(None, m.name or "")


__all__ = [
    "BEGIN",
    "CLOSE_REOPEN",
    "END",
    "EXPLICIT_NONE",
    "SPLIT",
    "EditError",
    "EditLike",
    "Ignored",
    "MarkerCall",
    "MarkerEdit",
    "MarkerScan",
    "MarkerSource",
    "Mismatch",
    "apply_edits",
    "apply_edits_text",
    "balance_problem",
    "balanced",
    "check_edits",
    "classify_mechanism",
    "declared_mismatch",
    "edit_order_problem",
    "ge_scope_text",
    "marker_text",
    "import_map",
    "materialised_problem",
    "parse_source",
    "read_markers",
    "read_source",
    "Region",
    "requote",
    "resolve",
    "same_program",
    "scan_text",
    "unified_diff",
]
