"""Issue 14 classes 5, 6 and 13: special files, filesystem trouble and links leaving the scene.

Each test damages a copy of a bundled scene the way a crashed machine or a hostile archive would,
then runs the real command in a subprocess with a time limit (a hang fails the test instead of
blocking the suite). The expectation: exit 0, the damage listed as a gap naming the file, nothing
read through the link or the special file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.fsguard import file_problem, open_regular

SCENE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "high-single-stream"
MODEL = Path("sk_meta/48213/model_48_1")


def _scene(tmp_path: Path) -> Path:
    dst = tmp_path / "scene"
    shutil.copytree(SCENE, dst)
    return dst


def _analyze(scene: Path) -> tuple[int, dict[str, object], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "analyze", str(scene), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    doc = json.loads(proc.stdout) if proc.returncode == 0 else {}
    return proc.returncode, doc, proc.stderr


def _inspect_gaps(scene: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "inspect", str(scene), "--table", "gaps", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, object]] = json.loads(proc.stdout)["rows"]
    return rows


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_and_device_links_in_bin_files_do_not_hang(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    bins = scene / MODEL / "bin_files"
    os.mkfifo(bins / "fifo.o")
    (bins / "zero.o").symlink_to("/dev/zero")
    code, doc, err = _analyze(scene)
    assert code == 0, err
    kinds = {(g["kind"], Path(str(g["file"])).name) for g in _inspect_gaps(scene)}
    assert ("not_regular_file", "fifo.o") in kinds
    assert ("outside_scene", "zero.o") in kinds


def test_link_leaving_the_scene_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SK Function: sk_9_leak_start_a_end_b, scope id: 9, Node Count: 0\nTOP-SECRET\n")
    scene = _scene(tmp_path)
    fused = scene / MODEL / "sk_fused_nodes.log"
    fused.unlink()
    fused.symlink_to(secret)
    code, doc, err = _analyze(scene)
    assert code == 0, err
    assert "TOP-SECRET" not in json.dumps(doc) and "sk_9_leak" not in json.dumps(doc)
    details = [str(g["detail"]) for g in _inspect_gaps(scene) if g["kind"] == "outside_scene"]
    assert any("sk_fused_nodes.log points outside the scene" in d for d in details)


def test_dangling_link_loop_and_directory_in_place_of_a_file(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    model = scene / MODEL
    (model / "sk_node_detail.log").unlink()
    (model / "sk_node_detail.log").symlink_to(model / "nowhere.log")
    (model / "sk_scope_split.log").unlink()
    (model / "sk_scope_split.log").symlink_to(model / "sk_scope_split.log")
    (model / "sk_device_args.log").unlink()
    (model / "sk_device_args.log").mkdir()
    code, _, err = _analyze(scene)
    assert code == 0, err
    kinds = {g["kind"] for g in _inspect_gaps(scene)}
    assert {"dangling_symlink", "symlink_loop", "not_regular_file"} <= kinds


def test_a_link_inside_the_scene_is_followed(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    model = scene / MODEL
    real = scene / "copy_of_fused_nodes.log"
    shutil.move(model / "sk_fused_nodes.log", real)
    (model / "sk_fused_nodes.log").symlink_to(real)
    assert file_problem(model / "sk_fused_nodes.log", scene.resolve()) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_open_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(ParseError, match="a regular file, got a FIFO"):
        open_regular(fifo, what="a plog")
