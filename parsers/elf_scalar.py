"""The FUNC symbol table of a small ELF in plain Python (``struct`` + ``bisect``), without numpy.

Why: ``skdbg analyze`` resolves a handful of PCs per kernel ELF, and a kernel ELF (one per child
kernel in an SK dump) has a few dozen symbols. numpy's import and table (~45 ms here) then cost more
than the whole rest of the lookup; unpacking a small ``.symtab`` with ``struct.iter_unpack`` and
answering with ``bisect`` costs well under a millisecond. :class:`ScalarSymbols` answers the two
single-value questions analyze asks — the range rule (:meth:`ScalarSymbols.lookup`, §4.7 step 3,
ecosystem.md §3.4) and the SK handler's exact rule (:meth:`ScalarSymbols.lookup_exact`, §1.6.2) —
with results equal, field for field and reason for reason, to :class:`~skdbg.parsers.elf.SymbolTable`.
Bulk work (``match_many``, ``symbolize``, frames) stays on the numpy table; :class:`ElfImage
<skdbg.parsers.elf.ElfImage>` picks this class only when the raw ``.symtab`` is small
(:data:`~skdbg.parsers.elf.SCALAR_MAX_SYMBOLS`).

The structures mirror the numpy ones so the two cannot drift apart in meaning: candidates in
``.symtab`` order (their positions are the numpy table's positions), elementary intervals painted
with the highest-priority sized symbol (smallest size, then non-LOCAL, then lowest index), sorted
starts and ends for the containment count and the miss reasons, zero-size symbols sorted by value
(ties: lowest index last) for the nearest-preceding fallback.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from skdbg.parsers.common import Source
from skdbg.parsers.elf import (
    BIND_NAMES,
    SHN_UNDEF,
    STB_LOCAL,
    STT_FUNC,
    TIER_UNRESOLVED,
    U64_MAX,
    VISIBILITY_NAMES,
    ExactMatch,
    FuncSymbol,
    SymbolMatch,
    miss_reason,
    nearest_match,
    paint_intervals,
    range_match,
)

if TYPE_CHECKING:
    from skdbg.parsers.elf import ElfImage

_SYM_SIZE = 24


class _Intervals:
    """Sorted unique boundaries of the sized symbols' ranges, each elementary interval painted with
    its winner (an index into the sized list, ``-1`` for none) — :class:`~skdbg.parsers.elf._RangeIndex`
    for a few PCs."""

    __slots__ = ("bounds", "winner")

    def __init__(self, starts: list[int], ends: list[int], keys: list[tuple[int, bool, int]]) -> None:
        # empty ranges (end clamped to the top of the address space, or a relocated start past its
        # end) cover no address
        kept = [k for k in range(len(starts)) if ends[k] > starts[k]]
        bounds = sorted({starts[k] for k in kept} | {ends[k] for k in kept})
        lo = [bisect_left(bounds, x) for x in starts]
        hi = [bisect_left(bounds, x) for x in ends]
        winner = paint_intervals(max(len(bounds) - 1, 0), lo, hi, sorted(kept, key=keys.__getitem__))
        self.bounds = bounds
        self.winner = winner

    def query(self, offset: int) -> int:
        i = bisect_right(self.bounds, offset) - 1
        return self.winner[i] if 0 <= i < len(self.winner) else -1


class ScalarSymbols:
    """``STT_FUNC`` symbols of one small ELF as Python lists; same answers as the numpy ``SymbolTable``.

    Candidates are named, defined FUNC symbols (positions ``0..len-1`` in ``.symtab`` order); the
    sized ones take part in the range rule, the zero-size ones only in the nearest-preceding fallback.
    """

    def __init__(self, image: ElfImage, sym_bytes: bytes, strtab: bytes) -> None:
        self._image = image
        self._strtab = strtab
        self._src = Source(image.name)
        self._fmt = ("<" if image.little else ">") + "IBBHQQ"
        self._sym_bytes = sym_bytes
        count = len(sym_bytes) // _SYM_SIZE
        n_str = len(strtab)
        # per candidate: .symtab index, st_name, bind, st_other, st_shndx, st_value, st_size
        self.sym_index: list[int] = []
        self.name_off: list[int] = []
        self.bind: list[int] = []
        self.other: list[int] = []
        self.shndx: list[int] = []
        self.value: list[int] = []
        self.size: list[int] = []
        # the exact rule: st_value -> (last .symtab index, how many earlier ones share the value)
        self._exact: dict[int, tuple[int, int]] = {}
        rows = struct.iter_unpack(self._fmt, memoryview(sym_bytes)[: count * _SYM_SIZE])
        for i, (st_name, info, other, shndx, value, size) in enumerate(rows):
            if info & 0xF != STT_FUNC or st_name >= n_str or strtab[st_name] == 0:
                continue  # not a FUNC, or unnamed (st_name 0, at a NUL, or past the string table)
            if size > 0:
                prev = self._exact.get(value)
                self._exact[value] = (i, 0 if prev is None else prev[1] + 1)
            if shndx == SHN_UNDEF:
                continue
            self.sym_index.append(i)
            self.name_off.append(st_name)
            self.bind.append(info >> 4)
            self.other.append(other)
            self.shndx.append(shndx)
            self.value.append(value)
            self.size.append(size)

        sized = [p for p, s in enumerate(self.size) if s > 0]
        self._sized_pos = sized
        self._sized_start = [self.value[p] for p in sized]
        # an end past 2**64 is clamped to the top of the address space, as the numpy table does
        self._sized_end = [min(self.value[p] + self.size[p], U64_MAX) for p in sized]
        self._keys = [(self.size[p], self.bind[p] == STB_LOCAL, self.sym_index[p]) for p in sized]
        self._index = _Intervals(self._sized_start, self._sized_end, self._keys)
        self._starts_sorted = sorted(self._sized_start)
        self._ends_sorted = sorted(self._sized_end)
        # the sized symbols by end, ties in table order: a miss names the first one ending last before it
        self._by_end = sorted(range(len(sized)), key=lambda k: (self._sized_end[k], k))
        self._ends_stable = [self._sized_end[k] for k in self._by_end]
        # zero-size: by value, equal values with the lowest .symtab index last (bisect_right picks it)
        zero = sorted(
            (p for p, s in enumerate(self.size) if s == 0), key=lambda p: (self.value[p], -self.sym_index[p])
        )
        self._zero_pos = zero
        self._zero_start = [self.value[p] for p in zero]
        self._section_delta = image.section_deltas()  # §4.6, 0 = the two address formulas agree
        self._alt: _Intervals | None = None

    # ------------------------------------------------------------------ records

    def __len__(self) -> int:
        return len(self.value)

    def _name(self, off: int) -> str:
        end = self._strtab.find(b"\0", off)
        raw = self._strtab[off:] if end < 0 else self._strtab[off:end]
        return raw.decode("utf-8", errors="replace")

    def symbol(self, position: int) -> FuncSymbol:
        shndx = self.shndx[position]
        sec = self._image.section(shndx)
        b = self.bind[position]
        delta = self._section_delta.get(shndx)
        return FuncSymbol(
            name=self._name(self.name_off[position]),
            value=self.value[position],
            size=self.size[position],
            bind=BIND_NAMES.get(b, f"BIND_{b}"),
            local=b == STB_LOCAL,
            visibility=VISIBILITY_NAMES[self.other[position] & 3],
            section_index=shndx,
            section=sec.name if sec is not None else None,
            sym_index=self.sym_index[position],
            section_model_offset=None if delta is None else self.value[position] + delta,
            src=self._src,
        )

    # ------------------------------------------------------------------ the range rule

    def _position(self, offset: int) -> tuple[int, int]:
        """(candidate position or -1, tier code 1/2/0) — ``SymbolTable.lookup_many`` for one offset."""
        k = self._index.query(offset)
        if k >= 0:
            return self._sized_pos[k], 1
        z = bisect_right(self._zero_start, offset) - 1
        if z < 0:
            return -1, 0
        e = bisect_right(self._ends_sorted, offset) - 1
        last_end = self._ends_sorted[e] if e >= 0 else 0
        if self._zero_start[z] >= last_end:  # no sized symbol ends between the label and the PC
            return self._zero_pos[z], 2
        return -1, 0

    def lookup(self, offset: int) -> SymbolMatch:
        """Range rule for one image offset, with the reason for the grade (rows 66, 67, 71)."""
        if not 0 <= offset <= U64_MAX:  # not an image offset: the numpy table's own handling
            table = self._image.symbols
            assert table is not None  # this table exists, so the .symtab was readable
            return table.lookup(offset)
        p, code = self._position(offset)
        if code == 0:
            return SymbolMatch(
                offset, None, TIER_UNRESOLVED, self._miss_reason(offset), None, 0, None, "none", self._src
            )
        sym = self.symbol(p)
        if code == 2:
            return nearest_match(offset, sym, self._src)
        containing = bisect_right(self._starts_sorted, offset) - bisect_right(self._ends_sorted, offset)
        return range_match(offset, sym, containing, self._src, lambda: self._alt_symbol(offset))

    def _miss_reason(self, offset: int) -> str:
        next_start = bisect_right(self._starts_sorted, offset)  # sized starts at or before the offset
        e = bisect_right(self._ends_stable, offset) - 1
        if e < 0:
            prev = "(none)"
        else:
            p = self._sized_pos[self._by_end[bisect_left(self._ends_stable, self._ends_stable[e])]]
            prev = f"{self._name(self.name_off[p])} (ends 0x{self.value[p] + self.size[p]:x})"
        return miss_reason(offset, self._starts_sorted, next_start, prev)

    def _alt_symbol(self, offset: int) -> FuncSymbol | None:
        """The winner for ``offset`` under the file-layout model, or None."""
        alt = self._alt_lookup(offset)
        return None if alt < 0 else self.symbol(alt)

    def _alt_lookup(self, offset: int) -> int:
        """Range rule under the file-layout model (formula 2 of §4.6); built only when needed."""
        if self._alt is None:
            starts = [
                (v + self._section_delta.get(self.shndx[p], 0)) & U64_MAX
                for v, p in zip(self._sized_start, self._sized_pos, strict=True)
            ]
            ends = [min(s + self.size[p], U64_MAX) for s, p in zip(starts, self._sized_pos, strict=True)]
            self._alt = _Intervals(starts, ends, self._keys)
        k = self._alt.query(offset)
        return self._sized_pos[k] if k >= 0 else -1

    # ------------------------------------------------------------------ the handler's exact rule

    def lookup_exact(self, value: int) -> ExactMatch | None:
        """The SK handler's exact rule: sized, named FUNC with ``st_value == value``; last one wins."""
        found = self._exact.get(int(value))
        if found is None:
            return None
        raw_i, dups = found
        st_name, info, other, shndx, st_value, st_size = struct.unpack_from(
            self._fmt, self._sym_bytes, raw_i * _SYM_SIZE
        )
        b = info >> 4
        runtime_bind = "WEAK" if b == 2 else "GLOBAL" if b == 1 else "LOCAL"
        sec = self._image.section(shndx)
        delta = self._section_delta.get(shndx)
        sym = FuncSymbol(
            name=self._name(st_name),
            value=st_value,
            size=st_size,
            bind=BIND_NAMES.get(b, f"BIND_{b}"),
            local=b == STB_LOCAL,
            visibility=VISIBILITY_NAMES[other & 3],
            section_index=shndx,
            section=sec.name if sec is not None else None,
            sym_index=raw_i,
            section_model_offset=None if delta is None else st_value + delta,
            src=self._src,
        )
        return ExactMatch(int(value), sym, runtime_bind, dups, self._src)
