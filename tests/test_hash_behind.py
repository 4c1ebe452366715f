"""The plog scan hashes what it reads in a second thread, behind the search (issue 18).

:class:`~skdbg.parsers.hashbehind.HashLane` holds a view of the scan's buffer until it settles; the scan
must settle before it writes into that buffer again. A slow hasher makes a missing settle visible: the
scan would overwrite (or try to resize) bytes not yet hashed, and the digest would be wrong.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import skdbg.parsers.plog as plog_mod
from skdbg.parsers.hashbehind import HashLane

#: plog lines in the shapes of artifacts.md §1.1/§1.5 (hand-written), a marker line among noise
_MARKER = (
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:00:01.123.456 [stream.cc:1024]48213 Synchronize:"
    b" Stream synchronize failed, stream_id=3, retCode=0x7150050."
)
_NOISE = b"[INFO] RUNTIME(48213,python3):2026-06-10-14:00:01.123.500 [task.cc:77]48213 Launch: ok"


class SlowSha:
    """A SHA-256 that takes its time and notes the thread it ran in (a late hash shows)."""

    def __init__(self, delay: float = 0.002) -> None:
        self.sha = hashlib.sha256()
        self.delay = delay
        self.threads: set[int] = set()
        self.workers: list[threading.Thread] = []  # kept alive: a thread ident may be reused

    def update(self, data: bytes | memoryview, /) -> None:
        self.threads.add(threading.get_ident())
        if threading.current_thread() not in self.workers:
            self.workers.append(threading.current_thread())
        time.sleep(self.delay)
        self.sha.update(data)

    def hexdigest(self) -> str:
        return self.sha.hexdigest()


def _plog(rng: random.Random, lines: int) -> bytes:
    """Noise with marker lines at random, lines of random length (some longer than a small block)."""
    out = []
    for _ in range(lines):
        line = _MARKER if rng.random() < 0.05 else _NOISE + b" " + b"x" * rng.choice([0, 10, 300, 5000])
        out.append(line)
    return b"\n".join(out) + b"\n"


def test_a_lane_hashes_in_order_in_another_thread() -> None:
    data = bytearray(random.Random(1).randbytes(1 << 20))
    slow = SlowSha(0.0005)
    with HashLane() as lane:
        fed = lane.to(slow)
        for at in range(0, len(data), 4099):
            fed.update(memoryview(data)[at : at + 4099])
        lane.settle()
    assert slow.hexdigest() == hashlib.sha256(data).hexdigest()
    assert threading.get_ident() not in slow.threads


def test_a_lane_holds_the_buffer_until_it_settles() -> None:
    gate = threading.Event()

    class Held:
        def update(self, data: bytes | memoryview, /) -> None:
            gate.wait(5)

    buf = bytearray(64)
    with HashLane() as lane:
        lane.feed(Held(), memoryview(buf)[8:16])
        with pytest.raises(BufferError):
            buf.extend(b"more")  # the worker's view is still out
        gate.set()
        lane.settle()
        buf.extend(b"more")  # every view let go
    assert len(buf) == 68


def test_a_failed_hash_is_raised_after_every_other_is_done() -> None:
    class Broken:
        def update(self, data: bytes | memoryview, /) -> None:
            raise OSError("hash device gone")

    later = SlowSha(0.01)
    buf = bytearray(b"abcdef" * 100)
    with HashLane() as lane:
        lane.feed(Broken(), memoryview(buf)[:10])
        lane.feed(later, memoryview(buf)[10:])
        with pytest.raises(OSError, match="hash device gone"):
            lane.settle()
        assert later.hexdigest() == hashlib.sha256(buf[10:]).hexdigest()
        buf.extend(b"x")  # no view left behind by either
        lane.settle()  # nothing pending any more


def _hash_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("skdbg-hash-behind")]


@pytest.fixture
def new_hash_threads() -> Callable[[], list[threading.Thread]]:
    """The lane threads alive now that were not when the test started (a failed test's leftovers
    do not fail the next)."""
    before = set(threading.enumerate())
    return lambda: [
        t for t in threading.enumerate() if t not in before and t.name.startswith("skdbg-hash-behind")
    ]


def test_no_hashing_thread_outlives_its_lane() -> None:
    """``verify --diff`` forks only from a process running no other thread: a lane's thread ends with it."""
    before = _hash_threads()
    with HashLane() as lane:
        lane.feed(hashlib.sha256(), b"x" * 4096)
        assert len(_hash_threads()) == len(before) + 1
    assert _hash_threads() == before


