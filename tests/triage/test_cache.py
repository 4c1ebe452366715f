"""The analysis result cache (issue 18 item 4): a repeat analyze of an unchanged scene is served from
the cache, and the cache can never return a verdict for inputs that changed.

Each test copies a bundled scene into tmp_path and points the cache at its own tmp directory.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.triage import engine
from skdbg.triage.cache import AnalysisCache, cache_dir
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "examples" / "scenes" / "high-single-stream"


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    """A private copy of the bundled high-confidence scene (C3, one exception core)."""
    dest = tmp_path / "scene"
    shutil.copytree(BUNDLED, dest)
    return dest


class Counting:
    """analyze_context that counts how often the real analysis ran."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, ctx):  # type: ignore[no-untyped-def]
        self.calls += 1
        return analyze_context(ctx)


def _same_size_edit_keeping_mtime(path: Path) -> None:
    """Change one byte in place (same size), then put the mtime back (os.utime)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    i = data.rfind(b"0")
    assert i >= 0
    data[i] = ord("1")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_repeat_is_a_hit_with_the_same_analysis(scene: Path, tmp_path: Path) -> None:
    cache, run = AnalysisCache(tmp_path / "cache"), Counting()
    first = cache.analyze(open_context(scene), run)
    second = cache.analyze(open_context(scene), run)
    assert run.calls == 1
    assert second.to_json() == first.to_json()
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 1


@pytest.mark.parametrize(
    "victim",
    [
        "log/plog/plog-48213_20260610140058123.log",
        "sk_meta/48213/model_48_1/super_kernel.log",
        "sk_meta/48213/model_48_1/sk_fused_nodes.log",
        "run.json",
    ],
)
def test_same_size_edit_with_mtime_put_back_misses(scene: Path, tmp_path: Path, victim: str) -> None:
    """The stat key alone would hit; the content hashes refuse the stale verdict."""
    cache, run = AnalysisCache(tmp_path / "cache"), Counting()
    cache.analyze(open_context(scene), run)
    _same_size_edit_keeping_mtime(scene / victim)
    after = cache.analyze(open_context(scene), run)
    assert run.calls == 2
    assert after.to_json() == analyze_context(open_context(scene)).to_json()


def test_options_and_model_source_are_part_of_the_key(scene: Path, tmp_path: Path) -> None:
    from datetime import timedelta

    from skdbg.triage.context import TriageOptions

    cache, run = AnalysisCache(tmp_path / "cache"), Counting()
    cache.analyze(open_context(scene), run)
    cache.analyze(open_context(scene, options=TriageOptions(skew=timedelta(seconds=6))), run)
    cache.analyze(open_context(scene, options=TriageOptions(grace=timedelta(seconds=60))), run)
    cache.analyze(open_context(scene, pid=48213), run)
    cache.analyze(open_context(scene, source_root=scene), run)
    cache.analyze(open_context(scene, run_json=scene / "run.json"), run)
    assert run.calls == 6
    marker = open_context(scene).marker_file()
    assert marker is not None  # the scene's model source (run.json candidate.marker_file)
    with marker.open("a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    cache.analyze(open_context(scene), run)
    assert run.calls == 7


def test_unwritable_cache_is_skipped(scene: Path, tmp_path: Path) -> None:
    """A cache directory that cannot be created or written is skipped without failing (a regular file
    stands where the directory should be, which refuses even root; plus a read-only directory)."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        run = Counting()
        a = AnalysisCache(blocker / "cache").analyze(open_context(scene), run)
        b = AnalysisCache(blocker / "cache").analyze(open_context(scene), run)
        c = AnalysisCache(ro).analyze(open_context(scene), run)
        assert run.calls == 3  # nothing was stored under the blocker: the second call computed again
        assert a.to_json() == b.to_json() == c.to_json()
        assert blocker.read_text() == "not a directory"
    finally:
        ro.chmod(0o700)


def test_corrupt_entry_is_a_miss(scene: Path, tmp_path: Path) -> None:
    cache, run = AnalysisCache(tmp_path / "cache"), Counting()
    cache.analyze(open_context(scene), run)
    (entry,) = (tmp_path / "cache").glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    cache.analyze(open_context(scene), run)
    assert run.calls == 2


def test_cli_no_cache_bypasses_and_locate_names_the_cache(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "cli-cache"
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(where))
    assert cache_dir() == where
    calls = Counting()
    monkeypatch.setattr(engine, "analyze_context", calls)
    runner = CliRunner()
    outs = []
    for extra in ([], [], ["--no-cache"]):
        r = runner.invoke(main, ["analyze", str(scene), "--format", "json", *extra])
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout))
    assert calls.calls == 2  # first run computes, second is a hit, --no-cache computes again
    assert outs[0] == outs[1] == outs[2]
    assert len(list(where.glob("*.pickle"))) == 1
    r = runner.invoke(main, ["locate", "--format", "json"], env={"SKDBG_HOME": str(tmp_path / "home")})
    assert json.loads(r.stdout)["analysis_cache"] == str(where)


