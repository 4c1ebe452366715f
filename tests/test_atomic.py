"""skdbg.atomic.write_tree: an output folder appears whole or not at all, and is never overwritten."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import skdbg.atomic
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


def test_a_streamed_name_is_never_looked_up_in_the_fresh_staging_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staging folder is the writer's own and fresh, and it puts no links there: a name in it is
    not asked of the disk, not even one put twice (each look-up costs tens of microseconds on some
    disks; an asset of 500 kernels made 500 of them). The path checks hold all the same."""
    looked_up: list[str] = []
    lexists = skdbg.atomic.os.path.lexists

    def counting(path: Any) -> bool:
        looked_up.append(Path(path).name)
        return lexists(path)

    monkeypatch.setattr(skdbg.atomic.os.path, "lexists", counting)
    out = tmp_path / "out"
    with streamed_tree(out) as writer:
        for i in range(20):
            writer.put(f"sub/k{i}.cpp", f"{i}\n")
        writer.put("sub/k3.cpp", "again\n")
        for bad in ("../escape.txt", "/abs.txt", ""):
            with pytest.raises(ValueError, match="not a path inside the output folder"):
                writer.put(bad, "x")
    assert looked_up == []
    assert (out / "sub" / "k3.cpp").read_text() == "again\n"
    assert sorted(p.name for p in (out / "sub").iterdir()) == sorted(f"k{i}.cpp" for i in range(20))


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


def test_any_failure_in_the_writing_thread_is_raised_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: str, data: bytes) -> None:
        raise ValueError("not an OSError")

    monkeypatch.setattr(skdbg.atomic, "_write_bytes", broken)
    with pytest.raises(ValueError, match="not an OSError"):
        write_tree(tmp_path / "out", {"a.txt": "1", "b.txt": "2"})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("b\0c.txt", ValueError),
        pytest.param(
            "x\ud800.txt",
            UnicodeEncodeError,
            marks=pytest.mark.skipif(
                sys.platform == "win32", reason="Windows file names take lone surrogates"
            ),
        ),
    ],
)
def test_a_name_the_system_cannot_take_fails_at_that_file(
    tmp_path: Path, name: str, error: type[Exception]
) -> None:
    with pytest.raises(error), streamed_tree(tmp_path / "out") as writer:
        writer.put("a.txt", "1")
        writer.put(name, "2")
        pytest.fail("put() accepted the name")  # pragma: no cover - reached only when put() does not raise
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_wait_for_the_last_files_stops_the_writer_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write, real_rmtree = skdbg.atomic._write_bytes, shutil.rmtree
    interrupted = threading.Event()
    alive_at_removal: list[bool] = []

    def held(path: str, data: bytes) -> None:  # the writer is still busy when finish() starts waiting
        interrupted.wait(5)
        real_write(path, data)

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        alive_at_removal.extend(t.is_alive() for t in threading.enumerate() if t.name == "skdbg-write")
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(skdbg.atomic, "_write_bytes", held)
    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with pytest.raises(KeyboardInterrupt), streamed_tree(tmp_path / "out") as writer:
        for i in range(20):
            writer.put(f"f{i}.txt", "x")
        real_join, waits = writer._thread.join, []

        def join(timeout: float | None = None) -> None:
            waits.append(timeout)
            if len(waits) <= 2:  # Ctrl-C while finish() waits for the writer, and again while abandon() does
                interrupted.set()
                raise KeyboardInterrupt
            real_join(timeout)

        monkeypatch.setattr(writer._thread, "join", join)
    assert len(waits) == 3
    assert alive_at_removal == []  # the writer had stopped before the staging folder was removed
    assert list(tmp_path.iterdir()) == []


def test_a_write_error_names_the_file_as_text(tmp_path: Path) -> None:
    long_name = "n" * 300 + ".txt"  # beyond every common file system's name limit: open() itself fails
    with pytest.raises(OSError) as caught:
        write_tree(tmp_path / "out", {"a.txt": "1", long_name: "2"})
    assert isinstance(caught.value.filename, str) and caught.value.filename.endswith(long_name)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- --force over a previous output

_LINUX_ONLY = pytest.mark.skipif(
    sys.platform != "linux", reason="taken over only where extended attributes can be compared"
)
_ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")


