"""The scan and hashing worker threads' bulk paths against the general paths they shortcut.

Each shortcut keeps its general path as the oracle: the bulk tokenizer (``fast_plog_block``) against
``fast_plog_lines``/``parse_plog_line`` line by line, the column batching against the per-line
batching it replaced, the classifier prefilter (``may_classify``) against ``classify_message``, the
filing of a batch of records (``_file_records``) against the per-item filing, the time sort against
``ts_key``. Inputs are generated (hypothesis) and hand-written from the formats' example
lines (artifacts.md §1.2, §1.5).
"""

from __future__ import annotations

import ast
import inspect
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skdbg.parsers import evidence as ev_mod
from skdbg.parsers import plog as plog_mod
from skdbg.parsers import runtime_faults as rf
from skdbg.parsers.common import Source, Unrecognized, oversized_number
from skdbg.parsers.evidence import (
    PlogEvidence,
    _file_items,
    _file_record_batches,
    _file_records,
    _sort_by_time,
)
from skdbg.parsers.plog import scan_plog_batches, scan_plog_parts
from skdbg.parsers.plog_line import (
    PlogLine,
    PlogRow,
    _stamp,
    fast_plog_block,
    fast_plog_lines,
    fast_plog_rows,
    parse_plog_line,
    plog_lines_of_rows,
)
from tests.support.plog_reference import plog_reference

FILE = "plog-48213_20260610140321518.log"

#: artifacts.md §1.2 / §1.5 example lines (one of each shape the tokenizer knows, and faults)
SPEC_LINES = (
    "[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.402 [sk_dfx_exception_handler.cpp:967]"
    "[SK][IsSuperKernelException] Exception is from superkernel function 'sk_entry_mix11_op_trace'",
    "[INFO] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.448 [sk_dfx_exception_handler.cpp:1450]"
    "[SK][ExtractSkDeviceEntryArgsPtr] ---skDeviceEntryArgsDev: 0x12c100400000",
    "[ERROR] RUNTIME(48213,python3):2024-03-25-11:22:02.462.346 [stream.cc:1512]539029 "
    "GetError:[INIT][DEFAULT]Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, "
    "task_id=1, flip_num=0, fault kernel_name=Add_ee98c6628030785f610b924ab1557b31_high_performance_210000000, "
    "fault kernel info ext=none, program id=0, hash=11042444066001143980.",
    "[ERROR] RUNTIME(48213,python3):2024-01-02-11:47:52.260.922 [device_error_proc.cc:1178]2479231 "
    "ProcessStarsCoreErrorInfo:[EXEC][EXEC]The extend info: errorcode:(0x800000, 0, 0) errorStr: The DDR "
    "address of the MTE instruction is out of range. fixp_error0 info: 0x3000072, subErrType:4",
    "[ERROR] GE(48213,python3):2026-06-10-14:03:21.519.000 [/home/build/ge/graph.cc:88]48301 "
    "ErrorTrackingCallback: ErrorNo: 4294967295(failed) origin_op_name [sk_3_start_A_end_B], op_name [x]",
    "[ERROR] IDEDD(48213,python3):2026-06-10-14:03:21.519.100 [adump.cpp:300][tid:48302] "
    "[Dump][Exception] coreId=4, coreType=1, startPC=12c0c0000000, currentPC=12c0c0000100, offset=100, "
    "symbol name=sk_entry, symbol size=200, symbol offset=0.",
    "[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.519.200 [stream.cc:1]9 "
    "rtStreamSynchronize:[EXEC]Stream Synchronize failed, stream_id=2, retCode=0x7bc83, [the model stream]",
    "[ERROR] ASCENDCKERNEL(777,python3):2026-06-10-14:03:21.519.300 [h.cpp:9][SK][F] another process",
)


# ----------------------------------------------------------------------------- generated lines
#
# A line is the §1.2 layout with each part either as the runtime prints it or one of a few odd
# values (spacing the grammar tolerates, damage, other scripts' digits, line breaks other than
# ``\n``), so generated batches hold lines on both sides of the fast path's border.

