"""The one marker model (skdbg.parsers.markers; triage.md §4.5.1/§4.5.2, analysis-json.md edits).

Every source here is hand-written; the expected markers are read off the text by eye, so a test fails
when the model counts a comment, a string, a wrapper, or misses an alias or the GE form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import (
    EditError,
    MarkerEdit,
    apply_edits,
    apply_edits_text,
    check_edits,
    classify_mechanism,
    declared_mismatch,
    materialised_problem,
    scan_text,
)
from skdbg.triage.markers import ModelSource, Span, edits_none
from skdbg.triage.schema import SchemaError, check_marker_edits

DECOYS = '''"""Docstring quoting torch.npu.super_kernel_scope_begin("doc") — documentation, not a marker."""
import torch


def forward(x):
    # torch.npu.super_kernel_scope_begin("commented")
    note = 'torch.npu.super_kernel_scope_begin("in_string")'
    torch.npu.super_kernel_scope_begin("real")
    y = x + 1  # torch.npu.super_kernel_scope_end("trailing_comment")
    torch.npu.super_kernel_scope_end("real")
    return y, note
'''


def test_comments_docstrings_and_strings_never_count() -> None:
    scan = scan_text(DECOYS)
    assert [(m.kind, m.name, m.line) for m in scan.markers] == [("begin", "real", 8), ("end", "real", 10)]
    assert scan.begun_names() == {"real"}
    assert scan.balance() is None


ALIASES = """import torch_npu as tn
import torch.npu as tnpu
from torch_npu.npu import super_kernel_scope_begin as skb
from torch.npu import super_kernel_scope_end


def forward(x):
    tn.npu.super_kernel_scope_begin("a")
    y = x + 1
    tnpu.super_kernel_scope_end("a")
    skb(None)
    z = y * 2
    super_kernel_scope_end(None)
    return z
"""


def test_alias_imports_resolve_to_the_api() -> None:
    scan = scan_text(ALIASES)
    assert [(m.kind, m.name, m.is_none, m.line) for m in scan.markers] == [
        ("begin", "a", False, 8),
        ("end", "a", False, 10),
        ("begin", None, True, 11),
        ("end", None, True, 13),
    ]
    assert scan.balance() is None
    # generated markers keep the file's own spelling of the API
    assert scan.call_text("begin", "None") == "tn.npu.super_kernel_scope_begin(None)"
    assert scan.call_text("end", '"a"') == 'tnpu.super_kernel_scope_end("a")'


WRAPPERS = """import torch
from mylib.sk import super_kernel_scope_begin
import numpy as torch_npu


def forward(self, x):
    super_kernel_scope_begin("wrapped")
    self.helper.super_kernel_scope_begin("method")
    torch_npu.npu.super_kernel_scope_begin("rebound")
    unknown.npu.super_kernel_scope_begin("unimported")
    return x
"""


def test_wrappers_and_foreign_prefixes_are_not_markers() -> None:
    scan = scan_text(WRAPPERS)
    assert scan.markers == []
    assert [i.line for i in scan.ignored] == [7, 8, 9, 10]
    assert "mylib.sk.super_kernel_scope_begin" in scan.ignored[0].reason


GE = """import torchair as tng
from torch_npu.dynamo import torchair


def forward(a, b):
    with tng.scope.super_kernel("sp1", "stream-fusion=1:strict-scope-check=abort"):
        c = a @ b
        with torchair.scope.super_kernel(None):
            d = c + 1
    # with torchair.scope.super_kernel("commented"):
    return d
"""


def test_ge_form_with_aliases() -> None:
    scan = scan_text(GE)
    assert [(m.kind, m.name, m.is_none, m.line) for m in scan.ge] == [
        ("ge", "sp1", False, 6),
        ("ge", None, True, 8),
    ]
    assert scan.markers == [] and scan.begun_names() == {"sp1"}


def test_unparsable_source_is_a_precise_error() -> None:
    with pytest.raises(ParseError) as exc:
        scan_text("def f(:\n    torch.npu.super_kernel_scope_begin(None)\n", "src/model.py")
    assert exc.value.file == "src/model.py" and exc.value.line == 1


def test_string_none_is_not_the_null_literal() -> None:
    scan = scan_text('torch.npu.super_kernel_scope_begin("None")\ntorch.npu.super_kernel_scope_end(None)\n')
    assert [m.line for m in scan.string_none()] == [1]
    bad = scan.balance()
    assert bad is not None and bad[0] == 2  # end(None) cannot close the scope named "None"


# ------------------------------------------------------------------------------ one edit rule


SAME_LINE = [
    MarkerEdit("m.py", 2, "insert", "ins"),
    MarkerEdit("m.py", 2, "replace", "REP"),
]


def test_insert_and_replace_on_one_line_agree_everywhere() -> None:
    """analysis-json.md: insert goes before line 2, replace replaces line 2 — no overlap, one result."""
    check_edits(SAME_LINE, 3)
    check_marker_edits([e.to_json() for e in SAME_LINE])
    assert apply_edits(["a", "b", "c"], SAME_LINE) == ["a", "ins", "REP", "c"]
    assert apply_edits_text("a\nb\nc\n", SAME_LINE) == "a\nins\nREP\nc\n"


@pytest.mark.parametrize(
    "edits",
    [
        [MarkerEdit("m.py", 2, "insert", "x"), MarkerEdit("m.py", 2, "insert", "y")],  # no defined order
        [MarkerEdit("m.py", 2, "replace", "x"), MarkerEdit("m.py", 2, "delete", "")],  # one line twice
        [MarkerEdit("m.py", 2, "replace", "x"), MarkerEdit("m.py", 2, "insert", "y")],  # insert after replace
        [MarkerEdit("m.py", 3, "insert", "x"), MarkerEdit("m.py", 1, "insert", "y")],  # descending
    ],
)
def test_overlap_is_refused_by_every_check(edits: list[MarkerEdit]) -> None:
    with pytest.raises(EditError):
        check_edits(edits)
    with pytest.raises(SchemaError):
        check_marker_edits([e.to_json() for e in edits])
    with pytest.raises(EditError):
        apply_edits(["a", "b", "c"], edits)


def test_edit_outside_the_file_is_refused() -> None:
    with pytest.raises(EditError, match="outside 1..3"):
        apply_edits(["a", "b", "c"], [MarkerEdit("m.py", 4, "replace", "x")])
    assert apply_edits(["a"], [MarkerEdit("m.py", 2, "insert", "z")]) == ["a", "z"]


# ------------------------------------------------------------------------------ declared change


OLD = """def forward(x):
    torch.npu.super_kernel_scope_begin("s")
    a = f(x)
    b = g(a)
    torch.npu.super_kernel_scope_end("s")
    return b
