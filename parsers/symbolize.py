"""``skdbg symbolize ELF PC…``: PCs → functions of one kernel ELF (artifacts.md §4.6, §4.7).

Why a separate entry point: the CLI (and users holding a single ``.o`` and a plog PC) need the
symtab lookup without a whole scene. ``base`` is the device address of the image
(``binDevAddr``); by default it is read from a ``bin_files`` name (``…_0x<HEX>.o``, §3.12), else
0 so the PCs are taken as image offsets. All PCs go through one vectorised lookup and one
``c++filt`` process.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from skdbg.parsers.ascend_meta import AscendMetaResult, parse_ascend_meta
from skdbg.parsers.binfiles import parse_bin_file_name
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.demangle import demangle_many
from skdbg.parsers.elf import (
    TIER_SYMTAB,
    TIER_UNRESOLVED,
    U64_MAX,
    ElfImage,
    SymbolTable,
    objects,
    open_elf,
)
from skdbg.parsers.frames import typed_frame

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, slots=True)
class Resolution:
    """One PC resolved against one ELF.

    ``offset`` = ``pc − base`` (None when the PC is below the base); ``tier`` is ``symtab``,
    ``nearest-symbol`` or ``unresolved``; ``reason`` says why. ``child_global``/``split_index``
    are filled when the function is an SK variant in the ELF's bind map (§4.5).
    """

    pc: int
    offset: int | None
    symbol: str | None
    demangled: str | None
    sym_start: int | None
    sym_size: int | None
    offset_in_symbol: int | None
    tier: str
    reason: str
    confidence: str
    base: int
    child_global: str | None
    split_index: int | None
    src: Source


COLUMNS = [
    "file", "line", "pc", "base", "offset", "symbol", "demangled", "sym_start", "sym_size",
    "offset_in_symbol", "tier", "confidence", "child_global", "split_index", "reason",
]  # fmt: skip


#: exact integer columns (addresses past int64 stay exact, a missing value stays missing)
_INT_DTYPES = {
    "pc": "UInt64",
    "base": "UInt64",
    "offset": "UInt64",
    "sym_start": "UInt64",
    "sym_size": "UInt64",
    "offset_in_symbol": "UInt64",
    "split_index": "Int64",
}


@dataclass(slots=True)
class SymbolizeResult:
    """The resolutions (in PC order as given) plus what was missing; behaves like a list of them.

    The table is kept as columns (:data:`COLUMNS`): a million PCs are a few lists, not a million
    objects; :attr:`resolutions` builds the row objects on first use.
    """

    file: str
    base: int
    base_source: str  # "argument" | "file name" | "default 0"
    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in COLUMNS})
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    _rows: list[Resolution] | None = None

    @property
    def resolutions(self) -> list[Resolution]:
        if self._rows is None:
            c = self.columns
            src = Source(self.file)
            self._rows = [
                Resolution(pc, off, sym, shown, start, size, ois, tier, why, conf, b, child, split, src)
                for pc, off, sym, shown, start, size, ois, tier, why, conf, b, child, split in zip(
                    c["pc"], c["offset"], c["symbol"], c["demangled"], c["sym_start"], c["sym_size"],
                    c["offset_in_symbol"], c["tier"], c["reason"], c["confidence"], c["base"],
                    c["child_global"], c["split_index"], strict=True,
                )
            ]  # fmt: skip
        return self._rows

    def __iter__(self) -> Iterator[Resolution]:
        return iter(self.resolutions)

    def __len__(self) -> int:
        return len(self.columns["pc"])

    def __getitem__(self, i: int) -> Resolution:
        return self.resolutions[i]

    def to_frame(self) -> pd.DataFrame:
        return typed_frame(self.columns, COLUMNS, _INT_DTYPES)


def to_frame(resolutions: Sequence[Resolution]) -> pd.DataFrame:
    """One row per resolution, built column by column (a million PCs stay a few array conversions)."""
    rs = resolutions
    columns: dict[str, list[Any]] = {"file": [r.src.file for r in rs], "line": [None] * len(rs)}
    for name in COLUMNS[2:]:  # every other column is the Resolution field of that name
        columns[name] = [getattr(r, name) for r in rs]
    return typed_frame(columns, COLUMNS, _INT_DTYPES)


def default_base(elf_path: str | os.PathLike[str]) -> tuple[int, str]:
    """Base from a ``bin_files`` name, else 0 (PCs are image offsets)."""
    parsed = parse_bin_file_name(elf_path)
    if parsed is not None:
        return parsed.base, "file name"
    return 0, "default 0"


def symbolize(
    elf_path: str | os.PathLike[str] | ElfImage,
    pcs: Iterable[int],
    base: int | None = None,
    *,
    demangle: bool = True,
) -> SymbolizeResult:
    """Resolve ``pcs`` in one ELF; ParseError only for an unreadable/invalid ELF."""
    elf = elf_path if isinstance(elf_path, ElfImage) else open_elf(elf_path)
    if base is None:
        b, how = default_base(Path(elf.name))
    else:
        b, how = base, "argument"
    res = SymbolizeResult(elf.name, b, how)
    pc_list = list(map(int, pcs))
    table = elf.symbols  # builds the sorted arrays once (and records a no_symtab Gap when stripped)
    res.gaps += elf.gaps
    extent = elf.extent
    meta: AscendMetaResult | None = None
    if table is not None and elf.section_by_name(".ascend.meta") is not None:
        meta = parse_ascend_meta(elf)
        res.gaps += meta.gaps
    variants = meta.variants() if meta is not None else {}

    n = len(pc_list)
    cols = res.columns
    cols["file"] = [elf.name] * n
    cols["line"] = [None] * n
    cols["pc"] = pc_list
    cols["base"] = [b] * n
    offsets = _image_offsets(pc_list, b, extent.size if extent is not None else None)
    cols["offset"] = offsets.column
    # the decided columns as object arrays while the batch fills them (one fancy-index store each)
    decided = {name: np.full(n, None, dtype=object) for name in _DECIDED}
    decided["tier"] = np.full(n, TIER_UNRESOLVED, dtype=object)
    decided["confidence"] = np.full(n, "none", dtype=object)
    decided["reason"] = np.full(n, "", dtype=object)
    if table is None:
        slow = list(range(n))
    elif len(offsets.rows):
        slow = offsets.outside + _fill_batch(decided, table, offsets.rows, offsets.inside, variants, meta)
    else:
        slow = offsets.outside
    for name, arr in decided.items():
        cols[name] = arr.tolist()
    for i in slow:
        pc = pc_list[i]
        _fill_one(cols, i, elf, pc, pc - b, b, how, variants, meta)
    named = cols["symbol"]
    if demangle:
        unique = set(named)
        unique.discard(None)
        ordered = sorted(unique)
        shown: dict[str | None, str | None] = dict(zip(ordered, demangle_many(ordered), strict=True))
        shown[None] = None
        cols["demangled"] = list(map(shown.__getitem__, named))
    else:
        cols["demangled"] = list(named)
    return res


#: the columns a resolution decides, None until it does (tier, confidence and reason have defaults)
_DECIDED = ("symbol", "sym_start", "sym_size", "offset_in_symbol", "child_global", "split_index")


@dataclass(frozen=True, slots=True)
class _ImageOffsets:
    """``pc - base`` of every PC: the ``offset`` column (None below the base), the rows whose offset
    lies in the image (and their offsets), and every other row (the single-offset rules explain them)."""

    column: list[int | None]
    rows: npt.NDArray[np.int64]
    inside: npt.NDArray[np.uint64]
    outside: list[int]


def _image_offsets(pcs: list[int], base: int, size: int | None) -> _ImageOffsets:
    """The offsets in a few array passes when every PC and the base are 64-bit addresses (a device
    PC always is); in Python ints otherwise (an argument of 65 bits, a negative base)."""
    limit = U64_MAX + 1 if size is None else min(size, U64_MAX + 1)
    if pcs and 0 <= base <= U64_MAX and min(pcs) >= 0 and max(pcs) <= U64_MAX:
        pc = np.array(pcs, dtype=np.uint64)
        above = pc >= np.uint64(base)
        off = pc - np.uint64(base)  # wrapped where the PC is below the base: masked out below
        column = off.astype(object)
        column[~above] = None
        inside = above if limit > U64_MAX else above & (off < np.uint64(limit))
        rows = np.flatnonzero(inside).astype(np.int64)
        return _ImageOffsets(column.tolist(), rows, off[rows], np.flatnonzero(~inside).tolist())
    offsets = [pc - base for pc in pcs]
    rows_list = [i for i, o in enumerate(offsets) if 0 <= o < limit]
    kept = set(rows_list)
    return _ImageOffsets(
        [o if o >= 0 else None for o in offsets],
        np.array(rows_list, dtype=np.int64),
        np.array([offsets[i] for i in rows_list], dtype=np.uint64),
        [i for i in range(len(offsets)) if i not in kept],
    )


def _annotate(
    sym_value: int, sym_name: str, variants: dict[int, Any], meta: AscendMetaResult | None
) -> tuple[str | None, int | None, str]:
    """(child_global, split_index, reason suffix) from the ELF's bind map (§4.5)."""
    ref = variants.get(sym_value)
    if ref is not None:
        return (
            ref.global_name,
            ref.splits[0],
            f"; SK variant split {ref.splits[0]} of {ref.global_name} (bind map)",
        )
    if meta is not None and sym_value in meta.bind_map:
        return sym_name, None, "; the child's original global kernel"
    return None, None, ""


