"""Kernel ELFs (artifacts.md §4): headers, sections, image extent and a fast FUNC symbol table.

Why this shape:

* The ELF header's few fields (endianness, ``e_shoff``, the section count and ``e_shstrndx``) are
  unpacked with ``struct``; pyelftools (a 25 ms import) is loaded only for the extended-numbering
  escapes (count or name table index in section header 0) and to name ``e_type``/``e_machine``
  when asked. The section headers themselves are unpacked with ``struct`` from the validated
  table (``e_shentsize`` 64, inside the file) as plain integers: pyelftools would build one
  ``construct`` container per header and turn known values into enum names, while the extent rule
  and the device ELFs' vendor section types need the raw numbers. Likewise its per-symbol parsing costs microseconds per symbol; the
  ``.symtab`` is instead viewed as one numpy structured array, so a 50k-symbol kernel loads in
  milliseconds and millions of PCs resolve with one ``searchsorted`` (ecosystem.md §3.2, §3.4).
  A kernel ELF, though, has a few dozen symbols and analyze asks it a handful of single PCs: for a
  ``.symtab`` of at most :data:`SCALAR_MAX_SYMBOLS` entries, :meth:`ElfImage.lookup` and the exact rule
  are answered by ``elf_scalar.ScalarSymbols`` (struct + bisect, same answers), so numpy's import
  (~45 ms with its table) is not paid at all; batch lookups and ``symbolize`` keep the numpy table.
* Only ELFCLASS64 is accepted, as the runtime does ("Elf can no be 32bit.", §4.2); ``e_machine``
  is never checked (device ELFs carry a machine number pyelftools does not know, triage.md §3.3).
* Two rules coexist on purpose: :meth:`SymbolTable.lookup` is skdbg's *range* rule (which
  function contains a PC, §4.7 step 3), :meth:`SymbolTable.lookup_exact` is the SK handler's
  rule (``st_value == funcOffset`` among sized, named FUNC symbols, §1.6.2 step 4) so skdbg can
  recompute what the handler printed.
* The image extent follows the runtime loader (``elf.cc`` ``ProcessSymbolTable``): ``text_offset``
  is the ``sh_offset`` of the first ``SHF_ALLOC`` section with non-zero size, the extent ends at
  the end of the *last* such section in header order (§4.2). Both address formulas of §4.6 are
  computed per section; where they disagree the lookup says so and grades itself down (row 71).
"""

from __future__ import annotations

import io
import mmap
import operator
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Gap, ParseError, Source
from skdbg.parsers.frames import columns_frame
from skdbg.parsers.fsguard import read_regular

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd
    from elftools.elf.elffile import ELFFile

    from skdbg.parsers.elf_scalar import ScalarSymbols
else:  # numpy is imported when an ELF is first read, not when the parsers are loaded
    from skdbg.parsers.lazymod import LazyModule

    np = LazyModule("numpy", globals(), "np")

SHF_ALLOC = 0x2
SHT_NULL = 0
SHT_SYMTAB = 2
SHT_NOBITS = 8
STT_FUNC = 2
STB_LOCAL = 0
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
_SHN_XINDEX = 0xFFFF
ELF_MAGIC = b"\x7fELF"
RUNTIME_32BIT_MESSAGE = "Elf can no be 32bit."

# Lookup tiers (ecosystem.md §3.4): a PC inside a sized FUNC symbol, a nearest-preceding
# zero-size FUNC symbol, or nothing.
TIER_UNRESOLVED = "unresolved"
TIER_SYMTAB = "symtab"
TIER_NEAREST = "nearest-symbol"
TIER_CODES = {0: TIER_UNRESOLVED, 1: TIER_SYMTAB, 2: TIER_NEAREST}

BIND_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
VISIBILITY_NAMES = {0: "DEFAULT", 1: "INTERNAL", 2: "HIDDEN", 3: "PROTECTED"}

U64_MAX = (1 << 64) - 1  # the largest 64-bit address; a sum past it wraps

#: Largest raw ``.symtab`` (entries) whose single lookups are answered without numpy
#: (:class:`~skdbg.parsers.elf_scalar.ScalarSymbols`). Below it, unpacking the table in Python and
#: answering a few PCs costs less than importing numpy alone (measured: docs/symbol-lookup.md).
SCALAR_MAX_SYMBOLS = 4096


def _sym_dtype(little: bool) -> np.dtype[Any]:
    """Elf64_Sym as a numpy structured dtype (24 bytes) in the file's byte order."""
    o = "<" if little else ">"
    return np.dtype(
        [
            ("st_name", o + "u4"),
            ("st_info", "u1"),
            ("st_other", "u1"),
            ("st_shndx", o + "u2"),
            ("st_value", o + "u8"),
            ("st_size", o + "u8"),
        ]
    )


@dataclass(frozen=True, slots=True)
class ElfSection:
    """One section header, with its name resolved through ``e_shstrndx``."""

    index: int
    name: str
    sh_type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int
    src: Source

    @property
    def alloc(self) -> bool:
        return bool(self.flags & SHF_ALLOC)

    @property
    def has_file_data(self) -> bool:
        return self.sh_type not in (SHT_NULL, SHT_NOBITS)


#: ``ElfSection(*fields)`` without the frozen ``__init__``: an equal record of the same class (parsers/bulk.py)
_new_section = frozen_builder(ElfSection)


@dataclass(frozen=True, slots=True)
class ImageExtent:
    """The file range the runtime loads as one device image (§4.2); ``binDevAddr`` points at its start."""

    text_offset: int
    size: int
    first_section: str
    last_section: str
    src: Source

    @property
    def end(self) -> int:
        return self.text_offset + self.size


@dataclass(frozen=True, slots=True)
class FuncSymbol:
    """An ``STT_FUNC`` symbol. ``value`` is ``st_value`` = the runtime's image offset (§4.6).

    ``section_model_offset`` is the same symbol placed by the file layout,
    ``(S.sh_offset − text_offset) + (st_value − S.sh_addr)``; ``None`` when not computable.
    """

    name: str
    value: int
    size: int
    bind: str
    local: bool
    visibility: str
    section_index: int
    section: str | None
    sym_index: int
    section_model_offset: int | None
    src: Source

    @property
    def end(self) -> int:
        return self.value + self.size

    @property
    def address_models_agree(self) -> bool | None:
        if self.section_model_offset is None:
            return None
        return self.section_model_offset == self.value


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """Result of a range lookup of one image offset; ``reason`` explains the grade.

    ``confidence``: ``high`` (inside a sized symbol, address models agree), ``medium`` (models
    disagree but name the same symbol, or several symbols overlap), ``low`` (models name
    different symbols, or only a zero-size nearest symbol), ``none`` (unresolved).
    """

    offset: int
    symbol: FuncSymbol | None
    tier: str
    reason: str
    offset_in_symbol: int | None
    containing: int
    address_model_agrees: bool | None
    confidence: str
    src: Source


