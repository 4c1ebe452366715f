"""G5 hashes every artifact exactly once (issue 18 item 3): a worker thread hashes while the scene is
parsed, and the analysis JSON, the cache check and the report's evidence index reuse those hashes.

The expectation is independent of the code: the SHA-256 of each file computed here with hashlib.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import skdbg.scene as scene_mod
from skdbg.parsers import plog as plog_mod
from skdbg.scene import open_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.report import evidence_index

SCENE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "event-bound-split"


def test_each_artifact_is_read_for_its_hash_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts the whole-file reads of the hasher (a small file in one read, a larger one through
    ``open_regular``) and of the plog scan (``open_regular_fd``), which hashes what it reads: each artifact is read once
    for its hash, a plog once in all."""
    opened: Counter[str] = Counter()
    real = scene_mod.open_regular

    def counting(path: Any, *, what: str) -> Any:
        opened[str(path)] += 1
        return real(path, what=what)

    real_small = scene_mod._small_digest

    def counting_small(path: Any) -> Any:  # a small file is read whole without open_regular
        got = real_small(path)
        if got is not None:
            opened[str(path)] += 1
        return got

    monkeypatch.setattr(scene_mod, "open_regular", counting)
    real_fd = plog_mod.open_regular_fd

    def counting_fd(path: Any, *, what: str) -> Any:  # the plog scan reads through a bare descriptor
        opened[str(path)] += 1
        return real_fd(path, what=what)

    monkeypatch.setattr(plog_mod, "open_regular_fd", counting_fd)
    monkeypatch.setattr(scene_mod, "_small_digest", counting_small)
    ctx = open_context(SCENE)
    analysis = analyze_context(ctx)
    index = evidence_index(ctx)
    arts = ctx.input_artifacts
    assert arts and all(n == 1 for n in opened.values()), opened.most_common(3)
    marker = ctx.marker_file()  # the model source: not found by the scene's walk, listed after it
    assert marker is not None and arts[-1].kind == "marker_file" and arts[-1].path == marker
    assert arts[:-1] == ctx.scene.artifacts
    assert set(opened) == {str(a.path) for a in arts}
    want = {a.relpath: hashlib.sha256(a.path.read_bytes()).hexdigest() for a in arts}
    assert {r["path"]: r["sha256"] for r in analysis.to_json()["scene"]["artifacts"]} == want
    assert {r["relpath"]: r["sha256"] for r in index if r["relpath"] in want} == want


def test_the_worker_hashes_without_being_asked() -> None:
    scene = open_scene(SCENE)
    scene.start_hashing().join(timeout=60)
    assert all(a._digest is not None for a in scene.artifacts)
    a = scene.artifacts[0]
    assert a.digest() == (a.path.stat().st_size, hashlib.sha256(a.path.read_bytes()).hexdigest())


def test_an_unreadable_artifact_reports_the_same_error_each_time(tmp_path: Path) -> None:
    from shutil import copytree

    from skdbg.parsers.common import ParseError

    dest = copytree(SCENE, tmp_path / "s")
    scene = open_scene(dest)
    victim = scene.artifacts[0]
    victim.path.unlink()
    for _ in range(2):
        with pytest.raises(ParseError, match="file does not exist"):
            victim.digest()