def _inode(path: Path) -> int:
    """The file's inode number: the same one means the file was taken over, not written."""
    return path.stat().st_ino


@_LINUX_ONLY
def test_force_takes_over_an_unchanged_file_and_writes_a_changed_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(
        out, {"same.txt": "kept\n", "sub/same.bin": b"\x00\x01", "changed.txt": "v1\n", "gone.txt": "x"}
    )
    before = {name: _inode(out / name) for name in ("same.txt", "sub/same.bin", "changed.txt")}
    write_tree(
        out,
        {"same.txt": "kept\n", "sub/same.bin": b"\x00\x01", "changed.txt": "v2\n", "new.txt": "n"},
        force=True,
    )
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "changed.txt",
        "new.txt",
        "same.txt",
        "sub/same.bin",
    ]
    assert (out / "changed.txt").read_text() == "v2\n"
    assert _inode(out / "same.txt") == before["same.txt"]  # taken over: the very file, not a copy
    assert _inode(out / "sub/same.bin") == before["sub/same.bin"]
    assert _inode(out / "changed.txt") != before["changed.txt"]
    assert all((out / n).stat().st_nlink == 1 for n in ("same.txt", "sub/same.bin", "changed.txt", "new.txt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the old folder is gone, the probe too


def _unlike(case: str, target: Path, tmp_path: Path) -> None:
    """Make the old file ``target`` (holding ``same\\n``) one that must not be taken over."""
    if case == "other_link":
        (tmp_path / "elsewhere.txt").hardlink_to(target)
    elif case == "other_mode":
        target.chmod(0o600)
    elif case == "longer":
        target.write_text("same\nmore\n")
    elif case == "same_size_other_bytes":
        target.write_text("SAME\n")
    elif case == "symlink":
        (tmp_path / "outside.txt").write_text("same\n")
        target.unlink()
        target.symlink_to(tmp_path / "outside.txt")
    elif case == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif case == "xattr":
        try:
            os.setxattr(target, "user.note", b"mine")
        except OSError:
            pytest.skip("this disk takes no user extended attributes")
    elif case == "other_uid":
        os.chown(target, 4242, -1)
    elif case == "other_gid":
        os.chown(target, -1, 4242)
    else:
        raise AssertionError(case)


@_LINUX_ONLY
@pytest.mark.parametrize(
    "case",
    [
        "other_link",
        "other_mode",
        "longer",
        "same_size_other_bytes",
        "symlink",
        "fifo",
        "xattr",
        pytest.param("other_uid", marks=_ROOT_ONLY),
        pytest.param("other_gid", marks=_ROOT_ONLY),
    ],
)
def test_force_writes_anew_what_it_may_not_take_over(tmp_path: Path, case: str) -> None:
    """A file with another name elsewhere, other permissions, owner, group or attributes, other bytes, a
    symlink or a named pipe is never shared with the new folder: the new file is written (a pipe does
    not hold the run up), and whatever lies outside the folder is untouched."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    target = out / "f.txt"
    _unlike(case, target, tmp_path)
    old_ino = target.lstat().st_ino
    done = threading.Event()

    def run() -> None:
        write_tree(out, {"f.txt": "same\n"}, force=True)
        done.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done.is_set(), "the run did not finish"
    new = out / "f.txt"
    st = new.lstat()
    assert not new.is_symlink() and new.read_text() == "same\n"
    assert st.st_ino != old_ino and st.st_nlink == 1
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())
    assert os.listxattr(new) == []
    if case == "symlink":
        assert (tmp_path / "outside.txt").read_text() == "same\n"
        assert (tmp_path / "outside.txt").stat().st_nlink == 1
    if case == "other_link":
        assert (tmp_path / "elsewhere.txt").read_text() == "same\n"
        assert (tmp_path / "elsewhere.txt").stat().st_nlink == 1


@_LINUX_ONLY
def test_force_does_not_take_over_through_a_linked_folder(tmp_path: Path) -> None:
    """A folder of the old output that is a link leads outside it: nothing is taken from there."""
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text("same\n")
    out.mkdir()
    (out / "sub").symlink_to(elsewhere, target_is_directory=True)
    write_tree(out, {"sub/f.txt": "same\n"}, force=True)
    assert not (out / "sub").is_symlink()
    assert _inode(out / "sub/f.txt") != _inode(elsewhere / "f.txt")
    assert (elsewhere / "f.txt").stat().st_nlink == 1


@_LINUX_ONLY
def test_a_file_put_twice_after_being_taken_over_leaves_the_old_folder_intact(tmp_path: Path) -> None:
    """The first put of a name is taken over, the second differs: the new file is written apart, and a
    run that then fails leaves the old folder exactly as it was (its file was never written through)."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    old_ino = _inode(out / "f.txt")
    with pytest.raises(RuntimeError), streamed_tree(out, force=True) as writer:
        writer.put("f.txt", "same\n")
        writer.put("f.txt", "other\n")
        writer.finish()
        raise RuntimeError("the run fails after its writes")
    assert (out / "f.txt").read_text() == "same\n" and _inode(out / "f.txt") == old_ino
    assert (out / "f.txt").stat().st_nlink == 1
    with streamed_tree(out, force=True) as writer:
        writer.put("f.txt", "same\n")
        writer.put("f.txt", "other\n")
    assert (out / "f.txt").read_text() == "other\n" and _inode(out / "f.txt") != old_ino


@_LINUX_ONLY
def test_a_link_that_cannot_be_checked_is_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look at the new link fails: it is removed again, the file written, the old one left alone."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    old_ino = _inode(out / "f.txt")
    lstat = os.lstat

    def failing(path: Any, *a: Any, **kw: Any) -> os.stat_result:
        if ".tmp-" in os.fspath(path) and os.fspath(path).endswith("f.txt"):
            raise OSError("no look")
        return lstat(path, *a, **kw)

    with streamed_tree(out, force=True) as writer:
        monkeypatch.setattr(skdbg.atomic.os, "lstat", failing)
        writer.put("f.txt", "same\n")
        writer._stop()  # the file is handled while the look fails; finish() then looks normally
        monkeypatch.setattr(skdbg.atomic.os, "lstat", lstat)
    assert (out / "f.txt").read_text() == "same\n" and _inode(out / "f.txt") != old_ino
    assert (out / "f.txt").stat().st_nlink == 1


def _taken_over_then(out: Path, change: Any) -> tuple[int, Path]:
    """Run a ``--force`` write of ``f.txt`` whose old file is taken over, and call ``change(old)`` once
    the link is made, before the run ends; the old inode number and the new file."""
    old = out / "f.txt"
    old_ino = _inode(old)
    with streamed_tree(out, force=True) as writer:
        writer.put("f.txt", "same\n")
        deadline = time.monotonic() + 20
        while not (writer.root / "f.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert _inode(writer.root / "f.txt") == old_ino  # taken over
        change(old)
    return old_ino, out / "f.txt"


def _append(old: Path) -> None:
    time.sleep(0.01)  # a later modification time, on any clock granularity
    with open(old, "a") as fh:
        fh.write("edited\n")


def _same_size_same_time(old: Path) -> None:
    st = old.stat()
    old.write_text("EVIL\n")
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns))  # as rsync --inplace or touch -r would


@_LINUX_ONLY
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_append, id="append"),
        pytest.param(_same_size_same_time, id="same-size-and-mtime"),
        pytest.param(lambda old: old.chmod(0o640), id="chmod"),
        pytest.param(lambda old: os.setxattr(old, "user.x", b"1"), id="xattr"),
        pytest.param(lambda old: os.link(old, old.parent.parent / "elsewhere.txt"), id="another-name"),
    ],
)
def test_any_change_to_a_file_taken_over_before_the_run_ends_is_undone(tmp_path: Path, change: Any) -> None:
    """The change time tells: the bytes put, with a new file's looks and one name, whatever was done to
    the shared file (even bytes of the same size with the modification time set back)."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    try:
        old_ino, new = _taken_over_then(out, change)
    except OSError as exc:
        pytest.skip(f"this disk refuses the change: {exc}")
    st = new.stat()
    assert new.read_text() == "same\n" and st.st_ino != old_ino and st.st_nlink == 1
    assert stat.S_IMODE(st.st_mode) != 0o640 and os.listxattr(new) == []


@_LINUX_ONLY
def test_a_folder_swapped_for_a_link_after_put_leads_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old folder's folders are opened when a file is put there; swapped for a link to another
    folder before the file is compared, they still lead to the old file, never to the other folder's."""
    out = tmp_path / "out"
    write_tree(out, {"sub/f.txt": "same\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text("same\n")
    go = threading.Event()
    take_over = skdbg.atomic._take_over

    def held(*args: Any) -> Any:
        go.wait(20)
        return take_over(*args)

    monkeypatch.setattr(skdbg.atomic, "_take_over", held)
    with streamed_tree(out, force=True) as writer:
        writer.put("sub/f.txt", "same\n")
        (out / "sub").rename(out / "moved")
        (out / "sub").symlink_to(elsewhere, target_is_directory=True)
        go.set()
    assert (out / "sub/f.txt").read_text() == "same\n" and not (out / "sub").is_symlink()
    assert (elsewhere / "f.txt").stat().st_nlink == 1
    assert _inode(out / "sub/f.txt") != _inode(elsewhere / "f.txt")


@_LINUX_ONLY
def test_a_leftover_of_the_old_folder_shares_no_file_with_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old folder could not be removed (here: its removal does nothing): the files taken over from
    it are copied apart once the new folder is in place, and the leftover keeps its own."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n", "sub/g.txt": "also\n"})
    monkeypatch.setattr(skdbg.atomic.shutil, "rmtree", lambda *a, **kw: None)
    write_tree(out, {"f.txt": "same\n", "sub/g.txt": "also\n"}, force=True)
    leftover = [p for p in tmp_path.iterdir() if p.name.startswith(".out.old-")]
    assert len(leftover) == 1
    for rel, text in (("f.txt", "same\n"), ("sub/g.txt", "also\n")):
        new, old = out / rel, leftover[0] / "previous" / rel
        assert new.read_text() == text and old.read_text() == text
        assert new.stat().st_nlink == 1 and old.stat().st_nlink == 1 and _inode(new) != _inode(old)
    assert sorted(p.name for p in out.iterdir()) == ["f.txt", "sub"]  # no spare copy left behind


