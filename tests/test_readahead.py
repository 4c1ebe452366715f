"""The plog scan asks the kernel for the bytes ahead of it (issue 18, cold first run).

What must hold: the advice covers the whole file in order, never more than one window ahead of what
was read, each byte range asked for once; a file system that refuses the advice is read as before;
and the scan's results are the same with and without it (advice never changes what ``read`` returns,
but the hook sits inside the read loop, so the loop is checked not to be disturbed).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skdbg.parsers import plog as plog_mod
from skdbg.parsers import readahead
from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines
from skdbg.parsers.readahead import ReadAhead

RT_LINE = (
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.518.100 [device_error_proc.cc:1166]48301 "
    b"ProcessStarsCoreErrorInfo:[EXEC]The extend info: errcode:(0x800000)\n"
)
NOISE = b"[INFO] GE(48213,python3):2026-06-10-14:03:21.518.000 [graph.cc:12]48301 Run: step done\n"


def _recorder(calls: list[tuple[int, int, int, int]]) -> object:
    def advise(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((fd, offset, length, advice))

    return advise


def test_windows_are_asked_in_order_and_only_when_half_used(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _recorder(calls))
    ahead = ReadAhead(7, window=100)
    assert calls == [(7, 0, 100, readahead._WILLNEED)]
    ahead.reached(30)  # 70 still asked for ahead: more than half a window
    assert len(calls) == 1
    ahead.reached(50)  # exactly half a window left ahead: the next window
    assert calls[1][1:3] == (100, 100)
    ahead.reached(260)  # the reader ran past what was asked: ask from where it is
    assert calls[2][1:3] == (260, 100)
    assert ahead.asked == 360


def test_a_refused_advice_turns_it_off_and_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    tries: list[int] = []

    def refuse(fd: int, offset: int, length: int, advice: int) -> None:
        tries.append(offset)
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(readahead, "_ADVISE", refuse)
    ahead = ReadAhead(3, window=10)
    ahead.reached(100)
    assert tries == [0]
    assert ahead.enabled is False


def test_no_advice_where_the_platform_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "_ADVISE", None)
    ahead = ReadAhead(3, window=10)
    ahead.reached(100)
    assert (ahead.enabled, ahead.asked) == (False, 0)


def _plog(tmp_path: Path) -> tuple[Path, bytes]:
    body = b"".join(RT_LINE if i % 37 == 5 else NOISE for i in range(3000))
    path = tmp_path / "plog-48213_20260610140058123.log"
    path.write_bytes(body)
    return path, body


def test_the_scan_asks_ahead_of_each_block_over_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, body = _plog(tmp_path)
    calls: list[tuple[int, int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _recorder(calls))
    monkeypatch.setattr(readahead, "WINDOW", 8192)
    monkeypatch.setattr(plog_mod, "CHUNK", 4096)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    found = list(scan_marker_lines(path, FAULT_MARKERS))
    starts = [c[1] for c in calls]
    assert starts == sorted(set(starts)), "each range asked for once, in file order"
    assert starts[0] == 0 and all(c[2] == 8192 for c in calls)
    assert starts[-1] + 8192 >= len(body), "the advice reached the end of the file"
    assert len(found) == body.count(RT_LINE)


def test_the_scan_finds_the_same_lines_with_and_without_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, body = _plog(tmp_path)
    monkeypatch.setattr(plog_mod, "CHUNK", 4096)
    runs = []
    for advise in (getattr(os, "posix_fadvise", None), None):
        monkeypatch.setattr(readahead, "_ADVISE", advise)
        monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
        runs.append(list(scan_marker_lines(path, FAULT_MARKERS)))
    lines = body.split(b"\n")
    expected = [(i + 1, ln, True) for i, ln in enumerate(lines) if ln + b"\n" == RT_LINE]
    assert runs[0] == runs[1] == expected
