"""The plog scan's block-level shortcuts against the line-at-a-time reading (issue 18, plog scan CPU).

The vectorised scan now looks its anchors up a slice at a time, confirms many candidates with numpy
passes instead of one ``startswith`` each, copies a run of consecutive marker lines out in one slice
and decides re-anchoring after confirming. None of that may change a line found, its number, its
bytes, its completeness or a ``line_too_long`` cut. The oracle is the naive split of the file into
lines (and, for the paths between themselves, the per-candidate confirmation and the ``bytes.find``
small-block search). Blocks are made tiny so that runs of marker lines cross block boundaries.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skdbg.parsers import plog as plog_mod
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines, scan_plog
from skdbg.parsers.plog_line import parse_plog_line

MAX_LINE = 200  # the line limit of these tests (monkeypatched): the hand-written lines fit, others not

#: hand-written plog lines (artifacts.md §1.2, §1.5, §1.7 wording), and their pieces
SK_LINE = (
    b"[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.402 "
    b"[sk_dfx_exception_handler.cpp:967][SK][IsSuperKernelException] Exception is from superkernel"
)
SK_SHORT = b"[INFO] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.541.402 [h.cpp:1645][SK][P] n=1"
RT_LINE = (
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.518.100 [device_error_proc.cc:1166]48301 "
    b"ProcessStarsCoreErrorInfo:[EXEC]The extend info: errcode:(0x800000)"
)
EM_LINE = b"EZ9999: Inner Error!"
NOISE = b"[INFO] GE(48213,python3):2026-06-10-14:03:21.518.000 [graph.cc:12]48301 Run: step done"

_PIECES = (
    b"noise",
    b"[SK][",
    b"[SK]",
    b"SK][",
    b"EZ9999",
    b"EZ99",
    b"kernel execute failed",
    b"kernel execute fail",
    b"ErrCode=",
    b"[FUNC:",
    b"The extend info",
    b"ynchronize failed",
    b"failed",
    b"Dump",
    b"\r",
    b" ",
    b"x" * 30,
    "\u8bbe\u5907".encode(),
)


@contextmanager
def _tiny_blocks(
    chunk: int, *, small_block: int = -1, confirm_each_max: int | None = None, uncontended: bool = False
) -> Iterator[None]:
    """Blocks of ``chunk`` bytes, the vectorised path forced (``small_block=-1``) and fresh per-thread
    state, so every run of marker lines crosses block boundaries in a file of a few hundred bytes.
    ``uncontended``: the thread scans as the forked child's does (:func:`plog.uncontended_lookups`),
    its lookups sliced at another size."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(plog_mod, "MAX_LINE", MAX_LINE)
        m.setattr(plog_mod, "CHUNK", chunk)
        m.setattr(plog_mod, "_SMALL_BLOCK", small_block)
        m.setattr(plog_mod, "_GATHER", 8, raising=False)  # many lookup slices per block
        m.setattr(plog_mod, "_GATHER_UNCONTENDED", 5, raising=False)  # as many, cut elsewhere
        m.setattr(plog_mod, "_COUNT_STEP", 7, raising=False)  # newlines counted in many pieces
        if confirm_each_max is not None:
            m.setattr(plog_mod, "_CONFIRM_EACH_MAX", confirm_each_max, raising=False)
        m.setattr(plog_mod, "_STATE", plog_mod._ScanState())
        if uncontended:
            plog_mod.uncontended_lookups()
        yield


def _scan(path: Path, **tiny: int) -> tuple[list[tuple[int, bytes, bool]], list[tuple[int, int]]]:
    chunk = tiny.pop("chunk")
    cuts: list[tuple[int, int]] = []
    with _tiny_blocks(chunk, **tiny):
        lines = list(scan_marker_lines(path, FAULT_MARKERS, cuts))
    return lines, cuts


def _naive(data: bytes) -> tuple[list[tuple[int, bytes, bool]], list[tuple[int, int]]]:
    """The file read a line at a time: every line holding a marker, cut to MAX_LINE, and the cuts.

    Over-long lines given to this oracle hold a marker in their head: the scan records the cut of a
    line over the limit only when it holds a marker or is longer than the read buffer, and sees a
    marker past the limit only when the line fits the buffer (tests/test_plog_scan_robust.py); the
    paths are compared with each other on those lines below."""
    pieces = data.split(b"\n")
    last_complete = data.endswith(b"\n")
    if last_complete or not data:
        pieces.pop()
    lines: list[tuple[int, bytes, bool]] = []
    cuts: list[tuple[int, int]] = []
    at = 0
    for no, raw in enumerate(pieces, 1):
        if len(raw) > MAX_LINE:
            cuts.append((no, at + MAX_LINE))
        if any(m in raw for m in FAULT_MARKERS):
            lines.append((no, raw[:MAX_LINE], no < len(pieces) or last_complete))
        at += len(raw) + 1
    return lines, cuts


