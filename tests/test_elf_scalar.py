"""The numpy-free lookups of a small ELF symbol table (parsers/elf_scalar.py, issue 18).

Two kinds of checks: a property test that the plain-Python table and the numpy ``SymbolTable`` agree
on every field of every match (reason text included) for random, deliberately nasty symbol tables —
and hand-written cases from the spec rules (artifacts.md §4.6/§4.7, ecosystem.md §3.4), whose
expected matches are written out here, not computed by either implementation.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import Gap, Source
from skdbg.parsers.elf import (
    SCALAR_MAX_SYMBOLS,
    TIER_NEAREST,
    TIER_SYMTAB,
    TIER_UNRESOLVED,
    ElfImage,
    FuncSymbol,
    SymbolMatch,
    SymbolTable,
)
from skdbg.parsers.elf_scalar import ScalarSymbols
from skdbg.scenebuilder.elf import (
    SectionSpec,
    SymSpec,
    build_elf,
    data_section,
    text_section,
)

U64 = (1 << 64) - 1
NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


# ---------------------------------------------------------------- building raw symbol tables


@dataclass(frozen=True)
class RawSym:
    """One Elf64_Sym exactly as written (any st_name, bind, type, section index, size)."""

    name: int  # st_name
    info: int
    other: int
    shndx: int
    value: int
    size: int


def _with_raw_symtab(data: bytes, rows: list[RawSym], *, little: bool) -> bytes:
    """``data`` (an ELF from build_elf with len(rows) - 1 placeholder symbols) with its .symtab rows replaced."""
    symtab = ElfImage("patch.o", data).section_by_name(".symtab")
    assert symtab is not None and symtab.size == 24 * len(rows)
    fmt = ("<" if little else ">") + "IBBHQQ"
    body = b"".join(struct.pack(fmt, r.name, r.info, r.other, r.shndx, r.value, r.size) for r in rows)
    return data[: symtab.offset] + body + data[symtab.offset + symtab.size :]


def _strtab_offsets(data: bytes) -> tuple[list[int], list[int], int]:
    """(offsets of the placeholder names, offsets of NUL bytes inside names' ends, strtab size)."""
    elf = ElfImage("probe.o", data)
    strtab = elf.section_by_name(".strtab")
    assert strtab is not None
    raw = elf.section_data(strtab)
    assert raw is not None
    present = [n for n in NAMES if b"\0" + n.encode() + b"\0" in raw]
    starts = [raw.index(b"\0" + n.encode() + b"\0") + 1 for n in present]
    nuls = [s + len(n) for s, n in zip(starts, present, strict=True)]
    return starts, nuls, len(raw)


@st.composite
def raw_tables(draw: st.DrawFn) -> tuple[bytes, list[RawSym]]:
    """An ELF with .text (sh_addr 0 or not: §4.6 delta), .data (its own addr), a non-alloc section and
    a hand-filled .symtab."""
    little = draw(st.booleans())
    text_addr = draw(st.sampled_from([0, 0, 0x40, 0x1000]))
    data_addr = draw(st.sampled_from([0, 0x400, 0x480]))
    sections = [
        text_section(0x400, addr=text_addr),
        data_section(b"\0" * 0x40, addr=data_addr),
        SectionSpec(".comment", b"c" * 0x20, flags=0),
    ]
    n = draw(st.integers(1, 24))
    placeholders = [SymSpec(NAMES[i % len(NAMES)], 0, 0, "GLOBAL") for i in range(n)]
    base = build_elf(sections, placeholders, little=little)
    starts, nuls, strsize = _strtab_offsets(base)
    # values cluster so that overlaps, equal values and touching ranges are common
    near = st.integers(0, 0x500) | st.sampled_from([text_addr, text_addr + 0x10, data_addr, 0x100, 0x180])
    high = st.sampled_from([U64, U64 - 1, U64 - 0x10, 1 << 63])
    value = draw(st.lists(near | high, min_size=n, max_size=n))
    rows = [RawSym(0, 0, 0, 0, 0, 0)]  # the null entry, as every .symtab starts
    for i in range(n):
        name = draw(
            st.sampled_from(starts)
            | st.sampled_from([0, nuls[i % len(nuls)], strsize, strsize + 7, 0xFFFFFFFF])
        )
        bind = draw(st.sampled_from([0, 1, 2, 10]) | st.integers(0, 15))
        stype = draw(st.sampled_from([2, 2, 2, 0, 1, 3]) | st.integers(0, 15))
        shndx = draw(st.sampled_from([1, 1, 1, 2, 3, 0, 0xFFF1]) | st.integers(0, 0xFFFF))
        size = draw(
            st.sampled_from([0, 0, 0x10, 0x40, 0x80, 0x100])
            | st.integers(0, 0x300)
            | st.sampled_from([U64, 1 << 63])
        )
        other = draw(st.integers(0, 255))
        rows.append(RawSym(name, (bind << 4) | stype, other, shndx, value[i], size))
    return _with_raw_symtab(base, rows, little=little), rows


def _offsets(rows: list[RawSym]) -> list[int]:
    """Every boundary ±1 (inside, at the start, at the end, just past), before, between and after."""
    out = {0, 1, 0x50, 0x333, 0x600, U64, U64 - 1}
    for r in rows:
        for edge in (r.value, (r.value + r.size) & U64, r.value + r.size):
            out.update(o for o in (edge - 1, edge, edge + 1) if 0 <= o <= U64)
    return sorted(out)


def _tables(data: bytes) -> tuple[ElfImage, SymbolTable, ElfImage, ScalarSymbols]:
    """The same bytes opened twice: once answered by numpy, once by the small-table path."""
    np_elf = ElfImage("k.o", data)
    table = np_elf.symbols
    assert table is not None
    sc_elf = ElfImage("k.o", data)
    scalar = sc_elf.lookup_table()
    assert type(scalar) is ScalarSymbols
    return np_elf, table, sc_elf, scalar


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raw_tables())
def test_scalar_lookups_equal_the_numpy_table(case: tuple[bytes, list[RawSym]]) -> None:
    data, rows = case
    np_elf, table, sc_elf, scalar = _tables(data)
    assert len(scalar) == len(table)
    for off in _offsets(rows):
        assert sc_elf.lookup(off) == table.lookup(off), hex(off)
    values = sorted({r.value for r in rows} | {0x10, U64})
    for v in values:
        assert scalar.lookup_exact(v) == table.lookup_exact(v), hex(v)
    assert sc_elf.gaps == np_elf.gaps
    # the numpy table is still there when asked for after the small path was used
    later = sc_elf.symbols
    assert later is not None and later.lookup(0x50) == table.lookup(0x50)
    assert sc_elf.lookup_table() is later


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raw_tables(), st.lists(st.integers(-5, U64 + 5), min_size=1, max_size=10))
def test_random_offsets_and_exact_values_agree(case: tuple[bytes, list[RawSym]], offsets: list[int]) -> None:
    """Offsets anywhere (the out-of-range ones take the numpy table's own path in both)."""
    data, _rows = case
    _np_elf, table, _sc_elf, scalar = _tables(data)
    for off in offsets:
        try:
            want: SymbolMatch | str = table.lookup(off)
        except OverflowError as exc:
            want = f"OverflowError {exc}"
        try:
            got: SymbolMatch | str = scalar.lookup(off)
        except OverflowError as exc:
            got = f"OverflowError {exc}"
        assert got == want
        assert scalar.lookup_exact(off) == table.lookup_exact(off)


