"""aclgraph-canonical package and multi-arch rules (codegen.md Part 3 items 27–29, 33–35)."""

from __future__ import annotations

import importlib.machinery
import json
import runpy
import shutil
from pathlib import Path
from typing import Any

import pytest

from skdbg.codegen.adapt import AdaptOptions, adapt_asset
from skdbg.codegen.arch import chip_to_arch
from skdbg.codegen.contract import load_contract

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"


def _adapt(tmp_path: Path, src: str, contract: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    (tmp_path / "asset").mkdir(exist_ok=True)
    (tmp_path / "asset" / "k.asc").write_text(src)
    (tmp_path / "io.json").write_text(json.dumps(contract))
    m = adapt_asset(
        tmp_path / "asset", tmp_path / "out", AdaptOptions(contract=load_contract(tmp_path / "io.json"))
    )
    return m, tmp_path / "out" / "operator-sk-adapted"


SRC = (
    '#include "kernel_operator.h"\n'
    "struct TilingData { uint32_t n; };\n"
    'extern "C" __global__ __aicore__ __vector__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,'
    " uint8_t a, int16_t b, uint32_t c, half h, float f, bool flag, TilingData tiling, GM_ADDR bias)\n{\n}\n"
)
CONTRACT = {
    "entries": {
        "add_custom": {
            "inputs": ["x", "y", "bias"],
            "outputs": ["z"],
            "parameters": {"tiling": "host_struct", "bias": {"kind": "tensor", "nullable": True}},
            "launch": {"block_dim": 8},
        }
    }
}


def test_item27_layout(tmp_path: Path) -> None:
    m, tree = _adapt(tmp_path, SRC, CONTRACT)
    assert m["status"] == "completed", m["escalations"]
    assert m["pybind_layout"] == "aclgraph-canonical" and m["pybind_module"] == "add_custom_sk_pkg_lib"
    for rel in (
        "k.asc",
        "csrc/add_custom.asc",
        "csrc/pybind11.asc",
        "csrc/pybind11_add_custom.asc",
        "op_extension/__init__.py",
        "op_extension/_arch_selector.py",
        "op_extension/_torch_library.py",
        "setup.py",
    ):
        assert (tree / rel).is_file(), rel
    for py in tree.rglob("*.py"):
        compile(py.read_text(), str(py), "exec")


def test_item28_wrapper(tmp_path: Path) -> None:
    _m, tree = _adapt(tmp_path, SRC, CONTRACT)
    text = (tree / "csrc" / "add_custom.asc").read_text()
    assert text.startswith("#include <pybind11/pybind11.h>\n")
    assert (
        "at::Tensor run_add_custom(const at::Tensor &x, const at::Tensor &y, const at::Tensor &z, uint8_t a, "
        "int16_t b, uint32_t c, half h, float f, bool flag, const std::vector<int64_t> &tiling, "
        "const pybind11::object &bias)"
    ) in text
    assert "uint32_t blockDim = 8;" in text
    assert (
        "add_custom<<<blockDim, nullptr, acl_stream>>>((uint8_t *)(x.mutable_data_ptr()), "
        "(uint8_t *)(y.mutable_data_ptr()), (uint8_t *)(z.mutable_data_ptr()), a, b, c, h, f, flag, "
        "tiling_host, bias_ptr);"
    ) in text
    assert "    return z;\n" in text
    assert (
        'm.def("run_add_custom", &ascendc_ops::run_add_custom' in (tree / "csrc" / "pybind11.asc").read_text()
    )


def test_item29_torch_schema(tmp_path: Path) -> None:
    _m, tree = _adapt(tmp_path, SRC, CONTRACT)
    lib = (tree / "op_extension" / "_torch_library.py").read_text()
    assert (
        "add_custom(Tensor x, Tensor y, Tensor z, int a, int b, int c, int h, float f, bool flag, "
        "int[] tiling, Tensor? bias) -> Tensor"
    ) in lib


def _setup(tmp_path: Path) -> dict[str, Any]:
    _m, tree = _adapt(tmp_path, "__global__ __vector__ void add_custom(GM_ADDR x) {}\n", {"entries": {}})
    return runpy.run_path(str(tree / "setup.py"), run_name="skdbg_test")


def test_item33_build_arch_selection(tmp_path: Path) -> None:
    g = _setup(tmp_path)
    assert g["get_npu_arches"]({"SK_NPU_ARCHS": "dav-2201;DAV_3510"}) == ["dav-2201", "dav-3510"]
    plan = g["extension_plan"](["dav-2201", "dav-3510"])
    assert [p[0] for p in plan] == ["op_extension.add_custom_dav_2201", "op_extension.add_custom_dav_3510"]
    assert g["get_npu_arches"]({"SK_TARGET_CHIPS": "Ascend910B2"}) == ["dav-2201"]
    with pytest.raises(RuntimeError, match="Unsupported SK_TARGET_CHIPS values: ascend310p"):
        g["get_npu_arches"]({"SK_TARGET_CHIPS": "ascend310p"})
    with pytest.raises(RuntimeError, match="No NPU arch specified"):
        g["get_npu_arches"]({}, None)
    with pytest.raises(RuntimeError, match="SK_NPU_ARCHS is set but contains no valid"):
        g["get_npu_arches"]({"SK_NPU_ARCHS": " ; "})


def test_item34_runtime_arch_selection(tmp_path: Path) -> None:
    _m, tree = _adapt(tmp_path, "__global__ __vector__ void add_custom(GM_ADDR x) {}\n", {"entries": {}})
    pkg = tree / "op_extension"
    g = runpy.run_path(str(pkg / "_arch_selector.py"), run_name="skdbg_test")
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    (pkg / f"add_custom_dav_2201{ext}").write_bytes(b"")
    available = g["available_arches"](str(pkg))
    assert available == ["dav-2201"]
    with pytest.raises(
        RuntimeError,
        match=r"Requested SK_ACLGRAPH_NPU_ARCH='dav-3510' is not packaged. Available arches: dav-2201\.",
    ):
        g["select_arch"](available, "dav-3510")
    assert g["select_arch"](["dav-3510"], None, 260) == "dav-3510"
    with pytest.raises(
        RuntimeError, match="Unable to select"
    ):  # one module packaged, SoC unmapped: no fallback
        g["select_arch"](available, None, "Ascend310P3")


@pytest.mark.parametrize(
    ("chip", "arch"),
    [
        ("Ascend910B1", "dav-2201"),
        ("ascend-910b", "dav-2201"),
        ("220", "dav-2201"),
        ("Ascend950PR", "dav-3510"),
        ("260", "dav-3510"),
        ("ascend310p", None),
    ],
)
def test_item35_chip_to_arch_same_in_python_and_generated(
    tmp_path: Path, chip: str, arch: str | None
) -> None:
    assert chip_to_arch(chip) == arch
    assert _setup(tmp_path)["chip_to_arch"](chip) == arch


def test_needs_human_asset_writes_no_canonical_tree(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    shutil.copy(DATA / "my_op.asc", tmp_path / "a" / "my_op.asc")
    m = adapt_asset(tmp_path / "a", tmp_path / "o", AdaptOptions())
    assert m["status"] == "needs-human" and m["pybind_layout"] is None
    assert not (tmp_path / "o" / "operator-sk-adapted").exists()


def test_runtime_wrapper_is_copied_and_bound(tmp_path: Path) -> None:
    (tmp_path / "asset").mkdir()
    (tmp_path / "asset" / "pybind11_wrap.cpp").write_text(
        '#include "wrap_util.h"\nat::Tensor my_wrap(const at::Tensor &xs, const at::Tensor &y) { return y; }\n'
    )
    (tmp_path / "asset" / "wrap_util.h").write_text("#pragma once\n")
    src = '#include "kernel_operator.h"\n__global__ __vector__ void lk(GM_ADDR xs, GM_ADDR y) {}\n'
    contract = {
        "entries": {
            "lk": {
                "inputs": ["xs"],
                "outputs": ["y"],
                "parameters": {"xs": "tensor_list"},
                "runtime_wrapper": {
                    "source": "pybind11_wrap.cpp",
                    "entry": "my_wrap",
                    "tensor_list_descriptor_strategy": "prepared_workspace_tail",
                    "prepare_entry": "prep",
                    "descriptor_bytes": 64,
                    "descriptor_order": ["xs"],
                },
            }
        }
    }
    m, tree = _adapt(tmp_path, src, contract)
    assert m["status"] == "completed", m["escalations"]
    assert (tree / "csrc" / "wrapper_pybind11_wrap.cpp").is_file() and (
        tree / "csrc" / "wrap_util.h"
    ).is_file()
    assert "&ascendc_ops::my_wrap" in (tree / "csrc" / "pybind11_lk.asc").read_text()
    assert "run_lk(" not in (tree / "csrc" / "lk.asc").read_text()
    g = runpy.run_path(str(tree / "setup.py"), run_name="skdbg_test")
    assert g["ENTRY_SPECS"][0]["extra_sources"] == ["csrc/wrapper_pybind11_wrap.cpp"]
    assert "lk(Tensor xs, Tensor y) -> Tensor" in (tree / "op_extension" / "_torch_library.py").read_text()


def test_runtime_wrapper_diagnostics(tmp_path: Path) -> None:
    from skdbg.codegen.adapt import adapt_text

    (tmp_path / "w.cpp").write_text("int other() { return 0; }\n")
    src = "__global__ __vector__ void lk(GM_ADDR xs, GM_ADDR y) {}\n"
    rw = {"source": "w.cpp", "entry": "my_wrap"}
    cases = [
        ({"source": "missing.cpp"}, "codegen.runtime-wrapper-source-missing"),
        (rw, "codegen.runtime-wrapper-entry-missing"),
    ]
    (tmp_path / "w2.cpp").write_text("void my_wrap() {}\n")
    rw2 = {"source": "w2.cpp", "entry": "my_wrap"}
    cases += [
        (rw2, "codegen.tensor-list-prepared-runtime-state-required"),
        (
            {**rw2, "tensor_list_descriptor_strategy": "prepared_workspace_tail", "descriptor_order": ["y"]},
            "codegen.tensor-list-descriptor-order-mismatch",
        ),
    ]
    for i, (wrapper, rule) in enumerate(cases):
        p = tmp_path / f"io{i}.json"
        p.write_text(
            json.dumps(
                {
                    "entries": {
                        "lk": {
                            "outputs": ["y"],
                            "inputs": ["xs"],
                            "parameters": {"xs": "tensor_list"},
                            "runtime_wrapper": wrapper,
                        }
                    }
                }
            )
        )
        _o, _m, escs, _r = adapt_text(src, "k.asc", AdaptOptions(contract=load_contract(p)), tmp_path)
        assert escs[0]["rule_id"] == rule, (i, escs)


def test_package_name_option(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skdbg.cli import main

    (tmp_path / "k.asc").write_text("__global__ __vector__ void k(GM_ADDR x) {}\n")
    res = CliRunner().invoke(
        main,
        ["codegen", "adapt", str(tmp_path / "k.asc"), "-o", str(tmp_path / "o"), "--package-name", "my-pkg"],
    )
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "o" / "operator-sk-adapted.json").read_text())
    assert (
        m["python_package"] == "my_pkg"
        and (tmp_path / "o" / "operator-sk-adapted" / "my_pkg" / "__init__.py").is_file()
    )
