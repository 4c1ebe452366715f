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
import errno
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from queue import SimpleQueue
from typing import NamedTuple

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
    if not rel or not rel_path.parts or rel_path.is_absolute() or ".." in rel_path.parts:
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
    after_swap: Callable[[], None] | None = None,
) -> Iterator[Path]:
    """Yield a temporary sibling of ``out_dir`` to fill; on success it becomes ``out_dir``.

    On any exception the temporary folder is removed and ``out_dir`` is untouched — and a parent
    folder this call had to create is removed again, so a failed run leaves nothing behind. With
    ``force`` an existing ``out_dir`` is swapped out only after the new folder is complete. The new
    folder gets the permissions a folder made now gets (``mkdir``: the umask applies), not the private
    ones of a temporary folder. ``after_swap`` runs once the new folder is in place and the old one
    removed (:class:`TreeWriter`'s :meth:`~TreeWriter.unshare`).

    The swap (the two renames, the old folder's removal, ``after_swap``) is not cut short by a Ctrl-C
    in the main thread: the interrupt is raised once it is done. Why: cut between its steps, it left
    the old folder hidden beside the new one, or the new one sharing files with that leftover.
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
        _as_new_folder(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(created)
        raise
    try:
        yield tmp
        ensure_fresh_dir(
            out, force=force, what=what, inputs=inputs, sealed=sealed
        )  # nobody filled it while we worked
        with interrupts_deferred():
            _swap(tmp, out, after_swap)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(created)
        raise


def _swap(tmp: Path, out: Path, after_swap: Callable[[], None] | None) -> None:
    """Put the complete folder ``tmp`` at ``out``: an old folder there is moved aside first and removed
    after; on an error, ``out`` is as it was (an empty folder there made again, with its mode)."""
    old: Path | None = None
    empty_mode: int | None = None
    if out.exists():
        if any(out.iterdir()):
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            try:
                os.replace(out, old / "previous")
            except BaseException:
                old.rmdir()
                raise
        else:
            empty_mode = stat.S_IMODE(out.stat().st_mode)
            out.rmdir()  # empty: the rename needs the name free
    try:
        os.replace(tmp, out)
    except BaseException:
        if old is not None:  # the old folder goes back where it was, not left hidden beside it
            os.replace(old / "previous", out)
            old.rmdir()
        elif empty_mode is not None:
            out.mkdir()
            os.chmod(out, empty_mode)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    if after_swap is not None:
        after_swap()


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A Ctrl-C (SIGINT) during the block is raised after it, as KeyboardInterrupt (in the main thread,
    where Python runs signal handlers; elsewhere, and under a handler of the user's, nothing changes)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield
        return
    got: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if got:
        raise KeyboardInterrupt


def _as_new_folder(folder: Path) -> None:
    """Give ``folder`` (made private by ``mkdtemp``) the permissions ``mkdir`` gives a folder now: those of
    a folder made in it and removed at once (the umask, read without setting it)."""
    probe = folder / ".skdbg-mode"
    probe.mkdir()
    try:
        os.chmod(folder, stat.S_IMODE(probe.stat().st_mode))
    finally:
        probe.rmdir()


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
    runs as little Python as it can: each time it runs some it waits for the interpreter lock, which the
    busy caller hands over only every switch interval. So the path is checked and encoded, its folder
    made and the text encoded in the caller's thread, and those errors are raised by :meth:`put` at that
    file, before it is queued.

    ``previous``, the folder the new one replaces (``--force``): a file there at the same place, holding
    exactly the bytes to write and looking in every other way as a new file would (:func:`_take_over`),
    is linked into ``root`` instead of being created again. That costs the writing thread a few lines of
    Python per file (a stat, a read, a compare), against the creation it spares. Why: a run repeated
    over its own output (the usual ``--force`` loop) made every file anew and then deleted the old ones,
    and on ext4 a new file's inode is searched for past the inodes freed in the last minutes: measured
    on the project's machine, creating 500 files took ~0.4 s of system time in that state, against
    ~0.02 s otherwise (bench/README.md, adapt, twenty-first round). An unchanged file also keeps its
    modification time. The folder appears as before: the files put, and nothing else of the old folder.
    A file taken over is the old file itself: :meth:`finish` writes anew any that changed in any way
    while the run went on (its change time says so), and :meth:`unshare` any that a leftover of the old
    folder (one it could not remove) still names; but a program that still holds an old output file
    open for writing after the run writes into the new folder's (docs/codegen-adapt.md says so).

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
        self._previous = _Previous.of(previous, root)
        #: files of root taken over from previous (the writing thread's until it stops)
        self._linked: dict[str, _Linked] = {}
        self._queue: SimpleQueue[tuple[str, bytes, tuple[int, str] | None] | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name="skdbg-write", daemon=True)
        try:
            self._thread.start()
        except BaseException:
            self._close_previous()
            raise

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
        if not isinstance(data, (str, bytes)):
            raise TypeError(f"{rel}: a file's content is text or bytes, not {type(data).__name__}")
        data = file_bytes(data)
        folder = dest.parent
        if folder not in self._made:
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add(folder)
        old = None if self._previous is None else self._previous.twin(folder, dest.name)
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
                    if previous is None:
                        _write_bytes(path, data)
                        continue
                    # put twice: a file taken over is the old folder's, never written through
                    if linked.pop(path, None) is not None:
                        os.unlink(path)
                    if old is not None:
                        taken = _take_over(old[0], old[1], path, data, previous.look())
                        if taken is not None:
                            linked[path] = taken
                            continue
                    _write_new(path, data)
                except BaseException as exc:  # any failure is the caller's: raised by put() or finish()
                    self._failure = exc

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def finish(self) -> None:
        """Wait until every queued file is written; raise the first failure. A file taken over from the
        old folder that changed in any way since (another program wrote into it, changed its mode or
        attributes, gave it another name: its change time moved) is written anew with the bytes put."""
        self._stop()
        self._close_previous()
        if self._failure is not None:
            raise self._failure
        for path, taken in self._linked.items():
            now = os.lstat(path)
            if (now.st_dev, now.st_ino) != (taken.dev, taken.ino):
                continue  # a later put wrote the name anew (another spelling of it on a case-folding disk)
            if (now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_nlink) != taken.as_linked:
                os.unlink(path)
                _write_new(path, taken.data)

    def unshare(self, out: Path) -> None:
        """After the new folder replaced the old one at ``out``: a file taken over that still has another
        name (what is left of the old folder when it could not be removed whole) is replaced by a copy of
        its own, so nothing outside the output shares it. Usually no file has: one look at each.

        As the removal of the old folder, this does what it can and raises nothing: the new folder is
        complete and in place (each file holds the bytes put), and a file that could not be copied apart
        stays shared with the leftover, as the leftover itself stays (both left by a failure to remove)."""
        linked, self._linked = self._linked, {}
        for path, taken in linked.items():
            dest = out / os.path.relpath(path, self.root)
            with contextlib.suppress(OSError):
                now = os.lstat(dest)
                if (now.st_dev, now.st_ino) == (taken.dev, taken.ino) and now.st_nlink > 1:
                    _replace_by_copy(dest, taken.data)

    def abandon(self) -> None:
        """Drop the files not yet written and wait for the one being written (the folder is about to go).

        Called while an exception (often a Ctrl-C) is already on its way out: a second Ctrl-C during the
        wait is not allowed to cut it short, or the folder would be removed while a file is still being
        created in it (and left behind). The wait is one file's write, or one old file's comparison, at
        most (an old file is opened without waiting: a named pipe there cannot hold it up)."""
        self._dropped = True
        while True:
            try:
                self._stop()
                break
            except KeyboardInterrupt:
                continue
        self._close_previous()

    def _close_previous(self) -> None:
        """The old folder's descriptors closed (the writing thread has stopped)."""
        if self._previous is not None:
            self._previous.close()


