"""The (line kind → field, converter) table of the handler parser, against the §1.4.2–§1.4.4 lines.

Expected values are read off the example lines by hand (artifacts.md §1.4); the table is applied to
what :func:`skdbg.parsers.sk_lines.classify` makes of each line.
"""

from __future__ import annotations

import ast
import inspect
import types
import typing
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import sk_builders, sk_fields, sk_handler, sk_lines, sk_parser, sk_rows
from skdbg.parsers.common import Source
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.sk_fields import CORE_KEY, CORE_LINE, TRACE_HEADER, TRACE_STEP, TRACE_SYMBOL, FieldRule


def _fields(
    line: str, table: dict[str, tuple[FieldRule, ...]] | None = None
) -> tuple[str, dict[str, object]]:
    c = sk_lines.classify(line)
    assert c is not None, line
    rules = {**CORE_LINE, **TRACE_HEADER, **TRACE_STEP}[c.kind]
    return c.kind, {r.field: r.convert(c.groups) for r in rules}


def test_every_key_is_a_core_line_kind_and_every_core_kind_has_rules() -> None:
    kinds = {lk.kind for lk in sk_lines.CORE}
    tables = (CORE_LINE, CORE_KEY, TRACE_HEADER, TRACE_STEP, TRACE_SYMBOL)
    assert all(set(t) <= kinds for t in tables)
    # a [Core N] kind that is neither COND (k_) nor in a table would write nothing
    assert {k for k in kinds if k.startswith("c_")} == set(CORE_LINE)
    assert {k for k in kinds if k.startswith("t_")} == set(TRACE_HEADER) | set(TRACE_STEP)


@pytest.mark.parametrize(
    ("line", "kind", "fields"),
    [
        ("[Core 30] Found in node[5], entry[-1]", "c_found", {"matched": True, "node": 5, "entry": -1}),
        (
            "[Core 30] Function size: 0x3000 (12288 bytes)",
            "c_func_size",
            {"func_size": 0x3000, "func_size_dec": 12288},
        ),
        (
            "[Core 30] numBlocks=24, cubeNum=24, vecNum=48",
            "c_blocks",
            {"num_blocks": 24, "cube_num": 24, "vec_num": 48},
        ),
        (
            "[Core 30] Bound SK symbol name: sk_variant_add (bind=GLOBAL, size=0x1a0)",
            "c_bound",
            {"sk_symbol": "sk_variant_add", "sk_symbol_bind": "GLOBAL", "sk_symbol_size": 0x1A0},
        ),
        ("[Core 7] CurrentPC: 0xffff800000001235", "c_current_pc", {"current_pc": 0xFFFF800000001235}),
        (
            "[Core 30] Type=AIV, opState=3, opId=2",
            "t_type",
            {"core_type": "AIV", "op_state": 3, "op_id": 2},
        ),
        ("[Core 30] opId=2 finished, checking current and next operators", "t_finished", {"finished_op": 2}),
        ("[Core 30] > No next operator (opId=2/3)", "t_no_next", {"no_next": (2, 3)}),
        (
            "[Core 30] > Next opId=0 (first sub-kernel):",
            "t_next_first",
            {"next_op": 0, "next_is_first": True},
        ),
    ],
)
def test_spec_lines(line: str, kind: str, fields: dict[str, object]) -> None:
    assert _fields(line) == (kind, fields)


def _keys(values: type) -> set[str]:
    """Every key a ``*Values`` TypedDict declares (required or not)."""
    return set(values.__required_keys__) | set(values.__optional_keys__)  # type: ignore[attr-defined]


def test_the_table_writes_only_keys_of_the_block_it_writes_to() -> None:
    """Core lines write a core block, trace lines a trace: each rule's field is a key of that block's
    values (a misspelt field would be stored where no read finds it)."""
    core_fields = {r.field for rules in CORE_LINE.values() for r in rules}
    trace_fields = {r.field for t in (TRACE_HEADER, TRACE_STEP) for rules in t.values() for r in rules}
    assert core_fields <= _keys(sk_fields.CoreValues), core_fields - _keys(sk_fields.CoreValues)
    assert set(CORE_KEY.values()) <= _keys(sk_fields.CoreValues)
    assert trace_fields <= _keys(sk_fields.TraceValues), trace_fields - _keys(sk_fields.TraceValues)


