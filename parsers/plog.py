"""CANN plog files: naming, discovery, per-pid grouping, rotated-file merge, full read and fast fault scan.

Why (artifacts.md §1.1, §1.8): one process (one rank) writes its own ``plog-<pid>_<stamp>.log`` files and
rotates them by size, so an incident may span two files, and a job directory holds the files of many
ranks. :func:`read_plog` reads every record of one pid's files in rotation order; :func:`scan_plog` is
the fast path for multi-GiB logs that only needs the few lines carrying fault or SK markers.

The scan keeps the promise "every line that contains a marker, with its 1-based line number, and
nothing else", so it must agree with ``grep -F -c`` on the same markers (bench/plog_scan.py checks
this). A plain ``bytes.find`` pass per marker costs ~20 passes over the file (≈0.25× grep's speed on
this project's benchmark), so the prefilter instead makes one vectorised pass per 4 MiB block:

1. every marker contributes one 4-byte *anchor* taken where its leading bigram is rarest in the block
   the anchors were chosen on (an adaptive choice: a common bigram would make many false candidates);
   a block where the anchors turn out common (lines full of "failed", "Dump", "The": many *false*
   candidates) has them re-chosen on its own bytes for the blocks after it;
2. a 64 K boolean table holding each anchor's first two bigrams is indexed with the block viewed as
   16-bit words at even offsets (numpy, :data:`_GATHER` words a call, :data:`_GATHER_UNCONTENDED` in
   the forked child's scan thread): an anchor at an even offset
   shows its first bigram there, one at an odd offset its second, so one lookup per two bytes gives
   every candidate position;
3. candidates are confirmed on the full 4-byte anchor, then on the whole marker in place (at the
   anchor's offset in its marker, never a scan of the line against every marker: one ``startswith``
   per candidate when they are few, a numpy comparison per marker byte over all of them when they
   are many, as in an SK handler block), and mapped to their lines via the newline positions; a run
   of consecutive marker lines is copied out in one slice.

Every marker occurrence contains its anchor, so no marker line can be missed; false candidates only
cost a cheap check. Only confirmed lines are decoded and tokenised (no regex before that). The read
buffer and the anchor tables are kept per thread and reused from file to file; a line longer than
``MAX_LINE`` is cut like :func:`skdbg.parsers.textio.iter_lines` cuts it (bounded memory, a gap).
:func:`scan_plog_files` scans many files in turn and searches the small ones several to a block
(a thousand rotated plogs cost a few dozen vectorised passes, not a thousand). A hasher given to the
scan takes each block in a second thread while the block is searched (:mod:`skdbg.parsers.hashbehind`).
"""

from __future__ import annotations

