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
from typing import TYPE_CHECKING

from skdbg.parsers.ascend_meta import AscendMetaResult, parse_ascend_meta
from skdbg.parsers.binfiles import parse_bin_file_name
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.demangle import demangle_many
from skdbg.parsers.elf import TIER_UNRESOLVED, ElfImage, SymbolMatch, open_elf
from skdbg.parsers.frames import rows_frame

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


@dataclass(slots=True)
class SymbolizeResult:
    """The resolutions (in PC order as given) plus what was missing; behaves like a list of them."""

    file: str
    base: int
    base_source: str  # "argument" | "file name" | "default 0"
    resolutions: list[Resolution] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def __iter__(self) -> Iterator[Resolution]:
        return iter(self.resolutions)

    def __len__(self) -> int:
        return len(self.resolutions)

    def __getitem__(self, i: int) -> Resolution:
        return self.resolutions[i]

    def to_frame(self) -> pd.DataFrame:
        return to_frame(self.resolutions)


COLUMNS = [
    "file", "line", "pc", "base", "offset", "symbol", "demangled", "sym_start", "sym_size",
    "offset_in_symbol", "tier", "confidence", "child_global", "split_index", "reason",
]  # fmt: skip


def to_frame(resolutions: Sequence[Resolution]) -> pd.DataFrame:
    """One row per resolution."""
    return rows_frame(
        [
            {
                "file": r.src.file,
                "line": None,
                "pc": r.pc,
                "base": r.base,
                "offset": r.offset,
                "symbol": r.symbol,
                "demangled": r.demangled,
                "sym_start": r.sym_start,
                "sym_size": r.sym_size,
                "offset_in_symbol": r.offset_in_symbol,
                "tier": r.tier,
                "confidence": r.confidence,
                "child_global": r.child_global,
                "split_index": r.split_index,
                "reason": r.reason,
            }
            for r in resolutions
        ],
        COLUMNS,
    )


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
    src = Source(elf.name)
    pc_list = [int(p) for p in pcs]
    table = elf.symbols  # builds the sorted arrays once (and records a no_symtab Gap when stripped)
    res.gaps += elf.gaps
    extent = elf.extent
    meta: AscendMetaResult | None = None
    if table is not None and elf.section_by_name(".ascend.meta") is not None:
        meta = parse_ascend_meta(elf)
        res.gaps += meta.gaps
    variants = meta.variants() if meta is not None else {}

    matches: list[SymbolMatch | None] = []
    for pc in pc_list:
        off = pc - b
        if off < 0 or (extent is not None and off >= extent.size):
            matches.append(None)
        else:
            matches.append(elf.lookup(off))
    names = [m.symbol.name if m is not None and m.symbol is not None else None for m in matches]
    present = [n for n in names if n is not None]
    shown = iter(demangle_many(present) if demangle else present)

    for pc, match, name in zip(pc_list, matches, names, strict=True):
        off = pc - b
        if off < 0:
            res.resolutions.append(
                _unresolved(pc, None, b, f"PC 0x{pc:x} is below the image base 0x{b:x} ({how})", src)
            )
            continue
        if match is None:
            assert extent is not None
            res.resolutions.append(
                _unresolved(
                    pc,
                    off,
                    b,
                    f"image offset 0x{off:x} is beyond the image extent 0x{extent.size:x} "
                    f"(sections {extent.first_section}..{extent.last_section}); base 0x{b:x} ({how})",
                    src,
                )
            )
            continue
        sym = match.symbol
        if sym is None or name is None:
            res.resolutions.append(_unresolved(pc, off, b, match.reason, src))
            continue
        child: str | None = None
        split: int | None = None
        reason = match.reason
        ref = variants.get(sym.value)
        if ref is not None:
            child, split = ref.global_name, ref.splits[0]
            reason += f"; SK variant split {split} of {child} (bind map)"
        elif meta is not None and sym.value in meta.bind_map:
            child = sym.name
            reason += "; the child's original global kernel"
        res.resolutions.append(
            Resolution(
                pc=pc,
                offset=off,
                symbol=name,
                demangled=next(shown),
                sym_start=sym.value,
                sym_size=sym.size,
                offset_in_symbol=match.offset_in_symbol,
                tier=match.tier,
                reason=reason,
                confidence=match.confidence,
                base=b,
                child_global=child,
                split_index=split,
                src=src,
            )
        )
    return res


def _unresolved(pc: int, off: int | None, base: int, reason: str, src: Source) -> Resolution:
    return Resolution(
        pc, off, None, None, None, None, None, TIER_UNRESOLVED, reason, "none", base, None, None, src
    )