class _Linked(NamedTuple):
    """A file taken over from the old folder: what it was once linked, and the bytes that were put."""

    dev: int
    ino: int
    #: size, modification and change time, links, just after the link: any later change to the file
    #: (bytes, mode, attributes, another name) moves the change time, which no program can set back.
    #: (Where the kernel keeps file times coarsely, to a tick of a few ms, as Linux before 6.13 did, a
    #: change within the tick of this look leaves the time as it was: that instant is not covered.)
    as_linked: tuple[int, int, int, int]
    data: bytes


class _NewFile(NamedTuple):
    """How a file created in the staging folder looks: its permission bits, owner, group and extended
    attributes (access lists, security labels). The umask, a default access list of the folder, a
    set-group-id folder: whatever decides them, a probe file shows it."""

    mode: int
    uid: int
    gid: int
    xattrs: dict[str, bytes]


class _Previous:
    """The folder a :class:`TreeWriter`'s output replaces, where unchanged files are taken from: each of
    its folders opened once, component by component without following a link, so a file is opened and
    linked relative to the very folder that was checked (a folder swapped for a link meanwhile cannot
    lead outside)."""

    def __init__(self, root_fd: int, staging: Path, dev: int) -> None:
        self.staging = staging
        self.dev = dev  # the staging folder's disk: a file on another cannot be linked
        #: a folder of the staging folder -> the descriptor of its twin in the old folder (None: none
        #: that files may be taken from); the old folder's own is the staging folder's entry
        self._fds: dict[Path, int | None] = {staging: root_fd}
        self._open = 1  # descriptors in _fds (at most MAX_OLD_FOLDERS)
        self._lock = threading.Lock()  # put() opens, the closing thread closes
        self._probed = False
        self._look: _NewFile | None = None  # once probed, None: nothing is taken over

    @classmethod
    def of(cls, root: Path | None, staging: Path) -> _Previous | None:
        """``root`` ready to take files from, or None (no folder, on another disk, or a system without
        extended attributes to compare or folder descriptors to work from: every file is then written)."""
        if root is None or not hasattr(os, "listxattr") or os.link not in os.supports_dir_fd:
            return None
        try:
            dev = os.stat(staging).st_dev
            fd = os.open(root, _FOLDER_FLAGS)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_dev == dev:
                return cls(fd, staging, dev)
        except OSError:
            pass
        os.close(fd)
        return None

    def twin(self, folder: Path, name: str) -> tuple[int, str] | None:
        """The old folder's twin of the staging folder's ``folder`` (its descriptor) and ``name``, when
        that folder exists in the old one, reached without following a link and on the same disk."""
        fd = self._folder(folder)
        return None if fd is None else (fd, name)

    def _folder(self, folder: Path) -> int | None:
        with self._lock:
            if folder in self._fds:
                return self._fds[folder]
            full = self._open >= MAX_OLD_FOLDERS
        parent = None
        if not full and folder != folder.parent and folder.is_relative_to(self.staging):
            parent = self._folder(folder.parent)
        fd: int | None = None
        if parent is not None:
            try:
                fd = os.open(folder.name, _FOLDER_FLAGS, dir_fd=parent)
                if os.fstat(fd).st_dev != self.dev:
                    os.close(fd)
                    fd = None
            except OSError:  # none there, a link, no descriptor left (EMFILE): its files are written
                fd = None
        with self._lock:
            self._fds[folder] = fd
            self._open += fd is not None
        return fd

    def look(self) -> _NewFile | None:
        """How a new file looks here (probed once, by the writing thread); None when it cannot be
        known, and then nothing is taken over."""
        if not self._probed:
            self._look, self._probed = _probe(self.staging), True
        return self._look

    def close(self) -> None:
        """Close the old folder's descriptors (once the writing thread stopped); twice is a no-op."""
        with self._lock:
            fds = [fd for fd in self._fds.values() if fd is not None]
            self._fds = dict.fromkeys(self._fds)
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


