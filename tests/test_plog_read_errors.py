"""A plog whose read fails part-way (a disk error, a network file system gone away).

The scan keeps the whole lines it read before the failure and raises the plog's ReadFailure (a
ParseError) naming the file and the byte offset; the analysis files those lines, records the rest
as an unreadable gap and goes on. Before, the OSError of a read past the first block ended the run (exit 3 with
"Input/output error" and no file name, every other artifact's evidence lost).

The failure is injected at the one read call of the scan (``plog._READV``); each file's reads are
cut short at the failure offset, so the failing read is the one after it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import skdbg.parsers.plog as plog_mod
from skdbg.parsers.common import Gap, ParseError, ReadFailure
from skdbg.parsers.plog import scan_plog_files, scan_plog_parts
from skdbg.parsers.textio import BINARY_PROBE, MAX_LINE
from tests.support.plog_lines import HAND_LINES as _LINES  # hand-written from the spec's example lines

_TEXT = b"\n".join(_LINES) + b"\n"
_NAME = "plog-48213_20260610140000000.log"

needs_readv = pytest.mark.skipif(
    plog_mod._READV is None, reason="no readv here: the scan reads through FileIO"
)


def _fail_at(monkeypatch: pytest.MonkeyPatch, path: Path, at: int) -> None:
    """Reads of ``path`` return its bytes up to offset ``at``, then fail with EIO (other files read
    normally)."""
    real = plog_mod._READV
    assert real is not None
    inode = path.stat().st_ino
    done: dict[int, int] = {}

    def readv(fd: int, buffers: list[memoryview]) -> int:
        if os.fstat(fd).st_ino != inode:
            return int(real(fd, buffers))
        pos = done.get(fd, 0)
        if pos >= at:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        n = int(real(fd, [buffers[0][: at - pos]]))
        done[fd] = pos + n
        return n

    monkeypatch.setattr(plog_mod, "_READV", readv)


def _records(path: Path, data: bytes) -> list[object]:
    """The oracle: the items a scan of ``data`` (written at ``path``) yields."""
    path.write_bytes(data)
    return [item for batch, _ in scan_plog_parts(path, gaps=[]) for item in batch]


class SlowSha:
    """A SHA-256 that sleeps before each update: a hash still pending when its bytes are overwritten
    then shows as a wrong digest."""

    def __init__(self, delay: float) -> None:
        self.sha = hashlib.sha256()
        self.delay = delay

    def update(self, data: bytes | memoryview, /) -> None:
        time.sleep(self.delay)
        self.sha.update(data)

    def hexdigest(self) -> str:
        return self.sha.hexdigest()


def _whole_lines(data: bytes, at: int) -> bytes:
    return data[: data.rfind(b"\n", 0, at) + 1]


@needs_readv
@pytest.mark.parametrize(
    ("size", "at"),
    [
        (3 << 20, (2 << 20) + 1234),  # scanned alone (over the pack limit), failing in its third MiB
        (6 << 20, (5 << 20) + 1234),  # alone, failing in its second block (in step: after some pieces)
        (3 << 20, BINARY_PROBE + 10),  # alone, failing right after its head
        (40 << 10, 20_000),  # packed with others (a small plog), failing after its head
        (40 << 10, len(_TEXT) * 50),  # packed, failing just after a newline
        (40 << 10, len(_TEXT) * 50 + len(_LINES[0])),  # packed, a fault line read but not its newline
        (3 << 20, len(_TEXT) * 6_000 + len(_LINES[0])),  # the same, alone
        (40 << 10, 5_000),  # packed, failing inside the head's probe (a short read, then an error)
        (3 << 20, 5_000),  # alone, the same
        (6_000, 3_000),  # a plog smaller than the probe, failing half-way
    ],
)
@pytest.mark.parametrize("in_step", [False, True], ids=["lane", "in-step"])
def test_a_failed_read_keeps_the_lines_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, at: int, in_step: bool
) -> None:
    """Also when each block is read in pieces, each hashed as it comes (plog.hash_in_step): a failure
    after some of a block's pieces leaves them to be searched."""
    data = _TEXT * (size // len(_TEXT))
    path = tmp_path / _NAME
    expected = _records(path, _whole_lines(data, at))
    path.write_bytes(data)
    # a small plog after it: still scanned whole, its digest complete
    other = tmp_path / "plog-48213_20260610150000000.log"
    other.write_bytes(_TEXT)
    _fail_at(monkeypatch, path, at)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    if in_step:
        monkeypatch.setattr(plog_mod, "_STEP", 100_000)  # the failing read is not a block's first
        plog_mod.hash_in_step()

    hashers: list[Any] = []

    def new_sha() -> Any:
        hashers.append(hashlib.sha256())
        return hashers[-1]

    failed, fine = scan_plog_files([str(path), str(other)], new_hasher=new_sha)

    assert [item for batch, _ in failed.parts for item in batch] == expected
    assert failed.error is not None
    assert (
        str(failed.error)
        == f"{path}: expected a CANN plog (readable file: {os.strerror(errno.EIO)} at byte {at})"
    )
    assert fine.error is None
    assert hashers[1].hexdigest() == hashlib.sha256(_TEXT).hexdigest()
    assert [item for batch, _ in fine.parts for item in batch] == _records(other, _TEXT)


@needs_readv
def test_a_failed_first_read_names_no_offset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing was read: the message is the head test's, as before."""
    path = tmp_path / _NAME
    path.write_bytes(_TEXT * 100)
    _fail_at(monkeypatch, path, 0)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    (done,) = scan_plog_files([str(path)])
    assert done.parts == []
    assert str(done.error) == f"{path}: expected a CANN plog (readable file: {os.strerror(errno.EIO)})"


@needs_readv
def test_scan_plog_parts_raises_after_the_batches_before_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _TEXT * ((3 << 20) // len(_TEXT))
    at = (1 << 20) + 77
    path = tmp_path / _NAME
    expected = _records(path, _whole_lines(data, at))
    path.write_bytes(data)
    _fail_at(monkeypatch, path, at)
    got: list[object] = []
    with pytest.raises(ParseError, match=rf"at byte {at}\)$"):
        for batch, _ in scan_plog_parts(path, gaps=[]):
            got.extend(batch)
    assert got == expected


@needs_readv
def test_analyze_records_the_failed_plog_as_a_gap_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict still comes from the other artifacts; the plog's failure is a warning naming it."""
    from skdbg.cli import main

    src = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream"
    scene = tmp_path / "scene"
    shutil.copytree(src, scene)
    (plog,) = (scene / "log" / "plog").glob("plog-*.log")
    clean = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", "--no-cache"])
    assert clean.exit_code == 0, clean.output

    at = plog.stat().st_size // 2
    assert at > BINARY_PROBE
    _fail_at(monkeypatch, plog, at)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    result = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", "--no-cache"])

    assert result.exit_code == 0, result.output
    assert (
        f"skdbg: warning: unreadable: {plog}: expected a CANN plog (readable file: "
        f"{os.strerror(errno.EIO)} at byte {at})"
    ) in result.stderr
    assert json.loads(result.stdout)["verdict"]["suspect"] == json.loads(clean.stdout)["verdict"]["suspect"]


@needs_readv
def test_a_verdict_built_around_a_failed_read_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read may succeed next time (an I/O error, not the file's content): the next run analyses
    afresh and reads the whole plog, instead of repeating the warning from the cache."""
    from skdbg.cli import main

    src = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream"
    scene = tmp_path / "scene"
    shutil.copytree(src, scene)
    (plog,) = (scene / "log" / "plog").glob("plog-*.log")
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path / "cache"))
    real = plog_mod._READV
    _fail_at(monkeypatch, plog, plog.stat().st_size // 2)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    failed = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert failed.exit_code == 0, failed.output
    assert f"skdbg: warning: unreadable: {plog}" in failed.stderr

    monkeypatch.setattr(plog_mod, "_READV", real)
    again = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert again.exit_code == 0, again.output
    assert "unreadable" not in again.stderr
    hit = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert hit.stdout == again.stdout  # the whole read's verdict is the one kept


@needs_readv
@pytest.mark.parametrize("cycles", [20, 30])  # failing inside the head's probe, and past it
def test_a_failing_packed_plog_hashed_behind_leaves_the_others_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cycles: int
) -> None:
    """Packed plogs hashed through the lane by a slow hasher, the middle one failing part-way: the
    bytes the failed one had read are hashed before the next file is read over them (its hasher
    sees exactly those bytes), every other file keeps its records and digest, and no lane thread is
    left."""
    monkeypatch.setattr(plog_mod, "_LANE_FILE", 0)  # every packed file through the lane
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    before = set(threading.enumerate())
    paths, blobs = [], []
    for i in range(5):
        # a first line of its own: the next file's bytes differ from those it is read over
        blob = f"file {i}\n".encode() + _TEXT * (40 + 10 * i)
        path = tmp_path / f"plog-48213_2026061014{i:05d}000.log"
        path.write_bytes(blob)
        paths.append(path)
        blobs.append(blob)
    # inside a fault line: the partial line read, fed and dropped ("[ERRO") differs from the next
    # file's first bytes ("file "), which are read over it
    at = len(b"file 2\n") + len(_TEXT) * cycles + 5
    expected = _records(paths[2], _whole_lines(blobs[2], at))
    paths[2].write_bytes(blobs[2])
    others = {k: _records(paths[k], blobs[k]) for k in (0, 1, 3, 4)}
    _fail_at(monkeypatch, paths[2], at)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())

    hashers: list[SlowSha] = []

    def new_sha() -> SlowSha:
        hashers.append(SlowSha(delay=0.01))
        return hashers[-1]

    results = list(scan_plog_files([str(p) for p in paths], new_hasher=new_sha))

    assert [r.error is None for r in results] == [True, True, False, True, True]
    assert [item for batch, _ in results[2].parts for item in batch] == expected
    assert hashers[2].hexdigest() == hashlib.sha256(blobs[2][:at]).hexdigest()
    for k, records in others.items():
        assert [item for batch, _ in results[k].parts for item in batch] == records
        assert hashers[k].hexdigest() == hashlib.sha256(blobs[k]).hexdigest()
    assert [t for t in threading.enumerate() if t not in before and t.name.startswith("skdbg-hash")] == []


@needs_readv
def test_over_long_lines_cut_before_a_failed_read_keep_their_gaps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    over = _LINES[0] + b" " + b"y" * (MAX_LINE + 10)  # a fault line over the limit: cut, with a gap
    data = _TEXT * 100 + over + b"\n" + _TEXT * 20_000
    at = len(data) - 1000
    path = tmp_path / _NAME
    path.write_bytes(_whole_lines(data, at))
    expected: list[Gap] = []
    list(scan_plog_parts(path, gaps=expected))
    assert [g.kind for g in expected] == ["line_too_long"]
    path.write_bytes(data)
    _fail_at(monkeypatch, path, at)
    gaps: list[Gap] = []
    with pytest.raises(ReadFailure):
        list(scan_plog_parts(path, gaps=gaps))
    assert gaps == expected


@needs_readv
@pytest.mark.parametrize("size", [40 << 10, 3 << 20])  # packed, alone
def test_a_head_cut_short_by_a_failure_is_not_called_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A first line of terminal escapes: the whole 8 KiB probe is text (under a tenth control bytes),
    its first 300 bytes are not. A read failing at byte 300 is reported as the failure, not as binary
    data (which is a property of the file and would be cached)."""
    head = b"\x1b[1m" * 40 + b"\n"
    data = head + _TEXT * (size // len(_TEXT))
    path = tmp_path / _NAME
    path.write_bytes(data)
    (whole,) = scan_plog_files([str(path)])
    assert whole.error is None
    _fail_at(monkeypatch, path, 300)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    (done,) = scan_plog_files([str(path)])
    assert isinstance(done.error, ReadFailure)
    assert (
        str(done.error)
        == f"{path}: expected a CANN plog (readable file: {os.strerror(errno.EIO)} at byte 300)"
    )
