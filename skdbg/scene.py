"""A failure scene on disk: which artifacts it holds, their hashes and the run identity.

Why: the gate (G5) needs every artifact path and SHA-256 frozen before anything is re-run,
and every command needs the same answer to "what is in this folder". Discovery is by name
(scene-layout.md): plog files anywhere, ``sk_meta/`` at the root or below, side files named by
``run.json``. Hashes are computed lazily — listing a scene with GB-sized plogs stays instant.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from skdbg.parsers.common import Gap, ParseError, Source
from skdbg.parsers.discovery import MODEL_FILES, SkMetaLayout, discover_sk_meta
from skdbg.parsers.evidence import Evidence, SideFiles, TableSpec
from skdbg.parsers.frames import rows_frame
from skdbg.parsers.fsguard import READ_FLAGS, file_problem, open_regular
from skdbg.parsers.plog import PlogFile, plog_file_named
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.readahead import FilesAhead
from skdbg.parsers.textio import looks_binary

if TYPE_CHECKING:
    import pandas as pd

_HASH_CHUNK = 1 << 20
_SNIFF_BYTES = 4096


def _sniff_plog(path: Path) -> PlogFile | None:
    """A ``*.log`` not named ``plog-<pid>_<stamp>.log`` whose first record is a CANN plog line.

    Excerpts pasted into tickets (e.g. the torchair case study's ``plog_excerpt.log``) lose the
    runtime's file name; their content still says what they are, and which pid wrote them.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return None
    if looks_binary(head):
        return None
    for raw in head.decode("utf-8", errors="replace").splitlines():
        if raw.strip():
            rec = parse_plog_line(raw, Source(str(path), 1))
            if rec is None:
                return None
            return PlogFile(src=Source(str(path)), kind="plog", pid=rec.pid, stamp=None, stamp_text="")
    return None


def _find_plogs(root: Path, gaps: list[Gap]) -> list[tuple[PlogFile, Path]]:
    """One walk of the scene: plog-named files anywhere, then content-identified ``*.log`` outside sk_meta,
    each with its path (the walk's :class:`Path`: the scene's artifact list takes it as it is).

    ``root`` is resolved. Only regular files inside it are taken; a plog-named or ``*.log`` entry that
    is anything else (a FIFO, a device, a link leaving the scene, a dangling link) is a gap.
    """
    named: list[tuple[PlogFile, Path]] = []
    sniffed: list[tuple[PlogFile, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        folder = Path(dirpath)
        in_sk_meta = "sk_meta" in folder.relative_to(root).parts
        # only the *.log names are sorted and made Paths, not the thousands of kernel ELFs a scene holds
        for name in sorted(n for n in filenames if n.endswith(".log")):
            p = folder / name
            # the walk starts at the resolved root and descends into no link: ``folder`` is resolved
            # already, so a plain file needs one lstat, not a resolve of its path (a thousand plogs)
            if (problem := file_problem(p, root, real_dir=folder)) is not None:
                if not in_sk_meta:  # sk_meta's own files are checked by discovery
                    gaps.append(problem)
                continue
            # ``name`` is ``p.name``: a listed file name holds no separator and is no "." or ".."
            if (pf := plog_file_named(str(p), name)) is not None:
                named.append((pf, p))
            elif name.endswith(".log") and not in_sk_meta and (pf := _sniff_plog(p)) is not None:
                sniffed.append((pf, p))
    return named + sniffed


@dataclass(slots=True)
class Artifact:
    """One file of the scene. Its SHA-256 is computed once — by :meth:`Scene.start_hashing`'s worker,
    by the plog scan's forked child or this process's share of that work (:meth:`Scene.digests_in_child`;
    a reader then hashes what no one has claimed yet, then waits for the child's digests instead of
    hashing a file twice), or on first access, whichever comes first — and cached with the size it
    had when it was read. The first answer stands: a digest handed over later does not
    replace an error already met."""

    kind: str  # plog, device_log, run_json, env_probe, source_sites, perf, marker_file, sk_prof, bin_file, entry_bin, …
    path: Path
    root: Path
    pid_label: str | None = None
    model_label: str | None = None
    _digest: tuple[int, str] | None = field(default=None, repr=False)
    #: the file's mtime when :meth:`digest` (or a reader handing its hash over) hashed it; None: not known
    _hashed_mtime: float | None = field(default=None, repr=False)
    _error: Exception | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    #: the digests a forked scan's child will hand over (or never will): until they have come, a
    #: reader helps with them, then waits, instead of hashing the file a second time (None: nothing
    #: to wait for)
    _awaiting: ArtifactDigests | None = field(default=None, repr=False, compare=False)

    @property
    def relpath(self) -> str:
        path, root = str(self.path), str(self.root)
        if os.sep == "/" and root != "/" and path.startswith(root + "/"):
            return path[len(root) + 1 :]  # what relative_to gives, without pathlib's parsing (2,000 ELFs)
        try:
            return self.path.relative_to(self.root).as_posix()
        except ValueError:
            return self.path.as_posix()

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    @property
    def mtime(self) -> datetime:
        return datetime.fromtimestamp(self.path.stat().st_mtime)

    def size_and_stamp(self) -> tuple[int, float]:
        """The size and mtime (seconds since the epoch) the file had when :meth:`digest` hashed it, else
        those of a ``stat`` now.

        Why: G5 lists thousands of artifacts, each hashed by :meth:`Scene.start_hashing`'s worker, which
        ``fstat``-ed the open file already; a ``stat`` each on the main thread was ~5 ms of the bench
        scene. The size is the one :meth:`digest` reports; a file hashed by another reader is ``stat``-ed
        as before unless that reader knew the mtime of what it read (the plog scan)."""
        with self._lock:
            digest, mtime = self._digest, self._hashed_mtime
        if digest is not None and mtime is not None:
            return digest[0], mtime
        st = os.stat(self.path)
        return st.st_size, st.st_mtime

    def listed(self) -> tuple[str, int, float]:
        """``(SHA-256, size, mtime)``: :attr:`sha256`, then :meth:`size_and_stamp`, in one step (the
        scene block of an analysis lists thousands of artifacts). Raises as :meth:`digest` does."""
        size, sha256 = self.digest()
        mtime = self._hashed_mtime  # set with the digest, under the lock, and never changed after
        if mtime is not None:
            return sha256, size, mtime
        st = os.stat(self.path)
        return sha256, st.st_size, st.st_mtime

    def digest(self) -> tuple[int, str]:
        """``(size, SHA-256)`` (the size ``fstat`` gave when the file was opened for it, the hash of the
        bytes read: :func:`file_digest`); the file is read for it at most once per scene opening.

        Raises the :class:`ParseError`/``OSError`` of an unreadable artifact (every time, from the
        one failed attempt)."""
        awaiting = self._awaiting
        if awaiting is not None and not self._answered():
            awaiting.wait(self._answered)  # the child's digests come right after the plogs
        return self.hash_now()

    def known_digest(self) -> tuple[int, str] | None:
        """``(size, SHA-256)`` when some reader has hashed the file already, else None: it neither reads
        the file nor waits for a hash under way (one attribute read, no lock). A session freeze passes it
        on, and its store then copies only what it does not hold."""
        return self._digest

    def _answered(self) -> bool:
        """A digest or an error is known (no reader need wait for the child's)."""
        return self._digest is not None or self._error is not None

    def hash_now(self) -> tuple[int, str]:
        """:meth:`digest` without waiting for a child's digests: for the one that hashes this artifact
        itself (a chunk of :class:`ArtifactDigests` it claimed). Raises as :meth:`digest` does."""
        with self._lock:  # the worker and a reader never hash the same file twice
            if self._digest is None and self._error is None:
                try:
                    self._digest, self._hashed_mtime = file_digest(self.path, self.kind)
                except (ParseError, OSError) as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._digest is not None
            return self._digest

    @property
    def _sha256(self) -> str | None:
        """The hash if already computed, else None (a check that must not trigger a read)."""
        return self._digest[1] if self._digest is not None else None

    def remember_digest(self, size: int, sha256: str, mtime: float | None = None) -> None:
        """Adopt a hash computed while the file was read for another purpose (a ledger copy, the plog scan);
        ``mtime`` is the ``fstat`` of the bytes read when the reader knows it (see :meth:`size_and_stamp`:
        the plog scan's thousand rotated files then need no ``stat`` each on the main thread)."""
        with self._lock:
            if self._digest is None and self._error is None:  # the first answer stands
                self._digest = (size, sha256)
                self._hashed_mtime = mtime

    @property
    def sha256(self) -> str:
        return self.digest()[1]


def _small_digest(path: str | os.PathLike[str]) -> tuple[tuple[int, str], float] | None:
    """:meth:`Artifact.digest`'s ``(size, SHA-256)`` of a regular file under :data:`_HASH_CHUNK` bytes and the
    mtime its ``fstat`` gave, in a handful of C calls; None for anything else (a larger file, a
    non-regular one, any error, a read that did not return exactly the file's size): the general
    path then reads it, or raises the error it always raised.

    Why: a scene is mostly two thousand kernel ELFs of a few KB, hashed in a worker thread beside
    the main thread's parsing; the general path's file objects cost ~25 Python-level calls a file
    with the GIL held. Same bytes: the size is ``fstat``'s, and one read of size + 1 bytes must
    return exactly that many; a file that grew meanwhile (more bytes) or a short read (a file cut
    meanwhile, a network file system) is left to the general path, which reads until the end."""
    try:
        fd = os.open(path, READ_FLAGS)  # as open_regular opens (a FIFO must not block)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size >= _HASH_CHUNK:
            return None
        data = os.read(fd, st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != st.st_size:
        return None
    return (st.st_size, hashlib.sha256(data).hexdigest()), st.st_mtime


def file_digest(path: str | os.PathLike[str], kind: str) -> tuple[tuple[int, str], float]:
    """``((size, SHA-256), mtime)`` of the ``kind`` artifact at ``path``: the size and mtime its ``fstat``
    gave once it was opened, the SHA-256 of the bytes read (a small regular file's are exactly that
    size: :func:`_small_digest`; a file growing while the general path reads it until its end is hashed
    with its new bytes). A small regular file is hashed in a handful of C calls, anything else read through
    :func:`~skdbg.parsers.fsguard.open_regular` until its end. Raises the :class:`ParseError` or
    ``OSError`` of an unreadable file (``kind`` names it in the message)."""
    small = _small_digest(path)
    if small is not None:
        return small
    h = hashlib.sha256()
    with open_regular(path, what=f"the {kind} artifact") as fh:
        st = os.fstat(fh.fileno())
        # hashlib and read() release the GIL: the worker runs alongside
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return (st.st_size, h.hexdigest()), st.st_mtime


def iso_seconds(stamp: float, memo: dict[int, str]) -> str:
    """``datetime.fromtimestamp(stamp).isoformat(timespec="seconds")``, converted once per second.

    Why: the scene block lists thousands of artifacts written within a few seconds; a local-time
    conversion each was ~3 ms of the bench scene. Exact: ``fromtimestamp`` splits a non-negative stamp
    into its whole seconds and a fraction rounded to microseconds, which carries into the next second
    only for a fraction of at least 0.9999995; below 0.999 the whole second alone decides the local
    time and so the text (the fold too). Any other stamp is converted whole. ``memo`` is the caller's
    (one listing: a time-zone change between two analyses is seen)."""
    whole = int(stamp)
    if stamp >= 0 and stamp - whole < 0.999:
        text = memo.get(whole)
        if text is None:
            text = memo[whole] = datetime.fromtimestamp(whole).isoformat(timespec="seconds")
        return text
    return datetime.fromtimestamp(stamp).isoformat(timespec="seconds")


@dataclass(slots=True)
class Scene:
    """The inventory of one scene folder."""

    root: Path
    artifacts: list[Artifact]
    layout: SkMetaLayout
    plogs: list[PlogFile]
    gaps: list[Gap]
    _hasher: threading.Thread | None = field(default=None, repr=False)
    _by_path: dict[str, Artifact] | None = field(default=None, repr=False)

    def start_hashing(self, *, skip: Collection[str] = ()) -> threading.Thread:
        """Hash every artifact in a daemon worker thread (G5) while the caller parses.

        Why: the SHA-256 of all artifacts (hundreds of MB on a real scene) is needed by the gate and
        the report; hashing runs with the GIL released, so it overlaps the plog scan instead of
        following it. A reader that needs a hash first computes it itself; nothing is hashed twice.
        ``skip`` names files whose hash another reader hands over (:meth:`adopt_digest`: the plog
        scan hashes what it reads); should it fail, the first reader asking computes it."""
        if self._hasher is None:  # once per scene
            todo = self._unhashed(skip)
            self._hasher = threading.Thread(target=lambda: _hash_all(todo), name="skdbg-sha256", daemon=True)
            self._hasher.start()
        return self._hasher

    def digests_in_child(self, *, skip: Collection[str] = ()) -> ArtifactDigests:
        """The hashing of :meth:`start_hashing` as work shared with the plog scan's forked child
        (``Evidence.start_plog_scan(also=...)``): the child hashes, after its scan, what this process did not
        claim while it waited for the scan or for the child's digests. The child's digests come after the
        plogs and are adopted here by the thread that files the plogs, once the plogs are handed over. Once
        the child is forked, :meth:`ArtifactDigests.expect` makes a reader of a digest hash what no one has
        claimed, then wait for them instead of hashing a file twice.

        Why: in this process the two thousand kernel ELFs of a scene cost ~0.07 s of CPU, a third of it Python
        holding the GIL beside the main thread's parsing. Should the child be lost before its digests, the
        wait ends once the filing thread has scanned here the plogs it did not send, and each artifact is
        hashed here when first asked for (on the reader's thread: the hashing thread of :meth:`start_hashing`
        is not started then)."""
        return ArtifactDigests(self._unhashed(skip))

    def _unhashed(self, skip: Collection[str]) -> list[Artifact]:
        skipped = {str(p) for p in skip}
        return [a for a in self.artifacts if str(a.path) not in skipped]

    def adopt_digest(self, path: str, size: int, sha256: str, mtime: float | None = None) -> None:
        """Take the SHA-256 of ``path`` computed by a reader that read the whole file anyway (and the
        mtime its ``fstat`` gave for the bytes read, when known)."""
        if self._by_path is None:
            self._by_path = {str(a.path): a for a in self.artifacts}
        a = self._by_path.get(str(path))
        if a is not None:
            a.remember_digest(size, sha256, mtime)

    def of_kind(self, *kinds: str) -> list[Artifact]:
        return [a for a in self.artifacts if a.kind in kinds]

    def first(self, kind: str) -> Artifact | None:
        found = self.of_kind(kind)
        return found[0] if found else None


#: what :func:`_hash_each` hashes by (an artifact, or an index into texts) and what a hash gives
_Item = TypeVar("_Item")
_Digest = TypeVar("_Digest")


def _hash_each(
    todo: Sequence[_Item],
    numbers: Iterable[int],
    reached: Callable[[int], None],
    hash_one: Callable[[_Item], _Digest],
) -> Iterator[tuple[int, _Digest]]:
    """``(i, hash_one(todo[i]))`` for each of ``numbers`` that could be hashed, ``reached(i)`` called
    first (the read-ahead: cold, the disk fetches the files ahead while one is hashed, not one round
    trip a file); an unreadable one keeps its error for its reader."""
    for i in numbers:
        reached(i)
        try:
            digest = hash_one(todo[i])
        except (ParseError, OSError):
            continue
        yield i, digest


def _hash_all(todo: list[Artifact]) -> None:
    """:meth:`Artifact.digest` of each of ``todo`` (the hashing thread of :meth:`Scene.start_hashing`)."""
    for _ in _hash_each(todo, range(len(todo)), FilesAhead([a.path for a in todo]).reached, Artifact.digest):
        pass


@dataclass(slots=True)
class ArtifactDigests:
    """:meth:`Scene.digests_in_child`: the artifacts to hash, numbered ``0 … units()-1`` and claimed a chunk
    at a time by the child (``compute``, after its scan) and by this process (``do_here``) while it waits for
    the scan or for the child's digests. ``compute`` yields one list, ``(index, size, sha256, mtime)`` of each
    artifact it could hash (the values :meth:`Artifact.digest` keeps), ``adopt`` takes it here, then ``settle``
    (always, whether digests came or not).

    A copy made by unpickling (what a standby child gets: :meth:`__reduce__`) holds the artifacts as texts
    (``_texts``: their kinds, paths and roots) and makes them :class:`Artifact` objects only when asked for
    (:attr:`todo`): its ``compute`` hashes by the paths' text. Why: the child hashes two thousand kernel
    ELFs after its scan, and G5 waits for its digests at the analysis's end; a path object and an artifact
    (with its lock) made for each cost the child ~7 ms of the bench scene before it hashed a file."""

    _artifacts: list[Artifact] | None
    _texts: tuple[list[str], list[str], list[str]] | None = None
    arrived: threading.Event = field(default_factory=threading.Event)
    #: claims a chunk of this work and does it here; False when none is left (:meth:`expect`)
    helper: Callable[[], bool] | None = None
    #: this process's read-ahead over the artifacts (its threads take turns with it: ``_ahead_lock``)
    _ahead: FilesAhead | None = None
    _ahead_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def todo(self) -> list[Artifact]:
        """The artifacts, by number: an original's as it was made; a copy's made from its texts on the
        first call (not for two threads at once: in the child a copy lives in, only its scan thread
        comes to the work, and its ``compute`` asks for no artifact)."""
        if self._artifacts is None:
            kinds, paths, roots = self._texts or ([], [], [])
            root_paths = {r: Path(r) for r in set(roots)}  # a scene's artifacts share one or two roots
            self._artifacts = [
                Artifact(k, Path(p), root_paths[r]) for k, p, r in zip(kinds, paths, roots, strict=True)
            ]
        return self._artifacts

    def expect(self, helper: Callable[[], bool] | None = None) -> None:
        """The child is forked and will hash: readers of these artifacts' digests wait for it, after
        doing the chunks of the work still unclaimed with ``helper`` (see :meth:`wait`)."""
        self.helper = helper
        for a in self.todo:
            a._awaiting = self

    def wait(self, answered: Callable[[], bool]) -> None:
        """Until ``answered()`` (the reader's own artifact is hashed) or the child's digests have come
        (or never will): first this thread does what is left to claim (it would only wait
        otherwise), then it waits for the child's share."""
        helper = self.helper
        if helper is not None:
            with contextlib.suppress(Exception):  # a helper that fails leaves the work to the child
                while not self.arrived.is_set() and not answered() and helper():
                    pass
        if not answered():
            self.arrived.wait()

    def units(self) -> int:
        """How many artifacts there are to hash (the numbers claimed)."""
        return len(self._texts[1]) if self._artifacts is None and self._texts is not None else len(self.todo)

    def alone(self) -> int:
        """No artifact is claimed alone: each chunk holds several (:meth:`SharedClaims.offer`)."""
        return 0

    def compute(self, claimed: Iterable[int]) -> Iterator[list[tuple[int, int, str, float | None]]]:
        """In the child: hash the artifacts numbered ``claimed``; an unreadable one is left to its reader
        here, which meets the error itself. A copy (:meth:`__reduce__`) hashes by the paths' text
        (:func:`file_digest`, the values :meth:`Artifact.hash_now` keeps for a file hashed afresh); an
        original (a child forked with the artifacts in place) through its artifacts, so a digest or an
        error one already had stands. Their digests come as one result, once all are hashed (each result
        crosses the pipe on its own: one a file would cost more than it saves)."""
        if self._artifacts is None and self._texts is not None:
            kinds, paths = self._texts[0], self._texts[1]
            ahead = FilesAhead(paths)  # (the files the other process hashes share the cache)
            yield [
                (i, size, sha256, mtime)
                for i, ((size, sha256), mtime) in _hash_each(
                    range(len(paths)), claimed, ahead.reached, lambda k: file_digest(paths[k], kinds[k])
                )
            ]
            return
        todo = self.todo
        ahead = FilesAhead([a.path for a in todo])
        yield [
            (i, size, sha256, todo[i]._hashed_mtime)
            for i, (size, sha256) in _hash_each(todo, claimed, ahead.reached, Artifact.hash_now)
        ]

    def do_here(self, chunk: Iterable[int]) -> None:
        """Here: hash the artifacts numbered ``chunk`` (claimed by this process while it waited)."""
        for _ in _hash_each(self.todo, chunk, self._reached, Artifact.hash_now):
            pass

    def _reached(self, i: int) -> None:
        """This process's read-ahead over the artifacts, one for all its threads (they take turns)."""
        with self._ahead_lock:
            if self._ahead is None:
                self._ahead = FilesAhead([a.path for a in self.todo])
            self._ahead.reached(i)

    def adopt(self, result: object) -> None:
        todo = self.todo
        for i, size, sha256, mtime in cast("list[tuple[int, int, str, float | None]]", result):
            todo[i].remember_digest(size, sha256, mtime)

    def settle(self) -> None:
        """No more digests will come: readers stop waiting (and hash what has none)."""
        self.arrived.set()
        self.helper = None  # (it holds the evidence: nothing to claim any more)

    def __reduce__(self) -> tuple[Callable[..., ArtifactDigests], tuple[object, ...]]:
        """Pickled for a child forked before the scene was opened (``skdbg analyze``'s standby child,
        ``parsers/scan_child.py``): each artifact's kind, path and root as text (a path keeps its text
        once made, so the shared root is one string, written once), none of their state (digests known
        here are not sent). The copy hashes them there by path and its digests come back by index, as
        from a child forked with the artifacts in place."""
        if self._artifacts is None and self._texts is not None:
            return _detached_digests, self._texts
        todo = self.todo
        return _detached_digests, (
            [a.kind for a in todo],
            [str(a.path) for a in todo],
            [str(a.root) for a in todo],
        )


def _detached_digests(kinds: list[str], paths: list[str], roots: list[str]) -> ArtifactDigests:
    """An :class:`ArtifactDigests` rebuilt from its pickle (:meth:`ArtifactDigests.__reduce__`): the
    texts only, made artifacts when first asked for (:attr:`ArtifactDigests.todo`)."""
    if not len(kinds) == len(paths) == len(roots):
        raise ValueError("an artifact list's kinds, paths and roots differ in number")
    return ArtifactDigests(None, (kinds, paths, roots))


class NotASceneError(ParseError):
    """A folder with none of the files a failure scene is made of (an empty or unrelated folder).

    Why refuse instead of a verdict full of gaps: pointing skdbg at the wrong folder is the likeliest
    mistake of a first run, and "no plog, no sk_meta, no run.json" is the one precise thing to say.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(str(root), "a failure scene")
        Exception.__init__(self, f"{root}: {NOT_A_SCENE}")


#: the one-line refusal of a folder that holds no scene at all (analyze, inspect, report, tui)
NOT_A_SCENE = "not a failure scene: no plog, sk_meta or run.json found"


def _side_file(root: Path, name: str, gaps: list[Gap]) -> Path | None:
    p = root / name
    if not p.is_symlink() and not p.exists():
        return None
    problem = file_problem(p, root)
    if problem is not None:
        gaps.append(problem)
        return None
    return p


def open_scene(path: str | os.PathLike[str]) -> Scene:
    """Inventory a scene folder (or an ``sk_meta``/pid/model folder given directly).

    Raises :class:`ParseError` when ``path`` is missing or not a directory, and
    :class:`NotASceneError` when it holds no plog, no ``sk_meta`` and no ``run.json``; anything else
    absent inside is a :class:`Gap`, so a partial scene still opens and says what it lacks.
    """
    root = Path(path)
    if not root.exists():
        raise ParseError(str(root), "a scene directory (path does not exist)")
    if not root.is_dir():
        raise ParseError(str(root), "a scene directory, got a file")
    root = root.resolve()
    layout = discover_sk_meta(root)
    artifacts: list[Artifact] = []
    gaps: list[Gap] = list(layout.gaps)

    for kind, name in (
        ("run_json", "run.json"),
        ("env_probe", "env/check_environment.json"),
        ("source_sites", "source_sites.json"),
        ("perf", "perf.json"),  # skdbg relaunch --perf-runs: the clean timed runs of gate V5
    ):
        p = _side_file(root, name, gaps)
        if p is not None:
            artifacts.append(Artifact(kind, p, root))

    found = _find_plogs(root, gaps)
    plogs = [pf for pf, _ in found]
    has_run_json = any(a.kind == "run_json" for a in artifacts)
    if not (plogs or layout.models or layout.prof_files or layout.sk_meta_dirs or has_run_json):
        raise NotASceneError(root)
    for pf, p in found:
        artifacts.append(Artifact("device_log" if pf.kind == "device" else "plog", p, root, str(pf.pid)))
    if not plogs:
        gaps.append(
            Gap(
                "no_plog",
                f"no plog-<pid>_<stamp>.log or device-<pid>_<stamp>.log file under {root}",
                Source(str(root)),
                "copy $ASCEND_PROCESS_LOG_PATH (default ~/ascend/log) /{run,debug}/plog/plog-<pid>_*.log "
                "of the failing process into the scene",
            )
        )

    for model in layout.models:
        for role, p in model.files.items():
            artifacts.append(Artifact(role, p, root, model.pid_label, model.label))
        for b in model.bin_files:
            kind = "entry_bin" if b.name.startswith("sk_entry_0x") else "bin_file"
            artifacts.append(Artifact(kind, b, root, model.pid_label, model.label))
        for c in model.constant_codegen:
            artifacts.append(Artifact("constant_codegen", c, root, model.pid_label, model.label))
    for prof in layout.prof_files:
        pid_label = prof.parent.name if prof.parent.parent.name == "sk_meta" else None
        artifacts.append(Artifact("sk_prof", prof, root, pid_label))
    return Scene(root=root, artifacts=artifacts, layout=layout, plogs=plogs, gaps=gaps)


def with_model_source(artifacts: list[Artifact], marker: Path | None, root: Path) -> list[Artifact]:
    """``artifacts``, then the model source with the scope markers (``marker``: run.json's
    ``candidate.marker_file`` where it was found) as kind ``marker_file``, unless there is none or it is
    one of them: the same file (device and inode, whatever its name or links), so it is listed once.

    It is listed by its real path (links resolved, then ``..`` folded, as the system opens it): inside
    ``root`` relative to it, outside (``--source-root``, or a path leaving the scene) absolute.
    Artifacts whose hashed size differs from the model source's are not even looked at (after G5
    that is nearly all of them)."""
    if marker is None:
        return artifacts
    try:
        st = os.stat(marker)
    except OSError:
        return artifacts
    for a in artifacts:
        known = a.known_digest()
        if known is not None and known[0] != st.st_size:
            continue
        try:
            other = os.stat(a.path)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return artifacts
    return [*artifacts, Artifact("marker_file", Path(os.path.realpath(marker)), root)]


def model_source_paths(rel: str | None, bases: Iterable[Path | None]) -> list[Path]:
    """Where run.json's ``candidate.marker_file`` (``rel``, as written) may lie, in the order they are
    tried: ``rel`` itself when absolute, else under each base that is given (``--source-root`` first,
    then the scene root: scene-layout.md keeps ``src/model.py`` in the scene); none without ``rel``."""
    if rel is None:
        return []
    return [Path(rel) if os.path.isabs(rel) else base / rel for base in bases if base is not None]


def first_file(paths: Iterable[Path]) -> Path | None:
    """The first of ``paths`` that is a regular file (or a link to one), or None."""
    return next((p for p in paths if p.is_file()), None)


def _model_source(evidence: Evidence) -> Path | None:
    """The scene's model source (run.json's ``candidate.marker_file`` under the scene root), or None."""
    run = evidence.run
    cand = run.identity.candidate if run is not None else None
    return first_file(model_source_paths(None if cand is None else cand.marker_file, (evidence.root,)))


def _artifacts_frame(artifacts: list[Artifact]) -> pd.DataFrame:
    rows = [
        {
            "kind": a.kind,
            "file": a.relpath,
            "pid": a.pid_label,
            "model": a.model_label,
            "size": a.size,
            "mtime": a.mtime.isoformat(timespec="seconds"),
            "sha256": a.sha256,
        }
        for a in artifacts
    ]
    return rows_frame(rows, ["kind", "file", "pid", "model", "size", "mtime", "sha256"])


def load_evidence(path: str | os.PathLike[str], *, pid: int | None = None) -> Evidence:
    """Open the scene at ``path`` and return its lazily parsed :class:`Evidence`.

    ``pid`` keeps one process (rank) when the scene holds several.
    """
    return evidence_for(open_scene(path), pid=pid)


def evidence_for(scene: Scene, *, pid: int | None = None) -> Evidence:
    """The lazily parsed :class:`Evidence` of an already opened scene (no second walk)."""
    side = SideFiles(
        run_json=_artifact_path(scene, "run_json"),
        env_probe=_artifact_path(scene, "env_probe"),
        source_sites=_artifact_path(scene, "source_sites"),
    )
    artifacts = TableSpec(
        "artifacts",
        "every file of the scene with size, mtime and SHA-256 (G5), the model source last",
        (),
        lambda: _artifacts_frame(with_model_source(scene.artifacts, _model_source(evidence), scene.root)),
    )
    evidence = Evidence(
        scene.root, scene.plogs, scene.layout, side, pid=pid, extra_tables=[artifacts], gaps=scene.gaps
    )
    return evidence


def _artifact_path(scene: Scene, kind: str) -> Path | None:
    a = scene.first(kind)
    return a.path if a is not None else None


__all__ = [
    "MODEL_FILES",
    "NOT_A_SCENE",
    "Artifact",
    "NotASceneError",
    "Scene",
    "evidence_for",
    "first_file",
    "iso_seconds",
    "load_evidence",
    "model_source_paths",
    "open_scene",
    "with_model_source",
]