#: folders of the old tree kept open at once (each until the writer is done): a tree with more has the
#: files of its other folders written, not taken over, so a large tree never runs out of descriptors
MAX_OLD_FOLDERS = 64
#: a folder of the old tree, opened to work relative to it: never through a link
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _probe(folder: Path) -> _NewFile | None:
    """How a file created in ``folder`` now looks: an unnamed file (``O_TMPFILE``) made there and looked
    at, never seen in the folder. None where the system cannot make one (nothing is taken over then)."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if not tmpfile:
        return None
    try:
        fd = os.open(folder, tmpfile | os.O_WRONLY, 0o666)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        return _NewFile(stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, _xattrs(fd))
    except OSError:
        return None
    finally:
        os.close(fd)


def _xattrs(fd: int) -> dict[str, bytes]:
    """The extended attributes of the open file ``fd``, by name (none on a disk that has none)."""
    try:
        names = os.listxattr(fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return {}
        raise
    return {name: os.getxattr(fd, name) for name in names}


#: how an old file is opened to be compared: never through a link, and without waiting (it is known to
#: be a regular file first; a named pipe put there meanwhile would block the open until a writer came)
_COMPARE_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
)


def _take_over(folder: int, name: str, path: str, data: bytes, look: _NewFile | None) -> _Linked | None:
    """Link ``name`` of the old folder's ``folder`` (a descriptor) at ``path`` when it is a regular file
    with no other name, holding exactly ``data`` and looking as a new file would (``look``: permissions,
    owner, group, extended attributes), and when it stays the same file, unchanged, while it is read and
    linked; its :class:`_Linked` then, else None (nothing linked: the caller writes the file).

    Why those checks: the two names share one file until the old folder is deleted, after the new
    one is in place. A file with another name elsewhere (a link the user made), another owner, group,
    mode or access list would carry that into the new folder, and a file being changed could be
    linked half-changed. Its type is known before it is opened (opening a device or a pipe has effects
    of its own). A link this made and cannot take back is an error (raised): writing through it would
    change the old folder."""
    if look is None:
        return None
    try:
        seen = os.lstat(name, dir_fd=folder)
        if not (stat.S_ISREG(seen.st_mode) and seen.st_nlink == 1 and seen.st_size == len(data)):
            return None
        fd = os.open(name, _COMPARE_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        try:
            if not (_same_file(seen, fd) and _holds_new(fd, data, look, nlink=1)):
                return None
            os.link(name, path, src_dir_fd=folder, follow_symlinks=False)
        except OSError:
            return None  # nothing linked
        try:
            # the link's own state first, then everything checked again: a change made before this
            # look is seen below, one made after it moves the change time past the one recorded here
            made = os.lstat(path)
            same = made.st_nlink == 2 and _same_file(made, fd) and _holds_new(fd, data, look, nlink=2)
        except OSError:
            same = False
        if not same:  # changed meanwhile, another file linked, or another name appeared: written instead
            os.unlink(path)
            return None
        as_linked = (made.st_size, made.st_mtime_ns, made.st_ctime_ns, made.st_nlink)
        return _Linked(made.st_dev, made.st_ino, as_linked, data)
    finally:
        os.close(fd)


def _same_file(st: os.stat_result, fd: int) -> bool:
    """``st`` is of the file open as ``fd``."""
    there = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (there.st_dev, there.st_ino)


def _holds_new(fd: int, data: bytes, look: _NewFile, *, nlink: int) -> bool:
    """The file open as ``fd`` is a regular file with ``nlink`` names, the permissions, owner, group and
    extended attributes of a new file (``look``), and holds exactly ``data`` (read from its start)."""
    st = os.fstat(fd)
    if not (
        stat.S_ISREG(st.st_mode)
        and st.st_nlink == nlink
        and st.st_size == len(data)
        and stat.S_IMODE(st.st_mode) == look.mode
        and (st.st_uid, st.st_gid) == (look.uid, look.gid)
        and _xattrs(fd) == look.xattrs
    ):
        return False
    os.lseek(fd, 0, os.SEEK_SET)
    with open(fd, "rb", closefd=False) as fh:
        return fh.read(len(data) + 1) == data


#: ``open(path, "wb")``'s flags: no newline translation where the system has it (Windows)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
#: a new file only: with an old folder's files linked into the staging folder, a name there may be a
#: file shared with the old folder, which must never be written through
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _write_bytes(path: str, data: bytes, flags: int = _WRITE_FLAGS) -> None:
    """Create (or truncate) ``path`` and write ``data``, with the mode ``open(path, "wb")`` gives it
    (``os.open`` descriptors are not inherited by child processes, as ``open``'s are not)."""
    fd = os.open(path, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _replace_by_copy(dest: Path, data: bytes) -> None:
    """Replace ``dest`` by a new file holding ``data``: written under a name of its own beside it (never
    one of the folder's files: a random one, created exclusively), then renamed over it; a copy that
    could not be made whole is removed, and ``dest`` stays as it was."""
    while True:
        spare = os.path.join(dest.parent, f".{secrets.token_hex(8)}.skdbg-copy")  # (short: any name fits)
        try:
            _write_bytes(spare, data, _NEW_FLAGS)
        except FileExistsError:
            continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(spare)
            raise
        break
    try:
        os.replace(spare, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(spare)
        raise


def _write_new(path: str, data: bytes) -> None:
    """:func:`_write_bytes` into a new file: a name already there (a file put before under this name,
    or under another spelling of it on a case-folding disk) is removed first, never written through."""
    try:
        _write_bytes(path, data, _NEW_FLAGS)
    except FileExistsError:
        os.unlink(path)
        _write_bytes(path, data, _NEW_FLAGS)


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
    made: list[TreeWriter] = []

    def unshare() -> None:  # the old folder is gone, or what is left of it keeps none of the new files
        if made:
            made[0].unshare(out)

    with staged_dir(out, force=force, what=what, inputs=inputs, sealed=sealed, after_swap=unshare) as tmp:
        # with force, the folder being replaced (ensure_fresh_dir made sure it is a real folder)
        previous = out if force and out.is_dir() and not out.is_symlink() else None
        writer = TreeWriter(tmp, previous=previous)
        made.append(writer)
        try:
            yield writer
            writer.finish()
        except BaseException:
            writer.abandon()
            raise


def file_bytes(data: str | bytes) -> bytes:
    """The bytes a folder written here holds for ``data``: text as UTF-8, line endings as they are, a
    lone surrogate (a non-UTF-8 file name quoted in a report) escaped; bytes as they are."""
    return data.encode("utf-8", errors="backslashreplace") if isinstance(data, str) else data


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
    "file_bytes",
    "interrupts_deferred",
    "safe_name",
    "staged_dir",
    "streamed_tree",
    "write_tree",
]
