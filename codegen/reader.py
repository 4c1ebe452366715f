"""Kernel-source reader: a tokenizer-based finder of AscendC ``__global__`` entries (spec §1.4).

Upstream finds entries with one regex, which silently misses ``f(void)`` kernels, attributes, parameters
with parentheses and mis-reads kernels defined inside macros. This reader tokenizes the source first
(comments, string/char literals, preprocessor lines with continuations are single tokens), so braces in
comments or strings never end a body, and every ``__global__`` it cannot turn into an entry becomes a
:class:`Gap` with file:line instead of disappearing.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

# one alternative per token kind; order matters (comments before punctuation, strings before idents)
_TOKEN_RE = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<badcomment>/\*)
  | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[\w.]|[eEpP][+-])*)
  | (?P<ws>[ \t\r\f\v]+|\n)
  | (?P<punct>::|->|\.\.\.|\[\[|\]\]|[{}()\[\]<>,;=*&:~!%^+\-/|?.#@$`'"\\])
    """,
    re.VERBOSE | re.DOTALL,
)

_NEWLINE_RE = re.compile(r"\n")

GLOBAL_QUALIFIERS = frozenset(
    {"__global__", "__aicore__", "__vector__", "__cube__", "__mix__", "__inline__", "inline"}
)
_ATTRIBUTE_WORDS = frozenset({"__attribute__", "alignas", "__declspec", "__launch_bounds__"})
_SPECIFIER_WORDS = frozenset({"static", "extern"})


class Token(NamedTuple):
    """One lexical token; ``kind`` is a group name of :data:`_TOKEN_RE` or ``preproc``.

    A named tuple, not a frozen dataclass: a file has hundreds of tokens and an asset thousands of
    files, and building a tuple costs a fraction of a frozen dataclass's per-field ``__setattr__``.
    """

    kind: str
    text: str
    start: int
    end: int
    line: int


