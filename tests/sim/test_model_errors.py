"""Bad model input: every refusal is a SimError naming the file and the JSON path (exit 3 in the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.sim import SimError, load_model, write_scene
from skdbg.sim.models import synthetic, write_model

SOURCE = """import torch
import torch_npu


def forward(x0, side):
    ev = torch.npu.Event()
    torch.npu.super_kernel_scope_begin("s")
    x1 = torch_npu.npu_add(x0)
    ev.record()
    ev.wait(side)
    x2 = torch_npu.npu_mul(x1)
    torch.npu.super_kernel_scope_end("s")
    return x2
"""


def _good() -> dict[str, Any]:
    return {
        "ops": [
            {"name": "add", "op_type": "Add", "kernel_type": "AIV", "line": 8},
            {"name": "rec", "kind": "notify", "event": 3, "line": 9},
            {"name": "wait", "kind": "wait", "event": 3, "stream": 1, "line": 10},
            {"name": "mul", "op_type": "Mul", "kernel_type": "AIC", "stream": 1, "line": 11},
        ],
        "fault": {"kind": "fused", "op": "mul"},
    }


def _write(tmp: Path, doc: Any, source: str = SOURCE) -> Path:
    d = tmp / "m"
    (d / "src").mkdir(parents=True, exist_ok=True)
    (d / "model.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    (d / "src" / "model.py").write_text(source)
    return d


def test_the_good_model_loads(tmp_path: Path) -> None:
    m = load_model(_write(tmp_path, _good()))
    assert [o.name for o in m.ops] == ["add", "rec", "wait", "mul"]
    assert [o.node_id for o in m.ops] == [100, 101, 102, 103]
    assert m.op_named("mul").kernel_type == "AIC_ONLY" and m.op_named("mul").block_dim == 24
    assert m.fault.kind == "fused" and m.fault.op == "mul"


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    cur: Any = doc
    keys = path.replace("[", ".").replace("]", "").split(".")
    for k in keys[:-1]:
        cur = cur[int(k)] if k.isdigit() else cur[k]
    last = keys[-1]
    if value is _DEL:
        del cur[int(last) if last.isdigit() else last]
    elif last.isdigit():
        cur[int(last)] = value
    else:
        cur[last] = value
    return doc


_DEL = object()

CASES = [
    ("ops[3].stream", -1, "ops[3].stream"),
    ("ops[0].kernel_type", "VEC", "ops[0].kernel_type"),
    ("ops[0].block_dim", 0, "ops[0].block_dim"),
    ("ops[0].block_dim", True, "ops[0].block_dim"),
    ("ops[0].line", _DEL, "ops[0].line"),
    ("ops[0].line", 99, "ops[0].line"),
    ("ops[0].line", 4, "ops[0].line"),  # a blank line, not a statement
    ("ops[0].line", 7, "ops[0].line"),  # a scope marker emits no graph node
    ("ops[0].line", 5, "ops[0].line"),  # the def line: a compound statement
    ("schema", "skdbg.sim.model/2", "schema"),
    ("ops[0].collective", True, "ops[0].collective"),  # Add is no communication kernel
    ("ops[0].op_type", "Add-1", "ops[0].op_type"),
    ("ops[1].event", _DEL, "ops[1].event"),
    ("ops[1].kernel_type", "AIV", "ops[1].kernel_type"),
    ("ops[0].event", 3, "ops[0].event"),
    ("ops[2].kind", "barrier", "ops[2].kind"),
    ("ops[2].event", 4, "ops[2].event"),  # a wait nobody notifies
    ("ops[3].name", "add", "ops[3].name"),
    ("ops[0].colour", "red", "ops[0].colour"),
    ("fault.op", "nope", "fault.op"),
    ("fault.kind", "explode", "fault.kind"),
    ("fault.op", "rec", "fault.op"),  # a fused fault hits a kernel
    ("model_id", "48", "model_id"),
    ("ops", [], "ops"),
]


@pytest.mark.parametrize(("where", "value", "field"), CASES)
def test_bad_field_names_file_and_path(tmp_path: Path, where: str, value: Any, field: str) -> None:
    d = _write(tmp_path, _set(_good(), where, value))
    with pytest.raises(SimError) as info:
        load_model(d)
    assert info.value.field == field
    assert info.value.path == d / "model.json"
    assert str(info.value).startswith(f"{d / 'model.json'}: {field}: ")


def test_a_communication_op_type_is_a_collective(tmp_path: Path) -> None:
    doc = _good()
    doc["ops"][0]["op_type"] = "MatmulAllReduce"
    assert load_model(_write(tmp_path, doc)).op_named("add").collective
    doc["ops"][0]["collective"] = False
    with pytest.raises(SimError) as info:
        load_model(_write(tmp_path, doc))
    assert info.value.field == "ops[0].collective"


def test_fault_pairs_and_probability(tmp_path: Path) -> None:
    d = _write(tmp_path, _good())
    for fault, field in [
        ({"kind": "interaction", "ops": ["add"]}, "fault.ops"),
        ({"kind": "interaction", "ops": ["add", "ghost"]}, "fault.ops[1]"),
        ({"kind": "flaky", "op": "add", "probability": 0}, "fault.probability"),
        ({"kind": "flaky", "op": "add", "probability": 1.5}, "fault.probability"),
        ({"kind": "fused", "op": "add", "probability": 0.5}, "fault.probability"),
        ({"kind": "unmatched_wait", "op": "add"}, "fault.op"),
        ({"kind": "circular_wait", "ops": ["add", "mul"]}, "fault.ops"),  # add is AIV, mul AIC: wrong way
        ({"kind": "syncall_mismatch", "op": "wait"}, "fault.op"),  # a SyncAll follows a kernel, not a wait
    ]:
        with pytest.raises(SimError) as info:
            load_model(d, fault=fault)
        assert info.value.field == field, fault


def test_malformed_json_and_missing_files(tmp_path: Path) -> None:
    d = _write(tmp_path, '{"ops": [')
    with pytest.raises(SimError) as info:
        load_model(d)
    assert info.value.path == d / "model.json" and "line 1" in str(info.value)
    with pytest.raises(SimError):
        load_model(tmp_path / "absent")
    d2 = _write(tmp_path / "x", _good(), source="def broken(:\n")
    with pytest.raises(SimError) as info:
        load_model(d2)
    assert info.value.path == d2 / "src" / "model.py"


def test_toml_model_is_accepted(tmp_path: Path) -> None:
    d = tmp_path / "t"
    (d / "src").mkdir(parents=True)
    (d / "src" / "model.py").write_text(SOURCE)
    (d / "model.toml").write_text(
        '[[ops]]\nname = "add"\nop_type = "Add"\nkernel_type = "AIV"\nline = 8\n'
        '[[ops]]\nname = "mul"\nop_type = "Mul"\nkernel_type = "AIV"\nline = 11\n'
        '[fault]\nkind = "fused"\nop = "mul"\n'
    )
    m = load_model(d)
    assert [o.name for o in m.ops] == ["add", "mul"] and m.fault.op == "mul"
    (d / "model.toml").write_text('[[ops]]\nname = "add"\nop_type = "Add"\nkernel_type = "AIV"\nline = "8"\n')
    with pytest.raises(SimError) as info:
        load_model(d)
    assert info.value.path == d / "model.toml" and info.value.field == "ops[0].line"


def test_fault_json_next_to_the_model_overrides(tmp_path: Path) -> None:
    d = _write(tmp_path, _good())
    (d / "fault.json").write_text('{"kind": "operator", "op": "ghost"}')
    with pytest.raises(SimError) as info:
        load_model(d)
    assert info.value.path == d / "fault.json" and info.value.field == "$.op"


def test_an_edited_source_that_lost_a_statement_is_refused(tmp_path: Path) -> None:
    m = load_model(_write(tmp_path, _good()))
    edited = tmp_path / "edited.py"
    edited.write_text(SOURCE.replace("    x2 = torch_npu.npu_mul(x1)\n", ""))
    with pytest.raises(SimError) as info:
        write_scene(m, tmp_path / "s", source=edited)
    assert info.value.field == "ops[3].line" and info.value.path == edited
    assert not (tmp_path / "s").exists()  # nothing half-written
    unbalanced = tmp_path / "unbalanced.py"
    unbalanced.write_text(SOURCE.replace('    torch.npu.super_kernel_scope_end("s")\n', ""))
    with pytest.raises(SimError) as info:
        write_scene(m, tmp_path / "s", source=unbalanced)
    assert "never closed" in str(info.value)


def test_cli_exit_3_names_file_and_field(tmp_path: Path) -> None:
    d = _write(tmp_path, _set(_good(), "ops[3].stream", "one"))
    res = CliRunner().invoke(main, ["sim", str(d), "-o", str(tmp_path / "out")])
    assert res.exit_code == 3
    assert f"{d / 'model.json'}: ops[3].stream: expected an integer" in res.stderr
    assert not (tmp_path / "out").exists()
    fault = tmp_path / "fault.json"
    fault.write_text('{"kind": "fused", "op": "nobody"}')
    res = CliRunner().invoke(main, ["sim", str(_write(tmp_path / "g", _good())), "-o", str(tmp_path / "o2"),
                                    "--fault", str(fault)])  # fmt: skip
    assert res.exit_code == 3 and f"{fault}: $.op: 'nobody' is not an op of the model" in res.stderr


def test_cli_writes_a_scene_and_the_sk_source_outside_it(tmp_path: Path) -> None:
    doc, src = synthetic(6, 2, "fused", streams=2)
    d = write_model(tmp_path / "m", doc, src)
    res = CliRunner().invoke(
        main,
        ["sim", str(d), "-o", str(tmp_path / "scene"), "--seed", "4", "--dialect", "D3",
         "--debug", "debug_op_exec_trace=1", "--sk-source", str(tmp_path / "jit")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "device_fault" in res.stdout and (tmp_path / "scene" / "run.json").is_file()
    run = json.loads((tmp_path / "scene" / "run.json").read_text())
    assert run["candidate"]["super_kernel_debug_options"] == {"debug_op_exec_trace": 1}
    (cpp,) = list((tmp_path / "jit").iterdir())
    text = cpp.read_text()
    assert cpp.name.endswith(f"_{run['pid']}_kernel.cpp") and ".ascend.meta." in text
    assert not list((tmp_path / "scene").rglob("*.cpp"))  # the JIT source has no place in an AOT scene
    bad = CliRunner().invoke(main, ["sim", str(d), "-o", str(tmp_path / "x"), "--debug", "novalue"])
    assert bad.exit_code == 2
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x")
    refused = CliRunner().invoke(main, ["sim", str(d), "-o", str(tmp_path / "y"), "--sk-source", str(busy)])
    assert refused.exit_code == 2 and not (tmp_path / "y").exists()  # refused before the scene is written
