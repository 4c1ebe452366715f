"""plog files: names, discovery, pid groups, rotation merge, full read vs scan (§1.1, §1.8, rows 6–10)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers import plog as plog_mod
from skdbg.parsers.common import ParseError, Unrecognized
from skdbg.parsers.plog import (
    FAULT_MARKERS,
    find_plog_files,
    group_by_pid,
    parse_plog_name,
    read_plog,
    scan_plog,
)
from skdbg.parsers.plog_line import PlogLine
from skdbg.parsers.runtime_faults import KernelFaultLine
from skdbg.scenebuilder import plog as sb
from skdbg.scenebuilder.lines import sk_plog_line

TS = datetime(2026, 6, 10, 14, 3, 21, 518402)


def sk(pid: int, ts: datetime, func: str, msg: str) -> str:
    return sk_plog_line("ERROR", pid, "python3", ts, func, msg)


def test_name_parsing() -> None:
    pf = parse_plog_name("/x/plog/plog-48213_20260610140321518.log")
    assert pf is not None
    assert (pf.kind, pf.pid, pf.stamp, pf.path) == (
        "plog",
        48213,
        datetime(2026, 6, 10, 14, 3, 21, 518000),
        "/x/plog/plog-48213_20260610140321518.log",
    )
    dev = parse_plog_name("device-77_20260610140321999.log")
    assert dev is not None and (dev.kind, dev.pid) == ("device", 77)
    bad = parse_plog_name("plog-1_20261310000000000.log")  # month 13
    assert bad is not None and bad.stamp is None
    assert parse_plog_name("plog-x_1.log") is None and parse_plog_name("super_kernel.log") is None


def test_row9_find_and_group_by_pid(tmp_path: Path) -> None:
    """Row 9: ranks kept apart; discovery anywhere under the root; device logs grouped separately."""
    (tmp_path / "rank0/log/run/plog").mkdir(parents=True)
    (tmp_path / "rank1/debug/device-0").mkdir(parents=True)
    (tmp_path / "rank0/log/run/plog/plog-100_20260610140000000.log").write_text(
        sb.runtime_line(TS, "a", pid=100) + "\n"
    )
    (tmp_path / "rank0/log/run/plog/plog-100_20260610130000000.log").write_text(
        sb.runtime_line(TS, "b", pid=100) + "\n"
    )
    (tmp_path / "rank0/log/run/plog/plog-200_20260610140000000.log").write_text(
        sb.runtime_line(TS, "c", pid=200) + "\n"
    )
    (tmp_path / "rank1/debug/device-0/device-100_20260610140000000.log").write_text("x\n")
    (tmp_path / "rank0/notes.log").write_text("x\n")
    groups = group_by_pid(find_plog_files(tmp_path))
    assert list(groups) == [("device", 100), ("plog", 100), ("plog", 200)]
    assert [Path(f.path).name for f in groups[("plog", 100)]] == [
        "plog-100_20260610130000000.log",
        "plog-100_20260610140000000.log",
    ]
    with pytest.raises(ParseError):
        find_plog_files(tmp_path / "missing")


def test_row9_interleaved_pids_filtered(tmp_path: Path) -> None:
    """Row 9: lines of another process interleaved → dropped on request, counted."""
    f = tmp_path / "plog-100_20260610140000000.log"
    f.write_text(
        "\n".join(
            [
                sb.runtime_line(TS, sb.kernel_fault_msg(), pid=100),
                sb.runtime_line(TS, sb.kernel_fault_msg(kernel_name="Add_1"), pid=999),
                sk(100, TS, "PrintDfxInfo", "=== SkDfxInfo (offset=6976, nodeCnt=3) ==="),
            ]
        )
        + "\n"
    )
    res = read_plog(f, pid=100)
    assert [r.pid for r in res.records] == [100, 100] and res.other_pid_lines == 1
    assert [r.src.line for r in res.records] == [1, 3]
    assert [type(r).__name__ for r in res.faults] == ["KernelFaultLine"]
    assert [r.func for r in res.sk_lines] == ["PrintDfxInfo"]
    assert read_plog(f).pids == [100, 999]
    assert [r.src.line for r in scan_plog(f, pid=100)] == [1, 3]


def test_row10_rotated_files_merged(tmp_path: Path) -> None:
    """Row 10: two rotated files of one pid → files in timestamp order, each in line order (row 6)."""
    first = tmp_path / "plog-7_20260610140000000.log"
    second = tmp_path / "plog-7_20260610140500000.log"
    first.write_text(
        sb.runtime_line(TS + timedelta(seconds=2), "f1-a", pid=7)
        + "\n"
        + sb.runtime_line(TS, "f1-b", pid=7)
        + "\n"
    )
    second.write_text(sb.runtime_line(TS + timedelta(minutes=5), "f2-a", pid=7) + "\n")
    res = read_plog([second, first])  # given out of order
    assert [r.text for r in res.records] == ["f1-a", "f1-b", "f2-a"]
    assert res.files == [str(first), str(second)]
    assert [r.src.line for r in res.records] == [1, 2, 1]


def test_row7_truncated_and_blank_lines(tmp_path: Path) -> None:
    """Row 7 at file level: blank lines skipped, truncated last line flagged with a gap."""
    line = sb.runtime_line(TS, sb.kernel_fault_msg())
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(
        (
            sk(1, TS, "IsSuperKernelException", "Exception is from superkernel")
            + "\r\n\r\n"
            + line
            + "\r\n"
            + line[:-40]
        ).encode()
    )
    res = read_plog(f)
    assert len(res.records) == 3 and res.truncated
    assert [r.complete for r in res.records] == [True, True, False]
    assert [g.kind for g in res.gaps] == ["truncated_line"] and res.gaps[0].src is not None
    assert res.gaps[0].src.line == 4
    scanned = list(scan_plog(f))
    assert [(r.src.line, isinstance(r, PlogLine) and r.complete) for r in scanned] == [
        (1, True),
        (3, True),
        (4, False),
    ]
    frame = res.to_frame()
    assert list(frame["line"]) == [1, 3, 4] and list(frame["complete"]) == [True, True, False]


def test_binary_file_named_plog(tmp_path: Path) -> None:
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    with pytest.raises(ParseError, match="binary"):
        read_plog(f)
    with pytest.raises(ParseError, match="binary"):
        list(scan_plog(f))


def test_directory_given_as_file(tmp_path: Path) -> None:
    d = tmp_path / "plog-1_20260610140000000.log"
    d.mkdir()
    with pytest.raises(ParseError, match="directory"):
        read_plog(d)
    with pytest.raises(ParseError, match="directory"):
        list(scan_plog(d))


def test_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(b"")
    res = read_plog(f)
    assert (res.records, res.faults, res.unrecognized, res.gaps, res.truncated) == ([], [], [], [], False)
    assert list(scan_plog(f)) == []
    assert len(res.to_frame()) == 0


def _incident_file(tmp_path: Path, rng: random.Random, noise: int) -> tuple[Path, list[str]]:
    lines = sb.noise_lines(rng, noise)
    incident = [
        *sb.runtime_incident_lines(TS),
        sk(
            48213,
            TS,
            "IsSuperKernelException",
            "Exception is from superkernel function 'sk_entry_mix11_op_trace'",
        ),
        sb.idedd_line(TS, sb.dump_callback_msg(kernel_name="sk_entry_mix11_op_trace")),
        *sb.error_manager_block(
            [(sb.kernel_task_error_msg(), "PreCheckTaskErr", "davinci_kernel_task.cc", 1)]
        ),
    ]
    for i, line in enumerate(incident):
        lines.insert(
            rng.randrange(len(lines) + 1) if i == 0 else min(len(lines), rng.randrange(len(lines) + 1)), line
        )
    f = tmp_path / "plog-48213_20260610140000000.log"
    f.write_text("\n".join(lines) + "\n")
    return f, lines


def test_scan_agrees_with_full_read(tmp_path: Path) -> None:
    """The fast scan returns exactly the marker lines a full read sees, with the same line numbers."""
    f, lines = _incident_file(tmp_path, random.Random(5), 3000)
    expected = [i + 1 for i, line in enumerate(lines) if any(m.decode() in line for m in FAULT_MARKERS)]
    scanned = list(scan_plog(f))
    assert [r.src.line for r in scanned] == expected
    assert len(expected) == 12  # 7 runtime + SK + dump callback + 3 error-manager lines
    full = read_plog(f)
    by_line = {r.src.line: r for r in full.records}
    for r in scanned:
        if isinstance(r, PlogLine):
            assert by_line[r.src.line] == r
        else:
            assert isinstance(r, Unrecognized) and r.context == "plog_scan"
    kf = [r for r in full.faults if isinstance(r, KernelFaultLine)]
    assert [k.kernel_name for k in kf] == ["sk_entry_mix11_op_trace"]
    assert [e.code for e in full.error_manager] == ["EZ9999", "EZ9999", None]


def test_noise_has_no_markers() -> None:
    for line in sb.noise_lines(random.Random(1), 2000):
        assert not any(m.decode() in line for m in FAULT_MARKERS), line


def test_scan_across_block_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks: markers split across reads, lines longer than a block, line numbers still exact."""
    monkeypatch.setattr(plog_mod, "CHUNK", 64)
    rng = random.Random(9)
    lines = sb.noise_lines(rng, 200)
    lines[17] = sb.runtime_line(TS, sb.kernel_fault_msg())  # ~300 bytes > 64-byte block
    lines[120] = "EZ9999: Inner Error!"
    f = tmp_path / "plog-48213_20260610140000000.log"
    f.write_text("\n".join(lines))  # no trailing newline
    assert [r.src.line for r in scan_plog(f)] == [18, 121]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600), chunk=st.sampled_from([16, 64, 1 << 20]))
def test_scan_matches_naive_on_arbitrary_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, chunk: int
) -> None:
    """Arbitrary bytes (markers spliced in): scan line numbers == naive split; only ParseError may escape."""
    monkeypatch.setattr(plog_mod, "CHUNK", chunk)
    blob = data.replace(b"\x00", b"")
    for i, m in enumerate(FAULT_MARKERS[:6]):
        pos = (i * 97) % (len(blob) + 1)
        blob = blob[:pos] + m + blob[pos:]
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(blob)
    try:
        got = [r.src.line for r in scan_plog(f)]
    except ParseError:
        return
    expected = [i + 1 for i, raw in enumerate(blob.split(b"\n")) if any(m in raw for m in FAULT_MARKERS)]
    assert got == expected
