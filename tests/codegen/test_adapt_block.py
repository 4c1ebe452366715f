"""Adaptation block and adapt flow (codegen.md Part 3 items 9–31) plus the hypothesis properties."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.atomic import TreeWriter
from skdbg.cli import main
from skdbg.codegen.adapt import AdaptOptions, adapt_asset, adapt_text, add_kernel_include
from skdbg.codegen.block import AdaptError, name_camel, plan_block
from skdbg.codegen.forms import classify
from skdbg.codegen.kerneltype import KernelTypeError, map_kernel_type_for_sk
from skdbg.codegen.reader import read_source

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"


def _adapt(src: str, **kw: object) -> str:
    """Block rendering without the IO-contract checks (those are tested through adapt_text below)."""
    out = src
    for e in reversed(read_source(src).entries):
        block = plan_block(e, **kw).text  # type: ignore[arg-type]
        out = out[: e.body_close + 1] + block + out[e.body_close + 1 :]
    return add_kernel_include(out)


@pytest.mark.parametrize(
    ("quals", "want"),
    [
        ("__mix__(1,0)", "__cube__"),
        ("__mix__(2, 0)", "__cube__"),
        ("__mix__(0,1)", "__vector__"),
        ("__mix__(0, 2)", "__vector__"),
        ("__mix__(1,2)", "__mix__(1, 2)"),
        ("__mix__(0,0)", "__mix__(0, 0)"),
        ("__mix__(C,V)", "__mix__(C, V)"),
        ("__global__ __mix__", "__mix__"),
        ("__aicore__ __vector__", "__vector__"),
        ("__global__ __aicore__", "__aicore__"),
    ],
)
def test_item9_kernel_type_map(quals: str, want: str) -> None:
    assert map_kernel_type_for_sk(quals) == want


def test_item9_global_only_fails_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(KernelTypeError):
        map_kernel_type_for_sk("__global__")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "g.asc").write_text("__global__ void g(GM_ADDR x) {}\n")
    m = adapt_asset(tmp_path / "a", tmp_path / "out", AdaptOptions())
    assert m["status"] == "needs-human"
    assert m["escalations"][0]["rule_id"] == "codegen.kernel-type-unmapped"
    assert not (tmp_path / "out" / "operator-sk-adapted").exists()


def test_item10_names() -> None:
    assert [name_camel(n) for n in ("my_op", "add_custom", "addCustom", "__k")] == [
        "MyOp",
        "AddCustom",
        "Addcustom",
        "K",
    ]


def test_item11_alignas() -> None:
    out = _adapt(
        "__global__ __vector__ void k(int8_t a, uint8_t b, int16_t c, uint16_t d, bool e, const bool *f,"
        " uint32_t g, GM_ADDR h, half i) {}"
    )
    for f in ("int8_t a", "uint8_t b", "int16_t c", "uint16_t d", "bool e", "const bool * f"):
        assert f"    alignas(4) {f};" in out
    for f in ("uint32_t g", "GM_ADDR h", "half i"):
        assert f"\n    {f};" in out


def test_item12_zero_params() -> None:
    out = _adapt("__global__ __vector__ void z() {}")
    assert "struct" not in out and "void z_sk()\n" in out
    assert "void z_sk(sk::SkSystemArgs *sysArgs)\n" in _adapt(
        "__global__ __vector__ void z(void) {}", with_sys_args="always"
    )


def test_item13_to_18_block_shape() -> None:
    src = (DATA / "my_op.asc").read_text()
    out = _adapt(src)
    e = read_source(src).entries[0]
    assert out[: e.body_close + 1] == src[: e.body_close + 1]  # item 18: original byte-identical
    block = out[e.body_close + 1 :]
    assert block.startswith("\n\n// ---- SK adaptation (auto-generated) ----\n")
    assert block.endswith("// ---- end SK adaptation ----\n\n")
    assert (
        "template<uint32_t splitidx>\n__sk__ __cube__ void my_op_sk(const MyOpArgs *args, sk::SkSystemArgs *sysArgs)\n{\n"
        in block
    )
    unpack = [
        "GM_ADDR x = args->x;",
        "GM_ADDR y = args->y;",
        "uint8_t flag = args->flag;",
        "int16_t k = args->k;",
    ]
    positions = [block.index(u) for u in unpack]
    assert positions == sorted(positions)
    assert "sysArgs->skNumBlocks" in block and "GetBlockNum" not in block  # item 14
    assert (
        "KERNEL_TASK_TYPE_DEFAULT" not in block and "KERNEL_TASK_TYPE_DEFAULT" in out[: e.body_close]
    )  # item 15
    assert (
        "        (void)inner;\n        inner.DestroyWithoutPipeAll();\n    }\n    pipe.DestroyWithoutPipeAll();\n}\n"
        in block
    )  # 16
    assert "SK_BIND(my_op, 4, my_op_sk<0>, my_op_sk<1>, my_op_sk<2>, my_op_sk<3>);" in block  # item 17


def test_item14_sys_args_modes() -> None:
    src = "__global__ __vector__ void k(uint32_t n) { n = AscendC::GetBlockNum(); }"
    assert "AscendC::GetBlockNum()" in _adapt(src, with_sys_args="never").split("SK adaptation")[1]
    assert "sysArgs" not in _adapt("__global__ __vector__ void k(uint32_t n) { }")
    assert "sk::SkSystemArgs *sysArgs" in _adapt(
        "__global__ __vector__ void k(uint32_t n) { }", with_sys_args="always"
    )


def test_item16_existing_destroy_prevents_insertion() -> None:
    out = _adapt("__global__ __vector__ void k() {\n    TPipe pipe;\n    pipe.DestroyWithoutPipeAll();\n}\n")
    assert out.split("SK adaptation")[1].count("DestroyWithoutPipeAll") == 1


def test_item17_splits_and_mask(tmp_path: Path) -> None:
    out = _adapt("__global__ __vector__ void k() {}", num_splits=2, mask=7)
    assert "SK_BIND(k, 7, k_sk<0>, k_sk<1>);" in out
    entry = read_source("__global__ __vector__ void k() {}").entries[0]
    for kw in ({"num_splits": 5}, {"mask": 9}):
        with pytest.raises(AdaptError):
            plan_block(entry, **kw)  # type: ignore[arg-type]
    (tmp_path / "k.asc").write_text("__global__ __vector__ void k() {}\n")
    res = CliRunner().invoke(
        main, ["codegen", "adapt", str(tmp_path / "k.asc"), "-o", str(tmp_path / "o"), "--num-splits", "5"]
    )
    assert res.exit_code == 2 and not (tmp_path / "o").exists()


def test_item19_include_added() -> None:
    assert _adapt("#include <cstdint>\n__global__ __vector__ void k() {}\n").startswith(
        '#include <cstdint>\n#include "kernel_operator.h"\n'
    )
    assert _adapt("__global__ __vector__ void k() {}\n").startswith('#include "kernel_operator.h"\n')


def _contract(tmp_path: Path, doc: object) -> AdaptOptions:
    from skdbg.codegen.contract import load_contract

    p = tmp_path / "io.json"
    p.write_text(json.dumps(doc))
    return AdaptOptions(contract=load_contract(p))


def test_item20_templated_kernel(tmp_path: Path) -> None:
    src = (DATA / "templated.asc").read_text()
    _out, _m, escs, _r = adapt_text(src, "t.asc", AdaptOptions(), tmp_path)
    assert "codegen.template-bind-target-required" in [e["rule_id"] for e in escs]
    opts = _contract(
        tmp_path, {"entries": {"tk": {"outputs": ["y"], "inputs": ["x"], "bind_target": "tk<half, 2>"}}}
    )
    out, meta, escs, _r = adapt_text(src, "t.asc", opts, tmp_path)
    assert out is not None, escs
    assert "template<typename T>\nstruct TkArgs {" in out
    assert (
        "template<typename T, int MODE, uint32_t splitidx>\n__sk__ __vector__ void tk_sk(const TkArgs<T> *args)"
        in out
    )
    assert (
        "SK_BIND(tk<half, 2>, 4, tk_sk<half, 2, 0>, tk_sk<half, 2, 1>, tk_sk<half, 2, 2>, tk_sk<half, 2, 3>);"
        in out
    )
    assert meta[0]["parameters"][2] == {"name": "alpha", "c_type": "half"}


def test_bind_target_cannot_inject(tmp_path: Path) -> None:
    src = (DATA / "templated.asc").read_text()
    opts = _contract(
        tmp_path,
        {"entries": {"tk": {"outputs": ["y"], "inputs": ["x"], "bind_target": "tk<half>; system(1)"}}},
    )
    with pytest.raises(AdaptError, match="must be 'tk<template arguments>'"):
        adapt_text(src, "t.asc", opts, tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t.asc").write_text(src)
    m = adapt_asset(tmp_path / "a", tmp_path / "o", opts)
    assert m["status"] == "needs-human" and m["escalations"][0]["rule_id"] == "codegen.adapt-invalid-input"


def test_item21_legacy_rename_recorded() -> None:
    out, _m, _e, rounds = adapt_text(
        "__global__ __vector__ void k() { skBlockNum; }", "k.asc", AdaptOptions(), Path(".")
    )
    assert out is not None and "skBlockNum" not in out and "skNumBlocks" in out
    assert rounds[0]["findings"][0]["rule_id"] == "codegen.inline-sys-args-api-current"
    assert rounds[0]["results"][0]["status"] == "applied"


def test_item22_two_tensors_without_contract_needs_human(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "k.asc").write_text("__global__ __vector__ void k(GM_ADDR x, GM_ADDR y) {}\n")
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 4  # needs-human is not a success (upstream exits 0)
    m = json.loads((tmp_path / "o" / "operator-sk-adapted.json").read_text())
    assert m["status"] == "needs-human"
    assert m["escalations"][0]["rule_id"] == "codegen.pybind-return-tensor-unresolved"
    assert not (tmp_path / "o" / "operator-sk-adapted").exists()


def _escalation(tmp_path: Path, src: str, entry: dict[str, object]) -> dict[str, object]:
    opts = _contract(tmp_path, {"entries": {"k": entry}})
    _o, _m, escs, _r = adapt_text(src, "k.asc", opts, tmp_path)
    return escs[0]


def test_item23_to_25_contract_diagnostics(tmp_path: Path) -> None:
    three = "__global__ __vector__ void k(GM_ADDR x, GM_ADDR y, GM_ADDR workspace) {}"
    e = _escalation(tmp_path, three, {"inputs": ["x"], "outputs": ["y"]})
    assert (
        e["rule_id"] == "codegen.io-contract-tensor-incomplete"
        and "undeclared_io_tensors=['workspace']" in e["evidence"]
    )
    e = _escalation(tmp_path, three, {"outputs": ["y"], "parameters": {"zz": "scalar"}})
    assert e["rule_id"] == "codegen.io-contract-parameter-invalid"
    e = _escalation(tmp_path, three, {"outputs": ["y"], "parameters": {"x": "host_struct"}})
    assert e["rule_id"] == "codegen.io-contract-parameter-kind-mismatch"
    e = _escalation(tmp_path, three, {"outputs": ["y"], "parameters": {"x": "tensor_list"}})
    assert e["rule_id"] == "codegen.tensor-list-runtime-wrapper-required"
    _o, _m, escs, _r = adapt_text(
        "__global__ __vector__ void k(GM_ADDR x, TilingData tiling) {}", "k.asc", AdaptOptions(), tmp_path
    )
    assert escs[0]["rule_id"] == "codegen.runtime-parameter-contract-required"


@pytest.mark.parametrize(
    ("doc", "msg"),
    [
        (None, "IO contract file not found"),
        ("{nope", "IO contract must be valid JSON"),
        ({"schema_version": 2, "entries": {}}, "unsupported IO contract schema_version: 2"),
        ({"entries": {"k": {"inputs": ["x"]}}}, "must declare pybind_return_tensor or exactly one output"),
        ({"entries": {"k": {"outputs": ["y"], "pybind_return_tensor": "z"}}}, "must be listed in outputs"),
    ],
)
def test_item26_contract_file_problems_exit_2(tmp_path: Path, doc: object, msg: str) -> None:
    (tmp_path / "k.asc").write_text("__global__ __vector__ void k(GM_ADDR x, GM_ADDR y) {}\n")
    c = tmp_path / "io.json"
    if doc is not None:
        c.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    res = CliRunner().invoke(
        main,
        ["codegen", "adapt", str(tmp_path / "k.asc"), "-o", str(tmp_path / "o"), "--io-contract", str(c)],
    )
    assert res.exit_code == 2 and msg in res.stderr


def test_item30_31_passthrough_and_rerun(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    src = "__global__ __vector__ void k() {}\n__sk__ __vector__ void k_sk() {}\nSK_BIND(k, 4, k_sk<0>);\n"
    (tmp_path / "a" / "k.asc").write_text(src)
    m = adapt_asset(tmp_path / "a", tmp_path / "o", AdaptOptions())
    assert m["per_file"][0]["status"] == "already_current" and m["per_file"][0]["entries"] == []
    assert (tmp_path / "o" / "operator-sk-adapted" / "k.asc").read_text() == src
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "adapted output already exists" in res.stderr


def test_successful_cli_adapt(tmp_path: Path) -> None:
    shutil.copy(DATA / "my_op.asc", tmp_path / "my_op.asc")
    (tmp_path / "io.json").write_text(json.dumps({"entries": {"my_op": {"inputs": ["x"], "outputs": ["y"]}}}))
    res = CliRunner().invoke(
        main,
        [
            "codegen",
            "adapt",
            str(tmp_path / "my_op.asc"),
            "-o",
            str(tmp_path / "o"),
            "--io-contract",
            str(tmp_path / "io.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "o" / "operator-sk-adapted.json").read_text())
    assert m["status"] == "completed" and m["per_file"][0]["form_after"] == "current-sk-bind"
    assert m["per_file"][0]["entries"][0]["pybind_return_source"] == "explicit-io-contract"


_TYPES = st.sampled_from(["GM_ADDR", "uint32_t", "int16_t", "bool", "half", "float", "__gm__ uint8_t *"])
_NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), min_size=0, max_size=6, unique=True)


@st.composite
def kernels(draw: st.DrawFn) -> tuple[str, list[str]]:
    names = [n for n in draw(_NAMES) if n not in {"void", "int", "bool", "half", "float", "if"}]
    params = ", ".join(f"{draw(_TYPES)} {n}" for n in names)
    kt = draw(st.sampled_from(["__vector__", "__cube__", "__mix__(1, 1)", "__mix__(0, 2)"]))
    body = draw(st.sampled_from(["", "\n    AscendC::TPipe pipe;\n", "\n    // } {\n    if (1) { }\n"]))
    return (
        f'#include "kernel_operator.h"\nextern "C" __global__ __aicore__ {kt} void kern({params})\n{{{body}}}\n',
        names,
    )


@settings(max_examples=40, deadline=None)
@given(kernels())
def test_property_original_preserved_idempotent_and_field_order(kernel: tuple[str, list[str]]) -> None:
    src, names = kernel
    out = _adapt(src, with_sys_args="never")
    e = read_source(src).entries[0]
    assert out.startswith(src[: e.body_close + 1])
    reread = read_source(out)
    assert classify(reread).form == "current-sk-bind"
    if names:
        struct = out.split("struct KernArgs {\n", 1)[1].split("};", 1)[0]
        assert [ln.rstrip(";").split()[-1] for ln in struct.strip().splitlines()] == names
    m = adapt_asset_once(out)
    assert m == out


def adapt_asset_once(text: str) -> str:
    """Adapting an adapted file: detected current-sk-bind, passed through unchanged."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "a").mkdir()
        (Path(d) / "a" / "k.asc").write_text(text)
        m = adapt_asset(Path(d) / "a", Path(d) / "o", AdaptOptions())
        assert m["per_file"][0]["form_before"] == "current-sk-bind"
        return (Path(d) / "o" / "operator-sk-adapted" / "k.asc").read_text()


