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
from skdbg.parsers.elf import TIER_SYMTAB, TIER_UNRESOLVED, ElfImage, SymbolTable, open_elf
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
    pc_list = [int(p) for p in pcs]
    table = elf.symbols  # builds the sorted arrays once (and records a no_symtab Gap when stripped)
    res.gaps += elf.gaps
    extent = elf.extent
    meta: AscendMetaResult | None = None
    if table is not None and elf.section_by_name(".ascend.meta") is not None:
        meta = parse_ascend_meta(elf)
        res.gaps += meta.gaps
    variants = meta.variants() if meta is not None else {}

    n = len(pc_list)
    offsets = [pc - b for pc in pc_list]
    cols = res.columns
    cols["file"] = [elf.name] * n
    cols["line"] = [None] * n
    cols["pc"] = pc_list
    cols["base"] = [b] * n
    cols["offset"] = [o if o >= 0 else None for o in offsets]
    for name in (
        "symbol",
        "demangled",
        "sym_start",
        "sym_size",
        "offset_in_symbol",
        "child_global",
        "split_index",
    ):
        cols[name] = [None] * n
    cols["tier"] = [TIER_UNRESOLVED] * n
    cols["confidence"] = ["none"] * n
    cols["reason"] = [""] * n
    size = extent.size if extent is not None else None
    inside = [i for i, off in enumerate(offsets) if off >= 0 and (size is None or off < size)]
    slow: list[int] = [i for i, off in enumerate(offsets) if off < 0 or (size is not None and off >= size)]
    if table is None:
        slow = list(range(n))
    elif inside:
        slow += _fill_batch(cols, table, inside, [offsets[i] for i in inside], variants, meta)
    for i in slow:
        _fill_one(cols, i, elf, pc_list[i], offsets[i], b, how, variants, meta)
    named = cols["symbol"]
    if demangle:
        unique = sorted({x for x in named if x is not None})
        shown = dict(zip(unique, demangle_many(unique), strict=True))
        cols["demangled"] = [None if x is None else shown[x] for x in named]
    else:
        cols["demangled"] = list(named)
    return res


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
    cols: dict[str, list[Any]],
    table: SymbolTable,
    rows: list[int],
    offsets: list[int],
    variants: dict[int, Any],
    meta: AscendMetaResult | None,
) -> list[int]:
    """Fill the rows a plain containment or a gap explains, from one vectorised lookup; return the
    rows that need the full single-offset explanation (overlaps, §4.6 disagreement, zero-size nearest).

    Column cells are assigned through numpy object arrays (one fancy-index store per column), so the
    per-PC Python work is the reason text alone."""
    detail = table.batch_detail(offsets)
    codes = np.asarray(detail.codes, dtype=np.uint8)
    pos = np.asarray(detail.positions, dtype=np.int64)
    row_idx = np.asarray(rows, dtype=np.int64)
    off = np.asarray(offsets, dtype=np.uint64)
    disagree = table.models_disagree()
    hit = codes == 1
    fast = hit & (np.asarray(detail.containing, dtype=np.int64) <= 1)
    fast[hit] &= ~disagree[pos[hit]]
    miss = codes == 0
    slow: list[int] = row_idx[~(fast | miss)].tolist()

    f_rows = row_idx[fast]
    f_pos = pos[fast]
    f_off = off[fast].tolist()
    names = table.names(f_pos).tolist()
    values = table.value[f_pos].tolist()
    sizes = table.size[f_pos].tolist()
    in_sym = [o - v for o, v in zip(f_off, values, strict=True)]
    reasons = [
        f"inside {n} [0x{v:x}, 0x{v + z:x}) at +0x{d:x}"
        for n, v, z, d in zip(names, values, sizes, in_sym, strict=True)
    ]
    if variants or meta is not None:
        child, split = [], []
        for k, (n, v) in enumerate(zip(names, values, strict=True)):
            c, sp, extra = _annotate(v, n, variants, meta)
            child.append(c)
            split.append(sp)
            reasons[k] += extra
        _store(cols, "child_global", f_rows, child)
        _store(cols, "split_index", f_rows, split)
    _store(cols, "symbol", f_rows, names)
    _store(cols, "sym_start", f_rows, values)
    _store(cols, "sym_size", f_rows, sizes)
    _store(cols, "offset_in_symbol", f_rows, in_sym)
    _store(cols, "tier", f_rows, [TIER_SYMTAB] * len(names))
    _store(cols, "confidence", f_rows, ["high"] * len(names))

    m_k = np.flatnonzero(miss).tolist()
    prev_text: dict[int, str] = {}
    m_reasons = []
    for k in m_k:
        pk = detail.prev_k[k]
        prev = prev_text.get(pk)
        if prev is None:
            prev = prev_text[pk] = table.sized_before_text(pk)
        m_reasons.append(table.miss_text(offsets[k], detail.next_start[k], prev))
    reason = np.asarray(cols["reason"], dtype=object)
    reason[f_rows] = reasons
    reason[row_idx[miss]] = m_reasons
    cols["reason"] = reason.tolist()
    return slow


def _store(cols: dict[str, list[Any]], name: str, rows: npt.NDArray[np.int64], values: list[Any]) -> None:
    """``cols[name][rows] = values`` as one numpy object-array store."""
    arr = np.empty(len(cols[name]), dtype=object)
    arr[:] = cols[name]
    if len(values):
        tmp = np.empty(len(values), dtype=object)
        tmp[:] = values
        arr[rows] = tmp
    cols[name] = arr.tolist()


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
