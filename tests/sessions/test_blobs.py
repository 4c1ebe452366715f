"""The evidence object store: files stored together, flushed before they are named (sessions/blobs.py)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from skdbg.sessions import blobs
from skdbg.sessions.blobs import Digest, ObjectStore
from skdbg.sessions.errors import LedgerUnavailable


def _files(folder: Path, contents: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, data in enumerate(contents):
        p = folder / f"f{i}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths


def _sources_and_store(tmp_path: Path, contents: list[bytes]) -> tuple[list[Path], ObjectStore]:
    """Files of ``contents`` under ``src/`` and an empty store under ``objects/``."""
    return _files(tmp_path / "src", contents), ObjectStore(tmp_path / "objects")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_put_files_stores_each_under_its_hash_and_answers_in_order(tmp_path: Path) -> None:
    # a duplicate, an empty file, one of several read chunks
    contents = [b"alpha\n", b"", b"beta" * (blobs.CHUNK // 2), b"alpha\n"]
    paths, store = _sources_and_store(tmp_path, contents)
    got = store.put_files(paths)
    assert got == [Digest(_sha(c), len(c)) for c in contents]
    for c in contents:
        obj = store.path(_sha(c))
        assert obj.read_bytes() == c
        assert stat.S_IMODE(obj.stat().st_mode) == 0o444
    stored = sorted(p.name for p in (tmp_path / "objects").rglob("*") if p.is_file())
    assert stored == sorted({_sha(c) for c in contents})  # the duplicate once, no temp file left


def test_a_missing_source_is_answered_in_its_place_and_the_others_are_stored(tmp_path: Path) -> None:
    paths, store = _sources_and_store(tmp_path, [b"one", b"two"])
    gone = tmp_path / "src" / "gone.bin"
    got = store.put_files([paths[0], gone, paths[1]])
    assert got[0] == Digest(_sha(b"one"), 3) and got[2] == Digest(_sha(b"two"), 3)
    assert isinstance(got[1], FileNotFoundError) and got[1].filename == str(gone)
    assert store.has(_sha(b"one")) and store.has(_sha(b"two"))
    with pytest.raises(FileNotFoundError):
        store.put_file(gone)


def test_content_stored_before_is_not_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths, store = _sources_and_store(tmp_path, [b"kept", b"new"])
    store.put_file(paths[0])
    flushed: list[list[Path]] = []
    real = blobs._flush
    monkeypatch.setattr(blobs, "_flush", lambda ps, **kw: (flushed.append(list(ps)), real(ps, **kw))[1])
    assert store.put_files(paths) == [Digest(_sha(b"kept"), 4), Digest(_sha(b"new"), 3)]
    assert [p.name.startswith(".tmp-") for p in flushed[0]] == [True]  # only the new content's copy
    assert set(flushed[1]) == {store.path(_sha(b"new")).parent, store.root, store.root.parent}  # its name


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names an open file through /proc (Linux)")
def test_copies_are_flushed_before_they_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every copy is on the disk (its fsync done) before any of them is renamed onto its hash name, and
    the folders holding the names are flushed after the renames."""
    paths, store = _sources_and_store(tmp_path, [bytes([i]) * 10 for i in range(20)])
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        with lock:
            events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        with lock:
            events.append(("rename", str(b)))
        real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    store.put_files(paths)
    kinds = [k for k, _ in events]
    first_rename, last_rename = kinds.index("rename"), len(kinds) - 1 - kinds[::-1].index("rename")
    copies = [p for k, p in events[:first_rename] if k == "fsync"]
    assert len(copies) == 20 and all(Path(p).name.startswith(".tmp-") for p in copies)
    folders = {p for k, p in events[last_rename + 1 :] if k == "fsync"}
    assert folders == {str(store.path(_sha(bytes([i]) * 10)).parent) for i in range(20)} | {
        str(store.root),
        str(store.root.parent),
    }