@dataclass(frozen=True)
class Gap:
    """Something in the source the reader could not turn into an entry, with its location."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True)
class TemplateParam:
    decl: str  # declaration without its default, e.g. ``typename T``
    name: str


@dataclass(frozen=True)
class Param:
    """One kernel parameter.

    ``c_type`` is the C type alone (attributes removed): it feeds kind detection, metadata and the
    pybind wrappers, where an attribute would not compile (casts, ``sizeof``). ``decl_type`` is the text
    before the name as written, attributes in place (upstream's Args field type), and ``trailing`` the
    attributes written after the name; the Args field and the unpack line are rebuilt from those two so
    ``[[maybe_unused]] uint32_t n`` stays ``[[maybe_unused]] uint32_t n;`` (valid C++17).
    """

    name: str
    c_type: str
    default: str | None = None
    decl_type: str = ""
    trailing: str = ""
    attributes: tuple[str, ...] = ()

    @property
    def field_type(self) -> str:
        return self.decl_type or self.c_type


@dataclass(frozen=True)
class KernelEntry:
    """One ``__global__`` definition; offsets index the source text the reader was given."""

    name: str
    qualifiers: str
    params: tuple[Param, ...]
    template_params: tuple[TemplateParam, ...]
    extern_c: bool
    attributes: tuple[str, ...]
    start: int  # first character of the declaration (``template``/``extern``/first qualifier)
    body_open: int  # offset of ``{``
    body_close: int  # offset of the matching ``}``
    line: int
    body: str  # text between the braces, continuations and CRLF turned into plain newlines
    qualifier_macros: tuple[str, ...] = ()  # unknown identifiers before ``__global__`` (carried through)

    @property
    def uses_get_block_num(self) -> bool:
        return GET_BLOCK_NUM_RE.search(self.body) is not None


GET_BLOCK_NUM_RE = re.compile(r"AscendC\s*::\s*GetBlockNum\s*\(")
_CONTINUATION_RE = re.compile(r"\\[ \t\f\v\r]*(?:\n|$)")


@dataclass
class SourceReading:
    file: str
    text: str
    entries: list[KernelEntry] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    tokens: list[Token] = field(default_factory=list)
    # ``__global__`` occurrences that define no kernel (a declaration ending in ';', a preprocessor
    # line): not gaps, but the reason a file without entries is "no kernel definition found"
    non_definitions: list[Gap] = field(default_factory=list)

    def code_text(self) -> str:
        """The source with comments blanked (newlines kept), for signal scans that must ignore comments."""
        return _blank_spans(self.text, [(t.start, t.end) for t in self.tokens if t.kind == "comment"])


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character of the (ordered, disjoint) ``spans`` but newlines made a blank."""
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append("\n".join(" " * len(part) for part in text[start:end].split("\n")))
        last = end
    out.append(text[last:])
    return "".join(out)


#: the tokens without whitespace (``finditer`` skips it: every other character matches an alternative): a
#: ``#`` first tries the whole preprocessor line — it runs to the first newline not continued by a
#: backslash; like GCC and Clang, a backslash followed only by blanks or the \r of a CRLF file before the
#: newline still continues it — then the tokens of :data:`_TOKEN_RE`, then any other single character
#: (non-ASCII) as punctuation
_SCAN_RE = re.compile(
    r"(?P<preproc>\#(?:\\[ \t\f\v\r]*\n|\\.|[^\n\\])*)|"
    + _TOKEN_RE.pattern.replace(r"(?P<ws>[ \t\r\f\v]+|\n)", r"(?P<ws>(?!))")
    + r"|(?P<other>[^ \t\r\f\v\n])",
    re.VERBOSE | re.DOTALL,
)
_BLANKS = frozenset(" \t\r\f\v\n")
#: ``Token._make`` without its Python frame (``tuple.__new__`` on the subclass, all in C)
_new_token: Callable[[tuple[str, str, int, int, int]], Token] = partial(tuple.__new__, Token)
_LASTGROUP = attrgetter("lastgroup")
_START = re.Match.start
_END = re.Match.end
_GROUP = re.Match.group


def _line_start(text: str, prev_end: int, start: int) -> bool:
    """``#`` at ``start`` begins a line: only blanks since the previous token (or the text's start), and
    a newline among them unless nothing came before — a newline inside a comment or literal belongs to
    that token and never starts a line."""
    gap = text[prev_end:start]
    return (prev_end == 0 or "\n" in gap) and all(c in _BLANKS for c in gap)


def tokenize(text: str, file: str = "<source>") -> tuple[list[Token], list[Gap]]:
    """Split ``text`` into tokens (whitespace dropped); problems are gaps, never exceptions.

    Why one ``finditer`` and no whitespace tokens: the reader runs over every kernel file of an asset,
    and a Python ``match`` call per token, blanks included, was most of ``codegen adapt``'s time. The
    matches' kinds, offsets, texts and line numbers (from the newline offsets) are then taken with
    ``map`` over C functions, not a Python statement per token; only the rare tokens that change the
    scan (a ``#`` in mid-line, an unterminated comment or literal) are looked at one by one."""
    tokens: list[Token] = []
    gaps: list[Gap] = []
    lines_at = [-1, *(m.start() for m in _NEWLINE_RE.finditer(text))]  # bisect_left(lines_at, o) = line
    pos, prev_end = 0, 0
    while True:
        matches = list(_SCAN_RE.finditer(text, pos))
        kinds: list[str] = list(map(_LASTGROUP, matches))
        starts: list[int] = list(map(_START, matches))
        lines: list[int] = list(map(bisect_left, repeat(lines_at), starts))
        stop = kinds.index("badcomment") if "badcomment" in kinds else len(matches)
        hash_at = _mid_line_hash(text, kinds, matches, prev_end, stop)
        cut = stop if hash_at is None else hash_at  # the matches before it are tokens as they are
        hash_start = starts[cut] if hash_at is not None else 0
        kinds, starts, matches = kinds[:cut], starts[:cut], matches[:cut]
        if "other" in kinds:
            kinds = ["punct" if k == "other" else k for k in kinds]
        chunks: list[str] = list(map(_GROUP, matches))
        if '"' in chunks or "'" in chunks:
            for k, chunk in enumerate(chunks):
                if (chunk == '"' or chunk == "'") and kinds[k] == "punct":
                    gaps.append(Gap(file, lines[k], f"unterminated {chunk} literal"))
        tokens.extend(
            map(_new_token, zip(kinds, chunks, starts, map(_END, matches), lines[:cut], strict=True))
        )
        if hash_at is None:
            if stop < len(lines):
                gaps.append(
                    Gap(file, lines[stop], "unterminated /* comment; the rest of the file is not read")
                )
            return tokens, gaps
        # a '#' in the middle of a line is punctuation; scanning resumes right after it
        tokens.append(Token("punct", "#", hash_start, hash_start + 1, lines[cut]))
        pos = prev_end = hash_start + 1


def _mid_line_hash(
    text: str, kinds: list[str], matches: list[re.Match[str]], prev_end: int, stop: int
) -> int | None:
    """Index of the first ``preproc`` match before ``stop`` whose ``#`` does not begin a line, if any.

    ``prev_end`` is where the token before ``matches[0]`` ended (0 at the start of the text)."""
    i = -1
    while True:
        try:
            i = kinds.index("preproc", i + 1, stop)
        except ValueError:
            return None
        if not _line_start(text, matches[i - 1].end() if i else prev_end, matches[i].start()):
            return i


#: the only tokens that decide which characters are comments: comments, string and character literals
#: (without their prefix letters, which change no character's status) and ``#`` (a preprocessor line
#: when it begins a line: it holds any ``//`` or ``/*`` of that line). Each starts with one of
#: ``/ " ' #``, and no identifier, number or punctuation token of :data:`_SCAN_RE` contains one of those
#: characters, so a search that skips everything else stops exactly where :func:`tokenize` starts them
_COMMENT_SCAN_RE = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<badcomment>/\*)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|(?P<hash>\#)""",
    re.DOTALL,
)
_PREPROC_RE = re.compile(r"\#(?:\\[ \t\f\v\r]*\n|\\.|[^\n\\])*", re.DOTALL)
_LINE_BLANKS = " \t\r\f\v"


