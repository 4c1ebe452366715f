"""Issue 14 class 1: file names derived from artifact content never choose where a file lands.

The scene is the bundled dependency-aligned split with its scope renamed to a path that climbs out
of the output folder; the candidate must land entirely inside ``-o``, one file per SK, and keep the
real scope name inside the files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.atomic import safe_name, write_tree
from skdbg.cli import main

SCENE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "event-bound-split"
HOSTILE = "../../../escaped"


def _hostile_scene(tmp_path: Path) -> Path:
    scene = tmp_path / "work" / "scene"
    shutil.copytree(SCENE, scene)
    for f in scene.rglob("*"):
        if f.is_file() and f.suffix in {".log", ".json", ".py"}:
            text = f.read_text(encoding="utf-8")
            f.write_text(text.replace("decoder.layer.0.mlp", HOSTILE), encoding="utf-8")
    return scene


def test_candidate_files_stay_inside_the_output_folder(tmp_path: Path) -> None:
    scene = _hostile_scene(tmp_path)
    res = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert res.exit_code == 0, res.stderr
    analysis = tmp_path / "work" / "analysis.json"
    analysis.write_text(res.stdout)
    out = tmp_path / "work" / "out" / "cand"
    before = {p for p in tmp_path.rglob("*")}
    res = CliRunner().invoke(
        main, ["codegen", "candidate", str(scene), "--proposal", str(analysis), "-o", str(out)]
    )
    assert res.exit_code == 0, res.stderr
    new = {p for p in tmp_path.rglob("*")} - before
    assert new and all(p == out or p.is_relative_to(out) or out.is_relative_to(p) for p in new), new
    manifest = json.loads((out / "candidate.json").read_text())
    files = [s["file"] for s in manifest["prediction"]["candidate_sks"]]
    assert len(files) == len(set(files)) == 2
    for rel in files:
        assert (out / rel).resolve().is_relative_to(out.resolve())
        assert json.loads((out / rel).read_text())["scope_name"].startswith(HOSTILE)


def test_safe_name_and_write_tree_guard(tmp_path: Path) -> None:
    assert safe_name("../../etc/passwd") == "_.._etc_passwd"
    assert "/" not in safe_name("a/b\\c") and not safe_name("..hidden").startswith(".")
    assert safe_name("") == "unnamed" and len(safe_name("x" * 500)) == 64
    for rel in ("../x.txt", "/tmp/abs.txt", "a/../../x.txt"):
        with pytest.raises(ValueError, match="inside the output folder"):
            write_tree(tmp_path / f"o{len(rel)}", {rel: "1"})
    assert not (tmp_path / "x.txt").exists()
