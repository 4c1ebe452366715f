"""Content-addressed evidence store: ``objects/<aa>/<sha256>``, written once, never modified.

Why content addressing: a scene is frozen before anything is re-run (triage.md §6.2 "seal first");
naming a file by its SHA-256 makes a retry unable to overwrite it, and identical files (kernel
images shared by attempts) are stored once. Each file is read ONCE, in chunks: the same pass hashes
it and writes the temp copy, which reaches the disk before it is renamed onto its hash name (or is
dropped when that object already exists), so a name never stands for content a crash cut short.

Why files are stored together (:meth:`ObjectStore.put_files`): a scene is two thousand kernel ELFs of
a few KB beside its logs, and an ``fsync`` per file as it was written waited for a journal commit
each (~0.55 s of a 2,000-file freeze on the test machine's ext4). The copies are now all written
first, then flushed together (:func:`_flush`), then renamed onto their names; the folders holding the
names are flushed last, so the ledger row written next never cites a name a crash could lose.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skdbg.atomic import interrupts_deferred
from skdbg.sessions.errors import LedgerUnavailable, TamperError

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Digest:
    sha256: str
    size: int


def hash_file(path: Path, buf: bytearray | None = None) -> Digest:
    """Streaming SHA-256 (never a whole-file read), read into ``buf`` (one buffer for a whole batch of
    files; a fresh one of :data:`CHUNK` bytes when None)."""
    h = hashlib.sha256()
    size = 0
    with path.open("rb", buffering=0) as fh, memoryview(bytearray(CHUNK) if buf is None else buf) as mv:
        while n := fh.readinto(mv):
            h.update(mv[:n])
            size += n
    return Digest(h.hexdigest(), size)


def _remove(tmp: Path) -> None:
    """Remove a temp copy on the way out of a failure: the error that brought us here is the one to
    report (a disk gone read-only fails the removal too), so the removal's own is dropped."""
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def _fill(fh: io.RawIOBase, mv: memoryview) -> int:
    """Read from ``fh`` into ``mv`` until it is full or the file ends: the bytes read (fewer than
    ``len(mv)`` only at the end of the file; a short read alone proves nothing)."""
    got = 0
    while got < len(mv) and (n := fh.readinto(mv[got:])):
        got += n
    return got


def hash_bytes(data: bytes) -> Digest:
    return Digest(hashlib.sha256(data).hexdigest(), len(data))