def test_duplicate_entry_names_need_a_human(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.asc").write_text("__global__ __vector__ void k(GM_ADDR x) {}\n")
    (tmp_path / "a" / "two.asc").write_text("__global__ __vector__ void K(GM_ADDR x) {}\n")
    m = adapt_asset(tmp_path / "a", tmp_path / "o", AdaptOptions())
    assert m["status"] == "needs-human" and m["pybind_layout"] is None
    (esc,) = m["escalations"]
    assert esc["rule_id"] == "codegen.pybind-entry-specialization-ambiguous"
    assert esc["evidence"] == ["one.asc:1:k", "two.asc:1:K"]


def test_a_bad_file_after_good_ones_leaves_no_output_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are handed to the writer while later ones are still read: a later unreadable source still
    leaves nothing."""
    asset = tmp_path / "a"
    asset.mkdir()
    for i in range(5):
        (asset / f"k{i}.asc").write_text(f"__global__ __vector__ void k{i}(GM_ADDR x) {{}}\n")
    (asset / "z.asc").write_bytes(b"__global__ __vector__ void z(GM_ADDR x) {} // \xff\n")  # not UTF-8
    handed: list[str] = []
    real_put = TreeWriter.put
    monkeypatch.setattr(
        TreeWriter, "put", lambda self, rel, data: (handed.append(rel), real_put(self, rel, data))
    )
    res = CliRunner().invoke(main, ["codegen", "adapt", str(asset), "-o", str(tmp_path / "o")])
    assert res.exit_code == 3, res.output
    assert "z.asc: not UTF-8 text (byte offset" in res.stderr
    assert handed == [f"operator-sk-adapted/k{i}.asc" for i in range(5)]  # before z.asc was read
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]  # no output, no staging folder


def test_a_missing_asset_is_named_before_the_output_folder_is_made(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")  # the output's parent cannot be created
    res = CliRunner().invoke(
        main, ["codegen", "adapt", str(tmp_path / "missing"), "-o", str(tmp_path / "afile" / "o")]
    )
    assert res.exit_code == 2, res.output
    assert "asset not found" in res.stderr