_PARTS: dict[str, tuple[str, ...]] = {
    "level": ("[ERROR] ", "[INFO]  ", "[ ERROR ] ", "[Info] ", "[E1] "),
    "module": ("RUNTIME", "ASCENDCKERNEL", "GE", "IDEDD", "2GE", "M\u00f6d"),
    "pid": ("(48213,python3)", "(777,python3)", "( 48213 ,python3)", "(48213,p)q)", "(\u0664,p)", "(1,)"),
    "colon": (":", " :", ": "),
    "stamp": (
        "2026-06-10-14:03:21.518.402",
        "2026-06-10-14:03:22.000.001",
        "2026-13-10-14:03:21.518.402",
        "2026-06-10-14:03:21.518",
        "2026-06-10 14:03:21.518.402",
    ),
    "gap": (" ", "", "  ", "\t"),
    "at": (
        "[stream.cc:1512]",
        "[/home/b/x.cpp:9]",
        "[ a.cc:1 ]",
        "[a b.cc:2]",
        "[a:1b]",
        "[status:STOP][a.cc:3]",
    ),
    "rest": (
        "[SK][Print] ",
        "[SK][] ",
        "[SK][F]",
        "539029 GetError:[INIT][DEFAULT]",
        "539029 GetError: ",
        "2 Func:x: ",
        "2 Func:\t:",
        "2 F<T>:[DFX_INFO]",
        "2 ~D:",
        "[tid:48302] ",
        "[tid: 48302]",
        "free text ",
    ),
    "text": (
        "Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, "
        "fault kernel_name=sk_entry_x, fault kernel info ext=none, program id=0, hash=1.",
        "ErrCode=507035, desc=[vector core exception]",
        "[Dump][Exception] note",
        "---skDeviceEntryArgsDev: 0x12c100400000",
        "",
        ": : x",
        "x\r",
        "a\x0bb\u2028c",
        "\u00e9\u8fd9 EZ9999",
    ),
    "end": ("", "", "", "\r", "\r\r", " \r"),
}


@st.composite
def plog_texts(draw: st.DrawFn) -> str:
    """One physical line (no ``\n``), sometimes cut short."""
    line = "".join(draw(st.sampled_from(values)) for values in _PARTS.values())
    if draw(st.integers(0, 9)) == 0:
        line = line[: draw(st.integers(0, len(line)))]
    return line