def comment_free_text(text: str) -> str:
    """``text`` with its comments blanked exactly as ``read_source(text).code_text()`` blanks them.

    Why a second scanner: ``codegen adapt`` classifies every file it wrote, to prove the output is in
    ``current-sk-bind`` form; that check only needs to know which characters are comments, and finding
    the few comment/literal/``#`` tokens costs a small part of tokenizing the whole file (the output is
    the input plus a block that repeats its body). ``tests/codegen/test_tokenize_equivalence.py`` checks
    the two agree on random sources.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    search = _COMMENT_SCAN_RE.search
    while (m := search(text, pos)) is not None:
        kind = m.lastgroup
        start, pos = m.span()
        if kind == "comment":
            spans.append((start, pos))
        elif kind == "badcomment":
            break  # tokenize stops here: nothing after it is a comment token
        elif kind == "hash":
            # a '#' begins a preprocessor line when only blanks precede it on its line (see _line_start:
            # the last newline before it cannot belong to an earlier token, since tokens holding a
            # newline end in a non-blank or would have swallowed the '#')
            nl = text.rfind("\n", 0, start)
            if not text[nl + 1 : start].strip(_LINE_BLANKS):
                pre = _PREPROC_RE.match(text, start)
                assert pre is not None  # '#' alone matches
                pos = pre.end()
    return _blank_spans(text, spans)


def _skip_balanced(toks: list[Token], i: int, open_: str, close: str) -> int:
    """Index just past the group opened at ``toks[i]`` (which is ``open_``); -1 if unbalanced."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


_OPENERS = frozenset({"(", "<", "[", "{", "[["})
_CLOSERS = frozenset({")", ">", "]", "}", "]]"})


def _split_top(toks: list[Token]) -> list[list[Token]]:
    """Split at commas outside (), <>, [], [[ ]], {}."""
    pieces: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.text in _OPENERS and t.kind == "punct":
            depth += 1
        elif t.text in _CLOSERS and t.kind == "punct":
            depth -= 1
        if t.text == "," and depth == 0:
            pieces.append([])
        else:
            pieces[-1].append(t)
    return pieces if pieces != [[]] else []


def join_tokens(toks: list[Token], text: str) -> str:
    """Token texts joined with one space wherever the source had whitespace/comments between them."""
    out: list[str] = []
    for k, t in enumerate(toks):
        if k and toks[k - 1].end != t.start:
            out.append(" ")
        out.append(t.text)
    return "".join(out)