def _failing_swap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rename of the staging folder onto the output fails (EBUSY); every other rename works."""
    replace = os.replace

    def failing(src: Any, dst: Any) -> None:
        if ".tmp-" in os.fspath(src):
            raise OSError(errno.EBUSY, "busy", os.fspath(dst))
        replace(src, dst)

    monkeypatch.setattr(skdbg.atomic.os, "replace", failing)


@pytest.mark.parametrize("old_files", [{"f.txt": "old\n"}, {}], ids=["old-folder", "empty-folder"])
def test_a_failed_swap_leaves_the_output_folder_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_files: dict[str, str]
) -> None:
    """The new folder cannot take the old one's place (the rename fails): the old folder is back at its
    name, whole, or the empty one made again with its mode, and nothing is left beside it."""
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o750)
    for rel, text in old_files.items():
        (out / rel).write_text(text)
    _failing_swap(monkeypatch)
    with pytest.raises(OSError, match="busy"):
        write_tree(out, {"f.txt": "new\n"}, force=True)
    assert {p.name: p.read_text() for p in out.iterdir()} == old_files
    assert stat.S_IMODE(out.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _chown_away(old: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs chown")
    os.chown(old, 4242, 4242)


_CHANGES = [
    pytest.param(lambda old: _append(old), id="append"),
    pytest.param(lambda old: _same_size_same_time(old), id="same-size-and-mtime"),
    pytest.param(lambda old: old.chmod(0o640), id="chmod"),
    pytest.param(lambda old: os.setxattr(old, "user.x", b"1"), id="xattr"),
    pytest.param(_chown_away, id="chown"),
]


@_LINUX_ONLY
@pytest.mark.parametrize("change", _CHANGES)
def test_a_change_in_the_instant_of_the_link_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    """The old file changes between its comparison and its link (here: right after the link, before the
    link is looked at): the link is taken back and the file written, with the bytes put and a new
    file's looks."""
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    old = out / "f.txt"
    old_ino = _inode(old)
    link = os.link
    calls: list[str] = []

    def link_then_change(*args: Any, **kw: Any) -> None:
        link(*args, **kw)
        calls.append("link")
        change(old)

    with streamed_tree(out, force=True) as writer:
        monkeypatch.setattr(skdbg.atomic.os, "link", link_then_change)  # after the writer checked os.link
        writer.put("f.txt", "same\n")
    assert calls == ["link"]  # the old file was taken over, then changed
    new = out / "f.txt"
    st = new.stat()
    assert new.read_text() == "same\n" and st.st_ino != old_ino and st.st_nlink == 1
    assert stat.S_IMODE(st.st_mode) != 0o640 and os.listxattr(new) == []
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())


