"""The plog scan asks the kernel for the bytes ahead of it (issue 18, cold first run).

What must hold: the advice covers the whole file in order, never more than one window ahead of what
was read, each byte range asked for once; a file system that refuses the advice is read as before;
and the scan's results are the same with and without it (advice never changes what ``read`` returns,
but the hook sits inside the read loop, so the loop is checked not to be disturbed).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skdbg.parsers import plog as plog_mod
from skdbg.parsers import readahead
from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines
from skdbg.parsers.readahead import ReadAhead

RT_LINE = (
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:03:21.518.100 [device_error_proc.cc:1166]48301 "
    b"ProcessStarsCoreErrorInfo:[EXEC]The extend info: errcode:(0x800000)\n"
)
NOISE = b"[INFO] GE(48213,python3):2026-06-10-14:03:21.518.000 [graph.cc:12]48301 Run: step done\n"


def _recorder(calls: list[tuple[int, int, int, int]]) -> object:
    def advise(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((fd, offset, length, advice))

    return advise


def test_windows_are_asked_in_order_and_only_when_half_used(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _recorder(calls))
    ahead = ReadAhead(7, window=100)
    assert calls == [(7, 0, 100, readahead._WILLNEED)]
    ahead.reached(30)  # 70 still asked for ahead: more than half a window
    assert len(calls) == 1
    ahead.reached(50)  # exactly half a window left ahead: the next window
    assert calls[1][1:3] == (100, 100)
    ahead.reached(260)  # the reader ran past what was asked: ask from where it is
    assert calls[2][1:3] == (260, 100)
    assert ahead.asked == 360


def test_a_refused_advice_turns_it_off_and_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    tries: list[int] = []

    def refuse(fd: int, offset: int, length: int, advice: int) -> None:
        tries.append(offset)
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(readahead, "_ADVISE", refuse)
    ahead = ReadAhead(3, window=10)
    ahead.reached(100)
    assert tries == [0]
    assert ahead.enabled is False


def test_no_advice_where_the_platform_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "_ADVISE", None)
    ahead = ReadAhead(3, window=10)
    ahead.reached(100)
    assert (ahead.enabled, ahead.asked) == (False, 0)


def _plog(tmp_path: Path) -> tuple[Path, bytes]:
    body = b"".join(RT_LINE if i % 37 == 5 else NOISE for i in range(3000))
    path = tmp_path / "plog-48213_20260610140058123.log"
    path.write_bytes(body)
    return path, body


def test_the_scan_asks_ahead_of_each_block_over_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, body = _plog(tmp_path)
    calls: list[tuple[int, int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _recorder(calls))
    monkeypatch.setattr(readahead, "WINDOW", 8192)
    monkeypatch.setattr(plog_mod, "CHUNK", 4096)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    found = list(scan_marker_lines(path, FAULT_MARKERS))
    starts = [c[1] for c in calls]
    assert starts == sorted(set(starts)), "each range asked for once, in file order"
    assert starts[0] == 0 and all(c[2] == 8192 for c in calls)
    assert starts[-1] + 8192 >= len(body), "the advice reached the end of the file"
    assert len(found) == body.count(RT_LINE)


def test_the_scan_finds_the_same_lines_with_and_without_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, body = _plog(tmp_path)
    monkeypatch.setattr(plog_mod, "CHUNK", 4096)
    runs = []
    for advise in (getattr(os, "posix_fadvise", None), None):
        monkeypatch.setattr(readahead, "_ADVISE", advise)
        monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
        runs.append(list(scan_marker_lines(path, FAULT_MARKERS)))
    lines = body.split(b"\n")
    expected = [(i + 1, ln, True) for i, ln in enumerate(lines) if ln + b"\n" == RT_LINE]
    assert runs[0] == runs[1] == expected


# ---------------------------------------------------------------- many files read in turn (the hasher)


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file probed is out of the page cache (a test's files were just written: they are warm)."""
    monkeypatch.setattr(readahead, "_residency", lambda path: "cold")


