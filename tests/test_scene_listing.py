"""The short cuts of opening a scene and listing its artifacts against the general code they replace.

Issue 18 (analyze CPU): ``bin_files/`` is listed with ``os.scandir`` (names sorted as strings, the
listing's file type instead of an ``lstat`` per ELF) where ``sorted(bin_dir.glob("*.o"))`` and a full
:func:`file_problem` each ran; the scene block takes each artifact's size and mtime from the hasher's
``fstat`` and converts each mtime second to local time once. The oracles here are the previous code
(``glob``, ``file_problem`` without the listing's answer, ``os.stat``, ``datetime.fromtimestamp``),
on folders holding every kind of entry a copied scene can hold.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers import discovery
from skdbg.parsers.common import Gap
from skdbg.parsers.discovery import SkMetaLayout, discover_sk_meta
from skdbg.parsers.fsguard import file_problem, real_path
from skdbg.scene import iso_seconds, open_scene

MODEL = Path("sk_meta/48213/model_48_1")


def _glob_oracle(scene: Path) -> tuple[tuple[Path, ...], list[Gap]]:
    """The bin files and gaps as the previous code found them: glob, Path sort, full check each."""
    root = scene.resolve()
    bin_dir = root / MODEL / "bin_files"
    layout = SkMetaLayout(root=root, resolved_root=root)
    real_bin = real_path(bin_dir)
    bins = tuple(p for p in sorted(bin_dir.glob("*.o")) if discovery._usable(p, layout, real_bin))
    return bins, layout.gaps


def _listed(scene: Path) -> tuple[tuple[Path, ...], list[Gap]]:
    """The bin files and the gaps about them as discovery finds them now."""
    layout = discover_sk_meta(scene.resolve())
    (model,) = layout.models
    gaps = [g for g in layout.gaps if "/bin_files/" in g.detail]
    return model.bin_files, gaps


def _model(scene: Path) -> Path:
    model = scene / MODEL
    (model / "bin_files").mkdir(parents=True)
    (model / "sk_fused_nodes.log").write_text("x\n")
    return model


def _hostile_bin_files(scene: Path) -> None:
    """Every kind of entry: plain ELFs in shuffled order, dot-names, near misses of ``*.o``, a folder
    named like an ELF, links inside, outside, dangling and looping, a FIFO and a non-UTF-8 name."""
    bins = _model(scene) / "bin_files"
    outside = scene.parent / "outside.o"
    outside.write_bytes(b"\x7fELF")
    for name in ("te_b_7.o", "sk_entry_0x10.o", "te_a_10.o", ".hidden.o", ".o", "ü_kernel.o", "a.o.bak"):
        (bins / name).write_bytes(b"\x7fELF")
    (bins / "upper.O").write_bytes(b"\x7fELF")
    (bins / "dir.o").mkdir()
    (bins / "in_link.o").symlink_to("te_b_7.o")
    (bins / "out_link.o").symlink_to(outside)
    (bins / "dangling.o").symlink_to("nothing_here.o")
    (bins / "loop.o").symlink_to("loop.o")
    if hasattr(os, "mkfifo"):
        os.mkfifo(bins / "fifo.o")
    os.close(os.open(os.fsencode(bins) + b"/raw\xff.o", os.O_CREAT | os.O_WRONLY, 0o644))


def test_bin_files_are_listed_and_refused_as_glob_and_the_full_check_did(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    _hostile_bin_files(scene)
    bins, gaps = _listed(scene)
    want_bins, want_gaps = _glob_oracle(scene)
    assert bins == want_bins
    assert gaps == want_gaps
    # the hand-made folder holds what the test means: taken, refused and ignored entries
    assert {p.name for p in bins} >= {"te_a_10.o", ".o", ".hidden.o", "in_link.o"}
    assert {g.kind for g in gaps} >= {"outside_scene", "dangling_symlink", "symlink_loop", "not_regular_file"}
    assert not any(p.name in ("upper.O", "a.o.bak") for p in bins)


def test_a_plain_file_the_process_may_not_read_is_refused_as_the_full_check_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing's quick check (a plain file, asked for by its text) refuses what ``access`` refuses,
    and the file is then refused as the full check refuses it. ``access`` is made to deny two names (the
    tests may run as root, whom it never denies), and is seen to be asked of text paths by the listing."""
    scene = tmp_path / "scene"
    bins = _model(scene) / "bin_files"
    for name in ("a.o", "denied.o", "b.o", "no_read.o"):
        (bins / name).write_bytes(b"\x7fELF")
    real_access = os.access
    asked: list[object] = []

    def access(path: object, mode: int, **kwargs: object) -> bool:
        asked.append(path)
        if os.path.basename(os.fspath(path)) in ("denied.o", "no_read.o"):  # type: ignore[arg-type]
            return False
        return real_access(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    bins_now, gaps_now = _listed(scene)
    # the quick check asked for each file by its text (the full check asks again for the two refused)
    texts = {p for p in asked if type(p) is str}
    want_texts = {
        os.path.join(str(scene.resolve() / MODEL / "bin_files"), n)
        for n in ("a.o", "denied.o", "b.o", "no_read.o")
    }
    assert texts == want_texts
    want_bins, want_gaps = _glob_oracle(scene)
    assert bins_now == want_bins and [p.name for p in bins_now] == ["a.o", "b.o"]
    assert gaps_now == want_gaps
    assert sorted(g.kind for g in gaps_now) == ["unreadable_file", "unreadable_file"]


def test_a_bin_file_refused_before_stays_refused_without_a_second_gap(tmp_path: Path) -> None:
    """As the full check's caller does (``_usable``): a path the layout refused already is not taken
    again, even where the quick check would pass it, and no second gap is recorded."""
    scene = tmp_path / "scene"
    bins = _model(scene) / "bin_files"
    for name in ("a.o", "b.o"):
        (bins / name).write_bytes(b"\x7fELF")
    root = scene.resolve()
    bin_dir = root / MODEL / "bin_files"
    layout = SkMetaLayout(root=root, resolved_root=root)
    layout.refused.add(bin_dir / "a.o")
    assert discovery._bin_files(bin_dir, layout) == (bin_dir / "b.o",)
    assert layout.gaps == []


def test_a_bin_folder_linked_outside_the_scene_gives_no_bin_file(tmp_path: Path) -> None:
    """``bin_files`` a link to a folder outside the scene: its plain files lie outside the scene too, so
    the quick check (a folder inside the scene) takes none and each is refused as outside the scene."""
    scene = tmp_path / "scene"
    model = _model(scene)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for name in ("a.o", "b.o"):
        (outside / name).write_bytes(b"\x7fELF")
    (model / "bin_files").rmdir()
    (model / "bin_files").symlink_to(outside, target_is_directory=True)
    bins, gaps = _listed(scene)
    assert bins == ()
    assert [g.kind for g in gaps] == ["outside_scene", "outside_scene"]


@given(st.lists(st.text(alphabet="ao.O_é-", min_size=1, max_size=5), max_size=12, unique=True))
def test_any_names_list_in_the_order_glob_sorted(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scene = Path(tmp) / "scene"
        bins = _model(scene) / "bin_files"
        for name in names:
            if name not in (".", ".."):
                (bins / name).write_bytes(b"")
        assert _listed(scene) == _glob_oracle(scene)


def test_an_unlistable_bin_folder_lists_nothing_as_glob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = tmp_path / "scene"
    _hostile_bin_files(scene)
    bin_dir = str(scene.resolve() / MODEL / "bin_files")
    real_scandir = os.scandir

    def refusing(path: str | os.PathLike[str] = ".") -> Iterator[os.DirEntry[str]]:
        if os.fspath(path) == bin_dir:
            raise PermissionError(13, "Permission denied", bin_dir)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert _listed(scene) == _glob_oracle(scene) == ((), [])


def test_file_problem_given_the_listing_answers_as_its_own_lstat(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    _hostile_bin_files(scene)
    root = scene.resolve()
    bin_dir = root / MODEL / "bin_files"
    real_bin = real_path(bin_dir)
    with os.scandir(bin_dir) as it:
        entries = list(it)
    assert len(entries) > 10
    for e in entries:
        p = bin_dir / e.name
        told = file_problem(p, root, real_dir=real_bin, regular=e.is_file(follow_symlinks=False))
        assert told == file_problem(p, root, real_dir=real_bin) == file_problem(p, root), e.name


# ------------------------------------------------------------------------------------------ mtimes


@pytest.fixture(params=["UTC", "Europe/Berlin", "America/St_Johns", "Australia/Lord_Howe"])
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Local time in a zone with summer time (and half-hour offsets): folds and gaps exist."""
    if not hasattr(time, "tzset"):
        pytest.skip("no tzset on this platform")
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def _direct(stamp: float) -> str:
    return datetime.fromtimestamp(stamp).isoformat(timespec="seconds")


#: 2026-03-29 01:00 UTC (Berlin springs forward) and 2026-10-25 01:00 UTC (falls back), ± a little
_EDGES = (1774746000.0, 1792890000.0)
_FRACTIONS = (0.0, 0.000001, 0.4999995, 0.5, 0.998999, 0.999, 0.9999994, 0.9999995, 0.9999999)


def test_iso_seconds_is_fromtimestamp_at_rounding_and_summer_time_edges(zone: str) -> None:
    memo: dict[int, str] = {}
    stamps = [e + d + f for e in _EDGES for d in (-3601, -1, 0, 1, 3599) for f in _FRACTIONS]
    stamps += [0.0, 0.9999996, 1.5, 2**31 + 0.25, 4102444800.9999997]
    for stamp in stamps + stamps:  # the second pass answers from the memo
        assert iso_seconds(stamp, memo) == _direct(stamp), (zone, repr(stamp))


@given(st.floats(min_value=-1e9, max_value=4.2e9, allow_nan=False))
def test_iso_seconds_is_fromtimestamp_for_any_stamp(stamp: float) -> None:
    memo: dict[int, str] = {}
    assert iso_seconds(stamp, memo) == _direct(stamp)
    assert iso_seconds(stamp, memo) == _direct(stamp)


def test_the_scene_block_has_each_files_stat_size_and_mtime(tmp_path: Path) -> None:
    """Hashed by the worker, by a reader asking, or adopted from another reader: the same size and
    mtime as a ``stat`` of the unchanged file."""
    scene = tmp_path / "scene"
    _hostile_bin_files(scene)
    (scene / "run.json").write_text("{}")
    opened = open_scene(scene)
    arts = opened.artifacts
    assert len(arts) > 5
    opened.adopt_digest(str(arts[0].path), 7, "0" * 64)  # another reader's hash: no fstat of ours
    arts[1].digest()
    opened.start_hashing().join(timeout=60)
    memo: dict[int, str] = {}
    for a in arts:
        st_ = os.stat(a.path)
        size, stamp = a.size_and_stamp()
        assert (size, stamp) == (st_.st_size, st_.st_mtime), a.relpath
        assert iso_seconds(stamp, memo) == a.mtime.isoformat(timespec="seconds")


def test_plog_named_entries_outside_sk_meta_are_taken_or_refused_by_kind(tmp_path: Path) -> None:
    """The plog walk checks each plog-named entry with one lstat in its (already resolved) folder; what
    is not a plain readable file gets the full check and its own gap, as before (issue 18)."""
    from skdbg.scene import open_scene

    plogs = tmp_path / "scene" / "log" / "plog"
    plogs.mkdir(parents=True)
    line = b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.518.100 [a.cc:1]48301 f:x\n"
    (plogs / "plog-48213_20260610140000000.log").write_bytes(line)
    outside = tmp_path / "plog-1_20260610140000000.log"
    outside.write_bytes(line)
    (plogs / "plog-2_20260610140000000.log").symlink_to(outside)
    (plogs / "plog-3_20260610140000000.log").symlink_to(tmp_path / "nowhere.log")
    (plogs / "plog-4_20260610140000000.log").symlink_to(plogs / "plog-4_20260610140000000.log")
    os.mkfifo(plogs / "plog-5_20260610140000000.log")
    (plogs / "plog-6_20260610140000000.log").symlink_to(plogs / "plog-48213_20260610140000000.log")
    scene = open_scene(tmp_path / "scene")
    taken = sorted(Path(p.path).name for p in scene.plogs)
    assert taken == ["plog-48213_20260610140000000.log", "plog-6_20260610140000000.log"]
    kinds = {Path(g.src.file).name: g.kind for g in scene.gaps if g.src is not None and g.src.file}
    kinds.pop("scene")  # the scene's own gap: it has no sk_meta
    assert kinds == {
        "plog-2_20260610140000000.log": "outside_scene",
        "plog-3_20260610140000000.log": "dangling_symlink",
        "plog-4_20260610140000000.log": "symlink_loop",
        "plog-5_20260610140000000.log": "not_regular_file",
    }
