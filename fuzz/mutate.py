"""Byte-level mutations shaped after what forensic input really does wrong.

Why these and not random bytes only: the campaign that found skdbg's exit-1 classes did so with
huge numbers, deep nesting, over-long lines and truncation far more often than with pure noise.
Each mutator takes the seed bytes and a seeded :class:`random.Random`, so a crasher is reproducible
from (seed file, seed number) as well as from the saved bytes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

Mutator = Callable[[bytes, random.Random], bytes]

_DIGITS = re.compile(rb"\d+")
_HEX = re.compile(rb"0x[0-9a-fA-F]+")


def _span(data: bytes, rng: random.Random) -> tuple[int, int]:
    if not data:
        return 0, 0
    a = rng.randrange(len(data))
    return a, min(len(data), a + rng.randrange(1, 64))


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def delete_span(data: bytes, rng: random.Random) -> bytes:
    a, z = _span(data, rng)
    return data[:a] + data[z:]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def duplicate_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if not lines:
        return data
    i = rng.randrange(len(lines))
    return b"\n".join(lines[: i + 1] + [lines[i]] * rng.randint(1, 50) + lines[i + 1 :])


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def huge_number(data: bytes, rng: random.Random) -> bytes:
    """Replace one number with one far beyond 64 bits (or beyond Python's 4,300-digit str limit)."""
    spans = [m.span() for m in (_HEX if rng.random() < 0.3 else _DIGITS).finditer(data)]
    if not spans:
        return data
    a, z = rng.choice(spans)
    if data[a : a + 2] == b"0x":
        big = b"0x" + b"f" * rng.choice((17, 33, 5000))
    else:
        big = b"9" * rng.choice((20, 21, 40, 4301, 20000))
    return data[:a] + big + data[z:]


def negative_number(data: bytes, rng: random.Random) -> bytes:
    spans = [m.span() for m in _DIGITS.finditer(data)]
    if not spans:
        return data
    a, _ = rng.choice(spans)
    return data[:a] + b"-" + data[a:]


def long_line(data: bytes, rng: random.Random) -> bytes:
    a = rng.randrange(len(data) + 1)
    piece = data[a : a + 16] or b"x"
    return data[:a] + piece * rng.choice((300, 5000, 70000)) + data[a:]


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice((100, 600, 5000))
    a = rng.randrange(len(data) + 1)
    opener, closer = rng.choice(((b"[", b"]"), (b"{", b"}"), (b'{"a":', b"}")))
    return data[:a] + opener * depth + b"1" + closer * depth + data[a:]


def insert_bytes(data: bytes, rng: random.Random) -> bytes:
    a = rng.randrange(len(data) + 1)
    junk = rng.choice(
        (
            b"\x00",
            b"\xff\xfe",
            b"\r",
            b"\n",
            b"\\\n",
            b'"',
            b"[CONT:1] ",
            b"\xe2\x80\xae",
            bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))),
        )
    )
    return data[:a] + junk + data[a:]


def splice_token(data: bytes, rng: random.Random) -> bytes:
    """Copy a random token of the file to another place (keeps the grammar's vocabulary)."""
    tokens = re.findall(rb"[A-Za-z_][A-Za-z0-9_]*|\d+|[\[\]{}:,=()]", data)
    if not tokens:
        return data
    a = rng.randrange(len(data) + 1)
    return data[:a] + rng.choice(tokens) + data[a:]


MUTATORS: tuple[Mutator, ...] = (
    flip_bits,
    delete_span,
    truncate,
    duplicate_lines,
    swap_lines,
    huge_number,
    negative_number,
    long_line,
    deep_nesting,
    insert_bytes,
    splice_token,
    splice_token,
    huge_number,
)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """Apply one to three mutators in a row."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(MUTATORS)(data, rng)
    return data


#: inputs are cut to this size after mutation: growth mutators compound, and time bounds belong to
#: the size classes the hostile-input tests cover one by one
MAX_INPUT = 4 << 20


def bounded_mutate(data: bytes, rng: random.Random) -> bytes:
    """:func:`mutate`, with the result cut to :data:`MAX_INPUT` bytes."""
    return mutate(data, rng)[:MAX_INPUT]
