"""A small scene's ``analyze`` loads only what its artifacts need (issue 18: small scenes <= 0.4 s).

Why: on a bundled scene nearly all of ``skdbg analyze`` is Python imports. numpy (about a third of
them) is needed only by a big ELF symbol table (over ``SCALAR_MAX_SYMBOLS`` raw entries; a kernel ELF
is answered in plain Python), ``skdbg symbolize`` or a plog block over 1 MiB, pyelftools only by an ELF
with extended section numbering or when ``e_type``/``e_machine`` are asked for. Each probe runs in a
fresh interpreter so modules imported by other tests cannot hide a violation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENES = REPO / "examples" / "scenes"

_PROBE = """
import json, sys
from click.testing import CliRunner
from skdbg.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
print(json.dumps({"exit": result.exit_code, "output": result.output[:300],
                  "numpy": "numpy" in sys.modules, "numpy.ma": "numpy.ma" in sys.modules,
                  "elftools": any(m.split(".")[0] == "elftools" for m in sys.modules),
                  "graph_json": "skdbg.parsers.graph_json" in sys.modules}))
"""


def _probe(scene: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, "analyze", str(SCENES / scene), "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0, doc["output"]
    return doc


def test_scene_without_elf_lookups_does_not_load_numpy() -> None:
    """non-sk-fault: a runtime fault outside any SK — no symbol table is read, its plog is 8 KB."""
    doc = _probe("non-sk-fault")
    assert doc == {**doc, "numpy": False, "elftools": False}


def test_scene_without_graph_files_does_not_load_their_parser() -> None:
    """No bundled scene has sk_graph_origin.json / sk_graph_updated.json: their parser (20 ms of
    dataclasses) stays unloaded."""
    assert _probe("high-single-stream")["graph_json"] is False


@pytest.mark.parametrize(
    "scene", ["high-single-stream", "aiv-fault-add-custom", "duplicate-symbol-medium", "event-bound-split"]
)
def test_scene_with_elf_lookups_loads_neither_numpy_nor_pyelftools(scene: str) -> None:
    """These scenes resolve PCs in their kernels' ELFs (a few dozen symbols each): the small-table
    path answers them with struct + bisect, so numpy is not imported at all (issue 18); the header
    is unpacked with struct, so pyelftools is not either."""
    doc = _probe(scene)
    assert (doc["numpy"], doc["numpy.ma"], doc["elftools"]) == (False, False, False)


_BIG_PROBE = """
import json, sys
from skdbg.parsers.elf import SCALAR_MAX_SYMBOLS, open_elf
from skdbg.scenebuilder.elf import SymSpec, text_section, write_elf
n = SCALAR_MAX_SYMBOLS + int(sys.argv[2])  # the null entry makes the raw count one more
syms = [SymSpec(f"f{i}", 0x10 * i, 0x10) for i in range(n - 1)]
path = write_elf(sys.argv[1], sections=[text_section(0x10 * n)], symbols=syms)
elf = open_elf(path)
assert elf.symbol_count() == n
match = elf.lookup(0x15)
print(json.dumps({"name": match.symbol.name, "numpy": "numpy" in sys.modules}))
"""


@pytest.mark.parametrize(("extra", "numpy"), [(0, False), (1, True)])
def test_threshold_decides_whether_a_lookup_imports_numpy(tmp_path: Path, extra: int, numpy: bool) -> None:
    """A .symtab of exactly SCALAR_MAX_SYMBOLS raw entries is looked up without numpy; one more
    entry and the numpy table is built."""
    out = subprocess.run(
        [sys.executable, "-c", _BIG_PROBE, str(tmp_path / "k.o"), str(extra)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"name": "f1", "numpy": numpy}


def test_symbolize_still_uses_the_numpy_table(tmp_path: Path) -> None:
    """``skdbg symbolize`` resolves many PCs at once: it keeps the vectorised table even for a small ELF."""
    from skdbg.scenebuilder.elf import SymSpec, text_section, write_elf

    path = write_elf(tmp_path / "k.o", sections=[text_section(0x100)], symbols=[SymSpec("k", 0x20, 0x40)])
    probe = _PROBE.replace('"graph_json"', '"symbolize_output": result.output, "graph_json"')
    out = subprocess.run(
        [sys.executable, "-c", probe, "symbolize", str(path), "0x30", "--format", "csv"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0, doc["output"]
    assert doc["numpy"] is True
    assert ",k," in doc["symbolize_output"]


_META_PROBE = """
import json, sys
from skdbg.parsers.ascend_meta import parse_ascend_meta
from skdbg.parsers.elf import ElfImage
from skdbg.scenebuilder.elf import ET_REL, RelaSpec, SymSpec, build_elf, meta_section, sk_bind_record, text_section
syms = [SymSpec("glob", 0, 0x100), SymSpec("var", 0x100, 0x80, "LOCAL")]
data = build_elf([text_section(0x200), meta_section([sk_bind_record(1, 0, [0])])], syms,
                 relocations={".ascend.meta": [RelaSpec(16, "glob"), RelaSpec(24, "var")]}, e_type=ET_REL)
(b,) = parse_ascend_meta(ElfImage("m.o", data)).bind_records
print(json.dumps({"names": [b.global_name, b.sknl_names[0]], "relocated": list(b.relocated_fields),
                  "numpy": "numpy" in sys.modules}))
"""


def test_bind_map_with_relocations_does_not_load_numpy() -> None:
    """ascend_meta resolves relocations (st_value by symbol index) and names (the exact rule) of a
    small ELF with struct: no numpy."""
    out = subprocess.run(
        [sys.executable, "-c", _META_PROBE], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "names": ["glob", "var"],
        "relocated": ["globalFunc", "sknlFunc[0]"],  # relocations only at record offsets 16 and 24
        "numpy": False,
    }