def _cli_json(scene: Path, *extra: str) -> tuple[dict[str, object], str]:
    r = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout), r.stdout


@pytest.mark.parametrize("racy_ns", [0, 3_000_000_000])
@pytest.mark.parametrize(
    "victim",
    ["log/plog/plog-48213_20260610140058123.log", "sk_meta/48213/model_48_1/super_kernel.log", "run.json"],
)
def test_cli_hit_path_misses_a_same_size_edit_with_mtime_put_back(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str, racy_ns: int
) -> None:
    """The CLI answers a hit before opening the scene (tree snapshot, no parsing). With the racy window
    off (0: only inode stats guard the hit) the edit still misses, because the write and the utime call
    both set ctime; with it on, the freshly copied files are also compared by content."""
    from skdbg.triage import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", racy_ns)
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path / "cli-cache"))
    calls = Counting()
    monkeypatch.setattr(engine, "analyze_context", calls)
    first, _ = _cli_json(scene)
    _, hit_text = _cli_json(scene)
    assert calls.calls == 1
    _same_size_edit_keeping_mtime(scene / victim)
    after, after_text = _cli_json(scene)
    assert calls.calls == 2
    assert _cli_json(scene)[1] == after_text  # the new verdict was stored and now answers
    assert calls.calls == 2
    fresh, _ = _cli_json(scene, "--no-cache")
    assert after == fresh
    assert hit_text == json.dumps(first, indent=2, ensure_ascii=False) + "\n"
    if victim == "run.json":
        assert after != first  # the edited manifest is what the new verdict reports


def test_cli_hit_output_is_byte_identical_in_every_format(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path / "cli-cache"))
    runner = CliRunner()
    for fmt in ("json", "text", "md"):
        fresh = runner.invoke(main, ["analyze", str(scene), "--format", fmt, "--no-cache"])
        runner.invoke(main, ["analyze", str(scene), "--format", fmt])  # fills the cache
        hit = runner.invoke(main, ["analyze", str(scene), "--format", fmt])
        assert hit.exit_code == fresh.exit_code == 0
        assert hit.stdout == fresh.stdout and hit.stderr == fresh.stderr