@dataclass(frozen=True, slots=True)
class ExactMatch:
    """The SK handler's lookup (§1.6.2 step 4): ``st_value == funcOffset``, sized named FUNC only.

    ``runtime_bind`` is the bind the handler prints (GLOBAL/WEAK, anything else LOCAL);
    ``duplicates`` counts other sized named FUNC symbols with the same value (the handler keeps
    the last one in symbol-table order, sk_common.cpp ``ExtractFunctionSymbols``).
    """

    value: int
    symbol: FuncSymbol
    runtime_bind: str
    duplicates: int
    src: Source


class SymbolLookup(Protocol):
    """What single-value lookups need: :class:`SymbolTable` (numpy) and ``ScalarSymbols`` (small tables)."""

    def lookup(self, offset: int) -> SymbolMatch: ...

    def lookup_exact(self, value: int) -> ExactMatch | None: ...


class BatchLookup:
    """Vectorised lookup result: per offset a candidate position (``-1`` none) and a tier code."""

    __slots__ = ("offsets", "position", "tier_code")

    def __init__(
        self,
        offsets: npt.NDArray[np.uint64],
        position: npt.NDArray[np.int64],
        tier_code: npt.NDArray[np.uint8],
    ) -> None:
        self.offsets = offsets
        self.position = position
        self.tier_code = tier_code

    def __len__(self) -> int:
        return int(self.offsets.shape[0])


@dataclass(frozen=True, slots=True)
class BatchDetail:
    """Per offset (arrays, so a million offsets are masked and gathered without a Python loop): tier
    code, winner position, how many sized symbols contain it, how many sized symbols start at or
    before it, and the sized symbol ending last at or before it (-1)."""

    codes: npt.NDArray[np.uint8]
    positions: npt.NDArray[np.int64]
    containing: npt.NDArray[np.int64]
    next_start: npt.NDArray[np.int64]
    prev_k: npt.NDArray[np.int64]


def objects(items: Sequence[Any]) -> npt.NDArray[np.object_]:
    """A 1-D object array holding ``items`` as they are, to store into an object column in one fancy
    index (``np.array`` would unpack a tuple item into another dimension)."""
    return np.fromiter(items, dtype=object, count=len(items))


def paint_intervals(n_intervals: int, lo: list[int], hi: list[int], priority: Iterable[int]) -> list[int]:
    """Elementary intervals ``0..n_intervals-1`` each painted with the first symbol of ``priority``
    that covers it (symbol ``k`` covers ``lo[k]..hi[k]-1``); ``-1`` where none does.

    Each interval is painted once: a union-find "next unpainted interval" skips the painted ones, so
    the cost is linear in the intervals plus the symbols, however much they overlap."""
    winner = [-1] * n_intervals
    nxt = list(range(n_intervals + 1))

    def find(i: int) -> int:
        root = i
        while nxt[root] != root:
            root = nxt[root]
        while nxt[i] != root:
            nxt[i], i = root, nxt[i]
        return root

    for k in priority:
        i = find(lo[k])
        end = hi[k]
        while i < end:
            winner[i] = k
            nxt[i] = i + 1
            i = find(i + 1)
    return winner