# ---------------------------------------------------------------- hand-written spec cases

SRC = Source("k.o")


def _elf(symbols: list[SymSpec], sections: list[SectionSpec] | None = None) -> ElfImage:
    elf = ElfImage("k.o", build_elf(sections or [text_section(0x400)], symbols))
    assert type(elf.lookup_table()) is ScalarSymbols
    return elf


def _sym(name: str, value: int, size: int, sym_index: int, **kw: object) -> FuncSymbol:
    fields: dict[str, object] = {
        "name": name,
        "value": value,
        "size": size,
        "bind": "GLOBAL",
        "local": False,
        "visibility": "DEFAULT",
        "section_index": 1,
        "section": ".text",
        "sym_index": sym_index,
        "section_model_offset": value,
        "src": SRC,
    }
    fields.update(kw)
    return FuncSymbol(**fields)  # type: ignore[arg-type]


def test_inside_a_sized_symbol_first_and_last_byte() -> None:
    """§4.7 step 3: st_value <= off < st_value + st_size; the end itself is outside."""
    elf = _elf([SymSpec("alpha", 0x100, 0x80), SymSpec("beta", 0x200, 0x80)])
    alpha = _sym("alpha", 0x100, 0x80, 1)
    assert elf.lookup(0x17F) == SymbolMatch(
        0x17F, alpha, TIER_SYMTAB, "inside alpha [0x100, 0x180) at +0x7f", 0x7F, 1, True, "high", SRC
    )
    assert elf.lookup(0x100).offset_in_symbol == 0
    assert elf.lookup(0x180) == SymbolMatch(
        0x180,
        None,
        TIER_UNRESOLVED,
        "0x180 is in a gap between alpha (ends 0x180) and the next function at 0x200",
        None,
        0,
        None,
        "none",
        SRC,
    )


