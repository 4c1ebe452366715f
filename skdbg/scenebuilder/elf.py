"""A small ELF writer for kernel binaries, host libraries and ``bin_files/`` directories.

Why hand-written: no public SK kernel ELF exists (artifacts.md §3.14) and no Python library
*writes* ELFs, so every ELF-facing parser test builds its input here from the layout rules of
§4 (sections §4.3, bind records §4.5, address model §4.6, host library §4.1). The writer is
struct-based and deliberately literal: every header field is set explicitly so tests can forge
exactly the corner a matrix row asks for (32-bit class, stripped symtab, ``.text`` not first,
non-zero ``sh_addr``, truncated ``.ascend.meta`` tail, relocated bind records).

``e_machine`` is configurable; the default is x86-64 (62) so binutils (``readelf``,
``addr2line``) accept the output, while parsers must never look at it (triage.md §3.3).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# ELF constants (System V gABI).
ET_REL = 1
ET_EXEC = 2
ET_DYN = 3
EM_X86_64 = 62
SHT_NULL = 0
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_STRTAB = 3
SHT_RELA = 4
SHT_NOBITS = 8
SHT_REL = 9
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_INFO_LINK = 0x40
STT_NOTYPE = 0
STT_OBJECT = 1
STT_FUNC = 2
STT_SECTION = 3
STB_LOCAL = 0
STB_GLOBAL = 1
STB_WEAK = 2
SHN_UNDEF = 0
SHN_ABS = 0xFFF1
R_X86_64_64 = 1

BIND_CODES = {"LOCAL": STB_LOCAL, "GLOBAL": STB_GLOBAL, "WEAK": STB_WEAK}
TYPE_CODES = {"NOTYPE": STT_NOTYPE, "OBJECT": STT_OBJECT, "FUNC": STT_FUNC}

# .ascend.meta record types (§4.3, BinaryMetaType) and per-function kernel-type TLV type.
META_TYPE_SK_INFO = 5
FUNC_META_KERNEL_TYPE = 1


@dataclass(frozen=True, slots=True)
class SectionSpec:
    """One content section, written in list order (file layout follows the list)."""

    name: str
    data: bytes = b""
    sh_type: int = SHT_PROGBITS
    flags: int = 0
    addr: int = 0
    align: int = 16
    entsize: int = 0
    nobits_size: int = 0  # SHT_NOBITS: size in memory, no file bytes


@dataclass(frozen=True, slots=True)
class SymSpec:
    """A symbol; ``section`` names a content section, or is ``"ABS"``/``"UNDEF"``."""

    name: str
    value: int
    size: int = 0
    bind: str = "GLOBAL"
    type: str = "FUNC"
    section: str = ".text"
    other: int = 0  # st_other (visibility in the low 2 bits)


@dataclass(frozen=True, slots=True)
class RelaSpec:
    """A relocation against ``target`` (a content section) at ``offset`` referencing ``symbol``."""

    offset: int
    symbol: str
    type: int = R_X86_64_64
    addend: int = 0


def text_section(size: int, *, addr: int = 0, fill: bytes = b"\xcc") -> SectionSpec:
    """``.text`` as the runtime loads it: SHF_ALLOC|SHF_EXECINSTR, ``size`` bytes of ``fill``."""
    body = (fill * (size // max(len(fill), 1) + 1))[:size]
    return SectionSpec(".text", body, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, addr=addr)


def data_section(data: bytes = b"\0" * 8, *, addr: int = 0) -> SectionSpec:
    """``.data`` (SHF_ALLOC|SHF_WRITE); its presence toggles a runtime flag (§4.3)."""
    return SectionSpec(".data", data, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, addr=addr, align=8)


def meta_section(records: Iterable[bytes], *, name: str = ".ascend.meta") -> SectionSpec:
    """``.ascend.meta`` (or ``.ascend.meta.<kernel>``): TLV records back to back, not allocated."""
    return SectionSpec(name, b"".join(records), SHT_PROGBITS, 0, align=4)


def tlv(tlv_type: int, payload: bytes, *, little: bool = True, length: int | None = None) -> bytes:
    """``BaseTlv {u16 type; u16 len}`` + payload (§4.3); ``length`` overrides ``len`` to forge corruption."""
    order = "<" if little else ">"
    return struct.pack(order + "HH", tlv_type, len(payload) if length is None else length) + payload


def padding_heads(count: int = 1) -> bytes:
    """Zero heads (``type 0, len 0``): four bytes of padding each (§4.3)."""
    return b"\0\0\0\0" * count


def sk_bind_record(
    cap: int,
    global_func: int,
    sknl_funcs: Sequence[int],
    *,
    reserved: int = 0,
    little: bool = True,
) -> bytes:
    """A type-5 SK info record: 56 bytes = head + u32 reserved, u64 cap, globalFunc, sknlFunc[4] (§4.5).

    Fewer than four variants repeat ``sknlFunc[0]`` for the unused splits, as SK_BIND does.
    """
    funcs = list(sknl_funcs)
    if not 1 <= len(funcs) <= 4:
        raise ValueError("an SK bind record names 1 to 4 variants")
    funcs += [funcs[0]] * (4 - len(funcs))
    order = "<" if little else ">"
    payload = struct.pack(order + "IQQ4Q", reserved, cap, global_func, *funcs)
    return tlv(META_TYPE_SK_INFO, payload, little=little)


def kernel_type_tlv(func_type: int, *, little: bool = True) -> bytes:
    """Per-function kernel-type TLV (type 1, u32 funcType) for ``.ascend.meta.<kernel>`` (§4.3)."""
    return tlv(FUNC_META_KERNEL_TYPE, struct.pack(("<" if little else ">") + "I", func_type), little=little)


class _StrTab:
    """A string table builder: offset 0 is the empty string, names are deduplicated."""

    def __init__(self) -> None:
        self.data = bytearray(b"\0")
        self.index: dict[str, int] = {"": 0}

    def add(self, name: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.data)
            self.data += name.encode("utf-8") + b"\0"
        return self.index[name]


def _align(n: int, a: int) -> int:
    return n if a <= 1 else (n + a - 1) // a * a


def build_elf(
    sections: Sequence[SectionSpec] | None = None,
    symbols: Sequence[SymSpec] = (),
    *,
    relocations: Mapping[str, Sequence[RelaSpec]] | None = None,
    rel_without_addend: bool = False,
    elfclass: int = 64,
    little: bool = True,
    machine: int = EM_X86_64,
    e_type: int = ET_EXEC,
    strip: bool = False,
) -> bytes:
    """Render an ELF image.

    ``sections`` are content sections in file order (default: a 4 KiB ``.text``). ``.symtab``,
    ``.strtab`` (skipped when ``strip``), relocation sections (``.rela<target>`` or ``.rel<target>``
    for each key of ``relocations``) and ``.shstrtab`` follow; the section header table is last.
    Symbols are emitted locals first (``sh_info`` = first non-local), as the gABI requires.
    """
    if elfclass not in (32, 64):
        raise ValueError("elfclass is 32 or 64")
    is64 = elfclass == 64
    order = "<" if little else ">"
    secs = list(sections) if sections is not None else [text_section(4096)]
    names = [s.name for s in secs]
    if len(set(names)) != len(names):
        raise ValueError("duplicate content section names")
    index_of = {s.name: i + 1 for i, s in enumerate(secs)}  # header index (0 = SHT_NULL)

    # Symbol table: null, locals, then globals/weak (stable inside each group).
    ordered = [s for s in symbols if s.bind == "LOCAL"] + [s for s in symbols if s.bind != "LOCAL"]
    strtab = _StrTab()
    sym_rows: list[bytes] = []
    sym_index: dict[str, int] = {}
    sym_rows.append(_sym(order, is64, 0, 0, 0, 0, 0, 0))
    for i, s in enumerate(ordered, start=1):
        shndx = SHN_ABS if s.section == "ABS" else SHN_UNDEF if s.section == "UNDEF" else index_of[s.section]
        info = (BIND_CODES[s.bind] << 4) | TYPE_CODES[s.type]
        sym_rows.append(_sym(order, is64, strtab.add(s.name), s.value, s.size, info, s.other, shndx))
        sym_index.setdefault(s.name, i)
    first_global = 1 + sum(1 for s in ordered if s.bind == "LOCAL")

    shstr = _StrTab()
    # (name, type, flags, addr, data, link, info, align, entsize, nobits_size)
    headers: list[tuple[str, int, int, int, bytes, int, int, int, int, int]] = []
    for sec in secs:
        headers.append(
            (
                sec.name,
                sec.sh_type,
                sec.flags,
                sec.addr,
                sec.data,
                0,
                0,
                sec.align,
                sec.entsize,
                sec.nobits_size,
            )
        )
    symtab_idx = 0
    if not strip:
        symtab_idx = len(headers) + 1
        entsize = 24 if is64 else 16
        headers.append(
            (".symtab", SHT_SYMTAB, 0, 0, b"".join(sym_rows), symtab_idx + 1, first_global, 8, entsize, 0)
        )
        headers.append((".strtab", SHT_STRTAB, 0, 0, bytes(strtab.data), 0, 0, 1, 0, 0))
    for target, relas in (relocations or {}).items():
        if strip:
            raise ValueError("relocations need a symbol table")
        rows = []
        for r in relas:
            sym = sym_index[r.symbol]
            if is64:
                r_info = (sym << 32) | r.type
                rows.append(
                    struct.pack(order + "QQ", r.offset, r_info)
                    if rel_without_addend
                    else struct.pack(order + "QQq", r.offset, r_info, r.addend)
                )
            else:
                r_info = (sym << 8) | (r.type & 0xFF)
                rows.append(
                    struct.pack(order + "II", r.offset, r_info)
                    if rel_without_addend
                    else struct.pack(order + "IIi", r.offset, r_info, r.addend)
                )
        kind = SHT_REL if rel_without_addend else SHT_RELA
        ent = (16 if rel_without_addend else 24) if is64 else (8 if rel_without_addend else 12)
        prefix = ".rel" if rel_without_addend else ".rela"
        headers.append(
            (prefix + target, kind, SHF_INFO_LINK, 0, b"".join(rows), symtab_idx, index_of[target], 8, ent, 0)
        )
    shstrndx = len(headers) + 1
    headers.append((".shstrtab", SHT_STRTAB, 0, 0, b"", 0, 0, 1, 0, 0))
    name_offs = [shstr.add(h[0]) for h in headers]
    shstr_data = bytes(shstr.data)
    headers[-1] = (".shstrtab", SHT_STRTAB, 0, 0, shstr_data, 0, 0, 1, 0, 0)

    ehsize = 64 if is64 else 52
    shentsize = 64 if is64 else 40
    body = bytearray(b"\0" * ehsize)
    layout: list[tuple[int, int]] = []  # (offset, size) per header
    for _name, sh_type, _f, _a, data, _l, _i, align, _e, nobits in headers:
        off = _align(len(body), align)
        body += b"\0" * (off - len(body))
        if sh_type == SHT_NOBITS:
            layout.append((off, nobits))
        else:
            body += data
            layout.append((off, len(data)))
    shoff = _align(len(body), 8)
    body += b"\0" * (shoff - len(body))
    body += b"\0" * shentsize  # SHT_NULL header
    for (name, sh_type, flags, addr, _d, link, info, align, entsize, _n), (off, size), name_off in zip(
        headers, layout, name_offs, strict=True
    ):
        del name
        if is64:
            body += struct.pack(
                order + "IIQQQQIIQQ", name_off, sh_type, flags, addr, off, size, link, info, align, entsize
            )
        else:
            body += struct.pack(
                order + "IIIIIIIIII", name_off, sh_type, flags, addr, off, size, link, info, align, entsize
            )
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if little else 2, 1, 0]) + b"\0" * 8
    shnum = len(headers) + 1
    if is64:
        hdr = struct.pack(
            order + "HHIQQQIHHHHHH",
            e_type,
            machine,
            1,
            0,
            0,
            shoff,
            0,
            ehsize,
            0,
            0,
            shentsize,
            shnum,
            shstrndx,
        )
    else:
        hdr = struct.pack(
            order + "HHIIIIIHHHHHH",
            e_type,
            machine,
            1,
            0,
            0,
            shoff,
            0,
            ehsize,
            0,
            0,
            shentsize,
            shnum,
            shstrndx,
        )
    body[0:ehsize] = ident + hdr
    return bytes(body)


def _sym(
    order: str, is64: bool, name: int, value: int, size: int, info: int, other: int, shndx: int
) -> bytes:
    if is64:
        return struct.pack(order + "IBBHQQ", name, info, other, shndx, value, size)
    return struct.pack(order + "IIIBBH", name, value, size, info, other, shndx)


def write_elf(path: Path | str, **kwargs: object) -> Path:
    """:func:`build_elf` to a file; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(build_elf(**kwargs))  # type: ignore[arg-type]
    return p