class _RangeIndex:
    """Non-overlapping elementary intervals with one winning symbol each.

    Built once: all starts/ends of sized symbols become sorted unique boundaries; each interval
    between two boundaries is painted with the highest-priority symbol covering it (priority =
    smallest size, then non-LOCAL, then lowest symbol-table index — §4.7 step 3). A PC is then one
    ``searchsorted`` away from its winner, for any number of PCs.
    """

    __slots__ = ("bounds", "winner")
    bounds: npt.NDArray[np.uint64]
    winner: npt.NDArray[np.int64]

    def __init__(
        self,
        starts: npt.NDArray[np.uint64],
        ends: npt.NDArray[np.uint64],
        sizes: npt.NDArray[np.uint64],
        local: npt.NDArray[np.bool_],
        order_key: npt.NDArray[np.int64],
    ) -> None:
        # A symbol whose interval is empty (its end clamped to the top of the address space, or a
        # relocated start past its end) covers no address; painting it would index past the intervals.
        kept = np.flatnonzero(ends > starts)
        if kept.shape[0] != starts.shape[0]:
            sub = _RangeIndex(starts[kept], ends[kept], sizes[kept], local[kept], order_key[kept])
            self.bounds = sub.bounds
            self.winner = np.where(sub.winner >= 0, kept[np.maximum(sub.winner, 0)], -1).astype(np.int64)
            return
        n = int(starts.shape[0])
        if n == 0:
            self.bounds = np.zeros(0, dtype=np.uint64)
            self.winner = np.zeros(0, dtype=np.int64)
            return
        # np.unique, without its np.ma check (numpy.ma is a 10 ms import): sort, keep first of each run
        bounds = np.concatenate([starts, ends])
        bounds.sort()
        bounds = bounds[np.concatenate(([True], bounds[1:] != bounds[:-1]))]
        lo = np.searchsorted(bounds, starts)
        hi = np.searchsorted(bounds, ends)
        n_int = int(bounds.shape[0]) - 1
        winner = np.full(max(n_int, 0), -1, dtype=np.int64)
        by_start = np.argsort(starts, kind="stable")
        s_sorted = starts[by_start]
        e_sorted = ends[by_start]
        overlapping = bool(np.any(s_sorted[1:] < np.maximum.accumulate(e_sorted)[:-1])) if n > 1 else False
        if not overlapping:
            # Each symbol is exactly one elementary interval (no boundary falls inside it).
            winner[lo] = np.arange(n, dtype=np.int64)
        else:
            priority = np.lexsort((order_key, local.astype(np.int8), sizes))
            painted = paint_intervals(n_int, lo.tolist(), hi.tolist(), priority.tolist())
            winner = np.array(painted, dtype=np.int64)
        self.bounds = bounds
        self.winner = winner

    def query(self, offsets: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        if self.winner.shape[0] == 0:
            return np.full(offsets.shape[0], -1, dtype=np.int64)
        idx = np.searchsorted(self.bounds, offsets, side="right").astype(np.int64) - 1
        valid = (idx >= 0) & (idx < self.winner.shape[0])
        out = np.where(valid, self.winner[np.clip(idx, 0, self.winner.shape[0] - 1)], -1)
        return out.astype(np.int64)


#: the reason texts of a plain containment and of a miss, as ``%`` templates: the single-offset rules
#: and the vectorised ones (:meth:`SymbolTable.inside_texts`, :meth:`SymbolTable.miss_texts`) format
#: the very same text (``%x`` of a non-negative int is ``format(v, "x")``)
INSIDE_HEAD = "inside %s [0x%x, 0x%x) at +0x"
MISS_NO_SYMBOLS = "the symbol table has no sized, named FUNC symbols"
MISS_BEFORE = "0x%x is before the first function symbol (starts at 0x%x)"
MISS_AFTER = "0x%x is after the last function symbol %s"
MISS_GAP = "0x%x is in a gap between %s and the next function at 0x%x"


def inside_text(name: str, value: int, end: int, offset_in_symbol: int) -> str:
    """The reason of a containment: ``inside NAME [0xSTART, 0xEND) at +0xOFF``."""
    return INSIDE_HEAD % (name, value, end) + format(offset_in_symbol, "x")


def nearest_match(offset: int, sym: FuncSymbol, src: Source) -> SymbolMatch:
    """Tier 2 of the range rule: no sized symbol contains ``offset``, zero-size ``sym`` precedes it."""
    reason = (
        f"no sized FUNC symbol contains 0x{offset:x}; nearest preceding zero-size FUNC symbol "
        f"{sym.name} at 0x{sym.value:x} (+0x{offset - sym.value:x})"
    )
    return SymbolMatch(
        offset, sym, TIER_NEAREST, reason, offset - sym.value, 0, sym.address_models_agree, "low", src
    )


def range_match(
    offset: int,
    sym: FuncSymbol,
    containing: int,
    src: Source,
    alt_symbol: Callable[[], FuncSymbol | None],
) -> SymbolMatch:
    """Tier 1 of the range rule: ``sym`` won among the ``containing`` sized symbols holding ``offset``.

    ``alt_symbol`` gives the winner under the file-layout model (§4.6 formula 2; None: no function);
    it is asked only when the two address models disagree for ``sym``'s section. Both symbol tables
    (numpy and :mod:`~skdbg.parsers.elf_scalar`) build their matches here, so their texts cannot drift."""
    reason = inside_text(sym.name, sym.value, sym.end, offset - sym.value)
    confidence = "high"
    if containing > 1:
        reason += (
            f"; {containing} sized FUNC symbols contain it, chose the smallest, then non-LOCAL "
            f"(bind {sym.bind}, size 0x{sym.size:x})"
        )
        confidence = "medium"
    agrees = sym.address_models_agree
    if agrees is False:
        assert sym.section_model_offset is not None
        reason += (
            f"; §4.6 address models disagree for section {sym.section}: st_value puts {sym.name} at "
            f"image offset 0x{sym.value:x}, the file layout at 0x{sym.section_model_offset:x}"
        )
        alt = alt_symbol()
        if alt is None:
            reason += f"; by file layout 0x{offset:x} is in no function"
        elif alt.sym_index == sym.sym_index:
            reason += "; both models still name the same function"
        else:
            reason += f"; by file layout 0x{offset:x} is in {alt.name}"
        confidence = "medium" if alt is not None and alt.sym_index == sym.sym_index else "low"
    return SymbolMatch(
        offset, sym, TIER_SYMTAB, reason, offset - sym.value, containing, agrees, confidence, src
    )


def miss_reason(
    offset: int, starts: Sequence[int] | npt.NDArray[np.uint64], next_start: int, prev: str
) -> str:
    """Why no symbol holds ``offset``: ``starts`` are the sized symbols' starts, sorted, of which
    ``next_start`` lie at or before it; ``prev`` names the nearest sized symbol ending before it."""
    if len(starts) == 0:
        return MISS_NO_SYMBOLS
    if next_start == 0:
        return MISS_BEFORE % (offset, int(starts[0]))
    if next_start >= len(starts):
        return MISS_AFTER % (offset, prev)
    return MISS_GAP % (offset, prev, int(starts[next_start]))


class SymbolTable:
    """``STT_FUNC`` symbols of one ELF as sorted numpy arrays, built once (§4.7, ecosystem.md §3.4).

    Candidates are named, defined FUNC symbols; sized ones take part in the range rule,
    zero-size ones only in the nearest-preceding fallback. Positions (``0..len-1``) index the
    candidate arrays; :meth:`symbol` turns a position into a :class:`FuncSymbol` record.
    """

    def __init__(self, image: ElfImage, raw: npt.NDArray[Any], strtab: bytes) -> None:
        self._image = image
        self._strtab = strtab
        self._src = Source(image.name)
        st_type = raw["st_info"] & 0xF
        bind = raw["st_info"] >> 4
        strtab_arr = np.frombuffer(strtab, dtype=np.uint8) if strtab else np.zeros(1, dtype=np.uint8)
        st_name = raw["st_name"].astype(np.int64)
        in_range = st_name < strtab_arr.shape[0]
        named = in_range & (strtab_arr[np.where(in_range, st_name, 0)] != 0)
        func_named = (st_type == STT_FUNC) & named
        self._exact_mask = func_named & (raw["st_size"] > 0)
        defined = raw["st_shndx"] != SHN_UNDEF
        cand = func_named & defined
        pos = np.nonzero(cand)[0]
        self.sym_index: npt.NDArray[np.int64] = pos.astype(np.int64)
        self.value: npt.NDArray[np.uint64] = raw["st_value"][pos].astype(np.uint64)
        self.size: npt.NDArray[np.uint64] = raw["st_size"][pos].astype(np.uint64)
        self.bind: npt.NDArray[np.uint8] = bind[pos].astype(np.uint8)
        self.local: npt.NDArray[np.bool_] = self.bind == STB_LOCAL
        self.other: npt.NDArray[np.uint8] = raw["st_other"][pos].astype(np.uint8)
        self.shndx: npt.NDArray[np.uint16] = raw["st_shndx"][pos].astype(np.uint16)
        self.name_off: npt.NDArray[np.int64] = st_name[pos]
        self._raw = raw
        self._names: npt.NDArray[np.object_] | None = None
        self._exact: dict[int, tuple[int, int]] | None = None
        self._alt: _RangeIndex | None = None

        sized = self.size > 0
        self._sized_pos = np.nonzero(sized)[0].astype(np.int64)
        s_start = self.value[self._sized_pos]
        s_size = self.size[self._sized_pos]
        s_end = s_start + s_size
        s_end = np.where(s_end < s_start, np.uint64(U64_MAX), s_end).astype(np.uint64)  # u64 wrap
        self._index = _RangeIndex(
            s_start, s_end, s_size, self.local[self._sized_pos], self.sym_index[self._sized_pos]
        )
        self._sized_start = s_start
        self._sized_end = s_end
        self._ends_sorted = np.sort(s_end)
        self._starts_sorted = np.sort(s_start)
        zero = np.nonzero(~sized)[0]
        zv = self.value[zero]
        # Equal values: the lowest .symtab index must be the last one, which searchsorted picks.
        zorder = np.lexsort((-self.sym_index[zero], zv))
        self._zero_pos = zero[zorder].astype(np.int64)
        self._zero_start = zv[zorder]
        # §4.6: per-section delta between the two address formulas (0 = they agree).
        self._section_delta = image.section_deltas()
        self.layout_consistent = all(d == 0 for d in self._section_delta.values())

    # ------------------------------------------------------------------ records

    def __len__(self) -> int:
        return int(self.value.shape[0])

    @property
    def sized_count(self) -> int:
        return int(self._sized_pos.shape[0])

    def _name(self, off: int) -> str:
        end = self._strtab.find(b"\0", off)
        raw = self._strtab[off:] if end < 0 else self._strtab[off:end]
        return raw.decode("utf-8", errors="replace")

    def names(self, positions: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.object_]:
        """Names of candidate positions (``None`` for ``-1``); all names when ``positions`` is None."""
        if self._names is None:
            arr = np.empty(len(self) + 1, dtype=object)
            arr[:-1] = [self._name(int(o)) for o in self.name_off.tolist()]
            arr[-1] = None
            self._names = arr
        if positions is None:
            return self._names[:-1]
        return self._names[np.where(positions < 0, len(self), positions)]

    def section_model_offset(self, position: int) -> int | None:
        delta = self._section_delta.get(int(self.shndx[position]))
        return None if delta is None else int(self.value[position]) + delta

    def models_disagree(self) -> npt.NDArray[np.bool_]:
        """Per position: the §4.6 address models put the symbol at different offsets (delta != 0)."""
        bad = [sh for sh, delta in self._section_delta.items() if delta != 0]
        return np.isin(self.shndx, np.array(bad, dtype=np.uint16)) if bad else np.zeros(len(self), dtype=bool)

    def symbol(self, position: int) -> FuncSymbol:
        shndx = int(self.shndx[position])
        sec = self._image.section(shndx)
        b = int(self.bind[position])
        return FuncSymbol(
            name=self._name(int(self.name_off[position])),
            value=int(self.value[position]),
            size=int(self.size[position]),
            bind=BIND_NAMES.get(b, f"BIND_{b}"),
            local=bool(self.local[position]),
            visibility=VISIBILITY_NAMES[int(self.other[position]) & 3],
            section_index=shndx,
            section=sec.name if sec is not None else None,
            sym_index=int(self.sym_index[position]),
            section_model_offset=self.section_model_offset(position),
            src=self._src,
        )

    def __iter__(self) -> Iterator[FuncSymbol]:
        for p in range(len(self)):
            yield self.symbol(p)

    # ------------------------------------------------------------------ lookups

    def lookup_many(self, offsets: npt.ArrayLike) -> BatchLookup:
        """Range rule for many image offsets at once: winner position and tier code per offset.

        Tier 1 (``symtab``): inside a sized symbol. Tier 2 (``nearest-symbol``): no sized symbol
        contains it, but a zero-size FUNC symbol precedes it with no sized symbol ending between
        them. Tier 0: unresolved (position ``-1``).
        """
        off = np.asarray(offsets, dtype=np.uint64).reshape(-1)
        if self.sized_count == 0:
            pos = np.full(off.shape[0], -1, dtype=np.int64)
        else:
            hit = self._index.query(off)
            pos = np.where(hit >= 0, self._sized_pos[np.clip(hit, 0, self.sized_count - 1)], -1)
        tier = np.where(pos >= 0, 1, 0).astype(np.uint8)
        miss = pos < 0
        if self._zero_pos.shape[0] and bool(miss.any()):
            m_off = off[miss]
            z = np.searchsorted(self._zero_start, m_off, side="right").astype(np.int64) - 1
            ok = z >= 0
            zc = np.clip(z, 0, None)
            if self._ends_sorted.shape[0]:
                e = np.searchsorted(self._ends_sorted, m_off, side="right").astype(np.int64) - 1
                last_end = np.where(e >= 0, self._ends_sorted[np.clip(e, 0, None)], 0)
            else:
                last_end = np.zeros(m_off.shape[0], dtype=np.uint64)
            ok &= self._zero_start[zc] >= last_end.astype(np.uint64)
            fill = np.where(ok, self._zero_pos[zc], -1)
            pos = pos.copy()
            pos[miss] = fill
            tier[miss] = np.where(ok, 2, 0).astype(np.uint8)
        return BatchLookup(off, pos.astype(np.int64), tier)

    def lookup(self, offset: int) -> SymbolMatch:
        """Range rule for one image offset, with the reason for the grade (rows 66, 67, 71)."""
        batch = self.lookup_many(np.array([offset], dtype=np.uint64))
        p = int(batch.position[0])
        code = int(batch.tier_code[0])
        if code == 0:
            return SymbolMatch(
                offset, None, TIER_UNRESOLVED, self._miss_reason(offset), None, 0, None, "none", self._src
            )
        sym = self.symbol(p)
        if code == 2:
            return nearest_match(offset, sym, self._src)
        inside = (self._sized_start <= np.uint64(offset)) & (np.uint64(offset) < self._sized_end)
        return range_match(offset, sym, int(inside.sum()), self._src, lambda: self._alt_symbol(offset))

    def batch_detail(self, offsets: Sequence[int] | npt.NDArray[np.uint64]) -> BatchDetail:
        """Everything :meth:`lookup` needs for many offsets, in a few array passes.

        Why: ``skdbg symbolize`` gets up to millions of PCs; one :meth:`lookup` each scans every sized
        symbol (containment count, nearest preceding end). Here the containment count is
        ``#(start <= off) - #(end <= off)`` over the sorted starts and ends, and the nearest sized
        symbol ending at or before the offset one ``searchsorted`` over the ends (among equal ends the
        first in table order, as :meth:`_nearest_sized_before` picks).
        """
        off = np.asarray(offsets, dtype=np.uint64).reshape(-1)
        batch = self.lookup_many(off)
        n = int(off.shape[0])
        if self.sized_count:
            next_start = np.searchsorted(self._starts_sorted, off, side="right").astype(np.int64)
            containing = next_start - np.searchsorted(self._ends_sorted, off, side="right").astype(np.int64)
            by_end = np.argsort(self._sized_end, kind="stable")
            ends_stable = self._sized_end[by_end]
            e = np.searchsorted(ends_stable, off, side="right").astype(np.int64) - 1
            first = np.searchsorted(ends_stable, ends_stable[np.clip(e, 0, None)], side="left")
            prev_k = np.where(e >= 0, by_end[np.clip(first, 0, None)], -1).astype(np.int64)
        else:
            containing = np.zeros(n, dtype=np.int64)
            next_start = np.zeros(n, dtype=np.int64)
            prev_k = np.full(n, -1, dtype=np.int64)
        return BatchDetail(batch.tier_code, batch.position, containing, next_start, prev_k)

    def sized_before_text(self, prev_k: int) -> str:
        """How a miss reason names the nearest sized symbol before it (``prev_k`` from :meth:`batch_detail`)."""
        if prev_k < 0:
            return "(none)"
        p = int(self._sized_pos[prev_k])
        end = int(self.value[p]) + int(self.size[p])
        return f"{self.names()[p]} (ends 0x{end:x})"

    def miss_text(self, offset: int, next_start: int, prev: str) -> str:
        """:meth:`_miss_reason` with the searches done (``next_start``: sized starts <= offset)."""
        return miss_reason(offset, self._starts_sorted, next_start, prev)

    def inside_texts(self, positions: npt.NDArray[np.int64], in_symbol: npt.NDArray[np.uint64]) -> list[str]:
        """:func:`inside_text` of many containments (``positions`` >= 0, each offset's distance into its
        symbol): the ``inside NAME [..)`` head is formatted once per symbol, not once per offset.

        Why: a million PCs fall into a few thousand functions; one f-string of three hex numbers per PC
        was the largest part of ``skdbg symbolize``."""
        if not len(positions):
            return []
        present = np.flatnonzero(np.bincount(positions, minlength=len(self)))
        values = self.value[present].tolist()
        heads_of = np.empty(len(self), dtype=object)
        heads_of[present] = objects(
            [
                INSIDE_HEAD % (n, v, v + z)
                for n, v, z in zip(
                    self.names(present).tolist(), values, self.size[present].tolist(), strict=True
                )
            ]
        )
        return list(
            map(operator.add, heads_of[positions].tolist(), map(format, in_symbol.tolist(), repeat("x")))
        )

    def miss_texts(
        self,
        offsets: npt.NDArray[np.uint64],
        next_start: npt.NDArray[np.int64],
        prev_k: npt.NDArray[np.int64],
    ) -> list[str]:
        """:meth:`miss_text` of many offsets (from :meth:`batch_detail`), each nearest symbol named once."""
        n = len(offsets)
        starts = self._starts_sorted
        if not len(starts):
            return [MISS_NO_SYMBOLS] * n
        out = np.empty(n, dtype=object)
        prev_of = {k: self.sized_before_text(k) for k in set(prev_k.tolist())}
        before = next_start == 0
        after = next_start >= len(starts)
        gap = np.flatnonzero(~(before | after))
        if before.any():
            first = int(starts[0])
            out[before] = objects([MISS_BEFORE % (o, first) for o in offsets[before].tolist()])
        if after.any():
            prevs = map(prev_of.__getitem__, prev_k[after].tolist())
            out[after] = objects(
                list(map(MISS_AFTER.__mod__, zip(offsets[after].tolist(), prevs, strict=True)))
            )
        if len(gap):
            prevs = map(prev_of.__getitem__, prev_k[gap].tolist())
            nexts = starts[next_start[gap]].tolist()
            out[gap] = objects(
                list(map(MISS_GAP.__mod__, zip(offsets[gap].tolist(), prevs, nexts, strict=True)))
            )
        return cast("list[str]", out.tolist())

    def match_many(self, offsets: Sequence[int]) -> list[SymbolMatch]:
        """:meth:`lookup` for many offsets: the same matches and reasons from one :meth:`batch_detail`;
        only overlaps and §4.6 disagreements take the single-offset path."""
        d = self.batch_detail(offsets)
        codes, positions, containing = d.codes.tolist(), d.positions.tolist(), d.containing.tolist()
        next_start, prev_k = d.next_start.tolist(), d.prev_k.tolist()
        syms: dict[int, FuncSymbol] = {}
        out: list[SymbolMatch] = []
        for k, offset in enumerate(int(o) for o in offsets):
            code, p = codes[k], positions[k]
            if code == 0:
                prev = self.sized_before_text(prev_k[k])
                reason = self.miss_text(offset, next_start[k], prev)
                out.append(
                    SymbolMatch(offset, None, TIER_UNRESOLVED, reason, None, 0, None, "none", self._src)
                )
                continue
            sym = syms.get(p)
            if sym is None:
                sym = syms[p] = self.symbol(p)
            if code == 2:
                out.append(nearest_match(offset, sym, self._src))
            elif containing[k] > 1 or sym.address_models_agree is False:
                out.append(self.lookup(offset))
            else:
                reason = inside_text(sym.name, sym.value, sym.end, offset - sym.value)
                out.append(
                    SymbolMatch(
                        offset,
                        sym,
                        TIER_SYMTAB,
                        reason,
                        offset - sym.value,
                        containing[k],
                        sym.address_models_agree,
                        "high",
                        self._src,
                    )  # fmt: skip
                )
        return out

    def _alt_symbol(self, offset: int) -> FuncSymbol | None:
        """The winner for ``offset`` under the file-layout model, or None."""
        alt = self._alt_lookup(offset)
        return None if alt < 0 else self.symbol(alt)

    def _alt_lookup(self, offset: int) -> int:
        """Range rule under the file-layout model (formula 2 of §4.6); built only when needed."""
        if self._alt is None:
            deltas = np.array(
                [self._section_delta.get(int(s), 0) for s in self.shndx[self._sized_pos].tolist()],
                dtype=object,
            )
            starts = np.array(
                [
                    (int(v) + int(d)) & U64_MAX
                    for v, d in zip(self._sized_start.tolist(), deltas, strict=True)
                ],
                dtype=np.uint64,
            )
            sizes = self.size[self._sized_pos]
            ends = starts + sizes
            ends = np.where(ends < starts, np.uint64(U64_MAX), ends).astype(np.uint64)
            self._alt = _RangeIndex(
                starts, ends, sizes, self.local[self._sized_pos], self.sym_index[self._sized_pos]
            )
        hit = int(self._alt.query(np.array([offset], dtype=np.uint64))[0])
        return int(self._sized_pos[hit]) if hit >= 0 else -1

    def _miss_reason(self, offset: int) -> str:
        d = self.batch_detail([offset])
        return self.miss_text(offset, int(d.next_start[0]), self.sized_before_text(int(d.prev_k[0])))

    def lookup_exact(self, value: int) -> ExactMatch | None:
        """The SK handler's exact rule: sized, named FUNC with ``st_value == value``; last one wins."""
        if self._exact is None:
            idx = np.nonzero(self._exact_mask)[0]
            vals = self._raw["st_value"][idx].tolist()
            table: dict[int, tuple[int, int]] = {}
            for v, i in zip(vals, idx.tolist(), strict=True):
                prev = table.get(v)
                table[v] = (i, 0 if prev is None else prev[1] + 1)
            self._exact = table
        found = self._exact.get(int(value))
        if found is None:
            return None
        raw_i, dups = found
        row = self._raw[raw_i]
        b = int(row["st_info"]) >> 4
        runtime_bind = "WEAK" if b == 2 else "GLOBAL" if b == 1 else "LOCAL"
        shndx = int(row["st_shndx"])
        sec = self._image.section(shndx)
        delta = self._section_delta.get(shndx)
        sym = FuncSymbol(
            name=self._name(int(row["st_name"])),
            value=int(row["st_value"]),
            size=int(row["st_size"]),
            bind=BIND_NAMES.get(b, f"BIND_{b}"),
            local=b == STB_LOCAL,
            visibility=VISIBILITY_NAMES[int(row["st_other"]) & 3],
            section_index=shndx,
            section=sec.name if sec is not None else None,
            sym_index=raw_i,
            section_model_offset=None if delta is None else int(row["st_value"]) + delta,
            src=self._src,
        )
        return ExactMatch(int(value), sym, runtime_bind, dups, self._src)

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate FUNC symbol."""
        names = self.names()
        secs = {s.index: s.name for s in self._image.sections}
        models = [self.section_model_offset(p) for p in range(len(self))]
        frame: pd.DataFrame = columns_frame(
            {
                "file": self._image.name,
                "line": None,
                "name": list(names),
                "value": self.value.tolist(),
                "size": self.size.tolist(),
                "end": (self.value + self.size).tolist(),
                "bind": [BIND_NAMES.get(int(b), f"BIND_{int(b)}") for b in self.bind.tolist()],
                "local": self.local.tolist(),
                "section": [secs.get(int(s)) for s in self.shndx.tolist()],
                "sym_index": self.sym_index.tolist(),
                "section_model_offset": models,
            }
        )
        return frame


class ElfImage:
    """A parsed 64-bit ELF: sections, image extent, symbol table (lazy) and recorded gaps."""

    def __init__(self, name: str, data: bytes | mmap.mmap) -> None:
        """``data`` is the whole file; an ``mmap`` keeps big host libraries out of memory (row 75)."""
        self.name = name
        self.data: bytes | mmap.mmap = data
        self.gaps: list[Gap] = []
        self._symbols: SymbolTable | None = None
        self._symbols_built = False
        self._raw: tuple[npt.NDArray[Any], bytes] | None = None
        self._raw_read = False
        self._symtab: tuple[bytes, bytes] | None = None
        self._symtab_read = False
        self._symtab_checked = False
        self._scalar: ScalarSymbols | None = None
        self._parse()

    # ------------------------------------------------------------------ parsing

    def _fail(self, expected: str, got: str | None = None) -> ParseError:
        return ParseError(self.name, expected, got=got)

    def _parse(self) -> None:
        data = self.data
        if len(data) < 16 or data[:4] != ELF_MAGIC:
            raise self._fail(
                "an ELF file (magic 7f 45 4c 46)", got=data[:16].hex(" ") if data else "empty file"
            )
        ei_class = data[4]
        if ei_class == 1:
            raise self._fail(
                f"a 64-bit ELF (ELFCLASS64); the runtime rejects ELFCLASS32 ('{RUNTIME_32BIT_MESSAGE}')",
                got="ELFCLASS32",
            )
        if ei_class != 2:
            raise self._fail("a 64-bit ELF (EI_CLASS=2)", got=f"EI_CLASS={ei_class}")
        if data[5] not in (1, 2):
            # The runtime reads ELFDATANONE and unknown values as little-endian (elf.cc GetFileHeader).
            self.gaps.append(
                Gap(
                    "elf_ident",
                    f"EI_DATA={data[5]} read as little-endian, as the runtime does",
                    Source(self.name),
                )
            )
            data = data[:5] + b"\x01" + data[6:]
            self.data = data
        if len(data) < 64:
            raise self._fail("a complete 64-byte ELF64 header", got=f"{len(data)} bytes")
        self.little = data[5] == 1
        # Elf64_Ehdr: e_shoff at 40, e_shentsize/e_shnum/e_shstrndx at 58 (e_type/e_machine: pyelftools, when asked)
        shoff, shentsize, shnum, shstrndx_raw = struct.unpack_from(
            "<Q" if self.little else ">Q", data, 40
        ) + struct.unpack_from("<HHH" if self.little else ">HHH", data, 58)
        try:
            if (shoff and shnum == 0) or (shoff and shstrndx_raw == _SHN_XINDEX):
                # extended numbering (the count or the name table index in section header 0):
                # pyelftools reads it, with its own checks
                nsec, shstrndx = self._extended_counts()
            else:
                nsec = shnum if shoff else 0
                shstrndx = shstrndx_raw if nsec else 0
            if nsec and shentsize != 64:
                raise self._fail("e_shentsize 64 for ELF64", got=str(shentsize))
            if nsec and shoff + nsec * 64 > len(data):
                raise self._fail(
                    f"{nsec} section headers at e_shoff 0x{shoff:x} inside the file",
                    got=f"file of {len(data)} bytes (truncated)",
                )
            unpack = _SECTION_HEADER[self.little].unpack_from
            raw_headers = [unpack(data, shoff + 64 * i) for i in range(nsec)]
        except ParseError:
            raise
        except Exception as exc:  # pyelftools/construct raise many types on corrupt input
            raise self._fail(
                "a well-formed ELF64 header and section header table", got=f"{type(exc).__name__}: {exc}"
            ) from None
        names = b""
        if 0 < shstrndx < len(raw_headers):
            sh = raw_headers[shstrndx]
            o, s = sh[_SH_OFFSET], sh[_SH_SIZE]
            if o + s <= len(data):
                names = data[o : o + s]
            else:
                self.gaps.append(
                    Gap("section_out_of_range", "section name table lies outside the file", Source(self.name))
                )
        # each section made without the frozen __init__ (a scene's image table opens thousands of ELFs)
        file, new, source = self.name, _new_section, build_source
        self.sections: list[ElfSection] = []
        for i, (n, sh_type, flags, addr, offset, size, link, info, _align, entsize) in enumerate(raw_headers):
            if n < len(names):
                end = names.find(b"\0", n)
                sname = (names[n:] if end < 0 else names[n:end]).decode("utf-8", errors="replace")
            else:
                sname = ""
            self.sections.append(
                new(
                    i,
                    sname,
                    sh_type,
                    flags,
                    addr,
                    offset,
                    size,
                    link,
                    info,
                    entsize,
                    source(file, None, f"section[{i}]"),
                )
            )
        self.extent = self._compute_extent()

    def _elffile(self) -> ELFFile:
        """pyelftools' view of the (possibly EI_DATA-patched) bytes: only for extended section
        numbering and the enum names of ``e_type``/``e_machine`` (a 25 ms import otherwise avoided)."""
        from elftools.elf.elffile import ELFFile

        data = self.data
        stream: io.BytesIO | mmap.mmap
        if isinstance(data, mmap.mmap):
            data.seek(0)
            stream = data
        else:
            stream = io.BytesIO(data)
        return ELFFile(cast("IO[bytes]", stream))

    def _extended_counts(self) -> tuple[int, int]:
        """(section count, name table index) when the ELF header defers them to section header 0."""
        elf = self._elffile()
        nsec = int(elf.num_sections())
        if nsec and int(elf.header["e_shentsize"]) != 64:
            return nsec, 0  # the caller refuses the entry size before the index is needed
        if nsec and int(elf.header["e_shoff"]) + nsec * 64 > len(self.data):
            return nsec, 0  # likewise: the caller refuses the truncated table
        return nsec, int(elf.get_shstrndx()) if nsec else 0

    @property
    def e_type(self) -> str:
        """``e_type`` as pyelftools names it (``ET_REL``…; the number when it has no name)."""
        return str(self._elffile().header["e_type"])

    @property
    def e_machine(self) -> Any:
        """``e_machine``: recorded, never checked (triage.md §3.3); pyelftools' name or the number."""
        return self._elffile().header["e_machine"]

    def _compute_extent(self) -> ImageExtent | None:
        """Runtime rule (elf.cc ``ProcessSymbolTable``): first/last SHF_ALLOC section with non-zero size."""
        first: ElfSection | None = None
        last: ElfSection | None = None
        for s in self.sections:
            if s.alloc and s.size > 0:
                if first is None:
                    first = s
                last = s
        if first is None or last is None:
            self.gaps.append(
                Gap(
                    "no_alloc_sections",
                    "no SHF_ALLOC section with non-zero size: no device image extent",
                    Source(self.name),
                )
            )
            return None
        size = last.offset + last.size - first.offset
        if size < 0:
            ends = [s.offset + s.size for s in self.sections if s.alloc and s.size > 0]
            size = max(ends) - first.offset
            self.gaps.append(
                Gap(
                    "alloc_section_order",
                    f"last SHF_ALLOC section {last.name} ends before {first.name} starts; "
                    "extent taken to the farthest end",
                    Source(self.name),
                )
            )
        return ImageExtent(first.offset, size, first.name, last.name, Source(self.name))

    # ------------------------------------------------------------------ accessors

    def section(self, index: int) -> ElfSection | None:
        if 0 < index < len(self.sections) and index < SHN_LORESERVE:
            return self.sections[index]
        return None

    def section_by_name(self, name: str) -> ElfSection | None:
        """Last section with that name and file data (the SK handler's name match keeps the last)."""
        found = None
        for s in self.sections:
            if s.name == name and s.has_file_data:
                found = s
        return found

    def sections_with_prefix(self, prefix: str) -> list[ElfSection]:
        return [s for s in self.sections if s.name.startswith(prefix) and s.has_file_data]

    def section_data(self, sec: ElfSection) -> bytes | None:
        """Bytes of a section, or ``None`` (with a Gap) when its range lies outside the file."""
        if not sec.has_file_data:
            return b""
        if sec.offset + sec.size > len(self.data):
            self.gaps.append(
                Gap(
                    "section_out_of_range",
                    f"section {sec.name or sec.index} [0x{sec.offset:x}+0x{sec.size:x}) lies outside the "
                    f"{len(self.data)}-byte file",
                    sec.src,
                )
            )
            return None
        return self.data[sec.offset : sec.offset + sec.size]

    def section_deltas(self) -> dict[int, int]:
        """Per section: file-layout offset minus ``st_value`` offset (§4.6); 0 means the models agree."""
        if self.extent is None:
            return {}
        t = self.extent.text_offset
        # Only loaded (SHF_ALLOC) sections have a device address; symbols elsewhere get no model.
        return {s.index: (s.offset - t) - s.addr for s in self.sections[1:] if s.alloc}

    # ------------------------------------------------------------------ symbols

    @property
    def symbols(self) -> SymbolTable | None:
        """FUNC symbol table, built on first use; ``None`` plus a ``no_symtab`` Gap when stripped (row 68)."""
        if not self._symbols_built:
            self._symbols_built = True
            self._symbols = self._build_symbols()
        return self._symbols

    def symtab_bytes(self) -> tuple[bytes, bytes] | None:
        """The raw ``.symtab`` bytes and the string table (read once, cached; Gaps when unusable).

        Plain bytes, no numpy: a small table is answered by :class:`ScalarSymbols` and ascend_meta's
        relocations read ``st_value`` with ``struct``; :meth:`raw_symbols` views the same bytes as an array.
        """
        if not self._symtab_read:
            self._symtab_read = True
            self._symtab = self._read_symtab_bytes()
        return self._symtab

    def symbol_count(self) -> int | None:
        """Number of raw ``.symtab`` entries (``None`` when there is no usable table)."""
        got = self.symtab_bytes()
        return None if got is None else len(got[0]) // 24

    def st_value(self, index: int) -> int:
        """``st_value`` of raw ``.symtab`` entry ``index`` (``0 <= index <`` :meth:`symbol_count`)."""
        got = self.symtab_bytes()
        count = 0 if got is None else len(got[0]) // 24
        if got is None or not 0 <= index < count:
            raise IndexError(f"{self.name}: .symtab entry {index} does not exist ({count} entries)")
        (value,) = struct.unpack_from("<Q" if self.little else ">Q", got[0], 24 * index + 8)
        return int(value)

    def raw_symbols(self) -> tuple[npt.NDArray[Any], bytes] | None:
        """All ``.symtab`` entries as a structured array plus the string table (read once, cached)."""
        if not self._raw_read:
            self._raw_read = True
            got = self.symtab_bytes()
            if got is not None:
                sym_bytes, strtab = got
                count = len(sym_bytes) // 24
                # a read-only view of the cached bytes: one copy of a big host library's table, not two
                self._raw = np.frombuffer(sym_bytes, dtype=_sym_dtype(self.little), count=count), strtab
        return self._raw

    def _read_symtab_bytes(self) -> tuple[bytes, bytes] | None:
        symtab = self.section_by_name(".symtab")
        if symtab is None:
            typed = [s for s in self.sections if s.sh_type == SHT_SYMTAB]
            symtab = typed[-1] if typed else None
        if symtab is None:
            return None
        strtab_sec = self.section_by_name(".strtab")
        if strtab_sec is None:
            strtab_sec = self.section(symtab.link)
        if strtab_sec is None:
            self.gaps.append(Gap("no_strtab", "a .symtab without .strtab cannot name symbols", symtab.src))
            return None
        if symtab.entsize != 24:
            self.gaps.append(
                Gap("bad_symtab", f".symtab sh_entsize {symtab.entsize}, expected 24 for ELF64", symtab.src)
            )
            return None
        sym_bytes = self.section_data(symtab)
        str_bytes = self.section_data(strtab_sec)
        if sym_bytes is None or str_bytes is None:
            return None
        return bytes(sym_bytes), bytes(str_bytes)

    def _usable_symtab(self) -> tuple[bytes, bytes] | None:
        """:meth:`symtab_bytes`, recording the ``no_symtab`` Gap (once) when a lookup table is first asked for."""
        got = self.symtab_bytes()
        unusable = ("bad_symtab", "no_strtab", "section_out_of_range")
        if got is None and not self._symtab_checked and not any(g.kind in unusable for g in self.gaps):
            self.gaps.append(
                Gap(
                    "no_symtab",
                    "no .symtab: the ELF is stripped, PCs in it cannot be symbolised (§4.2)",
                    Source(self.name),
                    collect="use the unstripped kernel .o (sk_meta/<pid>/model_*/bin_files/ "
                    "or the operator's kernel_meta)",
                )
            )
        self._symtab_checked = True
        return got

    def _build_symbols(self) -> SymbolTable | None:
        if self._usable_symtab() is None:
            return None
        got = self.raw_symbols()
        assert got is not None
        raw, strtab = got
        return SymbolTable(self, raw, strtab)

    def lookup_table(self) -> SymbolTable | ScalarSymbols | None:
        """The table that answers single lookups (:meth:`lookup`, ascend_meta's exact rule).

        The numpy :attr:`symbols` once it exists; before that, for a ``.symtab`` of at most
        :data:`SCALAR_MAX_SYMBOLS` raw entries, a :class:`ScalarSymbols` (same answers, no numpy
        import); bigger tables build :attr:`symbols`. ``None`` (with its Gap) when stripped.
        """
        if self._symbols_built:
            return self._symbols
        if self._scalar is not None:
            return self._scalar
        got = self._usable_symtab()
        if got is None or len(got[0]) // 24 > SCALAR_MAX_SYMBOLS:
            return self.symbols
        from skdbg.parsers.elf_scalar import ScalarSymbols

        self._scalar = ScalarSymbols(self, got[0], got[1])
        return self._scalar

    def lookup(self, offset: int) -> SymbolMatch:
        """Range lookup that also covers the stripped case (row 68)."""
        table = self.lookup_table()
        if table is None:
            reason = "; ".join(
                g.detail for g in self.gaps if g.kind in ("no_symtab", "bad_symtab", "no_strtab")
            )
            return SymbolMatch(
                offset,
                None,
                TIER_UNRESOLVED,
                reason or "no usable symbol table",
                None,
                0,
                None,
                "none",
                Source(self.name),
            )
        return table.lookup(offset)

    def match_many(self, offsets: Sequence[int]) -> list[SymbolMatch]:
        """:meth:`lookup` for many offsets in one vectorised pass (stripped images included)."""
        table = self.symbols
        if table is None:
            return [self.lookup(o) for o in offsets]
        return table.match_many(offsets)


#: one Elf64_Shdr as plain integers (pyelftools would map known values to enum names), by byte order
#: (little-endian: True): sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info,
#: sh_addralign, sh_entsize
_SECTION_HEADER = {True: struct.Struct("<IIQQQQIIQQ"), False: struct.Struct(">IIQQQQIIQQ")}
_SH_OFFSET, _SH_SIZE = 4, 5


def open_elf(path: str | os.PathLike[str]) -> ElfImage:
    """Open a kernel ELF; ParseError for a missing file, directory, non-ELF bytes, 32-bit or truncated ELF."""
    p = Path(path)
    name = str(p)
    return ElfImage(name, read_regular(p, what="an ELF file"))
