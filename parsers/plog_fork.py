"""An analysis's plog scan in a forked child process; its files come back here, in order, as they are done.

Why: the scan is numpy passes, SHA-256 of every byte and the marker lines (~18,000 on the bench scene:
the exception handler's table rows, copied into the plog). In a thread, it shared one interpreter with
the main thread's sk_meta parsing: each record built waited for the GIL, and the parsing waited for the
scan's turns. With the scan in a child (:mod:`skdbg.forkstream`), the parent only decodes what the
child sends and makes its records (or keeps its SK handler lines as rows): the bench scene's analysis
spent ~0.6 s less CPU in its own process
and finished ~0.15 s sooner, its output byte-identical.

What crosses the pipe is each file's :class:`~skdbg.parsers.plog.ScannedFile`, its batches in one of
two forms. A batch the bulk tokenizer took whole (nearly all of them) is its rows
(:class:`~skdbg.parsers.plog.PlogRows`: each line's fields as strings and numbers, the stamp as its
text), and :func:`~skdbg.parsers.plog_line.plog_lines_of_rows` makes them here the records a scan here
makes: the child makes no record, no datetime and no pickle of one (~0.035 s of the child's CPU on the
bench scene). The analysis asks for a batch of SK-logger lines to be left rows instead
(``keep_sk_rows``): it files them as rows and reads them as columns (:mod:`skdbg.parsers.plog_rows`).
Any other batch comes as its records flattened to tuples of their fields (a pickled record costs
several times its tuple, and building it again here costs about a microsecond). With
them, the SHA-256 as its hex digest, and a file's :class:`~skdbg.parsers.common.ParseError` by its
class, arguments and attributes (its ``__init__`` takes other arguments than the ones it keeps). A file
scanned alone (a large one) sends its batches ahead, a few at a time as they are made, and its
:class:`ScannedFile` last; files searched together come whole. The parent files them exactly as the
ones a scan in this process yields (but for the SK rows it keeps, whose readers give what the records
would), so everything downstream is unchanged; tests hold the two to each other.

A child that dies (killed, out of memory) or fails part-way loses nothing: the files it did not send
whole (the batches of one it was sending are dropped) are scanned here, from the first one missing,
with the same results a whole scan gives (each file's lines are numbered from its own start whatever
was scanned with it).
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import fields
from operator import attrgetter
from typing import Any, Protocol

from skdbg.forkstream import (
    ChildLost,
    ForkedStream,
    SharedClaims,
    WorkNotSent,
    available_cpus,
    can_fork_child,
)
from skdbg.heap import keep_freed_memory
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import ParseError, ReadFailure
from skdbg.parsers.fsguard import count_failed_read
from skdbg.parsers.hashbehind import CountingSha256, Hasher, Sha256Done
from skdbg.parsers.plog import (
    PlogRows,
    ScanBatch,
    ScannedFile,
    hash_in_step,
    scan_plog_files,
    uncontended_lookups,
)
from skdbg.parsers.plog_line import PlogLine, plog_lines_of_rows
from skdbg.parsers.plog_rows import SkRows, sk_only
from skdbg.parsers.readahead import FilesAhead
from skdbg.parsers.scan_child import FORK_MIN_BYTES, Standby, one_blas_thread, take_scan_child

#: every field of a record but its source, in field order (the source goes first, flattened)
_FIELDS = tuple(f.name for f in fields(PlogLine) if f.name != "src")
_REST = attrgetter(*_FIELDS)
_BUILD_LINE = frozen_builder(PlogLine)

#: the child's scan hashes through a lane of its own (a second thread) only where this process may run
#: on this many CPUs: the parent's main thread, the child's scan and the lane each have one. With fewer,
#: every CPU is busy already, and the scan hashes each read itself (:func:`~skdbg.parsers.plog.hash_in_step`)
LANE_CPUS = 3


#: a file's ParseError on the way: its class, ``args`` and attributes, and its cause packed the same
#: way (or pickled as is, when it is no ParseError; None when it cannot be)
PackedError = tuple[type[ParseError], tuple[Any, ...], dict[str, Any], Any]


def pack_error(exc: ParseError | None) -> PackedError | None:
    """``exc`` as it crosses the pipe from a child (a ParseError's ``__init__`` takes other arguments
    than the ones it keeps, so it is sent by its parts); :func:`unpack_error` makes it again."""
    if exc is None:
        return None
    cause = exc.__cause__
    packed_cause: Any = None
    if isinstance(cause, ParseError):
        packed_cause = pack_error(cause)
    elif cause is not None:
        import pickle

        try:
            pickle.dumps(cause)
            packed_cause = cause
        except Exception:  # noqa: BLE001 - an unpicklable cause is left behind; the message keeps the facts
            packed_cause = None
    return (type(exc), exc.args, dict(vars(exc)), packed_cause)


def unpack_error(packed: PackedError | None) -> ParseError | None:
    """The ParseError :func:`pack_error` was given: its class, arguments, attributes and cause. A
    :class:`~skdbg.parsers.common.ReadFailure` is counted as a failed read of this process
    (:func:`~skdbg.parsers.fsguard.count_failed_read`): the child counted it in its own, and the result
    cache must keep no verdict built without the file here either."""
    if packed is None:
        return None
    cls, args, attrs, cause = packed
    exc = cls.__new__(cls)
    exc.args = args
    vars(exc).update(attrs)
    if isinstance(exc, ReadFailure):
        count_failed_read()
    if isinstance(cause, tuple):
        exc.__cause__ = unpack_error(cause)
    elif isinstance(cause, BaseException):
        exc.__cause__ = cause
    return exc


def _pack_items(items: Sequence[object]) -> Sequence[object]:
    """A batch's records as ``(file, line, json_path, *other fields)`` tuples; other items as they are;
    a batch of rows (:class:`~skdbg.parsers.plog.PlogRows`) as it is."""
    if isinstance(items, PlogRows):  # (an SkRows too, should a file kept unpacked be packed again)
        return items
    return [(x.src.file, x.src.line, x.src.json_path, *_REST(x)) if type(x) is PlogLine else x for x in items]


def _unpack_items(items: Sequence[Any], keep_sk_rows: bool = False) -> list[Any]:
    """What :func:`_pack_items` was given, a batch of rows made the records a scan here makes of its
    lines (the files handed on from here hold records only, as a scan here gives them); with
    ``keep_sk_rows``, a batch of rows that are all SK-logger lines is left rows, as
    :class:`~skdbg.parsers.plog_rows.SkRows` (its filing decides: :mod:`skdbg.parsers.plog_rows`)."""
    if type(items) is PlogRows:
        if keep_sk_rows and sk_only(items):
            return SkRows(items)
        return plog_lines_of_rows(items)
    build, src = _BUILD_LINE, build_source
    return [build(src(x[0], x[1], x[2]), *x[3:]) if type(x) is tuple else x for x in items]


#: one file's scan as the child sends it
PackedFile = tuple[list[tuple[Sequence[object], bool]], list[Any], Sha256Done | None, PackedError | None, Any]


def pack_scanned(done: ScannedFile) -> PackedFile:
    """``done`` as the child sends it (see the module docstring)."""
    hasher = done.hasher
    digest = (
        Sha256Done(hasher.size, hasher.hexdigest())
        if isinstance(hasher, (CountingSha256, Sha256Done))
        else None
    )
    parts = [(_pack_items(items), records_only) for items, records_only in done.parts]
    return (parts, done.gaps, digest, pack_error(done.error), done.stat)


def unpack_scanned(packed: PackedFile, keep_sk_rows: bool = False) -> ScannedFile:
    """The :class:`ScannedFile` :func:`pack_scanned` was given, equal to it field by field (the hasher
    as its :class:`Sha256Done`, a batch of rows as its records, or, with ``keep_sk_rows``, as it is
    when they are all SK-logger lines: :func:`_unpack_items`)."""
    parts, gaps, digest, error, stat = packed
    return ScannedFile(
        [(_unpack_items(items, keep_sk_rows), records_only) for items, records_only in parts],
        gaps,
        digest,
        unpack_error(error),
        stat,
    )


def scan_files(
    paths: Sequence[str],
    new_hasher: Callable[[], Hasher] | None,
    on_part: Callable[[int, ScanBatch], None] | None = None,
    rows: bool = False,
) -> Generator[ScannedFile, None, None]:
    """:func:`~skdbg.parsers.plog.scan_plog_files` of ``paths``, the disk asked ahead (``rows``: the
    batches the bulk tokenizer takes whole as their rows, for a child to send)."""
    ahead = FilesAhead(paths)
    scan = scan_plog_files(paths, new_hasher=new_hasher, reached=ahead.reached, on_part=on_part, rows=rows)
    with closing(scan) as scanned:
        yield from scanned


#: what the child's scan thread hands its sending thread: batches of a file scanned alone, sent on as
#: they are made (``("p", [(items, records_only), ...])``), or a whole file (``("f", PackedFile)``, its
#: batches in it when the file was searched with others, else already sent)
_Item = tuple[Any, ...]
#: the scan thread's word after the files: every file sent (or the scan raised: the stream then ends
#: early); its last word, ``_DONE``, after the results of the child's share of the other work
_END, _FAILED, _DONE = ("end",), ("failed",), ("done",)
#: batches of a file scanned alone handed on together: one at a time, each a value through the pipe,
#: cost the child ~0.08 s more on the bench plog's ~290 batches; 16 leave the parent as much to file
#: meanwhile
_BATCHES_A_VALUE = 16


class ChildWork(Protocol):
    """More work for the scan's child (the other artifacts' SHA-256, a log read ahead), in :meth:`units`
    numbered units claimed a chunk at a time (:class:`~skdbg.forkstream.SharedClaims`; the first
    :meth:`alone` each in a chunk of its own): by the child once its scan is done (:meth:`compute`), and by
    this process while it waits (:meth:`do_here`). Each result :meth:`compute` yields there is pickled and
    sent as soon as it is made, after the plogs, and handed to :meth:`adopt` here, by the thread that files
    the plogs; then :meth:`settle` is called, whether results came or not. When the child is lost first,
    what it did not send is never adopted: the work must be such that this process can do what no one
    reported later on its own (a hash computed when first asked for). It must pickle: a standby child,
    forked before the scene was opened, gets it that way (work that does not pickle keeps the scan in
    this process)."""

    def units(self) -> int: ...

    def alone(self) -> int: ...

    def compute(self, claimed: Iterable[int]) -> Iterable[object]: ...

    def do_here(self, chunk: Iterable[int]) -> None: ...

    def adopt(self, result: object) -> None: ...

    def settle(self) -> None: ...


class LoadedLater:
    """A :class:`ChildWork` that a standby child gets as a pickle of its own inside its work, unpacked
    there the first time the child needs it: when, its scan done, some unit is still unclaimed
    (:func:`_do_share`), or, for a part of a larger work (the artifacts' hashing in
    :class:`~skdbg.parsers.sk_log_ahead.ChildShare`), when it claims a unit of that part. It is a
    ChildWork itself: each call goes to the work (in this process, the object it was made of).

    Why: a standby child unpacks its work before it starts scanning, and the hashing holds every
    artifact of the scene (2,000 kernel files on the bench scene: ~6 ms of the child's time to unpack,
    the modules of their classes besides) that the child needs only after its scan, if at all. On a
    scene whose plog takes longest it never does (this process claims all of it while it waits), and
    the scan, the analysis's last stretch there, started that much later; on a scene whose plog is
    small, the child reads super_kernel.log for this process first, which needs none of it. As a
    pickle in the work it costs the child a copy of its bytes. A work that does not pickle fails the
    whole work's pickle here, as before (:class:`~skdbg.forkstream.WorkNotSent`)."""

    __slots__ = ("_data", "_work")

    def __init__(self, work: ChildWork) -> None:
        self._work: ChildWork | None = work
        self._data: bytes | None = None

    def __reduce__(self) -> tuple[Callable[[bytes], LoadedLater], tuple[bytes]]:
        import pickle

        if self._work is None:  # not unpacked here either: its pickle as it came
            return _loaded_later, (self._data or b"",)
        return _loaded_later, (pickle.dumps(self._work, protocol=pickle.HIGHEST_PROTOCOL),)

    @property
    def unpacked(self) -> bool:
        """The work is at hand (always so in the process that made it)."""
        return self._work is not None

    def load(self) -> ChildWork:
        """The work (unpickled on the first call: its classes' modules are imported then). Not for two
        threads at once: in a child, only its scan thread comes to the work, after the scan."""
        if self._work is None:
            import pickle

            self._work, self._data = pickle.loads(self._data or b""), None
        return self._work

    def units(self) -> int:
        return self.load().units()

    def alone(self) -> int:
        return self.load().alone()

    def compute(self, claimed: Iterable[int]) -> Iterable[object]:
        return self.load().compute(claimed)

    def do_here(self, chunk: Iterable[int]) -> None:
        self.load().do_here(chunk)

    def adopt(self, result: object) -> None:
        self.load().adopt(result)

    def settle(self) -> None:
        self.load().settle()


