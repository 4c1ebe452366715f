"""``skdbg symbolize ELF PC…`` API (artifacts.md §4.6, §4.7; rows 66, 68, 73, 74)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.parsers import demangle as dm
from skdbg.parsers.common import ParseError
from skdbg.parsers.symbolize import COLUMNS, default_base, symbolize, to_frame
from skdbg.scenebuilder.elf import ChildKernel, SymSpec, text_section, write_bin_files, write_elf

BASE = 0x12C0000000


def _child(tmp_path: Path) -> tuple[Path, list[tuple[str, int, int]]]:
    written = write_bin_files(tmp_path / "model_1_1", [ChildKernel("add_custom", BASE)])
    path, layout = written["add_custom"]
    assert layout is not None
    return path, layout.variants


def test_base_from_bin_files_name(tmp_path: Path) -> None:
    """Row 66/73: a bin_files name gives the image base; PCs are device addresses."""
    path, variants = _child(tmp_path)
    name1, off1, size1 = variants[1]
    res = symbolize(path, [BASE + off1, BASE + off1 + size1 - 1, BASE + 0x10, BASE - 4, BASE + 0x100000])
    assert (res.base, res.base_source) == (BASE, "file name")
    r0, r1, r2, r3, r4 = res
    assert (r0.symbol, r0.offset, r0.offset_in_symbol, r0.tier) == (name1, off1, 0, "symtab")
    assert (r0.child_global, r0.split_index) == ("add_custom", 1)
    assert r1.offset_in_symbol == size1 - 1 and r1.confidence == "high"
    assert (r2.symbol, r2.child_global, r2.split_index) == ("add_custom", "add_custom", None)
    assert r2.reason.endswith("the child's original global kernel")
    assert r3.tier == "unresolved" and r3.offset is None and "below the image base" in r3.reason
    assert r4.tier == "unresolved" and "beyond the image extent" in r4.reason


def test_row74_demangled_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, variants = _child(tmp_path)
    monkeypatch.setattr(dm, "_cache", {})  # nothing remembered from other tests
    monkeypatch.setattr(dm.shutil, "which", lambda _n: None)
    (raw,) = symbolize(path, [BASE + variants[3][1]])
    assert raw.demangled == raw.symbol == "_Z13add_custom_skILj3EEvv"
    monkeypatch.undo()
    monkeypatch.setattr(dm, "_cache", {})
    (shown,) = symbolize(path, [BASE + variants[3][1]])
    if dm.demangler_path() is not None:
        assert shown.demangled == "void add_custom_sk<3u>()"
    (plain,) = symbolize(path, [BASE + variants[3][1]], demangle=False)
    assert plain.demangled == plain.symbol


def test_explicit_and_default_base(tmp_path: Path) -> None:
    p = write_elf(tmp_path / "kernel.o", sections=[text_section(0x100)], symbols=[SymSpec("k", 0x20, 0x40)])
    assert default_base(p) == (0, "default 0")
    (r,) = symbolize(p, [0x30])
    assert (r.symbol, r.offset, r.base) == ("k", 0x30, 0)
    (r,) = symbolize(p, [0x5000 + 0x30], base=0x5000)
    assert (r.symbol, r.offset_in_symbol) == ("k", 0x10)
    (gap,) = symbolize(p, [0x10])
    assert (
        gap.tier == "unresolved" and gap.reason == "0x10 is before the first function symbol (starts at 0x20)"
    )


def test_row68_stripped(tmp_path: Path) -> None:
    p = write_elf(tmp_path / "s.o", sections=[text_section(0x100)], strip=True)
    res = symbolize(p, [0x10])
    assert res[0].tier == "unresolved" and "stripped" in res[0].reason
    assert [g.kind for g in res.gaps] == ["no_symtab"]


def test_bad_elf_raises_parse_error(tmp_path: Path) -> None:
    p = tmp_path / "x_0x10.o"
    p.write_bytes(b"text")
    with pytest.raises(ParseError, match="x_0x10.o"):
        symbolize(p, [0x10])


def test_frame(tmp_path: Path) -> None:
    path, variants = _child(tmp_path)
    res = symbolize(path, [BASE + variants[0][1], BASE - 1])
    frame = res.to_frame()
    assert list(frame.columns) == COLUMNS
    assert frame["tier"].tolist() == ["symtab", "unresolved"]
    assert to_frame([]).empty


#: the columns a resolution decides (file, pc, base and offset are the inputs)
_KEEP = (
    "symbol",
    "sym_start",
    "sym_size",
    "offset_in_symbol",
    "tier",
    "confidence",
    "child_global",
    "split_index",
    "reason",
)


def _one_by_one(path: Path, pcs: list[int], base: int) -> list[tuple[object, ...]]:
    """Reference rows from the single-offset rules (SymbolTable.lookup, tested against brute force)."""
    from skdbg.parsers.ascend_meta import parse_ascend_meta
    from skdbg.parsers.elf import open_elf
    from skdbg.parsers.symbolize import _fill_one

    elf = open_elf(path)
    meta = parse_ascend_meta(elf) if elf.section_by_name(".ascend.meta") is not None else None
    variants = meta.variants() if meta is not None else {}
    n = len(pcs)
    cols: dict[str, list[object]] = {c: [None] * n for c in COLUMNS}
    cols["tier"], cols["confidence"], cols["reason"] = ["unresolved"] * n, ["none"] * n, [""] * n
    for i, pc in enumerate(pcs):
        _fill_one(cols, i, elf, pc, pc - base, base, "argument", variants, meta)
    return list(zip(*(cols[c] for c in _KEEP), strict=True))


@pytest.mark.parametrize("case", ["overlaps-gaps-zero-size", "sk-variants", "zero-size-only"])
def test_batch_path_equals_the_single_offset_rules(tmp_path: Path, case: str) -> None:
    """The vectorised command path gives, PC for PC, the symbol, grade and reason of the per-PC rules:
    inside, overlapping (smallest wins, 'N sized FUNC symbols contain it'), zero-size nearest, gaps,
    before the first / after the last function, below the base, beyond the extent, SK variants, and a
    table with no sized symbol at all."""
    if case == "sk-variants":
        path, _ = _child(tmp_path)
        base = BASE
    elif case == "zero-size-only":
        syms = [SymSpec("z0", 0x40, 0), SymSpec("z1", 0x100, 0)]
        path = write_elf(tmp_path / "k.o", sections=[text_section(0x400)], symbols=syms)
        base = 0x5000
    else:
        syms = [
            SymSpec("a", 0x40, 0x40), SymSpec("b", 0x60, 0x10, "LOCAL"), SymSpec("c", 0x100, 0x20),
            SymSpec("z", 0x180, 0), SymSpec("d", 0x200, 0x80), SymSpec("e", 0x200, 0x80, "LOCAL"),
        ]  # fmt: skip
        path = write_elf(tmp_path / "k.o", sections=[text_section(0x400)], symbols=syms)
        base = 0x5000
    pcs = [base + off for off in range(-8, 0x1200, 7)]
    res = symbolize(path, pcs, base=base, demangle=False)
    got = list(zip(*(res.columns[c] for c in _KEEP), strict=True))
    assert got == _one_by_one(path, pcs, base)
    tiers = {r[4] for r in got}
    assert (
        tiers == {"nearest-symbol", "unresolved"}
        if case == "zero-size-only"
        else tiers >= {"symtab", "unresolved"}
    )
    if case == "zero-size-only":
        assert "the symbol table has no sized, named FUNC symbols" in {r[8] for r in got}


def test_reasons_by_hand(tmp_path: Path) -> None:
    """The reason texts of the batch path, written out by hand: inside, in a gap, before the first and
    after the last function, below the base, beyond the extent; a PC past 64 bits is explained too."""
    syms = [SymSpec("a", 0x40, 0x40), SymSpec("c", 0x100, 0x20)]
    path = write_elf(tmp_path / "k.o", sections=[text_section(0x400)], symbols=syms)
    base = 0x5000
    pcs = [base + 0x44, base + 0x90, base + 0x10, base + 0x130, base - 1, 1 << 65]
    reasons = symbolize(path, pcs, base=base).columns["reason"]
    assert reasons[:5] == [
        "inside a [0x40, 0x80) at +0x4",
        "0x90 is in a gap between a (ends 0x80) and the next function at 0x100",
        "0x10 is before the first function symbol (starts at 0x40)",
        "0x130 is after the last function symbol c (ends 0x120)",
        "PC 0x4fff is below the image base 0x5000 (argument)",
    ]
    assert reasons[5].startswith("image offset 0x1ffffffffffffb000 is beyond the image extent")


def test_a_pc_past_64_bits_in_an_image_without_an_extent(tmp_path: Path) -> None:
    """No loaded section, so no extent to be beyond: a 65-bit offset is explained, not a crash."""
    from skdbg.scenebuilder.elf import SectionSpec

    text = SectionSpec(".text", b"\xcc" * 0x100)  # no SHF_ALLOC
    path = write_elf(tmp_path / "k.o", sections=[text], symbols=[SymSpec("f", 0x10, 0x20)])
    res = symbolize(path, [0x10000000000000018, 0x18], base=0)
    assert res.columns["tier"] == ["unresolved", "symtab"]
    assert res.columns["reason"][0] == (
        "image offset 0x10000000000000018 does not fit in 64 bits: no symbol can hold it; base 0x0 (argument)"
    )