# --------------------------------------------------------------------------- kernels


@dataclass(frozen=True, slots=True)
class ChildKernel:
    """A child binary: one global kernel plus its SK variants, bound by a type-5 record (§4.4, §4.5).

    ``variants`` are mangled template instances ``_Z<len><name>_skILj<N>EEv…`` unless given.
    """

    func_name: str
    base: int
    global_name: str = ""
    variant_names: tuple[str, ...] = ()
    n_variants: int = 4
    func_size: int = 0x200
    variant_size: int = 0x180
    cap: int = 0
    variant_bind: str = "LOCAL"
    extra_symbols: tuple[SymSpec, ...] = ()


def mangled_variant(name: str, split: int) -> str:
    """Itanium name of ``template<uint32_t splitidx> void <name>_sk()`` instance ``split`` (§4.4)."""
    ident = f"{name}_sk"
    return f"_Z{len(ident)}{ident}ILj{split}EEvv"


@dataclass(slots=True)
class ChildLayout:
    """Where the writer placed a child's functions (offsets from the image base)."""

    global_name: str
    global_offset: int
    global_size: int
    variants: list[tuple[str, int, int]] = field(default_factory=list)  # (name, offset, size)


def child_elf(child: ChildKernel, *, machine: int = EM_X86_64) -> tuple[bytes, ChildLayout]:
    """A child operator ELF: global kernel at 0, its variants after it, a bind record in ``.ascend.meta``."""
    gname = child.global_name or child.func_name
    vnames = list(child.variant_names) or [mangled_variant(gname, i) for i in range(child.n_variants)]
    layout = ChildLayout(gname, 0, child.func_size)
    off = _align(child.func_size, 0x100)
    for v in vnames:
        layout.variants.append((v, off, child.variant_size))
        off = _align(off + child.variant_size, 0x100)
    syms = [SymSpec(gname, 0, child.func_size, "GLOBAL")]
    syms += [SymSpec(n, o, s, child.variant_bind) for n, o, s in layout.variants]
    syms += list(child.extra_symbols)
    record = sk_bind_record(child.cap, 0, [o for _n, o, _s in layout.variants])
    kt = meta_section([kernel_type_tlv(2)], name=f".ascend.meta.{gname}")
    secs = [text_section(off), data_section(), meta_section([record]), kt]
    return build_elf(secs, syms, machine=machine), layout


