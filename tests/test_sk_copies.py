"""The plog copy of a super_kernel.log handler block is derived, not parsed again (issue 18, row 47).

The oracle for "derived" is the state machine itself run on the plog lines (what the code did before),
plus hand-written expectations on the parts the derivation recomputes (sources, files, line counts,
notes). Copies that differ anywhere else must not be derived.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from skdbg.parsers.common import Source
from skdbg.parsers.filelog import split_prefix
from skdbg.parsers.plog_line import PlogLine, parse_plog_line
from skdbg.parsers.plog_rows import columns_of_lines
from skdbg.parsers.sk_copies import derive_plog_copy
from skdbg.parsers.sk_handler import SkHandlerResult, SkMessage, parse_sk_messages
from skdbg.scenebuilder.lines import filelog_line, sk_plog_line
from skdbg.scenebuilder.sk_incident import CallbackBSpec, example_incident, to_filelog_lines, to_plog_lines

PLOG = "log/plog/plog-48213_1.log"
SKLOG = "sk_meta/48213/model_0/super_kernel.log"
A6 = "Aclgraph superkernel aicore exception occurred, callback function."


def plog_records(lines: list[str]) -> list[PlogLine]:
    out = []
    for no, text in enumerate(lines, 1):
        pl = parse_plog_line(text, Source(PLOG, no))
        if pl is not None:
            out.append(pl)
    return out


def derive(records: list[PlogLine], parsed: SkHandlerResult) -> SkHandlerResult | None:
    """:func:`derive_plog_copy` of the SK lines among ``records`` (in time order)."""
    return derive_plog_copy(columns_of_lines(records), parsed)


def filelog_parse(lines: list[str]) -> SkHandlerResult:
    msgs = []
    for no, text in enumerate(lines, 1):
        if text.strip():
            prefix, message = split_prefix(text)
            msgs.append(SkMessage.from_filelog(prefix, message, Source(SKLOG, no)))
    return parse_sk_messages(msgs)


def state_machine(records: list[PlogLine]) -> SkHandlerResult:
    return parse_sk_messages(m for m in (SkMessage.from_plog(r) for r in records) if m is not None)


def all_sources(obj: Any) -> list[Source]:
    """Every Source inside a record tree (walked by value, independently of the derivation's rules)."""
    if isinstance(obj, Source):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [s for x in obj for s in all_sources(x)]
    if is_dataclass(obj) and not isinstance(obj, type):
        return [s for f in fields(obj) for s in all_sources(getattr(obj, f.name))]
    return []


def same_result(a: SkHandlerResult, b: SkHandlerResult) -> bool:
    return (a.incidents, a.non_aot, a.unrecognized, a.gaps, a.foreign_lines) == (
        b.incidents,
        b.non_aot,
        b.unrecognized,
        b.gaps,
        b.foreign_lines,
    )


def test_info_plog_copy_without_the_debug_a6_line_is_derived() -> None:
    spec = example_incident(callback_b=CallbackBSpec())
    plog_text = to_plog_lines(spec, level="INFO")
    assert not any(A6 in t for t in plog_text)  # the plog at INFO lacks the DEBUG line …
    parsed = filelog_parse(to_filelog_lines(spec))
    assert any(n[0] == A6 for n in parsed.incidents[0].notes)  # … that super_kernel.log keeps
    records = plog_records(plog_text)
    derived = derive(records, parsed)
    assert derived is not None
    assert same_result(derived, state_machine(records))
    inc = derived.incidents[0]
    sk_lines = [r for r in records if r.is_sk]
    assert inc.origins == ("plog",) and inc.files == (PLOG,)
    assert inc.line_count == len(sk_lines) == parsed.incidents[0].line_count - 1
    assert inc.src == sk_lines[0].src and inc.anchor == sk_lines[0].src  # the A5 anchor comes first
    assert inc.first_ts == sk_lines[0].ts and inc.last_ts == sk_lines[-1].ts and inc.pid == 48213
    assert all(n[0] != A6 for n in inc.notes)
    assert {s.file for s in all_sources(derived.incidents)} == {PLOG}


def test_debug_plog_copy_with_every_line_is_derived() -> None:
    spec = example_incident()
    records = plog_records(to_plog_lines(spec, level="DEBUG"))
    derived = derive(records, filelog_parse(to_filelog_lines(spec)))
    assert derived is not None
    assert same_result(derived, state_machine(records))
    assert any(n[0] == A6 and n[1].file == PLOG for n in derived.incidents[0].notes)


def test_copy_differing_in_one_message_is_parsed_not_copied() -> None:
    spec = example_incident()
    plog_text = to_plog_lines(spec, level="INFO")
    i = next(n for n, t in enumerate(plog_text) if "index=" in t and "args=0x" in t)
    plog_text[i] = plog_text[i].replace("args=0x", "args=0x1f")  # one task queue line differs
    records = plog_records(plog_text)
    assert derive(records, filelog_parse(to_filelog_lines(spec))) is None


def test_copy_missing_a_line_other_than_a6_is_not_derived() -> None:
    spec = example_incident()
    plog_text = [t for t in to_plog_lines(spec, level="INFO") if "taskCnt:" not in t]
    assert derive(plog_records(plog_text), filelog_parse(to_filelog_lines(spec))) is None


def test_error_level_plog_is_not_a_copy() -> None:
    """Row 25: the default plog level drops the INFO tables; that is a different block, parsed."""
    spec = example_incident()
    records = plog_records(to_plog_lines(spec, level="ERROR"))
    assert derive(records, filelog_parse(to_filelog_lines(spec))) is None


def test_plog_with_an_extra_sk_line_is_not_derived() -> None:
    spec = example_incident()
    plog_text = to_plog_lines(spec, level="INFO")
    plog_text.append(plog_text[-1])  # the last SK line printed twice in plog only
    assert derive(plog_records(plog_text), filelog_parse(to_filelog_lines(spec))) is None


def test_super_kernel_log_with_two_streams_is_not_a_template() -> None:
    """Lines whose prefix lost the pid (pid 0, row 50) are another stream; the parse differs."""
    spec = example_incident()
    sk = to_filelog_lines(spec)
    j = next(n for n, t in enumerate(sk) if "taskCnt:" in t)
    sk[j] = sk[j].replace("[48213:", "[0:", 1)
    parsed = filelog_parse(sk)
    assert parsed.trace is not None and parsed.trace.single_stream is False
    assert derive(plog_records(to_plog_lines(spec, level="INFO")), parsed) is None


def test_two_incidents_in_one_block_are_derived_in_order() -> None:
    first = example_incident()
    second = example_incident(entry="sk_entry_mix2_op_trace")
    sk = to_filelog_lines(first) + to_filelog_lines(second)
    plog_text = to_plog_lines(first, level="INFO") + to_plog_lines(second, level="INFO")
    records = plog_records(plog_text)
    parsed = filelog_parse(sk)
    derived = derive(records, parsed)
    assert derived is not None and len(derived.incidents) == 2
    assert same_result(derived, state_machine(records))
    assert [i.entry for i in derived.incidents] == ["sk_entry_mix11_op_trace", "sk_entry_mix2_op_trace"]


def test_plog_only_lines_of_other_sk_components_are_counted_not_a_reason_to_parse() -> None:
    """A plog at INFO also holds graph-build SK lines; super_kernel.log's handler selection drops them."""
    spec = example_incident()
    plog_text = to_plog_lines(spec, level="INFO")
    build = sk_plog_line(
        "INFO", 48213, "python3", spec.start, "UpdateNodeScopeBitFlags", "Processed node [nodeId:7]"
    )
    plog_text = [build, *plog_text[:3], build, *plog_text[3:], build]
    records = plog_records(plog_text)
    parsed = filelog_parse(to_filelog_lines(spec))
    derived = derive(records, parsed)
    assert derived is not None
    assert same_result(derived, state_machine(records))
    assert derived.foreign_lines == parsed.foreign_lines + 3


def test_a_line_counted_by_no_incident_keeps_its_stamp_out_of_the_incident() -> None:
    """An incident counts its own messages, not every paired one: a foreign line before the anchor
    (paired, never counted) and an inert A6 (counted, not in the INFO plog) leave it as many counted
    messages as there are pairs, but other ones. Its stamps are its own lines' (the foreign line is
    a second earlier and must not become the incident's first stamp)."""
    spec = example_incident()
    early = spec.start - timedelta(seconds=1)
    foreign = "Processed node [nodeId:7]"
    sk = [
        filelog_line(early, 48213, spec.tid, "INFO", "UpdateNodeScopeBitFlags", foreign),
        *to_filelog_lines(spec),
    ]
    plog_text = [
        sk_plog_line("INFO", 48213, "python3", early, "UpdateNodeScopeBitFlags", foreign),
        *to_plog_lines(spec, level="INFO"),
    ]
    records = plog_records(plog_text)
    parsed = filelog_parse(sk)
    assert parsed.trace is not None and len(parsed.trace.inert) == 1
    assert len(parsed.trace.touched[0]) == len(parsed.trace.srcs) - 1  # all but the foreign line
    derived = derive(records, parsed)
    assert derived is not None
    assert same_result(derived, state_machine(records))
    sk_lines = [r for r in records if r.is_sk]
    assert derived.incidents[0].first_ts == sk_lines[1].ts > early


def test_a_twin_without_a_stamp_is_left_out_of_the_first_and_last_stamps() -> None:
    """A plog stamp out of range (month 13) parses to no time: the derived incident's first and last
    stamps come from its other lines, as the state machine's count keeps them."""
    spec = example_incident()
    plog_text = to_plog_lines(spec, level="INFO")
    assert plog_text[3].count(":2026-06-10-") == 1
    plog_text[3] = plog_text[3].replace(":2026-06-10-", ":2026-13-10-")
    records = plog_records(plog_text)
    assert records[3].ts is None and records[3].is_sk
    derived = derive(records, filelog_parse(to_filelog_lines(spec)))
    assert derived is not None
    assert same_result(derived, state_machine(records))
    assert derived.incidents[0].first_ts == records[0].ts


def test_plog_only_line_with_a_handler_tag_is_not_derived() -> None:
    """An unknown text under a handler function is listed as unrecognized by a parse: not a copy."""
    spec = example_incident()
    plog_text = to_plog_lines(spec, level="INFO")
    odd = sk_plog_line("INFO", 48213, "python3", spec.start, "PrintTaskQueue", "something new")
    plog_text.insert(5, odd)
    assert derive(plog_records(plog_text), filelog_parse(to_filelog_lines(spec))) is None


def test_a6_after_a_second_anchor_of_the_same_entry_is_not_inert() -> None:
    """Row 44: a second A5 of the same entry waits for the next line to tell callback B from a new
    fault; an A6 decides it (callback A), so a plog without that A6 is parsed, not derived."""
    spec = example_incident()
    parsed = filelog_parse(to_filelog_lines(spec) + to_filelog_lines(spec))
    assert len(parsed.incidents) == 2
    assert parsed.trace is not None and len(parsed.trace.inert) == 1  # only the first incident's A6
    records = plog_records(to_plog_lines(spec, level="INFO") + to_plog_lines(spec, level="INFO"))
    assert derive(records, parsed) is None
    debug = plog_records(to_plog_lines(spec, level="DEBUG") + to_plog_lines(spec, level="DEBUG"))
    derived = derive(debug, parsed)  # with every A6 printed it is a copy again
    assert derived is not None and same_result(derived, state_machine(debug))


def test_a_nested_record_holding_a_source_needs_a_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A field whose record type hides a Source (directly or deeper) cannot be copied unchanged into
    the derived copy: the rule table refuses it instead of keeping the other copy's lines."""
    import dataclasses

    from skdbg.parsers import sk_copies, sk_records

    @dataclasses.dataclass(frozen=True)
    class Deep:
        src: Source

    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: tuple[Deep, ...]

    monkeypatch.setattr(sk_records, "Deep", Deep, raising=False)
    monkeypatch.setattr(sk_records, "Outer", Outer, raising=False)
    with pytest.raises(TypeError, match="no rule to re-source field decoded"):
        sk_copies._field_expr("decoded", "Outer | None")
    assert sk_copies._field_expr("decoded", "CondDecode | None") == "o.decoded"  # no Source inside


@pytest.mark.parametrize("foreign", [False, True], ids=["usual-copy", "with-a-foreign-line"])
def test_a_declined_fault_beside_an_incident_is_derived_with_its_plog_line(foreign: bool) -> None:
    """A fault the handler declines (not an ``sk_entry`` kernel: a ``non_aot`` record) next to an
    incident: derived, it cites its plog line and takes that line's pid and stamp, as the state
    machine on the plog lines does, whether the plog holds exactly the parsed lines or also a line of
    another SK component (paired the long way)."""
    spec = example_incident()
    later = spec.start + timedelta(seconds=2)
    declined = "fault kernel_name 'add_custom' does not start with 'sk_entry', skipping"
    sk = [
        *to_filelog_lines(spec),
        filelog_line(later, 48213, spec.tid, "INFO", "IsSuperKernelException", declined),
    ]
    plog_text = [
        *to_plog_lines(spec, level="DEBUG"),
        sk_plog_line("INFO", 48213, "python3", later, "IsSuperKernelException", declined),
    ]
    if foreign:
        build = sk_plog_line(
            "INFO", 48213, "python3", spec.start, "UpdateNodeScopeBitFlags", "Processed node [nodeId:7]"
        )
        plog_text.insert(2, build)
    records = plog_records(plog_text)
    parsed = filelog_parse(sk)
    assert len(parsed.non_aot) == 1 and parsed.non_aot[0].src.file == SKLOG
    derived = derive(records, parsed)
    assert derived is not None
    assert same_result(derived, state_machine(records))
    (rec,) = derived.non_aot
    line = next(r for r in records if declined in r.text)
    assert rec.src == line.src and rec.src.file == PLOG
    assert (rec.pid, rec.ts) == (48213, line.ts) and line.ts is not None


def test_a_source_shared_by_a_dropped_a6_and_a_kept_message_is_not_derived() -> None:
    """The twins are found by the source objects of the parsed messages: one object standing for two
    messages (here the inert A6's and the line before it, which the parser never makes, one source a
    line) is ambiguous, so the plog is parsed instead."""
    spec = example_incident()
    parsed = filelog_parse(to_filelog_lines(spec))
    trace = parsed.trace
    assert trace is not None and len(trace.inert) == 1
    (i,) = trace.inert
    a6, before = trace.srcs[i], trace.srcs[i - 1]

    def alias(s: Source) -> Source:
        return before if s is a6 else s

    shared = SkHandlerResult(
        incidents=[replace(x, notes=tuple((n, alias(s)) for n, s in x.notes)) for x in parsed.incidents],
        non_aot=parsed.non_aot,
        unrecognized=parsed.unrecognized,
        gaps=parsed.gaps,
        foreign_lines=parsed.foreign_lines,
        trace=replace(
            trace,
            srcs=tuple(map(alias, trace.srcs)),
            touched=tuple(tuple(map(alias, t)) for t in trace.touched),
        ),
    )
    records = plog_records(to_plog_lines(spec, level="INFO"))  # no A6: it is dropped
    assert derive(records, parsed) is not None  # the same block with one source a line is derived
    assert derive(records, shared) is None
