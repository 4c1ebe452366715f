"""``looks_binary``: the prefix test every text parser runs before reading a file (issue 18).

What must hold: the same answer as the rule it states (NUL bytes, or more than a tenth of the prefix
control bytes other than TAB, LF, VT, FF and CR), now counted in C; a thousand plogs each pay it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.textio import check_text_file, looks_binary


def _rule(head: bytes) -> bool:
    """The rule as stated, a byte at a time (the oracle)."""
    if not head:
        return False
    if 0 in head:
        return True
    ctrl = sum(1 for b in head if b < 9 or 13 < b < 32)
    return ctrl > len(head) // 10


@pytest.mark.parametrize(
    ("head", "binary"),
    [
        (b"", False),
        (b"[ERROR] RUNTIME(1,python3):2026-06-10-14:03:21.518.100 fine\r\n\ttabbed\x0b\x0c\n", False),
        (b"a\x00b", True),
        (b"\x1b" * 1 + b"x" * 9, False),  # exactly a tenth: still text
        (b"\x1b" * 2 + b"x" * 9, True),  # more than a tenth
        (b"\x7f" * 50, False),  # DEL and bytes above it are not control bytes here
        (bytes(range(1, 9)) + bytes(range(14, 32)) + b"x" * 300, False),
        (bytes(range(1, 9)) + bytes(range(14, 32)) + b"x" * 200, True),
    ],
)
def test_hand_written_prefixes(head: bytes, binary: bool) -> None:
    assert looks_binary(head) is binary


def test_agrees_with_the_rule_on_random_prefixes() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        n = rng.randint(0, 300)
        weight = rng.random()
        head = bytes(
            rng.randint(0, 31) if rng.random() < weight * 0.3 else rng.randint(32, 255) for _ in range(n)
        )
        assert looks_binary(head) is _rule(head), head


@pytest.mark.parametrize(
    ("head", "cause"),
    [
        (b"[INFO] x\n" * 10 + b"\x00", "NUL bytes in the first 91 bytes"),
        (b"\x1b[1m" * 40 + b"\n", "more than a tenth control bytes in the first 161 bytes"),
    ],
)
def test_the_refusal_names_its_cause(tmp_path: Path, head: bytes, cause: str) -> None:
    path = tmp_path / "plog-1_20260610140000000.log"
    path.write_bytes(head)
    with pytest.raises(ParseError) as refused:
        check_text_file(path, what="a CANN plog")
    assert str(refused.value) == f"{path}: expected a CANN plog (text), got binary data ({cause})"
