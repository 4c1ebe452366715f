"""skdbg.atomic.write_tree: an output folder appears whole or not at all, and is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.atomic import OutputNotEmptyError, write_tree


def test_writes_text_and_bytes_in_nested_folders(tmp_path: Path) -> None:
    out = tmp_path / "out"
    paths = write_tree(out, {"a.md": "héllo\n", "sub/b.bin": b"\x00\x01"})
    assert paths == [out / "a.md", out / "sub" / "b.bin"]
    assert (out / "a.md").read_text(encoding="utf-8") == "héllo\n"
    assert (out / "sub" / "b.bin").read_bytes() == b"\x00\x01"


def test_an_empty_existing_folder_is_filled(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    write_tree(out, {"x.txt": "1"})
    assert (out / "x.txt").read_text() == "1"


def test_a_non_empty_folder_or_a_file_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(OutputNotEmptyError):
        write_tree(out, {"x.txt": "1"})
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(OutputNotEmptyError):
        write_tree(f, {"x.txt": "1"})


def test_a_failure_midway_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(TypeError):
        write_tree(out, {"a.txt": "ok", "b.txt": 42})  # type: ignore[dict-item]  # the second write fails
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary sibling left either


def test_force_replaces_a_non_empty_folder_only_when_complete(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    write_tree(out, {"new.txt": "new"}, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging or trash left


def test_force_failure_keeps_the_old_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(TypeError):
        write_tree(out, {"a.txt": "ok", "b.txt": 42}, force=True)  # type: ignore[dict-item]
    assert (out / "old.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_force_never_replaces_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("keep")
    with pytest.raises(OutputNotEmptyError, match="not a directory"):
        write_tree(f, {"x.txt": "1"}, force=True)
    assert f.read_text() == "keep"


def test_refusal_message_names_the_folder_and_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("1")
    with pytest.raises(
        OutputNotEmptyError, match=r"output folder already exists: .*out is not empty \(use --force"
    ):
        write_tree(out, {"y.txt": "1"})
