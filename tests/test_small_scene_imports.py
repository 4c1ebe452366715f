"""A small scene's ``analyze`` loads only what its artifacts need (issue 18: small scenes <= 0.4 s).

Why: on a bundled scene nearly all of ``skdbg analyze`` is Python imports. numpy (about a third of
them) is needed only by an ELF symbol table or a plog block over 1 MiB, pyelftools only by an ELF
with extended section numbering or when ``e_type``/``e_machine`` are asked for. Each probe runs in a
fresh interpreter so modules imported by other tests cannot hide a violation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_scene_with_elf_lookups_loads_numpy_but_not_pyelftools_or_numpy_ma() -> None:
    """high-single-stream resolves PCs in its kernels' ELFs: numpy is used, pyelftools and numpy.ma
    are not (the header is unpacked with struct; the range index sorts without np.unique)."""
    doc = _probe("high-single-stream")
    assert doc["numpy"] is True
    assert doc["elftools"] is False and doc["numpy.ma"] is False
