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


def _many_plogs(tmp_path: Path, count: int, lines_each: int) -> list[Path]:
    rng = random.Random(7)
    files = []
    for k in range(count):
        parts = []
        for _ in range(lines_each):
            parts.append(b" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8))) + b"\n")
        f = tmp_path / f"plog-1_20260610140{k:03d}000.log"
        f.write_bytes(b"".join(parts))
        files.append(f)
    return files


def test_many_small_plogs_go_vectorised_once_the_budget_is_spent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand-rank scene: after ``_SMALL_BUDGET`` bytes, blocks above ``_TINY_BLOCK`` take the
    vectorised path (bytes.find costs ~10x more a byte); every line found is the same either way."""
    files = _many_plogs(tmp_path, 12, 400)
    sizes = [f.stat().st_size for f in files]
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    small_only = [_lines(f) for f in files]  # default budget: all of these stay with bytes.find
    assert plog_mod._STATE.prefilters == {}

    tiny = min(sizes) - 1
    monkeypatch.setattr(plog_mod, "_SMALL_BUDGET", sizes[0] + sizes[1])
    monkeypatch.setattr(plog_mod, "_TINY_BLOCK", tiny)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    calls: list[int] = []
    original = plog_mod._scan_small_block

    def spy(buf: bytearray, n: int, *rest: object) -> object:
        calls.append(n)
        return original(buf, n, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(plog_mod, "_scan_small_block", spy)
    budgeted = [_lines(f) for f in files]
    # the first files spend the budget (the one that crosses it included), the rest go vectorised
    assert calls == sizes[:3]
    assert plog_mod._STATE.prefilters != {}
    assert budgeted == small_only


def test_a_tiny_block_stays_with_bytes_find_after_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _many_plogs(tmp_path, 3, 20)
    monkeypatch.setattr(plog_mod, "_SMALL_BUDGET", 0)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    for f in files:
        _lines(f)
    assert plog_mod._STATE.prefilters == {}, "blocks under _TINY_BLOCK never pay the vectorised set-up"
    assert plog_mod._STATE.small_bytes == sum(f.stat().st_size for f in files)
