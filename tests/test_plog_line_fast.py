"""The plog scan's fast path (``fast_plog_line`` and the batched ``scan_plog``) against the grammar.

The fast path may only ever be a shortcut: for every line it either says "not mine" (None) or builds
the very record :func:`parse_plog_line` builds. The properties below generate lines of every shape of
artifacts.md §1.2 (and the odd ones around them); the hand-written cases fix what the common shapes
must give, field by field, and that the fast path does take them (else the property is vacuous).
"""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import Source, Unrecognized
from skdbg.parsers.plog import scan_plog
from skdbg.parsers.plog_line import BLOCK_LINE_RE, PlogLine, fast_plog_line, parse_plog_line
from tests.support.plog_reference import plog_reference

SRC = Source("plog-48213_20260610140321518.log", 7)

# ----------------------------------------------------------------------------- generated lines
#
# A line is rendered from named parts. Each part has the value the runtime prints and odd values
# (spacing the grammar tolerates, other scripts' digits and spaces, damage): lines with zero, one or
# two odd parts walk the fast path's border from both sides, lines with every part odd the rest.

_SPACES = ("", " ", "  ", "\t", "\x0b", "\u00a0", "\u3000")
_ODD_DIGITS = ("007", "\u0663\u0664", "4\u0665", "", "1 2")


def _but(canon: str, *values: str) -> tuple[str, ...]:
    return tuple(v for v in values if v != canon)


#: part → (the value the runtime prints, odd values)
PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "level_lead": ("", _but("", *_SPACES)),
    "level": ("ERROR", ("Info", "E1", "", "\u00c9RROR")),
    "level_trail": ("", _but("", *_SPACES)),
    "after_level": (" ", _but(" ", *_SPACES)),
    "module": ("RUNTIME", ("Mod_2", "2GE", "G-E", "", "M\u00f6dule")),
    "before_paren": ("", _but("", *_SPACES)),
    "after_paren": ("", _but("", *_SPACES)),
    "pid": ("48213", _ODD_DIGITS),
    "before_comma": ("", _but("", *_SPACES)),
    "proc": ("python3", (" python3 ", "", "a b", "\u8fdb\u7a0b", "py(3", "p)q", "python3\u00a0")),
    "before_colon": ("", _but("", *_SPACES)),
    "after_colon": ("", _but("", *_SPACES)),
    "stamp": (
        "2026-06-10-14:03:21.518.402",
        (
            "2026-6-10-14:03:21.518.402",
            "2026-06-10-14:03:21.518",
            "\u0662026-06-10-14:03:21.518.402",
            "2026-13-32-25:61:61.518.402",
            "2026-06-10 14:03:21.518.402",
            "0000-00-00-00:00:00.000.000",
        ),
    ),
    "after_stamp": (" ", _but(" ", *_SPACES)),
    "pre": ("", ("[status:STOP]", "[x]", "[]", "[a:1]", "[status:STOP] ")),
    "src_lead": ("", _but("", *_SPACES)),
    "src_path": (
        "sk_dfx_exception_handler.cpp",
        (
            " engine.CC ",
            "a:1b",
            "a b.cc",
            "",
            "\u00e9.cc",
            "a]b",
            "a/b/",
            "x.cc ",
            "/home/b/x.cpp",
            "c++/x-y.h",
        ),
    ),
    "src_line": ("1645", _ODD_DIGITS),
    "src_trail": ("", _but("", *_SPACES)),
    "rest_lead": ("", _but("", *_SPACES)),
    "func": ("GetError", ("ns::Func", "9bad", "F\u00e9", "F x", "", "F:", "~Dtor", "Func<T>", "_x", "F\nx")),
    "sk_gap": (" ", ("", "  ", "\t", "\u00a0")),
    "tid_lead": ("", _but("", *_SPACES)),
    "tid": ("48301", _ODD_DIGITS),
    "tid_gap": (" ", ("", "  ", "\t", "\u00a0")),
    "func_trail": ("", _but("", *_SPACES)),
    "tags": ("[INIT][DEFAULT]", ("", "[EXEC]", "[DFX_INFO]", "[lower]", "[A1]", "[INIT] [X]", "[]")),
    "text_gap": (" ", ("", "  ", "\t", "\u00a0", ":", " :")),
    "end": ("", ("\r", "\r\r", " ", "\r \r", "\n", "\ny")),
}
SHAPES = ("sk", "runtime", "ge", "idedd", "free")
#: message texts (the generated ones come on top)
TEXTS = (
    "kernel execute failed",
    "ErrCode=507035, desc=[vector core exception]",
    "  [804] index=1098, type=EVENT_NOTIFY, numBlocks=0, args=0x12c100801b80",
    ": : x",
    "x: y",
    ":tail",
    "[DFX_INFO]kernel execute failed",
    "\tkernel",
    "",
    "args=0x12345678901234567",  # 17 hex digits: beyond 64 bits
    "id=123456789012345678901",  # 21 digits: beyond 64 bits
    "ns=12345678901234567",  # 17 digits: long, but fits in 64 bits
    "\u00e9\u8fd9 EZ9999",
)