def test_a_large_plog_is_hashed_behind_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """A file larger than the block: every block hashed in the worker, before the block is reused."""
    monkeypatch.setattr(plog_mod, "CHUNK", 8192)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 4096)
    data = _plog(random.Random(7), 600)
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    plain = list(plog_mod.scan_plog_parts(path, gaps=[]))
    slow = SlowSha()
    got = list(plog_mod.scan_plog_parts(path, gaps=[], hasher=slow))
    assert got == plain
    assert slow.hexdigest() == hashlib.sha256(data).hexdigest()
    assert threading.get_ident() not in slow.threads
    assert new_hash_threads() == []  # the scan's lane ended with the scan


def test_a_small_plog_is_hashed_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At or below ``_LANE_FILE`` a lane's thread would cost more than it saves: hashed in the scan's thread."""
    monkeypatch.setattr(plog_mod, "CHUNK", 8192)
    data = _plog(random.Random(5), 300)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", len(data))
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    slow = SlowSha(0)
    list(plog_mod.scan_plog_parts(path, gaps=[], hasher=slow))
    assert slow.threads == {threading.get_ident()}
    assert slow.hexdigest() == hashlib.sha256(data).hexdigest()


def test_large_plogs_of_one_scan_share_one_hashing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """scan_plog_files hashes every file scanned alone through its own lane: one thread, not one a file."""
    monkeypatch.setattr(plog_mod, "CHUNK", 64 << 10)
    monkeypatch.setattr(plog_mod, "_PACK_FILE", 4096)  # every file below is scanned alone
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 4096)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    rng = random.Random(13)
    paths, blobs = [], []
    for i in range(6):
        blob = _plog(rng, 40 + 30 * i)  # 8 KB to 150 KB, some over the 64 KiB block
        path = tmp_path / f"plog-48213_2026061014{i:05d}000.log"
        path.write_bytes(blob)
        paths.append(str(path))
        blobs.append(blob)
    workers: list[threading.Thread] = []
    for done, blob in zip(plog_mod.scan_plog_files(paths, new_hasher=SlowSha), blobs, strict=True):
        assert isinstance(done.hasher, SlowSha)
        assert done.hasher.hexdigest() == hashlib.sha256(blob).hexdigest()
        workers.extend(t for t in done.hasher.workers if t not in workers)
    assert len(workers) == 1 and workers[0] is not threading.current_thread()
    assert new_hash_threads() == []


def test_a_scan_left_half_way_lets_the_block_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing the scan early settles its lane: the next scan in this thread may grow the block."""
    monkeypatch.setattr(plog_mod, "CHUNK", 8192)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 4096)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(_plog(random.Random(3), 600))
    scan = plog_mod.scan_plog_parts(path, gaps=[], hasher=SlowSha(0.05))
    next(scan)
    scan.close()
    plog_mod._STATE.buf.extend(b"\0")  # raises BufferError if a view of the block were still out