def test_the_evidence_index_resolves_each_file_name_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index matches each scanned plog line to its file by the file's resolved path: each distinct
    name is resolved once (a scene's thousands of lines name a handful of files), and the plog's first
    and last stamps are still those of its first and last stamped lines."""
    import skdbg.triage.report as report_mod

    ctx = open_context(SCENE)
    analyze_context(ctx)
    lines = [line for pe in ctx.evidence.plogs for line in pe.lines if line.ts is not None]
    assert len(lines) > 10 and len({line.src.file for line in lines}) == 1  # one plog, many lines
    asked: Counter[str] = Counter()
    real = report_mod.real_path

    def counting(path: Any, dirs: Any = None) -> Any:
        asked[str(path)] += 1
        return real(path, dirs)

    monkeypatch.setattr(report_mod, "real_path", counting)
    index = evidence_index(ctx)
    assert asked and max(asked.values()) == 1, asked.most_common(3)
    plog = next(r for r in index if r["role"] == "plog")
    first, last = lines[0].ts, lines[-1].ts
    assert first is not None and last is not None
    assert (plog["first_ts"], plog["last_ts"]) == (first.isoformat(), last.isoformat())


def test_the_model_source_is_an_artifact_wherever_it_lies(tmp_path: Path) -> None:
    """run.json's model source is read by the proposal, so G5 lists it with its SHA-256: by its path in
    the scene, or by its absolute path when ``--source-root`` holds it outside the scene."""
    from shutil import copytree, move

    scene = copytree(SCENE, tmp_path / "s")
    inside = hashlib.sha256((scene / "src" / "model.py").read_bytes()).hexdigest()
    arts = analyze_context(open_context(scene)).to_json()["scene"]["artifacts"]
    assert [(a["kind"], a["path"], a["sha256"]) for a in arts if a["path"].endswith(".py")] == [
        ("marker_file", "src/model.py", inside)
    ]
    outside = tmp_path / "checkout"
    (outside / "src").mkdir(parents=True)
    move(scene / "src" / "model.py", outside / "src" / "model.py")
    (outside / "src" / "model.py").write_text(
        (outside / "src" / "model.py").read_text(encoding="utf-8") + "# edited\n", encoding="utf-8"
    )
    edited = hashlib.sha256((outside / "src" / "model.py").read_bytes()).hexdigest()
    ctx = open_context(scene, source_root=outside)
    arts = analyze_context(ctx).to_json()["scene"]["artifacts"]
    assert [(a["kind"], a["path"], a["sha256"]) for a in arts if a["path"].endswith(".py")] == [
        ("marker_file", (outside / "src" / "model.py").resolve().as_posix(), edited)
    ]
    assert [r["sha256"] for r in evidence_index(ctx) if r["role"] == "marker_file"] == [edited]


def test_a_model_source_that_is_a_scene_artifact_is_listed_once(tmp_path: Path) -> None:
    """run.json naming a file the scene's walk found already (here the source-sites map, whose JSON
    object is also a Python expression) adds no second entry."""
    import json
    from shutil import copytree

    scene = copytree(SCENE, tmp_path / "s")
    run = json.loads((scene / "run.json").read_text(encoding="utf-8"))
    run["candidate"]["marker_file"] = "source_sites.json"
    (scene / "run.json").write_text(json.dumps(run), encoding="utf-8")
    ctx = open_context(scene)
    assert ctx.marker_file() == scene / "source_sites.json"
    assert ctx.input_artifacts == ctx.scene.artifacts
    paths = [a["path"] for a in analyze_context(ctx).to_json()["scene"]["artifacts"]]
    assert paths.count("source_sites.json") == 1


@pytest.mark.parametrize(
    ("named", "alias"),
    [("src/../src/model.py", None), ("src/alias.py", "model.py"), ("src/sites.py", "../source_sites.json")],
)
def test_the_model_source_is_listed_once_by_its_own_path(
    tmp_path: Path, named: str, alias: str | None
) -> None:
    """However run.json names it (``..`` in the path, a link under another name), the model source is
    listed once: by its real path, or not at all when it is the same file as a scene artifact."""
    import json
    from shutil import copytree

    from click.testing import CliRunner

    from skdbg.cli import main

    scene = copytree(SCENE, tmp_path / "s")
    if alias is not None:
        (scene / named).symlink_to(alias)
    run = json.loads((scene / "run.json").read_text(encoding="utf-8"))
    run["candidate"]["marker_file"] = named
    (scene / "run.json").write_text(json.dumps(run), encoding="utf-8")
    ctx = open_context(scene)
    listed = [(a["kind"], a["path"]) for a in analyze_context(ctx).to_json()["scene"]["artifacts"]]
    index = [(r["role"], r["relpath"]) for r in evidence_index(ctx) if r["relpath"] is not None]
    if named.endswith("sites.py"):  # the source-sites map itself: one entry, of its own kind
        assert [k for k, _ in listed if k in ("marker_file", "source_sites")] == ["source_sites"]
        assert [k for k, _ in index if k in ("marker_file", "source_sites")] == ["source_sites"]
        return
    want = "src/model.py"  # the file opened: a link's target, a path's ``..`` folded
    assert [p for k, p in listed if k == "marker_file"] == [want]
    assert [p for k, p in index if k == "marker_file"] == [want]
    table = CliRunner().invoke(main, ["inspect", str(scene), "--table", "artifacts", "--format", "json"])
    assert table.exit_code == 0, table.output
    rows = json.loads(table.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [(r["kind"], r["file"]) for r in rows if r["kind"] == "marker_file"] == [("marker_file", want)]


def test_a_model_source_path_through_a_linked_folder_is_the_file_read(tmp_path: Path) -> None:
    """``lnk/../x/model.py`` with ``lnk`` a link to another folder opens the ``x`` beside the link's
    target, not the scene's own ``x``: the listed file and hash are those of the file the analysis
    reads."""
    import json
    from shutil import copytree

    scene = copytree(SCENE, tmp_path / "s")
    target = tmp_path / "elsewhere"
    (target / "sub").mkdir(parents=True)
    (target / "x").mkdir()
    (target / "x" / "model.py").write_bytes((scene / "src" / "model.py").read_bytes())
    (scene / "lnk").symlink_to(target / "sub")
    (scene / "x").mkdir()
    (scene / "x" / "model.py").write_bytes((scene / "src" / "model.py").read_bytes() + b"# not read\n")
    run = json.loads((scene / "run.json").read_text(encoding="utf-8"))
    run["candidate"]["marker_file"] = "lnk/../x/model.py"
    (scene / "run.json").write_text(json.dumps(run), encoding="utf-8")
    ctx = open_context(scene)
    read = ctx.marker_file()
    assert read is not None and read.read_bytes() == (target / "x" / "model.py").read_bytes()
    listed = [a for a in analyze_context(ctx).to_json()["scene"]["artifacts"] if a["kind"] == "marker_file"]
    want = hashlib.sha256((target / "x" / "model.py").read_bytes()).hexdigest()
    assert [(a["path"], a["sha256"]) for a in listed] == [((target / "x" / "model.py").as_posix(), want)]
