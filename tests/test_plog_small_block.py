"""The small-block plog search (``bytes.find``, no numpy) finds exactly the lines the vectorised one does.

Why: a small scene's plogs are searched without importing numpy (about a third of ``skdbg analyze``'s
start-up on a bundled scene); the two paths must never disagree on which lines hold a marker, their
numbers, or whether the last line is complete.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import skdbg.parsers.plog as plog_mod
from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines

_WORDS = (
    b"noise",
    b"kernel execute failed",
    b"[SK][",
    b"[SK]",
    b"EZ9999",
    b"EZ99",
    b"ErrCode=",
    b"The extend info",
    b"ynchronize failed",
    b"[FUNC:",
    b"failed",
    b"\r",
    b" ",
    b"x" * 40,
)


def _lines(path: Path) -> list[tuple[int, bytes, bool]]:
    return list(scan_marker_lines(path, FAULT_MARKERS))


def test_small_block_finds_the_hand_counted_lines(tmp_path: Path) -> None:
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(b"quiet\n[SK][Dump] a\nquiet EZ99\nxx EE9999 and EZ9999\nlast ErrCode=1")
    assert _lines(f) == [
        (2, b"[SK][Dump] a", True),
        (4, b"xx EE9999 and EZ9999", True),
        (5, b"last ErrCode=1", False),
    ]


def test_small_block_rejects_a_short_marker_like_the_prefilter(tmp_path: Path) -> None:
    f = tmp_path / "plog-1_20260610140000000.log"
    f.write_bytes(b"abc\n")
    with pytest.raises(ValueError, match="shorter than 4 bytes"):
        list(scan_marker_lines(f, (b"ab",)))


@pytest.mark.parametrize("seed", range(6))
def test_small_and_vectorised_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(40):
        parts: list[bytes] = []
        for _ in range(rng.randint(0, 80)):
            parts.append(rng.choice(_WORDS))
            if rng.random() < 0.3:
                parts.append(b"\n")
        f = tmp_path / f"plog-1_2026061014000{seed}{k:03d}.log"
        f.write_bytes(b"".join(parts))
        small = _lines(f)
        with monkeypatch.context() as m:
            m.setattr(plog_mod, "_SMALL_BLOCK", -1)
            m.setattr(plog_mod, "_STATE", plog_mod._ScanState())
            vectorised = _lines(f)
        assert small == vectorised
