"""The SK entry ELF embedded in the host library (artifacts.md §4.1; row 75).

Why: when ``bin_files/`` was not dumped, the entry binary can still be recovered from
``libascendsk.so``. ``gen_sk_entry_stub.py`` stores each device ELF as a file-local ``uint64_t``
array in section ``.sk.kernel``, named ``__aicore_file_buf_<arch>`` (``dav-2201`` →
``__aicore_file_buf_dav_2201``; older generators used one ``__aicore_file_buf__``). Such
symbols only live in ``.symtab``, so a stripped library is handled by scanning ``.sk.kernel``
for ``\\x7fELF`` headers and measuring each ELF from its own header.

The library is memory-mapped: only the ``.sk.kernel`` bytes are copied out.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.elf import ELF_MAGIC, ElfImage, elf_from_bytes, elf_length
from skdbg.parsers.frames import rows_frame

if TYPE_CHECKING:
    import pandas as pd

SK_KERNEL_SECTION = ".sk.kernel"
BUF_PREFIX = "__aicore_file_buf_"
LEGACY_BUF = "__aicore_file_buf__"


@dataclass(frozen=True, slots=True)
class EmbeddedElf:
    """One device ELF found in the host library.

    ``arch`` is ``dav_2201``/``dav_3510`` from the symbol name (None for the legacy symbol and for
    scanned ELFs); ``method`` is ``symbol`` or ``scan``; ``file_offset`` is where it starts in the
    host file; ``size`` is the ELF's own length (the u64 array may carry up to 7 padding bytes).
    """

    host: str
    arch: str | None
    symbol: str | None
    method: str
    file_offset: int
    size: int
    data: bytes
    src: Source

    def open(self) -> ElfImage:
        return elf_from_bytes(self.data, f"{self.host}!{self.symbol or hex(self.file_offset)}")

    def write(self, directory: str | os.PathLike[str]) -> Path:
        """Write as ``sk_entry_<arch>.o`` (or ``sk_entry_at_0x<offset>.o``) into ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        tag = self.arch if self.arch else f"at_0x{self.file_offset:x}"
        out = d / f"sk_entry_{tag}.o"
        out.write_bytes(self.data)
        return out


@dataclass(slots=True)
class HostLibResult:
    file: str
    entries: list[EmbeddedElf] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def by_arch(self, arch: str) -> EmbeddedElf | None:
        want = arch.replace("-", "_")
        return next((e for e in self.entries if e.arch == want), None)

    def to_frame(self) -> pd.DataFrame:

        frame: pd.DataFrame = rows_frame(
            [
                {
                    "file": e.host,
                    "line": None,
                    "arch": e.arch,
                    "symbol": e.symbol,
                    "method": e.method,
                    "file_offset": e.file_offset,
                    "size": e.size,
                }
                for e in self.entries
            ],
            columns=["file", "line", "arch", "symbol", "method", "file_offset", "size"],
        )
        return frame


def extract_sk_entry_elfs(path: str | os.PathLike[str]) -> HostLibResult:
    """Find the embedded entry ELF(s): by ``__aicore_file_buf_*`` symbols, else by scanning ``.sk.kernel``."""
    p = Path(path)
    name = str(p)
    if p.is_dir():
        raise ParseError(name, "a host library (ELF .so)", got="a directory")
    try:
        fh = open(p, "rb")  # noqa: SIM115 - closed below, after the mmap
    except FileNotFoundError:
        raise ParseError(name, "a host library (ELF .so)", got="no such file") from None
    except OSError as exc:
        raise ParseError(name, "a readable host library", got=str(exc)) from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise ParseError(name, "a host library (ELF .so)", got="empty file")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _extract(name, mm)


def _extract(name: str, mm: mmap.mmap) -> HostLibResult:
    res = HostLibResult(name)
    host = ElfImage(name, mm)
    sec = host.section_by_name(SK_KERNEL_SECTION)
    if sec is None:
        res.gaps.append(
            Gap(
                "no_sk_kernel",
                f"no {SK_KERNEL_SECTION} section: not the SK host library (libascendsk.so)",
                Source(name),
            )
        )
        return res
    sec_data = host.section_data(sec)
    if sec_data is None:
        res.gaps += host.gaps
        return res
    sec_bytes = bytes(sec_data)
    got = host.raw_symbols()
    if got is not None:
        raw, strtab = got
        for i in range(raw.shape[0]):
            n_off = int(raw[i]["st_name"])
            if n_off >= len(strtab):
                continue
            end = strtab.find(b"\0", n_off)
            sym = strtab[n_off : end if end >= 0 else len(strtab)].decode("utf-8", errors="replace")
            if not sym.startswith(BUF_PREFIX):
                continue
            arch = None if sym == LEGACY_BUF else sym[len(BUF_PREFIX) :]
            value, st_size, shndx = int(raw[i]["st_value"]), int(raw[i]["st_size"]), int(raw[i]["st_shndx"])
            holder = host.section(shndx)
            if holder is None or holder.index != sec.index:
                res.gaps.append(
                    Gap(
                        "buf_outside_section",
                        f"{sym} is not in {SK_KERNEL_SECTION} (st_shndx {shndx})",
                        Source(name),
                    )
                )
                continue
            rel = value - sec.addr
            if rel < 0 or rel + st_size > len(sec_bytes) or st_size == 0:
                res.gaps.append(
                    Gap(
                        "buf_out_of_range",
                        f"{sym} [0x{value:x}+0x{st_size:x}) lies outside {SK_KERNEL_SECTION}",
                        Source(name),
                    )
                )
                continue
            blob = sec_bytes[rel : rel + st_size]
            length = elf_length(blob)
            if length is None:
                res.gaps.append(
                    Gap(
                        "buf_not_elf",
                        f"{sym} does not hold a complete ELF64 (starts {blob[:8].hex(' ')})",
                        Source(name),
                    )
                )
                continue
            res.entries.append(
                EmbeddedElf(
                    name,
                    arch,
                    sym,
                    "symbol",
                    sec.offset + rel,
                    length,
                    blob[:length],
                    Source(name, json_path=sym),
                )
            )
    if res.entries:
        return res
    if got is None:
        res.gaps.append(
            Gap(
                "no_symtab",
                "host library has no .symtab (stripped): scanned .sk.kernel for ELF headers",
                Source(name),
            )
        )
    pos = 0
    while True:
        at = sec_bytes.find(ELF_MAGIC, pos)
        if at < 0:
            break
        length = elf_length(sec_bytes, at)
        if length is None:
            res.unrecognized.append(
                Unrecognized(
                    Source(name, json_path=f"{SK_KERNEL_SECTION}@0x{at:x}"),
                    sec_bytes[at : at + 16].hex(" "),
                    "hostlib:scan",
                )
            )
            pos = at + 4
            continue
        res.entries.append(
            EmbeddedElf(
                name,
                None,
                None,
                "scan",
                sec.offset + at,
                length,
                sec_bytes[at : at + length],
                Source(name, json_path=f"{SK_KERNEL_SECTION}@0x{at:x}"),
            )
        )
        pos = at + length
    if not res.entries:
        res.gaps.append(Gap("no_embedded_elf", f"no ELF found in {SK_KERNEL_SECTION}", Source(name)))
    return res
