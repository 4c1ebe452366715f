"""A scan that hashes in step (:func:`skdbg.parsers.plog.hash_in_step`, the forked child's scan on a
machine of two CPUs) finds the lines a scan through a hash lane finds, hashes every byte once and in
order, starts no lane thread, and keeps the lines read before a failed read.

The blocks and pieces are made tiny here, so every file crosses many blocks and many pieces; the lines
are the hand-written plog lines of artifacts.md §1.1 among plain ones.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdbg.parsers import plog as plog_mod
from skdbg.parsers.hashbehind import HashLane
from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines, scan_plog_files
from tests.support.plog_lines import HAND_LINES

PLAIN = b"[INFO] GE(48213,python3):2026-06-10-14:00:00.000.001 [graph.cc:1]48213 Build: nothing to see"


@contextmanager
def _scan_state(chunk: int, step: int, *, in_step: bool) -> Iterator[list[int]]:
    """Blocks of ``chunk`` bytes and pieces of ``step``, a fresh per-thread state (hashing in step or
    not), every file over the lane threshold. Yields the sizes of the bytes fed to a lane (none may be
    fed in step)."""
    fed: list[int] = []
    real_feed = HashLane.feed

    def feed(self: HashLane, hasher: object, data: bytes | memoryview) -> None:
        fed.append(len(data))
        real_feed(self, hasher, data)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(plog_mod, "CHUNK", chunk)
        m.setattr(plog_mod, "MAX_LINE", max(64, chunk // 4))
        m.setattr(plog_mod, "_STEP", step)
        m.setattr(plog_mod, "_LANE_FILE", 0)
        m.setattr(plog_mod, "_STATE", plog_mod._ScanState())
        m.setattr(HashLane, "feed", feed)
        if in_step:
            plog_mod.hash_in_step()
        yield fed


def _scan(
    path: Path, chunk: int, step: int, *, in_step: bool
) -> tuple[list[object], list[object], str, list[int]]:
    sha = hashlib.sha256()
    cuts: list[tuple[int, int]] = []
    with _scan_state(chunk, step, in_step=in_step) as fed:
        lines = list(scan_marker_lines(path, FAULT_MARKERS, cuts, sha))
    return lines, cuts, sha.hexdigest(), fed


_LINE = st.sampled_from([PLAIN, *HAND_LINES, b"x" * 300, b"", b"\xe8\xae\xbe\xe5\xa4\x87 " + HAND_LINES[0]])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(_LINE, min_size=0, max_size=40),
    ends_with_newline=st.booleans(),
    chunk=st.sampled_from([256, 512, 1000, 4096]),
    step=st.integers(min_value=1, max_value=700),
)
def test_in_step_finds_the_lanes_lines_and_hashes_every_byte(
    tmp_path: Path, lines: list[bytes], ends_with_newline: bool, chunk: int, step: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if ends_with_newline and lines else b"")
    path = tmp_path / "plog-48213_20260610140000001.log"
    path.write_bytes(data)

    lane_lines, lane_cuts, lane_sha, lane_fed = _scan(path, chunk, step, in_step=False)
    step_lines, step_cuts, step_sha, step_fed = _scan(path, chunk, step, in_step=True)

    assert step_lines == lane_lines
    assert step_cuts == lane_cuts
    assert step_sha == lane_sha == hashlib.sha256(data).hexdigest()
    assert step_fed == []  # no byte went through a lane's thread
    assert sum(lane_fed) == (len(data) if data else 0)  # (the lane scan did use its lane)


def test_in_step_reads_a_block_a_piece_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read asks for at most a piece, and the hasher takes each piece before the next read."""
    data = b"".join(PLAIN + b"\n" for _ in range(200)) + HAND_LINES[0] + b"\n"
    path = tmp_path / "plog-48213_20260610140000001.log"
    path.write_bytes(data)
    events: list[tuple[str, int]] = []
    real = plog_mod._RawFile.readinto

    def readinto(self: plog_mod._RawFile, mv: memoryview) -> int:
        events.append(("ask", len(mv)))
        n = real(self, mv)
        events.append(("read", n))
        return n

    class Sha:
        def __init__(self) -> None:
            self.sha = hashlib.sha256()

        def update(self, view: bytes | memoryview, /) -> None:
            events.append(("hash", len(view)))
            self.sha.update(view)

    monkeypatch.setattr(plog_mod._RawFile, "readinto", readinto)
    sha = Sha()
    with _scan_state(4096, 1000, in_step=True):
        found = list(scan_marker_lines(path, FAULT_MARKERS, None, sha))
    assert [no for no, _, _ in found] == [201]
    assert sha.sha.hexdigest() == hashlib.sha256(data).hexdigest()
    asks = [n for kind, n in events if kind == "ask"]
    assert asks and max(asks) <= 1000
    # every read that returned bytes is hashed, whole, before the next read is asked for
    for i, (kind, n) in enumerate(events):
        if kind == "read" and n:
            assert events[i + 1] == ("hash", n)


