"""``.ascend.meta`` TLV records and the SK bind map (artifacts.md §4.3, §4.5; row 70).

Why: the bind map is the only reliable way to tie an SK variant symbol (often a mangled
template instance, §4.4) back to the child's global kernel and its split index. skdbg rebuilds
it offline from the child ELF exactly as the runtime and the SK builder read it:

* TLV walk as in the runtime (``elf.cc`` ``ParseElfBinaryMetaInfo``): ``u16 type, u16 len`` in the
  ELF's byte order, ``len`` excludes the 4-byte head, the walk continues while more than 4 bytes
  remain and stops at a record that would overrun the section. Zero heads are 4 bytes of
  padding. skdbg records the stop as a Gap instead of ignoring it.
* Type 5 records (SK info) are 56 bytes: head, ``u32 reserved``, ``u64 cap``, ``u64 globalFunc``,
  ``u64 sknlFunc[4]`` — offsets from ``binDevAddr`` (= ``st_value`` of the functions).
* Duplicate ``globalFunc`` with a different ``cap`` or variant list poisons the entry, as in
  ``sk_node.cpp`` ``InitSuperKernelBindMap`` (the builder then reports ``BINDMAP_ENTRY_CONFLICT``);
  identical duplicates are harmless.
* In a relocatable object the pointer fields may be 0 with the real values in
  ``.rela.ascend.meta``; they are resolved as ``S + A`` against ``.symtab`` (§4.5, inferred).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.elf import ElfImage, ElfSection, SymbolLookup, open_elf
from skdbg.parsers.frames import Col, records_frame

if TYPE_CHECKING:
    import pandas as pd

META_SECTION = ".ascend.meta"
META_PREFIX = ".ascend.meta."
TLV_HEAD = 4
SK_INFO_TYPE = 5
SK_INFO_LEN = 52
KERNEL_TYPE_TLV = 1

BINARY_META_TYPES = {
    0: "BIN_VERSION",
    1: "DEBUG_INFO",
    2: "DYNAMIC_PARAM",
    3: "OPTIONAL_PARAM",
    4: "RUNTIME_IMPLICIT_INFO",
    5: "SK_INFO",
}
KERNEL_TYPES = {
    1: "K_TYPE_AICORE",
    2: "K_TYPE_AIC",
    3: "K_TYPE_AIV",
    4: "K_TYPE_MIX_AIC_MAIN",
    5: "K_TYPE_MIX_AIV_MAIN",
    6: "K_TYPE_AIC_ROLLBACK",
    7: "K_TYPE_AIV_ROLLBACK",
}
CAP_BITS = {1: "early_start_wait", 2: "early_start_set", 4: "disable_dcci", 8: "disable_batch_mode_check"}
BINDMAP_ENTRY_CONFLICT = "BINDMAP_ENTRY_CONFLICT"

# Field offsets inside a type-5 record, counted from the record head (§4.5).
_GLOBAL_AT = TLV_HEAD + 4 + 8
_SKNL_AT = _GLOBAL_AT + 8


@dataclass(frozen=True, slots=True)
class TlvRecord:
    """One TLV record of a meta section; ``offset`` is the head's offset inside the section."""

    section: str
    offset: int
    type: int
    length: int
    type_name: str | None
    payload: bytes
    src: Source


@dataclass(frozen=True, slots=True)
class SkBindRecord:
    """A type-5 SK info record, values resolved (relocations applied) and named via the symbol table."""

    index: int
    offset: int
    reserved: int
    cap: int
    global_func: int
    sknl_funcs: tuple[int, int, int, int]
    relocated_fields: tuple[str, ...]
    global_name: str | None
    sknl_names: tuple[str | None, str | None, str | None, str | None]
    src: Source


@dataclass(frozen=True, slots=True)
class BindEntry:
    """The bind map entry for one ``globalFunc`` after duplicate handling."""

    global_func: int
    global_name: str | None
    cap: int
    sknl_funcs: tuple[int, int, int, int]
    sknl_names: tuple[str | None, str | None, str | None, str | None]
    conflict: bool
    records: tuple[int, ...]
    src: Source

    @property
    def fail_reason(self) -> str | None:
        return BINDMAP_ENTRY_CONFLICT if self.conflict else None


@dataclass(frozen=True, slots=True)
class VariantRef:
    """Where an SK variant offset appears: which child global, which split positions."""

    global_func: int
    global_name: str | None
    splits: tuple[int, ...]
    conflict: bool


@dataclass(frozen=True, slots=True)
class KernelTypeRecord:
    """Kernel type of one function from its ``.ascend.meta.<kernel>`` section (type-1 TLV)."""

    kernel: str
    section: str
    func_type: int
    func_type_name: str | None
    src: Source