def test_a_failed_flush_is_a_clear_error_and_leaves_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, store = _sources_and_store(tmp_path, [b"x" * 5000, b"y" * 5000, b"z"])
    calls = []

    def full(fd: int) -> None:
        calls.append(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(LedgerUnavailable, match="No space left on device"):
        store.put_files(paths)
    assert len(calls) == 3  # every copy was asked (the pool finishes before the error is raised)
    assert not [p for p in (tmp_path / "objects").rglob("*") if p.is_file()]  # no copy, no object
    with pytest.raises(LedgerUnavailable, match="cannot write to .*No space left"):
        store.put_bytes(b"snapshot")
    assert not [p for p in (tmp_path / "objects").rglob("*") if p.is_file()]


def test_put_many_stores_each_blob_once_in_order(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    got = store.put_many([b"a", b"b", b"a"])
    assert got == [Digest(_sha(b"a"), 1), Digest(_sha(b"b"), 1), Digest(_sha(b"a"), 1)]
    assert store.read_bytes(_sha(b"b"), "b") == b"b"
    assert store.put_bytes(b"b") == Digest(_sha(b"b"), 1)
    assert sorted(p.name for p in store.root.rglob("*") if p.is_file()) == sorted([_sha(b"a"), _sha(b"b")])


def test_flush_asks_every_path_even_after_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _files(tmp_path, [b"1", b"2", b"3", b"4"])
    asked: list[Path] = []
    lock = threading.Lock()

    def one(path: Path, folder: bool) -> None:
        with lock:
            asked.append(path)
        if path == paths[1]:
            raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(blobs, "_fsync_path", one)
    with pytest.raises(OSError, match="Input/output error"):
        blobs._flush(paths)
    assert sorted(asked) == sorted(paths)


def test_known_stored_content_is_hashed_not_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source whose earlier digest names stored content is read and hashed only; one that changed
    since that digest is copied like any other, and one with no digest known is copied."""
    paths, store = _sources_and_store(tmp_path, [b"same", b"was", b"fresh"])
    store.put_files(paths[:2])
    paths[1].write_bytes(b"now")  # changed after it was hashed
    copied: list[Path] = []
    real = store._stage
    monkeypatch.setattr(store, "_stage", lambda src, buf, held: (copied.append(src), real(src, buf, held))[1])
    got = store.put_files(paths, [_sha(b"same"), _sha(b"was"), None])
    assert got == [Digest(_sha(b"same"), 4), Digest(_sha(b"now"), 3), Digest(_sha(b"fresh"), 5)]
    assert copied == [paths[1], paths[2]]
    assert store.path(_sha(b"now")).read_bytes() == b"now"
    assert not list(store.root.glob(".tmp-*"))


def _left(root: Path) -> list[str]:
    return (
        sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        if root.exists()
        else []
    )


def test_a_failure_while_staging_names_the_source_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, store = _sources_and_store(tmp_path, [b"a", b"b", b"c"])
    real, made = store._tmp, []

    def tmp() -> tuple[int, Path]:
        made.append(1)
        if len(made) == 3:
            raise OSError(28, "No space left on device")
        return real()

    monkeypatch.setattr(store, "_tmp", tmp)
    with pytest.raises(LedgerUnavailable, match=r"cannot store .*f2\.bin in .*No space left on device"):
        store.put_files(paths)
    assert _left(store.root) == []


def test_a_failed_rename_keeps_the_objects_named_before_it_and_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, store = _sources_and_store(tmp_path, [b"a", b"b", b"c"])
    real, renamed = os.replace, []

    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        renamed.append(b)
        if len(renamed) == 2:
            raise OSError(5, "Input/output error")
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(LedgerUnavailable, match="Input/output error"):
        store.put_files(paths)
    left = _left(store.root)
    assert len(left) == 1 and Path(left[0]).name == Path(renamed[0]).name  # whole, and named
    assert store.path(Path(left[0]).name).read_bytes() in (b"a", b"b", b"c")


def test_a_folder_without_fsync_is_no_error_a_file_without_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system that has no ``fsync`` for folders answers EINVAL: the objects are stored and named,
    and the call succeeds; a file's flush that fails is still an error."""
    paths, store = _sources_and_store(tmp_path, [b"a", b"b"])
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert store.put_files(paths) == [Digest(_sha(b"a"), 1), Digest(_sha(b"b"), 1)]
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(22, "Invalid argument")))
    with pytest.raises(LedgerUnavailable, match="Invalid argument"):
        store.put_bytes(b"new content")
    assert not store.has(_sha(b"new content"))