def test_miss_before_the_first_and_after_the_last() -> None:
    elf = _elf([SymSpec("alpha", 0x100, 0x80), SymSpec("beta", 0x200, 0x80)])
    before = elf.lookup(0xFF)
    assert (before.tier, before.reason) == (
        TIER_UNRESOLVED,
        "0xff is before the first function symbol (starts at 0x100)",
    )
    after = elf.lookup(0x280)
    assert after.reason == "0x280 is after the last function symbol beta (ends 0x280)"


def test_overlap_chooses_the_smallest_then_non_local() -> None:
    """§4.7 step 3: among overlapping symbols the smallest wins, then non-LOCAL (aliases, local copies)."""
    elf = _elf(
        [
            SymSpec("big", 0x100, 0x200, "GLOBAL"),
            SymSpec("small_local", 0x100, 0x80, "LOCAL"),
            SymSpec("small_weak", 0x100, 0x80, "WEAK"),
        ]
    )
    # build_elf writes locals first: small_local=1, big=2, small_weak=3
    weak = _sym("small_weak", 0x100, 0x80, 3, bind="WEAK")
    assert elf.lookup(0x120) == SymbolMatch(
        0x120,
        weak,
        TIER_SYMTAB,
        "inside small_weak [0x100, 0x180) at +0x20; 3 sized FUNC symbols contain it, chose the smallest, "
        "then non-LOCAL (bind WEAK, size 0x80)",
        0x20,
        3,
        True,
        "medium",
        SRC,
    )
    outer = elf.lookup(0x200)
    assert (outer.symbol and outer.symbol.name, outer.containing, outer.confidence) == ("big", 1, "high")


def test_zero_size_symbol_is_the_nearest_preceding_fallback() -> None:
    """ecosystem.md §3.4 tier 2: a zero-size FUNC before the PC with no sized symbol ending between."""
    elf = _elf([SymSpec("sized", 0x100, 0x100), SymSpec("label", 0x150, 0), SymSpec("tail", 0x300, 0)])
    tail = _sym("tail", 0x300, 0, 3)
    assert elf.lookup(0x310) == SymbolMatch(
        0x310,
        tail,
        TIER_NEAREST,
        "no sized FUNC symbol contains 0x310; nearest preceding zero-size FUNC symbol tail at 0x300 (+0x10)",
        0x10,
        0,
        True,
        "low",
        SRC,
    )
    # the label inside "sized" is not used past the end of "sized"
    assert elf.lookup(0x250).reason == "0x250 is after the last function symbol sized (ends 0x200)"
    assert elf.lookup(0x160).symbol == _sym("sized", 0x100, 0x100, 1)


def test_address_models_disagree_section_with_nonzero_sh_addr() -> None:
    """§4.6: .text at sh_addr 0x1000 but first in the image: st_value says 0x1000, the file layout 0."""
    elf = _elf([SymSpec("f", 0x1000, 0x100)], [text_section(0x200, addr=0x1000)])
    f = _sym("f", 0x1000, 0x100, 1, section_model_offset=0)
    assert elf.lookup(0x1010) == SymbolMatch(
        0x1010,
        f,
        TIER_SYMTAB,
        "inside f [0x1000, 0x1100) at +0x10; §4.6 address models disagree for section .text: st_value puts "
        "f at image offset 0x1000, the file layout at 0x0; by file layout 0x1010 is in no function",
        0x10,
        1,
        False,
        "low",
        SRC,
    )


def test_address_models_disagree_but_name_the_same_function() -> None:
    """A small delta: both models still put the offset inside the same function → medium."""
    elf = _elf([SymSpec("f", 0x40, 0x100)], [text_section(0x200, addr=0x40)])
    m = elf.lookup(0x50)
    assert m.confidence == "medium" and m.address_model_agrees is False
    assert m.reason.endswith("the file layout at 0x0; both models still name the same function")


def test_exact_rule_last_one_wins_and_counts_duplicates() -> None:
    """§1.6.2 step 4: st_value == value among sized, named FUNC symbols; the last in .symtab order wins."""
    elf = _elf(
        [
            SymSpec("first", 0x100, 0x40, "GLOBAL"),
            SymSpec("second", 0x100, 0x20, "WEAK"),
            SymSpec("zero", 0x200, 0),
            SymSpec("obj", 0x300, 8, "GLOBAL", "OBJECT"),
        ]
    )
    table = elf.lookup_table()
    assert table is not None
    hit = table.lookup_exact(0x100)
    assert hit is not None
    assert (hit.symbol.name, hit.symbol.sym_index, hit.runtime_bind, hit.duplicates) == (
        "second",
        2,
        "WEAK",
        1,
    )
    assert table.lookup_exact(0x200) is None and table.lookup_exact(0x300) is None