def _parse_template(toks: list[Token], text: str) -> tuple[TemplateParam, ...]:
    params: list[TemplateParam] = []
    for piece in _split_top(toks):
        decl = piece
        for k, t in enumerate(piece):
            if t.text == "=" and t.kind == "punct":
                decl = piece[:k]
                break
        idents = [t for t in decl if t.kind == "ident"]
        name = ""
        for k, t in enumerate(decl):
            if t.text in {"typename", "class"} and k + 1 < len(decl) and decl[k + 1].kind == "ident":
                name = decl[k + 1].text
        if not name and idents:
            name = idents[-1].text
        params.append(TemplateParam(join_tokens(decl, text), name))
    return tuple(params)


def read_source(text: str, file: str = "<source>") -> SourceReading:
    """Tokenize ``text`` and find every ``__global__`` definition; what cannot be read becomes a gap."""
    tokens, gaps = tokenize(text, file)
    reading = SourceReading(file, text, tokens=tokens, gaps=gaps)
    code = [t for t in tokens if t.kind != "comment"]
    _preprocessor_globals(code, reading)
    i = 0
    while i < len(code):
        t = code[i]
        if t.kind == "ident" and t.text == "__global__":
            entry, nxt = _read_entry(code, i, text, reading)
            if entry is not None:
                reading.entries.append(entry)
            i = max(nxt, i + 1)
        else:
            i += 1
    return reading


_GLOBAL_WORD_RE = re.compile(r"\b__global__\b")
_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_]\w*)")


def _preprocessor_globals(code: list[Token], reading: SourceReading) -> None:
    """``__global__`` on a preprocessor line: a kernel inside a macro, a qualifier macro, or nothing.

    A ``#define`` whose text has a body (``{``) defines a kernel the reader cannot see: a gap. A
    ``#define NAME … __global__ …`` without a body is a qualifier macro: if ``NAME`` is used in the code,
    the kernel using it is invisible too (gap at the use); if it is never used, or ``__global__`` sits
    on another directive (``#if``, ``#pragma``…), no kernel is defined there.
    """
    file = reading.file
    for t in code:
        if t.kind != "preproc" or not _GLOBAL_WORD_RE.search(t.text):
            continue
        m = _DEFINE_RE.match(t.text)
        if m and m.group(1) in GLOBAL_QUALIFIERS:
            m = None  # ``#define __global__`` (a CPU-debug stub) defines the word, not a kernel
        if m and "{" in t.text:
            reading.gaps.append(
                Gap(
                    file, t.line, "__global__ kernel defined inside a #define macro; expand the macro by hand"
                )
            )
            continue
        name = m.group(1) if m else None
        use = next((u for u in code if u.kind == "ident" and u.text == name), None) if name else None
        if use is not None:
            reading.gaps.append(
                Gap(
                    file,
                    use.line,
                    f"kernel qualifiers come from macro {name} (#define at line {t.line}, holding "
                    "__global__); the declaration using it is not read: expand the macro by hand",
                )
            )
            continue
        reading.non_definitions.append(Gap(file, t.line, "__global__ appears only on a preprocessor line"))


def _decl_start(code: list[Token], i: int) -> int:
    """Index of the first token of the declaration containing ``code[i]``."""
    j = i - 1
    while j >= 0:
        t = code[j]
        if t.kind == "preproc" or t.text in {";", "{", "}"}:
            break
        j -= 1
    return j + 1


@dataclass
class _Specifiers:
    """What precedes the return type: template list, qualifiers, attributes, carried macros."""

    template_params: tuple[TemplateParam, ...] = ()
    extern_c: bool = False
    attributes: list[str] = field(default_factory=list)
    qualifiers: list[str] = field(default_factory=list)
    macros: list[str] = field(default_factory=list)
    end: int = 0  # index of the first token after the specifiers (the return type)


