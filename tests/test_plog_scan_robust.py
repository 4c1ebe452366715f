"""The plog fault scan stays fast and bounded on hostile content (issue 18 item 5).

- lines longer than MAX_LINE are cut like ``iter_lines`` cuts them (first MAX_LINE bytes kept, the rest
  skipped, a ``line_too_long`` gap naming the line and the byte offset), so memory stays bounded;
- many lines sharing words with the markers ("failed", "Dump", "The") make the scanner re-choose its
  anchors instead of checking thousands of candidate lines in Python;
- the read buffer and the anchor tables are reused from file to file.

Expectations are hand-computed line numbers and offsets (and the naive line split), not the scanner.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skdbg.parsers import plog as plog_mod
from skdbg.parsers.common import Gap
from skdbg.parsers.plog import FAULT_MARKERS, scan_plog
from skdbg.scenebuilder import plog as sb


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64-byte line limit and a 256-byte block, so hostile lengths stay small in a test."""
    monkeypatch.setattr(plog_mod, "MAX_LINE", 64)
    monkeypatch.setattr(plog_mod, "CHUNK", 256)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())


def test_over_long_lines_are_cut_with_a_gap(tmp_path: Path, small_limits: None) -> None:
    lines = [
        "plain line one",  # 1
        "EZ9999: Inner Error! " + "x" * 100,  # 2: 121 bytes, marker in the head, shorter than the block
        "y" * 40 + "EE9999" + "z" * 1000,  # 3: longer than the block, marker in the head
        "w" * 300 + "EE8888",  # 4: marker only in the skipped tail -> not reported, but a gap
        "EZ9999 after the long ones",  # 5
    ]
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_text("\n".join(lines) + "\n")
    gaps: list[Gap] = []
    got = list(scan_plog(f, gaps=gaps))
    assert [r.src.line for r in got] == [2, 3, 5]
    assert [len(r.text) for r in got[:2]] == [64, 64]  # only the first MAX_LINE bytes are kept
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    cut = [(g.src.line, g.detail) for g in gaps if g.kind == "line_too_long"]
    assert [c[0] for c in cut] == [2, 3, 4]
    for no, detail in cut:
        assert f"line {no} is longer than 64 bytes" in detail
        assert detail.endswith(f"from byte offset {starts[no - 1] + 64}")


def test_a_huge_last_line_without_newline(tmp_path: Path, small_limits: None) -> None:
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(b"ok\n" + b"EZ9999 " + b"q" * 5000)
    gaps: list[Gap] = []
    got = list(scan_plog(f, gaps=gaps))
    assert [(r.src.line, len(r.text)) for r in got] == [(2, 64)]
    assert [g.src.line for g in gaps] == [2]


def _noise_with_common_words(rng: random.Random, n: int, percent: int) -> list[str]:
    words = ("The stream sync failed, Dump skipped", "The operator failed; Dump mode off")
    return [
        f"{line} {rng.choice(words)}" if rng.random() * 100 < percent else line
        for line in sb.noise_lines(rng, n, pid=48213)
    ]