@_LINUX_ONLY
def test_a_tree_of_many_folders_keeps_few_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_OLD_FOLDERS open folders of the old tree, the files of the others are written, not taken
    over: a large tree never runs out of descriptors."""
    monkeypatch.setattr(skdbg.atomic, "MAX_OLD_FOLDERS", 3)  # the old root and two of its folders
    out = tmp_path / "out"
    files = {f"d{i}/f.txt": f"{i}\n" for i in range(5)}
    write_tree(out, files)
    before = {rel: _inode(out / rel) for rel in files}
    write_tree(out, files, force=True)
    taken = [rel for rel in files if _inode(out / rel) == before[rel]]
    assert taken == ["d0/f.txt", "d1/f.txt"]
    assert all((out / rel).read_text() == text for rel, text in files.items())


def test_a_ctrl_c_during_the_swap_is_raised_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the old folder is being removed: the swap ends (old folder removed, nothing left
    beside the new one), then the interrupt is raised."""
    import signal

    out = tmp_path / "out"
    write_tree(out, {"f.txt": "old\n"})
    rmtree = shutil.rmtree

    def interrupted(path: Any, *args: Any, **kw: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        rmtree(path, *args, **kw)

    monkeypatch.setattr(skdbg.atomic.shutil, "rmtree", interrupted)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_tree(out, {"f.txt": "new\n"}, force=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (out / "f.txt").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_new_folder_has_the_permissions_of_a_folder_made_now(tmp_path: Path) -> None:
    """Not the private ones of a temporary folder: as ``mkdir`` makes it (and as its own folders are)."""
    made = tmp_path / "made"
    made.mkdir()
    out = tmp_path / "out"
    write_tree(out, {"sub/f.txt": "x"})
    mode = stat.S_IMODE(made.stat().st_mode)
    assert stat.S_IMODE(out.stat().st_mode) == mode == stat.S_IMODE((out / "sub").stat().st_mode)


@pytest.mark.parametrize("rel", [".", "./", "sub/.."])
def test_the_folder_itself_is_no_file_name(tmp_path: Path, rel: str) -> None:
    with pytest.raises(ValueError, match="not a path inside the output folder"):
        write_tree(tmp_path / "out", {rel: "x"}, force=True)
    assert list(tmp_path.iterdir()) == []


@_LINUX_ONLY
def test_a_file_of_a_long_name_is_copied_apart_from_a_leftover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy is written under a short name of its own: a name near the system's limit still fits."""
    out = tmp_path / "out"
    long = "n" * 240 + ".txt"
    write_tree(out, {long: "same\n", "z.txt": "z\n"})
    monkeypatch.setattr(skdbg.atomic.shutil, "rmtree", lambda *a, **kw: None)
    write_tree(out, {long: "same\n", "z.txt": "z\n"}, force=True)
    assert (out / long).stat().st_nlink == 1 and (out / "z.txt").stat().st_nlink == 1
    assert sorted(p.name for p in out.iterdir()) == sorted([long, "z.txt"])


def test_no_descriptor_is_left_open_when_the_writer_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_tree(out, {"f.txt": "same\n"})
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("no /proc/self/fd to count descriptors")
    before = len(list(fds.iterdir()))

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    with pytest.raises(RuntimeError, match="can't start"):
        write_tree(out, {"f.txt": "same\n"}, force=True)
    assert len(list(fds.iterdir())) == before
    assert (out / "f.txt").read_text() == "same\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