def _fill_batch(
    decided: dict[str, npt.NDArray[np.object_]],
    table: SymbolTable,
    rows: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.uint64],
    variants: dict[int, Any],
    meta: AscendMetaResult | None,
) -> list[int]:
    """Fill the rows a plain containment or a gap explains, from one vectorised lookup; return the
    rows that need the full single-offset explanation (overlaps, §4.6 disagreement, zero-size nearest).

    Each decided column is one fancy-index store into its object array, and the reason texts are
    formatted once per symbol plus one hex number per PC (:meth:`SymbolTable.inside_texts`,
    :meth:`SymbolTable.miss_texts`): the per-PC work is C-level ``map`` calls, not Python lines."""
    detail = table.batch_detail(offsets)
    codes, pos = detail.codes, detail.positions
    disagree = table.models_disagree()
    hit = codes == 1
    fast = hit & (detail.containing <= 1)
    fast[hit] &= ~disagree[pos[hit]]
    miss = codes == 0
    slow: list[int] = rows[~(fast | miss)].tolist()

    f_rows = rows[fast]
    f_pos = pos[fast]
    values = table.value[f_pos]
    in_sym = offsets[fast] - values  # the symbol contains the offset: no wrap
    names = table.names(f_pos)
    reasons = table.inside_texts(f_pos, in_sym)
    if variants or meta is not None:
        child, split = [], []
        for k, (n, v) in enumerate(zip(names.tolist(), values.tolist(), strict=True)):
            c, sp, extra = _annotate(v, n, variants, meta)
            child.append(c)
            split.append(sp)
            reasons[k] += extra
        decided["child_global"][f_rows] = objects(child)
        decided["split_index"][f_rows] = objects(split)
    decided["symbol"][f_rows] = names
    decided["sym_start"][f_rows] = values
    decided["sym_size"][f_rows] = table.size[f_pos]
    decided["offset_in_symbol"][f_rows] = in_sym
    decided["tier"][f_rows] = TIER_SYMTAB
    decided["confidence"][f_rows] = "high"
    decided["reason"][f_rows] = objects(reasons)
    m = np.flatnonzero(miss)
    decided["reason"][rows[m]] = objects(table.miss_texts(offsets[m], detail.next_start[m], detail.prev_k[m]))
    return slow


