"""Line-offset index of big text logs, for a viewer that must open GB plogs instantly (toolong's design).

Why (ecosystem.md §1.1, decision 2; issue 4 "Log"): a viewer cannot split a 1 GiB plog into Python
strings. It only needs where every line starts; the visible lines are then read with ``os.pread`` on
demand. :class:`LineIndex` finds the newlines in batches read with ``os.pread`` (numpy per batch, a
few hundred MB/s) and keeps the starts in one growable ``int64`` array (8 B/line, not a list of ints at
~40 B/line). :meth:`LineIndex.build` yields after every batch — the first one is small — so a caller
shows the first screen long before the whole file is indexed, and stops as soon as ``cancel()`` says so.

Line numbering is the project's (:func:`skdbg.parsers.textio.iter_lines`): lines end at ``\\n``, a
``\\r`` before it is not part of the text, a last line without ``\\n`` still counts. Readers on other
threads may use the index while it grows: the worker writes the new starts first and publishes the
count last, so any ``(count, array)`` pair a reader sees is consistent (one writer, appends only).

Why positional reads and never ``mmap``: a mapped file that is cut while mapped (a log truncated by
its writer or by rotation, a copy overwritten, a network file system losing the file) kills the
process with SIGBUS on the next touch of a page past the new end; Python cannot catch it, so the
viewer would vanish without a word. A read past the end just returns fewer bytes: the index stops
there, and lines that are gone read as empty. Every read goes through the one descriptor opened for
the index, so a file replaced under the same name is still read as the index saw it. Past
:func:`_keep_limit` indexes with a descriptor kept (a scene of a thousand plogs), an index builds
through a descriptor of its own and later reads open the name again, refusing another file there.

Everything else the viewer needs works on top of the index without loading a file:

* :func:`header_columns` — one byte-regex pass for the plog header of every line (time key, level,
  module, pid); lines without a header (continuations, tracebacks) inherit the previous header, the
  ones before the first header take the first one. Used for time merge and level/module/pid filters.
* :func:`merge_order` — several files in one time order (stable: ties keep file, then line order).
* :func:`fault_lines` — the lines holding a fault marker, found with the plog scanner's vectorised
  ``FAULT_MARKERS`` prefilter (or only the "next fault" stops: an SK handler block counts once).
* :func:`search_file` / :func:`search_order` — regex search forward/backward from a position, block by
  block (files) or row chunk by row chunk (merged/filtered orders).
* :func:`line_meta` — level/module/pid/time/function of one visible line via :func:`parse_plog_line`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.fsguard import READ_FLAGS, kind_name
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.textio import decode

IntArray = npt.NDArray[np.int64]
Cancel = Callable[[], bool]

FIRST_BATCH = 256 << 10  # small, so the first screen is ready after a few milliseconds
BATCH = 32 << 20
SEARCH_BLOCK = 8 << 20
ROW_CHUNK = 16384
#: :meth:`LineIndex.read_ranges` reads two ranges in one call when at most this many bytes lie
#: between them, and a call spans at most about :data:`_RANGE_RUN` bytes. Why 8 KiB: copying that
#: many bytes costs about what one more read call does, so a search never costs more than twice the
#: least it could, and never reads more than this much per range it needs
_RANGE_GAP = 8 << 10
_RANGE_RUN = 16 << 20
#: bytes a :class:`LineIndex` build reads at a time (see :meth:`LineIndex._newlines`)
_READ_PIECE = 1 << 20

#: bytes at the start of a file that must not change for it to be the file indexed (the name
#: reopened: :meth:`LineIndex._open_by_name`)
_HEAD = 4096
#: what a reader says of a file that is no longer the one indexed
_GONE = "the file that was indexed (it was replaced, removed or rewritten since; open it again)"

#: descriptors kept open by line indexes now (see :meth:`LineIndex._descriptor`)
_held = 0
_held_lock = threading.Lock()


@functools.cache
def _keep_limit() -> int:
    """How many line indexes may each keep their file open: a quarter of the process's descriptor
    limit, at most 512. Why a limit: a scene of a thousand plogs opens a thousand indexes, and a
    laptop may allow 256 descriptors (macOS's default); the indexes past it read by name."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 128
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 512
    return max(8, min(512, soft // 4))


def _count_held(delta: int) -> None:
    global _held
    with _held_lock:
        _held += delta


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """State after one indexing batch."""

    lines: int
    bytes_done: int
    bytes_total: int
    done: bool


class LineIndex:
    """Start offsets of every line of one file, built incrementally from positional reads.

    ``lines`` counts the lines indexed so far; ``done`` says the whole file is indexed. Only the
    thread running :meth:`build` writes; any thread may read (see the module docstring).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        try:
            st = p.stat()
        except FileNotFoundError:
            raise ParseError(str(p), "a log file (file does not exist)") from None
        except OSError as exc:
            raise ParseError(str(p), f"a readable log file ({exc.strerror})") from None
        if not stat.S_ISREG(st.st_mode):
            raise ParseError(str(p), f"a log file (a regular file, got {kind_name(st.st_mode)})")
        self.path = p
        self.size = st.st_size
        self._starts: IntArray = np.zeros(1024, dtype=np.int64)
        self._n = 0  # published count of valid entries of _starts
        self._scanned = 0  # bytes up to which newlines have been found
        self.done = self.size == 0
        self.cancelled = False
        self._fd: int | None = None
        self._ident = (st.st_dev, st.st_ino)  # the file indexed (see _open_by_name)
        self._head: bytes | None = None  # its first bytes as the build read them
        self._fd_lock = threading.Lock()
        self._build_lock = threading.Lock()
        self.max_line_bytes = 0

    # -- building ---------------------------------------------------------------------------------

    @property
    def lines(self) -> int:
        return self._n

    @property
    def bytes_done(self) -> int:
        return self._scanned

    def _publish(self, new: IntArray) -> None:
        n = self._n
        need = n + len(new)
        buf = self._starts
        if need > len(buf):
            grown = np.empty(max(need, 2 * len(buf)), dtype=np.int64)
            grown[:n] = buf[:n]
            buf = grown
        buf[n:need] = new
        self._starts = buf  # publish the array before the count (readers read the count first)
        self._n = need

    def build(
        self, cancel: Cancel = _never, *, first_batch: int = FIRST_BATCH, batch: int = BATCH
    ) -> Iterator[IndexProgress]:
        """Index the file; yield after every batch. Stops early (``cancelled``) when ``cancel()`` is true.

        Resumable: a later call continues where a cancelled one stopped. Several threads may call it
        (the viewer's indexer, and a search or filter that needs the whole file): one builds, the
        others wait for it — still honouring their own ``cancel`` — and then resume or find it done.
        """
        while not self._build_lock.acquire(timeout=0.05):
            if cancel():
                return
        try:
            yield from self._build_locked(cancel, first_batch, batch)
        finally:
            self._build_lock.release()

    def _build_locked(self, cancel: Cancel, first_batch: int, batch: int) -> Iterator[IndexProgress]:
        if self.done:
            yield self.progress()
            return
        self.cancelled = False
        # the index keeps its file open while few indexes do; past that, the build reads through a
        # descriptor of its own and later reads open the name again (checked to be the same file)
        private = None if self._kept() is not None else self._open_by_name()
        try:
            yield from self._build_with(private, cancel, first_batch, batch)
        finally:
            if private is not None:
                os.close(private)

    def _build_with(
        self, fd: int | None, cancel: Cancel, first_batch: int, batch: int
    ) -> Iterator[IndexProgress]:
        """:meth:`_build_locked`'s batches, read through the build's own ``fd`` (None: the kept one)."""
        size = self.size = os.fstat(fd if fd is not None else self._descriptor()).st_size
        if self._head is None:
            self._head = self.read_at(0, _HEAD) if fd is None else _read_all(fd, 0, min(size, _HEAD))
        step = first_batch
        buf = bytearray(min(_READ_PIECE, max(size, 1)))  # one buffer for every read of the build
        while self._scanned < size:
            if cancel():
                self.cancelled = True
                return
            lo = self._scanned
            want = min(size, lo + step) - lo
            nl, got = self._newlines(fd, buf, lo, want)
            hi = lo + got
            if hi < lo + want:  # cut while indexed: the file ends where its bytes end
                size = self.size = hi
            starts = nl + (lo + 1)
            if self._n == 0:
                starts = np.concatenate((np.zeros(1, dtype=np.int64), starts))
            if hi == size and len(starts) and starts[-1] == size:
                starts = starts[:-1]  # a final newline does not open a new line
            if len(starts):
                prev = self._starts[self._n - 1] if self._n else 0
                widths = np.diff(np.concatenate((np.array([prev], dtype=np.int64), starts)))
                self.max_line_bytes = max(self.max_line_bytes, int(widths.max()))
            self._publish(starts)
            self._scanned = hi
            if hi == size:
                last = self._starts[self._n - 1] if self._n else 0
                self.max_line_bytes = max(self.max_line_bytes, size - int(last))
                self.done = True
            yield self.progress()
            step = batch
        if not self.done:  # cut below what an earlier, cancelled build had indexed
            self.done = True
            yield self.progress()

    def _newlines(self, fd: int | None, buf: bytearray, lo: int, want: int) -> tuple[IntArray, int]:
        """Offsets (from ``lo``) of the newlines in the ``want`` bytes at ``lo``, read
        :data:`_READ_PIECE` bytes at a time into ``buf``, and how many bytes there were (fewer: the
        file ends there). Why pieces: a piece read is still in the CPU cache when it is searched."""
        found: list[IntArray] = []
        got = 0
        while got < want:
            ask = min(len(buf), want - got)
            with self.read_into(buf, lo + got, ask, fd) as data:
                n = len(data)
                found.append(np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + got)
            got += n
            if n < ask:  # the end of the file (read_into reads on after a short read)
                break
        nl = np.concatenate(found).astype(np.int64) if found else np.empty(0, dtype=np.int64)
        return nl, got

    def build_all(self, cancel: Cancel = _never) -> LineIndex:
        """Index the whole file (headless callers, tests)."""
        for _ in self.build(cancel):
            pass
        return self

    def progress(self) -> IndexProgress:
        return IndexProgress(self._n, self._scanned, self.size, self.done)

    def starts(self) -> IntArray:
        """The start offsets indexed so far (a read-only view; safe while building)."""
        n = self._n
        view = self._starts[:n]
        view.flags.writeable = False
        return view

    # -- reading ----------------------------------------------------------------------------------

    def span(self, i: int) -> tuple[int, int]:
        """Byte range of 0-based line ``i`` without its line ending."""
        done = self.done  # read before the count: the builder sets the count first, then done
        n = self._n
        if not 0 <= i < n:
            raise IndexError(f"line {i + 1} of {self.path} is not indexed ({n} lines so far)")
        buf = self._starts
        start = int(buf[i])
        if i + 1 < n:
            end = int(buf[i + 1]) - 1
        elif done:
            end = max(start, self.size)  # (a start past the end: the file was cut below an earlier build)
            if end > start and self._read(end - 1, 1) == b"\n":
                end -= 1
        else:
            end = self._scanned_line_end(start)
        if end > start and self._read(end - 1, 1) == b"\r":
            end -= 1
        return start, end

    def _scanned_line_end(self, start: int) -> int:
        """End of the last indexed line while the next start is not known yet (reads ahead)."""
        pos = start
        while True:
            chunk = self._read(pos, 64 << 10)
            cut = chunk.find(b"\n")
            if cut >= 0:
                return pos + cut
            if len(chunk) < 64 << 10:
                return pos + len(chunk)
            pos += len(chunk)

    def raw_line(self, i: int, max_bytes: int | None = None) -> bytes:
        """Bytes of 0-based line ``i`` without its ending, cut to ``max_bytes`` when given."""
        start, end = self.span(i)
        length = end - start if max_bytes is None else min(end - start, max_bytes)
        return self._read(start, length)

    def line(self, i: int) -> str:
        """Text of 0-based line ``i`` (UTF-8 with replacement characters, like every parser)."""
        return decode(self.raw_line(i))

    def _descriptor(self) -> int:
        """The index's one read-only descriptor, opened on first use and kept (see the module
        docstring); the file it opens must be the one indexed (:meth:`_open_by_name`)."""
        fd = self._fd
        if fd is None:
            with self._fd_lock:
                if self._fd is None:
                    self._fd = self._open_by_name()
                    _count_held(1)
                fd = self._fd
        return fd

    def _open_by_name(self) -> int:
        """:meth:`_open_checked` of :attr:`path`."""
        return self._open_checked(self.path)

    def _open_checked(self, name: str | Path) -> int:
        """A new descriptor opened at ``name`` (:attr:`path`, or Linux's ``/proc/self/fd/N`` of the
        kept descriptor), which must still be the file indexed: a
        regular file, the device and inode :meth:`__init__` saw, and (once built) the same first bytes.
        Raises :class:`ParseError` otherwise (a log replaced, removed or rewritten since it was
        indexed: its lines would be another file's). Why the bytes: a file system hands a freed inode
        number to the next file made, so a scene deleted and copied again has the old numbers."""
        try:
            fd = os.open(name, READ_FLAGS | getattr(os, "O_BINARY", 0))  # a FIFO put there must not block
        except FileNotFoundError:
            gone = (
                "a log file (file does not exist)" if self._head is None else _GONE
            )  # before its build: never read
            raise ParseError(str(self.path), gone) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != self._ident:
                raise ParseError(str(self.path), _GONE)
            if self._head is not None and _read_all(fd, 0, len(self._head)) != self._head:
                # a new file that got the freed inode number (a scene deleted and copied again)
                raise ParseError(str(self.path), _GONE)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _kept(self) -> int | None:
        """The kept descriptor (opened now if there is room for one more: :func:`_keep_limit`), or
        None: then each read opens the name, checked, and closes it."""
        if self._fd is not None or _held < _keep_limit():
            return self._descriptor()
        return None

    def _read(self, offset: int, length: int) -> bytes:
        fd = self._kept()
        if fd is None:
            once = self._open_by_name()
            try:
                return _read_all(once, offset, length)
            finally:
                os.close(once)
        if hasattr(os, "pread"):  # positional: threads share the descriptor without a lock
            return _read_all(fd, offset, length)
        with self._fd_lock:  # pragma: no cover - Windows: a seek, so one reader at a time
            return _read_all(fd, offset, length)

    def read_at(self, offset: int, length: int) -> bytes:
        """The ``length`` bytes at ``offset``; fewer only where the file ends (it may have been cut
        since it was indexed: a read past its end is empty, never a crash)."""
        return self._read(offset, length) if length > 0 else b""

    def read_into(self, buf: bytearray, offset: int, length: int, fd: int | None = None) -> memoryview:
        """:meth:`read_at` into ``buf`` (reused: no fresh pages each batch), through ``fd`` if given (a
        descriptor of the caller's own, read positionally); a view of the bytes read."""
        view = memoryview(buf)[:length]
        preadv = getattr(os, "preadv", None)
        if fd is None:
            fd = self._kept()
            if fd is None or preadv is None:  # opened for each read, or Windows (reads under the lock)
                data = self.read_at(offset, length)
                view[: len(data)] = data
                return view[: len(data)]
        elif preadv is None:  # pragma: no cover - Windows, macOS before 11: the caller's own descriptor
            data = _read_all(fd, offset, length)
            view[: len(data)] = data
            return view[: len(data)]
        got = 0
        while got < length:
            n = preadv(fd, [view[got:]], offset + got)
            if n == 0:
                break
            got += n
        return view[:got]

    def read_ranges(self, starts: IntArray | Sequence[int], ends: IntArray | Sequence[int]) -> list[bytes]:
        """The bytes of each range ``[starts[k], ends[k])``, in the order given. Ranges at most
        :data:`_RANGE_GAP` bytes apart are read in one call of at most about :data:`_RANGE_RUN`
        bytes: one read per run of nearby lines, not one per line, and never the whole file."""
        out = [b""] * len(starts)
        if not len(starts):
            return out
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        order = np.argsort(starts, kind="stable")
        lo_sorted, hi_sorted = starts[order], ends[order]
        reach = np.maximum.accumulate(hi_sorted)  # the furthest end of the ranges so far
        run = np.concatenate(([True], lo_sorted[1:] - reach[:-1] > _RANGE_GAP))
        first_of_run = np.flatnonzero(run)
        run_lo = lo_sorted[first_of_run][np.cumsum(run) - 1]
        # a long run is read in pieces: a range goes with the ones starting in the same stretch
        piece = (lo_sorted - run_lo) // _RANGE_RUN
        cut = run.copy()
        cut[1:] |= piece[1:] != piece[:-1]
        firsts = np.flatnonzero(cut).tolist()
        lasts = [*firsts[1:], len(order)]
        los, his = lo_sorted.tolist(), hi_sorted.tolist()
        got: list[bytes] = []  # in start order
        for a, b in zip(firsts, lasts, strict=True):
            base = los[a]
            data = self.read_at(base, max(0, max(his[a:b]) - base))
            got += [data[x - base : y - base] for x, y in zip(los[a:b], his[a:b], strict=True)]
        if bool((order[1:] > order[:-1]).all()):  # given in start order already (a file's rows mostly are)
            return got
        for slot, data in zip(order.tolist(), got, strict=True):
            out[slot] = data
        return out

    def reopen(self) -> tuple[int, os.stat_result]:
        """A descriptor of its own (own file offset, for a sequential reader such as the fault scan)
        on the file that was indexed, and its ``fstat``; the caller closes it.

        Raises :class:`ParseError` when that file can no longer be opened: where the system offers no
        way to reopen a descriptor (``/proc/self/fd`` is Linux's), the name is opened and must still
        be the indexed file (a log replaced under its name is not)."""
        kept = self._fd
        fd = None
        if kept is not None:  # Linux reopens the open file itself, even if renamed or removed
            with contextlib.suppress(OSError, ParseError):
                fd = self._open_checked(f"/proc/self/fd/{kept}")
        if fd is None:
            fd = self._open_by_name()
        return fd, os.fstat(fd)

    def close(self) -> None:
        """Close the descriptor (nothing in the viewer does: an index lives as long as its view). A
        read after this opens the file by its name again, and fails if that is another file now."""
        with self._fd_lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
                _count_held(-1)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)
            _count_held(-1)


def _read_all(fd: int, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` of ``fd`` (fewer only at its end): ``os.pread`` calls, reading on
    after a short one (a signal, a network file system), or (Windows) a seek and reads, for which the
    caller holds the descriptor alone."""
    parts = []
    if not hasattr(os, "pread"):  # pragma: no cover - Windows: the descriptor is the caller's alone
        os.lseek(fd, offset, os.SEEK_SET)
    while length > 0:
        got = os.pread(fd, length, offset) if hasattr(os, "pread") else os.read(fd, length)
        if not got:
            break
        parts.append(got)
        offset += len(got)
        length -= len(got)
    return b"".join(parts)


# -- lazily parsed metadata of visible lines -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineMeta:
    """The plog header fields a viewer colours and filters by; all None for a non-plog line."""

    level: str | None
    module: str | None
    pid: int | None
    ts: datetime | None
    func: str | None


NO_META = LineMeta(None, None, None, None, None)


def line_meta(text: str, file: str = "", line: int | None = None) -> LineMeta:
    """Header fields of one line via the plog grammar (:func:`parse_plog_line`)."""
    rec = parse_plog_line(text, Source(file, line))
    if rec is None:
        return NO_META
    return LineMeta(rec.level, rec.module, rec.pid, rec.ts, rec.func)


# -- whole-file columns: time keys and header fields ------------------------------------------------

# The same header shape as plog_line.LINE_RE, on bytes and without the tail (only the fields needed).
HEADER_RE = re.compile(
    rb"^\[\s*([A-Z]+)\s*\]\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(\d+)\s*,[^)\n]*\)\s*:\s*"
    rb"(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3})",
    re.M,
)


def ts_key(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int) -> int:
    """Order-preserving int64 key of a plog time stamp (not an epoch; calendar fields packed)."""
    return (((((y * 13 + mo) * 32 + d) * 24 + h) * 60 + mi) * 60 + s) * 1_000_000 + us


def ts_keys(stamps: bytes) -> IntArray:
    """:func:`ts_key` of many concatenated 27-byte stamps ``YYYY-MM-DD-HH:MM:SS.mmm.uuu`` at once."""
    a = np.frombuffer(stamps, dtype=np.uint8).reshape(-1, 27).astype(np.int64) - ord("0")

    def num(*cols: int) -> IntArray:
        out = np.zeros(len(a), dtype=np.int64)
        for c in cols:
            out = out * 10 + a[:, c]
        return out

    y, mo, d, h, mi, s = num(0, 1, 2, 3), num(5, 6), num(8, 9), num(11, 12), num(14, 15), num(17, 18)
    us = num(20, 21, 22) * 1000 + num(24, 25, 26)
    keys: IntArray = (((((y * 13 + mo) * 32 + d) * 24 + h) * 60 + mi) * 60 + s) * 1_000_000 + us  # = ts_key
    return keys


@dataclass(slots=True)
class HeaderColumns:
    """Per-line header fields of one fully indexed file (continuation lines inherit; see module doc).

    ``has_header`` is False for lines that carry no plog header themselves; ``level``/``module`` are
    codes into ``levels``/``modules``; ``pid`` is -1 and ``ts`` is -1 when no line of the file has one.
    """

    ts: IntArray
    level: npt.NDArray[np.int16]
    module: npt.NDArray[np.int32]
    pid: IntArray
    has_header: npt.NDArray[np.bool_]
    levels: list[str]
    modules: list[str]


def header_columns(index: LineIndex, cancel: Cancel = _never) -> HeaderColumns | None:
    """One streaming pass over an indexed file; None when cancelled."""
    if not index.done:
        index.build_all(cancel)
        if not index.done:
            return None
    n = index.lines
    starts = index.starts()
    ts = np.full(n, -1, dtype=np.int64)
    level = np.full(n, -1, dtype=np.int16)
    module = np.full(n, -1, dtype=np.int32)
    pid = np.full(n, -1, dtype=np.int64)
    has = np.zeros(n, dtype=np.bool_)
    levels: dict[bytes, int] = {}
    modules: dict[bytes, int] = {}
    if n == 0:
        return HeaderColumns(ts, level, module, pid, has, [], [])
    size = index.size
    i = 0
    while i < n:
        if cancel():
            return None
        lo = int(starts[i])
        # a block ends after the last newline within SEARCH_BLOCK bytes (a longer line: after it)
        j = n
        if lo + SEARCH_BLOCK < size:
            last = int(np.searchsorted(starts, lo + SEARCH_BLOCK, side="right")) - 1
            j = last if last > i else i + 1
        hi = int(starts[j]) if j < n else size
        block = index.read_at(lo, hi - lo)
        # Per line only the regex step and two appends; everything else is vectorised per block.
        pos: list[int] = []
        groups: list[tuple[bytes, ...]] = []
        add_pos, add_groups = pos.append, groups.append
        for m in HEADER_RE.finditer(block):
            add_pos(m.start())
            add_groups(m.groups())
        if pos:
            lv, md, pd, st = zip(*groups, strict=True)
            for name in set(lv):
                levels.setdefault(name, len(levels))
            for name in set(md):
                modules.setdefault(name, len(modules))
            at = np.searchsorted(starts, np.array(pos, dtype=np.int64) + lo)
            level[at] = [levels[x] for x in lv]
            module[at] = [modules[x] for x in md]
            pid[at] = np.array(pd).astype(np.int64)
            ts[at] = ts_keys(b"".join(st))
            has[at] = True
        i = j
    if has.any():
        src = np.where(has, np.arange(n), -1)
        np.maximum.accumulate(src, out=src)
        first = int(np.flatnonzero(has)[0])
        src[src < 0] = first  # lines before the first header take the first header's fields
        ts, level, module, pid = ts[src], level[src], module[src], pid[src]
    return HeaderColumns(
        ts,
        level,
        module,
        pid,
        has,
        [k.decode() for k in levels],
        [k.decode() for k in modules],
    )


def merge_order(columns: Sequence[HeaderColumns]) -> IntArray:
    """Global line ids (file k's line i is ``sum(len of files < k) + i``) in time order.

    Stable: equal stamps keep file order, then line order; files without any stamp keep their
    place by sorting as the earliest time.
    """
    if not columns:
        return np.empty(0, dtype=np.int64)
    keys = np.concatenate([c.ts for c in columns])
    return np.argsort(keys, kind="stable").astype(np.int64)


# -- fault lines ------------------------------------------------------------------------------------


SK_MARKER = b"[SK]["


def fault_lines(index: LineIndex, cancel: Cancel = _never, *, stops: bool = False) -> IntArray | None:
    """0-based numbers of the lines carrying a ``FAULT_MARKERS`` marker; None when cancelled.

    Uses the plog scanner's vectorised prefilter (one numpy pass per 4 MiB block), so the result
    agrees with ``skdbg.parsers.plog.scan_plog`` line for line.

    ``stops=True`` gives the lines a "next fault" key should stop at: ``[SK][`` is a marker because
    the scan must hand every SK-logger line to the handler parser, but an SK exception-handler block
    is hundreds of such lines. So a line whose only marker is ``[SK][`` is a stop only when it starts
    a run of them (the block's first line); every other marker line is a stop.
    """
    # Imported here: skdbg.parsers.plog pulls in pandas (~0.25 s), which a viewer's first paint must
    # not wait for; the fault scan runs later, in a worker.
    from skdbg.parsers.plog import FAULT_MARKERS, scan_marker_lines

    others = tuple(m for m in FAULT_MARKERS if m != SK_MARKER)
    out: list[int] = []
    prev_sk_only = -2  # line number of the previous line whose only marker was [SK][
    # the file the index read (not whatever now has its name), up to the lines indexed (not those
    # written since)
    lines = scan_marker_lines(index.path, FAULT_MARKERS, opened=index.reopen())
    for no, raw, _complete in lines:
        if cancel():
            lines.close()
            return None
        if index.done and no > index.lines:
            lines.close()
            break
        if stops and SK_MARKER in raw and not any(m in raw for m in others):
            run_goes_on = prev_sk_only == no - 1
            prev_sk_only = no
            if run_goes_on:
                continue
        out.append(no - 1)
    return np.array(out, dtype=np.int64)


# -- search -------------------------------------------------------------------------------------------


def compile_pattern(pattern: str, *, regex: bool = True, ignore_case: bool = False) -> re.Pattern[bytes]:
    """A bytes pattern for :func:`search_file` (``re.error`` for a bad regex is the caller's message)."""
    raw = pattern.encode("utf-8")
    flags = re.M | (re.I if ignore_case else 0)
    return re.compile(raw if regex else re.escape(raw), flags)


def search_file(
    index: LineIndex,
    pattern: re.Pattern[bytes],
    start: int,
    *,
    backwards: bool = False,
    cancel: Cancel = _never,
) -> int | None:
    """First 0-based line after ``start`` (before it when ``backwards``) matching ``pattern``.

    Reads the file in blocks cut at line boundaries; lines must already be indexed up to where the
    search goes (the caller indexes first). A match never spans lines.
    """
    n = index.lines
    if n == 0:
        return None
    starts = index.starts()
    size = index.size  # the end of the last indexed line's block
    if not backwards:
        i = start + 1
        while i < n:
            if cancel():
                return None
            lo = int(starts[i])
            j = int(np.searchsorted(starts, lo + SEARCH_BLOCK, side="right"))
            j = max(j, i + 1)
            hi = int(starts[j]) if j < n else size
            hit = next(_line_hits(index.read_at(lo, max(0, hi - lo)), pattern, starts, lo, i, j), None)
            if hit is not None:
                return hit
            i = j
        return None
    j = min(start, n)
    while j > 0:
        if cancel():
            return None
        hi = int(starts[j]) if j < n else size
        i = int(np.searchsorted(starts, hi - SEARCH_BLOCK, side="left"))
        i = min(i, j - 1)
        lo = int(starts[i])
        hits = list(_line_hits(index.read_at(lo, max(0, hi - lo)), pattern, starts, lo, i, j))
        if hits:
            return hits[-1]
        j = i
    return None


def _strip_eol(text: bytes) -> bytes:
    if text.endswith(b"\n"):
        text = text[:-1]
    if text.endswith(b"\r"):
        text = text[:-1]
    return text


def _line_hits(
    block: bytes, pattern: re.Pattern[bytes], starts: IntArray, lo: int, i: int, j: int
) -> Iterator[int]:
    """Lines ``i..j-1`` (held in ``block``, which starts at file offset ``lo``) that match, in order.

    The block is searched as a whole; each candidate is confirmed on its line alone so that a match
    never spans lines and ``$`` sees the line without its ending.
    """
    pos = 0
    last = i - 1
    while pos <= len(block):
        m = pattern.search(block, pos)
        if m is None:
            return
        k = max(i, int(np.searchsorted(starts, lo + m.start(), side="right")) - 1)
        if k >= j:
            return
        a = int(starts[k]) - lo
        b = int(starts[k + 1]) - lo if k + 1 < j else len(block)
        if k > last and pattern.search(_strip_eol(block[a:b])) is not None:
            last = k
            yield k
        pos = b if b > pos else pos + 1


def search_order(
    indexes: Sequence[LineIndex],
    order: IntArray,
    pattern: re.Pattern[bytes],
    start: int,
    *,
    backwards: bool = False,
    cancel: Cancel = _never,
) -> int | None:
    """First row of a merged/filtered view after (before, ``backwards``) row ``start`` whose line matches.

    ``order`` holds global line ids over fully indexed ``indexes`` (file k's line i is the number of
    lines in files before k, plus i — the ids :func:`merge_order` returns). Rows are taken
    :data:`ROW_CHUNK` at a time (see :func:`_rows_text`) and searched with one regex call per chunk,
    each candidate confirmed on its line alone (as in :func:`search_file`).
    """
    rows = len(order)
    if not indexes or rows == 0:
        return None
    bases = np.concatenate(([0], np.cumsum([ix.lines for ix in indexes])[:-1])).astype(np.int64)
    line_starts: list[IntArray] = []
    line_ends: list[IntArray] = []
    for ix in indexes:
        if not ix.done:
            raise ValueError(f"{ix.path} is not fully indexed; a row order needs complete indexes")
        starts = ix.starts()
        end = 0
        if ix.size:
            end = ix.size - (1 if ix.read_at(ix.size - 1, 1) == b"\n" else 0)
        line_starts.append(starts)
        line_ends.append(np.append(starts[1:] - 1, np.int64(end)).astype(np.int64))
    if backwards:
        hi = min(start, rows)
        lo = max(0, hi - ROW_CHUNK)
    else:
        lo = start + 1
        hi = lo + ROW_CHUNK
    while lo < hi and 0 <= lo < rows:
        if cancel():
            return None
        hi = min(hi, rows)
        buf, offs = _rows_text(indexes, bases, line_starts, line_ends, order[lo:hi])
        hits = _line_hits(buf, pattern, offs, 0, 0, len(offs))
        if backwards:
            found = list(hits)
            if found:
                return lo + found[-1]
            lo, hi = max(0, lo - ROW_CHUNK), lo
        else:
            first = next(hits, None)
            if first is not None:
                return lo + first
            lo, hi = hi, hi + ROW_CHUNK
    return None


def _rows_text(
    indexes: Sequence[LineIndex],
    bases: IntArray,
    line_starts: list[IntArray],
    line_ends: list[IntArray],
    rows: IntArray,
) -> tuple[bytes, IntArray]:
    """The lines of ``rows`` (global line ids, see :func:`search_order`) joined by newlines, and
    where each starts in the result.

    Why runs: rows that are consecutive lines of one file (a whole merged stretch, a filter keeping
    neighbours) are the file's own bytes from the first one's start to the last one's end, its
    newlines included, so each run is one slice and its rows' places follow from the index, with no
    per-line slicing or joining. Runs are read with :meth:`LineIndex.read_ranges`. Bytes gone since
    indexing (the file was cut) make their rows empty."""
    k = np.searchsorted(bases, rows, side="right") - 1
    i = rows - bases[k]
    row_start = np.empty(len(rows), dtype=np.int64)
    for kk in np.unique(k).tolist():
        sel = k == kk
        row_start[sel] = line_starts[kk][i[sel]]
    brk = np.flatnonzero((k[1:] != k[:-1]) | (i[1:] != i[:-1] + 1)) + 1
    first = np.concatenate((np.zeros(1, dtype=np.int64), brk))
    last = np.concatenate((brk, np.array([len(rows)], dtype=np.int64))) - 1
    run_file, run_lo = k[first], row_start[first]
    run_hi = np.empty(len(first), dtype=np.int64)
    runs: list[bytes] = [b""] * len(first)
    for kk in np.unique(run_file).tolist():
        sel = np.flatnonzero(run_file == kk)
        run_hi[sel] = line_ends[kk][i[last[sel]]]
        for q, data in zip(sel.tolist(), indexes[kk].read_ranges(run_lo[sel], run_hi[sel]), strict=True):
            runs[q] = data
    got = np.array([len(r) for r in runs], dtype=np.int64)
    run_at = np.zeros(len(runs), dtype=np.int64)
    np.cumsum(got[:-1] + 1, out=run_at[1:])
    run_of = np.repeat(np.arange(len(runs)), last - first + 1)
    offs: IntArray = run_at[run_of] + np.minimum(row_start - run_lo[run_of], got[run_of])
    return b"\n".join(runs), offs