def render(shape: str, v: dict[str, str], text: str) -> str:
    """The line of ``shape`` with the parts ``v`` (artifacts.md §1.2's layout)."""
    head = (
        f"[{v['level_lead']}{v['level']}{v['level_trail']}]{v['after_level']}{v['module']}{v['before_paren']}"
        f"({v['after_paren']}{v['pid']}{v['before_comma']},{v['proc']}){v['before_colon']}:{v['after_colon']}"
        f"{v['stamp']}{v['after_stamp']}{v['pre']}[{v['src_lead']}{v['src_path']}:{v['src_line']}{v['src_trail']}]"
    )
    lead, func, gap = v["rest_lead"], v["func"], v["text_gap"]
    if shape == "sk":
        rest = f"{lead}[SK][{func}]{v['sk_gap']}{text}"
    elif shape == "idedd":
        rest = f"{lead}[tid:{v['tid_lead']}{v['tid']}]{gap}{text}"
    elif shape == "ge":
        rest = f"{lead}{v['tid']}{v['tid_gap']}{func}{v['func_trail']}:{gap}{text}"
    elif shape == "runtime":
        rest = f"{lead}{v['tid']}{v['tid_gap']}{func}{v['func_trail']}:{v['tags']}{text}"
    else:
        rest = text
    return head + rest + v["end"]


def _agrees(text: str, complete: bool = True) -> bool:
    """The property: the fast path declines, or builds the grammar's record (every field, the hash)."""
    fast = fast_plog_line(text, SRC, complete)
    if fast is None:
        return True
    general = parse_plog_line(text, SRC, complete=complete)
    return fast == general and hash(fast) == hash(general)


def test_every_odd_part_alone() -> None:
    """Each odd value of each part, alone in a line the runtime could have printed, every shape."""
    canon = {k: c for k, (c, _odd) in PARTS.items()}
    fast = 0
    for shape in SHAPES:
        for text in TEXTS:
            assert _agrees(render(shape, canon, text)), (shape, text)
            for part, (_c, odd) in PARTS.items():
                for value in odd:
                    line = render(shape, {**canon, part: value}, text)
                    assert _agrees(line), line
                    fast += fast_plog_line(line, SRC) is not None
    assert fast > 1000  # the border is walked from the inside too, not only declined


@st.composite
def plog_texts(draw: st.DrawFn) -> str:
    """One physical line (no newline): canonical parts, a few (or all) odd ones, any message text."""
    odd = draw(
        st.one_of(st.just(frozenset(PARTS)), st.frozensets(st.sampled_from(sorted(PARTS)), max_size=3))
    )
    v = {k: draw(st.sampled_from(vals)) if k in odd else c for k, (c, vals) in PARTS.items()}
    if "stamp" not in odd:
        v["stamp"] = draw(_stamps())
    text = draw(
        st.one_of(
            st.sampled_from(TEXTS),
            st.text(
                alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=30
            ),
        )
    )
    line = render(draw(st.sampled_from(SHAPES)), v, text)
    if draw(st.integers(0, 9)) == 0:  # a truncated line: any prefix
        line = line[: draw(st.integers(0, len(line)))]
    return line


