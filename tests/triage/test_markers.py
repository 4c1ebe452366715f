"""Scope markers and marker edits (triage.md §4.4 rule 3, §4.5 A/B/C, §4.6, T8; analysis-json.md edits)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import scan_text
from skdbg.triage.markers import (
    ModelSource,
    Span,
    SpanBlock,
    apply_edits,
    balanced,
    check_edits,
    edits_close_reopen,
    edits_none,
    edits_split,
    op_tokens,
    tokens_match,
)
from skdbg.triage.model import MarkerEdit

SRC = """import torch


class M(torch.nn.Module):
    def forward(self, x):
        torch.npu.super_kernel_scope_begin("blk.0")
        a = torch_npu.npu_quant_matmul(x)
        b = add_custom(a)
        c = torch_npu.npu_quant_matmul(
            b,
        )
        for i in range(2):
            d = torch_npu.npu_rms_norm(c)
        with torch.npu.stream(self.side):
            e = torch_npu.npu_rope(c)
            f = torch_npu.npu_gelu(e)
        g = e + 1; h = torch_npu.npu_cast(g)
        torch.npu.super_kernel_scope_end("blk.0")
        return h
"""


def _src(tmp_path: Path, text: str = SRC) -> ModelSource:
    p = tmp_path / "model.py"
    p.write_text(text)
    return ModelSource(p, "src/model.py")


def _span(src: ModelSource, lines: set[int]) -> Span:
    region = src.regions("blk.0")[0][0]
    sp = src.span(lines, region.inner, region)
    assert isinstance(sp, Span), sp
    return sp


def test_malformed_source_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as ei:
        _src(tmp_path, "def f(:\n    pass\n")
    assert ei.value.line == 1 and "a Python model source" in str(ei.value)
    with pytest.raises(ParseError):
        ModelSource(tmp_path / "missing.py", "missing.py")


def test_regions_find_the_balanced_direct_pair(tmp_path: Path) -> None:
    src = _src(tmp_path)
    regions, problems = src.regions("blk.0")
    assert problems == []
    assert [(r.begin.line, r.end.line, r.func) for r in regions] == [(6, 18, "forward")]
    assert src.regions("other") == ([], [])


def test_unbalanced_marker_is_reported(tmp_path: Path) -> None:
    text = SRC.replace('        torch.npu.super_kernel_scope_end("blk.0")\n', "")
    regions, problems = _src(tmp_path, text).regions("blk.0")
    assert regions == [] and "no matching end" in problems[0]


def test_marker_in_another_statement_list_is_not_paired(tmp_path: Path) -> None:
    text = SRC.replace('        torch.npu.super_kernel_scope_end("blk.0")\n', "").replace(
        "            f = torch_npu.npu_gelu(e)\n",
        '            f = torch_npu.npu_gelu(e)\n            torch.npu.super_kernel_scope_end("blk.0")\n',
    )
    regions, problems = _src(tmp_path, text).regions("blk.0")
    assert regions == [] and len(problems) == 2


def test_single_statement_span_and_multiline_statement(tmp_path: Path) -> None:
    src = _src(tmp_path)
    sp = _span(src, {8})
    assert (sp.first_line, sp.last_line, sp.indent) == (8, 8, " " * 8)
    sp = _span(src, {9})
    assert (sp.first_line, sp.last_line) == (9, 11)  # end_lineno of a multi-line call
    assert not sp.pre_empty and not sp.post_empty
    assert _span(src, {7}).pre_empty


def test_loop_body_blocks_the_cut(tmp_path: Path) -> None:
    src = _src(tmp_path)
    region = src.regions("blk.0")[0][0]
    sp = src.span({13}, region.inner, region)
    assert isinstance(sp, SpanBlock) and "loop body" in sp.reason


def test_conditional_arm_blocks_the_cut(tmp_path: Path) -> None:
    text = SRC.replace("for i in range(2):", "if x is not None:")
    src = _src(tmp_path, text)
    region = src.regions("blk.0")[0][0]
    sp = src.span({13}, region.inner, region)
    assert isinstance(sp, SpanBlock) and "conditional arm" in sp.reason


def test_with_block_is_entered(tmp_path: Path) -> None:
    src = _src(tmp_path)
    sp = _span(src, {15})
    assert (sp.first_line, sp.indent) == (15, " " * 12)
    assert not sp.in_region_body
    # lines inside and outside the with: the whole with statement is the unit
    sp = _span(src, {12, 16})
    assert (sp.first_line, sp.last_line) == (12, 16)


def test_statement_sharing_a_line_blocks(tmp_path: Path) -> None:
    src = _src(tmp_path)
    region = src.regions("blk.0")[0][0]
    sp = src.span({17}, region.inner, region)
    assert isinstance(sp, SpanBlock) and "another statement" in sp.reason


def test_line_outside_the_region_blocks(tmp_path: Path) -> None:
    src = _src(tmp_path)
    region = src.regions("blk.0")[0][0]
    sp = src.span({19}, region.inner, region)
    assert isinstance(sp, SpanBlock) and "outside" in sp.reason


def test_op_type_matching() -> None:
    assert op_tokens("QuantBatchMatmulV3_8ab2c4f1_1") == ["quant", "batch", "matmul"]
    assert op_tokens("static_kernel_RmsNorm_5c1d07aa") == ["rms", "norm"]
    assert op_tokens("add_custom") == ["add", "custom"]
    assert tokens_match(["quant", "matmul"], op_tokens("QuantBatchMatmulV3_8ab2c4f1_1"))
    assert tokens_match(["add", "custom"], ["add", "custom"])
    assert not tokens_match(["norm"], ["rms", "norm"])  # one short word is too weak
    assert not tokens_match(["cast"], ["quant", "matmul"])


def test_infer_line_by_occurrence_ordinal(tmp_path: Path) -> None:
    src = _src(tmp_path)
    site = src.infer_line("QuantBatchMatmulV3_8ab2c4f1_1", 1, 2, 7, 17)
    assert site.line == 9 and "occurrence 1" in site.detail
    amb = src.infer_line("QuantBatchMatmulV3_8ab2c4f1_1", 0, 1, 7, 17)
    assert amb.line is None and "ambiguous" in amb.detail
    none = src.infer_line("Softmax_77aa11", 0, 1, 7, 17)
    assert none.line is None


def test_none_pair_uses_the_null_literal(tmp_path: Path) -> None:
    src = _src(tmp_path)
    edits = edits_none("src/model.py", _span(src, {8}), "add_custom (task 1, nodeId 121)")
    assert [(e.line, e.op) for e in edits] == [(8, "insert"), (9, "insert")]
    assert edits[0].text == (
        "        torch.npu.super_kernel_scope_begin(None)  # skdbg: exclude add_custom (task 1, nodeId 121)"
    )
    assert "(None)" in edits[1].text and '"None"' not in edits[0].text + edits[1].text
    out = apply_edits(src.lines, edits)
    assert balanced("\n".join(out))
    assert scan_text("\n".join(out)).markers[1].key == ("begin", None, True)


def test_close_reopen_same_name_and_marker_move(tmp_path: Path) -> None:
    src = _src(tmp_path)
    region = src.regions("blk.0")[0][0]
    edits = edits_close_reopen(src, region, _span(src, {8}), "x")
    assert [(e.line, e.op) for e in edits] == [(8, "insert"), (9, "insert")]
    assert 'super_kernel_scope_end("blk.0")' in edits[0].text
    assert 'super_kernel_scope_begin("blk.0")' in edits[1].text
    # the span right after begin: the begin marker moves after it (no empty scope pair)
    moved = edits_close_reopen(src, region, _span(src, {7}), "x")
    assert [(e.line, e.op) for e in moved] == [(6, "delete"), (8, "insert")]
    out = "\n".join(apply_edits(src.lines, moved))
    assert balanced(out)


def test_split_renames_the_halves(tmp_path: Path) -> None:
    src = _src(tmp_path)
    region = src.regions("blk.0")[0][0]
    edits = edits_split(src, region, _span(src, {8, 9}), "frag")
    assert [(e.line, e.op) for e in edits] == [(6, "replace"), (8, "insert"), (12, "insert"), (18, "replace")]
    assert edits[0].text == '        torch.npu.super_kernel_scope_begin("blk.0.pre")'
    assert 'super_kernel_scope_end("blk.0.pre")' in edits[1].text
    assert 'super_kernel_scope_begin("blk.0.post")' in edits[2].text
    assert edits[3].text == '        torch.npu.super_kernel_scope_end("blk.0.post")'
    out = "\n".join(apply_edits(src.lines, edits))
    assert balanced(out)
    ast.parse(out)


def test_string_none_scope_is_detected(tmp_path: Path) -> None:
    src = _src(tmp_path, SRC.replace('"blk.0"', '"None"'))
    assert [m.line for m in src.string_none_markers()] == [6, 18]
    region = src.regions("None")[0][0]
    assert not region.begin.is_none  # the string "None" is an ordinary name (T8)
    edits = edits_none("m.py", src.span({8}, region.inner, region), "x")  # type: ignore[arg-type]
    assert "super_kernel_scope_begin(None)" in edits[0].text


def test_check_edits_rejects_overlap_and_disorder() -> None:
    with pytest.raises(ValueError):
        check_edits([MarkerEdit("f", 3, "replace", "a"), MarkerEdit("f", 3, "delete", "")])
    with pytest.raises(ValueError):
        check_edits([MarkerEdit("f", 3, "insert", "a"), MarkerEdit("f", 3, "insert", "b")])
    with pytest.raises(ValueError):
        check_edits([MarkerEdit("f", 5, "insert", "a"), MarkerEdit("f", 3, "insert", "b")])


# ------------------------------------------------------------------------------ property


@st.composite
def _files(draw: st.DrawFn) -> tuple[str, int, int, str]:
    n = draw(st.integers(2, 8))
    body: list[str] = []
    for i in range(n):
        kind = draw(st.sampled_from(["call", "multi", "with"]))
        if kind == "call":
            body.append(f"        y{i} = torch_npu.npu_op{i}(x)")
        elif kind == "multi":
            body += [f"        y{i} = torch_npu.npu_op{i}(", "            x,", "        )"]
        else:
            body += ["        with torch.npu.stream(s):", f"            y{i} = torch_npu.npu_op{i}(x)"]
    name = draw(st.sampled_from(["blk.0", "None", "a:b-c_d"]))
    lines = ["class M:", "    def forward(self, x):", f'        torch.npu.super_kernel_scope_begin("{name}")']
    lines += body
    lines += [f'        torch.npu.super_kernel_scope_end("{name}")', "        return x"]
    i = draw(st.integers(0, n - 1))
    j = draw(st.integers(i, n - 1))
    mech = draw(st.sampled_from(["none", "close", "split"]))
    if (i, j) == (0, n - 1):
        mech = "none"  # the whole region cannot be split (§4.4 rule 3); the None pair still balances
    return "\n".join(lines) + "\n", i, j, f"{name}|{mech}"


@settings(max_examples=200, deadline=None)
@given(_files())
def test_edits_are_ordered_and_keep_every_statement(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, int, int, str]
) -> None:
    text, i, j, key = case
    name, mech = key.split("|")
    src = _src(tmp_path_factory.mktemp("p"), text)
    region = src.regions(name)[0][0]
    stmts = region.inner
    lines = {stmts[i].lineno, stmts[j].lineno}
    span = src.span(lines, stmts, region)
    assert isinstance(span, Span)
    if mech == "none":
        edits = edits_none("m.py", span, "x")
    elif mech == "close":
        edits = edits_close_reopen(src, region, span, "x")
    else:
        edits = edits_split(src, region, span, "x")
    check_edits(edits)  # ascending, never two edits on one line
    out = apply_edits(src.lines, edits)
    new = "\n".join(out) + "\n"
    ast.parse(new)
    assert balanced(new)
    assert '("None")' not in "".join(e.text for e in edits) or name == "None"
    # every original line that is not a scope marker is still there, in order
    marker_lines = {region.begin.line, region.end.line}
    kept = [t for k, t in enumerate(src.lines, 1) if k not in marker_lines]
    it = iter(out)
    assert all(any(t == o for o in it) for t in kept)