import io
import os
import threading
from bisect import bisect_left
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from itertools import accumulate, repeat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from skdbg import regexcode
from skdbg.parsers.bulk import build_source
from skdbg.parsers.common import (
    Gap,
    ParseError,
    ReadFailure,
    Source,
    Unrecognized,
    may_hold_oversized,
    oversized_number,
)
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.fsguard import open_regular_fd, read_error
from skdbg.parsers.hashbehind import Hasher, HashLane, Sha256Done
from skdbg.parsers.plog_line import (
    PlogLine,
    PlogRow,
    fast_plog_block,
    fast_plog_lines,
    fast_plog_rows,
    parse_plog_line,
)
from skdbg.parsers.readahead import ReadAhead
from skdbg.parsers.runtime_faults import (
    ErrorManagerLine,
    RuntimeRecord,
    classify_runtime,
    parse_error_manager_line,
)
from skdbg.parsers.textio import (
    BINARY_PROBE,
    MAX_LINE,
    TextLine,
    check_text_head,
    iter_lines,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

PathLike = str | os.PathLike[str]

WHAT = "a CANN plog"

# §1.1: plog-<pid>_<YYYYMMDDhhmmssmmm>.log (host) and device-<pid>_<stamp>.log (device side).
PLOG_NAME_RE = regexcode.compile(r"^(?P<kind>plog|device)-(?P<pid>\d{1,19})_(?P<stamp>\d{1,30})\.log$")

# Lines the fast scan must return (triage.md §3.1.1 list plus every §1.5 runtime wording and the
# error-manager text of §1.5 item 9). `ynchronize failed` covers `Stream Synchronize failed` and the
# lower-case `Stream synchronize failed` seen in real logs. Every marker is ≥ 4 bytes (anchor width).
FAULT_MARKERS: tuple[bytes, ...] = (
    b"[SK][",
    b"kernel execute failed",
    b"kernel execution failed",
    b"fault kernel_name",
    b"there is an",
    b"An error occurs on the device",
    b"The extend info",
    b"Kernel task happen error",
    b"An error occurred in the kernel task",
    b"fftsplus task execute failed",
    b"ynchronize failed",
    b"ErrCode=",
    b"origin_op_name",
    b"[Dump][Exception]",
    b"Begin to dump callback exception",
    b"dump exception to file",
    b"report error module_type",
    b"EZ9999",
    b"EE9999",
    b"EE8888",
    b"TraceBack (most recent call last)",
    b"[FUNC:",
)

#: bytes a large plog is read and searched in, a block at a time. Why 4 MiB: the forked child's scan
#: thread searches each block while its hash lane hashes the same bytes, and both then find more of the
#: block in the processor's caches. Measured on the 232 MB bench scene (first runs, warm, the three
#: sizes alternated 16 times): 8 MiB blocks gave 0.615 s median and 1.056 s of CPU, 4 MiB 0.597 s and
#: 1.018 s, 2 MiB 0.595 s and 1.016 s. 2 MiB cost a scan in a thread beside the main thread's parsing
#: (``SKDBG_NO_FORK=1``) ~45 ms more (twice the numpy calls, each giving up the GIL); 4 MiB cost it
#: nothing measurable, and packs the same small files (up to ``MAX_LINE``, a quarter of a block) as
#: 8 MiB did. The block size is also where a line over ``MAX_LINE`` changes treatment (see
#: :func:`scan_marker_lines`): one that fits in a block is searched whole and cut only when it holds a
#: marker, a longer one is searched in its first ``MAX_LINE`` bytes and always cut; with 8 MiB blocks
#: the lines of 4–8 MiB were of the first kind
CHUNK = 4 << 20
#: bytes of a block the anchor choice looks at. Why 256 KiB: the choice is made once per scanning thread,
#: on its first block, and so on the forked child's scan, the analysis's last stretch on a large plog.
#: A 1 MiB sample cost that thread ~24 ms there (the tables' passes over fresh memory), 256 KiB ~10 ms
#: (~9 ms less of the child's CPU on the bench scene, first runs alternated with 1 MiB); the anchors
#: chose the same candidates on the bench plog (18,305 over the file) and on the noise plogs of
#: bench/plog_scan.py (170 at each of 0, 1 and 10 % common words). A block with more false candidates
#: than the sample foresaw has the anchors re-chosen, on its own first ``_SAMPLE`` bytes, for the blocks
#: after it (:func:`_reanchor_if_defeated`)
_SAMPLE = 1 << 18
_ANCHOR = 4

#: marker lines turned into records together (:func:`_batch_records`): enough to make the batch's
#: checks cheap per line (~10 KB of typical lines), few enough to bound memory whatever the lines. A
#: batch ends at this many lines or once its lines reach :data:`_BATCH_BYTES`; the batch's copies
#: (joined, ``\r``-stripped, decoded, split) then hold a few times that, or one ``MAX_LINE`` line's worth
_BATCH_LINES = 64
_BATCH_BYTES = 256 << 10

#: blocks up to this size are searched with ``bytes.find`` (no numpy import for a small scene's plogs)
_SMALL_BLOCK = 1 << 20
#: bytes a thread searches with ``bytes.find`` before its later small blocks above :data:`_TINY_BLOCK`
#: go the vectorised way. Why: ``bytes.find`` passes one marker at a time (~10 ms a MiB for the 22
#: markers, against ~1 ms for the prefilter), so it only pays while the numpy import (~60 ms) is not
#: amortised; a thousand-rank scene's thousand plogs of a few hundred KB each took 2 s that way
_SMALL_BUDGET = 4 << 20
#: below this a block is searched with ``bytes.find`` whatever was searched before: a vectorised pass's
#: fixed cost (a few dozen numpy calls) is more than ``bytes.find`` takes on it
_TINY_BLOCK = 32 << 10
#: a file scanned alone is hashed through a lane of its own above this size (a file of a few MiB still
#: holds milliseconds of SHA-256 to overlap); at or below it, the lane's thread would cost more. Packed
#: small files go through the scan's lane once this many bytes were packed (before: hashed inline)
_LANE_FILE = 1 << 20
#: bytes a read of a thread that hashes in step (:func:`hash_in_step`) asks for, each hashed as soon as
#: it is read: well inside a core's own cache (2 MiB on the bench machine), where the whole 4 MiB block is
#: not. 64 KiB and 256 KiB pieces measured the same (bench/README, thirty-third round)
_STEP = 256 << 10

if TYPE_CHECKING:
    IntArray = npt.NDArray[np.int64]
    ByteArray = npt.NDArray[np.uint8]


#: the plog table: one row per record, tags as printed (``[A][B]``)
PLOG_LINE_COLS = (
    *SRC_COLS,
    Col("level"),
    Col("module"),
    Col("pid"),
    Col("proc"),
    Col("ts"),
    Col("src_file"),
    Col("src_line"),
    Col("tid"),
    Col("func"),
    Col("tags", lambda r: "".join(f"[{t}]" for t in r.tags)),
    Col("is_sk"),
    Col("complete"),
    Col("text"),
)


@dataclass(frozen=True, slots=True)
class PlogFile:
    """A file whose name follows the plog naming scheme (§1.1)."""

    src: Source
    kind: str  # "plog" (host) | "device"
    pid: int
    stamp: datetime | None  # None when the stamp is not a valid YYYYMMDDhhmmssmmm
    stamp_text: str

    @property
    def path(self) -> str:
        return self.src.file


def _parse_stamp(text: str) -> datetime | None:
    if len(text) != 17:
        return None
    try:
        return datetime(
            int(text[0:4]),
            int(text[4:6]),
            int(text[6:8]),
            int(text[8:10]),
            int(text[10:12]),
            int(text[12:14]),
            int(text[14:17]) * 1000,
        )
    except ValueError:
        return None


def parse_plog_name(path: PathLike) -> PlogFile | None:
    """``plog-<pid>_<stamp>.log`` / ``device-<pid>_<stamp>.log`` → :class:`PlogFile`; None for other names."""
    p = Path(path)
    return plog_file_named(str(p), p.name)


def plog_file_named(path: str, name: str) -> PlogFile | None:
    """:func:`parse_plog_name` of the path whose text is ``path`` and whose last component is ``name``
    (``str(p)`` and ``p.name`` of a :class:`~pathlib.Path` ``p``).

    Why: a scene walk has both already; parsing each of a thousand rotated plogs' paths again with
    ``pathlib`` was a few microseconds a file on the main thread."""
    m = PLOG_NAME_RE.match(name)
    if m is None:
        return None
    kind, pid, stamp = m.group("kind", "pid", "stamp")
    return PlogFile(src=Source(path), kind=kind, pid=int(pid), stamp=_parse_stamp(stamp), stamp_text=stamp)


def find_plog_files(root: PathLike, *, kind: str | None = None) -> list[PlogFile]:
    """Every plog-named regular file anywhere under ``root`` (logs are copied in arbitrary layouts).

    ``kind`` restricts to ``"plog"`` or ``"device"``. A file ``root`` is returned alone if it is
    plog-named. A missing ``root`` is a :class:`ParseError`.
    """
    r = Path(root)
    if not r.exists():
        raise ParseError(str(r), "a directory holding plog files (path does not exist)")
    paths: list[Path] = []
    if r.is_file():
        paths = [r]
    else:
        for dirpath, dirnames, filenames in os.walk(r):
            dirnames.sort()
            paths.extend(Path(dirpath) / f for f in sorted(filenames))
    found: list[PlogFile] = []
    for p in paths:
        pf = parse_plog_name(p)
        if pf is None or (kind is not None and pf.kind != kind) or not p.is_file():
            continue
        found.append(pf)
    return found


def order_rotated(files: Iterable[PlogFile]) -> list[PlogFile]:
    """Rotation order (row 10): by name stamp; ties and unparsable stamps keep the given order (stable)."""
    return sorted(files, key=lambda f: (f.stamp is not None, f.stamp or datetime.min))


def group_by_pid(files: Iterable[PlogFile]) -> dict[tuple[str, int], list[PlogFile]]:
    """``(kind, pid)`` → that process's files in rotation order. Ranks never mix (row 9)."""
    groups: dict[tuple[str, int], list[PlogFile]] = {}
    for f in files:
        groups.setdefault((f.kind, f.pid), []).append(f)
    return {k: order_rotated(v) for k, v in sorted(groups.items())}


@dataclass(slots=True)
class PlogResult:
    """Everything read from one process's plog files.

    ``records``: every plog line, file by file in rotation order, each file in its own line order (row 6;
    sort by ``ts_key`` when time order is wanted). ``faults``: runtime records of those lines (§1.5).
    ``error_manager``: non-plog error-manager lines (row 11), with their body classified.
    ``unrecognized``: other non-blank non-plog lines. Blank lines (the SK logger's trailing ``\\n``)
    are skipped.
    """

    files: list[str] = field(default_factory=list)
    records: list[PlogLine] = field(default_factory=list)
    faults: list[RuntimeRecord] = field(default_factory=list)
    error_manager: list[ErrorManagerLine] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    truncated: bool = False  # some file ends in a line without newline (row 7)
    replaced_lines: int = 0  # lines holding U+FFFD after decoding non-UTF-8 bytes (row 8)
    other_pid_lines: int = 0  # lines dropped by the pid filter (row 9)

    @property
    def pids(self) -> list[int]:
        return sorted({r.pid for r in self.records})

    @property
    def sk_lines(self) -> list[PlogLine]:
        """The ``[SK][<Function>]`` records, for the SK exception-handler parser."""
        return [r for r in self.records if r.is_sk]

    def to_frame(self) -> pd.DataFrame:
        """One row per plog line."""
        return records_frame((({}, r) for r in self.records), PLOG_LINE_COLS)


def _as_paths(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths]


def _rotation_sorted(paths: list[Path]) -> list[Path]:
    def key(p: Path) -> tuple[bool, datetime]:
        pf = parse_plog_name(p)
        stamp = pf.stamp if pf is not None else None
        return (stamp is not None, stamp or datetime.min)

    return sorted(paths, key=key)


def read_plog(paths: PathLike | Sequence[PathLike], pid: int | None = None) -> PlogResult:
    """Read one process's plog file(s) completely (streaming, line by line).

    Files are taken in rotation order by their name stamp (row 10); ``pid`` keeps only records of that
    process (row 9; error-manager and unknown lines carry no pid and are kept). A directory, missing or
    binary file raises :class:`ParseError`.
    """
    result = PlogResult()
    for p in _rotation_sorted(_as_paths(paths)):
        file = str(p)
        result.files.append(file)
        for tl in iter_lines(p, what=WHAT):
            text = tl.text
            if not text.strip():
                continue
            src = Source(file, tl.no)
            if "\ufffd" in text:
                result.replaced_lines += 1
            if tl.cut_at is not None:
                result.gaps.append(Gap("line_too_long", tl.cut_gap_detail(file), src=src))
            if not tl.complete:
                result.truncated = True
                result.gaps.append(
                    Gap("truncated_line", f"{file} ends in a line without newline (cut record)", src=src)
                )
            rec = parse_plog_line(text, src, complete=tl.complete)
            if rec is not None:
                if pid is not None and rec.pid != pid:
                    result.other_pid_lines += 1
                    continue
                result.records.append(rec)
                fault = classify_runtime(rec)
                if fault is not None:
                    result.faults.append(fault)
                continue
            em = parse_error_manager_line(text, src)
            if em is not None:
                result.error_manager.append(em)
            else:
                result.unrecognized.append(Unrecognized(src, text, "plog"))
    return result


class _Prefilter:
    """Anchor tables for the vectorised marker search (see module docstring)."""

    def __init__(self, markers: Sequence[bytes], sample: ByteArray) -> None:
        import numpy as np

        sample = sample[:_SAMPLE]  # the head of a block says which bigrams are common (see _SAMPLE)
        hist = np.zeros(65536, dtype=np.int64)
        for words in _bigram_views(sample):
            hist += np.bincount(words, minlength=65536)
        table = np.zeros(65536, dtype=np.bool_)
        quads: set[int] = set()
        for m in markers:
            if len(m) < _ANCHOR:
                raise ValueError(f"fault marker {m!r} is shorter than {_ANCHOR} bytes")
        seen = _quad_counts(sample, [_quad(m, j) for m in markers for j in range(len(m) - _ANCHOR + 1)])
        #: anchor quad -> (marker, offset of the anchor in it): a candidate is confirmed in place
        self.anchored: dict[int, list[tuple[bytes, int]]] = {}
        for m in markers:
            # the quad seen least in the sample, then the fewest table hits: an anchor at an even offset
            # shows its first bigram on an even word, one at an odd offset its second, and both go in
            # the table, so one lookup per two bytes finds it
            best = min(
                range(len(m) - _ANCHOR + 1),
                key=lambda j: (seen[_quad(m, j)], int(hist[_bigram(m, j)]) + int(hist[_bigram(m, j + 1)]), j),
            )
            table[_bigram(m, best)] = True
            table[_bigram(m, best + 1)] = True
            quad = _quad(m, best)
            quads.add(quad)
            self.anchored.setdefault(quad, []).append((m, best))
        self.table = table
        self.quads = np.array(sorted(quads), dtype=np.uint32)
        #: candidates (confirmed or not) per byte of the sample the anchors were chosen on
        self.density = len(self.candidates(sample)) / max(1, len(sample))

    def candidates(self, a: ByteArray) -> IntArray:
        """Start positions in ``a`` of any anchor (superset of marker positions, shifted by anchor offset)."""
        return self.anchors(a)[0]

    def anchors(self, a: ByteArray) -> tuple[IntArray, npt.NDArray[np.uint32]]:
        """Anchor positions in ``a`` (ascending) and the anchor (4 bytes, little-endian) found at each."""
        import numpy as np

        n = len(a)
        if n < _ANCHOR:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint32)
        at = np.flatnonzero(_table_hits(self.table, a[: n & ~1].view("<u2"))) * 2
        # an anchor starts at such an even offset (its first bigram there) or one before (its second);
        # ``at - 1, at`` per hit keeps the positions sorted (the hits are two bytes apart at least)
        pos = (at[:, None] + np.array([-1, 0], dtype=at.dtype)).ravel()
        pos = pos[(pos >= 0) & (pos + (_ANCHOR - 1) < n)]
        if not pos.size:
            return pos, np.empty(0, dtype=np.uint32)
        quad = _quads_at(a, pos)
        keep = _member(quad, self.quads)
        return pos[keep].astype(np.int64), quad[keep]


