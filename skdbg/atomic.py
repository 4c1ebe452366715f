"""Write a whole output folder at once: every file or none.

Why one helper: reports, session exports, candidates, adapted packages, templates and collected
scenes all promise the same convention for ``-o DIR``:

- an absent or empty ``DIR`` is filled;
- an existing non-empty ``DIR`` is refused (:class:`OutputNotEmptyError`; the CLI maps it to exit 2
  with :data:`OUTPUT_EXISTS_HINT`), unless ``force`` is given, and then it is replaced atomically;
- a failed run leaves nothing behind: the files are assembled in a temporary sibling of the target
  and renamed into place in one step; the cleanup on failure lives here once.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from queue import SimpleQueue

#: the one-line advice every command prints after the refusal of an existing output folder
OUTPUT_EXISTS_HINT = "use --force to replace it"


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
#: the longest file-name part derived from artifact content (scope names, kernel names)
MAX_NAME_PART = 64


def safe_name(text: str, *, fallback: str = "unnamed") -> str:
    """A file-name part made from artifact content: letters, digits and ``._+-`` only, no leading dot.

    Scope and kernel names come from other people's logs; one named ``../../tmp/x`` must not choose
    where a file lands. Callers keep the original name inside the file and make the file name unique
    (an index) themselves, since two names may sanitise to the same text.
    """
    cleaned = _UNSAFE.sub("_", text).lstrip(".")[:MAX_NAME_PART]
    return cleaned or fallback


def _inside(root: Path, rel: str, real_root: Path, real_dirs: dict[Path, Path]) -> Path:
    """``root / rel``, refusing a relative path that is absolute or climbs out of ``root``.

    ``root`` is a fresh private folder only the caller writes into, and it makes no links there (the
    staging folder of :class:`TreeWriter`): a name in it is one of the caller's own files or folders, so
    only its folder is resolved, once per folder (``real_dirs``, filled here; ``real_root`` is ``root``
    resolved), and the name itself is never looked up (on some disks each look-up costs tens of
    microseconds; an asset of 500 kernels made 500).
    """
    rel_path = Path(rel)
    if not rel or rel_path.is_absolute() or ".." in rel_path.parts:
        raise ValueError(f"refusing to write {rel!r}: not a path inside the output folder")
    dest = root / rel_path
    parent = dest.parent
    real_parent = real_dirs.get(parent)
    if real_parent is None:
        real_parent = real_dirs[parent] = parent.resolve()
    if not (real_parent / dest.name).is_relative_to(real_root):
        raise ValueError(f"refusing to write {rel!r}: it resolves outside the output folder")
    return dest


class OutputNotEmptyError(Exception):
    """The target exists and is not an empty directory: an output folder is never overwritten silently."""


def _holds(folder: Path, path: Path) -> bool:
    """``path`` is ``folder`` or lies below it (both resolved: symlinks and ``..`` cannot hide it)."""
    f, p = folder.resolve(), path.resolve()
    return p == f or f in p.parents


def ensure_fresh_dir(
    out: Path,
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Raise :class:`OutputNotEmptyError` unless ``out`` is absent or an empty directory.

    ``sealed`` folders (a failure scene) are never written into: an ``out`` inside one is refused.

    With ``force`` an existing directory is acceptable (it will be replaced); a non-directory in the
    way is still refused, because replacing a file the user named by mistake loses data, and so is a
    folder that holds one of the command's ``inputs`` or the current directory (``-o .. --force``
    would otherwise delete the very scene or sources being read). ``what`` names the folder in the
    message (``adapted output``, ``report folder``…).
    """
    for folder in sealed:
        if _holds(Path(folder), out):
            raise OutputNotEmptyError(f"refusing to write the {what} {out} inside {folder}: it is sealed")
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise OutputNotEmptyError(f"{what} {out} exists and is not a directory")
    if not any(out.iterdir()):
        return
    if not force:
        raise OutputNotEmptyError(f"{what} already exists: {out} is not empty ({OUTPUT_EXISTS_HINT})")
    for inp in [*inputs, Path.cwd()]:
        if _holds(out, Path(inp)):
            raise OutputNotEmptyError(
                f"{what} {out} is or holds {inp} (an input of this command or the current directory): "
                "--force will not replace it"
            )


