"""Content-addressed evidence store: ``objects/<aa>/<sha256>``, written once, never modified.

Why content addressing: a scene is frozen before anything is re-run (triage.md §6.2 "seal first");
naming a file by its SHA-256 makes a retry unable to overwrite it, and identical files (kernel
images shared by attempts) are stored once. Each file is read ONCE, in chunks: the same pass hashes
it and writes the temp copy, which is fsynced and renamed onto its hash name (or dropped when that
object already exists).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skdbg.sessions.errors import LedgerUnavailable, TamperError

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Digest:
    sha256: str
    size: int


def hash_file(path: Path) -> Digest:
    """Streaming SHA-256 (never a whole-file read)."""
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return Digest(h.hexdigest(), size)


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
        """Copy ``src`` in (hashing in the same read pass); returns its digest."""
        fd, tmp = self._tmp()
        try:
            h = hashlib.sha256()
            size = 0
            with os.fdopen(fd, "wb") as out, src.open("rb") as fh:
                while chunk := fh.read(CHUNK):
                    h.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
                out.flush()
                digest = Digest(h.hexdigest(), size)
                if not self.has(digest.sha256):
                    os.fsync(out.fileno())  # only new content needs to reach the disk
            self._commit(tmp, digest)
            return digest
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, FileNotFoundError) and exc.filename == str(src):
                raise
            raise LedgerUnavailable(f"cannot store {src} in {self.root}: {exc.strerror or exc}") from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def put_bytes(self, data: bytes) -> Digest:
        digest = hash_bytes(data)
        if self.has(digest.sha256):
            return digest
        fd, tmp = self._tmp()
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            self._commit(tmp, digest)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise LedgerUnavailable(f"cannot write to {self.root}: {exc.strerror or exc}") from exc
        return digest

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


__all__ = ["CHUNK", "Digest", "ObjectStore", "hash_bytes", "hash_file"]