SK_ENTRY_NAMES = ("sk_entry_aic", "sk_entry_aiv", "sk_entry_mix11", "sk_entry_mix12")


def entry_elf(names: Sequence[str] = SK_ENTRY_NAMES, *, size: int = 0x400, machine: int = EM_X86_64) -> bytes:
    """An SK entry ELF: the ``sk_entry_*`` functions back to back (§4.1, §4.4)."""
    syms = [SymSpec(n, i * size, size, "GLOBAL") for i, n in enumerate(names)]
    return build_elf([text_section(size * len(names))], syms, machine=machine)


def sanitize_component(name: str) -> str:
    """Upstream ``SanitizePathComponent``: ``/ \\ : * ? " < > |`` become ``_`` (sk_common.h)."""
    return "".join("_" if c in '/\\:*?"<>|' else c for c in name)


def bin_file_name(func_name: str, base: int) -> str:
    """``<SanitizedFuncName>_0x<UPPERHEX>.o`` (§3.12)."""
    return f"{sanitize_component(func_name)}_0x{base:X}.o"


def write_bin_files(
    model_dir: Path | str,
    children: Sequence[ChildKernel],
    *,
    entry_base: int | None = None,
    entry_names: Sequence[str] = SK_ENTRY_NAMES,
    machine: int = EM_X86_64,
) -> dict[str, tuple[Path, ChildLayout | None]]:
    """Write ``<model_dir>/bin_files/`` like ``DumpKernelBinaries``: one ELF per child plus the entry.

    Returns ``{func_name or "sk_entry": (path, layout)}`` so tests know where each function sits.
    """
    out = Path(model_dir) / "bin_files"
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, tuple[Path, ChildLayout | None]] = {}
    for child in children:
        data, layout = child_elf(child, machine=machine)
        p = out / bin_file_name(child.func_name, child.base)
        p.write_bytes(data)
        written[child.func_name] = (p, layout)
    if entry_base is not None:
        p = out / f"sk_entry_0x{entry_base:X}.o"
        p.write_bytes(entry_elf(entry_names, machine=machine))
        written["sk_entry"] = (p, None)
    return written