def test_common_marker_words_re_anchor_the_prefilter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchors chosen on clean noise are re-chosen on a block where "The"/"failed"/"Dump" abound; the
    marker lines found stay exactly the naive ones."""
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    monkeypatch.setattr(plog_mod, "_SMALL_BLOCK", 0)  # these files are small: force the vectorised path
    rng = random.Random(18)
    clean = tmp_path / "plog-1_20260610140000000.log"
    clean.write_text("\n".join(sb.noise_lines(rng, 3000, pid=48213)) + "\nEZ9999: Inner Error!\n")
    assert [r.src.line for r in scan_plog(clean)] == [3001]
    key = tuple(FAULT_MARKERS)
    first = plog_mod._STATE.prefilters[key]
    noisy_lines = _noise_with_common_words(rng, 6000, 30)
    noisy_lines[4321] = (
        "[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.518.402 [x.cc:1] kernel execute failed"
    )
    noisy = tmp_path / "plog-1_20260610140100000.log"
    noisy.write_text("\n".join(noisy_lines) + "\n")
    data = np.frombuffer(noisy.read_bytes(), dtype=np.uint8)
    before = len(first.candidates(data))
    got = [r.src.line for r in scan_plog(noisy)]
    want = [i + 1 for i, line in enumerate(noisy_lines) if any(m.decode() in line for m in FAULT_MARKERS)]
    assert got == want == [4322]
    second = plog_mod._STATE.prefilters[key]
    after = len(second.candidates(data))
    if before > len(data) * plog_mod._REANCHOR_DENSITY:  # the clean anchors were defeated
        assert second is not first and after < before / 2


def test_buffer_and_anchor_tables_are_reused_across_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    monkeypatch.setattr(plog_mod, "_SMALL_BLOCK", 0)  # these files are small: force the vectorised path
    assert len(plog_mod._STATE.buf) == 0  # made by a thread's first scan, not by the import
    bufs = []
    for k in range(3):
        f = tmp_path / f"plog-1_2026061014000000{k}.log"
        f.write_text(f"line\nEZ9999 number {k}\n")
        assert [r.src.line for r in scan_plog(f)] == [2]
        bufs.append(plog_mod._STATE.buf)
    assert bufs[0] is bufs[1] is bufs[2] and len(bufs[0]) == plog_mod.CHUNK
    assert len(plog_mod._STATE.prefilters) == 1


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"no newline at all EZ9999",
        b"ok\nEZ9999 fault\n" * 40,  # many small blocks, lines carried over between reads
        b"ok\n" + b"EE9999 " + b"q" * 5000 + b"\nEZ9999 after\n",  # an over-long line skipped in pieces
        b"ok\n" + b"EZ9999 " + b"q" * 5000,  # a huge last line without newline
    ],
)
def test_the_hash_fed_while_scanning_is_the_files_sha256(
    tmp_path: Path, small_limits: None, content: bytes
) -> None:
    """G5 takes the plog's SHA-256 from the scan's reads; every byte must be fed once, in order."""
    import hashlib

    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(content)
    h = hashlib.sha256()
    list(scan_plog(f, hasher=h, gaps=[]))
    assert h.hexdigest() == hashlib.sha256(content).hexdigest()


def test_quad_counts_count_every_byte_offset() -> None:
    sample = np.frombuffer(b"abcdabcdXabcd", dtype=np.uint8)
    q = plog_mod._quad
    # hand count: "abcd" at 0, 4, 9; "bcda" at 1; "dXab" at 7; "zzzz" nowhere
    assert plog_mod._quad_counts(sample, [q(b"abcd", 0), q(b"bcda", 0), q(b"dXab", 0), q(b"zzzz", 0)]) == {
        q(b"abcd", 0): 3,
        q(b"bcda", 0): 1,
        q(b"dXab", 0): 1,
        q(b"zzzz", 0): 0,
    }


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_every_marker_is_found_at_every_byte_alignment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    """The table is looked up on even words only: an anchor at an odd offset must be found by its
    second bigram. Each marker sits at a different alignment per run; the lines are counted by hand."""
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    monkeypatch.setattr(plog_mod, "_SMALL_BLOCK", 0)  # force the vectorised path
    lines = ["plain noise line"]
    for k, m in enumerate(FAULT_MARKERS):
        lines.append("x" * ((shift + k) % 4) + m.decode() + " tail")
        lines.append("another plain line")
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_text("\n".join(lines) + "\n")
    assert [r.src.line for r in scan_plog(f)] == [2 + 2 * k for k in range(len(FAULT_MARKERS))]


_SCAN_IMPORTS = """
import sys
from skdbg.parsers import plog
plog._SMALL_BLOCK = 0  # the vectorised path, with its anchor tables
found = [r.src.line for r in plog.scan_plog(sys.argv[1])]
print(found, "numpy" in sys.modules, "numpy.ma" in sys.modules)
"""


def test_the_vectorised_scan_does_not_import_numpy_ma(tmp_path: Path) -> None:
    """numpy.ma is a ~15 ms import, made while the main thread parses (np.unique pulls it in): the
    scan's anchor tables are built without it."""
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_text("line\nEZ9999 number 1\n" * 3)
    out = subprocess.run(
        [sys.executable, "-c", _SCAN_IMPORTS, str(f)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["[2,", "4,", "6]", "True", "False"]