@st.composite
def _stamps(draw: st.DrawFn) -> str:
    """A stamp of the §1.2 shape with any two-digit fields (month 13, day 32, hour 25 …)."""
    year = draw(st.integers(0, 9999))
    mo, d, h, mi, s = (draw(st.integers(0, 99)) for _ in range(5))
    milli, micro = draw(st.integers(0, 999)), draw(st.integers(0, 999))
    return f"{year:04d}-{mo:02d}-{d:02d}-{h:02d}:{mi:02d}:{s:02d}.{milli:03d}.{micro:03d}"


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(text=plog_texts(), complete=st.booleans())
@example(text="[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func:x: y", complete=True)
@example(text="[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func: : y", complete=True)
@example(text="[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.100 [a.cc:1]2 Func:\t:y", complete=True)
@example(text="[INFO] GE(1,p):2026-13-10-14:03:21.518.100 [a.cc:1][SK][F]\r", complete=False)
@example(text="[INFO] GE(1,p):2026-06-10-14:03:21.518.100 [a.cc:1][SK][F] x\ny", complete=True)
def test_fast_path_is_the_grammar_or_declines(text: str, complete: bool) -> None:
    """Whenever the fast path builds a record, it is the one the grammar builds (every field)."""
    assert _agrees(text, complete)


# ----------------------------------------------------------------------------- the common shapes

_SK_FUNC = st.text(alphabet=st.sampled_from("abcXYZ_09"), min_size=1, max_size=12)
_NAME = st.from_regex(r"[A-Za-z_~][A-Za-z0-9_~<>]{0,10}", fullmatch=True)
_ASCII_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E).filter(lambda c: c not in ":"), max_size=40
)


@st.composite
def common_texts(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    """A line as the runtime prints it (one space, basename or build path) and its fields by hand."""
    level = draw(st.sampled_from(["INFO", "ERROR", "WARNING", "DEBUG", "EVENT", "TRACE"]))
    module = draw(st.sampled_from(["ASCENDCKERNEL", "RUNTIME", "GE", "IDEDD"]))
    pid, tid, src_line = draw(st.integers(0, 2**31)), draw(st.integers(0, 2**31)), draw(st.integers(0, 99999))
    ts = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)))
    stamp = ts.strftime("%Y-%m-%d-%H:%M:%S.") + f"{ts.microsecond // 1000:03d}.{ts.microsecond % 1000:03d}"
    base = draw(st.sampled_from(["stream.cc", "sk_dfx_exception_handler.cpp", "x-y_1.h"]))
    path = draw(st.sampled_from(["", "/home/build/src/", "aot/"])) + base
    body = draw(_ASCII_TEXT).strip()
    shape = draw(st.sampled_from(["sk", "runtime", "ge", "idedd"]))
    want: dict[str, object] = {
        "level": level, "module": module, "pid": pid, "proc": "python3", "ts": ts, "ts_text": stamp,
        "src_file": base, "src_line": src_line, "tid": None, "func": None, "tags": (), "text": body,
        "is_sk": False,
    }  # fmt: skip
    if shape == "sk":
        func = draw(_SK_FUNC)
        rest = f"[SK][{func}] {body}"
        want.update(func=func, is_sk=True)
    elif shape == "idedd":
        rest = f"[tid:{tid}] {body}"
        want.update(tid=tid)
    else:
        func = draw(_NAME)
        tags = tuple(draw(st.lists(st.sampled_from(["INIT", "DEFAULT", "EXEC", "LOAD"]), max_size=2)))
        sep = " " if shape == "ge" or not tags else ""
        if not sep and body.startswith("["):
            body = "-" + body  # ``[A]`` right after the tags would be one more tag
            want.update(text=body)
        rest = f"{tid} {func}:{''.join(f'[{t}]' for t in tags)}{sep}{body}"
        want.update(tid=tid, func=func, tags=tags)
    return f"[{level}] {module}({pid},python3):{stamp} [{path}:{src_line}]{rest}", want


@settings(max_examples=500)
@given(case=common_texts())
def test_common_shapes_take_the_fast_path(case: tuple[str, dict[str, object]]) -> None:
    """The shapes that fill a real plog are recognised, with the fields written from the line's parts."""
    text, want = case
    fast = fast_plog_line(text, SRC, True)
    assert fast is not None, text
    got = {k: getattr(fast, k) for k in want}
    assert got == want
    assert fast.src == SRC and fast.complete is True


# ----------------------------------------------------------------------------- §1.2 by hand


