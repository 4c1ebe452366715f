"""``_TreeIndex`` decides whether to descend into a value by its type, once a type (a role table);
the oracle is the traversal with an ``isinstance`` test per value, kept here verbatim, compared on
hand-written sources that put nodes in every kind of field (statement lists, handlers, match cases,
decorators, comprehensions, lists of strings and of operators) and on this repository's own modules."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from skdbg.parsers.markers import _LEAVES, _imports_of, _TreeIndex

ROOT = Path(__file__).resolve().parents[1]


def reference(tree: ast.AST) -> dict[str, Any]:
    """The traversal as it was: an ``isinstance`` test for every value of every field."""
    calls: list[tuple[ast.Call, ast.stmt | None]] = []
    simple: list[ast.stmt] = []
    parent: dict[ast.stmt, tuple[list[ast.stmt], ast.AST]] = {}
    up: dict[ast.stmt, ast.stmt | None] = {}
    depth: dict[ast.stmt, int] = {}
    imports: list[tuple[int, int, int, ast.Import | ast.ImportFrom]] = []
    stack: list[tuple[ast.AST, ast.stmt | None, int]] = [(tree, None, 0)]
    while stack:
        node, stmt, level = stack.pop()
        if isinstance(node, ast.stmt):
            up[node] = stmt
            depth[node] = depth[stmt] + 1 if stmt is not None else 1
            stmt = node
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.append((level, node.lineno, node.col_offset, node))
            if not hasattr(node, "body"):
                simple.append(node)
        elif type(node) is ast.Call:
            calls.append((node, stmt))
        level += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                if value and isinstance(value[0], ast.stmt):
                    for child in value:
                        parent[child] = (value, node)
                for child in value:
                    if isinstance(child, ast.AST) and not isinstance(child, _LEAVES):
                        stack.append((child, stmt, level))
            elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
                stack.append((value, stmt, level))
    imports.sort(key=lambda t: t[:3])
    return {
        "calls": [(id(c), id(s)) for c, s in calls],
        "simple": [id(s) for s in simple],
        "parent": {id(k): (id(v[0]), id(v[1])) for k, v in parent.items()},
        "up": {id(k): id(v) for k, v in up.items()},
        "depth": {id(k): v for k, v in depth.items()},
        "imports": _imports_of(t[3] for t in imports),
    }


def answers(index: _TreeIndex) -> dict[str, Any]:
    return {
        "calls": [(id(c), id(s)) for c, s in index.calls],
        "simple": [id(s) for s in index.simple],
        "parent": {id(k): (id(v[0]), id(v[1])) for k, v in index.parent.items()},
        "up": {id(k): id(v) for k, v in index.up.items()},
        "depth": {id(k): v for k, v in index.depth.items()},
        "imports": index.imports,
    }


HAND_WRITTEN = """\
import torch_npu as tn
from torchair import scope as sc


@deco(tn.npu.super_kernel_scope_begin("d"))
class M(Base, metaclass=Meta):
    x: int = f(1)

    def forward(self, x, *a, k=g(), **kw):
        global counter
        import torchair as tn
        try:
            y = [h(v) for v in x if p(v)] + {q(k): r(v) for k, v in kw.items()}
        except (ValueError, KeyError) as e:
            raise Err(e) from cause(e)
        else:
            y = lambda z: z(w(z))
        finally:
            done()
        while a < b <= c(d):
            with ctx(1) as (u, v), other():
                async_ = not (x and y or z(-x))
        match x:
            case [1, *rest] if rest(x):
                tn.npu.super_kernel_scope_end("d")
            case {"k": v, **others}:
                pass
            case Point(x=0, y=yy):
                sc.super_kernel(f"{x!r:>{w(3)}}")
        return x[s(1):t(2), ...]


async def agen(n, *, step=inc(1)):
    from . import sibling as sib
    def inner():
        nonlocal n
        n += bump(n)
        n = -neg(n) if n is not None else pos(n)
    return [a async for a in stream(sib.f(n)) if await ok(a)]
"""


def test_hand_written_source_every_field_kind() -> None:
    tree = ast.parse(HAND_WRITTEN)
    got = answers(_TreeIndex(tree))
    assert got == reference(tree)
    assert len(got["calls"]) == 31
    assert (got["imports"]["tn"], got["imports"]["sc"]) == ("torchair", "torchair.scope")


@pytest.mark.parametrize("path", sorted((ROOT / "parsers").glob("*.py")), ids=lambda p: p.name)
def test_this_repository_s_parsers(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert answers(_TreeIndex(tree)) == reference(tree)


def test_the_skipped_fields_never_hold_a_node_to_walk() -> None:
    """The fields the walk does not read hold no node it would descend into, in any source read here."""
    trees = [ast.parse(HAND_WRITTEN)] + [
        ast.parse(p.read_text(encoding="utf-8")) for p in (ROOT / "skdbg").rglob("*.py")
    ]
    seen: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            for name in node._fields:
                if name not in _TreeIndex._NO_CHILDREN:
                    continue
                seen.add(name)
                value = getattr(node, name, None)
                for v in value if isinstance(value, list) else [value]:
                    assert not isinstance(v, ast.AST) or isinstance(v, _LEAVES), (type(node).__name__, name)
    assert {"ctx", "op", "ops", "names", "name", "attr", "id", "arg", "level"} <= seen