def _files(tmp_path: Path, sizes: list[int]) -> list[Path]:
    paths = []
    for i, size in enumerate(sizes):
        p = tmp_path / f"Op{i:04d}.o"
        p.write_bytes(bytes([i % 251]) * size)
        paths.append(p)
    return paths


def _inode_recorder(calls: list[tuple[int, int, int]]) -> object:
    """Records (inode, offset, length) of each advice: which file was asked for, and how much."""

    def advise(fd: int, offset: int, length: int, advice: int) -> None:
        assert advice == readahead._WILLNEED
        calls.append((os.fstat(fd).st_ino, offset, length))

    return advise


@pytest.mark.usefixtures("cold")
def test_files_are_asked_for_once_each_in_order_and_a_bounded_count_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path, [100] * 10)
    ino = {p.stat().st_ino: i for i, p in enumerate(paths)}
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    ahead = readahead.FilesAhead(paths, window=1 << 20, files=3)
    ahead.reached(0)
    assert [ino[c[0]] for c in calls] == [0, 1, 2]
    assert all(c[1:] == (0, 100) for c in calls), "a small file is asked for whole"
    ahead.reached(0)  # the same position again: nothing new
    assert len(calls) == 3
    ahead.reached(1)
    assert [ino[c[0]] for c in calls] == [0, 1, 2, 3]
    ahead.reached(8)  # the reader skipped ahead: from where it is, never back
    ahead.reached(9)
    assert [ino[c[0]] for c in calls] == [0, 1, 2, 3, 8, 9]


@pytest.mark.usefixtures("cold")
def test_the_bytes_ahead_are_bounded_and_a_large_file_gives_its_first_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path, [300, 5000, 300, 300, 300])
    ino = {p.stat().st_ino: i for i, p in enumerate(paths)}
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    ahead = readahead.FilesAhead(paths, window=1000, files=100)
    ahead.reached(0)
    # 300 asked, then the large file's first 1000 bytes fill the window: the files after it wait
    assert [(ino[c[0]], c[2]) for c in calls] == [(0, 300), (1, 1000)]
    ahead.reached(1)  # file 0 read: 1000 bytes in flight still, the window is full
    assert len(calls) == 2
    ahead.reached(2)  # the large file read too: room for the rest
    assert [(ino[c[0]], c[2]) for c in calls][2:] == [(2, 300), (3, 300), (4, 300)]


@pytest.mark.usefixtures("cold")
def test_a_file_that_does_not_open_or_is_no_regular_file_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths: list[Path] = _files(tmp_path, [10, 10])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opened non-blocking: no writer must not hang the reader
    missing = tmp_path / "gone.o"
    order = [paths[0], missing, fifo, tmp_path, paths[1]]
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    ahead = readahead.FilesAhead(order, window=1 << 20, files=10)
    ahead.reached(0)
    assert [c[0] for c in calls] == [paths[0].stat().st_ino, paths[1].stat().st_ino]
    assert ahead.asked == 5 and ahead.enabled


@pytest.mark.usefixtures("cold")
def test_a_refused_file_advice_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _files(tmp_path, [10, 10, 10])
    tries: list[int] = []

    def refuse(fd: int, offset: int, length: int, advice: int) -> None:
        tries.append(fd)
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(readahead, "_ADVISE", refuse)
    ahead = readahead.FilesAhead(paths, window=1 << 20, files=10)
    ahead.reached(0)
    ahead.reached(1)
    assert len(tries) == 1 and ahead.enabled is False


@pytest.mark.usefixtures("cold")
def test_the_hasher_asks_for_every_file_once_and_hashes_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    from skdbg.scene import open_scene

    model = tmp_path / "sk_meta" / "48213" / "model_48_1"
    (model / "bin_files").mkdir(parents=True)
    (model / "super_kernel.log").write_bytes(b"")
    bins = [model / "bin_files" / f"Op{i:04d}_000000_0x1240{i:08X}.o" for i in range(40)]
    for i, p in enumerate(bins):
        p.write_bytes(b"\x7fELF" + bytes([i]) * (50 + i))
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    monkeypatch.setattr(readahead, "FILES_AHEAD", 8)
    scene = open_scene(tmp_path)
    scene.start_hashing().join()
    by_ino = {a.path.stat().st_ino: a for a in scene.artifacts}
    asked = [by_ino[c[0]].path for c in calls]
    assert sorted(map(str, asked)) == sorted(str(a.path) for a in scene.artifacts if a.path.stat().st_size)
    assert len(asked) == len(set(asked)), "each file asked for once"
    for p in bins:
        art = next(a for a in scene.artifacts if a.path == p)
        assert art.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.usefixtures("cold")