def test_stripped_bad_entsize_and_missing_strtab_record_the_same_gaps() -> None:
    """Row 68: no usable table → unresolved with the Gap's text as the reason; one Gap, as before."""
    stripped = ElfImage("s.o", build_elf([text_section(0x100)], [SymSpec("f", 0, 0x10)], strip=True))
    m = stripped.lookup(0x4)
    assert (m.symbol, m.tier, m.confidence) == (None, TIER_UNRESOLVED, "none")
    assert m.reason == "no .symtab: the ELF is stripped, PCs in it cannot be symbolised (§4.2)"
    stripped.lookup(0x8)
    assert stripped.symbols is None
    assert [g.kind for g in stripped.gaps] == ["no_symtab"]

    data = bytearray(build_elf([text_section(0x100)], [SymSpec("f", 0, 0x10)]))
    symtab = ElfImage("b.o", bytes(data)).section_by_name(".symtab")
    assert symtab is not None
    shoff = struct.unpack_from("<Q", data, 40)[0]
    struct.pack_into("<Q", data, shoff + 64 * symtab.index + 56, 16)  # sh_entsize 16
    bad = ElfImage("b.o", bytes(data))
    assert bad.lookup(0x4).reason == ".symtab sh_entsize 16, expected 24 for ELF64"
    assert bad.gaps == [Gap("bad_symtab", ".symtab sh_entsize 16, expected 24 for ELF64", symtab.src)]


def test_no_sized_symbols() -> None:
    elf = _elf([SymSpec("obj", 0x10, 8, "GLOBAL", "OBJECT")])
    assert elf.lookup(0x10).reason == "the symbol table has no sized, named FUNC symbols"


def test_size_wrapping_past_2_64_is_clamped() -> None:
    """st_value + st_size beyond 2**64 covers up to the top of the address space, not a wrapped range."""
    elf = _elf([SymSpec("low", 0x10, 0x10), SymSpec("wrap", 0x100, U64)])
    m = elf.lookup(0x200)
    assert (m.symbol and m.symbol.name, m.containing, m.confidence) == ("wrap", 1, "high")
    assert m.reason == f"inside wrap [0x100, 0x{0x100 + U64:x}) at +0x100"
    assert elf.lookup(0x18).symbol == _sym("low", 0x10, 0x10, 1)


def test_the_threshold_is_the_raw_entry_count() -> None:
    """SCALAR_MAX_SYMBOLS raw entries (the null entry counts) still take the small path, one more does not."""
    text = [text_section(0x10 * SCALAR_MAX_SYMBOLS)]
    at = ElfImage(
        "k.o", build_elf(text, [SymSpec(f"f{i}", 0x10 * i, 8) for i in range(SCALAR_MAX_SYMBOLS - 1)])
    )
    assert at.symbol_count() == SCALAR_MAX_SYMBOLS and type(at.lookup_table()) is ScalarSymbols
    over = ElfImage(
        "k.o", build_elf(text, [SymSpec(f"f{i}", 0x10 * i, 8) for i in range(SCALAR_MAX_SYMBOLS)])
    )
    assert type(over.lookup_table()) is SymbolTable
    assert at.lookup(0x25) == over.lookup(0x25)


@pytest.mark.parametrize("little", [True, False])
def test_st_value_by_index_reads_the_raw_entry(little: bool) -> None:
    """ascend_meta's relocations: st_value of raw entry i, in the file's byte order, null entry included."""
    elf = ElfImage(
        "k.o",
        build_elf(
            [text_section(0x400)], [SymSpec("a", 0x120, 4), SymSpec("b", 0x1234_5678_9ABC, 0)], little=little
        ),
    )
    assert elf.symbol_count() == 3
    assert [elf.st_value(i) for i in range(3)] == [0, 0x120, 0x1234_5678_9ABC]


def test_alloc_flag_decides_whether_a_section_has_an_address_model() -> None:
    """Symbols in a non-SHF_ALLOC section get no file-layout model (None), so no disagreement."""
    note = SectionSpec(".note.k", b"n" * 0x40, flags=0)
    elf = _elf([SymSpec("n", 0x8, 0x10, section=".note.k")], [text_section(0x100), note])
    m = elf.lookup(0x9)
    assert m.symbol == _sym("n", 0x8, 0x10, 1, section_index=2, section=".note.k", section_model_offset=None)
    assert (m.address_model_agrees, m.confidence) == (None, "high")
