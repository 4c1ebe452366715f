"""aggregate and the standalone compare project (codegen.md Part 3 items 32, 36–38)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main


def _adapted(tmp_path: Path, entry: str) -> Path:
    asset = tmp_path / f"asset_{entry}"
    asset.mkdir()
    (asset / f"{entry}.asc").write_text(
        f'#include "kernel_operator.h"\nextern "C" __global__ __aicore__ __vector__ void {entry}(GM_ADDR x, uint32_t n)\n{{\n}}\n'
    )
    out = tmp_path / f"out_{entry}"
    res = CliRunner().invoke(main, ["codegen", "adapt", str(asset), "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_item32_aggregate(tmp_path: Path) -> None:
    a, b = _adapted(tmp_path, "op_a"), _adapted(tmp_path, "op_b")
    runner = CliRunner()
    res = runner.invoke(
        main,
        ["codegen", "aggregate", str(a), str(b), "-o", str(tmp_path / "agg"), "--wheel-name", "my-wheel"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {
        "status": "completed",
        "package_name": "my-wheel",
        "package_version": "0.1.0",
        "entries": 2,
    }
    tree = tmp_path / "agg" / "operator-sk-adapted"
    pyb = (tree / "csrc" / "pybind11.asc").read_text()
    assert '"run_op_a"' in pyb and '"run_op_b"' in pyb and "#define TORCH_EXTENSION_NAME my_wheel_lib" in pyb
    assert (tree / "csrc" / "pybind11_op_a.asc").is_file() and (tree / "csrc" / "pybind11_op_b.asc").is_file()
    assert (tree / "my_wheel" / "__init__.py").is_file()
    m = json.loads((tmp_path / "agg" / "operator-sk-adapted.json").read_text())
    assert m["aggregate"] is True and m["pybind_module"] == "my_wheel_lib"
    # duplicates, non-completed input and a non-empty output are refused
    res = runner.invoke(main, ["codegen", "aggregate", str(a), str(a), "-o", str(tmp_path / "dup")])
    assert res.exit_code == 2 and "duplicate kernel entry across adapted outputs: op_a" in res.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "operator-sk-adapted.json").write_text(json.dumps({"status": "needs-human"}))
    res = runner.invoke(main, ["codegen", "aggregate", str(bad), "-o", str(tmp_path / "x")])
    assert res.exit_code == 2 and "adapted output is not completed" in res.stderr
    res = runner.invoke(main, ["codegen", "aggregate", str(a), "-o", str(tmp_path / "agg")])
    assert res.exit_code == 2 and "not empty" in res.stderr


def _compare(tmp_path: Path, *args: str, name: str = "cmp") -> tuple[int, dict[str, object], Path]:
    agg = _adapted(tmp_path, "op_a") if not (tmp_path / "out_op_a").exists() else tmp_path / "out_op_a"
    res = CliRunner().invoke(main, ["codegen", "compare", str(agg), "-o", str(tmp_path / name), *args])
    m = json.loads((tmp_path / name / "operator-sk-standalone-verify.json").read_text())
    return res.exit_code, m, tmp_path / name / "operator-sk-standalone-verify"


def test_item36_target_arch(tmp_path: Path) -> None:
    code, m, d = _compare(tmp_path, name="none")
    assert code == 5  # needs-target-arch is not a success
    assert m["status"] == "needs-target-arch" and m["reason"] == "missing-npu-arch-and-target-chip"
    assert not (d / "CMakeLists.txt").exists() and (d / "runtime_compare.asc").is_file()
    code, m, d = _compare(tmp_path, "--target-chip", "Ascend910B2", name="b2")
    assert code == 0 and m["status"] == "generated" and m["npu_arch"] == "dav-2201"
    assert "--npu-arch=dav-2201" in (d / "CMakeLists.txt").read_text()
    code, m, _d = _compare(tmp_path, "--target-chip", "ascend310p", name="p")
    assert code == 5 and m["reason"] == "unsupported-target-chip"


def test_item36_several_sources_get_one_program_each(tmp_path: Path) -> None:
    a, b = _adapted(tmp_path, "op_a"), _adapted(tmp_path, "op_b")
    CliRunner().invoke(main, ["codegen", "aggregate", str(a), str(b), "-o", str(tmp_path / "agg")])
    res = CliRunner().invoke(
        main,
        ["codegen", "compare", str(tmp_path / "agg"), "-o", str(tmp_path / "c"), "--npu-arch", "dav-2201"],
    )
    assert res.exit_code == 0, res.output
    d = tmp_path / "c" / "operator-sk-standalone-verify"
    assert (d / "runtime_compare_op_a.asc").is_file() and (d / "runtime_compare_op_b.asc").is_file()
    res = CliRunner().invoke(main, ["codegen", "compare", str(tmp_path / "agg"), "-o", str(tmp_path / "c")])
    assert res.exit_code == 2 and "already exists" in res.stderr


def test_item37_fixtures(tmp_path: Path) -> None:
    _code, m, d = _compare(tmp_path, "--npu-arch", "dav-2201", name="nofx")
    fx = m["runtime_fixtures"]["op_a"]  # type: ignore[index]
    assert fx["device_runnable"] is False
    src = (d / "runtime_compare.asc").read_text()
    assert 'r.status = "skipped-insufficient-runtime-spec";' in src
    fixtures = tmp_path / "fixtures" / "op_a"
    fixtures.mkdir(parents=True)
    plan = {
        "block_dim": 4,
        "parameters": [
            {"name": "x", "kind": "device_buffer", "bytes": 64, "fill": 1, "compare": True},
            {"name": "n", "kind": "scalar", "value": 16},
        ],
    }
    (fixtures / "operator-sk-runtime-fixture.json").write_text(json.dumps(plan))
    _code, m, d = _compare(
        tmp_path, "--npu-arch", "dav-2201", "--runtime-fixture-dir", str(tmp_path / "fixtures"), name="fx"
    )
    assert m["runtime_fixtures"]["op_a"]["device_runnable"] is True  # type: ignore[index]
    src = (d / "runtime_compare.asc").read_text()
    assert (
        "aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)" in src
        and "aclskOptimize(model_ri, nullptr)" in src
    )
    assert "op_a<<<blockDim, nullptr, stream>>>((uint8_t *)(x), n);" in src
    plan["parameters"] = plan["parameters"][:1]
    (fixtures / "operator-sk-runtime-fixture.json").write_text(json.dumps(plan))
    _code, m, _d = _compare(
        tmp_path, "--npu-arch", "dav-2201", "--runtime-fixture-dir", str(tmp_path / "fixtures"), name="fx2"
    )
    assert "missing parameters: ['n']" in m["runtime_fixtures"]["op_a"]["reason"]  # type: ignore[index]


def test_item38_program_default(tmp_path: Path) -> None:
    _code, _m, d = _compare(tmp_path, "--npu-arch", "dav-2201", name="p")
    src = (d / "runtime_compare.asc").read_text()
    assert (
        '{\\"backend\\":\\"standalone\\",\\"status\\":\\"skipped-no-npu\\",\\"outputs\\":{},\\"calls\\":{},\\"statuses\\":{}}'
        in src
    )


@pytest.mark.parametrize("value", ['1; system("x")', "abc"])
def test_fixture_literals_cannot_inject(tmp_path: Path, value: str) -> None:
    fixtures = tmp_path / "fixtures" / "op_a"
    fixtures.mkdir(parents=True)
    plan = {
        "parameters": [
            {"name": "x", "kind": "device_buffer", "bytes": 8, "compare": True},
            {"name": "n", "kind": "literal", "value": value},
        ]
    }
    (fixtures / "operator-sk-runtime-fixture.json").write_text(json.dumps(plan))
    _code, m, d = _compare(
        tmp_path, "--npu-arch", "dav-2201", "--runtime-fixture-dir", str(tmp_path / "fixtures")
    )
    assert m["runtime_fixtures"]["op_a"]["device_runnable"] is False  # type: ignore[index]
    assert "system" not in (d / "runtime_compare.asc").read_text()


def test_conflicting_support_headers(tmp_path: Path) -> None:
    (tmp_path / "a" / "x").mkdir(parents=True)
    (tmp_path / "a" / "y").mkdir()
    for sub, body in (("x", "int a;"), ("y", "int b;")):
        (tmp_path / "a" / sub / "util.h").write_text(body + "\n")
        (tmp_path / "a" / sub / f"k_{sub}.asc").write_text(
            f'#include "util.h"\n#include "kernel_operator.h"\n__global__ __vector__ void k_{sub}(GM_ADDR x) {{}}\n'
        )
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 4
    m = json.loads((tmp_path / "o" / "operator-sk-adapted.json").read_text())
    assert m["escalations"][0]["rule_id"] == "codegen.support-file-conflict"
    assert "csrc/util.h" in m["escalations"][0]["message"]
