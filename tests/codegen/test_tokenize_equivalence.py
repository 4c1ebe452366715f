"""The one-pass tokenizer gives exactly the tokens and gaps of the reference per-token loop it replaced.

The reference is the earlier implementation, kept here verbatim in behaviour (a line-start flag, an
indentation check for ``#``, one ``match`` per token), so the reader's output — and with it ``codegen
adapt``'s byte-identical fidelity to upstream — cannot drift when the fast path changes.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.codegen.reader import (
    _TOKEN_RE,
    Gap,
    Token,
    _parse_param,
    _parse_param_full,
    comment_free_text,
    read_source,
    tokenize,
)

_INDENT_RE = re.compile(r"[ \t]*")
_PREPROC_RE = re.compile(r"#(?:\\[ \t\f\v\r]*\n|\\.|[^\n\\])*", re.DOTALL)


def reference(text: str, file: str = "<source>") -> tuple[list[Token], list[Gap]]:
    tokens: list[Token] = []
    gaps: list[Gap] = []
    pos, line, at_line_start = 0, 1, True
    n = len(text)
    while pos < n:
        if at_line_start:
            m_ws = _INDENT_RE.match(text, pos)
            assert m_ws is not None
            if m_ws.end() < n and text[m_ws.end()] == "#":
                m = _PREPROC_RE.match(text, m_ws.end())
                assert m is not None
                tokens.append(Token("preproc", m.group(), m.start(), m.end(), line))
                line += m.group().count("\n")
                pos = m.end()
                at_line_start = False
                continue
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            kind, end = "punct", pos + 1
        else:
            kind, end = m.lastgroup or "punct", m.end()
        if m is None or kind == "punct" and end == pos:
            end = pos + 1
        chunk = text[pos:end]
        if kind == "badcomment":
            gaps.append(Gap(file, line, "unterminated /* comment; the rest of the file is not read"))
            break
        if kind == "ws":
            if chunk == "\n":
                at_line_start = True
                line += 1
            pos = end
            continue
        if kind == "punct" and chunk in {'"', "'"}:
            gaps.append(Gap(file, line, f"unterminated {chunk} literal"))
        tokens.append(Token(kind, chunk, pos, end, line))
        line += chunk.count("\n")
        at_line_start = False
        pos = end
    return tokens, gaps


CASES = [
    '#include "kernel_operator.h"\nextern "C" __global__ __aicore__ void k(GM_ADDR x) {}\n',
    "  #define A 1 \\\n  + 2\nint a;\n",
    "x; #not_preproc\n\t#pragma once\r\n#if 1\r\n",
    "/* a\n */ #after_comment\n/* b */\n#define B\n",
    '"str\\\n#inside" \'c\' "unterminated\n#define C\n',
    "\f\v #define D\n\u00e9\u4e2d // comment \\\n#x\n",
    "/* unterminated comment\n#define E\n",
    "#a \\   \n continued\n#b\\\r\n more\n",
    "",
    "\n\n#\n",
]


def test_handwritten_cases_match_the_reference() -> None:
    for text in CASES:
        assert tokenize(text, "f.cpp") == reference(text, "f.cpp"), text


ALPHABET = st.sampled_from(
    list("#\\/*\"'\n\r\t\f\v ;{}()<>abc019_.:-+eE") + ["\u00e9", "//", "/*", "*/", "\\\n", "\r\n"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_random_sources_match_the_reference(text: str) -> None:
    assert tokenize(text) == reference(text)


def reference_code_text(text: str) -> str:
    """Comments blanked character by character from the reference tokens (newlines kept)."""
    parts = list(text)
    for tok in reference(text)[0]:
        if tok.kind == "comment":
            for i in range(tok.start, tok.end):
                if parts[i] != "\n":
                    parts[i] = " "
    return "".join(parts)


def test_comment_scan_matches_the_tokens_on_handwritten_cases() -> None:
    for text in [
        *CASES,
        "a;\n\u00a0#x // c\n",
        "u8\"//x\" L'/*' a/b // c\r\n /* d\r\n */ #e // f\n  # g /* h\n i */\n",
    ]:
        assert comment_free_text(text) == reference_code_text(text), text
        assert read_source(text).code_text() == reference_code_text(text), text


#: the tokenizer's alphabet plus literal prefixes, a directive and a non-breaking space (not a blank)
COMMENT_ALPHABET = st.one_of(ALPHABET, st.sampled_from(["u8", "L", "#define X ", "\u00a0", "\\\r\n"]))


@settings(max_examples=600, deadline=None)
@given(st.lists(COMMENT_ALPHABET, max_size=80).map("".join))
def test_comment_scan_matches_the_tokens_on_random_sources(text: str) -> None:
    assert comment_free_text(text) == reference_code_text(text)
    assert read_source(text).code_text() == reference_code_text(text)


PARAM_WORDS = st.sampled_from(["uint32_t", "GM_ADDR", "const", "*", "&", "x", "n", "=", "1", "[[", "]]", "["])
PARAM_WORDS = st.one_of(
    PARAM_WORDS, st.sampled_from(["]", "(", ")", "maybe_unused", "__attribute__", "::", ","])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PARAM_WORDS, max_size=7).map(" ".join))
def test_plain_parameter_shortcut_reads_as_the_full_reading(decl: str) -> None:
    tokens, _ = tokenize(decl)
    assert _parse_param(tokens, decl) == _parse_param_full(tokens, decl)