def test_the_plog_scan_asks_for_the_plogs_ahead_once_each_in_scan_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skdbg.scene import evidence_for, open_scene

    plog_dir = tmp_path / "log" / "plog"
    plog_dir.mkdir(parents=True)
    paths = []
    for pid in (48213, 48214):  # two ranks, three rotated files each
        for k in range(3):
            p = plog_dir / f"plog-{pid}_2026061014000{k}000.log"
            p.write_bytes(RT_LINE.replace(b"48213", str(pid).encode()) + NOISE * (k + 1))
            paths.append(p)
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    monkeypatch.setattr(readahead, "FILES_AHEAD", 2)
    scanned: list[str] = []
    original = plog_mod.open_regular_fd  # the scan opens each plog through it, in the order it reads them

    def spy(path: object, *a: object, **k: object) -> object:
        scanned.append(str(path))
        return original(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(plog_mod, "open_regular_fd", spy)
    evidence = evidence_for(open_scene(tmp_path))
    lines = [ln for pe in evidence.plogs for ln in pe.lines]
    by_ino = {p.stat().st_ino: str(p) for p in paths}
    # the files-ahead window asks for a small file whole; its own scan then asks for a read-ahead window
    whole = [by_ino[ino] for ino, offset, length in calls if length == os.path.getsize(by_ino[ino])]
    assert sorted(scanned) == sorted(map(str, paths))
    assert whole == scanned, "each plog asked for once, in the order the scan reads them"
    assert len(lines) == 6


# ---------------------------------------------------------------- warm files: probed, not asked for


def test_warm_files_are_probed_every_few_and_asked_for_from_the_first_cold_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the files probed are in the page cache nothing is asked (four system calls a file saved);
    the first probe that finds a file out of it starts the asking from that file, and it stays on. A
    file that does not open tells nothing: the next file is probed."""
    paths = _files(tmp_path, [10] * 40)
    index = {str(p): i for i, p in enumerate(paths)}
    probed: list[int] = []
    cold_from, unopened = 20, 8

    def probe(path: Path) -> str:
        i = index[str(path)]
        probed.append(i)
        return "unopened" if i == unopened else "cached" if i < cold_from else "cold"

    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_residency", probe)
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    monkeypatch.setattr(readahead, "PROBE_EVERY", 8)
    ino = {p.stat().st_ino: i for i, p in enumerate(paths)}
    ahead = readahead.FilesAhead(paths, window=1 << 20, files=4)
    for i in range(cold_from + 6):
        ahead.reached(i)
    assert probed == [0, 8, 9, 17, 25], "one file in PROBE_EVERY while warm, the next after one unopened"
    # file 25 was the first probed out of the cache: asked for from there, never the warm ones before
    assert [ino[c[0]] for c in calls] == [25, 26, 27, 28]
    ahead.reached(26)
    assert [ino[c[0]] for c in calls][-1] == 29 and probed == [0, 8, 9, 17, 25], "no probe once cold"


def test_a_probe_that_cannot_tell_asks_ahead_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path, [10] * 3)
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_residency", lambda path: "unknown")
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    readahead.FilesAhead(paths, window=1 << 20, files=10).reached(0)
    assert len(calls) == 3


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1


def test_the_probe_reads_one_byte_at_each_end_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_residency``: a one-byte ``RWF_NOWAIT`` read of the first and the last byte; EAGAIN is cold,
    any other refusal or a platform without such reads is unknown; every descriptor is closed."""
    big, one, empty = _files(tmp_path, [100, 1, 0])
    reads: list[tuple[int, int, int]] = []

    def preadv(fd: int, buffers: list[bytearray], offset: int, flags: int) -> int:
        reads.append((len(buffers[0]), offset, flags))
        return len(buffers[0])

    monkeypatch.setattr(readahead, "_PREADV", preadv)
    monkeypatch.setattr(readahead, "_NOWAIT", 0x8)
    fds = _open_fds()
    assert readahead._residency(big) == "cached" and reads == [(1, 0, 0x8), (1, 99, 0x8)]
    reads.clear()
    assert readahead._residency(one) == "cached" and reads == [(1, 0, 0x8)]
    assert readahead._residency(empty) == "cached"

    def cold_tail(fd: int, buffers: list[bytearray], offset: int, flags: int) -> int:
        if offset:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return 1

    monkeypatch.setattr(readahead, "_PREADV", cold_tail)
    assert readahead._residency(big) == "cold", "a head read by a sniffer does not make the file warm"

    def refused(fd: int, buffers: list[bytearray], offset: int, flags: int) -> int:
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(readahead, "_PREADV", refused)
    assert readahead._residency(big) == "unknown"
    assert _open_fds() == fds, "no descriptor left open"
    monkeypatch.setattr(readahead, "_NOWAIT", None)
    assert readahead._residency(big) == "unknown"


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="RWF_NOWAIT reads are Linux's")
def test_the_real_probe_on_odd_paths_never_hangs_or_leaks(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opened non-blocking: no writer must not hang the probe
    fds = _open_fds()
    assert readahead._residency(fifo) in ("cached", "unknown")
    assert readahead._residency(tmp_path) == "unknown"  # a directory: EISDIR
    assert readahead._residency(tmp_path / "gone.o") == "unopened"
    assert readahead._residency(str(tmp_path / "nul\0name")) == "unopened"
    assert _open_fds() == fds


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="RWF_NOWAIT reads are Linux's")
def test_the_real_probe_tells_a_warm_file_from_an_evicted_one() -> None:
    """On the repository's own file system (a test folder may be tmpfs, which cannot tell): written and
    read, the file is cached; its pages dropped (``POSIX_FADV_DONTNEED`` after ``fsync``), it is cold."""
    import tempfile

    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as folder:
        path = Path(folder) / "probe.bin"
        path.write_bytes(os.urandom(1 << 16))
        path.read_bytes()
        if readahead._residency(path) == "unknown":
            pytest.skip("this file system has no RWF_NOWAIT reads")
        assert readahead._residency(path) == "cached"
        with path.open("rb") as fh:  # clean pages only can be dropped: written out first
            os.fsync(fh.fileno())
            os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        assert readahead._residency(path) == "cold"


