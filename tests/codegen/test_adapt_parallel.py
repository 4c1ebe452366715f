"""A large asset adapted in two processes gives exactly what one process gives (files, manifest, errors).

The split is an optimisation only: the same manifest and files byte for byte, the same first error
(every discovery error before any adaptation error, each in file order), and a child that fails in
any way is replaced by doing its half here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import skdbg.codegen.adapt as adapt_mod
from skdbg.codegen import forkmap
from skdbg.codegen.adapt import AdaptOptions, adapt_asset
from skdbg.codegen.contract import load_contract
from skdbg.codegen.forms import UnreadableSourceError

needs_fork = pytest.mark.skipif(not forkmap.fork_usable(), reason="fork is not this platform's start method")


def _kernel(i: int) -> str:
    return (
        '#include "kernel_operator.h"\n'
        f'extern "C" __global__ __aicore__ __vector__ void op_{i}(GM_ADDR x, GM_ADDR y, uint32_t n{i})\n'
        "{\n    AscendC::TPipe pipe;\n    uint32_t b = AscendC::GetBlockNum();\n}\n"
    )


def _asset(root: Path, n: int = 70) -> tuple[Path, AdaptOptions]:
    asset = root / "asset"
    (asset / "sub").mkdir(parents=True)
    (asset / "tests").mkdir()
    entries = {}
    for i in range(n):
        src = _kernel(i)
        if i % 9 == 4:  # already in current form
            src += f"__sk__ __vector__ void op_{i}_sk() {{}}\nSK_BIND(op_{i}, 4, op_{i}_sk<0>);\n"
        else:
            entries[f"op_{i}"] = {"inputs": ["x"], "outputs": ["y"]}
        (asset / ("sub" if i % 5 == 0 else ".") / f"op_{i}.asc").write_text(src)
    (asset / "tests" / "t.asc").write_text(_kernel(999))  # test support: ignored
    (asset / "notes.cpp").write_text("int helper() { return 1; }\n")  # no kernel signal
    (asset / "decl.cpp").write_text('extern "C" __global__ __aicore__ void op_decl(GM_ADDR x);\n')
    (root / "io.json").write_text(json.dumps({"entries": entries}))
    return asset, AdaptOptions(contract=load_contract(root / "io.json"))


def _tree(out: Path) -> dict[str, str]:
    files = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    doc = json.loads(files.pop("operator-sk-adapted.json"))
    doc.pop("adapted_dir")  # names the output folder itself
    files["manifest"] = json.dumps(doc, indent=2)
    return files


@needs_fork
def test_two_processes_write_what_one_writes(tmp_path: Path) -> None:
    asset, options = _asset(tmp_path)
    serial = adapt_asset(asset, tmp_path / "one", options, parallel=False)
    split = adapt_asset(asset, tmp_path / "two", options, parallel=True)
    assert serial["status"] == "completed" and len(serial["per_file"]) == 70
    assert {f["file"] for f in serial["ignored_support_files"]} == {"tests/t.asc", "notes.cpp", "decl.cpp"}
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    assert {k: v for k, v in serial.items() if k != "adapted_dir"} == {
        k: v for k, v in split.items() if k != "adapted_dir"
    }


@needs_fork
def test_a_discovery_error_in_the_second_half_wins_over_an_adapt_error_in_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asset, options = _asset(tmp_path)
    (asset / "zz_bad.asc").write_bytes(b"__global__ void k() {}\n\xff\n")  # last in order: the child's half
    real = adapt_mod._adapt_candidate

    def failing(cand, *args):  # type: ignore[no-untyped-def]
        if cand.rel == "op_1.asc":  # early: this process's half
            raise RuntimeError("adapt failure in op_1")
        return real(cand, *args)

    monkeypatch.setattr(adapt_mod, "_adapt_candidate", failing)
    for parallel in (False, True):
        with pytest.raises(UnreadableSourceError, match=r"zz_bad\.asc: not UTF-8 text \(byte offset 23\)"):
            adapt_asset(asset, tmp_path / f"out-{parallel}", options, parallel=parallel)
    (asset / "zz_bad.asc").unlink()
    for parallel in (False, True):
        with pytest.raises(RuntimeError, match="adapt failure in op_1"):
            adapt_asset(asset, tmp_path / f"out2-{parallel}", options, parallel=parallel)
    assert not any(p.name.startswith("out") for p in tmp_path.iterdir())  # nothing written


@needs_fork
def test_the_second_half_runs_in_a_child() -> None:
    got = forkmap.map_halves(lambda xs: (os.getpid(), [x * 2 for x in xs]), list(range(5)), parallel=True)
    assert got[0] == (os.getpid(), [0, 2, 4])
    assert got[1][1] == [6, 8] and got[1][0] != os.getpid()


@needs_fork
def test_a_child_result_that_cannot_be_sent_is_computed_here() -> None:
    def halves(xs: list[int]) -> object:
        return (os.getpid(), sum(xs), lambda: None)  # a lambda does not pickle

    got = forkmap.map_halves(halves, [1, 2, 3, 4], parallel=True)
    assert [(pid, total) for pid, total, _ in got] == [(os.getpid(), 3), (os.getpid(), 7)]


def test_serial_is_one_call_over_everything() -> None:
    assert forkmap.map_halves(lambda xs: list(xs), [1, 2, 3], parallel=False) == [[1, 2, 3]]


def test_a_failed_fork_does_everything_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(forkmap.os, "fork", no_fork)
    assert forkmap.map_halves(lambda xs: sum(xs), [1, 2, 3, 4], parallel=True) == [10]


@needs_fork
def test_fork_is_used_only_where_it_is_the_start_method(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    monkeypatch.setitem(forkmap.sys.modules, "multiprocessing", multiprocessing)
    assert forkmap.fork_usable() is True
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    assert forkmap.fork_usable() is False
    monkeypatch.undo()
    monkeypatch.setattr(forkmap.sys, "platform", "darwin")
    assert forkmap.fork_usable() is False
