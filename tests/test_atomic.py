"""skdbg.atomic.write_tree: an output folder appears whole or not at all, and is never overwritten."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from skdbg.atomic import OutputNotEmptyError, streamed_tree, write_tree


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


def test_a_write_failing_in_the_writing_thread_is_raised_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(IsADirectoryError):
        write_tree(out, {"d/x.txt": "1", "d": "2"})  # "d" is the folder the first file made
    assert list(tmp_path.iterdir()) == []


def test_streamed_files_end_as_their_last_put_with_line_endings_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with streamed_tree(out) as writer:
        writer.put("a.cpp", "first\n")
        writer.put("b.cpp", "x\r\ny\r\n")
        writer.put("a.cpp", "second\n")
    assert (out / "a.cpp").read_bytes() == b"second\n"
    assert (out / "b.cpp").read_bytes() == b"x\r\ny\r\n"


def test_a_put_after_a_failed_write_raises_it_and_the_block_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    puts_after = 0
    with pytest.raises(IsADirectoryError), streamed_tree(out) as writer:
        writer.put("d/x.txt", "1")
        writer.put("d", "2")
        for _ in range(500):  # the failure surfaces at a later put, once the writing thread has met it
            time.sleep(0.01)
            writer.put("more.txt", "3")
            puts_after += 1
    assert puts_after < 500  # raised by a put, not only when the block ends
    assert list(tmp_path.iterdir()) == []
    assert not [t for t in threading.enumerate() if t.name == "skdbg-write"]


def test_a_failing_block_stops_the_writer_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="midway"), streamed_tree(out) as writer:
        for i in range(50):
            writer.put(f"f{i}.txt", "x" * 1000)
        raise RuntimeError("midway")
    assert list(tmp_path.iterdir()) == []
    assert not [t for t in threading.enumerate() if t.name == "skdbg-write"]
