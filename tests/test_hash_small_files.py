"""The hashing worker's one-read digest of a small artifact against the general path it shortcuts.

``skdbg.scene._small_digest`` reads a file under ``_HASH_CHUNK`` bytes whole and hashes it in one call;
the oracle is ``hashlib`` over the file's bytes (sizes around hashlib's GIL threshold and the chunk
size), and for everything it declines (missing file, directory, FIFO, link to a directory) the
general path must still raise the very error it always raised.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.scene import _HASH_CHUNK, Artifact, _small_digest


@pytest.mark.parametrize("size", [0, 1, 2047, 2048, 3568, _HASH_CHUNK - 1, _HASH_CHUNK, _HASH_CHUNK + 1])
def test_small_digest_is_the_files_sha256(tmp_path: Path, size: int) -> None:
    f = tmp_path / "k.o"
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    f.write_bytes(data)
    small = _small_digest(f)
    want = (size, hashlib.sha256(data).hexdigest())
    mtime = f.stat().st_mtime
    assert small == ((want, mtime) if size < _HASH_CHUNK else None)
    art = Artifact("bin_file", f, tmp_path)
    assert art.digest() == want
    assert art._hashed_mtime == mtime and art.size_and_stamp() == (size, mtime)  # the stat it spares


def test_small_digest_declines_what_the_general_path_refuses(tmp_path: Path) -> None:
    """A missing file, a directory and a FIFO: the one-read path declines (without blocking on the
    FIFO) and the general path raises the error it always raised."""
    fifo = tmp_path / "fifo.o"
    os.mkfifo(fifo)
    (tmp_path / "dir.o").mkdir()
    (tmp_path / "link.o").symlink_to(tmp_path / "dir.o")
    cases = {"missing.o": "file does not exist", "dir.o": "got a directory", "fifo.o": "got a FIFO"}
    for name, message in {**cases, "link.o": "got a directory"}.items():
        path = tmp_path / name
        assert _small_digest(path) is None
        with pytest.raises(ParseError, match=message):
            Artifact("bin_file", path, tmp_path).digest()


def test_small_digest_follows_a_link_to_a_file_like_the_general_path(tmp_path: Path) -> None:
    (tmp_path / "real.o").write_bytes(b"\x7fELF" * 100)
    (tmp_path / "link.o").symlink_to(tmp_path / "real.o")
    got = _small_digest(tmp_path / "link.o")
    want = (400, hashlib.sha256(b"\x7fELF" * 100).hexdigest())
    assert got == (want, (tmp_path / "real.o").stat().st_mtime)


@pytest.mark.parametrize("got", ["short", "long"])
def test_a_read_of_another_size_than_fstat_said_goes_to_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, got: str
) -> None:
    """A short read (a file cut meanwhile, a network file system) or a long one (a file that grew)
    must not be hashed as the whole file: the one-read path declines, and the general path, which reads
    to the end, gives the file's hash."""
    import skdbg.scene as scene_mod

    f = tmp_path / "k.o"
    data = b"\x7fELF" + bytes(range(200)) * 20
    f.write_bytes(data)
    real_read = os.read

    def odd_read(fd: int, n: int) -> bytes:
        out = real_read(fd, n)
        return out[:-7] if got == "short" else out + b"more"

    monkeypatch.setattr(scene_mod.os, "read", odd_read)
    assert _small_digest(f) is None
    monkeypatch.setattr(scene_mod.os, "read", real_read)
    assert Artifact("bin_file", f, tmp_path).digest() == (len(data), hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("how", ["hashed here", "handed over with its mtime", "handed over without"])
def test_listed_is_the_digest_then_the_size_and_stamp(tmp_path: Path, how: str) -> None:
    """``Artifact.listed`` (the scene block's one step per artifact) gives what ``sha256`` and
    ``size_and_stamp`` give: the hashed size and mtime where the reader knew them, else a stat's."""
    f = tmp_path / "k.o"
    f.write_bytes(b"\x7fELF" * 10)
    os.utime(f, (1_700_000_000.25, 1_700_000_000.25))
    art = Artifact("bin_file", f, tmp_path)
    if how == "handed over with its mtime":
        art.remember_digest(999, "ab" * 32, 1_600_000_000.5)  # what another reader saw (first answer)
    elif how == "handed over without":
        art.remember_digest(999, "ab" * 32)
    want = (art.sha256, *art.size_and_stamp())
    assert art.listed() == want
    expected = {
        "hashed here": (hashlib.sha256(b"\x7fELF" * 10).hexdigest(), 40, 1_700_000_000.25),
        "handed over with its mtime": ("ab" * 32, 999, 1_600_000_000.5),
        "handed over without": ("ab" * 32, 40, 1_700_000_000.25),  # the stat's size and mtime
    }
    assert want == expected[how]


def test_listed_raises_what_the_digest_raises(tmp_path: Path) -> None:
    art = Artifact("bin_file", tmp_path / "missing.o", tmp_path)
    with pytest.raises(ParseError, match="file does not exist"):
        art.listed()