def _literal_writes() -> set[str]:
    """The keys the handler parser writes by name (in the stream's module and in the block lines' one):
    ``x.put("key", ...)``, ``self._put(x, "key", ...)``, the keys of a ``*Values`` dict display and
    ``values["key"] = ...``."""
    trees = [ast.parse(inspect.getsource(module)) for module in (sk_parser, sk_rows)]
    keys: set[str] = set()

    def literal(node: ast.expr | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            keys.add(node.value)

    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            at = {"put": 0, "_put": 1}.get(node.func.attr)
            if at is not None and len(node.args) > at:
                literal(node.args[at])
        elif isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict):
            if isinstance(node.annotation, ast.Name) and node.annotation.id.endswith("Values"):
                for key in node.value.keys:
                    literal(key)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "values"
                ):
                    literal(target.slice)
    return keys


def test_every_key_the_parser_writes_is_a_key_of_some_block() -> None:
    """The parser's own writes (not from the table) name keys the value types declare, and each value
    type's key is written somewhere: by a rule, by name, or (the header's offsets) under the name the
    log prints, which the ``a15_field`` line carries."""
    declared = {
        name: _keys(getattr(sk_fields, name)) for name in sk_fields.__all__ if name.endswith("Values")
    }
    written = _literal_writes()
    assert written, "no literal writes found: the test no longer reads the parser"
    every = set().union(*declared.values())
    assert written <= every, written - every
    table = {r.field for t in (CORE_LINE, TRACE_HEADER, TRACE_STEP) for rules in t.values() for r in rules}
    printed = {
        "aicQueOffset",
        "aivQueOffset",
        "counterOffset",
        "wsOffset",
        "dfxOffset",
        "nodeCnt",
        "totalSize",
    }
    assert every - written - table - printed == set()


def _fits(value: object, hint: object) -> bool:
    """``value`` is of the declared type ``hint`` (the few forms the ``*Values`` types use)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is tuple:
        arms = typing.get_args(hint)
        return isinstance(value, tuple) and len(value) == len(arms) and all(map(_fits, value, arms))
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    assert isinstance(hint, type), hint
    return isinstance(value, hint)


def _blocks(b: sk_builders._IncidentB) -> Iterator[tuple[str, sk_builders._Fields[typing.Any] | None]]:
    """Every field bag of an incident under construction, with the name of its values type."""
    yield "PreValues", b.pre
    yield "HeaderValues", b.header
    for _src, qf, _tasks in b.queues.values():
        yield "QueueValues", qf
    for _src, nf, _aic, _aiv in b.dfx[3] if b.dfx is not None else ():
        yield "DfxNodeValues", nf
    traces = [t for _src, _n, ts in ([b.all_core] if b.all_core is not None else []) for t in ts]
    cores = [*b.cores, *(b.b.cores if b.b is not None else ())]
    if b.b is not None:
        yield "BValues", b.b.f
    for core in cores:
        yield "CoreValues", core.f
        yield "CondValues", core.cond
        if core.trace is not None:
            traces.append(core.trace)
    for t in traces:
        yield "TraceValues", t.f
        for sf, _lookups in t.symbols:
            yield "SymbolValues", sf


def test_the_values_stored_are_of_their_declared_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the parser stores in each block is of the type its ``*Values`` declares (writes go by name,
    so the type checker sees only the reads): the incidents of every dialect as plog lines, with and
    without callback B, at INFO and ERROR, and the bundled scenes' super_kernel.log files."""
    from skdbg.parsers.sk_parser import parse_sk_log, parse_sk_messages
    from skdbg.parsers.sklog_runs import read_super_kernel_log
    from skdbg.scenebuilder.sk_incident import DIALECTS, CallbackBSpec, example_incident, to_plog_lines

    hints = {
        name: typing.get_type_hints(getattr(sk_fields, name))
        for name in sk_fields.__all__
        if name.endswith("Values")
    }
    wrong: list[tuple[str, str, object]] = []
    seen: set[tuple[str, str]] = set()
    made = sk_parser.freeze_incident

    def checked(b: sk_builders._IncidentB, result: object) -> object:
        for name, bag in _blocks(b):
            for key, value in [] if bag is None else bag.values.items():
                seen.add((name, key))
                if key not in hints[name] or not _fits(value, hints[name][key]):
                    wrong.append((name, key, value))
        return made(b, result)  # type: ignore[arg-type]

    monkeypatch.setattr(sk_parser, "freeze_incident", checked)
    for dialect in DIALECTS:
        for cb in (None, CallbackBSpec()):
            spec = replace(example_incident(dialect=dialect), callback_b=cb)
            for level in ("INFO", "ERROR"):
                lines = to_plog_lines(spec, level=level)
                messages = [
                    m for no, text in enumerate(lines, 1) if (m := _plog_message(text, no)) is not None
                ]
                parse_sk_messages(messages)
    logs = sorted(Path(__file__).resolve().parents[1].glob("examples/scenes/*/sk_meta/*/*/super_kernel.log"))
    assert logs, "no bundled super_kernel.log found"
    for log in logs:
        parse_sk_log(read_super_kernel_log(log))
    assert wrong == []
    assert len({name for name, _key in seen}) == len(hints), "a kind of block was never filled"