@st.composite
def plog_bytes(draw: st.DrawFn, *, tail_markers: bool) -> bytes:
    """Lines of hand-written plog lines, dense runs of SK lines, random pieces (markers, their
    fragments, ``\\r``, non-ASCII) and over-long lines; the last line with or without its newline."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 24))):
        kind = draw(st.sampled_from(("sk_run", "line", "pieces", "long")))
        if kind == "sk_run":  # an SK handler block: consecutive marker lines
            n = draw(st.integers(1, 12))
            lines.extend(draw(st.sampled_from((SK_SHORT, SK_SHORT + b"\r", b"[SK][F] x"))) for _ in range(n))
        elif kind == "line":
            lines.append(draw(st.sampled_from((SK_LINE, RT_LINE, EM_LINE, NOISE, b"", b"\r", NOISE + b"\r"))))
        elif kind == "pieces":
            lines.append(b"".join(draw(st.lists(st.sampled_from(_PIECES), max_size=8))))
        elif tail_markers:  # longer than MAX_LINE, with or without a marker in its head or its tail
            head = draw(st.sampled_from((b"", b"EZ9999 ", b"[SK][F] ")))
            tail = draw(st.sampled_from((b"", b" EE8888")))
            lines.append(head + b"y" * draw(st.integers(MAX_LINE - len(head) + 1, 600)) + tail)
        else:  # longer than MAX_LINE, a marker in its head (see _naive)
            head = draw(st.sampled_from((b"EZ9999 ", b"[SK][F] ", SK_LINE)))
            lines.append(head + b"y" * draw(st.integers(MAX_LINE - len(head) + 1, 600)))
    data = b"\n".join(lines)
    if lines and draw(st.booleans()):
        data += b"\n"
    return data


_SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _file(d: str, data: bytes) -> Path:
    path = Path(d) / "plog-48213_20260610140321518.log"
    path.write_bytes(data)
    return path


@_SETTINGS
@given(data=plog_bytes(tail_markers=False), chunk=st.sampled_from((48, 97, 256, 4096)))
@example(data=b"\n".join([NOISE, *[SK_SHORT] * 9, EM_LINE, SK_LINE]), chunk=97)
@example(data=SK_SHORT + b"\r\n" + SK_SHORT, chunk=48)
@example(data=b"[SK]\n[SK]x\nEZ999\nkernel execute fail\n[SK][\nSK][ ErrCode\n[FUNC", chunk=48)  # near misses
def test_vectorised_scan_equals_the_line_at_a_time_reading(data: bytes, chunk: int) -> None:
    """Numpy confirmation and run copies (forced), tiny blocks: the lines, numbers, bytes,
    completeness and cuts of the naive reading."""
    with tempfile.TemporaryDirectory() as d:
        path = _file(d, data)
        assert _scan(path, chunk=chunk, confirm_each_max=0) == _naive(data)


@_SETTINGS
@given(data=plog_bytes(tail_markers=True), chunk=st.sampled_from((48, 97, 256)))
def test_confirmations_and_the_small_block_search_agree(data: bytes, chunk: int) -> None:
    """The numpy confirmation, the per-candidate one and the ``bytes.find`` search find the same lines
    and make the same cuts, markers past the line limit included."""
    with tempfile.TemporaryDirectory() as d:
        path = _file(d, data)
        vectorised = _scan(path, chunk=chunk, confirm_each_max=0)
        assert _scan(path, chunk=chunk, confirm_each_max=1 << 30) == vectorised
        assert _scan(path, chunk=chunk, small_block=1 << 30) == vectorised
        assert _scan(path, chunk=chunk, confirm_each_max=0, uncontended=True) == vectorised


def _reference_records(path: Path, data: bytes) -> list[object]:
    """What the line-at-a-time loop makes of the naive marker lines (one ``\\r`` off, UTF-8 with
    replacement, :func:`parse_plog_line` or an ``Unrecognized``)."""
    out: list[object] = []
    for no, raw, complete in _naive(data)[0]:
        text = (raw[:-1] if raw.endswith(b"\r") else raw).decode("utf-8", errors="replace")
        src = Source(str(path), no)
        rec = parse_plog_line(text, src, complete=complete)
        out.append(rec if rec is not None else Unrecognized(src, text, "plog_scan"))
    return out


@_SETTINGS
@given(data=plog_bytes(tail_markers=False), chunk=st.sampled_from((48, 256, 4096)))
def test_records_of_runs_across_blocks_equal_the_general_path(data: bytes, chunk: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = _file(d, data)
        gaps: list[Gap] = []
        with _tiny_blocks(chunk, confirm_each_max=0):
            got = list(scan_plog(path, gaps=gaps))
        assert got == _reference_records(path, data)
        assert [g.src.line for g in gaps if g.src is not None] == [no for no, _ in _naive(data)[1]]


def test_a_handler_block_across_blocks_by_hand(tmp_path: Path) -> None:
    """An over-long marker line, then ten SK lines (one ending in CRLF, the last without its newline)
    in 97-byte blocks: block boundaries fall inside the run; numbers and bytes counted by hand."""
    sk = b"[INFO] SK(1,p):2026-06-10-14:03:21.541.402 [h.cpp:9][SK][P] n=1"  # 63 bytes
    lines = [NOISE, *[sk] * 4, sk[:62] + b"\r", *[b"[SK][F] n=%d" % i for i in range(5)]]
    lines[0] = b"EZ9999 " + b"q" * (MAX_LINE + 5)  # over the limit: cut, its head kept
    path = tmp_path / "plog-48213_20260610140321518.log"
    path.write_bytes(b"\n".join(lines))
    got, cuts = _scan(path, chunk=97, confirm_each_max=0)
    assert got == [
        (1, lines[0][:MAX_LINE], True),
        (2, sk, True),
        (3, sk, True),
        (4, sk, True),
        (5, sk, True),
        (6, sk[:62] + b"\r", True),
        (7, b"[SK][F] n=0", True),
        (8, b"[SK][F] n=1", True),
        (9, b"[SK][F] n=2", True),
        (10, b"[SK][F] n=3", True),
        (11, b"[SK][F] n=4", False),
    ]
    assert cuts == [(1, MAX_LINE)]


def test_many_true_candidates_do_not_re_anchor(tmp_path: Path) -> None:
    """A block that is an SK handler block (every candidate a marker) keeps the anchors it has: no
    choice avoids true markers. A block of lines full of marker words re-anchors (see
    tests/test_plog_scan_robust.py)."""
    path = tmp_path / "plog-48213_20260610140321518.log"
    path.write_bytes(NOISE + b"\n" + (SK_SHORT + b"\n") * 2000)
    with _tiny_blocks(1 << 20, confirm_each_max=0):
        lines = list(scan_marker_lines(path, FAULT_MARKERS))
        (only,) = plog_mod._STATE.prefilters.values()
        calls: list[int] = []
        real = plog_mod._Prefilter.__init__

        def counting(self: plog_mod._Prefilter, *args: object) -> None:
            calls.append(1)
            real(self, *args)  # type: ignore[arg-type]

        with pytest.MonkeyPatch.context() as m:
            m.setattr(plog_mod._Prefilter, "__init__", counting)
            again = list(scan_marker_lines(path, FAULT_MARKERS))
        assert plog_mod._STATE.prefilters[tuple(FAULT_MARKERS)] is only and calls == []
    assert lines == again == [(no, SK_SHORT, True) for no in range(2, 2002)]


@pytest.mark.parametrize("uncontended", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_sliced_anchor_lookup_finds_every_anchor_position(seed: int, uncontended: bool) -> None:
    """The table looked up 8 words at a time (5 in a thread of uncontended lookups; and into the reused
    buffer) gives, in ascending order, exactly the positions whose 4 bytes are one of the anchors
    (counted by brute force); the lookups are made that many words a call."""
    rng = random.Random(seed)
    words = [b"[SK][", b"EZ9999", b"failed", b"The ", b"ab", b"\n", b"kernel execute failed", b"x"]
    data = b"".join(rng.choice(words) for _ in range(3000))
    a = np.frombuffer(data, dtype=np.uint8)
    sizes: list[int] = []
    real_take = np.take

    def take(table: object, words: Any, **kwargs: Any) -> Any:
        sizes.append(len(words))
        return real_take(table, words, **kwargs)

    with _tiny_blocks(1 << 20, uncontended=uncontended), pytest.MonkeyPatch.context() as m:
        pf = plog_mod._Prefilter(FAULT_MARKERS, a)
        m.setattr(np, "take", take)
        pos, quads = pf.anchors(a)
        pos_again, _ = pf.anchors(a[:1001])  # a second, shorter call through the same buffer
    step = 5 if uncontended else 8
    assert max(sizes) == step and sum(sizes) == len(data) // 2 + 1000 // 2  # every word, in such slices
    anchors = {int(q) for q in pf.quads}
    want = [p for p in range(len(data) - 3) if int.from_bytes(data[p : p + 4], "little") in anchors]
    assert pos.tolist() == want
    assert quads.tolist() == [int.from_bytes(data[p : p + 4], "little") for p in want]
    assert pos_again.tolist() == [p for p in want if p + 4 <= 1001]


@pytest.mark.parametrize("step", [1, 3, 7, 64])
def test_newlines_counted_in_pieces_are_every_newline(step: int) -> None:
    """The count in pieces of ``step`` bytes (a piece and the reused buffer cut short at the end; a
    longer call, then a shorter one through the same buffer) is the newline count of the bytes."""
    rng = random.Random(step)
    with _tiny_blocks(1 << 20), pytest.MonkeyPatch.context() as m:
        m.setattr(plog_mod, "_COUNT_STEP", step)
        for size in (0, 1, step - 1, step, step + 1, 5 * step + 3, 200, 9):
            data = bytes(rng.choice(b"\n\nab\r\x00\xff") for _ in range(size))
            assert plog_mod._newline_count(np.frombuffer(data, dtype=np.uint8)) == data.count(b"\n")


def test_a_block_of_near_misses_counts_the_newline_it_starts_with() -> None:
    """A block whose candidates are all false (``[SK]`` and ``SK][`` without the whole marker) that
    starts and ends with a newline: no line is returned and every newline is counted, the first one
    included (the line numbers of the blocks after it depend on it)."""
    data = b"\n" + b"a [SK] b SK][ c EZ99 d\n" * 40 + b"\n"
    found: list[int] = []
    with _tiny_blocks(1 << 20), pytest.MonkeyPatch.context() as m:
        m.setattr(plog_mod, "_COUNT_STEP", 16)
        # anchors chosen on other bytes, as a scan's first block would choose them
        plog_mod._STATE.prefilters[tuple(FAULT_MARKERS)] = plog_mod._Prefilter(
            FAULT_MARKERS, np.frombuffer(NOISE * 40, dtype=np.uint8)
        )
        real = plog_mod._Prefilter.anchors

        def anchors(self: plog_mod._Prefilter, a: Any) -> Any:
            pos, quads = real(self, a)
            found.append(len(pos))
            return pos, quads

        m.setattr(plog_mod._Prefilter, "anchors", anchors)
        got = plog_mod._scan_block(bytearray(data), len(data), FAULT_MARKERS, True, 1)
    assert found and found[0] > 0  # the block had candidates
    assert got == (data.count(b"\n"), [], [], [], [])


@pytest.mark.parametrize("first", [7, 64])
def test_the_newline_buffer_follows_a_larger_step(first: int) -> None:
    """A thread's buffer made at one step serves a larger step later (a setting changed mid-run)."""
    data = np.frombuffer(b"ab\ncd\n" * 100, dtype=np.uint8)
    with _tiny_blocks(1 << 20), pytest.MonkeyPatch.context() as m:
        m.setattr(plog_mod, "_COUNT_STEP", first)
        assert plog_mod._newline_count(data) == 200
        m.setattr(plog_mod, "_COUNT_STEP", first * 3)
        assert plog_mod._newline_count(data) == 200