def test_spec_sk_example() -> None:
    """artifacts.md §1.2's SK example, fields read off the line by hand."""
    text = (
        "[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.402 [sk_dfx_exception_handler.cpp:877]"
        "[SK][IsSuperKernelException] Exception is from superkernel function 'sk_entry_mix11_op_trace', "
        "op_trace=true, proceeding with handling"
    )
    rec = fast_plog_line(text, SRC, True)
    assert rec == PlogLine(
        SRC,
        "ERROR",
        "ASCENDCKERNEL",
        48213,
        "python3",
        datetime(2026, 6, 10, 14, 3, 21, 518402),
        "2026-06-10-14:03:21.518.402",
        "sk_dfx_exception_handler.cpp",
        877,
        None,
        "IsSuperKernelException",
        (),
        "Exception is from superkernel function 'sk_entry_mix11_op_trace', op_trace=true, proceeding with handling",
        True,
        True,
    )


def test_sk_task_queue_line_keeps_the_indent_after_one_space() -> None:
    """The SK macro's ``"[SK][%s] "`` eats one space; the message's own indent stays."""
    text = (
        "[INFO] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.537.239 [sk_dfx_exception_handler.cpp:1645]"
        "[SK][PrintTaskQueue]   [804] index=1098, type=EVENT_NOTIFY, numBlocks=0, args=0x12c100801b80"
    )
    rec = fast_plog_line(text, SRC, False)
    assert rec is not None
    assert (rec.level, rec.func, rec.tid, rec.is_sk, rec.complete) == (
        "INFO",
        "PrintTaskQueue",
        None,
        True,
        False,
    )
    assert rec.text == "  [804] index=1098, type=EVENT_NOTIFY, numBlocks=0, args=0x12c100801b80"
    assert rec.ts == datetime(2026, 6, 10, 14, 3, 21, 537239)


def test_spec_runtime_example_with_tags() -> None:
    """§1.2 RUNTIME: ``[stream.cc:1512]539029 GetError:[INIT][DEFAULT]Aicore kernel …`` (tid glued to ``]``)."""
    text = (
        "[ERROR] RUNTIME(539000,python3):2026-03-28-11:32:18.888.239 [stream.cc:1512]539029 "
        "GetError:[INIT][DEFAULT]Aicore kernel execute failed, device_id=0"
    )
    rec = fast_plog_line(text, SRC, True)
    assert rec is not None
    assert (rec.module, rec.pid, rec.src_file, rec.src_line) == ("RUNTIME", 539000, "stream.cc", 1512)
    assert (rec.tid, rec.func, rec.tags, rec.is_sk) == (539029, "GetError", ("INIT", "DEFAULT"), False)
    assert rec.text == "Aicore kernel execute failed, device_id=0"
    assert rec.ts == datetime(2026, 3, 28, 11, 32, 18, 888239)


def test_spec_ge_and_idedd_and_build_path() -> None:
    """§1.2 GE ``<tid> <Function>: <text>``, IDEDD ``[tid:<tid>] <text>``, ``[/xxx/xxx.cpp:42]`` → basename."""
    ge = fast_plog_line(
        "[TRACE] GE(12,python3):2026-03-28-11:32:18.888.239 [/xxx/xxx.cpp:42]77 Build: graph done", SRC, True
    )
    assert ge is not None
    assert (ge.src_file, ge.src_line, ge.tid, ge.func, ge.tags, ge.text) == (
        "xxx.cpp",
        42,
        77,
        "Build",
        (),
        "graph done",
    )
    idedd = fast_plog_line(
        "[ERROR] IDEDD(12,python3):2026-03-28-11:32:18.888.239 [adump.cpp:9][tid:1568661] [Dump][Exception] x",
        SRC,
        True,
    )
    assert idedd is not None
    assert (idedd.module, idedd.tid, idedd.func, idedd.text) == (
        "IDEDD",
        1568661,
        None,
        "[Dump][Exception] x",
    )


def test_out_of_range_stamp_is_a_record_without_time() -> None:
    """Month 13: the record stays (``ts`` None, the stamp text kept), as the grammar says."""
    text = "[ERROR] ASCENDCKERNEL(1,p):2026-13-10-14:03:21.518.402 [a.cpp:1][SK][F] x"
    rec = fast_plog_line(text, SRC, True)
    assert rec is not None and rec.ts is None and rec.ts_text == "2026-13-10-14:03:21.518.402"
    assert rec.ts_key == (0, datetime.min)