def test_added_file_and_model_source_under_source_root_miss(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file appearing anywhere in the scene misses (a new plog changes the verdict's inputs), and so
    does a model source appearing under --source-root where none was before."""
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path / "cli-cache"))
    calls = Counting()
    monkeypatch.setattr(engine, "analyze_context", calls)
    _cli_json(scene)
    (scene / "notes.txt").write_text("added\n")
    _cli_json(scene)
    assert calls.calls == 2
    src = tmp_path / "src-root"
    src.mkdir()
    _cli_json(scene, "--source-root", str(src))
    _cli_json(scene, "--source-root", str(src))
    assert calls.calls == 3
    (src / "src").mkdir()
    shutil.copy(scene / "src" / "model.py", src / "src" / "model.py")
    _cli_json(scene, "--source-root", str(src))
    assert calls.calls == 4


def test_scene_with_a_link_is_guarded_by_content(scene: Path, tmp_path: Path) -> None:
    """A symbolic link in the scene disables the snapshot; the input hashes then decide (and still
    refuse a same-size edit with the mtime put back)."""
    from skdbg.triage.cache import tree_snapshot

    (scene / "link-to-run.json").symlink_to(scene / "run.json")
    assert tree_snapshot(scene) is None
    cache, run = AnalysisCache(tmp_path / "cache"), Counting()
    cache.analyze(open_context(scene), run)
    cache.analyze(open_context(scene), run)
    assert run.calls == 1
    _same_size_edit_keeping_mtime(scene / "sk_meta/48213/model_48_1/sk_fused_nodes.log")
    cache.analyze(open_context(scene), run)
    assert run.calls == 2


def _flip_in_entry(entry: Path, needle: bytes) -> None:
    """Change one byte of ``needle``'s first occurrence in the stored entry, in place (same size)."""
    data = bytearray(entry.read_bytes())
    i = data.find(needle)
    assert i >= 0, needle
    data[i + 1] ^= 0x01
    entry.write_bytes(bytes(data))


@pytest.mark.parametrize("fmt", ["json", "text", "md"])
@pytest.mark.parametrize("needle", [b'"confidence": "high"', b"skdbg.triage.model"])
def test_cli_a_byte_changed_in_a_stored_entry_is_a_miss(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, needle: bytes
) -> None:
    """A damaged entry still unpickles (a byte of its printed JSON), or its stored analysis no longer
    does (a byte of the module name its pickle names): the digest in front of it makes either a miss,
    never a damaged verdict or a traceback."""
    where = tmp_path / "cli-cache"
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(where))
    runner = CliRunner()
    fresh = runner.invoke(main, ["analyze", str(scene), "--format", fmt, "--no-cache"])
    runner.invoke(main, ["analyze", str(scene), "--format", "json"])  # fills the cache
    (entry,) = where.glob("*.pickle")
    _flip_in_entry(entry, needle)
    calls = Counting()
    monkeypatch.setattr(engine, "analyze_context", calls)
    again = runner.invoke(main, ["analyze", str(scene), "--format", fmt])
    assert again.exit_code == fresh.exit_code == 0, again.output
    assert again.stdout == fresh.stdout
    assert calls.calls == 1  # computed afresh (and stored again)


def test_cli_an_entry_the_code_cannot_read_back_is_a_miss(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An intact entry whose stored analysis does not load (written by other code under the same key):
    text output computes afresh instead of failing."""
    from skdbg.triage import cache as cache_mod

    where = tmp_path / "cli-cache"
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(where))
    runner = CliRunner()
    fresh = runner.invoke(main, ["analyze", str(scene), "--no-cache"])
    runner.invoke(main, ["analyze", str(scene), "--format", "json"])
    (entry,) = where.glob("*.pickle")
    loaded = AnalysisCache(where)._load(entry.stem)
    assert loaded is not None
    loaded["analysis"] = b"not a pickle of an analysis"
    AnalysisCache(where)._store(entry.stem, loaded)
    assert cache_mod.CachedAnalysis("", (), "", False, loaded["analysis"]).load() is None
    again = runner.invoke(main, ["analyze", str(scene)])
    assert again.exit_code == 0, again.output
    assert again.stdout == fresh.stdout


def test_the_code_stamp_follows_the_package_files(tmp_path: Path) -> None:
    from skdbg.triage.cache import stamp_of

    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.json").write_text("{}")
    (pkg / "notes.txt").write_text("not code")
    (pkg / "sub" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    base = stamp_of([str(pkg)])
    assert stamp_of([str(pkg)]) == base
    (pkg / "notes.txt").write_text("still not code, another size")
    (pkg / "sub" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0\0")
    assert stamp_of([str(pkg)]) == base  # neither is code the analysis runs
    st = (pkg / "a.py").stat()
    (pkg / "a.py").write_text("x = 2\n")  # same size
    os.utime(pkg / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    edited = stamp_of([str(pkg)])
    assert edited != base
    (pkg / "sub" / "c.py").write_text("")
    assert stamp_of([str(pkg)]) != edited
    assert stamp_of([str(pkg), str(tmp_path / "other")]) != stamp_of([str(pkg)])


def test_the_code_stamp_reads_every_mapped_package_folder() -> None:
    import sys

    from skdbg.triage import cache as cache_mod

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    with (REPO / "pyproject.toml").open("rb") as fh:
        mapping = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    assert set(cache_mod._CODE_PACKAGES) == set(mapping)


def test_another_build_misses_and_replaces_the_entry(
    scene: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code stamp is in the key: code edited under the same version misses, and its entry replaces
    the other build's (one entry per options key)."""
    from skdbg.triage import cache as cache_mod

    where = tmp_path / "cache"
    cache, run = AnalysisCache(where), Counting()
    cache.analyze(open_context(scene), run)
    (first,) = where.glob("*.pickle")
    monkeypatch.setattr(cache_mod, "code_stamp", lambda: "another build")
    cache.analyze(open_context(scene), run)
    assert run.calls == 2
    (second,) = where.glob("*.pickle")
    assert second.name != first.name and second.name.split("-")[0] == first.name.split("-")[0]
    cache.analyze(open_context(scene), run)
    assert run.calls == 2  # this build's entry answers
    monkeypatch.undo()
    cache.analyze(open_context(scene), run)
    assert run.calls == 3 and [p.name for p in where.glob("*.pickle")] == [first.name]


def test_the_code_stamp_sees_past_a_broken_link(tmp_path: Path) -> None:
    """An editor's lock file (a link to nothing, named like code) is recorded, and the files listed
    after it still count."""
    from skdbg.triage.cache import stamp_of

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name in "abcdefgh":
        (pkg / f"{name}.py").write_text("x = 1\n")
    (pkg / ".#c.py").symlink_to("root@host.4242:1733560000")
    base = stamp_of([str(pkg)])
    for name in "abcdefgh":
        path = pkg / f"{name}.py"
        st = path.stat()
        path.write_text("x = 2\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        assert stamp_of([str(pkg)]) != base, name
        base = stamp_of([str(pkg)])


def test_a_store_removes_only_other_builds_entries(scene: Path, tmp_path: Path) -> None:
    from skdbg.triage.cache import CacheKey

    where = tmp_path / "cache"
    cache = AnalysisCache(where)
    ctx = open_context(scene)
    key = CacheKey.of(ctx).digest()
    options = key.partition("-")[0]
    where.mkdir()
    others = [f"{options}-{'0' * 32}.pickle", f"{options}-{'f' * 32}.pickle"]
    kept = [f"{options}-README.pickle", f"{options}.pickle", "notes.txt", f"{'a' * 64}-{'0' * 32}.pickle"]
    for name in others + kept:
        (where / name).write_bytes(b"x")
    cache.analyze(ctx, Counting())
    assert sorted(p.name for p in where.iterdir()) == sorted([f"{key}.pickle", *kept])
