"""``codegen adapt --jobs``: worker processes change who computes, never what is written.

Run in child interpreters (the test process runs pytest-xdist's threads, where adapt rightly stays in
the process); a recording wrapper around the per-file step shows which processes did the work.
"""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = '#include "kernel_operator.h"\n'

_DRIVER = """
import os, sys
import skdbg.codegen.adapt as adapt

log = sys.argv[1]
plain = adapt._adapt_source

def recorded(job, source):
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\\n")
    return plain(job, source)

adapt._adapt_source = recorded
print(os.getpid(), file=sys.stderr)
from skdbg.cli import main
main(sys.argv[2:], prog_name="skdbg")
"""


def _asset(root: Path, kernels: int) -> Path:
    """Every kind of file adapt meets: adapted, already current, partial (needs-human), a test support
    file, one without a kernel signal, a declaration only, in nested folders."""
    asset = root / "asset"
    for i in range(kernels):
        folder = asset / f"group{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        params = ", ".join(
            ["GM_ADDR x", *(f"uint32_t n{k}" for k in range(i % 4))]
        )  # one tensor: no contract
        (folder / f"k{i:03d}.asc").write_text(
            INCLUDE
            + f"__global__ __aicore__ __vector__ void k{i}({params}) {{\n    AscendC::TPipe pipe;\n}}\n"
        )
    (asset / "current.asc").write_text(
        INCLUDE + "__global__ __aicore__ void c(GM_ADDR x) {}\n__sk__ __vector__ void c_sk() {}\n"
        "SK_BIND(c, 4, c_sk<0>);\n"
    )
    (asset / "tests").mkdir()
    (asset / "tests" / "t.asc").write_text("__global__ __aicore__ __vector__ void t(GM_ADDR x) {}\n")
    (asset / "helper.cpp").write_text("int helper() { return 1; }\n")
    (asset / "decl.cpp").write_text("__global__ __aicore__ void d(GM_ADDR x);\n")
    return asset


def _adapt(
    tmp: Path, asset: Path, jobs: int, *extra: str
) -> tuple[subprocess.CompletedProcess[str], set[int]]:
    log = tmp / f"pids-{jobs}.txt"
    log.unlink(missing_ok=True)
    argv = ["codegen", "adapt", str(asset), "-o", str(tmp / "out"), "--force", "-j", str(jobs), *extra]
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(log), *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    parent = int(proc.stderr.splitlines()[0])
    workers = {int(p) for p in log.read_text().split()} - {parent} if log.exists() else set()
    return proc, workers


def _same_tree(a: Path, b: Path) -> None:
    cmp = filecmp.dircmp(a, b)
    assert not (cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files), cmp.report()
    for sub in cmp.common_dirs:
        _same_tree(a / sub, b / sub)
    for name in cmp.common_files:  # dircmp compares shallowly: compare the bytes
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize("partial", [False, True])
def test_workers_write_the_serial_output(tmp_path: Path, partial: bool) -> None:
    asset = _asset(tmp_path, 40)
    if partial:  # one file needs a human: the manifest's escalations and status must match too
        (asset / "group1" / "legacy.asc").write_text(
            INCLUDE
            + "__global__ __aicore__ __vector__ void l(GM_ADDR x) {}\n__sk__ __vector__ void l_sk() {}\n"
        )
    serial, none = _adapt(tmp_path, asset, 1)
    assert none == set() and serial.returncode == (4 if partial else 0), serial.stderr
    shutil.copytree(tmp_path / "out", tmp_path / "serial")
    parallel, workers = _adapt(tmp_path, asset, 3)
    assert workers, "no file was adapted by a worker process"
    assert (parallel.returncode, parallel.stdout) == (serial.returncode, serial.stdout)
    assert parallel.stderr.splitlines()[1:] == serial.stderr.splitlines()[1:]
    _same_tree(tmp_path / "serial", tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "operator-sk-adapted.json").read_text())
    assert len(manifest["per_file"]) == 41 + partial
    assert {"file": "tests/t.asc", "reason": "test_support_file"} in manifest["ignored_support_files"]


def test_an_unreadable_file_fails_the_same_way_with_workers(tmp_path: Path) -> None:
    asset = _asset(tmp_path, 30)
    (asset / "group1" / "k013.asc").write_bytes(b"__global__ \xff\xfe void k(GM_ADDR x) {}\n")
    (asset / "group2" / "k020.asc").write_bytes(b"__global__ \xff void k(GM_ADDR x) {}\n")  # a later one
    serial, _ = _adapt(tmp_path, asset, 1)
    parallel, workers = _adapt(tmp_path, asset, 3)
    assert workers
    assert serial.returncode == parallel.returncode == 3
    assert "k013.asc: not UTF-8 text (byte offset 11)" in serial.stderr
    assert parallel.stderr.splitlines()[1:] == serial.stderr.splitlines()[1:]
    assert not (tmp_path / "out").exists()


def test_jobs_refuses_a_negative_number(tmp_path: Path) -> None:
    asset = _asset(tmp_path, 2)
    proc, _ = _adapt(tmp_path, asset, -2)
    assert proc.returncode == 2 and "-j" in proc.stderr