def _member(values: npt.NDArray[np.uint32], members: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    """``np.isin(values, members)`` for ``members`` sorted ascending: each value is looked up where
    it would be inserted among them (``clip`` puts a value above all at the last member).

    Why: ``np.isin``'s own dispatch is ~25 us of Python a call, once per block scanned: a scene of
    a thousand rotated plogs scans a thousand blocks."""
    import numpy as np

    if not members.size:
        return np.zeros(len(values), dtype=np.bool_)
    return cast(
        "npt.NDArray[np.bool_]", members.take(np.searchsorted(members, values), mode="clip") == values
    )


def _quads_at(a: ByteArray, pos: IntArray) -> npt.NDArray[np.uint32]:
    """The 4 bytes at each of ``pos`` (each ``<= len(a) - 4``) as a little-endian ``uint32``.

    Why: one gather from a ``uint32`` view of ``a`` with a 1-byte stride (unaligned words at every
    offset, no copy) instead of four byte gathers, three casts, three shifts and three ors."""
    import numpy as np

    return _words_at_every_offset(a)[pos].astype(np.uint32)


#: words looked up per ``np.take`` call. Why sliced: the call casts its ``uint16`` indices to a
#: temporary ``intp`` array (8 bytes a word), and a whole block's temporary (measured with 8 MiB
#: blocks: 32 MiB) cost ~2.5x a sliced lookup alone. Why not smaller: each call gives up the GIL and
#: must take it back, and beside the main thread's parsing every take-back waits up to the switch
#: interval; measured on the 200 MB
#: bench plog beside a busy Python thread, 64 K words a call scanned in ~2.7 s, 1 M in ~1.4 s, a whole
#: block in ~1.7 s (alone: 0.77, 0.80, 1.2 s)
_GATHER = 1 << 20
#: words a call in a thread whose lookups seldom wait for the GIL (:func:`uncontended_lookups`: the
#: forked child's scan thread, beside which its process only pickles a value to send now and then and
#: takes the GIL briefly around each hash update), so a call's take-back costs next to nothing, and the
#: call's 512 KiB ``intp`` temporary stays in the core's cache where 1 M words' 8 MiB does not.
#: One lookup pass over an 8 MiB block (the block size then), timed in a thread on its own: 2.85 ms
#: at 64 K words, 4.2 ms at 1 M (32 K and 128 K words within 5%; 16 K words 3.3 ms). A first run of
#: the 232 MB bench scene: -10 to -18 ms of wall time, -12 to -16 ms of CPU (16 and 20 pairs; issue
#: 18, twenty-seventh round).
#: Tried in every thread, the same size cost a scan thread beside the main thread's parsing ~80 ms more
#: wall time: every thread but the child's scan thread keeps :data:`_GATHER`.
_GATHER_UNCONTENDED = 1 << 16


def _table_hits(table: npt.NDArray[np.bool_], words: npt.NDArray[np.uint16]) -> npt.NDArray[np.bool_]:
    """``table[words]``, :data:`_GATHER` words a call (:data:`_GATHER_UNCONTENDED` in a thread of
    :func:`uncontended_lookups`), into the thread's reused buffer (valid until the next call in this
    thread). ``words`` are 16-bit, so every index is inside the 64 K table and ``mode="wrap"`` (no
    error check) never wraps. Why wrap, not clip: the same lookups, ~7% faster in numpy's loop (1.17
    against 1.27 ms on a 4 MiB block of the bench plog, 64 K words a call, medians of 15); measured in
    process, the child's scan thread took ~7 ms less CPU on the 200 MB plog."""
    import numpy as np

    n = len(words)
    out = _STATE.hits
    if out is None or len(out) < n:
        out = np.empty(n, dtype=np.bool_)
        if n <= CHUNK // 2:  # a block's worth is kept for the next block; a larger one-off is not
            _STATE.hits = out
    out = out[:n]
    step = _GATHER_UNCONTENDED if _STATE.uncontended else _GATHER
    for i in range(0, n, step):
        np.take(table, words[i : i + step], out=out[i : i + step], mode="wrap")
    return out


def uncontended_lookups() -> None:
    """Say that the calling thread's prefilter lookups seldom wait for the GIL: no other thread of its
    process runs Python for long while it scans (the forked child's scan thread,
    :mod:`skdbg.parsers.plog_fork`). Its lookups are then made :data:`_GATHER_UNCONTENDED` words a
    call. For the thread's life: it is a thread-local setting."""
    _STATE.uncontended = True


def hash_in_step() -> None:
    """Say that the calling thread hashes the bytes it scans itself, each read of :data:`_STEP` bytes as
    soon as it is made (:func:`_read_in_step`), instead of behind its search in a lane's thread
    (:class:`~skdbg.parsers.hashbehind.HashLane`). For the thread's life: a thread-local setting. (A
    plog's first block is still read at once, to check its head is text, and hashed after: the pieces
    start with its second block.)

    Why: a lane pays where a CPU would otherwise be idle. Where every CPU the analysis may use is busy
    already (the forked child's scan beside the parent's parsing, on 2 CPUs:
    :mod:`skdbg.parsers.plog_fork` decides), its thread only takes turns with the others, and it
    hashes a 4 MiB block that another core read, from memory further away than that core's cache:
    SHA-256 ran at ~1.2 GB/s so on the bench machine, at ~1.9 GB/s on a piece just read by the same
    thread. Measured on the 232 MB bench scene (first runs, warm, alternated with the lane 12 times):
    0.480 s median instead of 0.499 s, and ~17 ms less CPU (bench/README, thirty-third round)."""
    _STATE.in_step = True


def _quad(m: bytes, j: int) -> int:
    """The 32-bit little-endian word of ``m[j:j + 4]`` (an anchor)."""
    return int.from_bytes(m[j : j + _ANCHOR], "little")


def _quad_counts(sample: ByteArray, quads: list[int]) -> dict[int, int]:
    """How often each of ``quads`` occurs in ``sample``, at any byte offset.

    Why the two 64 K tables first: a binary search of every 4-byte word of a 1 MiB sample among a
    few hundred quads cost ~20 ms per scan (it runs once per thread, so once per ``analyze``); the
    words whose low and high halves both occur in some quad are a few percent of the sample, and
    only those are searched (the counts are the same: a quad's own halves always pass)."""
    import numpy as np

    # sorted, each once (np.unique would import numpy.ma, ~15 ms holding the GIL beside the main thread)
    wanted = np.array(sorted(set(quads)), dtype=np.uint32)
    counts = np.zeros(len(wanted), dtype=np.int64)
    if len(sample) >= _ANCHOR:
        low = np.zeros(65536, dtype=np.bool_)
        low[wanted & 0xFFFF] = True
        high = np.zeros(65536, dtype=np.bool_)
        high[wanted >> 16] = True
        words = _words_at_every_offset(sample)
        halves = np.take(low, (words & 0xFFFF).astype(np.uint16)) & np.take(
            high, (words >> 16).astype(np.uint16)
        )
        maybe = words[halves]
        at = np.searchsorted(wanted, maybe)
        at[at == len(wanted)] = 0
        counts += np.bincount(at[wanted[at] == maybe], minlength=len(wanted))
    return dict(zip(wanted.tolist(), counts.tolist(), strict=True))


def _words_at_every_offset(a: ByteArray) -> npt.NDArray[np.uint32]:
    """The 4 bytes at every offset of ``a`` (``len(a) >= 4``) as little-endian ``uint32``: a view
    with a 1-byte stride (unaligned words, no copy)."""
    import numpy as np

    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    words: npt.NDArray[np.uint32] = np.ndarray((len(a) - (_ANCHOR - 1),), dtype="<u4", buffer=a, strides=(1,))
    return words


def _bigram(m: bytes, j: int) -> int:
    """The 16-bit little-endian word of ``m[j:j + 2]`` (a bigram table index)."""
    return m[j] | (m[j + 1] << 8)


def _bigram_views(a: ByteArray) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint16]]:
    """The bytes as little-endian 16-bit words starting at even and at odd offsets (no copy)."""
    n = len(a)
    even = a[: n & ~1].view("<u2")
    odd = a[1 : 1 + ((n - 1) & ~1)].view("<u2")
    return even, odd


#: a block with more confirmed candidates per byte than this (and 4x its anchors' own sample) makes the
#: scanner re-choose the anchors on that block: lines full of marker words ("failed", "Dump", "The")
#: must not turn the prefilter into a per-line Python check
_REANCHOR_DENSITY = 1 / 4096