def test_lines_carried_after_a_skipped_long_line_stay_lines(tmp_path: Path) -> None:
    """A line longer than the buffer is skipped to its newline; the lines read with that newline are
    carried over. When the next read brings no newline, they must not be taken for the head of one
    more long line (they were, before: lines 3 to 7 came back as one line 3 with newlines in it)."""
    lines = [SK_LINE, b"EZ9999 " + b"y" * 400, *[SK_SHORT] * 5]
    path = tmp_path / "plog-48213_20260610140321518.log"
    path.write_bytes(b"\n".join(lines))
    for kw in ({"confirm_each_max": 0}, {"small_block": 1 << 30}):
        got, cuts = _scan(path, chunk=48, **kw)
        assert got == [
            (1, SK_LINE, True),
            (2, lines[1][:MAX_LINE], True),
            *[(no, SK_SHORT, True) for no in range(3, 7)],
            (7, SK_SHORT, False),
        ]
        assert cuts == [(2, len(SK_LINE) + 1 + MAX_LINE)]


@settings(max_examples=100, deadline=None)
@given(
    sample=st.lists(
        st.sampled_from((b"ab", b"cd", b"abcd", b"bcda", b"[SK][", b"\x00", b"\xff\xff")), max_size=60
    ),
    wanted=st.lists(
        st.sampled_from((b"abcd", b"bcda", b"cdab", b"dabc", b"[SK]", b"SK][", b"\xff\xffab")), min_size=1
    ),
)
def test_quad_counts_equal_a_count_at_every_offset(sample: list[bytes], wanted: list[bytes]) -> None:
    """The halves-first count (only words whose low and high halves occur in some quad are searched)
    counts every occurrence at every byte offset, like a brute-force count."""
    data = b"".join(sample)
    quads = [plog_mod._quad(w, 0) for w in wanted]
    want = {q: sum(data[p : p + 4] == q.to_bytes(4, "little") for p in range(len(data) - 3)) for q in quads}
    assert plog_mod._quad_counts(np.frombuffer(data, dtype=np.uint8), quads) == want