class ObjectStore:
    """The ``objects/`` directory of one ledger."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def _tmp(self) -> tuple[int, Path]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".tmp-", dir=self.root)
        return fd, Path(name)

    def _commit(self, tmp: Path, digest: Digest) -> None:
        final = self.path(digest.sha256)
        if final.exists():
            tmp.unlink()  # dedupe: the same content is already stored
            return
        final.parent.mkdir(exist_ok=True)
        os.chmod(tmp, 0o444)
        os.replace(tmp, final)

    def put_file(self, src: Path) -> Digest:
        """Copy ``src`` in (hashing in the same read pass); returns its digest. Raises the
        FileNotFoundError of a missing ``src``, and :class:`LedgerUnavailable` when the store fails."""
        got = self.put_files([src])[0]
        if isinstance(got, FileNotFoundError):
            raise got
        return got

    def put_files(
        self, sources: Sequence[Path], known: Sequence[str | None] | None = None
    ) -> list[Digest | FileNotFoundError]:
        """Copy each of ``sources`` in (each hashed in the read pass that copies it): its digest, or the
        FileNotFoundError of a source that is missing (the others are stored all the same). Every new
        object is on the disk under its name when this returns (see the module docstring); should the
        store fail (disk full, no permission), :class:`LedgerUnavailable` is raised and no object of
        this call is left half-written (some may be stored whole).

        ``known``: per source, the SHA-256 a reader found in it earlier (an analysis hashes every
        artifact it lists), or None. A source whose known content is stored already (or staged by this
        call) is only read and hashed, not copied: when it still hashes to that, nothing is written (a
        scene frozen again); when it changed meanwhile, it is copied as any other. A source of
        :data:`CHUNK` bytes or less is read whole first, so it is not copied either when its content
        is stored or staged (the kernel ELFs every attempt of a relaunch loop shares), known or not."""
        out: list[Digest | FileNotFoundError] = []
        staged: list[tuple[Path, Digest]] = []  # copies of content not stored yet
        seen: set[str] = set()  # their content: a second source of it is not copied again
        buf = bytearray(CHUNK)
        src: Path | None = None

        def held(sha: str) -> bool:
            return sha in seen or self.has(sha)

        try:
            for i, src in enumerate(sources):
                try:
                    sha = None if known is None else known[i]
                    stored = hash_file(src, buf) if sha is not None and held(sha) else None
                    if stored is not None and stored.sha256 == sha:
                        out.append(stored)
                        continue
                    tmp, digest = self._stage(src, buf, held)
                except FileNotFoundError as exc:
                    if exc.filename != str(src):
                        raise
                    out.append(exc)
                    continue
                out.append(digest)
                if tmp is not None:
                    seen.add(digest.sha256)
                    staged.append((tmp, digest))
            src = None
            if staged:
                _flush([tmp for tmp, _ in staged])  # the content, before any name
                self._commit_all(staged)
        except OSError as exc:
            self._drop(staged)
            where = f"store {src} in {self.root}" if src is not None else f"write to {self.root}"
            raise LedgerUnavailable(f"cannot {where}: {exc.strerror or exc}") from exc
        except BaseException:
            self._drop(staged)
            raise
        return out

    def _stage(self, src: Path, buf: bytearray, held: Callable[[str], bool]) -> tuple[Path | None, Digest]:
        """Copy ``src`` to a temp file of the store, hashing it: the temp file (None when ``held`` says
        the content is stored or staged already: then no copy is left) and the digest. A source that
        fits in ``buf`` is read whole before any temp file is made."""
        h = hashlib.sha256()
        with src.open("rb", buffering=0) as fh, memoryview(buf) as mv:
            size = _fill(fh, mv)
            h.update(mv[:size])
            whole = size < len(buf)  # (a read until the buffer is full or the file ends)
            if whole and held((digest := Digest(h.hexdigest(), size)).sha256):
                return None, digest
            fd, tmp = self._tmp()
            try:
                # a buffered writer: it writes a chunk whole (a raw write may take part of it)
                with os.fdopen(fd, "wb") as out:
                    out.write(mv[:size])
                    while not whole and (n := fh.readinto(mv)):
                        chunk = mv[:n]
                        h.update(chunk)
                        size += n
                        out.write(chunk)
                digest = Digest(h.hexdigest(), size)
                if not whole and held(digest.sha256):
                    _remove(tmp)
                    return None, digest
                return tmp, digest
            except BaseException:
                _remove(tmp)
                raise

    def _commit_all(self, staged: list[tuple[Path, Digest]]) -> None:
        """Rename each flushed copy of ``staged`` onto its name (each entry then holds that name), then
        flush the folders of the names, so no ledger row written after this cites a name a crash could
        lose."""
        for i, (tmp, digest) in enumerate(staged):
            self._commit(tmp, digest)
            staged[i] = (self.path(digest.sha256), digest)
        if os.name == "posix":  # (a folder cannot be opened for an fsync on Windows)
            # (and the ledger's home: the store's own folder may be new)
            _flush(sorted({p.parent for p, _ in staged} | {self.root, self.root.parent}), folders=True)

    @staticmethod
    def _drop(staged: Sequence[tuple[Path, Digest]]) -> None:
        """Remove the temp copies a failed :meth:`put_files` left (a copy already renamed is whole)."""
        for tmp, _ in staged:
            if tmp.name.startswith(".tmp-"):
                _remove(tmp)

    def put_bytes(self, data: bytes) -> Digest:
        return self.put_many([data])[0]

    def put_many(self, blobs: Sequence[bytes]) -> list[Digest]:
        """Store each of ``blobs``: their digests, every new one on the disk under its name when this
        returns (made durable together, as :meth:`put_files` does)."""
        out: list[Digest] = []
        staged: list[tuple[Path, Digest]] = []
        seen: set[str] = set()  # content staged in this call (stored once)
        try:
            for data in blobs:
                digest = hash_bytes(data)
                out.append(digest)
                if digest.sha256 in seen or self.has(digest.sha256):
                    continue
                seen.add(digest.sha256)
                fd, tmp = self._tmp()
                staged.append((tmp, digest))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
            if staged:
                _flush([tmp for tmp, _ in staged])
                self._commit_all(staged)
        except OSError as exc:
            self._drop(staged)
            raise LedgerUnavailable(f"cannot write to {self.root}: {exc.strerror or exc}") from exc
        except BaseException:
            self._drop(staged)
            raise
        return out

    def read_bytes(self, sha256: str, what: str) -> bytes:
        """The stored content, checked against its name (``what`` names it in the error)."""
        p = self.path(sha256)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise TamperError(f"{what}: stored object {p} is missing ({exc.strerror})") from exc
        if hash_bytes(data).sha256 != sha256:
            raise TamperError(f"{what}: stored object {p} no longer matches its SHA-256 {sha256}")
        return data


#: ``fsync`` calls made at once by :func:`_flush` (each waits for the disk, the GIL let go)
FLUSH_THREADS = 8


#: what an ``fsync`` of a folder answers on a file system that has none for folders: the entries are
#: then as durable as that file system makes them (SQLite, for one, ignores a failed folder flush)
_NO_FOLDER_SYNC = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def _fsync_path(path: Path, folder: bool) -> None:
    """``fsync`` the file or the folder at ``path``. A file is opened for writing (an ``fsync`` through a
    read-only descriptor fails on Windows and is skipped by some network file systems, SMB's Linux
    client among them), read-only where that is refused (a umask that takes the owner's write bit, a
    mount with fixed modes): a local Linux file system flushes it either way."""
    try:
        fd = os.open(path, os.O_RDONLY if folder else os.O_WRONLY)
    except PermissionError:
        if folder:
            raise
        fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if not (folder and exc.errno in _NO_FOLDER_SYNC):
            raise
    finally:
        os.close(fd)


def _flush(paths: Sequence[Path], *, folders: bool = False) -> None:
    """``fsync`` each of ``paths`` (files: their content; ``folders``: their entries), up to
    :data:`FLUSH_THREADS` at a time; once all are done, raise the exception of the first path that
    failed, in the order given.

    Why at a time: each ``fsync`` of a freshly written file waits for a journal commit; issued together,
    the file system commits many in one (ext4 on the test machine: 2,000 files of 4 KB and ten of 1 MB
    in ~0.23 s against ~0.45 s one after the other, ~0.55 s with each flushed as it was written). Only
    these files are flushed: a ``syncfs`` would be as fast on an idle disk, but would wait for every
    other writer's dirty data on that file system too (a training job's checkpoints on an NPU host).
    No thread outlives the call: a Ctrl-C meanwhile is raised once the flushes under way are done (a
    process forks only while no other thread runs); where no thread can be started (a process limit),
    the rest are flushed one after the other."""
    failures: list[BaseException | None] = [None] * len(paths)

    def one(i: int) -> None:
        try:
            _fsync_path(paths[i], folders)
        except Exception as exc:  # noqa: BLE001 - kept, and raised in order below
            failures[i] = exc

    started = 0
    if len(paths) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with interrupts_deferred():
            pool = ThreadPoolExecutor(min(FLUSH_THREADS, len(paths)), thread_name_prefix="skdbg-fsync")
            try:
                for i in range(len(paths)):
                    pool.submit(one, i)
                    started = i + 1
            except RuntimeError:  # no thread to be had: the path refused and those after it, here
                pass
            finally:
                pool.shutdown(wait=True)
    for i in range(started, len(paths)):
        one(i)
    failed = next((exc for exc in failures if exc is not None), None)
    if failed is not None:
        raise failed


__all__ = ["CHUNK", "Digest", "ObjectStore", "hash_bytes", "hash_file"]
