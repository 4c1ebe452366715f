"""``real_path`` with a cache of resolved folders gives what a full resolve gives (issue 18).

Why it matters: every plog of a thousand-rank scene is cited by its path relative to the scene, and a
full resolve ``lstat``-s each component of each path; with the folder cache a plain file costs one
``lstat``. Links (of the file, of a folder on its way), missing files, ``..`` and relative paths must
come out exactly as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skdbg.parsers.fsguard import real_path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "plog").mkdir(parents=True)
    (tmp_path / "real" / "plog" / "plog-1_20260610140000000.log").write_text("x\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "target.log").write_text("y\n")
    (tmp_path / "linked_dir").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "plog" / "link.log").symlink_to(tmp_path / "elsewhere" / "target.log")
    (tmp_path / "real" / "plog" / "dangling.log").symlink_to(tmp_path / "nowhere.log")
    (tmp_path / "real" / "plog" / "loop.log").symlink_to(tmp_path / "real" / "plog" / "loop.log")
    return tmp_path


CASES = [
    "real/plog/plog-1_20260610140000000.log",
    "linked_dir/plog/plog-1_20260610140000000.log",  # a link on the way: the folder resolves it
    "real/plog/link.log",  # the file is a link: resolved in full
    "linked_dir/plog/link.log",
    "real/plog/dangling.log",
    "real/plog/loop.log",
    "real/plog/missing.log",
    "real/plog/../plog/plog-1_20260610140000000.log",
    "real/plog/..",
    "real/plog/.",
    "real/plog/",
    # paths the kernel cannot walk: the full resolve goes on component by component through ``..``
    "real/missing/../plog/link.log",
    "real/plog/plog-1_20260610140000000.log/../link.log",
    "real/plog/loop.log/../link.log",
]


@pytest.mark.parametrize("rel", CASES)
def test_the_folder_cache_gives_the_full_resolve(tree: Path, rel: str) -> None:
    path = os.path.join(str(tree), rel)
    dirs: dict[str, Path] = {}
    assert real_path(path, dirs) == real_path(path)
    assert real_path(path, dirs) == real_path(path), "a second ask, from the cache"


def test_relative_paths_and_a_shared_cache(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    dirs: dict[str, Path] = {}
    got = [real_path(rel, dirs) for rel in CASES]
    assert got == [real_path(rel) for rel in CASES]
    assert dirs["linked_dir/plog"] == tree.resolve() / "real" / "plog"
    assert got[0] == tree.resolve() / "real" / "plog" / "plog-1_20260610140000000.log"
    assert got[2] == tree.resolve() / "elsewhere" / "target.log"


def test_files_of_one_folder_resolve_it_once(tree: Path) -> None:
    folder = os.path.join(str(tree), "linked_dir", "plog")
    names = ["plog-1_20260610140000000.log", "missing.log", "plog-2_20260610140000000.log"]
    dirs: dict[str, Path] = {}
    got = [real_path(os.path.join(folder, n), dirs) for n in names]
    assert got == [real_path(os.path.join(folder, n)) for n in names]
    assert dirs == {folder: tree.resolve() / "real" / "plog"}, "the folder resolved once, for all three"


def test_a_nul_in_the_name_fails_as_the_full_resolve_does(tree: Path) -> None:
    path = os.path.join(str(tree), "real", "plog", "a\x00b.log")
    with pytest.raises(ValueError):
        real_path(path)
    with pytest.raises(ValueError):
        real_path(path, {})