def test_packed_files_in_step_go_through_no_lane(tmp_path: Path) -> None:
    """Small files packed into one block are hashed in this thread as they are read, past the bytes a
    scan otherwise hashes inline before it starts its lane; each digest is its file's."""
    paths: list[str] = []
    datas: list[bytes] = []
    for i in range(12):
        data = b"".join(PLAIN + b"\n" for _ in range(3 + i)) + HAND_LINES[i % len(HAND_LINES)] + b"\n"
        path = tmp_path / f"plog-48213_2026061014000000{i:02d}.log"
        path.write_bytes(data)
        paths.append(str(path))
        datas.append(data)
    with _scan_state(1 << 16, 1000, in_step=False) as lane_fed:
        by_lane = list(scan_plog_files(paths, new_hasher=hashlib.sha256))
    with _scan_state(1 << 16, 1000, in_step=True) as step_fed:
        in_step = list(scan_plog_files(paths, new_hasher=hashlib.sha256))
    assert lane_fed  # the lane scan hashed the packed files behind (its inline budget patched to 0)
    assert step_fed == []
    assert [d.parts for d in in_step] == [d.parts for d in by_lane]
    assert [d.hasher.hexdigest() for d in in_step] == [hashlib.sha256(x).hexdigest() for x in datas]  # type: ignore[union-attr]


def test_the_setting_is_the_calling_threads_own(tmp_path: Path) -> None:
    """A scan in another thread still hashes through its lane: the setting is the thread's alone (the
    TUI scans in worker threads; only the child's scan thread hashes in step)."""
    import threading

    data = b"".join(PLAIN + b"\n" for _ in range(300)) + HAND_LINES[0] + b"\n"
    path = tmp_path / "plog-48213_20260610140000001.log"
    path.write_bytes(data)
    digests: list[str] = []

    def scan_there() -> None:
        sha = hashlib.sha256()
        list(scan_marker_lines(path, FAULT_MARKERS, None, sha))
        digests.append(sha.hexdigest())

    with _scan_state(4096, 1000, in_step=True) as fed:
        thread = threading.Thread(target=scan_there)
        thread.start()
        thread.join()
        assert sum(fed) == len(data)  # the other thread's scan fed its lane every byte
        fed.clear()
        sha = hashlib.sha256()
        list(scan_marker_lines(path, FAULT_MARKERS, None, sha))
    assert fed == []  # this thread's did not
    assert digests == [sha.hexdigest()] == [hashlib.sha256(data).hexdigest()]


needs_readv = pytest.mark.skipif(
    plog_mod._READV is None, reason="no readv here: the scan reads through FileIO"
)


def _both_ways(
    path: Path, prepare: Callable[[], object]
) -> dict[bool, tuple[list[object], str | None, str | None, int]]:
    """``scan_plog_files`` of ``path`` through the lane and in step (each in a thread of its own, as the
    child's scan thread is), each after ``prepare()`` wrote the file and gave the scan's read: lines,
    error, digest, reads counted failed."""
    import hashlib as _hashlib
    import threading

    from skdbg.parsers.fsguard import failed_reads

    out: dict[bool, tuple[list[object], str | None, str | None, int]] = {}

    def scan(in_step: bool) -> None:
        readv = prepare()
        before = failed_reads()
        with pytest.MonkeyPatch.context() as m:
            m.setattr(plog_mod, "_READV", readv)
            m.setattr(plog_mod, "_STATE", plog_mod._ScanState())
            if in_step:
                plog_mod.hash_in_step()
            (done,) = scan_plog_files([str(path)], new_hasher=_hashlib.sha256)
        error = None if done.error is None else str(done.error)
        digest = None if done.error is not None else done.hasher.hexdigest()  # type: ignore[union-attr]
        out[in_step] = ([x for batch, _ in done.parts for x in batch], error, digest, failed_reads() - before)

    for in_step in (False, True):
        thread = threading.Thread(target=scan, args=(in_step,))
        thread.start()
        thread.join()
    return out