def _read_specifiers(code: list[Token], start: int, gi: int, text: str) -> _Specifiers | str:
    """The specifier run of the declaration whose ``__global__`` is ``code[gi]``, or why it is not one.

    An identifier the reader does not know that stands *before* ``__global__`` (and is not a macro call)
    is taken as a qualifier macro such as ``KERNEL_LINKAGE`` (``extern "C"``) or ``UT_STATIC``: the
    original declaration keeps it, the entry records it in ``qualifier_macros``.
    """
    spec = _Specifiers()
    j = start
    if code[j].text == "template" and j + 1 < len(code) and code[j + 1].text == "<":
        end = _skip_balanced(code, j + 1, "<", ">")
        if end < 0:
            return "unbalanced template parameter list"
        spec.template_params = _parse_template(code[j + 2 : end - 1], text)
        j = end
    while j < len(code):
        t = code[j]
        nxt = code[j + 1].text if j + 1 < len(code) else ""
        if t.text == "extern" and nxt == '"C"':
            spec.extern_c = True
            j += 2
        elif t.text in _ATTRIBUTE_WORDS and nxt == "(":
            end = _skip_balanced(code, j + 1, "(", ")")
            if end < 0:
                return f"unbalanced parentheses after {t.text}"
            spec.attributes.append(join_tokens(code[j:end], text))
            j = end
        elif t.text == "[[":
            end = _skip_balanced(code, j, "[[", "]]")
            if end < 0:
                return "unbalanced [[ attribute"
            spec.attributes.append(join_tokens(code[j:end], text))
            j = end
        elif t.text in GLOBAL_QUALIFIERS:
            end = j + 1
            if t.text == "__mix__" and nxt == "(":
                end = _skip_balanced(code, j + 1, "(", ")")
                if end < 0:
                    return "unbalanced __mix__( arguments"
            spec.qualifiers.append(join_tokens(code[j:end], text))
            j = end
        elif t.text in _SPECIFIER_WORDS:
            j += 1
        elif j < gi and t.kind == "ident" and t.text != "void" and nxt != "(":
            spec.macros.append(t.text)
            j += 1
        else:
            break
    if j <= gi:
        found = (
            f"macro call {code[j].text}(…)" if j + 1 < len(code) and code[j + 1].text == "(" else code[j].text
        )
        return f"unexpected {found!r} before __global__ (expected qualifiers, attributes or macro names)"
    if j >= len(code):
        return "__global__ outside a function declaration"
    spec.end = j
    return spec


def _read_entry(
    code: list[Token], gi: int, text: str, reading: SourceReading
) -> tuple[KernelEntry | None, int]:
    file, gaps = reading.file, reading.gaps
    start = _decl_start(code, gi)
    line = code[gi].line
    spec = _read_specifiers(code, start, gi, text)
    if isinstance(spec, str):
        gaps.append(Gap(file, line, spec))
        return None, gi + 1
    j = spec.end
    if code[j].text != "void":
        gaps.append(Gap(file, line, f"kernel return type must be void, found {code[j].text!r}"))
        return None, gi + 1
    j += 1
    if j >= len(code) or code[j].kind != "ident" or j + 1 >= len(code) or code[j + 1].text != "(":
        gaps.append(Gap(file, line, "expected a kernel name followed by '(' after void"))
        return None, gi + 1
    name = code[j].text
    pend = _skip_balanced(code, j + 1, "(", ")")
    if pend < 0:
        gaps.append(Gap(file, line, f"kernel {name}: unbalanced parameter list"))
        return None, gi + 1
    param_toks = code[j + 2 : pend - 1]
    k = pend
    while k < len(code) and code[k].text != "{" and code[k].text != ";":
        t = code[k]
        if t.text in _ATTRIBUTE_WORDS and k + 1 < len(code) and code[k + 1].text == "(":
            end = _skip_balanced(code, k + 1, "(", ")")
            if end < 0:
                break
            spec.attributes.append(join_tokens(code[k:end], text))
            k = end
        elif t.text == "\\":
            k += 1
        else:
            gaps.append(Gap(file, t.line, f"kernel {name}: unexpected {t.text!r} between ')' and '{{'"))
            return None, k
    if k >= len(code):
        gaps.append(Gap(file, line, f"kernel {name}: no body"))
        return None, k
    if code[k].text == ";":
        reading.non_definitions.append(
            Gap(file, line, f"__global__ {name} is only declared here (ends with ';')")
        )
        return None, k + 1
    bend = _skip_balanced(code, k, "{", "}")
    if bend < 0:
        gaps.append(Gap(file, line, f"kernel {name}: body has no matching closing brace"))
        return None, len(code)
    params = _parse_params(param_toks, text, file, line, name, gaps)
    if params is None:
        return None, bend
    open_tok, close_tok = code[k], code[bend - 1]
    body = _CONTINUATION_RE.sub("\n", text[open_tok.end : close_tok.start]).replace("\r\n", "\n")
    entry = KernelEntry(
        name=name,
        qualifiers=" ".join(spec.qualifiers),
        params=params,
        template_params=spec.template_params,
        extern_c=spec.extern_c,
        attributes=tuple(spec.attributes),
        start=code[start].start,
        body_open=open_tok.start,
        body_close=close_tok.start,
        line=line,
        body=body,
        qualifier_macros=tuple(spec.macros),
    )
    return entry, bend


