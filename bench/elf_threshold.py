"""Benchmark: where the numpy-free symbol table stops paying off (``SCALAR_MAX_SYMBOLS``; issue 18).

Run as ``python bench/elf_threshold.py [N ...] [--samples 7]``. For each raw ``.symtab`` size N it builds
a kernel-like ELF (mangled names, 16-byte functions, every 7th a zero-size label, every 5th LOCAL) and
times, each in a fresh interpreter with the ELF headers already parsed, what ``skdbg analyze`` does with
one kernel ELF: build the table, 10 range lookups and 5 exact lookups. Three ways:

* ``scalar`` — :class:`skdbg.parsers.elf_scalar.ScalarSymbols` (struct + bisect);
* ``numpy`` — ``import numpy`` plus the numpy ``SymbolTable`` (what a process that has not loaded numpy pays);
* ``warm`` — the numpy ``SymbolTable`` with numpy already imported (the small path's worst case: a scene
  whose big plog loaded numpy anyway).

Prints min and median milliseconds per way and N.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from skdbg.scenebuilder.elf import SymSpec, build_elf, text_section

PROBE = r"""
import sys, time
from skdbg.parsers.elf import ElfImage
elf = ElfImage("k.o", open(sys.argv[1], "rb").read())
got = elf.symtab_bytes()
n = len(got[0]) // 24
offs = [0x10 * (n * k // 11) + 3 for k in range(10)]
if sys.argv[2] == "warm":
    import numpy
t0 = time.perf_counter()
if sys.argv[2] == "scalar":
    from skdbg.parsers.elf_scalar import ScalarSymbols
    table = ScalarSymbols(elf, *got)
else:
    import numpy
    table = elf.symbols
for o in offs:
    table.lookup(o)
for o in offs[:5]:
    table.lookup_exact(o - 3)
print(time.perf_counter() - t0)
"""


def kernel_elf(path: Path, n: int) -> None:
    """``n`` raw entries (the null entry included)."""
    syms = [
        SymSpec(
            f"_Z10kernel_{i}_fooILi{i}EEvv",
            0x10 * i,
            0x10 if i % 7 else 0,
            "LOCAL" if i % 5 == 0 else "GLOBAL",
        )
        for i in range(n - 1)
    ]
    path.write_bytes(build_elf([text_section(0x10 * n)], syms))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[64, 1024, 4096, 16384, 32768])
    ap.add_argument("--samples", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"k{n}.o"
            kernel_elf(path, n)
            cells = []
            for way in ("scalar", "numpy", "warm"):
                times = [
                    float(
                        subprocess.run(
                            [sys.executable, "-c", PROBE, str(path), way],
                            capture_output=True,
                            text=True,
                            check=True,
                        ).stdout
                    )
                    * 1000
                    for _ in range(args.samples)
                ]
                cells.append(f"{way} {min(times):6.2f}/{statistics.median(times):6.2f}")
            print(f"N={n:6d}  " + "  ".join(cells) + "  (ms min/median)", flush=True)


if __name__ == "__main__":
    main()