class _ScanState(threading.local):
    """Per thread: one read buffer, the prefilter per marker set and the lookups' and newline
    comparisons' output buffers, reused across files.

    Why: a scene can hold a thousand small plogs; allocating a block's buffer and re-deriving the anchor
    tables for each cost milliseconds per file. The TUI scans in worker threads, hence thread-local.
    The buffer is made by the first scan of a thread (every scan sizes it to CHUNK first): the thread
    that imports this module, often not one that scans, need not zero a block."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.prefilters: dict[tuple[bytes, ...], _Prefilter] = {}
        self.hits: npt.NDArray[np.bool_] | None = None  # _table_hits' output, made on first use
        self.newlines: npt.NDArray[np.bool_] | None = None  # _newline_count's, made on first use
        self.small_bytes = 0  # bytes searched by _scan_small_block (see _SMALL_BUDGET)
        self.uncontended = False  # lookups seldom wait for the GIL (see uncontended_lookups)
        self.in_step = False  # each read hashed at once, in this thread (see hash_in_step)


_STATE = _ScanState()


def _prefilter_for(markers: Sequence[bytes], block: ByteArray) -> _Prefilter:
    key = tuple(markers)
    pf = _STATE.prefilters.get(key)
    if pf is None:
        pf = _STATE.prefilters[key] = _Prefilter(markers, block)
    return pf


#: what a block scan finds: the block's newline count and, per marker line in line order, its
#: 1-based line number, its bytes, whether it is complete and — only when one of the lines is longer
#: than :data:`MAX_LINE` (else empty) — its start in the buffer, where the cut is made
BlockLines = tuple[int, list[int], list[bytes], list[bool], list[int]]

#: marker lines as columns: their 1-based line numbers, their bytes (no newline, cut to
#: :data:`MAX_LINE`) and whether each is complete; one entry per line in each, in line order
MarkerColumns = tuple[list[int], list[bytes], list[bool]]

#: candidates up to this many are confirmed one ``startswith`` call each; more, a few numpy passes
#: per marker present (an SK handler block is tens of thousands of candidates in one block)
_CONFIRM_EACH_MAX = 64


def _scan_block(buf: bytearray, n: int, markers: Sequence[bytes], final: bool, first_no: int) -> BlockLines:
    """Marker lines of ``buf[:n]`` (whole lines; the last one may lack its newline only when ``final``),
    the block's first line being line ``first_no`` of the file.

    Returns :data:`BlockLines`. numpy views of ``buf`` die on return, so the caller may reuse ``buf``
    afterwards.
    """
    if n <= _SMALL_BLOCK and (n <= _TINY_BLOCK or _STATE.small_bytes <= _SMALL_BUDGET):
        _STATE.small_bytes += n
        return _scan_small_block(buf, n, markers, final, first_no)
    import numpy as np

    a = np.frombuffer(buf, dtype=np.uint8, count=n)
    prefilter = _prefilter_for(markers, a)
    cand, quad = prefilter.anchors(a)
    if not cand.size:
        return _newline_count(a), [], [], [], []
    if cand.size <= _CONFIRM_EACH_MAX:
        hits = _confirm_each(buf, n, cand, quad, prefilter.anchored)
    else:
        hits = _confirm_vectorised(a, cand, quad, prefilter.anchored)
    _reanchor_if_defeated(prefilter, markers, a, cand.size, cand.size - hits.size)
    if not hits.size:
        return _newline_count(a), [], [], [], []
    nl = np.flatnonzero(a == 10)
    idxs = np.searchsorted(nl, hits)  # ascending, as the hits are: keep the first of each line's
    idxs = idxs[np.concatenate((np.array([True]), idxs[1:] != idxs[:-1]))]
    return (len(nl), *_lines_at(buf, n, nl, idxs, final, first_no))


#: bytes of a block compared with a newline a call (:func:`_newline_count`)
_COUNT_STEP = 256 << 10


def _newline_count(a: ByteArray) -> int:
    """The newlines in ``a``, compared :data:`_COUNT_STEP` bytes a call into the thread's reused buffer.

    Why pieces: the comparison's boolean array then stays in the core's cache, where a whole block's
    (4 MiB) went to memory and back for the count: 0.29 instead of 0.44 ms a 4 MiB block of the bench
    plog, on the ~45 blocks of a scan without a marker line."""
    import numpy as np

    out = _STATE.newlines
    if out is None or len(out) < _COUNT_STEP:
        out = _STATE.newlines = np.empty(_COUNT_STEP, dtype=np.bool_)
    count = 0
    for i in range(0, len(a), _COUNT_STEP):
        piece = a[i : i + _COUNT_STEP]
        same = out[: len(piece)]
        np.equal(piece, 10, out=same)
        count += int(np.count_nonzero(same))
    return count


def _reanchor_if_defeated(
    prefilter: _Prefilter, markers: Sequence[bytes], a: ByteArray, found: int, false: int
) -> None:
    """Re-choose the anchors on this block's first :data:`_SAMPLE` bytes, for the blocks after it, when
    its *false* candidates are dense (lines full of "failed", "Dump", "The"), so the prefilter stays a
    prefilter.

    Why after confirming, and triggered by false candidates only: this block's hits are already
    exact (every marker holds its anchor); an SK handler block is tens of thousands of true
    candidates, which no choice of anchors can avoid, and re-deriving the tables there cost ~25 ms
    per scan for nothing. Once triggered, the fresh tables are kept when they give fewer candidates
    of either kind on this block than the current ones (``found``): the true ones are the same for
    both, so that compares the false ones."""
    n = len(a)
    if false > n * _REANCHOR_DENSITY and false > 4 * prefilter.density * n:
        fresh = _Prefilter(markers, a)  # anchors chosen on the bytes that defeat the current ones
        if fresh.density < found / max(1, n):
            _STATE.prefilters[tuple(markers)] = fresh


def _confirm_each(
    buf: bytearray,
    n: int,
    cand: IntArray,
    quad: npt.NDArray[np.uint32],
    anchored: dict[int, list[tuple[bytes, int]]],
) -> IntArray:
    """The candidates holding a whole marker at (anchor position - anchor offset): one ``startswith``
    call per candidate, whatever the line length and however many markers there are."""
    import numpy as np

    hits: list[int] = []
    for p, q in zip(cand.tolist(), quad.tolist(), strict=True):
        for m, k in anchored[q]:
            if p >= k and buf.startswith(m, p - k, n):
                hits.append(p)
                break
    return np.array(hits, dtype=np.int64)


def _confirm_vectorised(
    a: ByteArray, cand: IntArray, quad: npt.NDArray[np.uint32], anchored: dict[int, list[tuple[bytes, int]]]
) -> IntArray:
    """:func:`_confirm_each` as numpy passes (same hits, same order): per anchor and per marker it
    stands for, one comparison per marker byte over that anchor's candidates (those whose marker would
    start before the block or run past its end are out). Why: tens of thousands of candidates (an SK
    handler block) cost tens of milliseconds of Python one call each, well under one here."""
    import numpy as np

    n = len(a)
    ok = np.zeros(len(cand), dtype=np.bool_)
    for q, anchored_here in anchored.items():
        sel = np.flatnonzero(quad == q)
        if not sel.size:
            continue
        for m, k in anchored_here:
            start = cand[sel] - k
            fits = np.flatnonzero((start >= 0) & (start + len(m) <= n))
            at = start[fits]
            same = np.ones(len(at), dtype=np.bool_)
            for j, byte in enumerate(m):
                same &= a[at + j] == byte
            ok[sel[fits[same]]] = True
    return cand[ok]


def _lines_at(
    buf: bytearray, n: int, nl: IntArray, idxs: IntArray, final: bool, first_no: int
) -> tuple[list[int], list[bytes], list[bool], list[int]]:
    """:data:`BlockLines` (after the newline count) of the lines ``idxs`` (0-based, ascending,
    distinct) of ``buf[:n]``, whose newlines are at ``nl``.

    Why runs: the lines of an SK handler block follow one another; each run of consecutive lines is
    copied out in one slice and split at its newlines (exactly the lines' ends) instead of one slice
    and a few numpy scalar reads per line."""
    import numpy as np

    breaks = np.flatnonzero(idxs[1:] != idxs[:-1] + 1) + 1
    firsts = idxs[np.concatenate((np.array([0]), breaks))]
    lasts = idxs[np.concatenate((breaks - 1, np.array([len(idxs) - 1])))]
    raws: list[bytes] = []
    with memoryview(buf) as mv:
        for lo, hi in zip(_line_starts(nl, firsts), _line_ends(nl, lasts, n), strict=True):
            raws.extend(bytes(mv[lo:hi]).split(b"\n"))
    completes = [True] * len(raws)
    if final and int(idxs[-1]) == len(nl):  # the block's last line, without its newline
        completes[-1] = False
    starts = _line_starts(nl, idxs) if max(map(len, raws)) > MAX_LINE else []
    return (idxs + first_no).tolist(), raws, completes, starts


def _line_starts(nl: IntArray, idxs: IntArray) -> list[int]:
    """Where the lines ``idxs`` start: after the newline before each (0 for the first line). Read in
    place, not from a copy of ``nl`` with both ends added (a block of newlines makes ``nl`` 64 MB)."""
    import numpy as np

    if not nl.size:
        return [0] * len(idxs)
    return cast("list[int]", np.where(idxs > 0, np.take(nl, idxs - 1, mode="clip") + 1, 0).tolist())


def _line_ends(nl: IntArray, idxs: IntArray, n: int) -> list[int]:
    """Where the lines ``idxs`` end: at their newline (``n`` for a last line without one)."""
    import numpy as np

    if not nl.size:
        return [n] * len(idxs)
    return cast("list[int]", np.where(idxs < len(nl), np.take(nl, idxs, mode="clip"), n).tolist())


def _scan_small_block(
    buf: bytearray, n: int, markers: Sequence[bytes], final: bool, first_no: int
) -> BlockLines:
    """:func:`_scan_block` for a small block, with ``bytes.find``: the same lines (every line holding
    a whole marker inside ``buf[:n]``), without importing numpy for a few kilobytes of plog."""
    for m in markers:
        if len(m) < _ANCHOR:
            raise ValueError(f"fault marker {m!r} is shorter than {_ANCHOR} bytes")
    ends: dict[int, int] = {}  # start of a marker line -> its newline (n: none)
    for m in markers:
        pos = buf.find(m, 0, n)
        while pos >= 0:
            start = buf.rfind(b"\n", 0, pos) + 1
            end = buf.find(b"\n", pos, n)
            ends[start] = n if end < 0 else end
            if end < 0:
                break
            pos = buf.find(m, end + 1, n)
    n_nl = buf.count(b"\n", 0, n)
    starts = sorted(ends)
    nos: list[int] = []
    raws: list[bytes] = []
    completes: list[bool] = []
    i, at = 0, 0
    for start in starts:
        i += buf.count(b"\n", at, start)
        at = start
        nos.append(first_no + i)
        raws.append(bytes(buf[start : ends[start]]))
        completes.append(i < n_nl or not final)
    return n_nl, nos, raws, completes, starts


def _numbered(found: BlockLines, offset: int, cuts: list[tuple[int, int]] | None) -> MarkerColumns:
    """A block's marker lines as :data:`MarkerColumns`, each line longer than :data:`MAX_LINE` cut to
    it (and the cut recorded, see :func:`scan_marker_lines`); ``offset`` is the file offset of the
    buffer's first byte."""
    _, nos, raws, completes, starts = found
    if starts:  # some line is longer than MAX_LINE (the small-block path gives the starts anyway)
        for k, raw in enumerate(raws):
            if len(raw) > MAX_LINE:
                if cuts is not None:
                    cuts.append((nos[k], offset + starts[k] + MAX_LINE))
                raws[k] = raw[:MAX_LINE]
    return nos, raws, completes


def scan_marker_lines(
    path: Path,
    markers: Sequence[bytes],
    cuts: list[tuple[int, int]] | None = None,
    hasher: Hasher | None = None,
    *,
    opened: tuple[int, os.stat_result] | None = None,
) -> Generator[tuple[int, bytes, bool], None, None]:
    """``(1-based line number, raw line without newline, complete)`` for every marker line.

    Memory is bounded whatever the file holds: a line longer than :data:`MAX_LINE` keeps its first
    ``MAX_LINE`` bytes (searched and, with a marker, yielded) and the rest is skipped, like
    :func:`skdbg.parsers.textio.iter_lines`; each cut is appended to ``cuts`` as ``(line, byte offset of
    the skipped rest)`` so the caller can record the ``line_too_long`` gap. ``hasher`` (a ``hashlib``
    object) is fed every byte read, so the scene's SHA-256 of the file (gate G5) needs no second read.
    ``opened``: a descriptor already open on the file (read from its current offset, closed here) and
    its ``fstat``, instead of opening ``path`` (which then only names the file in messages).
    """
    for nos, raws, completes in _marker_line_columns(path, markers, cuts, hasher, opened=opened):
        yield from zip(nos, raws, completes, strict=True)


#: ``os.readv`` where it exists (one read system call into the caller's buffer); elsewhere a raw file
_READV = getattr(os, "readv", None)


class _RawFile:
    """A regular file's descriptor read straight into the scan's buffer, one system call a read.

    Why not a buffered file object: its creation and each ``readinto`` (which reads on until the
    buffer is full or a read returns nothing) cost system calls, each a release of the GIL that the
    scan must then wait to take back while the main thread parses (up to the switch interval): a
    scene of a thousand rotated plogs spent most of its scan waiting so.

    The end of the file is where a read came back short of the buffer at the size ``fstat`` gave
    (as :func:`skdbg.scene._small_digest` judges a file read whole); otherwise (a file that
    grew, a short read before its end) the end is the read that returns nothing, as before. Closes
    the descriptor on exit.

    A read that fails (a disk error, a network file system gone) raises the plog's
    :class:`~skdbg.parsers.common.ReadFailure` naming ``path`` and the byte offset: the scan keeps
    the lines it found before it, and the analysis records the rest as a gap instead of ending."""

    __slots__ = ("fd", "size", "path", "pos", "ended", "pending", "_raw")

    def __init__(self, fd: int, size: int, path: Path) -> None:
        self.fd = fd
        self.size = size  # st_size when opened
        self.path = path
        self.pos = 0  # bytes read so far
        self.ended = False  # a short read reached ``size``: the next read would return nothing
        self.pending: ReadFailure | None = None  # a failed read whose bytes before it are used first
        self._raw = None if _READV is not None else io.FileIO(fd, closefd=False)

    def readinto(self, mv: memoryview) -> int:
        """Read into ``mv`` as much as one read gives; 0 at the end of the file."""
        if self.pending is not None:
            raise self.pending
        if self.ended:
            return 0
        try:
            n = _READV(self.fd, [mv]) if self._raw is None else (self._raw.readinto(mv) or 0)  # type: ignore[misc]
        except OSError as exc:
            raise read_error(self.path, WHAT, exc, self.pos) from exc
        self.pos += n
        if 0 < n < len(mv) and self.pos == self.size:
            self.ended = True
        return n

    def __enter__(self) -> _RawFile:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _marker_line_columns(
    path: Path,
    markers: Sequence[bytes],
    cuts: list[tuple[int, int]] | None,
    hasher: Hasher | None,
    check_text: bool = False,
    opened: tuple[int, os.stat_result] | None = None,
    lane: HashLane | None = None,
) -> Iterator[MarkerColumns]:
    """:func:`scan_marker_lines`' lines as columns, one :data:`MarkerColumns` per block read (one
    generator step per block, not per line: an SK handler block is tens of thousands of lines).

    ``check_text``: raise :func:`~skdbg.parsers.textio.check_text_file`'s :class:`ParseError` for a
    file that is not text, judged on the head of this scan's own first read (no second open).
    ``opened``: the file's descriptor and ``fstat`` from :func:`~skdbg.parsers.fsguard.open_regular_fd`
    (closed here), None to open ``path``. ``lane``: a :class:`~skdbg.parsers.hashbehind.HashLane` with
    nothing pending, to hash through instead of a lane of the scan's own (a thousand files, one thread)."""
    if len(_STATE.buf) != CHUNK:  # grown by an earlier long line (or CHUNK changed): back to one block
        _STATE.buf = bytearray(CHUNK)
    buf = _STATE.buf
    fd, st = open_regular_fd(path, what=WHAT) if opened is None else opened
    if hasher is None or _STATE.in_step or (lane is None and st.st_size <= _LANE_FILE):
        # hashed in this thread, then searched: in pieces as they are read (hash_in_step), or a block
        # at a time (a file that one block or two hold)
        yield from _columns(path, markers, cuts, hasher, check_text, fd, st, buf, _nothing, _STATE.in_step)
        return
    # each block hashed while it is searched (see skdbg.parsers.hashbehind), through the caller's lane
    # (idle now: see scan_plog_files; its owner closes it) or one of the scan's own
    with nullcontext(lane) if lane is not None else HashLane() as use:
        yield from _columns(path, markers, cuts, use.to(hasher), check_text, fd, st, buf, use.settle)


def _nothing() -> None:
    """No bytes are hashed behind the scan: nothing to wait for."""


def _columns(
    path: Path,
    markers: Sequence[bytes],
    cuts: list[tuple[int, int]] | None,
    hasher: Hasher | None,
    check_text: bool,
    fd: int,
    st: os.stat_result,
    buf: bytearray,
    settle: Callable[[], None],
    in_step: bool = False,
) -> Iterator[MarkerColumns]:
    """:func:`_marker_line_columns` on an open file; ``settle`` returns once ``hasher`` has taken
    every byte fed to it (called before ``buf`` is written). ``in_step``: each block is read in pieces,
    each hashed as soon as it is read (:func:`_read_in_step`)."""
    with _RawFile(fd, st.st_size, path) as reader:
        # the disk reads the next blocks while this one is scanned; a file that one read takes whole
        # is asked for by that read (a thousand rotated plogs: one system call a file less)
        ahead = ReadAhead(fd, None if st.st_size > len(buf) else 0)
        filled = 0  # bytes carried over from the previous block (a partial line)
        offset = 0  # file offset of buf[0]
        lines_before = 0
        long_head: bytes | None = None  # first MAX_LINE bytes of an over-long line whose newline is ahead
        long_cut = 0
        head = _read_head(reader, buf, hasher, path) if check_text else -1  # bytes read already
        while True:
            if head >= 0:  # the first step's read is the head's
                got, head = head, -1
            else:
                settle()
                with memoryview(buf) as mv:
                    if in_step and hasher is not None:
                        got = _read_in_step(reader, mv[filled:], hasher)
                    else:
                        got = reader.readinto(mv[filled:]) or 0
                        if hasher is not None and got:
                            hasher.update(mv[filled : filled + got])  # every byte once, in file order
            end = filled + got
            ahead.reached(offset + end)
            if long_head is not None:  # skipping the rest of an over-long line
                nl = buf.find(b"\n", 0, end)
                if nl < 0 and got:
                    offset, filled = offset + end, 0
                    continue
                lines_before += 1
                if cuts is not None:
                    cuts.append((lines_before, long_cut))
                if any(m in long_head for m in markers):
                    yield [lines_before], [long_head], [nl >= 0]
                long_head = None
                if nl < 0:
                    return
                rest = end - nl - 1
                settle()
                buf[:rest] = buf[nl + 1 : end]
                offset, filled = offset + nl + 1, rest
                continue
            if not got:
                if end == 0:
                    return
                block_end, final = end, True
            else:
                # from 0, not from ``filled``: after an over-long line is skipped, the bytes carried
                # over can hold whole lines, which must not be taken for the head of a long line
                cut = buf.rfind(b"\n", 0, end)
                if cut < 0:
                    if end < len(buf):
                        filled = end
                        continue
                    if end <= MAX_LINE:  # a block smaller than the line limit: grow up to it
                        settle()
                        buf.extend(bytes(len(buf)))
                        filled = end
                        continue
                    # a line longer than the limit and the buffer: keep its head, skip to its newline
                    long_head, long_cut = bytes(buf[:MAX_LINE]), offset + MAX_LINE
                    offset, filled = offset + end, 0
                    continue
                block_end, final = cut + 1, False
            found = _scan_block(buf, block_end, markers, final, lines_before + 1)
            if found[1]:
                yield _numbered(found, offset, cuts)
            lines_before += found[0]
            if final:
                return
            rest = end - block_end
            settle()
            buf[:rest] = buf[block_end:end]
            offset, filled = offset + block_end, rest


def _read_in_step(reader: _RawFile, mv: memoryview, hasher: Hasher) -> int:
    """What one read of ``mv`` from ``reader`` gives (:meth:`_RawFile.readinto`), read :data:`_STEP`
    bytes at a time, each fed to ``hasher`` as soon as it is read (:func:`hash_in_step`); the bytes
    read (0: the end).

    As one read, so that the scan finds the same lines and meets the same failures whoever hashes: a
    piece that comes back short ends it (the file's end, or a short read before an error, which the
    next read raises), and a piece that fails after others fails the whole, naming the offset of its
    first byte (the pieces read are not searched: the one read's bytes would not have been). A file
    that grows while it is scanned is read past the size it had when opened, as the one read reads it
    (a line appended after the block was read is met by the next block's read either way; one appended
    in the microseconds between two pieces is read here and not by the one read, which had returned)."""
    start, got = reader.pos, 0
    while got < len(mv):
        want = min(_STEP, len(mv) - got)
        try:
            n = reader.readinto(mv[got : got + want])
        except ReadFailure as exc:
            cause = exc.__cause__
            if not got or not isinstance(cause, OSError):
                raise
            reader.pos = start
            raise read_error(reader.path, WHAT, cause, start, count=False) from cause
        if n:
            hasher.update(mv[got : got + n])
        got += n
        if n < want:
            break
    return got


def _read_head(reader: _RawFile, buf: bytearray | memoryview, hasher: Hasher | None, path: Path) -> int:
    """Read the file's first :data:`~skdbg.parsers.textio.BINARY_PROBE` bytes (fewer: all of it) into
    ``buf`` (fed to ``hasher``; ``buf`` holds more than that) and raise
    :func:`~skdbg.parsers.textio.check_text_file`'s :class:`ParseError` when they are not text; the
    bytes read (at least that many unless the file is shorter: the first read of a scan asks for all of
    ``buf``, as ``check_text_file``'s ``read`` reads until it has its probe or the end of the file;
    fewer when a read after the first fails: see :attr:`_RawFile.pending`)."""
    got = 0
    failed: ReadFailure | None = None  # a read that failed after ``got`` bytes of the probe
    with memoryview(buf) as mv:
        while True:
            try:
                n = reader.readinto(mv[got:]) or 0
            except ReadFailure as exc:
                if not got:
                    raise
                failed = exc
                break
            if hasher is not None and n:
                hasher.update(mv[got : got + n])
            got += n
            if not n or got >= BINARY_PROBE:
                break
        try:
            check_text_head(path, bytes(mv[: min(got, BINARY_PROBE)]), what=WHAT)
        except ParseError:
            if failed is not None:
                # a head cut short by the failure is no proof of binary data: the failure is the news
                # (raised from its OSError, as the reader raised it, not from the refusal)
                failed.__suppress_context__ = True
                raise failed  # noqa: B904 (its cause is the OSError already)
            raise
    if failed is not None:
        # the bytes before the failure are scanned, and the reader's next read raises it (a short
        # read, then an error, is how a bad sector shows)
        reader.pending = failed
    return got


def scan_plog(
    path: PathLike,
    pid: int | None = None,
    *,
    markers: Sequence[bytes] = FAULT_MARKERS,
    gaps: list[Gap] | None = None,
    hasher: Hasher | None = None,
) -> Iterator[PlogLine | Unrecognized]:
    """Yield only the lines of ``path`` that contain a fault/SK marker, with correct 1-based line numbers.

    Plog records come back as :class:`PlogLine` (filtered by ``pid`` when given); marker-bearing lines that
    are not plog records (error-manager text) as :class:`Unrecognized` with context ``"plog_scan"``.
    A directory, missing or binary file raises :class:`ParseError`. ``hasher`` is fed the whole file
    (see :func:`scan_marker_lines`); it is complete once the iterator is exhausted.
    """
    for batch in scan_plog_batches(path, pid, markers=markers, gaps=gaps, hasher=hasher):
        yield from batch


def scan_plog_batches(
    path: PathLike,
    pid: int | None = None,
    *,
    markers: Sequence[bytes] = FAULT_MARKERS,
    gaps: list[Gap] | None = None,
    hasher: Hasher | None = None,
) -> Iterator[list[PlogLine | Unrecognized]]:
    """:func:`scan_plog`'s items, a list at a time (in order; a list may be empty).

    Why: a caller that keeps tens of thousands of records pays a generator step per item with
    :func:`scan_plog`; here it pays one per batch of lines."""
    for items, _records_only in scan_plog_parts(path, pid, markers=markers, gaps=gaps, hasher=hasher):
        yield items


#: a batch of :func:`scan_plog`'s items, and True when every one of them is a :class:`PlogLine`
PlogBatch = tuple[list[PlogLine | Unrecognized], bool]


class PlogRows(list[PlogRow]):
    """A batch of marker lines the bulk tokenizer took whole, as its rows
    (:data:`~skdbg.parsers.plog_line.PlogRow`) instead of records: what a scan asked for rows
    (:func:`scan_plog_files` with ``rows=True``) holds in place of such a batch's records, flagged
    True. :func:`~skdbg.parsers.plog_line.plog_lines_of_rows` makes them the records.

    Why: only a scan in a child process asks for them (:mod:`skdbg.parsers.plog_fork`); its parent
    makes the records (see :func:`~skdbg.parsers.plog_line.fast_plog_rows`), but for batches of SK-logger
    lines the analysis keeps as rows (:mod:`skdbg.parsers.plog_rows`). The class says which
    form a batch is in, also once pickled, without a look at its items (a copy made by slicing or
    ``+`` is a plain list: rows are handed on as they are made)."""

    __slots__ = ()


#: a batch as a scan of files holds it (:attr:`ScannedFile.parts`): a :data:`PlogBatch`, or, in a scan
#: asked for rows, the :class:`PlogRows` of a batch the bulk tokenizer took whole (flagged True); a
#: forked scan's files unpacked with ``keep_sk_rows`` hold a batch of SK-logger rows as its
#: :class:`~skdbg.parsers.plog_rows.SkRows` (a :class:`PlogRows`), every other batch as records
ScanBatch = tuple[list[PlogLine | Unrecognized] | PlogRows, bool]


def scan_plog_parts(
    path: PathLike,
    pid: int | None = None,
    *,
    markers: Sequence[bytes] = FAULT_MARKERS,
    gaps: list[Gap] | None = None,
    hasher: Hasher | None = None,
) -> Iterator[PlogBatch]:
    """:func:`scan_plog_batches`' lists, each with a flag saying it holds records only.

    Why the flag: ``Evidence`` files a batch of records with a few C-level passes (pid filter,
    SK lines left out of the fault classifier) instead of a type check per item; the scan knows the
    answer for free in the common case (every line of the batch taken by the bulk tokenizer)."""
    # not asked for rows: every batch is records
    return cast("Iterator[PlogBatch]", _scan_parts(path, pid, markers, gaps, hasher, None))


def _scan_parts(
    path: PathLike,
    pid: int | None,
    markers: Sequence[bytes],
    gaps: list[Gap] | None,
    hasher: Hasher | None,
    opened: tuple[int, os.stat_result] | None,
    lane: HashLane | None = None,
    rows: bool = False,
) -> Iterator[ScanBatch]:
    """:func:`scan_plog_parts`; ``opened`` is the file already opened by
    :func:`~skdbg.parsers.fsguard.open_regular_fd` (the scan closes it), None to open it here;
    ``lane``: an idle lane to hash through (see :func:`_marker_line_columns`); ``rows``: see
    :func:`scan_plog_files`."""
    p = Path(path)  # as check_text_file names it: its ParseErrors are worded the same
    file = str(path)
    cuts: list[tuple[int, int]] = []
    try:
        for nos, raws, completes in _batches(
            _marker_line_columns(p, markers, cuts, hasher, True, opened, lane)
        ):
            yield _batch_records(file, nos, raws, completes, pid, rows)
    except ReadFailure:
        _cut_gaps(file, cuts, gaps)  # the lines cut before the failure are kept, as their records are
        raise
    _cut_gaps(file, cuts, gaps)


def _cut_gaps(file: str, cuts: list[tuple[int, int]], gaps: list[Gap] | None) -> None:
    """A ``line_too_long`` gap for each over-long line cut (line number, byte offset of the cut)."""
    if gaps is not None:
        for no, at in cuts:
            gaps.append(
                Gap(
                    "line_too_long",
                    TextLine(no, "", True, at).cut_gap_detail(file, MAX_LINE),
                    src=Source(file, no),
                )
            )


def _batches(blocks: Iterable[MarkerColumns]) -> Iterator[MarkerColumns]:
    """Each block's marker lines in slices of at most :data:`_BATCH_LINES` lines, each slice closed
    as soon as its lines reach :data:`_BATCH_BYTES` (a list of a thousand one-MiB lines, copied four
    ways, would take gigabytes). Slices of the block's columns, cut where the running byte count
    crosses the budget: no step per line."""
    for nos, raws, completes in blocks:
        n = len(raws)
        ends = list(accumulate(map(len, raws)))  # bytes of the block's lines up to and including each
        lo = 0
        while lo < n:
            budget = (ends[lo - 1] if lo else 0) + _BATCH_BYTES
            hi = min(bisect_left(ends, budget, lo) + 1, lo + _BATCH_LINES, n)
            yield nos[lo:hi], raws[lo:hi], completes[lo:hi]
            lo = hi


def _batch_records(
    file: str, nos: list[int], raws: list[bytes], completes: list[bool], pid: int | None, rows: bool = False
) -> ScanBatch:
    """The records of one batch of marker lines (see :data:`_BATCH_LINES`).

    Each line is what the line-at-a-time loop made of it: one trailing ``\\r`` removed, decoded as
    UTF-8 with replacement, then :func:`parse_plog_line`. Two C passes over the batch tell that none
    of its lines is non-ASCII or holds a run of 17 hex digits (the common case); the bulk tokenizer
    :func:`fast_plog_block` then takes the whole batch, or says that some line is not its shape.
    Otherwise :func:`fast_plog_lines` is asked line by line, with the lines that may hold an
    oversized number left to the general path (which refuses those), and :func:`parse_plog_line`
    for every line it does not recognise. With ``rows`` (see :func:`scan_plog_files`), a batch the
    bulk tokenizer takes whole comes as its :class:`PlogRows`, every pid's lines (``pid`` is None:
    only :func:`scan_plog_parts` filters, and it asks for records)."""
    n = len(nos)
    blob = b"\n".join(raws)
    if b"\r" in blob:  # one \r off each line end (no raw line holds a \n: each \r\n is an end)
        blob = (blob + b"\n").replace(b"\r\n", b"\n")[:-1]
    if blob.isascii():
        text = blob.decode("ascii")
        # a run of 17 hex digits somewhere (an address, a 20-digit hash): one scan of the whole batch
        # for an oversized number; none in the batch is none in any of its lines (see _none_oversized)
        cleared = not may_hold_oversized(blob) or _none_oversized(text)
        if cleared and rows:  # (one findall either way: None sends the batch the line-at-a-time way)
            if (taken := fast_plog_rows(text, file, nos, completes)) is not None:
                return PlogRows(taken), True
        elif cleared and (block := fast_plog_block(text, file, nos, completes)) is not None:
            if pid is None:
                return cast("list[PlogLine | Unrecognized]", block), True
            return [r for r in block if r.pid == pid], True
        texts = text.split("\n")
    else:
        texts = [raw.decode("utf-8", errors="replace") for raw in blob.split(b"\n")]
        cleared = False
    sources: list[Source] = list(map(build_source, repeat(file, n), nos, repeat(None, n)))
    # the fast path's precondition, line by line ("" is no record: the grammar refuses the line)
    fits = texts if cleared else [t if oversized_number(t) is None else "" for t in texts]
    recs = fast_plog_lines(fits, sources, completes)
    out: list[PlogLine | Unrecognized] = []
    for text, src, complete, rec in zip(texts, sources, completes, recs, strict=True):
        if rec is None:
            rec = parse_plog_line(text, src, complete=complete)
        if rec is None:
            out.append(Unrecognized(src, text, "plog_scan"))
        elif pid is None or rec.pid == pid:
            out.append(rec)
    return out, False


def _none_oversized(text: str) -> bool:
    """True when no line of ``text`` (lines joined by ``\\n``) holds an oversized number, in one
    :func:`~skdbg.parsers.common.oversized_number` call instead of one per line.

    Why equivalent: the number pattern cannot match a ``\\n`` (digits, ``0x``) and its lookarounds
    refuse ``[\\w.]`` only, so a ``\\n`` bounds a number as a line's start or end does; the matches
    in the joined text are the lines' matches, and each is judged the same way."""
    return oversized_number(text) is None


#: files up to this size are scanned several to a block by :func:`scan_plog_files`. Never above
#: :data:`MAX_LINE`: no line of such a file is cut, so a packed file needs none of the cut handling.
_PACK_FILE = MAX_LINE


@dataclass(slots=True)
class ScannedFile:
    """:func:`scan_plog_parts` of one file, whole: its batches, its ``line_too_long`` gaps, the hasher
    fed its bytes, and the :class:`ParseError` it raised (None: read to its end). The batches are the
    ones made before the error (none: an error comes before any line is read). ``stat``: the ``fstat``
    of the descriptor read (None: not known)."""

    parts: list[ScanBatch]
    gaps: list[Gap]
    hasher: Hasher | Sha256Done | None  # Sha256Done: the digest a scan in a child process sent back
    error: ParseError | None = None
    stat: os.stat_result | None = None


@dataclass(slots=True)
class _Packed:
    """A file read whole into the shared block: ``file`` is its name in the records, its bytes start at
    ``start`` in the block; ``cut`` says a newline was added after its last line (the file does not
    end with one: that line is incomplete)."""

    result: ScannedFile
    file: str
    start: int
    cut: bool


def scan_plog_files(
    paths: Sequence[str],
    *,
    new_hasher: Callable[[], Hasher] | None = None,
    markers: Sequence[bytes] = FAULT_MARKERS,
    reached: Callable[[int], None] | None = None,
    on_part: Callable[[int, ScanBatch], None] | None = None,
    rows: bool = False,
) -> Generator[ScannedFile, None, None]:
    """:func:`scan_plog_parts` of each of ``paths`` in turn (no pid filter), one :class:`ScannedFile`
    each, in order; each file's bytes go to a hasher of its own from ``new_hasher``; ``reached(i)``
    is called before file ``i`` is opened (read-ahead). With ``on_part``, a file scanned alone hands
    each batch to ``on_part(i, batch)`` as soon as it is made, and its :class:`ScannedFile` comes
    without them (a forked scan sends them on while the file's later blocks are searched).

    Why: a scene of a thousand rotated plogs (or a thousand ranks) of a few hundred KB each made a
    dozen numpy passes per file, each a release of the GIL that the scan then waited up to the switch
    interval to take back while the main thread parsed; beside it, the scan took ~3 ms a file instead
    of ~0.5 ms. Files up to :data:`_PACK_FILE` bytes are read one after another into the scan's block
    (each closed by a newline if it lacks one) and searched together, then the lines are dealt back
    to their files; a larger file is scanned alone. The same lines come back: a marker never spans a
    newline, so none spans two files, and each file's line numbers count from its own start.

    Once :data:`_LANE_FILE` bytes were packed, the packed files' bytes are hashed in a second thread
    while their block is searched (see :mod:`skdbg.parsers.hashbehind`); each result is yielded with
    its hash complete.

    With ``rows``, a batch the bulk tokenizer takes whole is its :class:`PlogRows` instead of its
    records (for a scan whose batches another process files: :mod:`skdbg.parsers.plog_fork`)."""
    with HashLane() as lane:  # settled on the way out: an abandoned scan leaves no view of the block
        yield from _scan_files(paths, new_hasher, markers, reached, lane, on_part, rows)


def _scan_files(
    paths: Sequence[str],
    new_hasher: Callable[[], Hasher] | None,
    markers: Sequence[bytes],
    reached: Callable[[int], None] | None,
    lane: HashLane,
    on_part: Callable[[int, ScanBatch], None] | None = None,
    rows: bool = False,
) -> Iterator[ScannedFile]:
    """:func:`scan_plog_files`, the packed files hashed through ``lane``."""
    # the largest file packed (-1: none, in a block too small to hold a few probes' worth)
    limit = min(_PACK_FILE, MAX_LINE, CHUNK // 4) if CHUNK >= 4 * (BINARY_PROBE + 2) else -1
    pack: list[_Packed | ScannedFile] = []  # files read into the block (or refused) since the last search
    used = 0  # bytes of the block taken
    inline = _LANE_FILE  # bytes still hashed in this thread: a small scene's few plogs start no thread
    for i, path in enumerate(paths):
        last = i == len(paths) - 1
        if reached is not None:
            reached(i)
        if len(_STATE.buf) != CHUNK:
            yield from _search_pack(pack, used, markers, lane, rows=rows)
            pack, used = [], 0
            _STATE.buf = bytearray(CHUNK)
        hasher = new_hasher() if new_hasher is not None else None
        p = Path(path)
        try:
            fd, st = open_regular_fd(p, what=WHAT)
        except ParseError as exc:
            pack.append(ScannedFile([], [], hasher, exc))
            continue
        if st.st_size > limit:  # alone, as scan_plog_parts scans it (the scan closes the file)
            yield from _closing_on_exit(fd, _search_pack(pack, used, markers, lane, rows=rows))
            pack, used = [], 0
            part_to = None if on_part is None else partial(on_part, i)
            # the pack searched: the lane is idle
            done = _scan_alone(path, hasher, markers, (fd, st), lane, part_to, rows)
            _release(lane, last)  # a refused head leaves its hash pending
            done.stat = st
            yield done
            continue
        room = max(st.st_size, BINARY_PROBE) + 2  # the file, its added newline, one byte to see its end
        if used + room > CHUNK:  # the block is full: search it first
            yield from _closing_on_exit(fd, _search_pack(pack, used, markers, lane, rows=rows))
            pack, used = [], 0
        fed = hasher if hasher is None or inline > 0 or _STATE.in_step else lane.to(hasher)
        inline -= st.st_size
        with _RawFile(fd, st.st_size, p) as reader:
            packed = _read_whole(reader, used, min(CHUNK - used - 1, max(limit, BINARY_PROBE) + 1), fed, p)
        error = None
        if isinstance(packed, _CutShort):
            # its whole lines before the failure are searched (a partial last line is dropped, as a
            # file scanned alone drops the line its failed read was to finish)
            error = packed.error
            nl = _STATE.buf.rfind(b"\n", used, used + packed.got)
            packed = nl + 1 - used if nl >= 0 else 0
            lane.settle()  # the dropped partial line was fed: the next file is read over it
        if isinstance(packed, int):
            buf = _STATE.buf
            cut = packed > 0 and buf[used + packed - 1] != 0x0A
            if cut:
                buf[used + packed] = 0x0A
            pack.append(_Packed(ScannedFile([], [], hasher, error, stat=st), str(path), used, cut))
            used += packed + cut
        elif isinstance(packed, ScannedFile):  # refused on its first bytes
            packed.hasher = hasher  # the hasher itself, not the lane's feed to it
            lane.settle()  # its head stays at ``used``, where the next file is read
            pack.append(packed)
        else:  # it grew past its fstat size while read: read again, alone, with a fresh hasher
            yield from _search_pack(pack, used, markers, lane, rows=rows)
            pack, used = [], 0
            again = new_hasher() if new_hasher is not None else None
            done = _scan_alone(
                path, again, markers, None, lane, None if on_part is None else partial(on_part, i), rows
            )
            _release(lane, last)
            yield done
    yield from _search_pack(pack, used, markers, lane, at_end=True, rows=rows)


def _release(lane: HashLane, last: bool) -> None:
    """Settle ``lane`` before a result is handed out (its hash complete); before the scan's last result,
    close it. Why close: a caller that takes one result a path and never exhausts the scan (``Evidence``;
    a stored ParseError's traceback can keep its frame, and the scan with it) leaves no thread behind."""
    if last:
        lane.close()
    else:
        lane.settle()


def _closing_on_exit(fd: int, results: Iterator[ScannedFile]) -> Iterator[ScannedFile]:
    """``results``, yielded while ``fd`` (the next file, opened to know its size) waits its turn;
    should the caller abandon the scan there (the generator closed, an error thrown in), ``fd`` is
    closed, as the old ``with``-held files were."""
    try:
        yield from results
    except BaseException:
        os.close(fd)
        raise


class _CutShort(NamedTuple):
    """A packed file whose read failed after its head: the ``got`` bytes before the failure are
    searched like a whole file's, then its ``error`` is raised (as :func:`scan_plog_parts` raises it
    after the batches it made)."""

    got: int
    error: ParseError


def _read_whole(
    reader: _RawFile, at: int, room: int, hasher: Hasher | None, path: Path
) -> int | ScannedFile | _CutShort | None:
    """Read the file into ``_STATE.buf[at : at + room]``: its size; a :class:`ScannedFile` holding the
    :class:`ParseError` of a first read that fails or of a head that is not text (as
    :func:`scan_plog_parts` raises them); a :class:`_CutShort` when a later read fails; None when it
    does not fit (``room`` is at least its size + 1 and :data:`BINARY_PROBE` + 1 as fstat gave it: the
    file grew)."""
    with memoryview(_STATE.buf) as whole, whole[at : at + room] as mv:
        try:
            got = _read_head(reader, mv, hasher, path)
        except ParseError as exc:
            return ScannedFile([], [], hasher, exc)
        while got < room:
            try:
                n = reader.readinto(mv[got:])
            except ParseError as exc:
                return _CutShort(got, exc)
            if not n:
                return got
            if hasher is not None:
                hasher.update(mv[got : got + n])
            got += n
    return None


def _scan_alone(
    path: str,
    hasher: Hasher | None,
    markers: Sequence[bytes],
    opened: tuple[int, os.stat_result] | None,
    lane: HashLane | None = None,
    on_part: Callable[[ScanBatch], None] | None = None,
    rows: bool = False,
) -> ScannedFile:
    """:func:`scan_plog_parts` of one file, collected (``opened``, ``lane``: see :func:`_scan_parts`),
    or each batch handed to ``on_part`` as it is made."""
    done = ScannedFile([], [], hasher)
    keep = done.parts.append if on_part is None else on_part
    try:
        for part in _scan_parts(path, None, markers, done.gaps, hasher, opened, lane, rows):
            keep(part)
    except ParseError as exc:
        done.error = exc
    return done


def _search_pack(
    pack: list[_Packed | ScannedFile],
    used: int,
    markers: Sequence[bytes],
    lane: HashLane,
    at_end: bool = False,
    rows: bool = False,
) -> Iterator[ScannedFile]:
    """Search the block's ``used`` bytes (the packed files' lines, each file's last line closed by a
    newline) once, deal the marker lines back to their files and yield each file's result in order,
    once ``lane`` has hashed the block (the caller then reuses it; each result's hash is complete).
    ``at_end``: the scan's last results (see :func:`_release`)."""
    if not pack:
        _release(lane, at_end)  # a file that grew while packed: its bytes were fed before it was refused
        return
    nos: list[int] = []
    raws: list[bytes] = []
    if used:
        _, nos, raws, _, _ = _scan_block(_STATE.buf, used, markers, False, 1)
    _release(lane, at_end)
    packed = [item for item in pack if isinstance(item, _Packed)]
    # the block's lines before each packed file's first byte, and before the block's end
    bounds = _newlines_before(_STATE.buf, used, [item.start for item in packed]) if nos else []
    at = 0  # index of the packed file in ``packed`` (and in ``bounds``)
    for item in pack:
        if isinstance(item, ScannedFile):
            yield item
            continue
        at += 1
        if not nos:
            yield item.result
            continue
        first, last = bounds[at - 1], bounds[at]  # its lines: (first, last] of the block
        lo = bisect_left(nos, first + 1)
        hi = bisect_left(nos, last + 1, lo)
        if lo < hi:
            own = [no - first for no in nos[lo:hi]]
            blocks = [(own, raws[lo:hi], [True] * (hi - lo))]
            if item.cut and own[-1] == last - first:
                # a last line without newline is the scan's final block of its own, and incomplete
                blocks = [
                    (own[:-1], raws[lo : hi - 1], [True] * (hi - lo - 1)),
                    ([own[-1]], [raws[hi - 1]], [False]),
                ]
            for cols in _batches(b for b in blocks if b[0]):
                item.result.parts.append(_batch_records(item.file, *cols, None, rows))
        yield item.result


def _newlines_before(buf: bytearray, used: int, starts: list[int]) -> list[int]:
    """How many newlines ``buf`` holds before each of ``starts`` (ascending offsets), then before
    ``used``. Why numpy above :data:`_SMALL_BLOCK`: one pass with the GIL released, where counting
    file by file with ``bytes.count`` held it ~70 us a file of a few hundred KB; below, no numpy
    import for a small scene's plogs (as :func:`_scan_block`)."""
    ends = [*starts, used]
    if used <= _SMALL_BLOCK:
        counts: list[int] = []
        seen, at = 0, 0
        for end in ends:
            seen += buf.count(b"\n", at, end)
            counts.append(seen)
            at = end
        return counts
    import numpy as np

    nl = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8, count=used) == 10)
    return cast("list[int]", np.searchsorted(nl, ends).tolist())