def _attribute_groups(piece: list[Token]) -> list[tuple[int, int]] | str:
    """Token spans ``[a, b)`` of the attributes in one parameter (``[[…]]``, ``__attribute__((…))``)."""
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(piece):
        t = piece[k]
        if t.text == "[[":
            end = _skip_balanced(piece, k, "[[", "]]")
        elif t.text == "__attribute__" and k + 1 < len(piece) and piece[k + 1].text == "(":
            end = _skip_balanced(piece, k + 1, "(", ")")
        else:
            k += 1
            continue
        if end < 0:
            return f"unbalanced attribute {t.text}"
        if any(x.kind == "punct" and x.text in {";", "{", "}"} for x in piece[k:end]):
            return f"attribute {t.text} holds ';' or braces"
        spans.append((k, end))
        k = end
    return spans


def _parse_params(
    toks: list[Token], text: str, file: str, line: int, name: str, gaps: list[Gap]
) -> tuple[Param, ...] | None:
    pieces = _split_top(toks)
    if len(pieces) == 1 and [t.text for t in pieces[0]] == ["void"]:
        return ()  # f(void): no parameters (upstream skips such kernels silently)
    params: list[Param] = []
    for piece in pieces:
        if not piece:
            gaps.append(Gap(file, line, f"kernel {name}: empty parameter"))
            return None
        param = _parse_param(piece, text)
        if isinstance(param, str):
            gaps.append(Gap(file, piece[0].line, f"kernel {name}: {param}"))
            return None
        params.append(param)
    return tuple(params)


#: token texts after which a parameter needs the full reading (default, attribute, array, parentheses)
_NOT_PLAIN_PARAM = frozenset({"=", "[[", "__attribute__", "[", "("})


def _parse_param(piece: list[Token], text: str) -> Param | str:
    """One parameter: attributes set aside (kept for the Args field), then ``<type> <name> [= default]``."""
    if _NOT_PLAIN_PARAM.isdisjoint([t.text for t in piece]):
        # the common ``<type> <name>``: what the full reading below gives for it, without its steps
        if len(piece) < 2 or piece[-1].kind != "ident":
            return f"parameter {join_tokens(piece, text)!r} has no name"
        c_type = join_tokens(piece[:-1], text)
        return Param(name=piece[-1].text, c_type=c_type, decl_type=c_type)
    return _parse_param_full(piece, text)


def _parse_param_full(piece: list[Token], text: str) -> Param | str:
    default: str | None = None
    for k, t in enumerate(piece):
        if t.text == "=" and t.kind == "punct":
            default = join_tokens(piece[k + 1 :], text)
            piece = piece[:k]
            break
    spans = _attribute_groups(piece)
    if isinstance(spans, str):
        return f"parameter {join_tokens(piece, text)!r}: {spans}"
    inside = {k for a, b in spans for k in range(a, b)}
    plain = [t for k, t in enumerate(piece) if k not in inside]
    if any(t.text == "[" for t in plain):
        return "array parameter cannot be unpacked from an Args struct"
    if any(t.text == "(" for t in plain):
        return (
            f"parameter {join_tokens(piece, text)!r}: parentheses outside an attribute "
            "(function pointer, macro call) cannot be unpacked from an Args struct"
        )
    if len(plain) < 2 or plain[-1].kind != "ident":
        return f"parameter {join_tokens(piece, text)!r} has no name"
    name_tok = plain[-1]
    at = piece.index(name_tok)
    before = [s for s in spans if s[0] < at]
    after = [s for s in spans if s[0] > at]
    return Param(
        name=name_tok.text,
        c_type=join_tokens(plain[:-1], text),
        default=default,
        decl_type=join_tokens(piece[:at], text),
        trailing="".join(" " + join_tokens(piece[a:b], text) for a, b in after),
        attributes=tuple(join_tokens(piece[a:b], text) for a, b in before + after),
    )