def _loaded_later(data: bytes) -> LoadedLater:
    """A :class:`LoadedLater` as it arrives in the child: its work still pickled."""
    later = LoadedLater.__new__(LoadedLater)
    later._work, later._data = None, data
    return later


def _do_share(also: ChildWork, claims: SharedClaims) -> Iterator[object]:
    """The results of the units of ``also`` this process claims; none, and a :class:`LoadedLater`
    left packed, when the other process claimed them all first. A packed work is unpacked before the
    first claim (by its first call): that unit may be a log a reader there waits for. Should the other
    process take the last chunk meanwhile, the unpacking was for nothing, and nothing else is lost."""
    if not claims.pending():
        return
    yield from also.compute(claims.claimed())


def _in_child(
    paths: Sequence[str],
    new_hasher: Callable[[], Hasher] | None,
    also: ChildWork | None = None,
    claims: SharedClaims | None = None,
) -> Iterator[list[_Item]]:
    """The child's work: the scan, in a thread that hands each batch of lines on as soon as it is
    made; this thread sends what has come meanwhile as one value (a list of items), so the parent
    files the first batches while the last are made, and a fast scan sends few values. Then, by the
    scan's thread once every file is handed on, the units of ``also`` it can claim from ``claims``
    (the parent claims some while it waits), each result as a value of its own, ``[("a", result)]``,
    sent as soon as it is made (should the work raise, what it did not yield is this process's to do).

    Why the scan first: it is what the parent waits for; the other work is needed only at the end of
    the analysis, and whichever process is idle first takes most of it.

    numpy loads in the child (the parent never needs it): in a standby child forked ahead, while the
    parent opens the scene (:mod:`skdbg.parsers.scan_child`), else at the scan's first block."""
    one_blas_thread()
    keep_freed_memory()
    # bounded: should the parent read slowly, the scan waits instead of holding many files' lines
    items: queue.Queue[_Item] = queue.Queue(maxsize=64)
    # the results of ``also``, then _DONE: a queue of their own, so the files' last batch ends with _END
    results: queue.Queue[_Item] = queue.Queue()

    def scan() -> None:
        held: list[tuple[Sequence[object], bool]] = []  # batches not handed on yet

        def on_part(_: int, part: ScanBatch) -> None:
            nonlocal held
            held.append((_pack_items(part[0]), part[1]))
            if len(held) >= _BATCHES_A_VALUE:
                items.put(("p", held))
                held = []

        try:
            # beside this thread, the sending one pickles a value now and then and a hash lane (where
            # there is one) takes the GIL briefly around each update: this thread's lookups seldom wait
            uncontended_lookups()
            if available_cpus() < LANE_CPUS:
                hash_in_step()
            for done in scan_files(paths, new_hasher, on_part, rows=True):
                if held:
                    items.put(("p", held))
                    held = []
                items.put(("f", pack_scanned(done)))
        except BaseException:  # the stream ends early: the parent scans the rest itself (no traceback)
            items.put(_FAILED)
            return
        items.put(_END)
        try:
            if also is not None and claims is not None:
                with contextlib.suppress(Exception):  # what is not sent is this process's (no traceback)
                    for result in _do_share(also, claims):
                        results.put(("a", result))
        finally:  # whatever ended the work (a SystemExit too), the stream ends: the parent's readers wait
            results.put(_DONE)

    scanner = threading.Thread(target=scan, name="skdbg-child-scan", daemon=True)
    scanner.start()
    while True:
        sent = [items.get()]
        with contextlib.suppress(queue.Empty):
            while True:
                sent.append(items.get_nowait())
        tail = sent[-1]
        if tail is _FAILED:
            if len(sent) > 1:  # the files before the failure are the parent's to file, not to redo
                yield sent[:-1]
            raise RuntimeError("the child's scan failed")  # the stream ends without its end frame
        if tail is _END:
            if len(sent) > 1:
                yield sent[:-1]
            break
        yield sent
    # then each result of ``also``, a value of its own, as soon as it is made (none without ``also``)
    while (result := results.get()) is not _DONE:
        yield [result]