@dataclass(slots=True)
class AscendMetaResult:
    """Everything read from the meta sections of one ELF."""

    file: str
    records: list[TlvRecord] = field(default_factory=list)
    bind_records: list[SkBindRecord] = field(default_factory=list)
    bind_map: dict[int, BindEntry] = field(default_factory=dict)
    kernel_types: list[KernelTypeRecord] = field(default_factory=list)
    padding_heads: int = 0
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def variants(self) -> dict[int, VariantRef]:
        """SK variant offset → the child global it belongs to and its split positions (§4.7 step 4)."""
        out: dict[int, VariantRef] = {}
        for e in self.bind_map.values():
            for f in dict.fromkeys(e.sknl_funcs):
                splits = tuple(i for i, g in enumerate(e.sknl_funcs) if g == f)
                out.setdefault(f, VariantRef(e.global_func, e.global_name, splits, e.conflict))
        return out

    def variant_of(self, offset: int) -> VariantRef | None:
        return self.variants().get(offset)

    def to_frame(self) -> pd.DataFrame:
        """One row per TLV record."""
        frame: pd.DataFrame = records_frame((({"file": self.file}, r) for r in self.records), TLV_COLS)
        return frame


def walk_tlv(data: bytes, *, little: bool, file: str, section: str) -> tuple[list[TlvRecord], int, list[Gap]]:
    """Walk back-to-back TLV records; returns (records, padding heads skipped, gaps).

    Mirrors the runtime loop: continue while more than 4 bytes remain; a record whose declared
    length overruns the section ends the walk (recorded as a ``truncated_tlv`` Gap).
    """
    order = "<" if little else ">"
    records: list[TlvRecord] = []
    gaps: list[Gap] = []
    padding = 0
    pos = 0
    n = len(data)
    while n - pos > TLV_HEAD:
        t, ln = struct.unpack_from(order + "HH", data, pos)
        if TLV_HEAD + ln > n - pos:
            gaps.append(
                Gap(
                    "truncated_tlv",
                    f"{section}: record type {t} at 0x{pos:x} declares {ln} bytes but only "
                    f"{n - pos - TLV_HEAD} "
                    "remain; the runtime stops reading here too",
                    Source(file, json_path=f"{section}@0x{pos:x}"),
                )
            )
            return records, padding, gaps
        if t == 0 and ln == 0:
            padding += 1
        else:
            records.append(
                TlvRecord(
                    section,
                    pos,
                    t,
                    ln,
                    BINARY_META_TYPES.get(t) if section == META_SECTION else None,
                    bytes(data[pos + TLV_HEAD : pos + TLV_HEAD + ln]),
                    Source(file, json_path=f"{section}@0x{pos:x}"),
                )
            )
        pos += TLV_HEAD + ln
    if pos < n and any(data[pos:]):
        gaps.append(
            Gap(
                "tlv_tail",
                f"{section}: {n - pos} trailing byte(s) at 0x{pos:x} too short for a record "
                "(ignored, as by the runtime)",
                Source(file, json_path=f"{section}@0x{pos:x}"),
            )
        )
    return records, padding, gaps


