"""Kernel ELF reader: symbols, range/exact lookups, extent, address models (artifacts.md §4, rows 66–71)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers.common import ParseError
from skdbg.parsers.elf import (
    TIER_CODES,
    TIER_NEAREST,
    TIER_SYMTAB,
    TIER_UNRESOLVED,
    ElfImage,
    open_elf,
)
from skdbg.scenebuilder.elf import (
    ET_REL,
    SHF_ALLOC,
    SectionSpec,
    SymSpec,
    build_elf,
    data_section,
    text_section,
    write_elf,
)


def _two_funcs(tmp_path: Path) -> Path:
    syms = [SymSpec("alpha", 0x100, 0x80), SymSpec("beta", 0x200, 0x80)]
    return write_elf(tmp_path / "k.o", sections=[text_section(0x400)], symbols=syms)


def test_row66_pc_inside_first_byte_last_byte_end_gap_and_before(tmp_path: Path) -> None:
    """Row 66: inside, at the first byte, at end−1, at end (not inside), in a gap, before the first symbol."""
    elf = open_elf(_two_funcs(tmp_path))
    table = elf.symbols
    assert table is not None
    inside = table.lookup(0x140)
    assert (inside.tier, inside.symbol and inside.symbol.name, inside.offset_in_symbol) == (
        TIER_SYMTAB,
        "alpha",
        0x40,
    )
    assert inside.confidence == "high" and inside.address_model_agrees is True
    first = table.lookup(0x100)
    assert first.symbol is not None and first.symbol.name == "alpha" and first.offset_in_symbol == 0
    last = table.lookup(0x17F)
    assert last.symbol is not None and last.symbol.name == "alpha" and last.offset_in_symbol == 0x7F
    at_end = table.lookup(0x180)
    assert at_end.tier == TIER_UNRESOLVED and at_end.symbol is None
    assert at_end.reason == "0x180 is in a gap between alpha (ends 0x180) and the next function at 0x200"
    gap = table.lookup(0x1C0)
    assert gap.tier == TIER_UNRESOLVED and "gap between alpha" in gap.reason
    before = table.lookup(0x10)
    assert before.tier == TIER_UNRESOLVED
    assert before.reason == "0x10 is before the first function symbol (starts at 0x100)"
    after = table.lookup(0x300)
    assert after.reason == "0x300 is after the last function symbol beta (ends 0x280)"
    batch = table.lookup_many(np.array([0x140, 0x100, 0x17F, 0x180, 0x1C0, 0x10, 0x27F], dtype=np.uint64))
    assert list(table.names(batch.position)) == ["alpha", "alpha", "alpha", None, None, None, "beta"]
    assert [TIER_CODES[int(c)] for c in batch.tier_code] == ["symtab"] * 3 + ["unresolved"] * 3 + ["symtab"]


def test_row67_overlap_prefers_smallest_then_non_local(tmp_path: Path) -> None:
    """Row 67: an alias and a local overlap a big function — smallest wins, then non-LOCAL."""
    syms = [
        SymSpec("big", 0x100, 0x200, "GLOBAL"),
        SymSpec("small_local", 0x100, 0x80, "LOCAL"),
        SymSpec("small_alias", 0x100, 0x80, "WEAK"),
    ]
    elf = open_elf(write_elf(tmp_path / "o.o", sections=[text_section(0x400)], symbols=syms))
    table = elf.symbols
    assert table is not None
    m = table.lookup(0x120)
    assert m.symbol is not None and m.symbol.name == "small_alias" and m.symbol.bind == "WEAK"
    assert m.containing == 3 and m.confidence == "medium"
    assert "3 sized FUNC symbols contain it" in m.reason
    outer = table.lookup(0x200)
    assert outer.symbol is not None and outer.symbol.name == "big" and outer.containing == 1


def test_row67_zero_size_symbol_is_a_graded_fallback(tmp_path: Path) -> None:
    """Row 67: zero-size symbols only as nearest-preceding fallback, graded lower."""
    syms = [
        SymSpec("sized", 0x100, 0x100),
        SymSpec("label_in_sized", 0x150, 0),
        SymSpec("tail_label", 0x300, 0),
    ]
    elf = open_elf(write_elf(tmp_path / "z.o", sections=[text_section(0x400)], symbols=syms))
    table = elf.symbols
    assert table is not None
    assert table.lookup(0x160).symbol is not None
    assert table.lookup(0x160).symbol.name == "sized"  # type: ignore[union-attr]
    tail = table.lookup(0x310)
    assert tail.tier == TIER_NEAREST and tail.symbol is not None and tail.symbol.name == "tail_label"
    assert tail.confidence == "low" and tail.offset_in_symbol == 0x10
    # between the end of "sized" and tail_label: the label inside "sized" must not be used
    between = table.lookup(0x250)
    assert between.tier == TIER_UNRESOLVED


def test_row67_exact_rule_mirrors_the_handler(tmp_path: Path) -> None:
    """§1.6.2: exact st_value match among sized named FUNC symbols; the last one in .symtab order wins."""
    syms = [
        SymSpec("first", 0x100, 0x40, "GLOBAL"),
        SymSpec("second", 0x100, 0x20, "WEAK"),
        SymSpec("zero", 0x200, 0, "GLOBAL"),
        SymSpec("obj", 0x300, 8, "GLOBAL", "OBJECT"),
    ]
    elf = open_elf(write_elf(tmp_path / "x.o", sections=[text_section(0x400)], symbols=syms))
    table = elf.symbols
    assert table is not None
    hit = table.lookup_exact(0x100)
    assert (
        hit is not None and hit.symbol.name == "second" and hit.runtime_bind == "WEAK" and hit.duplicates == 1
    )
    assert table.lookup_exact(0x104) is None
    assert table.lookup_exact(0x200) is None  # zero-size is skipped by the handler
    assert table.lookup_exact(0x300) is None  # not a FUNC


def test_row68_stripped_elf_is_unresolved_with_reason(tmp_path: Path) -> None:
    """Row 68: no .symtab → unresolved, the reason says the ELF is stripped."""
    p = write_elf(
        tmp_path / "s.o", sections=[text_section(0x100)], symbols=[SymSpec("f", 0, 0x10)], strip=True
    )
    elf = open_elf(p)
    assert elf.symbols is None
    m = elf.lookup(0x4)
    assert m.tier == TIER_UNRESOLVED and m.confidence == "none"
    assert "stripped" in m.reason
    assert [g.kind for g in elf.gaps] == ["no_symtab"]
    assert elf.extent is not None and elf.extent.size == 0x100


def test_row69_32bit_elf_rejected(tmp_path: Path) -> None:
    """Row 69: ELFCLASS32 is rejected like the runtime does."""
    p = write_elf(tmp_path / "e32.o", symbols=[SymSpec("f", 0, 16)], elfclass=32, machine=3)
    with pytest.raises(ParseError) as ei:
        open_elf(p)
    msg = str(ei.value)
    assert msg.startswith(str(p)) and "ELFCLASS32" in msg and "Elf can no be 32bit." in msg


@pytest.mark.parametrize(
    ("content", "got"),
    [
        (b"", "empty file"),
        (b"not an elf at all, just text\n", None),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 20, "27 bytes"),
        (b"\x7fELF\x07\x01\x01" + b"\0" * 60, "EI_CLASS=7"),
    ],
)
def test_row69_non_elf_and_truncated_bytes_rejected(tmp_path: Path, content: bytes, got: str | None) -> None:
    """Row 69: non-ELF bytes, a truncated header, an unknown class → ParseError naming the file."""
    p = tmp_path / "bad.o"
    p.write_bytes(content)
    with pytest.raises(ParseError) as ei:
        open_elf(p)
    assert ei.value.file == str(p)
    if got is not None:
        assert got in str(ei.value)


def test_row69_truncated_section_table(tmp_path: Path) -> None:
    data = build_elf([text_section(0x40)], [SymSpec("f", 0, 0x10)])
    p = tmp_path / "cut.o"
    p.write_bytes(data[: len(data) - 10])
    with pytest.raises(ParseError, match="truncated"):
        open_elf(p)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="does not exist"):
        open_elf(tmp_path / "absent.o")
    with pytest.raises(ParseError, match="a directory"):
        open_elf(tmp_path)


def test_e_machine_is_never_checked(tmp_path: Path) -> None:
    """triage.md §3.3: device ELFs carry machine numbers pyelftools does not know."""
    p = write_elf(
        tmp_path / "dev.o", sections=[text_section(0x40)], symbols=[SymSpec("k", 0, 0x40)], machine=0x1234
    )
    elf = open_elf(p)
    assert elf.e_machine == 0x1234 or str(elf.e_machine) == str(0x1234)
    assert elf.lookup(0x10).symbol is not None


def test_big_endian_elf(tmp_path: Path) -> None:
    p = write_elf(
        tmp_path / "be.o", sections=[text_section(0x100)], symbols=[SymSpec("k", 0x10, 0x20)], little=False
    )
    m = open_elf(p).lookup(0x18)
    assert m.symbol is not None and m.symbol.name == "k" and m.offset_in_symbol == 8


def test_extent_follows_the_runtime_rule(tmp_path: Path) -> None:
    """§4.2: text_offset = sh_offset of the first non-empty SHF_ALLOC section; end = end of the last one."""
    empty_alloc = SectionSpec(".empty", b"", flags=SHF_ALLOC)
    note = SectionSpec(".comment", b"x" * 7)
    p = write_elf(
        tmp_path / "e.o", sections=[note, empty_alloc, text_section(0x300), data_section(b"\0" * 0x10)]
    )
    elf = open_elf(p)
    text = elf.section_by_name(".text")
    data = elf.section_by_name(".data")
    assert elf.extent is not None and text is not None and data is not None
    assert elf.extent.text_offset == text.offset
    assert elf.extent.size == data.offset + 0x10 - text.offset
    assert (elf.extent.first_section, elf.extent.last_section) == (".text", ".data")


def test_row71_nonzero_sh_addr_models_disagree(tmp_path: Path) -> None:
    """Row 71: first SHF_ALLOC section with non-zero sh_addr → both formulas computed, disagreement graded."""
    p = write_elf(
        tmp_path / "a.o", sections=[text_section(0x200, addr=0x1000)], symbols=[SymSpec("f", 0x1000, 0x100)]
    )
    table = open_elf(p).symbols
    assert table is not None and table.layout_consistent is False
    m = table.lookup(0x1010)
    assert m.symbol is not None and m.symbol.name == "f"
    assert m.symbol.section_model_offset == 0 and m.address_model_agrees is False
    assert m.confidence == "low"
    assert "§4.6 address models disagree for section .text" in m.reason
    assert "by file layout 0x1010 is in no function" in m.reason


def test_row71_text_not_first(tmp_path: Path) -> None:
    """Row 71: .text after another SHF_ALLOC section, sh_addr 0 → formulas disagree; matching addr → agree."""
    rodata = SectionSpec(".rodata", b"r" * 0x100, flags=SHF_ALLOC, align=16)
    syms = [SymSpec("g", 0x0, 0x80), SymSpec("h", 0x80, 0x80)]
    elf = open_elf(
        write_elf(tmp_path / "r.o", sections=[rodata, text_section(0x100)], symbols=syms, e_type=ET_REL)
    )
    assert elf.extent is not None and elf.extent.first_section == ".rodata"
    table = elf.symbols
    assert table is not None
    m = table.lookup(0x90)
    assert m.symbol is not None and m.symbol.name == "h" and m.symbol.section_model_offset == 0x180
    assert m.address_model_agrees is False and m.confidence == "low"
    assert "by file layout 0x90 is in no function" in m.reason
    # .text placed at the address matching its file position: both models agree.
    good = open_elf(
        write_elf(
            tmp_path / "ok.o",
            sections=[rodata, text_section(0x100, addr=0x100)],
            symbols=[SymSpec("g", 0x100, 0x80)],
        )
    ).symbols
    assert good is not None and good.layout_consistent
    ok = good.lookup(0x110)
    assert ok.address_model_agrees is True and ok.confidence == "high"


def test_frames(tmp_path: Path) -> None:
    elf = open_elf(_two_funcs(tmp_path))
    assert elf.symbols is not None
    frame = elf.symbols.to_frame()
    assert list(frame.columns) == [
        "file", "line", "name", "value", "size", "end", "bind", "local", "section", "sym_index",
        "section_model_offset",
    ]  # fmt: skip
    assert frame["name"].tolist() == ["alpha", "beta"] and frame["end"].tolist() == [0x180, 0x280]
    assert [s.name for s in elf.sections] == ["", ".text", ".symtab", ".strtab", ".shstrtab"]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils readelf not installed")
def test_writer_output_is_accepted_by_readelf(tmp_path: Path) -> None:
    """The scene builder writes ELFs binutils reads without complaint (ecosystem check of the writer)."""
    p = write_elf(
        tmp_path / "w.o",
        sections=[text_section(0x100), data_section()],
        symbols=[SymSpec("loc", 0x80, 0x10, "LOCAL"), SymSpec("glob", 0, 0x80)],
    )
    out = subprocess.run(["readelf", "-a", "-W", str(p)], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stderr == ""
    assert (
        "FUNC    GLOBAL DEFAULT    1 glob" in out.stdout and "FUNC    LOCAL  DEFAULT    1 loc" in out.stdout
    )


# ------------------------------------------------------------------ property tests

VALID = build_elf([text_section(0x100)], [SymSpec("f", 0, 0x40), SymSpec("g", 0x40, 0x40, "LOCAL")])


def _exercise(data: bytes) -> None:
    try:
        elf = ElfImage("fuzz.o", data)
    except ParseError:
        return
    elf.lookup(0x10)
    table = elf.symbols
    if table is not None:
        table.lookup_many(np.arange(0, 0x200, 7, dtype=np.uint64))
        table.lookup_exact(0x40)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=512))
def test_arbitrary_bytes_only_raise_parse_error(data: bytes) -> None:
    _exercise(data)
    _exercise(b"\x7fELF\x02\x01\x01\x00" + data)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=12))
def test_corrupted_valid_elf_only_raises_parse_error(flips: list[tuple[int, int]]) -> None:
    buf = bytearray(VALID)
    for at, value in flips:
        buf[at] = value
    _exercise(bytes(buf))


SYMBOLS = st.lists(
    st.tuples(st.integers(0, 0x400), st.integers(0, 0x80), st.sampled_from(["LOCAL", "GLOBAL", "WEAK"])),
    min_size=0,
    max_size=14,
)


def _brute(symbols: list[tuple[int, int, str]], off: int) -> tuple[str | None, str]:
    """Reference: smallest containing sized symbol, then non-LOCAL, then lowest .symtab index."""
    ordered = [s for s in symbols if s[2] == "LOCAL"] + [s for s in symbols if s[2] != "LOCAL"]
    named = [(f"s{symbols.index(s)}", s, i) for i, s in enumerate(ordered)]
    inside = [
        (size, bind == "LOCAL", i, name) for name, (v, size, bind), i in named if size and v <= off < v + size
    ]
    if inside:
        return min(inside)[3], TIER_SYMTAB
    last_end = max((v + size for _n, (v, size, _b), _i in named if size and v + size <= off), default=0)
    zeros = [(v, -i, name) for name, (v, size, _b), i in named if size == 0 and v <= off and v >= last_end]
    if zeros:
        return max(zeros)[2], TIER_NEAREST
    return None, TIER_UNRESOLVED


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(SYMBOLS, st.lists(st.integers(0, 0x500), min_size=1, max_size=20))
def test_lookup_agrees_with_brute_force(symbols: list[tuple[int, int, str]], offsets: list[int]) -> None:
    # unique (value, size) so that ties between identical candidates cannot be ambiguous by name
    uniq = list(dict.fromkeys(symbols))
    specs = [SymSpec(f"s{i}", v, size, bind) for i, (v, size, bind) in enumerate(uniq)]
    elf = ElfImage("prop.o", build_elf([text_section(0x500)], specs))
    table = elf.symbols
    assert table is not None
    batch = table.lookup_many(np.array(offsets, dtype=np.uint64))
    got_names = table.names(batch.position)
    for k, off in enumerate(offsets):
        want_name, want_tier = _brute(uniq, off)
        got_tier = TIER_CODES[int(batch.tier_code[k])]
        assert (got_names[k], got_tier) == (want_name, want_tier), (off, uniq)
        single = table.lookup(off)
        assert (single.symbol.name if single.symbol else None, single.tier) == (want_name, want_tier)
    # the batch path (skdbg symbolize) gives the very same matches, reasons and grades
    assert table.match_many(offsets) == [table.lookup(o) for o in offsets]


def test_match_many_equals_lookup_when_address_models_disagree(tmp_path: Path) -> None:
    """Row 71 (non-zero sh_addr): the batch path falls back to the full two-model explanation."""
    p = write_elf(
        tmp_path / "k.o",
        sections=[text_section(0x200, addr=0x1000)],
        symbols=[SymSpec("a", 0x1000, 0x40), SymSpec("b", 0x1040, 0x40), SymSpec("z", 0x10C0, 0)],
    )
    elf = open_elf(p)
    offsets = [0x0, 0x20, 0x1000, 0x1020, 0x1050, 0x1090, 0x10C8, 0x5000]
    assert elf.match_many(offsets) == [elf.lookup(o) for o in offsets]
