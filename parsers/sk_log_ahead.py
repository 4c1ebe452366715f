"""``super_kernel.log`` files read by the plog scan's child once its scan is done, while this process
parses the other sk_meta files.

Why: after the plog scan, the child only hashes the other artifacts, and a scene whose plogs are small
beside its sk_meta leaves it idle while this process parses sk_meta alone. Reading super_kernel.log
(cutting it into runs, :func:`~skdbg.parsers.sklog_runs.read_super_kernel_log`) is the one sk_meta step
whose result costs little to send: the runs are bytes; on the 2-core test machine the bench model's
15 MB pickle in ~0.009 s and unpickle in ~0.007 s, where the read takes ~0.06 s. The other parses'
records cost as much to unpickle as to parse (bench/README.md), so they stay here. The files' exception
blocks are still parsed here, from the runs.

How: each file is a unit of the work the child shares with this process
(:class:`~skdbg.parsers.plog_fork.ChildWork`), claimed alone, in the order this process reads them, and
before the hashing (:meth:`~skdbg.forkstream.SharedClaims.offer`; the claims pipe carries only which
side takes what, the child's results come through the scan's stream after the plogs): by the child as
soon as its scan is done, or by this process when it comes to the file first
(:class:`~skdbg.parsers.evidence.Evidence` reads a rank's super_kernel.log after its other files, so
the child has the time to take it; with several ranks' sk_meta, where only each rank's exception blocks
are read first, the two go through the files from the first, each taking the next one not taken).
A unit this process claims is read by the reader here as before; one the child claims comes back as
the child read it (equal to a read here: the same function on the same bytes), or as its ParseError,
which the reader here files as its own read's would be (a failed read,
:class:`~skdbg.parsers.common.ReadFailure`, counted here too: :func:`~skdbg.parsers.plog_fork.unpack_error`).
A child lost before it sends a file leaves it to the reader here (:meth:`SkLogsAhead.settle`). Where no
child is forked, nothing here is used: the files are read as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from skdbg.parsers.common import ParseError, drop_tracebacks

if TYPE_CHECKING:
    from skdbg.parsers.plog_fork import ChildWork, PackedError
    from skdbg.parsers.sklog_runs import SkLog

#: a file's outcome: read by the child (its runs), its read's error (packed), read here ahead of its
#: reader (its runs, or the ParseError raised), being read here, taken by its reader, or its reader's to
#: read (claimed here, or the child's read failed otherwise than with a ParseError)
_Outcome = tuple[str, Any]
_HERE: _Outcome = ("here", None)
_TAKEN: _Outcome = ("taken", None)
_READING: _Outcome = ("reading", None)


def _read(path: str) -> _Outcome:
    """The child's read of ``path``: ``("log", runs)``, ``("error", packed ParseError)``, or ``_HERE``
    when it failed otherwise (the reader here then reads it and meets the failure itself)."""
    from skdbg.parsers.plog_fork import pack_error
    from skdbg.parsers.sklog_runs import read_super_kernel_log

    try:
        return ("log", read_super_kernel_log(path))
    except ParseError as exc:
        return ("error", pack_error(exc))
    except Exception:  # noqa: BLE001 - left to the reader here, which meets it as a read here would
        return _HERE


class SkLogsAhead:
    """The super_kernel.log files (``paths``) the child may read for this process: unit ``i`` is
    ``paths[i]``. :meth:`take` gives a reader here what became of its file."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self._index = {p: i for i, p in enumerate(self.paths)}
        self._outcomes: dict[int, _Outcome] = {}
        self._changed = threading.Condition()
        self._settled = False
        #: a unit of the work after the files was claimed here: every file's unit is claimed (they
        #: come first), so a reader has nothing more to claim for its file
        self._files_claimed = False
        #: the last file's unit this process claimed (-1: none): the units before it are all claimed
        self._claimed_here_upto = -1

    def __reduce__(self) -> tuple[type[SkLogsAhead], tuple[list[str]]]:
        """Pickled for a standby child: the paths only (what the child sends back is by unit)."""
        return (SkLogsAhead, (self.paths,))

    def units(self) -> int:
        return len(self.paths)

    def read(self, unit: int) -> _Outcome:
        """In the child: read the file of ``unit``."""
        return _read(self.paths[unit])

    def note(self, unit: int, outcome: _Outcome) -> None:
        """Here: what became of ``unit`` (sent by the child, or claimed here)."""
        with self._changed:
            self._outcomes.setdefault(unit, outcome)
            self._changed.notify_all()

    def claimed_here(self, unit: int) -> None:
        """This process claimed ``unit``: its reader reads the file here (and, the claims going in
        order, every unit before it is claimed)."""
        with self._changed:
            self._claimed_here_upto = max(self._claimed_here_upto, unit)
        self.note(unit, _HERE)

    def all_claimed(self) -> None:
        """Every file's unit is claimed (a unit of the work after them was claimed here)."""
        self._files_claimed = True

    def settle(self) -> None:
        """No outcome will come from the child any more: a reader still waiting reads its file itself."""
        with self._changed:
            self._settled = True
            self._changed.notify_all()

    def _known(self, unit: int) -> bool:
        """The word on ``unit`` is in (or never will be): its reader may go on."""
        got = self._outcomes.get(unit)
        return (got is not None and got is not _READING) or (got is None and self._settled)

    def _read_ahead_here(self, unit: int) -> None:
        """While the word on ``unit`` is awaited, read here the first later file this process claimed and
        no one has read (its reader would read it here anyway, later): the wait is spent on that read.
        A ParseError it raises is kept for that file's reader, who files it then; any other failure
        leaves the file to its reader."""
        from skdbg.parsers.sklog_runs import read_super_kernel_log

        later: int | None = None
        outcome: _Outcome = _HERE
        try:
            with self._changed:
                if self._known(unit):
                    return
                later = next(
                    (j for j, got in sorted(self._outcomes.items()) if j > unit and got is _HERE), None
                )
                if later is None:
                    return
                self._outcomes[later] = _READING
            outcome = ("log_here", read_super_kernel_log(self.paths[later]))
        except ParseError as exc:
            drop_tracebacks(exc)  # kept until its reader files it: without the frames
            outcome = ("raised_here", exc)
        except Exception:  # noqa: BLE001, S110 - its reader reads it and meets the failure
            pass
        finally:  # whatever ended the read (Ctrl-C too), the file is never left marked as being read
            if later is not None:
                with self._changed:
                    self._outcomes[later] = outcome
                    self._changed.notify_all()

    def _may_be_unclaimed(self, unit: int) -> bool:
        """Nothing says yet who has ``unit``: no outcome, the child not done, and no later unit (of a
        file, or of the work after the files) claimed here, which would say it was claimed before."""
        return not (
            unit in self._outcomes or self._settled or self._files_claimed or self._claimed_here_upto > unit
        )

    def take(self, path: str, claim_here: Callable[[], bool]) -> SkLog | ParseError | None:
        """What became of ``path``: the child's read (its runs, or its ParseError, as a read here would
        have raised it), or None for the caller to read it here (claimed here, not offered, or the child
        sent nothing). ``claim_here`` claims the next chunk of the shared work and does it here (False
        when none is left). The files' units come first among the claims, in order, so while
        ``path``'s may still be unclaimed the caller claims chunks: it gets its own unit (then reads the
        file), or an earlier file's (marked for that file's reader, and it claims on), or a later one's
        or a chunk of the work after the files (done here), either of which says its own unit was
        claimed before: then it waits for the word on its file (the child's read, or the mark of the
        thread here that claimed it), or for the child to be done. A failing ``claim_here`` is left to
        the child and to the later readers, as the hashing's helpers leave it. Each outcome is handed
        over once (the runs are not kept here after)."""
        from skdbg.parsers.plog_fork import unpack_error

        unit = self._index.get(path)
        if unit is None:
            return None
        with contextlib.suppress(Exception):  # a failing helper leaves the work to the child
            while self._may_be_unclaimed(unit) and claim_here():
                pass
        self._read_ahead_here(unit)
        with self._changed:
            self._changed.wait_for(lambda: self._known(unit))
            kind, value = self._outcomes.pop(unit, _HERE)
            self._outcomes[unit] = _TAKEN  # a second reader reads the file itself
        if kind in ("log", "log_here"):
            return value  # type: ignore[no-any-return]
        if kind == "error":
            packed: PackedError = value
            return unpack_error(packed)
        if kind == "raised_here":
            return value  # type: ignore[no-any-return]
        return None