def test_packed_small_plogs_are_hashed_behind_their_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """Small files read one after another into the block: each digest complete when yielded."""
    monkeypatch.setattr(plog_mod, "CHUNK", 64 << 10)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)  # every packed file through the lane
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    rng = random.Random(11)
    paths, blobs = [], []
    for i in range(40):
        blob = _plog(rng, rng.randrange(1, 12))
        if i % 7 == 3:
            blob = blob[:-1]  # no newline at its end: the scan adds one in the block, not in the hash
        path = tmp_path / f"plog-48213_2026061014{i:05d}000.log"
        path.write_bytes(blob)
        paths.append(str(path))
        blobs.append(blob)
    seen = []
    for done, blob in zip(plog_mod.scan_plog_files(paths, new_hasher=SlowSha), blobs, strict=True):
        assert done.error is None
        assert isinstance(done.hasher, SlowSha)
        assert threading.get_ident() not in done.hasher.threads
        seen.append(done.hasher.hexdigest() == hashlib.sha256(blob).hexdigest())
    assert seen == [True] * len(paths)
    assert new_hash_threads() == []


def test_a_small_scene_packed_plogs_start_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """The first ``_LANE_FILE`` bytes packed are hashed in the scan's thread: a small scene's few plogs
    start no lane thread (nor import its pool); the bytes after that go through the lane."""
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 3 * len(_MARKER + b"\n") * 20)
    paths = []
    for i in range(6):
        path = tmp_path / f"plog-48213_2026061014{i:05d}000.log"
        path.write_bytes((_MARKER + b"\n") * 20)
        paths.append(str(path))
    made: list[SlowSha] = []

    def new_hasher() -> SlowSha:
        made.append(SlowSha(0))
        return made[-1]

    scan = plog_mod.scan_plog_files(paths[:3], new_hasher=new_hasher)
    for _ in paths[:3]:
        next(scan)
        assert new_hash_threads() == []  # none started at all, not only none left
    scan.close()
    assert [threading.get_ident() in h.threads for h in made] == [True] * 3
    made.clear()
    list(plog_mod.scan_plog_files(paths, new_hasher=new_hasher))
    assert [threading.get_ident() in h.threads for h in made] == [True] * 3 + [False] * 3


@pytest.fixture
def small_block(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An 8 KiB block, a 20,000-byte line limit, a lane for every file over 4 KiB."""
    monkeypatch.setattr(plog_mod, "CHUNK", 8192)
    monkeypatch.setattr(plog_mod, "MAX_LINE", 20000)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 4096)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    return monkeypatch


def test_long_and_over_long_lines_are_hashed_behind(tmp_path: Path, small_block: pytest.MonkeyPatch) -> None:
    """Lines longer than the block (it grows) and than the line limit (cut, the rest skipped): the
    buffer is written on both paths, each after the pending hash."""
    lines = [_NOISE, _MARKER, b"a" * 9000 + _MARKER, _NOISE, _MARKER + b"b" * 30000, _NOISE, b"c" * 70000]
    data = b"\n".join(lines * 3) + b"\n" + _MARKER
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    plain_gaps: list[object] = []
    plain = list(plog_mod.scan_plog_parts(path, gaps=plain_gaps))  # type: ignore[arg-type]
    gaps: list[object] = []
    slow = SlowSha()
    assert list(plog_mod.scan_plog_parts(path, gaps=gaps, hasher=slow)) == plain  # type: ignore[arg-type]
    assert gaps == plain_gaps and len(gaps) == 6  # two over-long lines a copy, three copies
    assert slow.hexdigest() == hashlib.sha256(data).hexdigest()


def test_refused_heads_keep_their_own_digests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A binary plog packed (its head read where the next file then goes) or scanned alone (its hash
    pending when refused): each hasher holds its own file's bytes when the result is handed out."""
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    blobs = [b"\0binary" * 50, (_NOISE + b"\n") * 40, b"\0" + b"y" * (2 << 20), (_MARKER + b"\n") * 3]
    paths = []
    for i, blob in enumerate(blobs):
        path = tmp_path / f"plog-48213_2026061014{i:07d}.log"
        path.write_bytes(blob)
        paths.append(str(path))
    got = []
    for done in plog_mod.scan_plog_files(paths, new_hasher=lambda: SlowSha(0.02)):
        assert isinstance(done.hasher, SlowSha)
        got.append((done.error is not None, done.hasher.hexdigest()))
    assert got == [(blob[:1] == b"\0", hashlib.sha256(blob).hexdigest()) for blob in blobs]


@pytest.mark.parametrize("last_alone", [False, True])
def test_the_last_result_leaves_no_thread(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    last_alone: bool,
    new_hash_threads: Callable[[], list[threading.Thread]],
) -> None:
    """Evidence takes one result a path and may never exhaust the scan: once the last result is out,
    no hashing thread is left, whether the last file was packed or scanned alone."""
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 4096)
    paths = []
    for i in range(3):
        path = tmp_path / f"plog-48213_2026061014{i:07d}.log"
        lines = 40_000 if last_alone and i == 2 else 20  # 4.6 MB: over the 1 MiB packed files
        path.write_bytes((_MARKER + b"\n") * lines)
        paths.append(str(path))
    scan = plog_mod.scan_plog_files(paths, new_hasher=hashlib.sha256)
    for _ in paths:
        next(scan)
    assert new_hash_threads() == []
    scan.close()


