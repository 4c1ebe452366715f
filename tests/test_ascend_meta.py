"""``.ascend.meta`` TLVs and the SK bind map (artifacts.md §4.3, §4.5, row 70)."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.ascend_meta import (
    BINDMAP_ENTRY_CONFLICT,
    parse_ascend_meta,
    walk_tlv,
)
from skdbg.parsers.common import ParseError
from skdbg.parsers.elf import ElfImage, open_elf
from skdbg.scenebuilder.elf import (
    ET_REL,
    ChildKernel,
    RelaSpec,
    SymSpec,
    build_elf,
    child_elf,
    kernel_type_tlv,
    meta_section,
    padding_heads,
    sk_bind_record,
    text_section,
    tlv,
    write_elf,
)

FUNCS = [
    SymSpec("glob", 0x0, 0x100),
    SymSpec("_Z7glob_skILj0EEvv", 0x100, 0x80, "LOCAL"),
    SymSpec("_Z7glob_skILj1EEvv", 0x180, 0x80, "LOCAL"),
    SymSpec("other", 0x200, 0x40),
]


def _write(tmp_path: Path, records: list[bytes], **kw: object) -> Path:
    secs = [text_section(0x300), meta_section(records)]
    return write_elf(tmp_path / "m.o", sections=secs, symbols=FUNCS, **kw)


def test_row70_type5_record_56_bytes(tmp_path: Path) -> None:
    """Row 70: one type-5 record → cap, globalFunc, sknlFunc[4] (unused splits repeat split 0), names."""
    rec = sk_bind_record(0b0101, 0x0, [0x100, 0x180])
    assert len(rec) == 56
    res = parse_ascend_meta(_write(tmp_path, [rec]))
    assert res.gaps == [] and len(res.records) == 1 and res.records[0].type_name == "SK_INFO"
    (b,) = res.bind_records
    assert (b.cap, b.global_func, b.sknl_funcs, b.reserved) == (5, 0, (0x100, 0x180, 0x100, 0x100), 0)
    assert b.global_name == "glob"
    assert b.sknl_names == (
        "_Z7glob_skILj0EEvv",
        "_Z7glob_skILj1EEvv",
        "_Z7glob_skILj0EEvv",
        "_Z7glob_skILj0EEvv",
    )
    refs = res.variants()
    assert refs[0x100].global_name == "glob" and refs[0x100].splits == (0, 2, 3)
    assert refs[0x180].splits == (1,)


def test_row70_zero_padding_heads(tmp_path: Path) -> None:
    """Row 70: zero heads between and around records are 4-byte padding."""
    recs = [
        padding_heads(2),
        tlv(0, b"v1\0\0"),
        padding_heads(1),
        sk_bind_record(0, 0, [0x100]),
        padding_heads(3),
    ]
    res = parse_ascend_meta(_write(tmp_path, recs))
    # the final 4 zero bytes are never read as a head: the walk needs more than 4 bytes left (elf.cc)
    assert res.padding_heads == 5
    assert [(r.type, r.offset) for r in res.records] == [(0, 8), (5, 20)]
    assert len(res.bind_records) == 1 and res.gaps == []
    assert res.to_frame()["type_name"].tolist() == ["BIN_VERSION", "SK_INFO"]


def test_row70_truncated_trailing_record_is_a_gap(tmp_path: Path) -> None:
    """Row 70: a record overrunning the section ends the walk (as in the runtime), recorded as a Gap."""
    good = sk_bind_record(0, 0, [0x100, 0x180])
    cut = sk_bind_record(0, 0x200, [0x100])[:30]  # head claims 52 bytes, 26 remain
    res = parse_ascend_meta(_write(tmp_path, [good, cut]))
    assert len(res.bind_records) == 1
    assert [g.kind for g in res.gaps] == ["truncated_tlv"]
    assert "declares 52 bytes but only 26" in res.gaps[0].detail
    assert res.gaps[0].src is not None and res.gaps[0].src.json_path == ".ascend.meta@0x38"


def test_row70_conflicting_duplicate_global(tmp_path: Path) -> None:
    """Row 70: shared globalFunc with different values → BINDMAP_ENTRY_CONFLICT; equal ones merge."""
    a = sk_bind_record(0, 0x0, [0x100, 0x180])
    b = sk_bind_record(0, 0x0, [0x180, 0x100])
    same = sk_bind_record(0, 0x200, [0x100])
    res = parse_ascend_meta(_write(tmp_path, [a, b, same, same]))
    entry = res.bind_map[0x0]
    assert entry.conflict and entry.fail_reason == BINDMAP_ENTRY_CONFLICT and entry.records == (0, 1)
    other = res.bind_map[0x200]
    assert not other.conflict and other.records == (2, 3) and other.global_name == "other"
    assert res.variant_of(0x180) is not None and res.variant_of(0x180).conflict  # type: ignore[union-attr]


def test_row70_cap_difference_is_a_conflict_too(tmp_path: Path) -> None:
    res = parse_ascend_meta(_write(tmp_path, [sk_bind_record(1, 0, [0x100]), sk_bind_record(2, 0, [0x100])]))
    assert res.bind_map[0].conflict


def test_row70_values_from_relocations(tmp_path: Path) -> None:
    """Row 70: pointer fields 0 in a relocatable object, values in .rela.ascend.meta (S + A)."""
    rec = sk_bind_record(0, 0, [0, 0, 0, 0])
    relas = [
        RelaSpec(16, "glob"),
        RelaSpec(24, "_Z7glob_skILj0EEvv"),
        RelaSpec(32, "_Z7glob_skILj1EEvv"),
        RelaSpec(40, "_Z7glob_skILj0EEvv"),
        RelaSpec(48, "glob", addend=0x200),
    ]
    p = _write(tmp_path, [rec], relocations={".ascend.meta": relas}, e_type=ET_REL)
    res = parse_ascend_meta(p)
    (b,) = res.bind_records
    assert b.global_func == 0 and b.sknl_funcs == (0x100, 0x180, 0x100, 0x200)
    assert b.relocated_fields == ("globalFunc", "sknlFunc[0]", "sknlFunc[1]", "sknlFunc[2]", "sknlFunc[3]")
    assert b.sknl_names == ("_Z7glob_skILj0EEvv", "_Z7glob_skILj1EEvv", "_Z7glob_skILj0EEvv", "other")


def test_row70_rel_without_addend(tmp_path: Path) -> None:
    rec = sk_bind_record(0, 0, [0, 0, 0, 0])
    relas = [RelaSpec(16, "other"), RelaSpec(24, "_Z7glob_skILj1EEvv")]
    p = _write(tmp_path, [rec], relocations={".ascend.meta": relas}, rel_without_addend=True, e_type=ET_REL)
    (b,) = parse_ascend_meta(p).bind_records
    assert b.global_func == 0x200 and b.global_name == "other"
    assert b.sknl_funcs == (0x180, 0, 0, 0) and b.relocated_fields == ("globalFunc", "sknlFunc[0]")


def test_kernel_type_tlv_per_function(tmp_path: Path) -> None:
    secs = [
        text_section(0x300),
        meta_section([kernel_type_tlv(3), tlv(2, b"\1\0\0\0")], name=".ascend.meta.glob"),
        meta_section([padding_heads(1), kernel_type_tlv(4)], name=".ascend.meta.glob_mix_aic"),
    ]
    res = parse_ascend_meta(write_elf(tmp_path / "k.o", sections=secs, symbols=FUNCS))
    assert [(k.kernel, k.func_type, k.func_type_name) for k in res.kernel_types] == [
        ("glob", 3, "K_TYPE_AIV"),
        ("glob_mix_aic", 4, "K_TYPE_MIX_AIC_MAIN"),
    ]
    assert [g.kind for g in res.gaps] == ["no_ascend_meta"]


def test_child_elf_from_scene_builder(tmp_path: Path) -> None:
    data, layout = child_elf(ChildKernel("add_custom", 0x12C0000000, n_variants=2, cap=8))
    p = tmp_path / "c.o"
    p.write_bytes(data)
    res = parse_ascend_meta(open_elf(p))
    (b,) = res.bind_records
    assert b.global_name == "add_custom"
    assert [n for n, _o, _s in layout.variants] == list(b.sknl_names[:2])
    assert b.sknl_names[1] == "_Z13add_custom_skILj1EEvv"


def test_wrong_sk_record_length_is_skipped(tmp_path: Path) -> None:
    res = parse_ascend_meta(_write(tmp_path, [tlv(5, b"\0" * 20)]))
    assert res.bind_records == [] and [g.kind for g in res.gaps] == ["bad_sk_record"]


def test_big_endian_meta(tmp_path: Path) -> None:
    rec = sk_bind_record(0, 0x0, [0x100], little=False)
    res = parse_ascend_meta(_write(tmp_path, [rec], little=False))
    assert res.bind_records[0].sknl_funcs == (0x100,) * 4
    assert res.bind_records[0].global_name == "glob"


def test_walk_tlv_tail_bytes() -> None:
    data = tlv(1, b"ab") + b"\x01\x00"
    recs, pad, gaps = walk_tlv(data, little=True, file="f", section=".ascend.meta")
    assert [(r.type, r.payload) for r in recs] == [(1, b"ab")] and pad == 0
    assert [g.kind for g in gaps] == ["tlv_tail"]


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_arbitrary_meta_bytes_never_crash(data: bytes) -> None:
    recs, pad, gaps = walk_tlv(data, little=True, file="f", section=".ascend.meta")
    consumed = sum(4 + r.length for r in recs) + 4 * pad
    assert consumed <= len(data)
    assert all(g.kind in ("truncated_tlv", "tlv_tail") for g in gaps)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 15), st.integers(0, 0x300), st.lists(st.integers(0, 0x300), min_size=1, max_size=4)
        ),
        max_size=5,
    )
)
def test_generated_records_round_trip(recs: list[tuple[int, int, list[int]]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        res = parse_ascend_meta(_write(Path(d), [sk_bind_record(c, g, v) for c, g, v in recs]))
    assert [(b.cap, b.global_func, list(dict.fromkeys(b.sknl_funcs))) for b in res.bind_records] == [
        (c, g, list(dict.fromkeys(v + [v[0]] * (4 - len(v))))) for c, g, v in recs
    ]
    for b in res.bind_records:
        assert struct.pack("<4Q", *b.sknl_funcs)  # plain u64 values


RELOCATED = build_elf(
    [text_section(0x300), meta_section([sk_bind_record(1, 0, [0, 0]), padding_heads(1), kernel_type_tlv(2)])],
    FUNCS,
    relocations={".ascend.meta": [RelaSpec(16, "other"), RelaSpec(24, "_Z7glob_skILj1EEvv")]},
    e_type=ET_REL,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(RELOCATED) - 1), st.integers(0, 255)), min_size=1, max_size=10))
def test_corrupted_meta_elf_only_raises_parse_error(flips: list[tuple[int, int]]) -> None:
    buf = bytearray(RELOCATED)
    for at, value in flips:
        buf[at] = value
    try:
        elf = ElfImage("fuzz.o", bytes(buf))
    except ParseError:
        return
    res = parse_ascend_meta(elf)
    res.variants()


def _meta_both_ways(data: bytes) -> None:
    """The bind map read through the small (numpy-free) table equals the one read through the numpy
    table: names, relocated values, relocation gaps and the ELF's own gaps, in the same order."""
    try:
        small = ElfImage("m.o", data)
        big = ElfImage("m.o", data)
    except ParseError:
        return
    _ = big.symbols  # forces the numpy SymbolTable before the meta parser asks for a table
    assert parse_ascend_meta(small) == parse_ascend_meta(big)
    assert small.gaps == big.gaps


def test_relocated_bind_map_same_through_the_small_table() -> None:
    elf = ElfImage("m.o", RELOCATED)
    res = parse_ascend_meta(elf)
    (b,) = res.bind_records
    assert (b.global_func, b.global_name, b.sknl_names[0]) == (0x200, "other", "_Z7glob_skILj1EEvv")
    assert elf.symbols is not None  # the numpy table can still be asked for afterwards
    _meta_both_ways(RELOCATED)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(RELOCATED) - 1), st.integers(0, 255)), min_size=1, max_size=10))
def test_corrupted_meta_elf_same_through_both_tables(flips: list[tuple[int, int]]) -> None:
    """Corrupt symbol indices, entry sizes, string tables: both paths record the very same result."""
    buf = bytearray(RELOCATED)
    for at, value in flips:
        buf[at] = value
    _meta_both_ways(bytes(buf))