def _relocations(elf: ElfImage, target: ElfSection, gaps: list[Gap]) -> dict[int, int]:
    """``.rela.ascend.meta``/``.rel.ascend.meta`` → {offset in target: S (+ A)} (§4.5, inferred)."""
    rel_secs = [
        s
        for s in elf.sections
        if s.sh_type in (4, 9)
        and (s.info == target.index or s.name in (".rela" + target.name, ".rel" + target.name))
    ]
    if not rel_secs:
        return {}
    count = elf.symbol_count()  # st_value by index with struct: no numpy for a handful of relocations
    if count is None:
        gaps.append(
            Gap("reloc_without_symtab", f"{rel_secs[0].name} needs .symtab to resolve", rel_secs[0].src)
        )
        return {}
    order = "<" if elf.little else ">"
    out: dict[int, int] = {}
    for rs in rel_secs:
        data = elf.section_data(rs)
        if data is None:
            continue
        rela = rs.sh_type == 4
        ent = 24 if rela else 16
        for i in range(len(data) // ent):
            if rela:
                r_offset, r_info, r_addend = struct.unpack_from(order + "QQq", data, i * ent)
            else:
                r_offset, r_info = struct.unpack_from(order + "QQ", data, i * ent)
                r_addend = 0
            sym = r_info >> 32
            if sym >= count:
                gaps.append(
                    Gap("bad_relocation", f"{rs.name}[{i}] names symbol {sym} beyond .symtab", rs.src)
                )
                continue
            out[int(r_offset)] = (elf.st_value(sym) + r_addend) & ((1 << 64) - 1)
    return out


def parse_ascend_meta(source: ElfImage | str | os.PathLike[str]) -> AscendMetaResult:
    """Read ``.ascend.meta`` (binary TLVs, SK bind records) and ``.ascend.meta.<kernel>`` sections."""
    elf = source if isinstance(source, ElfImage) else open_elf(source)
    res = AscendMetaResult(elf.name)
    order = "<" if elf.little else ">"
    table = elf.lookup_table()  # numpy-free for a small .symtab; records the no_symtab Gap as before
    meta = elf.section_by_name(META_SECTION)
    if meta is None:
        res.gaps.append(
            Gap(
                "no_ascend_meta",
                "no .ascend.meta section: no SK bind map, variants cannot be tied to child globals (§4.5)",
                Source(elf.name),
            )
        )
    else:
        data = elf.section_data(meta)
        if data is not None:
            recs, pad, gaps = walk_tlv(data, little=elf.little, file=elf.name, section=META_SECTION)
            res.records += recs
            res.padding_heads += pad
            res.gaps += gaps
            relocs = _relocations(elf, meta, res.gaps)
            for rec in recs:
                if rec.type != SK_INFO_TYPE:
                    continue
                if rec.length != SK_INFO_LEN:
                    res.gaps.append(
                        Gap(
                            "bad_sk_record",
                            f"SK info record at 0x{rec.offset:x} has len {rec.length}, "
                            f"expected {SK_INFO_LEN}; skipped",
                            rec.src,
                        )
                    )
                    continue
                reserved, cap, gfunc, *sk = struct.unpack(order + "IQQ4Q", rec.payload)
                fixed: list[str] = []
                if gfunc == 0 and rec.offset + _GLOBAL_AT in relocs:
                    gfunc = relocs[rec.offset + _GLOBAL_AT]
                    fixed.append("globalFunc")
                for i in range(4):
                    at = rec.offset + _SKNL_AT + 8 * i
                    if sk[i] == 0 and at in relocs:
                        sk[i] = relocs[at]
                        fixed.append(f"sknlFunc[{i}]")
                skt = (sk[0], sk[1], sk[2], sk[3])
                res.bind_records.append(
                    SkBindRecord(
                        index=len(res.bind_records),
                        offset=rec.offset,
                        reserved=reserved,
                        cap=cap,
                        global_func=gfunc,
                        sknl_funcs=skt,
                        relocated_fields=tuple(fixed),
                        global_name=_name_at(table, gfunc),
                        sknl_names=(
                            _name_at(table, skt[0]),
                            _name_at(table, skt[1]),
                            _name_at(table, skt[2]),
                            _name_at(table, skt[3]),
                        ),
                        src=rec.src,
                    )
                )
            res.bind_map = _bind_map(res.bind_records)
    for sec in elf.sections_with_prefix(META_PREFIX):
        kernel = sec.name[len(META_PREFIX) :]
        if not kernel:
            continue
        data = elf.section_data(sec)
        if data is None:
            continue
        recs, pad, gaps = walk_tlv(data, little=elf.little, file=elf.name, section=sec.name)
        res.records += recs
        res.padding_heads += pad
        res.gaps += gaps
        for rec in recs:
            if rec.type == KERNEL_TYPE_TLV and rec.length >= 4:
                (ft,) = struct.unpack_from(order + "I", rec.payload)
                res.kernel_types.append(KernelTypeRecord(kernel, sec.name, ft, KERNEL_TYPES.get(ft), rec.src))
    return res


def _name_at(table: SymbolLookup | None, value: int) -> str | None:
    """Name of the function at image offset ``value``: the handler's exact rule (§1.6.2)."""
    if table is None:
        return None
    hit = table.lookup_exact(value)
    return hit.symbol.name if hit is not None else None


def _bind_map(records: list[SkBindRecord]) -> dict[int, BindEntry]:
    """Duplicates as in ``InitSuperKernelBindMap``: equal ones merge, different ones poison the entry."""
    out: dict[int, BindEntry] = {}
    for r in records:
        prev = out.get(r.global_func)
        if prev is None:
            out[r.global_func] = BindEntry(
                r.global_func, r.global_name, r.cap, r.sknl_funcs, r.sknl_names, False, (r.index,), r.src
            )
            continue
        differs = prev.cap != r.cap or prev.sknl_funcs != r.sknl_funcs
        out[r.global_func] = BindEntry(
            prev.global_func,
            prev.global_name,
            prev.cap,
            prev.sknl_funcs,
            prev.sknl_names,
            prev.conflict or differs,
            prev.records + (r.index,),
            prev.src,
        )
    return out


#: the TLV table: the ELF (from the owning file), no line, and each record's place and type
TLV_COLS = (
    Col("file"),
    Col("line", lambda r: None),
    Col("section"),
    Col("offset"),
    Col("type"),
    Col("type_name"),
    Col("length"),
)