def test_a_failed_hash_of_the_last_block_is_raised(tmp_path: Path, small_block: pytest.MonkeyPatch) -> None:
    data = (_NOISE + b"\n") * 500
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)

    class FailsLast:
        seen = 0

        def update(self, part: bytes | memoryview, /) -> None:
            self.seen += len(part)
            if self.seen == len(data):
                raise OSError("hash device gone")

    with pytest.raises(OSError, match="hash device gone"):
        list(plog_mod.scan_plog_parts(path, gaps=[], hasher=FailsLast()))


def test_a_packed_file_that_grew_is_read_again_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fstat said 100 bytes, the file holds more: it is read again, alone, with a fresh hasher, and that
    hasher holds the whole file (the first, discarded, one is slow: its pending hash must not mix in)."""
    monkeypatch.setattr(plog_mod, "CHUNK", 65536)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    real_open = plog_mod.open_regular_fd
    opened: list[str] = []

    def before_it_grew(path: Path, *args: object, **kwargs: object) -> tuple[int, os.stat_result]:
        fd, st = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        opened.append(str(path))
        if len(opened) == 1:
            fields = list(st)
            fields[6] = 100  # st_size
            st = os.stat_result(fields)
        return fd, st

    monkeypatch.setattr(plog_mod, "open_regular_fd", before_it_grew)
    made: list[SlowSha] = []

    def new_hasher() -> SlowSha:
        made.append(SlowSha(0.05 if not made else 0.0))  # the first, discarded, hasher is slow
        return made[-1]

    data = (_NOISE + b"\n") * 10 + b"y" * 70000 + b"\n" + (_MARKER + b"\n") * 3000
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    (done,) = plog_mod.scan_plog_files([str(path)], new_hasher=new_hasher)
    assert done.error is None and done.hasher is made[1]
    assert made[1].hexdigest() == hashlib.sha256(data).hexdigest()


def test_an_analysis_with_a_refused_plog_leaves_no_hashing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """A binary plog's stored ParseError keeps the scanning frame alive: still no lane thread after it
    (``verify --diff`` forks its worker only from a process that runs no other thread)."""
    from skdbg.scene import evidence_for, open_scene

    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)  # the packed plogs through the lane
    (tmp_path / "log").mkdir()
    for k in range(3):
        data = (_MARKER + b"\n") * 50
        if k == 1:
            data = b"\0" * 100 + data
        (tmp_path / "log" / f"plog-48213_2026061014{k:07d}.log").write_bytes(data)
    scene = open_scene(tmp_path)
    ev = evidence_for(scene)
    ev.start_plog_scan(on_digest=scene.adopt_digest)
    assert len(ev.plogs) == 1 and ev.errors["plog"]  # the refused plog is an error, the others are read
    assert new_hash_threads() == []


def _grown_scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[bytes]]:
    """A small plog, then one whose first fstat says 100 bytes (it grew after): packed, then read alone."""
    monkeypatch.setattr(plog_mod, "CHUNK", 65536)
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    small = (_NOISE + b"\n" + _MARKER + b"\n") * 20
    grown = (_NOISE + b"\n") * 400 + (_MARKER + b"\n") * 300  # ~80 KB
    paths = []
    for i, blob in enumerate((small, grown)):
        path = tmp_path / f"plog-48213_2026061014{i:07d}.log"
        path.write_bytes(blob)
        paths.append(str(path))
    real_open = plog_mod.open_regular_fd
    seen: list[str] = []

    def stale_first_fstat(path: Path, *args: object, **kwargs: object) -> tuple[int, os.stat_result]:
        fd, st = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        seen.append(str(path))
        if str(path) == paths[1] and seen.count(paths[1]) == 1:
            fields = list(st)
            fields[6] = 100  # st_size
            st = os.stat_result(fields)
        return fd, st

    monkeypatch.setattr(plog_mod, "open_regular_fd", stale_first_fstat)
    return paths, [small, grown]


def test_a_grown_last_file_leaves_no_thread_once_handed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    paths, blobs = _grown_scene(tmp_path, monkeypatch)
    scan = plog_mod.scan_plog_files(paths, new_hasher=lambda: SlowSha(0))
    got = [next(scan) for _ in paths]  # as Evidence takes them: one a path, the scan not exhausted
    assert new_hash_threads() == []
    digests = [d.hasher.hexdigest() for d in got if isinstance(d.hasher, SlowSha)]
    assert digests == [hashlib.sha256(blob).hexdigest() for blob in blobs]
    scan.close()


def test_the_bytes_of_a_grown_attempt_are_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The discarded hasher of the packed attempt (read after another file in the block) hashed a
    prefix of that file's own bytes, not what the block holds after it is read again."""
    paths, blobs = _grown_scene(tmp_path, monkeypatch)
    made: list[Counting] = []

    def new_hasher() -> Counting:
        made.append(Counting(0.3 if len(made) == 1 else 0.0))  # the grown file's first hasher is slow
        return made[-1]

    list(plog_mod.scan_plog_files(paths, new_hasher=new_hasher))
    discarded = made[1]
    assert discarded.fed > 0
    assert discarded.hexdigest() == hashlib.sha256(blobs[1][: discarded.fed]).hexdigest()