"""
NONE_PAIR = [
    MarkerEdit("m.py", 4, "insert", "    torch.npu.super_kernel_scope_begin(None)"),
    MarkerEdit("m.py", 5, "insert", "    torch.npu.super_kernel_scope_end(None)"),
]


def test_string_none_materialised_for_the_null_literal_is_a_mismatch() -> None:
    materialised = apply_edits_text(OLD, NONE_PAIR).replace("begin(None)", 'begin("None")')
    mm = declared_mismatch(OLD, NONE_PAIR, materialised, "m.py")
    assert mm is not None and mm.line == 4
    assert 'declared super_kernel_scope_begin(None), found super_kernel_scope_begin("None")' in mm.detail
    assert "T8" in mm.detail


def test_comments_and_formatting_are_no_mismatch() -> None:
    same = apply_edits_text(OLD, NONE_PAIR).replace("a = f(x)", "a = f( x )  # reformatted")
    assert declared_mismatch(OLD, NONE_PAIR, same, "m.py") is None


def test_commented_out_declared_marker_is_a_mismatch() -> None:
    text = apply_edits_text(OLD, NONE_PAIR).replace(
        "    torch.npu.super_kernel_scope_end(None)", "    # torch.npu.super_kernel_scope_end(None)"
    )
    mm = declared_mismatch(OLD, NONE_PAIR, text, "m.py")
    assert mm is not None and "super_kernel_scope_end(None) is missing" in mm.detail
    assert mm.line == 6  # before the scope end, which moved down one line (begin(None) inserted)


def _none_pair_as(text: str, fmt: str) -> str:
    """``text`` with both null-literal markers rewritten by ``fmt`` (e.g. as a comment)."""
    for call in ("torch.npu.super_kernel_scope_begin(None)", "torch.npu.super_kernel_scope_end(None)"):
        text = text.replace("    " + call, "    " + fmt.format(call))
    return text


def test_materialised_mechanism_ignores_comments_and_strings() -> None:
    good = apply_edits_text(OLD, NONE_PAIR)
    assert materialised_problem(OLD, good, "explicit_none_exclusion", "m.py") is None
    bad = materialised_problem(OLD, _none_pair_as(good, "# {}"), "explicit_none_exclusion", "m.py")
    assert bad is not None and "no marker change" in bad.detail
    bad = materialised_problem(OLD, _none_pair_as(good, '"{}"'), "explicit_none_exclusion", "m.py")
    assert bad is not None and "other than the scope markers" in bad.detail


def test_moving_a_marker_is_close_reopen() -> None:
    """Mechanism B without an empty pair: the begin marker moves past the excluded unit (§4.5.1)."""
    moved = OLD.replace(
        '    torch.npu.super_kernel_scope_begin("s")\n    a = f(x)\n',
        '    a = f(x)\n    torch.npu.super_kernel_scope_begin("s")\n',
    )
    assert classify_mechanism(scan_text(OLD), scan_text(moved)) == "close_reopen_exclusion"
    assert classify_mechanism(scan_text(OLD), scan_text(OLD + "# moved\n")) is None


def test_generated_none_pair_keeps_the_alias(tmp_path: Path) -> None:
    p = tmp_path / "model.py"
    p.write_text(ALIASES)
    src = ModelSource(p, "src/model.py")
    region = src.regions("a")[0][0]
    span = src.span({9}, region.inner, region)
    assert isinstance(span, Span)
    edits = edits_none("src/model.py", span, "child")
    assert [e.text for e in edits] == [
        "    tn.npu.super_kernel_scope_begin(None)  # skdbg: exclude child",
        "    tnpu.super_kernel_scope_end(None)  # skdbg: end of exclusion",
    ]
    after = scan_text(apply_edits_text(ALIASES, edits))
    assert (
        after.balance() is None and classify_mechanism(scan_text(ALIASES), after) == "explicit_none_exclusion"
    )