def _fill_one(
    cols: dict[str, list[Any]],
    i: int,
    elf: ElfImage,
    pc: int,
    off: int,
    b: int,
    how: str,
    variants: dict[int, Any],
    meta: AscendMetaResult | None,
) -> None:
    """One row by the single-offset rules: below the base, beyond the extent, stripped, or a case whose
    reason needs the full explanation (:meth:`SymbolTable.lookup`)."""
    extent = elf.extent
    if off < 0:
        cols["reason"][i] = f"PC 0x{pc:x} is below the image base 0x{b:x} ({how})"
        return
    if extent is not None and off >= extent.size:
        cols["reason"][i] = (
            f"image offset 0x{off:x} is beyond the image extent 0x{extent.size:x} "
            f"(sections {extent.first_section}..{extent.last_section}); base 0x{b:x} ({how})"
        )
        return
    if off > U64_MAX:  # an image with no loaded section has no extent to be beyond
        cols["reason"][i] = (
            f"image offset 0x{off:x} does not fit in 64 bits: no symbol can hold it; base 0x{b:x} ({how})"
        )
        return
    match = elf.lookup(off)
    sym = match.symbol
    if sym is None:
        cols["reason"][i] = match.reason
        return
    child, split, extra = _annotate(sym.value, sym.name, variants, meta)
    cols["symbol"][i] = sym.name
    cols["sym_start"][i] = sym.value
    cols["sym_size"][i] = sym.size
    cols["offset_in_symbol"][i] = match.offset_in_symbol
    cols["tier"][i] = match.tier
    cols["confidence"][i] = match.confidence
    cols["reason"][i] = match.reason + extra
    cols["child_global"][i] = child
    cols["split_index"][i] = split