@pytest.mark.usefixtures("cold")
def test_a_cold_scene_of_one_rank_has_its_sk_meta_files_asked_for_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the main thread parses next (every sk_meta file of the rank) is asked for when the scan
    starts; of a scene of several ranks (each rank's handler block only), nothing."""
    import shutil

    from skdbg.scene import evidence_for, open_scene

    root = tmp_path / "one"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream", root)
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    ev = evidence_for(open_scene(root))
    (model,) = ev.models
    ev.ask_ahead_sk_meta()
    assert sorted(c[0] for c in calls) == sorted(p.stat().st_ino for p in model.files.values())
    assert len(model.files) >= 5
    pid_dir = model.path.parent
    shutil.copytree(pid_dir, pid_dir.with_name(str(int(pid_dir.name) + 1)))  # a second rank
    calls.clear()
    two = evidence_for(open_scene(root))
    assert len({m.pid for m in two.models}) == 2
    two.ask_ahead_sk_meta()
    assert calls == []


@pytest.mark.usefixtures("cold")
def test_an_index_past_the_files_asks_for_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model folder with no sk_meta file (found by the scene fuzzer) or a reader past the end."""
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(readahead, "_ADVISE", _inode_recorder(calls))
    readahead.FilesAhead([]).reached(0)
    ahead = readahead.FilesAhead(_files(tmp_path, [100] * 2))
    ahead.reached(5)
    assert calls == []
    ahead.reached(1)
    assert len(calls) == 1