def _at_least(paths: Sequence[str], size: int) -> bool:
    """The files of ``paths`` hold ``size`` bytes or more (stat'ed until they are known to)."""
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:  # the scan reports it
            continue
        if total >= size:
            return True
    return False


class ForkedPlogScan:
    """The scan of ``paths`` started in a forked child; :meth:`files` yields each file's result here,
    and :meth:`finish` hands each result of ``also`` (computed in the child after the scan) to
    ``also.adopt``. While this process waits for the files, :meth:`help` does a share of ``also``."""

    def __init__(
        self,
        paths: Sequence[str],
        *,
        hashed: bool,
        also: ChildWork | None = None,
        standby: Standby | None = None,
    ) -> None:
        """Fork the child now, or hand the work to ``standby`` (forked earlier with the claims it
        shares with this process: the paths and ``also`` go to it pickled)."""
        self._paths = list(paths)
        self._new_hasher: Callable[[], Hasher] | None = CountingSha256 if hashed else None
        self._also = also
        new_hasher = self._new_hasher
        self._files = 0  # files received whole
        #: when the thread filing the child's values began to wait for the next (None: it is filing)
        self._waiting_since: float | None = None
        #: the child sends no more (lost, or its stream ended short): the rest is scanned here
        self._gone = False
        self._stream: ForkedStream[list[_Item]]
        # the child inherits the claims' pipe: made before the fork (a standby child's came with it)
        if standby is not None and also is None:
            standby.claims.close()  # nothing to share
        claims = None if also is None else standby.claims if standby is not None else SharedClaims()
        self._claims = claims
        try:
            if also is not None and claims is not None:
                claims.offer(also.units(), alone=also.alone())
            if standby is not None:
                # packed apart, unpacked in the child only if it comes to do some of it
                sent = also if also is None or isinstance(also, LoadedLater) else LoadedLater(also)
                self._stream = standby.child.start(_in_child, self._paths, new_hasher, sent, claims)
            else:
                self._stream = ForkedStream(lambda: _in_child(self._paths, new_hasher, also, claims))
        except BaseException:
            if claims is not None:
                claims.close()
            raise

    def help(self) -> bool:
        """Do a chunk of ``also`` here (for a caller that would only wait for the scan otherwise);
        False when none is left to claim."""
        claims, also = self._claims, self._also
        if claims is None or also is None:
            return False
        chunk = claims.claim()
        if chunk is None:
            return False
        also.do_here(chunk)
        return True

    def files(self, keep_sk_rows: bool = False) -> Generator[ScannedFile, None, None]:
        """Every path's :class:`ScannedFile`, in order: from the child (a file scanned alone in batches
        unpacked as they come), then, should it be lost, from a scan here of the paths it did not
        send. :meth:`finish` then takes what follows them. ``keep_sk_rows``: the child's batches of
        SK-logger lines come as :class:`~skdbg.parsers.plog_rows.SkRows` (see :func:`_unpack_items`)."""
        last = len(self._paths)
        parts: list[ScanBatch] = []  # the batches of the file the child is scanning alone
        try:
            for sent in self._waited_for(self._stream):
                for item in sent:
                    if item[0] == "p":
                        parts.extend(
                            (_unpack_items(batch, keep_sk_rows), records_only)
                            for batch, records_only in item[1]
                        )
                        continue
                    # an "f" item (the ``("a", ...)`` items come after the files)
                    done = unpack_scanned(item[1], keep_sk_rows)
                    if parts:
                        done.parts[:0] = parts
                        parts = []
                    self._files += 1
                    yield done
                if self._files == last:
                    return
        except ChildLost:
            pass
        finally:
            if self._files < last:  # lost, or left part-way: the child is ended
                self._stream.close()
        # lost, or (never from _in_child) a stream that ended short of the files: the rest is scanned here
        self._gone = True  # nothing more comes from the child: it is quiet for good
        yield from scan_files(self._paths[self._files :], self._new_hasher)

    def _waited_for(self, values: Iterable[list[_Item]]) -> Iterator[list[_Item]]:
        """``values``, the time each was waited for kept (:meth:`quiet_for`)."""
        it = iter(values)
        while True:
            self._waiting_since = time.monotonic()
            try:
                value = next(it)
            except StopIteration:
                return
            finally:
                self._waiting_since = None
            yield value

    def quiet_for(self) -> float:
        """How long the thread filing the child's values has waited for the next one (0 while it files
        one, or before it started): a long wait says the child scans lines it has nothing to send of.
        Without end once the child sends no more (the files it did not send are scanned here, and what
        it claimed of the other work and did not report is done when first asked for)."""
        if self._gone:
            return math.inf
        since = self._waiting_since
        return 0.0 if since is None else max(0.0, time.monotonic() - since)

    def finish(self) -> None:
        """After every file: each result of ``also`` the child sends handed to ``also.adopt`` as it
        comes, then ``also.settle``, the child reaped, the pipe closed. Call it once :meth:`files` is
        done with. (A reader here may be waiting for one of those results: ``settle`` runs whatever
        ended the stream.)"""
        stream, also = self._stream, self._also
        try:
            if also is not None and self._files == len(self._paths):
                for sent in stream:  # each result of the child's share, until its stream ends
                    for item in sent:
                        if item[0] == "a":
                            also.adopt(item[1])
            stream.drain()
        except ChildLost:
            pass
        finally:
            if also is not None:
                also.settle()  # first: a reader waiting for the child must never wait for ever
            stream.close()
            if self._claims is not None:
                self._claims.close()

    def abandon(self) -> None:
        """Nobody will read what the child sends: end it now, and let the readers ``also`` would have
        served do the work themselves."""
        if self._also is not None:
            self._also.settle()
        self._stream.close()
        if self._claims is not None:
            self._claims.close()


def start_forked_plog_scan(
    paths: Sequence[str], *, hashed: bool, also: ChildWork | None = None
) -> ForkedPlogScan | None:
    """The scan of ``paths`` in a child process, started now (in the standby child of
    :func:`~skdbg.parsers.scan_child.prepare_scan_child` when there is one), or None when it would
    not pay or is not safe (:func:`~skdbg.forkstream.can_fork_child`, :data:`FORK_MIN_BYTES`: a
    standby child is dismissed then), the system refused a process or the work could not be sent to
    the standby child (``also`` unpicklable): the caller scans in this process then. ``hashed``:
    each file's SHA-256 comes back too; ``also``: more work the child does after the scan and this
    process while it waits (:class:`ChildWork`)."""
    standby = take_scan_child()
    scan = None
    try:
        if _at_least(paths, FORK_MIN_BYTES) and (standby is not None or can_fork_child()):
            # no process or pipe to be had, or work a standby child cannot get: None
            with contextlib.suppress(OSError, WorkNotSent):
                scan = ForkedPlogScan(paths, hashed=hashed, also=also, standby=standby)
        return scan
    finally:  # whatever ended it (Ctrl-C too), a standby child no scan took is ended, not left behind
        if scan is None and standby is not None:
            standby.end()