# --------------------------------------------------------------------------- host library


def host_so(
    entries: Mapping[str, bytes],
    *,
    with_symtab: bool = True,
    symbol_style: str = "arch",
    section_addr: int = 0x10000,
    lead: bytes = b"\0" * 64,
    machine: int = EM_X86_64,
) -> bytes:
    """A host ``.so``-like ELF with the entry ELFs in ``.sk.kernel`` (gen_sk_entry_stub.py, §4.1).

    Each entry is padded to 8 bytes (the generator stores u64 arrays) and, with a symbol table,
    named ``__aicore_file_buf_<arch>`` (``dav-2201`` → ``dav_2201``; ``symbol_style="legacy"`` uses the
    older single ``__aicore_file_buf__``). ``lead`` bytes precede the first array, as other
    objects may be placed in the section first.
    """
    blob = bytearray(lead)
    syms: list[SymSpec] = []
    for arch, data in entries.items():
        off = _align(len(blob), 8)
        blob += b"\0" * (off - len(blob))
        padded = data + b"\0" * (_align(len(data), 8) - len(data))
        sym = (
            "__aicore_file_buf__"
            if symbol_style == "legacy"
            else "__aicore_file_buf_" + arch.replace("-", "_")
        )
        syms.append(SymSpec(sym, section_addr + off, len(padded), "LOCAL", "OBJECT", ".sk.kernel"))
        blob += padded
    text = SectionSpec(".text", b"\xc3" * 64, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, addr=0x1000)
    sk = SectionSpec(".sk.kernel", bytes(blob), SHT_PROGBITS, SHF_ALLOC, addr=section_addr, align=8)
    syms.append(SymSpec("AscendGetEntryBinHandle", 0x1000, 64, "GLOBAL", "FUNC", ".text"))
    return build_elf(
        [text, sk], syms if with_symtab else (), e_type=ET_DYN, machine=machine, strip=not with_symtab
    )