@st.composite
def plog_files(draw: st.DrawFn) -> list[bytes]:
    """The lines of a plog: generated records (marked), error-manager text, blanks, damaged bytes."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 90))):
        kind = draw(st.integers(0, 9))
        if kind < 7:
            raw = (draw(plog_texts()) + " ErrCode=1").encode()
        elif kind == 7:
            raw = draw(
                st.sampled_from(["EZ9999: y", "no marker", "TraceBack (most recent call last):"])
            ).encode()
        else:
            raw = draw(
                st.sampled_from(
                    [b"", b"\r", b"EZ9999: a\xff\xfe b", b"[SK][\xe9\x80", b"x=0x1234567890abcdef01 [SK]["]
                )
            )
        lines.append(raw)
    return lines


def _sources(n: int) -> list[Source]:
    return [Source(FILE, i + 1) for i in range(n)]


def _line_at_a_time(lines: list[str], completes: list[bool]) -> list[PlogLine | None]:
    return fast_plog_lines(lines, _sources(len(lines)), completes)


# ----------------------------------------------------------------------------- fast_plog_block


def _check_block(lines: list[str], completes: list[bool]) -> list[PlogLine] | None:
    """The property: the bulk tokenizer takes the batch exactly when the line-at-a-time fast path
    recognises every line, and then builds the same records (the grammar's, field for field)."""
    nos = list(range(1, len(lines) + 1))
    got = fast_plog_block("\n".join(lines), FILE, nos, completes)
    rows = fast_plog_rows("\n".join(lines), FILE, nos, completes)
    want = _line_at_a_time(lines, completes)
    if not lines or not all(want):
        assert (got is None and rows is None) or not lines
        return got
    assert got == want
    assert rows is not None and plog_lines_of_rows(rows) == want  # the form a forked scan sends
    assert got == [
        parse_plog_line(t, s, complete=c)
        for t, s, c in zip(lines, _sources(len(lines)), completes, strict=True)
    ]
    return got


_one_line = plog_texts().map(lambda t: t.replace("\n", " ")).filter(lambda t: oversized_number(t) is None)

#: the values of each part (of :data:`_PARTS`) the fast path takes whatever the other parts and the
#: message text (checked by ``test_accepted_parts_are_taken``): a line made of them is a record. Not
#: all are printed by the runtime (month 13: taken, its stamp None)
_ACCEPTED: dict[str, tuple[str, ...]] = {
    "level": ("[ERROR] ", "[INFO]  "),
    "module": ("RUNTIME", "ASCENDCKERNEL", "GE", "IDEDD"),
    "pid": ("(48213,python3)", "(777,python3)", "(1,)"),
    "colon": (":",),
    "stamp": _PARTS["stamp"][:3],
    "gap": (" ", "", "  "),
    "at": ("[stream.cc:1512]", "[/home/b/x.cpp:9]"),
    "rest": (
        "[SK][Print] ",
        "[SK][] ",
        "[SK][F]",
        "539029 GetError:[INIT][DEFAULT]",
        "2 F<T>:[DFX_INFO]",
        "[tid:48302] ",
    ),
    "text": _PARTS["text"],
    "end": _PARTS["end"],
}


def test_accepted_parts_are_taken() -> None:
    canonical = {k: v[0] for k, v in _ACCEPTED.items()}
    for part, values in _ACCEPTED.items():
        for value in values:
            for text in _PARTS["text"]:
                line = "".join({**canonical, part: value, "text": text}[k] for k in _PARTS)
                assert _line_at_a_time([line], [True])[0] is not None, line


@st.composite
def _plain_lines(draw: st.DrawFn) -> str:
    """One line of accepted parts (one in twelve of any parts, odd ones included): a batch of them is
    often the bulk tokenizer's whole, and the records and rows it makes are then checked;
    :func:`plog_texts` alone made no such batch in 400 examples."""
    parts = _PARTS if draw(st.integers(0, 11)) == 0 else _ACCEPTED
    return "".join(draw(st.sampled_from(parts[k])) for k in _PARTS)


_batch_line = st.one_of(_plain_lines(), _plain_lines(), _one_line).filter(
    lambda t: oversized_number(t) is None
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_batch_line, min_size=1, max_size=8), data=st.data())
def test_block_is_the_line_at_a_time_path(lines: list[str], data: st.DataObject) -> None:
    completes = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    _check_block(lines, completes)


def test_block_takes_the_spec_lines_whole() -> None:
    got = _check_block(list(SPEC_LINES), [True] * (len(SPEC_LINES) - 1) + [False])
    assert got is not None and [r.is_sk for r in got] == [True, True, False, False, False, False, False, True]
    assert got[2].tags == ("INIT", "DEFAULT") and got[5].tid == 48302 and got[-1].complete is False


@pytest.mark.parametrize(
    "lines",
    [
        # a function name ending its line: ``\s*:`` must not see the next line's ':'
        ["[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func:", ": y"],
        ["[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func:", "  :y", SPEC_LINES[0]],
        # a head whose ``(pid,proc`` is cut: its ``)`` is on the next line, which must not complete it
        ["[ERROR] RUNTIME(1,python3", "):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func: x"],
        [SPEC_LINES[0], "[ERROR] RUNTIME(1,py", "thon3):2026-06-10-14:03:21.518.100 [a.cc:1]2 F: x"],
        # one line of another shape among records
        [SPEC_LINES[0], "EZ9999: Inner Error!", SPEC_LINES[1]],
        [SPEC_LINES[0], "", SPEC_LINES[1]],
        # carriage returns left inside and at the end of texts, other line breaks kept inside
        [SPEC_LINES[0] + "\r\r", SPEC_LINES[1] + "\x0b\u2028x\r", SPEC_LINES[2]],
        ["[ERROR] RUNTIME(1,p):2026-13-10-14:03:21.518.100 [a.cc:1]2 Func: month 13", SPEC_LINES[3]],
        # stamps across seconds, one out of range between two in the same second, micro- and
        # milliseconds that differ (a swap of the two shows)
        [
            "[INFO] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func: a",
            "[INFO] RUNTIME(1,p):2026-06-10-14:03:21.907.003 [a.cc:1]2 Func: b",
            "[INFO] RUNTIME(1,p):2026-06-31-14:03:21.001.002 [a.cc:1]2 Func: June 31",
            "[INFO] RUNTIME(1,p):2026-06-10-14:03:21.120.999 [a.cc:1]2 Func: c",
            "[INFO] RUNTIME(1,p):2026-06-10-14:03:22.000.001 [a.cc:1]2 Func: d",
            "[INFO] RUNTIME(1,p):2026-06-10-23:59:59.999.999 [a.cc:1]2 Func: e",
        ],
    ],
)
def test_block_at_line_ends_and_odd_lines(lines: list[str]) -> None:
    _check_block(lines, [True] * len(lines))