@pytest.mark.parametrize(
    "text",
    [
        # the troubleshooting guide's extra spaces: the grammar's business
        "[ERROR]  RUNTIME(2237671,python3) :2024-01-02-11:47:51.222.069 [ engine.CC:4057 ]2479231 "
        "ProcLogicCqReport:[EXEC][EXEC]Task run failed",
        # a GE TRACE bracket group before [file:line]
        "[TRACE] GE(1,p):2026-06-10-14:03:21.518.402 [status:STOP][graph.cc:3]9 Run: x",
        # a scoped function name followed by text glued to the colon: the grammar's greedy name decides
        "[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.402 [a.cc:1]2 Func:x: y",
        # no shape after [file:line]: the whole rest is the text
        "[INFO] GE(1,p):2026-06-10-14:03:21.518.402 [a.cc:1] free text",
    ],
)
def test_other_shapes_go_to_the_grammar(text: str) -> None:
    """Lines outside the fast shapes are declined, and the grammar still reads them."""
    assert fast_plog_line(text, SRC, True) is None
    assert parse_plog_line(text, SRC) is not None


def test_scoped_name_glued_text_read_as_the_grammar_reads_it() -> None:
    """``Func:x: y``: the grammar's function name is ``Func:x`` (greedy, may hold ``:``)."""
    rec = parse_plog_line("[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.402 [a.cc:1]2 Func:x: y", SRC)
    assert rec is not None and (rec.func, rec.text) == ("Func:x", "y")


# ----------------------------------------------------------------------------- the batched scan

_MARKED = st.sampled_from(["kernel execute failed", "ErrCode=1", "[SK][F] x", "EZ9999: y", "no marker"])