def test_each_copy_is_flushed_through_a_descriptor_open_for_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows (and SMB's Linux client, silently) refuse to flush a file through a read-only descriptor."""
    pytest.importorskip("fcntl")
    paths, store = _sources_and_store(tmp_path, [b"a", b"b"])
    real = os.fsync
    modes: list[int] = []

    def fsync(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            import fcntl

            modes.append(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store.put_files(paths)
    store.put_bytes(b"snapshot")
    assert modes == [os.O_WRONLY] * 3


def test_identical_sources_are_copied_and_flushed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, store = _sources_and_store(tmp_path, [b"same", b"other", b"same"])
    flushed: list[list[Path]] = []
    real, real_tmp, temps = blobs._flush, store._tmp, []
    monkeypatch.setattr(blobs, "_flush", lambda ps, **kw: (flushed.append(list(ps)), real(ps, **kw))[1])
    monkeypatch.setattr(store, "_tmp", lambda: (temps.append(1), real_tmp())[1])
    got = store.put_files(paths)
    assert got[0] == got[2] == Digest(_sha(b"same"), 4)
    assert len(temps) == 2 and len(flushed[0]) == 2  # the second "same" read and hashed, not copied
    big = b"B" * (blobs.CHUNK + 7)  # larger than a read: copied while hashed, the second copy dropped
    paths = _files(tmp_path / "big", [big, big])
    assert store.put_files(paths, [None, _sha(big)]) == [Digest(_sha(big), len(big))] * 2
    assert len(temps) == 3
    assert _left(store.root) == sorted(f"{h[:2]}/{h}" for h in (_sha(b"same"), _sha(b"other"), _sha(big)))


def test_a_missing_source_with_a_known_digest_is_answered_in_place(tmp_path: Path) -> None:
    paths, store = _sources_and_store(tmp_path, [b"x"])
    store.put_files(paths)
    paths[0].unlink()
    got = store.put_files(paths, [_sha(b"x")])
    assert isinstance(got[0], FileNotFoundError) and got[0].filename == str(paths[0])


def test_interrupted_while_staging_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths, store = _sources_and_store(tmp_path, [b"a", b"b", b"c"])
    real, calls = store._stage, []

    def stage(src: Path, buf: bytearray, held: Callable[[str], bool]) -> tuple[Path | None, Digest]:
        calls.append(src)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(src, buf, held)

    monkeypatch.setattr(store, "_stage", stage)
    with pytest.raises(KeyboardInterrupt):
        store.put_files(paths)
    assert _left(store.root) == []


def test_no_flush_thread_outlives_an_interrupted_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the copies are flushed: the flushes under way are waited for (the process may fork
    next only with no other thread), and the interrupt is raised then, the copies removed."""
    import signal
    import time

    paths, store = _sources_and_store(tmp_path, [bytes([i]) for i in range(4)])
    real, done = blobs._fsync_path, []

    def slow(path: Path, folder: bool) -> None:
        time.sleep(0.4)
        real(path, folder)
        done.append(path)

    monkeypatch.setattr(blobs, "_fsync_path", slow)
    timer = threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            store.put_files(paths)
    finally:
        timer.cancel()
        timer.join()  # no thread of this test left running (later tests count objects)
    assert len(done) == 4  # every copy's flush finished before the interrupt was raised
    assert not [t for t in threading.enumerate() if t.name.startswith("skdbg-fsync") and t.is_alive()]
    assert _left(store.root) == []


def test_stored_small_files_are_read_not_copied_known_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that fits in one read is hashed before any copy is made: content the store holds (the
    kernel ELFs every attempt of a loop shares) makes no temp file, with no digest known."""
    paths, store = _sources_and_store(tmp_path, [b"elf-1", b"elf-2", b"new-log"])
    store.put_files(paths[:2])
    real_tmp, temps = store._tmp, []
    monkeypatch.setattr(store, "_tmp", lambda: (temps.append(1), real_tmp())[1])
    assert store.put_files(paths) == [Digest(_sha(c), len(c)) for c in (b"elf-1", b"elf-2", b"new-log")]
    assert temps == [1]  # only the new content was copied


def test_a_file_exactly_one_read_long_is_whole(tmp_path: Path) -> None:
    """A source of exactly one buffer is told from a longer one by a second read, not by its size."""
    one, more = b"x" * blobs.CHUNK, b"y" * blobs.CHUNK + b"z"
    paths, store = _sources_and_store(tmp_path, [one, more])
    assert store.put_files(paths) == [Digest(_sha(one), len(one)), Digest(_sha(more), len(more))]
    assert store.read_bytes(_sha(more), "more") == more


def test_where_no_thread_can_start_the_rest_are_flushed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    paths = _files(tmp_path, [bytes([i]) * 3 for i in range(6)])
    asked: list[Path] = []
    monkeypatch.setattr(blobs, "_fsync_path", lambda path, folder: asked.append(path))
    real_submit, submitted = ThreadPoolExecutor.submit, []

    def submit(self: ThreadPoolExecutor, fn: Callable[..., object], *args: object) -> object:
        if len(submitted) == 2:
            raise RuntimeError("can't start new thread")
        submitted.append(args)
        return real_submit(self, fn, *args)

    monkeypatch.setattr(ThreadPoolExecutor, "submit", submit)
    blobs._flush(paths)
    assert sorted(asked) == sorted(paths)


def test_a_copy_the_owner_may_not_write_is_flushed_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A umask that takes the owner's write bit (or a mount with fixed modes) refuses to open the copy
    for writing; the flush then goes through a read-only descriptor."""
    paths, store = _sources_and_store(tmp_path, [b"a", b"b"])
    real_open, modes = os.open, []

    def refusing(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path).name.startswith(".tmp-") and flags & os.O_ACCMODE == os.O_WRONLY:
            raise PermissionError(13, "Permission denied", str(path))
        modes.append(flags & os.O_ACCMODE)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing)
    assert store.put_files(paths) == [Digest(_sha(b"a"), 1), Digest(_sha(b"b"), 1)]
