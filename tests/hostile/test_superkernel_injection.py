"""Issue 14 class 3: values from child JSON never reach generated C++ unchecked.

Each case takes the bundled two-child description, plants one hostile value where the generator
would print it (a comment, an ``extern "C"`` declaration, a call), and expects exit 3 naming the JSON
path, with nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superkernel"
INJECT = "k\n#include </etc/passwd>\n//"


def _edit(tmp_path: Path, change: dict[str, object]) -> Path:
    work = tmp_path / "sk"
    shutil.copytree(EXAMPLE, work)
    child = work / "inputs" / "swiglu.json"
    doc = json.loads(child.read_text())
    for dotted, value in change.items():
        node = doc
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    child.write_text(json.dumps(doc))
    return work / "ops.json"


@pytest.mark.parametrize(
    ("field", "path_in_message"),
    [
        ("kernelName", "kernelName"),
        ("sub_operator_kernel_name.AiCore.func_name", "sub_operator_kernel_name.AiCore.func_name"),
    ],
)
def test_hostile_names_are_refused_with_their_json_path(
    tmp_path: Path, field: str, path_in_message: str
) -> None:
    doc = json.loads((EXAMPLE / "inputs" / "swiglu.json").read_text())
    if field.startswith("sub_operator_kernel_name") and "AiCore" not in doc["sub_operator_kernel_name"]:
        field = f"sub_operator_kernel_name.{next(iter(doc['sub_operator_kernel_name']))}.func_name"
        path_in_message = field
    ops = _edit(tmp_path, {field: INJECT})
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["codegen", "superkernel", str(ops), "-o", str(out)])
    assert res.exit_code == 3, res.output
    assert path_in_message in res.stderr and "C identifier" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1  # the newline in the value is not echoed raw
    assert not out.exists()


def test_a_plain_identifier_still_generates(tmp_path: Path) -> None:
    ops = _edit(tmp_path, {"kernelName": "swiglu_custom_1"})
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["codegen", "superkernel", str(ops), "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    source = next(out.glob("*.cpp")).read_text()
    assert "swiglu_custom_1" in source and "#include </etc/passwd>" not in source
