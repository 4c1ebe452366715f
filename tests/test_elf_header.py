"""The ELF header read with ``struct`` (no pyelftools on the common path) and its escapes.

Why: pyelftools is a 25 ms import that a small scene's analysis paid only to read six header
fields. The extended-numbering escapes of the gABI (section count in section 0's ``sh_size`` when
``e_shnum`` is 0; name table index in section 0's ``sh_link`` when ``e_shstrndx`` is SHN_XINDEX)
still go through pyelftools and must give the same sections.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from skdbg.parsers.elf import open_elf
from skdbg.scenebuilder.elf import SymSpec, text_section, write_elf

_E_SHOFF, _E_SHNUM, _E_SHSTRNDX = 40, 60, 62
_SH_SIZE, _SH_LINK = 32, 40  # in an Elf64_Shdr


def _elf(tmp_path: Path) -> tuple[Path, bytes]:
    p = write_elf(tmp_path / "k.o", sections=[text_section(0x80)], symbols=[SymSpec("kfn", 0x10, 0x20)])
    return p, p.read_bytes()


def _sections(path: Path) -> list[tuple[int, str, int, int]]:
    return [(s.index, s.name, s.offset, s.size) for s in open_elf(path).sections]


def test_header_names_when_asked(tmp_path: Path) -> None:
    p, _ = _elf(tmp_path)
    elf = open_elf(p)
    assert elf.little is True
    assert elf.e_type in ("ET_REL", "ET_EXEC", "ET_DYN")  # a named type, not a number
    assert any(s.name == ".text" for s in elf.sections)


def test_section_count_in_section_zero(tmp_path: Path) -> None:
    p, raw = _elf(tmp_path)
    want = _sections(p)
    data = bytearray(raw)
    (shoff,) = struct.unpack_from("<Q", data, _E_SHOFF)
    (shnum,) = struct.unpack_from("<H", data, _E_SHNUM)
    struct.pack_into("<H", data, _E_SHNUM, 0)
    struct.pack_into("<Q", data, shoff + _SH_SIZE, shnum)
    q = tmp_path / "ext.o"
    q.write_bytes(bytes(data))
    got = _sections(q)
    assert got[1:] == want[1:]
    assert got[0][3] == shnum  # section 0 now carries the count as its size


def test_name_table_index_in_section_zero(tmp_path: Path) -> None:
    p, raw = _elf(tmp_path)
    want = _sections(p)
    data = bytearray(raw)
    (shoff,) = struct.unpack_from("<Q", data, _E_SHOFF)
    (shstrndx,) = struct.unpack_from("<H", data, _E_SHSTRNDX)
    struct.pack_into("<H", data, _E_SHSTRNDX, 0xFFFF)
    struct.pack_into("<I", data, shoff + _SH_LINK, shstrndx)
    q = tmp_path / "xindex.o"
    q.write_bytes(bytes(data))
    assert [s[1] for s in _sections(q)] == [s[1] for s in want]
    assert ".text" in [s[1] for s in want]


#: pyelftools names the standard section types; the numbers the gABI gives them
_SECTION_TYPE_NUMBERS = {"SHT_NULL": 0, "SHT_PROGBITS": 1, "SHT_SYMTAB": 2, "SHT_STRTAB": 3, "SHT_NOBITS": 8}


def _type_number(sh_type: str | int) -> int:
    return _SECTION_TYPE_NUMBERS[sh_type] if isinstance(sh_type, str) else sh_type


@pytest.mark.parametrize("little", [True, False])
def test_every_section_header_as_pyelftools_reads_it(tmp_path: Path, little: bool) -> None:
    """The section table read with ``struct`` (each section made without the frozen ``__init__``) holds
    what pyelftools reads from the same file, field by field (all ``ElfSection`` keeps: not
    ``sh_addralign``), in either byte order; and its records are ordinary ``ElfSection`` records: equal
    to (and hashed as) the ones the class's own ``__init__`` makes."""
    from elftools.elf.elffile import ELFFile

    from skdbg.parsers.common import Source
    from skdbg.parsers.elf import ElfSection

    p = write_elf(
        tmp_path / "k.o",
        sections=[text_section(0x80)],
        symbols=[SymSpec("kfn", 0x10, 0x20), SymSpec("other", 0x40, 0x8)],
        little=little,
    )
    ours = open_elf(p).sections
    with p.open("rb") as fh:
        theirs: list[tuple[int, str, int, int, int, int, int, int, int, int]] = [
            (
                i,
                s.name,
                _type_number(s["sh_type"]),
                s["sh_flags"],
                s["sh_addr"],
                s["sh_offset"],
                s["sh_size"],
                s["sh_link"],
                s["sh_info"],
                s["sh_entsize"],
            )
            for i, s in enumerate(ELFFile(fh).iter_sections())
        ]
    assert len(ours) == len(theirs) >= 4
    assert [
        (s.index, s.name, s.sh_type, s.flags, s.addr, s.offset, s.size, s.link, s.info, s.entsize)
        for s in ours
    ] == theirs
    made = [ElfSection(*t, src=Source(str(p), json_path=f"section[{t[0]}]")) for t in theirs]
    assert ours == made and [hash(s) for s in ours] == [hash(s) for s in made]
    assert all(type(s) is ElfSection for s in ours)
