"""The one traversal of a model source (parsers/markers.py ``_TreeIndex``) answers as the old walks did.

Why: the marker scan, the proposal's statement structure and its call inference used to walk the tree
three times with ``ast.walk``; they now share one walk that skips leaves. The answers that depend on
traversal order are pinned here with hand-worked expectations.
"""

from __future__ import annotations

import ast
from pathlib import Path

from skdbg.parsers.markers import MarkerSource, import_map, scan_text

_SRC = """\
import torch_npu as tn


def f(x):
    import torchair as tn
    a = (1,
         2); b = 3
    tn.npu.super_kernel_scope_begin("blk")
    y = g(h(x))
    if x:
        z = k(x)
    tn.npu.super_kernel_scope_end("blk")
    return y
"""


def test_a_deeper_import_rebinds_the_name_as_in_import_map() -> None:
    scan = scan_text(_SRC, "m.py")
    assert scan.imports == {"tn": "torchair"}  # breadth first: the nested import comes last
    assert scan.imports == import_map(ast.parse(_SRC))
    # tn now names torchair: the calls are look-alikes, not markers
    assert scan.markers == []
    assert [i.line for i in scan.ignored] == [8, 12]


def test_statement_structure(tmp_path: Path) -> None:
    text = _SRC.replace("    import torchair as tn\n", "    pass\n")
    src = MarkerSource(tmp_path / "m.py", "m.py", text=text)
    assert [(m.kind, m.line) for m in src.markers] == [("begin", 8), ("end", 12)]
    a = src.innermost(7)
    assert isinstance(a, ast.Assign) and a.lineno == 6  # `a = (1,\n 2); b = 3`: the first statement wins
    z = src.innermost(11)
    assert isinstance(z, ast.Assign) and z.lineno == 11
    assert [type(s).__name__ for s in src.chain(z)] == ["FunctionDef", "If", "Assign"]
    assert src.func_of(z) == "f"
    assert src.innermost(3) is None  # a blank line between statements
    func = src.tree.body[1]
    assert isinstance(func, ast.FunctionDef)
    assert src.body_of(z) is func.body[5].body  # type: ignore[attr-defined]
    regions, problems = src.regions("blk")
    assert problems == [] and [(r.begin.line, r.end.line) for r in regions] == [(8, 12)]