class Counting(SlowSha):
    """A :class:`SlowSha` that counts the bytes it was fed."""

    def __init__(self, delay: float = 0.002) -> None:
        super().__init__(delay)
        self.fed = 0

    def update(self, data: bytes | memoryview, /) -> None:
        super().update(data)
        self.fed += len(data)


def test_a_bug_escaping_the_filing_leaves_no_hashing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_hash_threads: Callable[[], list[threading.Thread]]
) -> None:
    """Not a ParseError: the background scan keeps the exception, whose traceback keeps the scanning
    frame, and with it the paused scan; Evidence closes the scan, so its lane's thread is gone."""
    import skdbg.parsers.evidence as ev_mod
    from skdbg.scene import evidence_for, open_scene

    (tmp_path / "log").mkdir()
    for k, n in enumerate([1, 30000, 1]):
        (tmp_path / "log" / f"plog-48213_2026061014{k:07d}.log").write_bytes((_MARKER + b"\n") * n)

    def broken_filing(*args: object) -> None:
        raise RuntimeError("a bug in filing")

    monkeypatch.setattr(ev_mod.Evidence, "_file_scan", broken_filing)
    scene = open_scene(tmp_path)
    ev = evidence_for(scene)
    ev.start_plog_scan(on_digest=scene.adopt_digest)
    with pytest.raises(RuntimeError, match="a bug in filing"):
        _ = ev.plogs
    assert new_hash_threads() == []