@st.composite
def plog_files(draw: st.DrawFn) -> list[bytes]:
    """The lines of a plog: generated records, error-manager text, blanks, damaged bytes."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 90))):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            text = draw(plog_texts())
            if "[SK][" not in text:
                text += " " + draw(_MARKED)
            raw = text.encode("utf-8")
        elif kind == 6:
            raw = draw(_MARKED).encode()
        elif kind == 7:
            raw = draw(st.sampled_from([b"", b"\r", b"EZ9999: a\xff\xfe b", b"[SK][\xe9\x80"]))
        else:
            good = draw(common_texts())[0] + " ErrCode=2"
            raw = good.encode()
        lines.append(raw.replace(b"\n", b" ").replace(b"\0", b" "))  # a NUL makes it a binary file
    return lines


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=plog_files(), final_newline=st.booleans(), pid=st.sampled_from([None, 1, 48213]))
def test_scan_records_equal_the_line_at_a_time_reading(
    lines: list[bytes], final_newline: bool, pid: int | None
) -> None:
    """Batches (ASCII or not, with or without oversized numbers, ``\\r`` endings, a truncated last line)
    change nothing: same records, same unrecognized lines, same order, same line numbers."""
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "plog-48213_20260610140321518.log"
        path.write_bytes(data)
        got = list(scan_plog(path, pid))
        assert got == plog_reference(path, data, pid)


def test_scan_records_of_a_long_file_cross_batches(tmp_path: Path) -> None:
    """Hundreds of lines (several batches), one oversized and one non-ASCII line among them."""
    sk = "[INFO] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.{:03d}.239 [h.cpp:1645][SK][Print] n={}"
    rows = [sk.format(i % 1000, i) for i in range(300)]
    rows[70] += " args=0x123456789012345678"  # 18 hex digits: not a record
    rows[200] += " \u8bbe\u5907"
    rows[250] += "\r"
    path = tmp_path / "plog-48213_20260610140321518.log"
    data = ("\n".join(rows)).encode()
    path.write_bytes(data)
    got = list(scan_plog(path))
    assert len(got) == 300
    assert got == plog_reference(path, data, None)
    assert got[70] == Unrecognized(Source(str(path), 71), rows[70], "plog_scan")
    assert [type(r) for r in got].count(PlogLine) == 299
    rec = got[200]
    assert (
        isinstance(rec, PlogLine) and rec.text == "n=200 \u8bbe\u5907" and rec.src == Source(str(path), 201)
    )
    last = got[299]
    assert isinstance(last, PlogLine) and last.complete is False and last.text == "n=299"
    assert isinstance(got[250], PlogLine) and got[250].text == "n=250"


def test_pid_filter_on_batches_of_records_only(tmp_path: Path) -> None:
    """Two processes' lines interleaved, every line a record: the filter keeps one pid's, in order."""
    row = "[ERROR] ASCENDCKERNEL({},python3):2026-06-10-14:03:21.518.{:03d} [h.cpp:9][SK][F] n={}"
    rows = [row.format(48213 if i % 3 else 777, i % 1000, i) for i in range(400)]
    path = tmp_path / "plog-48213_20260610140321518.log"
    data = ("\n".join(rows) + "\n").encode()
    path.write_bytes(data)
    got = list(scan_plog(path, 48213))
    assert [r.text for r in got if isinstance(r, PlogLine)] == [f"n={i}" for i in range(400) if i % 3]
    assert got == plog_reference(path, data, 48213)
    assert len(list(scan_plog(path, 777))) == 134


def test_stamps_across_seconds_and_an_impossible_one(tmp_path: Path) -> None:
    """The second's fields are reused only while the second lasts; a month-13 line has no time."""
    row = "[INFO] ASCENDCKERNEL(1,p):2026-{:02d}-10-14:03:{:02d}.{:03d}.{:03d} [h.cpp:9][SK][F] n"
    stamps = [(6, i // 7, i % 1000, (i * 37) % 1000) for i in range(200)]
    stamps[100] = (13, 14, 0, 0)
    stamps[101] = (6, 14, 0, 1)  # the same second as the line before, in a valid month
    path = tmp_path / "plog-1_20260610140321518.log"
    path.write_text("\n".join(row.format(*s) for s in stamps) + "\n")
    got = list(scan_plog(path))
    want = [
        None if mo == 13 else datetime(2026, mo, 10, 14, 3, s, ms * 1000 + us) for mo, s, ms, us in stamps
    ]
    assert [r.ts for r in got if isinstance(r, PlogLine)] == want


def test_repeated_parts_tables_stay_bounded_and_right(tmp_path: Path) -> None:
    """More distinct heads and locations than the tables hold: every record still has its own."""
    from skdbg.parsers import plog_line

    n = plog_line._REPEATS_MAX + 500
    row = "[ERROR] RUNTIME({},python3):2026-06-10-14:03:21.518.100 [a/s{}.cc:{}]9 F:[EXEC]ErrCode=1"
    path = tmp_path / "plog-1_20260610140321518.log"
    path.write_text("\n".join(row.format(i, i, i + 1) for i in range(n)) + "\n")
    got = list(scan_plog(path))
    assert [(r.pid, r.src_file, r.src_line) for r in got if isinstance(r, PlogLine)] == [
        (i, f"s{i}.cc", i + 1) for i in range(n)
    ]
    assert (
        len(plog_line._HEADS) <= plog_line._REPEATS_MAX and len(plog_line._PLACES) <= plog_line._REPEATS_MAX
    )


def test_numbers_no_runtime_prints_never_reach_int(tmp_path: Path) -> None:
    """A pid, location line or tid of thousands of digits (and a hex value past 64 bits): the line is
    kept as unrecognized, as the grammar says, and nothing raises (``int`` refuses 4,300+ digits)."""
    long = "9" * 5000
    rows = [
        f"[ERROR] ASCENDCKERNEL({long},p):2026-06-10-14:03:21.518.402 [h.cpp:9][SK][F] x",
        f"[ERROR] ASCENDCKERNEL(1,p):2026-06-10-14:03:21.518.402 [h.cpp:{long}][SK][F] x",
        f"[ERROR] RUNTIME(1,p):2026-06-10-14:03:21.518.402 [a.cc:1]{long} F:[EXEC]ErrCode=1",
        f"[ERROR] IDEDD(1,p):2026-06-10-14:03:21.518.402 [a.cc:1][tid:{long}] ErrCode=1",
        "[ERROR] ASCENDCKERNEL(1,p):2026-06-10-14:03:21.518.402 [h.cpp:9][SK][F] pc=0x1234567890abcdef01",
        "[ERROR] ASCENDCKERNEL(1,p):2026-06-10-14:03:21.518.402 [h.cpp:9][SK][F] fine",
    ]
    path = tmp_path / "plog-1_20260610140321518.log"
    path.write_text("\n".join(rows) + "\n")
    got = list(scan_plog(path))
    assert got[:5] == [Unrecognized(Source(str(path), i + 1), rows[i], "plog_scan") for i in range(5)]
    assert isinstance(got[5], PlogLine) and got[5].text == "fine"


def test_long_heads_locations_and_tag_runs_are_not_kept_after_the_scan(tmp_path: Path) -> None:
    """A head, ``[file:line]`` or tag run can be a line long: such texts are parsed right but never
    kept in the repeated-part tables (4,096 of them would pin gigabytes once the scan is over)."""
    from skdbg.parsers import plog_line

    proc = "p" * 5000
    path_part = "d/" * 2000 + "x.cc"
    tags = "[EXEC]" * 500
    rows = [
        f"[ERROR] RUNTIME(7,{proc}):2026-06-10-14:03:21.518.100 [{path_part}:3]9 F:{tags}ErrCode=1",
        "[ERROR] RUNTIME(7,python3):2026-06-10-14:03:21.518.101 [a.cc:4]9 F:[EXEC]ErrCode=2",
    ]
    path = tmp_path / "plog-7_20260610140321518.log"
    path.write_text("\n".join(rows) + "\n")
    plog_line._HEADS.clear()
    plog_line._PLACES.clear()
    plog_line._TAGS.clear()
    got = [r for r in scan_plog(path) if isinstance(r, PlogLine)]
    assert [(r.proc, r.src_file, r.src_line, len(r.tags), r.text) for r in got] == [
        (proc, "x.cc", 3, 500, "ErrCode=1"),
        ("python3", "a.cc", 4, 1, "ErrCode=2"),
    ]
    kept = [*plog_line._HEADS, *plog_line._PLACES, *plog_line._TAGS]
    assert sorted(kept) == sorted(["[ERROR] RUNTIME(7,python3)", "a.cc:4", "[EXEC]"])


def test_batches_close_at_their_byte_budget() -> None:
    """64 one-MiB marker lines are not turned into records together: a batch closes once its lines
    reach the byte budget, and no line is lost or reordered."""
    from skdbg.parsers import plog

    big = b"x" * (plog._BATCH_BYTES // 2)
    items = [(i, big if i % 2 else b"short", True) for i in range(1, 11)]
    batches = list(plog._batches([_columns(items)]))
    assert [len(b[0]) for b in batches] == [3, 4, 3]  # big, short, big | short, big, short, big | rest
    assert [it for b in batches for it in zip(*b, strict=True)] == items
    many = [(i, b"s", True) for i in range(1, plog._BATCH_LINES * 2 + 2)]
    assert [len(b[0]) for b in plog._batches([_columns(many)])] == [plog._BATCH_LINES, plog._BATCH_LINES, 1]


def _columns(items: list[tuple[int, bytes, bool]]) -> tuple[list[int], list[bytes], list[bool]]:
    nos, raws, completes = zip(*items, strict=True)
    return list(nos), list(raws), list(completes)


#: plog stamps not of the form ``2026-06-10-14:03:21.518.402`` (§1.2): a digit short or over in a field,
#: other scripts' digits (Arabic-Indic, fullwidth: ``re`` takes them for ``\d`` in text, never here)
_BAD_STAMPS = (
    "202-06-10-14:03:21.518.402",
    "20266-06-10-14:03:21.518.402",
    "2026-6-10-14:03:21.518.402",
    "2026-06-10-14:3:21.518.402",
    "2026-06-10-14:03:21.51.402",
    "2026-06-10-14:03:21.518.4021",
    "٢٠٢٦-06-10-14:03:21.518.402",
    "2026-06-10-14:03:21.518.４０２",
)


@pytest.mark.parametrize("stamp", _BAD_STAMPS)
def test_the_fast_patterns_take_only_the_exact_stamp(stamp: str) -> None:
    """The spec's SK line (§1.2) is taken by the fast line pattern and the block pattern with its own
    stamp, and by neither with any other: such a line goes to the grammar."""
    good = (
        "[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.402 [sk_dfx_exception_handler.cpp:877]"
        "[SK][IsSuperKernelException] Exception is from superkernel function 'sk_entry_mix11_op_trace'"
    )
    bad = good.replace("2026-06-10-14:03:21.518.402", stamp)
    assert fast_plog_line(good, SRC, True) is not None
    assert len(BLOCK_LINE_RE.findall(good)) == 1
    assert fast_plog_line(bad, SRC, True) is None
    assert BLOCK_LINE_RE.findall(bad) == []
    assert BLOCK_LINE_RE.findall("\n".join([good, bad, good])) == BLOCK_LINE_RE.findall(good) * 2
