"""Gate F1 over a process of many rotated plogs: each file's first foreign-pid line, found in one
pass (issue 18), compared with the per-file search it replaces (the oracle below)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import Source
from skdbg.parsers.evidence import PlogEvidence
from skdbg.parsers.plog_line import PlogLine, parse_plog_line
from skdbg.triage.gate import _file_name, _first_foreign_lines

#: a runtime line of another process (pid 999) in the shape of artifacts.md §1.1
_TEXT = (
    "[ERROR] RUNTIME(999,python3):2026-06-10-14:00:01.123.456 [stream.cc:1024]999 Synchronize:"
    " Stream synchronize failed, stream_id={n}, retCode=0x7150050."
)


def _line(file: str, no: int | None, n: int) -> PlogLine:
    rec = parse_plog_line(_TEXT.format(n=n), Source(file, no))
    assert rec is not None and rec.pid == 999
    return rec


def _oracle(plogs: list[PlogEvidence], path: str) -> PlogLine | None:
    """gate._first_foreign_line as it was: the first evidence listing ``path``, its lowest line."""
    for pe in plogs:
        if path in pe.files:
            hits = [line for line in pe.foreign if line.src.file == path]
            return min(hits, key=lambda line: line.src.line or 0) if hits else None
    return None


_FILES = [f"/s/log/plog-7_2026061014000{i}000.log" for i in range(6)]


def test_hand_made_processes() -> None:
    a, b, c = _FILES[:3]
    pe1 = PlogEvidence(
        pid=7, kind="plog", files=[a, b], foreign=[_line(b, 9, 1), _line(b, 4, 2), _line(b, 4, 3)]
    )
    pe2 = PlogEvidence(
        pid=7, kind="device", files=[b, c], foreign=[_line(c, None, 4), _line(c, 2, 5), _line(b, 1, 6)]
    )
    got = _first_foreign_lines([pe1, pe2])
    assert got[a] is None
    assert got[b] is pe1.foreign[1]  # lowest line of the first evidence listing b; first on the tie
    assert got[c] is pe2.foreign[0]  # no line number counts as 0
    assert _FILES[3] not in got
    for f in (a, b, c):
        assert got[f] is _oracle([pe1, pe2], f)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_FILES), max_size=4, unique=True),
            st.lists(st.tuples(st.sampled_from(_FILES), st.one_of(st.none(), st.integers(0, 5))), max_size=8),
        ),
        max_size=4,
    )
)
def test_one_pass_is_the_per_file_search(spec: list[tuple[list[str], list[tuple[str, int | None]]]]) -> None:
    n = 0
    plogs = []
    for files, foreign in spec:
        lines = []
        for f, no in foreign:
            n += 1
            lines.append(_line(f, no, n))
        plogs.append(PlogEvidence(pid=7, kind="plog", files=files, foreign=lines))
    got = _first_foreign_lines(plogs)
    for f in _FILES:
        assert got.get(f) is _oracle(plogs, f)


@pytest.mark.parametrize(
    "path",
    [
        "/s/log/plog-7_20260610140000000.log",
        "plog-7_20260610140000000.log",
        "/s/log/plog-7_20260610140000000.log/",
        "/s/log/plog-7_20260610140000000.log/.",
        "/s/log//plog-7_20260610140000000.log",
        "/s/log/./x.log/./",
        "/s/log/..",
        "//x.log",
        "/",
        ".",
        "",
    ],
)
def test_file_name_is_pathlib_name(path: str) -> None:
    assert _file_name(path) == Path(path).name


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="/.ab-_", max_size=20))
def test_file_name_is_pathlib_name_for_any_path(path: str) -> None:
    assert _file_name(path) == Path(path).name