def _plog_message(text: str, no: int) -> sk_parser.SkMessage | None:
    line = parse_plog_line(text, Source("plog-48213_1.log", no))
    return None if line is None else sk_parser.SkMessage.from_plog(line)


def test_the_facade_exports_the_split_modules() -> None:
    from skdbg.parsers import sk_dedupe, sk_frames, sk_freeze, sk_parser, sk_records

    assert sk_handler.Incident is sk_records.Incident
    assert sk_handler.parse_sk_messages is sk_parser.parse_sk_messages
    assert sk_parser.freeze_incident is sk_freeze.freeze_incident  # the parser makes its records there
    assert sk_handler.dedupe_incidents is sk_dedupe.dedupe_incidents
    assert sk_handler.cores_frame is sk_frames.cores_frame


def _linear(text: str) -> tuple[str, int | None, tuple[str | None, ...]] | None:
    """The catalogue tried in order, every kind (what classify did before it was indexed)."""
    t = text.strip()
    m = sk_lines.CORE_PREFIX.fullmatch(t)
    kinds, body, core = (
        (sk_lines.CORE, m.group(2).strip(), int(m.group(1))) if m is not None else (sk_lines.PLAIN, t, None)
    )
    for lk in kinds:
        g = lk.regex.fullmatch(body)
        if g is not None:
            return lk.kind, core, g.groups()
    return None


_STARTS = [lk.regex.pattern[:n] for lk in (*sk_lines.PLAIN, *sk_lines.CORE) for n in (3, 4, 12)]


@settings(max_examples=300, deadline=None)
@given(
    core=st.sampled_from(["", "[Core 30] ", "[Core 7]  "]),
    start=st.sampled_from(
        [
            *_STARTS,
            "=== SkDfxInfo (offset=",
            "COND: ",
            "Function name: ",
            "> Next opId=",
            # texts starting with a loose kind's first character (the first-character buckets)
            "[12] index=",
            "[3] modelId=",
            "aicQueOffset",
            "dfxOffset(",
            "nodeCnt: ",
            "==",
            "coreId",
            "type",
            "GetFuncSymbolInfo: ",
            "AIV COND register value: 0x",
            "startPC: 0x",
        ]
    ),
    rest=st.text(alphabet="0123456789abx ,:=()[]._-", max_size=30),
)
def test_indexed_catalogue_matches_the_linear_one(core: str, start: str, rest: str) -> None:
    text = core + start.replace("\\", "") + rest
    got = sk_lines.classify(text)
    assert (None if got is None else (got.kind, got.core, got.groups)) == _linear(text)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "Exception is from superkernel function 'sk_entry_3', op_trace=true, proceeding with handling",
            "a5_anchor",
        ),
        ("Exception is from superkernel function 'sk_entry_3', proceeding with handling", "a5_anchor_d0"),
        ("=== SkDfxInfo (offset=6976, nodeCnt=3) ===", "dfx_header"),
        ("[Core 30] COND: Sub-kernel opIndex=4 finished, about to run next.", "k_finished"),
        ("[Core 30] > Next opId=3:", "t_next"),
        ("Function name: Cast_9f3e21_2", "function_name"),
    ],
)
def test_indexed_classify_spec_lines(line: str, kind: str) -> None:
    c = sk_lines.classify(line)
    assert c is not None and c.kind == kind
