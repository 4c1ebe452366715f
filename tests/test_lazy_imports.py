"""Heavy libraries load only on the paths that use them (issue 18 item 1).

Why: about 90% of a small ``skdbg analyze`` was Python imports, pandas above all. pandas belongs to the
output edge (``inspect``, ``symbolize``, ``--format csv``), jinja2 to report/markdown rendering and
codegen, textual to the TUI. Each probe runs in a fresh interpreter so modules imported by other tests
cannot hide a violation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "high-single-stream"

_PROBE = """
import json, sys
from click.testing import CliRunner
from skdbg.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
roots = {m.split(".")[0] for m in sys.modules}
print(json.dumps({"exit": result.exit_code, "output": result.output[:300],
                  "loaded": sorted(roots & {"pandas", "jinja2", "textual", "numpy"}),
                  "codegen": sorted(m for m in sys.modules if m.startswith("skdbg.codegen")),
                  "tui": sorted(m for m in sys.modules if m.startswith("skdbg.tui.") and m != "skdbg.tui.cli")}))
"""


def _loaded(*args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=True, cwd=REPO
    )
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0, doc["output"]
    return doc


def test_analyze_json_loads_neither_pandas_nor_jinja2_nor_textual() -> None:
    doc = _loaded("analyze", str(SCENE), "--format", "json")
    assert doc["loaded"] == [], doc  # numpy neither: its kernel ELFs are small (parsers/elf_scalar.py)
    assert doc["codegen"] == [] and doc["tui"] == []


def test_help_loads_no_heavy_library() -> None:
    doc = _loaded("--help")
    assert doc["loaded"] == [] and doc["codegen"] == [] and doc["tui"] == []


def test_csv_output_still_builds_frames() -> None:
    """The probe can see pandas: the output edge really loads it (the negative tests are not vacuous)."""
    doc = _loaded("inspect", str(SCENE), "--table", "cores", "--format", "csv")
    assert "pandas" in doc["loaded"]  # type: ignore[operator]
    assert str(doc["output"]).startswith("incident,callback,order,core_id")