# ----------------------------------------------------------------------------- batching


def _batches_line_at_a_time(items: list[tuple[int, bytes, bool]]) -> list[list[tuple[int, bytes, bool]]]:
    """The per-line batching the column slicing replaced (the oracle)."""
    out, batch, size = [], [], 0
    for item in items:
        batch.append(item)
        size += len(item[1])
        if len(batch) >= plog_mod._BATCH_LINES or size >= plog_mod._BATCH_BYTES:
            out.append(batch)
            batch, size = [], 0
    if batch:
        out.append(batch)
    return out


@settings(max_examples=200)
@given(
    sizes=st.lists(
        st.sampled_from([0, 1, 100, plog_mod._BATCH_BYTES // 3, plog_mod._BATCH_BYTES]), max_size=700
    )
)
def test_column_batches_are_the_line_at_a_time_batches(sizes: list[int]) -> None:
    items = [(i + 1, b"x" * n, i % 5 != 0) for i, n in enumerate(sizes)]
    block = ([i for i, _, _ in items], [r for _, r, _ in items], [c for _, _, c in items])
    got = [list(zip(*b, strict=True)) for b in plog_mod._batches([block])]
    assert got == _batches_line_at_a_time(items)


# ----------------------------------------------------------------------------- scan_plog_parts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=plog_files(), final_newline=st.booleans(), pid=st.sampled_from([None, 48213]))
def test_parts_flag_only_batches_of_records(lines: list[bytes], final_newline: bool, pid: int | None) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / FILE
        path.write_bytes(data)
        parts = list(scan_plog_parts(path, pid))
        assert [it for items, _ in parts for it in items] == plog_reference(path, data, pid)
        assert all(all(type(it) is PlogLine for it in items) for items, flag in parts if flag)
        assert [items for items, _ in parts] == list(scan_plog_batches(path, pid))


def test_parts_of_the_spec_lines_are_one_batch_of_records(tmp_path: Path) -> None:
    path = tmp_path / FILE
    path.write_text("\n".join([*SPEC_LINES, "noise without a marker"] * 3) + "\n")
    parts = list(scan_plog_parts(path))
    assert [flag for _, flag in parts] == [
        True
    ]  # a 20-digit hash (a 17-hex-digit run) is no oversized number
    assert len(parts[0][0]) == 3 * len(SPEC_LINES)


@settings(max_examples=300)
@given(
    lines=st.lists(
        st.lists(
            st.sampled_from(["0x", "0X", "1" * 10, "f" * 9, "9" * 11, ".", "_", " ", "a", "x=", "\r"]),
            max_size=8,
        ).map("".join),
        min_size=1,
        max_size=6,
    )
)
@example(lines=["a 18446744073709551616", "x"])  # 2**64
@example(lines=["18446744073709551615", "1"])  # 2**64 - 1 fits; "1" is a line of its own
@example(lines=["0x1" + "0" * 16, "0"])
def test_no_oversized_number_in_the_batch_is_none_in_its_lines(lines: list[str]) -> None:
    assert plog_mod._none_oversized("\n".join(lines)) == all(oversized_number(t) is None for t in lines)


# ----------------------------------------------------------------------------- may_classify


def _guard_strings() -> set[str]:
    """The string constants ``classify_message`` tests with ``"…" in text`` (its branch guards)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(rf.classify_message)))
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and isinstance(node.ops[0], ast.In)
            and isinstance(node.comparators[0], ast.Name)
            and node.comparators[0].id == "text"
        ):
            found.add(node.left.value)
    return found


def test_needles_are_the_classifier_guards() -> None:
    """A branch added to classify_message with a guard of its own must be added to the needles."""
    assert _guard_strings() == set(rf.CLASSIFY_NEEDLES)


def test_needles_survive_joining_and_the_dfx_prefix() -> None:
    """No needle holds a newline (texts are asked joined by one) or starts with a suffix of the
    ``[DFX_INFO]`` classify_runtime puts in front of a text (it cannot complete a needle)."""
    prefix = "[DFX_INFO]"
    for needle in rf.CLASSIFY_NEEDLES:
        assert "\n" not in needle
        assert not any(needle.startswith(prefix[k:]) for k in range(len(prefix))), needle


_FRAGMENTS = [n[: len(n) // 2] for n in rf.CLASSIFY_NEEDLES] + [n[1:] for n in rf.CLASSIFY_NEEDLES]
_texts_near_needles = st.lists(
    st.one_of(st.sampled_from(_FRAGMENTS), st.sampled_from(rf.CLASSIFY_NEEDLES), st.text(max_size=12)),
    max_size=6,
).map("".join)


@settings(max_examples=600)
@given(text=_texts_near_needles)
@example(text=rf.CLASSIFY_NEEDLES[0][:-1])
@example(text="[Dump][Exception")
def test_no_needle_no_record(text: str) -> None:
    """Whatever the text, a text without any needle classifies as nothing, alone or tagged DFX_INFO."""
    if rf.may_classify(text):
        return
    src = Source(FILE, 1)
    assert rf.classify_message(text, src) is None
    base = parse_plog_line(SPEC_LINES[2], src)
    assert base is not None and base.tags == ("INIT", "DEFAULT")
    for tags in (("DFX_INFO",), ()):
        assert rf.classify_runtime(replace(base, text=text, tags=tags)) is None


def test_every_spec_fault_line_may_classify() -> None:
    for text in SPEC_LINES[2:7]:
        line = parse_plog_line(text, Source(FILE, 1))
        assert line is not None and rf.classify_runtime(line) is not None
        assert rf.may_classify(line.text)


# ----------------------------------------------------------------------------- filing a batch


@st.composite
def record_batches(draw: st.DrawFn) -> list[PlogLine]:
    """Records of the spec lines and generated ones, of two pids, in any order."""
    texts = draw(st.lists(st.one_of(st.sampled_from(SPEC_LINES), _one_line), max_size=30))
    recs = [parse_plog_line(t, Source(FILE, i + 1)) for i, t in enumerate(texts)]
    return [r for r in recs if r is not None]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(record_batches(), max_size=4), pid=st.sampled_from([48213, 777, 1]))
def test_filing_records_is_filing_items(batches: list[list[PlogLine]], pid: int) -> None:
    bulk = PlogEvidence(pid=pid, kind="plog", files=[FILE])
    general = PlogEvidence(pid=pid, kind="plog", files=[FILE])
    for batch in batches:
        _file_records(list(batch), bulk)
        _file_items(list(batch), general)
    assert bulk == general


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(record_batches(), max_size=5), pid=st.sampled_from([48213, 777, 1]))
def test_filing_batches_together_is_filing_items(batches: list[list[PlogLine]], pid: int) -> None:
    """Consecutive batches of records filed together (a scan's run of record batches) make the lists
    the per-item filing makes of them one by one."""
    together = PlogEvidence(pid=pid, kind="plog", files=[FILE])
    general = PlogEvidence(pid=pid, kind="plog", files=[FILE])
    _file_record_batches([list(b) for b in batches], together)
    for batch in batches:
        _file_items(list(batch), general)
    assert together == general


def test_filing_sk_batches_then_a_fault_batch() -> None:
    """Batches of SK handler lines only, then one holding a runtime fault, all of one pid (the
    filing's shortcut): every line in order, and the fault found in its batch."""
    recs = [parse_plog_line(t, Source(FILE, i + 1)) for i, t in enumerate(SPEC_LINES[:3] * 3)]
    sk, fault = [r for r in recs if r is not None and r.is_sk], recs[2]
    assert fault is not None and not fault.is_sk and len(sk) == 6
    pe = PlogEvidence(pid=48213, kind="plog", files=[FILE])
    _file_record_batches([sk[:2], sk[2:], [fault]], pe)
    assert pe.lines == [*sk, fault]
    assert [type(f).__name__ for f in pe.faults] == ["KernelFaultLine"]
    only_sk = PlogEvidence(pid=48213, kind="plog", files=[FILE])
    _file_record_batches([sk[:2], sk[2:]], only_sk)
    assert only_sk.lines == sk and only_sk.faults == [] and only_sk.foreign == []


def test_filing_the_spec_lines_finds_their_faults() -> None:
    recs = [parse_plog_line(t, Source(FILE, i + 1)) for i, t in enumerate(SPEC_LINES)]
    pe = PlogEvidence(pid=48213, kind="plog", files=[FILE])
    _file_records([r for r in recs if r is not None], pe)
    assert [type(f).__name__ for f in pe.faults] == [
        "KernelFaultLine", "CoreErrorExtend", "ErrorTracking", "DumpException", "StreamSyncFailed",
    ]  # fmt: skip
    assert [r.src.line for r in pe.foreign] == [8] and len(pe.lines) == 7


def test_the_scan_files_as_the_general_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Evidence's plog load with the batch flag as the scan sets it (batches of records only, and
    batches holding error-manager text), and with every batch filed one item at a time (the general
    path): the same evidence."""
    from skdbg.scene import evidence_for, open_scene

    plog = tmp_path / "log" / FILE
    plog.parent.mkdir()
    em = ["EZ9999: Inner Error!", "TraceBack (most recent call last):", "ErrCode=1 odd line [FUNC:x]"]
    records = list(SPEC_LINES) * 30  # 240 records: whole batches of records only
    lines = [*records, *em, *records[:20], *em, *records]
    plog.write_text("\n".join(lines) + "\n")
    real = plog_mod._batch_records  # what sets each batch's flag, whichever way the file is scanned
    flags: list[bool] = []

    def spied(*a: object, **k: object) -> tuple[list[PlogLine | Unrecognized], bool]:
        items, flag = real(*a, **k)  # type: ignore[arg-type]
        flags.append(flag)
        return items, flag

    monkeypatch.setattr(plog_mod, "_batch_records", spied)
    fast = evidence_for(open_scene(tmp_path)).plogs
    assert True in flags and False in flags  # both filings were taken
    monkeypatch.setattr(plog_mod, "_batch_records", lambda *a, **k: (real(*a, **k)[0], False))  # type: ignore[arg-type]
    general = evidence_for(open_scene(tmp_path)).plogs
    assert fast == general
    faults = sum(t in SPEC_LINES[2:7] for t in lines)  # the five fault lines of the spec
    assert len(fast[0].faults) == faults and len(fast[0].foreign) == 62 and len(fast[0].error_manager) == 4


# ----------------------------------------------------------------------------- sorting by time


@settings(max_examples=200)
@given(
    stamps=st.lists(
        st.one_of(st.none(), st.sampled_from([datetime(2026, 6, 10, 14, 3, s) for s in range(3)])),
        max_size=20,
    )
)
def test_sort_by_time_is_the_ts_key_sort(stamps: list[datetime | None]) -> None:
    base = parse_plog_line(SPEC_LINES[0], Source(FILE, 1))
    assert base is not None
    lines = [replace(base, src=Source(FILE, i + 1), ts=ts) for i, ts in enumerate(stamps)]
    want = sorted(lines, key=lambda r: r.ts_key)
    _sort_by_time(lines)
    assert [r.src.line for r in lines] == [r.src.line for r in want]


# ----------------------------------------------------------------------------- the rows' stamps

#: stamps written by hand: the second changes, an impossible date (June 31, month 13, Feb 29 of a
#: common year) between valid ones of the same and of another second, a leap day, digits that are
#: not ASCII, cut and empty stamps
_HAND_STAMPS = [
    "2026-06-10-14:03:21.518.402",
    "2026-06-10-14:03:21.907.003",
    "2026-06-31-14:03:21.001.002",
    "2026-06-10-14:03:21.120.999",
    "2026-13-01-00:00:00.000.000",
    "2026-06-10-14:03:22.000.001",
    "2024-02-29-23:59:59.999.999",
    "2023-02-29-23:59:59.999.999",
    "2026-06-10-14:03:22.\u0661\u0662\u0663.004",
    "2026-06-10-14:03:22",
    "",
]


def _row_with_stamp(ts_text: str) -> PlogRow:
    """A row (the PlogRow layout: source as file and line, no datetime) whose stamp text is ``ts_text``."""
    return (FILE, 1, "ERROR", "RUNTIME", 1, "p", ts_text, "a.cc", 2, 3, "F", (), "x", False, True)


def _outcome(make: Callable[[], list[datetime | None]]) -> tuple[object, ...]:
    try:
        return ("ok", make())
    except Exception as exc:  # noqa: BLE001 - the two must fail alike, whatever the failure
        return ("raised", type(exc), str(exc))


_DIGIT_TEXT = st.text(alphabet="0123456789\u0660\u0669\uff10 x-:.", min_size=0, max_size=4)


@settings(max_examples=500, deadline=None)
@given(
    texts=st.lists(
        st.one_of(
            st.sampled_from(_HAND_STAMPS),
            st.builds(
                "{}-{}-{}-{}:{}:{}.{}.{}".format,
                *(
                    st.integers(0, top).map(lambda v, w=w: f"{v:0{w}d}")
                    for top, w in ((9999, 4), (13, 2), (32, 2), (24, 2), (60, 2), (60, 2), (999, 3), (999, 3))
                ),
            ),
            _DIGIT_TEXT.map(lambda t: "2026-06-10-14:03:21." + t + ".000"),
            st.text(max_size=30),
        ),
        max_size=12,
    )
)
def test_rows_stamps_are_the_stamp_function(texts: list[str]) -> None:
    """plog_lines_of_rows works each stamp out inline, keeping the second's fields while the second
    lasts: the same datetimes (or the same failure) as :func:`_stamp` on each text alone."""
    rows = [_row_with_stamp(t) for t in texts]
    assert _outcome(lambda: [r.ts for r in plog_lines_of_rows(rows)]) == _outcome(
        lambda: [_stamp(t) for t in texts]
    )


def test_rows_stamps_by_hand() -> None:
    """The hand-written stamps, their datetimes written out: a valid stamp after an impossible one
    of the same second gets its own fraction, the leap day is kept and the common year's is not."""
    rows = [_row_with_stamp(t) for t in _HAND_STAMPS[:8]]
    assert [r.ts for r in plog_lines_of_rows(rows)] == [
        datetime(2026, 6, 10, 14, 3, 21, 518402),
        datetime(2026, 6, 10, 14, 3, 21, 907003),
        None,
        datetime(2026, 6, 10, 14, 3, 21, 120999),
        None,
        datetime(2026, 6, 10, 14, 3, 22, 1),
        datetime(2024, 2, 29, 23, 59, 59, 999999),
        None,
    ]


def test_rows_share_each_function_name() -> None:
    """A forked scan pickles its rows to the parent, and pickle writes a string object once, then
    refers to it: every row of one function (an SK ``[SK][Func]`` or a runtime ``tid Func:`` line)
    holds the one object of its name, equal to what the records path gives."""
    texts = [SPEC_LINES[0], SPEC_LINES[0].replace("518.402", "518.403"), SPEC_LINES[2], SPEC_LINES[2]]
    nos = list(range(1, len(texts) + 1))
    block = "\n".join(texts)
    rows = fast_plog_rows(block, FILE, nos, [True] * len(texts))
    records = fast_plog_block(block, FILE, nos, [True] * len(texts))
    assert rows is not None and records is not None
    funcs = [r[10] for r in rows]
    assert funcs == [r.func for r in records] == ["IsSuperKernelException"] * 2 + ["GetError"] * 2
    # the pattern's groups are new objects per line: only the sharing makes them one
    assert funcs[0] is funcs[1] and funcs[2] is funcs[3]


def test_unrecognized_items_keep_their_place(tmp_path: Path) -> None:
    """A batch holding a non-record line is filed item by item: its error-manager and unrecognized
    lines land where the general path puts them."""
    path = tmp_path / FILE
    path.write_text("\n".join([SPEC_LINES[0], "ErrCode=5 something odd", "EZ9999: Inner Error!"]) + "\n")
    parts = list(scan_plog_parts(path))
    assert [flag for _, flag in parts] == [False]
    pe = PlogEvidence(pid=48213, kind="plog", files=[str(path)])
    ev_mod._file_items(parts[0][0], pe)
    assert [u.text for u in pe.unrecognized] == ["ErrCode=5 something odd"]
    assert [e.code for e in pe.error_manager] == ["EZ9999"]
    assert isinstance(parts[0][0][1], Unrecognized)