@contextmanager
def staged_dir(
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Yield a temporary sibling of ``out_dir`` to fill; on success it becomes ``out_dir``.

    On any exception the temporary folder is removed and ``out_dir`` is untouched — and a parent
    folder this call had to create is removed again, so a failed run leaves nothing behind. With
    ``force`` an existing ``out_dir`` is swapped out only after the new folder is complete.
    """
    out = Path(out_dir)
    inputs, sealed = list(inputs), list(sealed)
    ensure_fresh_dir(out, force=force, what=what, inputs=inputs, sealed=sealed)
    created = _make_parents(out.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name[:200]}.tmp-", dir=out.parent))
    except BaseException:
        _remove_created(created)
        raise
    try:
        yield tmp
        ensure_fresh_dir(
            out, force=force, what=what, inputs=inputs, sealed=sealed
        )  # nobody filled it while we worked
        old: Path | None = None
        if out.exists():
            if any(out.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.replace(out, old / "previous")
            else:
                out.rmdir()  # empty: the rename needs the name free
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(created)
        raise


def _make_parents(parent: Path) -> list[Path]:
    """Create ``parent`` and its missing ancestors; return the created ones, deepest first."""
    missing: list[Path] = []
    p = parent
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    parent.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_created(created: list[Path]) -> None:
    for p in created:  # deepest first; stop at the first one something else filled meanwhile
        try:
            p.rmdir()
        except OSError:
            return


class TreeWriter:
    """Writes the files handed to :meth:`put` into ``root`` from one background thread, in the order given.

    Made by :func:`streamed_tree`, which always stops its thread; not for use on its own: ``root`` must
    be a fresh folder nothing else writes into (the staging folder), as the path checks of :meth:`put`
    rely on it.

    Why a thread: creating a file is work for the operating system, during which the interpreter lock
    is free. A caller that computes its files one by one (``codegen adapt`` of an asset with hundreds
    of kernels) then computes the next file while the previous one is created, instead of paying for
    every creation after all the computing (bench/README.md, adapt, has the figures). The writing thread
    only makes system calls (open, write, close): each time it ran Python code it would wait for the
    interpreter lock, which the busy caller hands over only every switch interval. So the path is
    checked and encoded, its folder made and the text encoded in the caller's thread, and those errors
    are raised by :meth:`put` at that file, before it is queued.

    ``previous``, the folder the new one replaces (``--force``): a file there at the same place, holding
    exactly the bytes to write, is linked into ``root`` instead of being created again
    (:func:`_take_over`). Why: a run repeated over its own output (the usual ``--force`` loop) made
    every file anew and then deleted the old ones, and on ext4 a new file's inode is searched past the
    inodes freed in the last minutes: measured, 500 files then took ~0.4 s of system time to create,
    against ~0.02 s otherwise (bench/README.md, adapt). An unchanged file also keeps its modification
    time, so a build that depends on the folder does not redo its work. The folder appears as before:
    the new files and the taken-over ones, and nothing else of the old folder.

    A failure of the writing itself (a full disk) stops the writing and is raised again by the next
    :meth:`put` or by :meth:`finish`: nothing is reported written that was not.
    """

    def __init__(self, root: Path, *, previous: Path | None = None) -> None:
        self.root = root
        self._real_root = root.resolve()
        self._real_dirs: dict[Path, Path] = {}
        self._made: set[Path] = set()
        self._failure: BaseException | None = None
        self._dropped = False
        self._previous = _Previous.of(previous)
        self._linked: set[str] = set()  # files of root taken over from previous (the writing thread's)
        self._queue: SimpleQueue[tuple[str, bytes, str | None] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name="skdbg-write", daemon=True)
        self._thread.start()

    def put(self, rel: str, data: str | bytes) -> None:
        """Queue ``data`` for ``root / rel``; a file put twice ends as the last.

        Text is written as its UTF-8 bytes, line endings as they are (a CRLF text stays CRLF on every
        system); a non-UTF-8 file name quoted in a report arrives as surrogates and is escaped.
        """
        if self._failure is not None:
            raise self._failure
        # the root is the staging folder streamed_tree made (mkdtemp: fresh, this user's only), into
        # which only this writer puts regular files and folders: no name there can be a link
        dest = _inside(self.root, rel, self._real_root, self._real_dirs)
        if b"\0" in os.fsencode(dest):  # a name the system cannot take fails here, at this file
            raise ValueError(f"refusing to write {rel!r}: a file name cannot hold a NUL character")
        if isinstance(data, str):
            data = data.encode("utf-8", errors="backslashreplace")
        elif not isinstance(data, bytes):
            raise TypeError(f"{rel}: a file's content is text or bytes, not {type(data).__name__}")
        if dest.parent not in self._made:
            dest.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(dest.parent)
        old = None if self._previous is None else self._previous.twin(dest.relative_to(self.root))
        self._queue.put((os.fspath(dest), data, old))  # text: an error names the file as text, not b'...'

    def backlog(self) -> int:
        """How many files are queued and not yet written."""
        return self._queue.qsize()

    def _drain(self) -> None:
        previous, linked = self._previous, self._linked
        while (item := self._queue.get()) is not None:
            if self._failure is None and not self._dropped:
                path, data, old = item
                try:
                    if (
                        path in linked
                    ):  # put twice: the taken-over file is the old folder's, not to be written
                        os.unlink(path)
                        linked.discard(path)
                    if (
                        old is not None
                        and previous is not None
                        and _take_over(old, path, data, previous.mode)
                    ):
                        linked.add(path)
                        continue
                    _write_bytes(path, data)
                except BaseException as exc:  # any failure is the caller's: raised by put() or finish()
                    self._failure = exc

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def finish(self) -> None:
        """Wait until every queued file is written; raise the first failure."""
        self._stop()
        if self._failure is not None:
            raise self._failure

    def abandon(self) -> None:
        """Drop the files not yet written and wait for the one being written (the folder is about to go).

        Called while an exception (often a Ctrl-C) is already on its way out: a second Ctrl-C during the
        wait is not allowed to cut it short, or the folder would be removed while a file is still being
        created in it (and left behind). The wait is one file's write at most."""
        self._dropped = True
        while True:
            try:
                self._stop()
                return
            except KeyboardInterrupt:
                continue


class _Previous:
    """The folder a :class:`TreeWriter`'s output replaces, where unchanged files are taken from."""

    def __init__(self, root: Path, real_root: Path, mode: int) -> None:
        self.root = root
        self.real_root = real_root
        #: the permission bits a file written here gets (``0o666`` less the umask): a file of the old
        #: folder with other bits (a user's ``chmod``) is written anew, with these
        self.mode = mode
        self._real_dirs: dict[Path, bool] = {}  # a folder of the old tree -> it lies where its name says

    @classmethod
    def of(cls, root: Path | None) -> _Previous | None:
        """``root`` ready to take files from, or None (no folder, or this system's umask unknown: every
        file is then written)."""
        if root is None:
            return None
        umask = _umask()
        if umask is None:
            return None
        try:
            real = root.resolve(strict=True)
        except OSError:
            return None
        return cls(root, real, 0o666 & ~umask)

    def twin(self, rel: Path) -> str | None:
        """The old folder's path of the file at ``rel`` of the new one, when its folder is inside the old
        folder once links are followed (a linked folder there may lead anywhere), else None."""
        folder = self.root / rel.parent
        inside = self._real_dirs.get(folder)
        if inside is None:
            try:
                inside = folder.resolve(strict=True) == self.real_root / rel.parent
            except OSError:
                inside = False
            self._real_dirs[folder] = inside
        return os.fspath(folder / rel.name) if inside else None


def _umask() -> int | None:
    """This process's umask, read where Linux shows it (``os.umask`` can only read it by setting it,
    which another thread creating a file at that moment would see); None where it is not shown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _take_over(old: str, path: str, data: bytes, mode: int) -> bool:
    """Link ``old`` at ``path`` when it is a regular file of this user, with ``mode`` and no other
    link, holding exactly ``data``, and stays so (the same size and modification time) while it is
    read and linked; True when linked.

    Why those checks: the two names then share one file until the old folder is deleted, after the new
    one is in place; a file with another name elsewhere (a link the user made), another owner or mode
    would carry that into the new folder, and a file being changed could be linked half-changed. Any
    doubt, or any error, and the file is written as usual (False)."""
    try:
        fd = os.open(old, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return False
    try:
        before = os.fstat(fd)
        if not (
            stat.S_ISREG(before.st_mode)
            and before.st_nlink == 1
            and before.st_size == len(data)
            and stat.S_IMODE(before.st_mode) == mode
            and before.st_uid == _EUID
        ):
            return False
        with open(fd, "rb", closefd=False) as fh:
            if fh.read(len(data) + 1) != data:
                return False
        os.link(old, path, follow_symlinks=False)
        after = os.fstat(fd)
        if (after.st_size, after.st_mtime_ns, after.st_nlink) != (before.st_size, before.st_mtime_ns, 2):
            os.unlink(path)  # changed meanwhile, or another link appeared: written instead
            return False
        return True
    except OSError:
        with contextlib.suppress(OSError):
            if os.path.samefile(old, path):
                os.unlink(path)
        return False
    finally:
        os.close(fd)


#: the user this process writes files as (a file of another user's is never taken over)
_EUID = os.geteuid() if hasattr(os, "geteuid") else -1

#: ``open(path, "wb")``'s flags: no newline translation where the system has it (Windows)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


def _write_bytes(path: str, data: bytes) -> None:
    """Create (or truncate) ``path`` and write ``data``, with the mode ``open(path, "wb")`` gives it
    (``os.open`` descriptors are not inherited by child processes, as ``open``'s are not)."""
    fd = os.open(path, _WRITE_FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


@contextmanager
def streamed_tree(
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> Iterator[TreeWriter]:
    """:func:`write_tree` for files that become known one by one: yield a :class:`TreeWriter`.

    The folder appears whole when the block ends and every file is written; when the block or a write
    fails, or the wait for the last files is interrupted, nothing appears (the convention of
    :func:`staged_dir`, whose arguments these are). The writing thread is stopped before the staging
    folder is renamed or removed. With ``force``, a file whose bytes the folder being replaced holds
    already is taken over from it, not written again (:class:`TreeWriter`, ``previous``).
    """
    out = Path(out_dir)
    with staged_dir(out, force=force, what=what, inputs=inputs, sealed=sealed) as tmp:
        # with force, the folder being replaced (ensure_fresh_dir made sure it is a real folder)
        previous = out if force and out.is_dir() and not out.is_symlink() else None
        writer = TreeWriter(tmp, previous=previous)
        try:
            yield writer
            writer.finish()
        except BaseException:
            writer.abandon()
            raise


def write_tree(
    out_dir: str | os.PathLike[str],
    files: Mapping[str, str | bytes],
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> list[Path]:
    """Write ``files`` (relative path → text or bytes) as the new folder ``out_dir``, atomically.

    ``out_dir`` must be absent or an empty directory (or any directory with ``force``; see
    :func:`ensure_fresh_dir` for ``what``, ``inputs`` and ``sealed``). A relative path that is absolute
    or leads outside the folder is refused (``ValueError``). Text is written as UTF-8. Returns the
    written paths (under ``out_dir``) in the order given.
    """
    with streamed_tree(out_dir, force=force, what=what, inputs=inputs, sealed=sealed) as writer:
        for rel, data in files.items():
            writer.put(rel, data)
    return [Path(out_dir) / rel for rel in files]


__all__ = [
    "OUTPUT_EXISTS_HINT",
    "OutputNotEmptyError",
    "ensure_fresh_dir",
    "safe_name",
    "staged_dir",
    "streamed_tree",
    "write_tree",
]