def _plog(path: Path, size: int) -> bytes:
    lines = (PLAIN + b"\n") * 40 + b"".join(line + b"\n" for line in HAND_LINES)
    data = (lines * (size // len(lines) + 1))[:size]
    data = data[: data.rfind(b"\n") + 1]
    path.write_bytes(data)
    return data


@needs_readv
def test_a_read_failing_whole_in_a_later_block_is_met_alike(tmp_path: Path) -> None:
    """A read spanning a bad sector fails without a short read first (a network file system may): in
    step, the piece that meets it fails the block's read as the one read of the block did, at the
    block's first byte, counted once; the lines before it are the same."""
    import errno

    path = tmp_path / "plog-48213_20260610140000001.log"
    _plog(path, 10 << 20)
    bad = (6 << 20) + 1234
    inode = path.stat().st_ino
    real = plog_mod._READV
    assert real is not None

    def readv(fd: int, buffers: list[memoryview]) -> int:
        if os.fstat(fd).st_ino == inode:
            pos = os.lseek(fd, 0, os.SEEK_CUR)
            if pos <= bad < pos + len(buffers[0]):
                raise OSError(errno.EIO, os.strerror(errno.EIO))
        return int(real(fd, buffers))

    got = _both_ways(path, lambda: readv)
    assert got[True] == got[False]
    lines, error, _, failed = got[True]
    assert error is not None and error.endswith(f"at byte {4 << 20})")  # the second block's first byte
    assert failed == 1
    assert lines  # (the first block's)


@needs_readv
@pytest.mark.parametrize("extra", [0, 1000], ids=["a whole number of pieces past a block", "not"])
def test_a_file_that_grows_while_it_is_scanned_is_read_alike(tmp_path: Path, extra: int) -> None:
    """A line appended once the scan has begun (a live process still writing its log): in step, the
    block's read goes on past the size the file had when opened, as the one read of the block does;
    both find the line and hash it, also when that size ends a piece exactly."""
    path = tmp_path / "plog-48213_20260610140000001.log"
    size = (4 << 20) + (512 << 10) + extra
    real = plog_mod._READV
    assert real is not None
    datas: list[bytes] = []

    def make() -> object:
        data = _plog(path, size)
        data += b"x" * (size - len(data) - 1) + b"\n"  # exactly ``size``
        path.write_bytes(data)
        datas.append(data)
        inode, grown = path.stat().st_ino, []

        def readv(fd: int, buffers: list[memoryview]) -> int:
            if os.fstat(fd).st_ino == inode and not grown:  # at the scan's first read
                with open(path, "ab") as w:
                    w.write(HAND_LINES[0] + b"\n")
                grown.append(True)
            return int(real(fd, buffers))

        return readv

    import hashlib as _hashlib

    got = _both_ways(path, make)
    assert got[True] == got[False]
    lines, error, digest, _ = got[False]
    assert error is None
    assert digest == _hashlib.sha256(datas[0] + HAND_LINES[0] + b"\n").hexdigest()  # the line read too
    assert lines[-1].src.line == datas[0].count(b"\n") + 1  # type: ignore[attr-defined]


@needs_readv
def test_a_plogs_first_block_is_read_whole_and_the_next_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan of a plog checks its head is text with one read of the first block (as before); from
    the second block on, in step, each read asks for a piece and is hashed before the next."""
    import hashlib as _hashlib

    path = tmp_path / "plog-48213_20260610140000001.log"
    data = _plog(path, (10 << 20) + 12345)
    asks: list[int] = []
    real = plog_mod._READV
    assert real is not None

    def readv(fd: int, buffers: list[memoryview]) -> int:
        asks.append(len(buffers[0]))
        return int(real(fd, buffers))

    monkeypatch.setattr(plog_mod, "_READV", readv)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    plog_mod.hash_in_step()
    (done,) = scan_plog_files([str(path)], new_hasher=_hashlib.sha256)
    assert done.error is None and done.hasher.hexdigest() == _hashlib.sha256(data).hexdigest()  # type: ignore[union-attr]
    assert asks[0] == plog_mod.CHUNK  # the head's read: the first block at once
    assert max(asks[1:]) <= plog_mod._STEP < plog_mod.CHUNK