class ChildShare:
    """The work the scan's child shares with this process: the super_kernel.log files of ``logs`` (units
    ``0 … len-1``, each claimed alone, first), then the units of ``rest`` (the artifacts' hashing),
    numbered after them. A :class:`~skdbg.parsers.plog_fork.ChildWork`."""

    def __init__(self, logs: SkLogsAhead, rest: ChildWork) -> None:
        from skdbg.parsers.plog_fork import LoadedLater

        self.logs = logs
        #: sent to a standby child as a pickle of its own: the child reads the files without
        #: unpacking it (every artifact of the scene), and unpacks it only if it claims a unit of it
        self.rest = rest if isinstance(rest, LoadedLater) else LoadedLater(rest)

    def units(self) -> int:
        return self.logs.units() + self.rest.units()

    def alone(self) -> int:
        return self.logs.units()

    def compute(self, claimed: Iterable[int]) -> Iterator[object]:
        """In the child: each file claimed, read and sent at once (``("log", unit, outcome)``); then the
        units of ``rest`` it claims, its results as ``("rest", result)``. The files are claimed first
        (each alone, at the head of the claims), so once a unit of ``rest`` is claimed no file is
        left to claim; should one come after all, it is not read here (the reader there reads it)."""
        n = self.logs.units()
        numbers = iter(claimed)
        for k in numbers:
            if k < n:
                yield ("log", k, self.logs.read(k))
                continue
            theirs = (j - n for j in chain((k,), numbers) if j >= n)
            yield from (("rest", result) for result in self.rest.compute(theirs))
            return

    def do_here(self, chunk: Iterable[int]) -> None:
        """Here: a file's unit is marked for its reader (who reads it as before); ``rest``'s are done."""
        n = self.logs.units()
        numbers = list(chunk)
        for k in numbers:
            if k < n:
                self.logs.claimed_here(k)
        theirs = [k - n for k in numbers if k >= n]
        if theirs:
            self.logs.all_claimed()  # (claimed after every file's unit)
            self.rest.do_here(theirs)

    def adopt(self, result: object) -> None:
        """Here: a result the child sent, handed to ``logs`` or to ``rest``."""
        if not isinstance(result, tuple) or not result:
            return
        if result[0] == "log":
            _, unit, outcome = result
            self.logs.note(unit, outcome)
        elif result[0] == "rest":
            self.rest.adopt(result[1])

    def settle(self) -> None:
        """Nothing more will come: readers of either part stop waiting (``logs`` first: its reader
        is this process's main thread, which also waits for the digests later)."""
        try:
            self.logs.settle()
        finally:
            self.rest.settle()
