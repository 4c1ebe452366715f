"""super_kernel.log read ahead by the plog scan's child (parsers/sk_log_ahead.py), in this process: what a
reader gets for each outcome, and how the work shared with the child is numbered, done and handed on.
The forked paths (the child reads, a child lost, a read that fails there) are in tests/test_plog_fork.py."""

from __future__ import annotations

import pickle
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.plog_fork import pack_error
from skdbg.parsers.sk_log_ahead import ChildShare, SkLogsAhead
from skdbg.parsers.sklog_runs import read_super_kernel_log

ROOT = Path(__file__).resolve().parents[1]
(SK_LOG,) = (ROOT / "examples" / "scenes" / "high-single-stream").glob("sk_meta/*/*/super_kernel.log")


class _ClaimedWhenItMustNot(BaseException):
    """Raised by :func:`_never` (not an Exception: ``take`` leaves a failing claim to the child and
    swallows those)."""


def _never() -> bool:
    raise _ClaimedWhenItMustNot("nothing is claimed once the file's outcome is known")


def _reader(logs: SkLogsAhead, path: str, claim: Callable[[], bool]) -> tuple[threading.Thread, list[object]]:
    """A reader of ``path`` in a thread of its own (a daemon: a failing test never hangs the run), and
    the box its result goes to."""
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(logs.take(path, claim)), daemon=True)
    thread.start()
    return thread, done


def _until_waiting(logs: SkLogsAhead, thread: threading.Thread) -> None:
    """Return once ``thread`` waits for an outcome (on the condition ``take`` waits on), however slow
    the machine; fail if it ended instead."""
    deadline = time.monotonic() + 30
    while not logs._changed._waiters:  # type: ignore[attr-defined]  # (CPython's Condition)
        assert thread.is_alive(), "the reader ended instead of waiting"
        assert time.monotonic() < deadline, "the reader never waited"
        time.sleep(0.005)


def _nothing_left() -> bool:
    return False


def test_the_childs_read_is_handed_over_once() -> None:
    ahead = SkLogsAhead([str(SK_LOG)])
    read = ahead.read(0)  # what the child sends
    assert read[0] == "log"
    ahead.note(0, pickle.loads(pickle.dumps(read)))  # through the pipe
    got = ahead.take(str(SK_LOG), _never)
    assert got == read_super_kernel_log(SK_LOG)  # equal to a read here
    assert ahead.take(str(SK_LOG), _never) is None  # a second reader reads it itself


def test_the_childs_parse_error_comes_back_as_that_error() -> None:
    ahead = SkLogsAhead(["/no/such/super_kernel.log"])
    outcome = ahead.read(0)
    assert outcome[0] == "error"
    with pytest.raises(ParseError) as here:
        read_super_kernel_log("/no/such/super_kernel.log")
    ahead.note(0, outcome)
    got = ahead.take("/no/such/super_kernel.log", _never)
    assert isinstance(got, ParseError)
    assert (type(got), str(got), got.args) == (type(here.value), str(here.value), here.value.args)


def test_a_file_not_offered_or_claimed_here_is_read_here() -> None:
    ahead = SkLogsAhead([str(SK_LOG)])
    assert ahead.take("/another/super_kernel.log", _never) is None  # not offered
    share = ChildShare(ahead, _Recorder(0))
    claimed: list[int] = []

    def claim_the_file() -> bool:  # as ForkedPlogScan.help: the next chunk, done here
        if claimed:
            return False
        claimed.append(0)
        share.do_here([0])
        return True

    assert ahead.take(str(SK_LOG), claim_the_file) is None
    assert claimed == [0]


def test_a_reader_waits_for_the_child_then_reads_itself_when_nothing_came() -> None:
    ahead = SkLogsAhead([str(SK_LOG)])
    reader, got = _reader(ahead, str(SK_LOG), _nothing_left)
    _until_waiting(ahead, reader)  # the child has the file: the reader waits for its word
    ahead.settle()  # the child is lost, or ended without sending it
    reader.join(10)
    assert got == [None]


def test_a_non_parse_failure_of_the_childs_read_leaves_the_file_to_the_reader_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import skdbg.parsers.sklog_runs as sklog_runs

    def fails(path: object) -> None:
        raise MemoryError("out of memory")

    monkeypatch.setattr(sklog_runs, "read_super_kernel_log", fails)
    assert SkLogsAhead([str(SK_LOG)]).read(0) == ("here", None)  # the reader here meets it itself


class _Recorder:
    """A :class:`ChildWork` of ``n`` units recording what is asked of it."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.computed: list[int] = []
        self.here: list[int] = []
        self.adopted: list[object] = []
        self.settled = False

    def units(self) -> int:
        return self.n

    def alone(self) -> int:
        return 0

    def compute(self, claimed: Iterable[int]) -> Iterator[object]:
        self.computed = list(claimed)
        yield ("digests", tuple(self.computed))

    def do_here(self, chunk: Iterable[int]) -> None:
        self.here.extend(chunk)

    def adopt(self, result: object) -> None:
        self.adopted.append(result)

    def settle(self) -> None:
        self.settled = True


def test_the_files_come_first_alone_and_the_rest_after_them() -> None:
    logs = SkLogsAhead([str(SK_LOG), "/no/such/super_kernel.log"])
    rest = _Recorder(5)
    share = ChildShare(logs, rest)
    assert (share.units(), share.alone()) == (7, 2)
    results = list(share.compute(iter(range(7))))
    assert [r[:2] for r in results[:2]] == [("log", 0), ("log", 1)]
    assert results[0][2][0] == "log" and results[1][2][0] == "error"
    assert results[2:] == [("rest", ("digests", (0, 1, 2, 3, 4)))]  # rest's own numbers
    # a file claimed after a unit of the rest (never, the files come first) is left to its reader
    rest2 = _Recorder(3)
    late = list(ChildShare(SkLogsAhead([str(SK_LOG)]), rest2).compute(iter([1, 0, 2, 3])))
    assert late == [("rest", ("digests", (0, 1, 2)))]


def test_work_done_here_and_results_adopted_go_to_their_part() -> None:
    logs = SkLogsAhead([str(SK_LOG)])
    rest = _Recorder(4)
    share = ChildShare(logs, rest)
    share.do_here([0, 1, 2])
    assert rest.here == [0, 1]
    assert logs.take(str(SK_LOG), _never) is None  # claimed here: its reader reads it
    share.adopt(("rest", "digests"))
    share.adopt(("log", 0, ("log", "runs")))  # an outcome after the file was taken changes nothing
    share.adopt(None)  # nothing of either
    assert rest.adopted == ["digests"]
    assert logs.take(str(SK_LOG), _never) is None  # still read here, not the late "runs"
    share.settle()
    assert rest.settled is True


def test_a_reader_stops_claiming_once_the_work_after_the_files_is_reached() -> None:
    """A chunk of the hashing claimed here says every file's unit is claimed (they come first): the
    reader then waits for the child's read instead of hashing every chunk left on its own thread."""
    logs = SkLogsAhead([str(SK_LOG)])
    share = ChildShare(logs, _Recorder(100))
    chunks = iter([[1, 2, 3], [4, 5, 6], [7, 8, 9]])  # the file's unit went to the child

    def claim() -> bool:
        share.do_here(next(chunks))
        return True

    reader, done = _reader(logs, str(SK_LOG), claim)
    _until_waiting(logs, reader)  # waiting for the child's read, after one chunk
    assert next(chunks) == [4, 5, 6]  # the second chunk was never claimed
    logs.note(0, ("log", "runs"))
    reader.join(10)
    assert done == ["runs"]


def test_a_reader_claims_past_earlier_files_and_stops_at_a_later_one() -> None:
    """The claims go in order: an earlier file's unit claimed here is marked for its reader and the
    reader claims on; a later file's says its own was claimed before (by the child): it waits."""
    paths = [str(SK_LOG), "/b/super_kernel.log", "/c/super_kernel.log"]
    logs = SkLogsAhead(paths)
    share = ChildShare(logs, _Recorder(3))
    heads = iter([[0], [1]])

    def claim() -> bool:
        share.do_here(next(heads))
        return True

    assert logs.take(paths[1], claim) is None  # unit 0 (marked), then its own: read here
    assert logs.take(paths[0], _never) is None  # unit 0's reader reads it here too
    later = SkLogsAhead(paths)
    share = ChildShare(later, _Recorder(3))
    heads = iter([[2], [3, 4]])
    reader, done = _reader(later, paths[1], claim)
    _until_waiting(later, reader)  # unit 2 claimed here: unit 1 is the child's
    assert next(heads) == [3, 4]  # and only one chunk was claimed
    later.note(1, ("log", "runs"))
    reader.join(10)
    assert done == ["runs"]
    # claimed here on the way, and read while the reader waited (here: no such file): its reader gets
    # what that read raised, as its own read would have
    missing = later.take(paths[2], _never)
    assert isinstance(missing, ParseError)
    assert later.take(paths[2], _never) is None  # a second reader reads it itself


def test_a_waiting_reader_reads_the_later_file_it_claimed() -> None:
    """The reader's own file is the child's: while it waits, it reads the later file it claimed on its
    way (its reader would read it here anyway), and that file's reader gets those runs."""
    paths = ["/a/super_kernel.log", str(SK_LOG)]
    logs = SkLogsAhead(paths)
    share = ChildShare(logs, _Recorder(1))
    heads = iter([[1]])

    def claim() -> bool:
        share.do_here(next(heads))
        return True

    reader, done = _reader(logs, paths[0], claim)
    _until_waiting(logs, reader)
    assert logs._outcomes[1][0] == "log_here"  # read while it waited
    logs.note(0, ("log", "runs"))
    reader.join(10)
    assert done == ["runs"]
    assert logs.take(paths[1], _never) == read_super_kernel_log(SK_LOG)


def test_a_failing_claim_leaves_the_reader_waiting_for_the_child() -> None:
    logs = SkLogsAhead([str(SK_LOG)])
    calls: list[int] = []

    def broken() -> bool:
        calls.append(1)
        raise RuntimeError("a chunk could not be done")

    reader, done = _reader(logs, str(SK_LOG), broken)
    _until_waiting(logs, reader)
    assert calls == [1]  # the failure left the file to the child: it waits
    logs.note(0, ("log", "runs"))
    reader.join(10)
    assert done == ["runs"]


def test_the_shared_work_pickles_to_its_paths() -> None:
    """A standby child gets it pickled: the files by path, no outcome nor lock."""
    logs = SkLogsAhead([str(SK_LOG)])
    logs.note(0, ("here", None))
    logs.settle()
    copy = pickle.loads(pickle.dumps(ChildShare(logs, _PicklableRest())))
    assert copy.logs.paths == [str(SK_LOG)]
    assert (copy.logs._outcomes, copy.logs._settled) == ({}, False)  # nothing of this process's state
    assert copy.logs.read(0)[0] == "log"
    assert copy.units() == 1 + 2


class _PicklableRest(_Recorder):
    def __init__(self) -> None:
        super().__init__(2)


class _CountedRest(_Recorder):
    """A rest whose unpicklings are counted."""

    unpacked = 0

    def __init__(self) -> None:
        super().__init__(2)

    def __setstate__(self, state: dict[str, object]) -> None:
        type(self).unpacked += 1
        self.__dict__.update(state)


def test_a_standby_child_reads_the_files_without_unpacking_the_rest() -> None:
    """The hashing part travels packed (every artifact of a scene): a child that reads only the files
    never unpacks it; its first unit of the hashing does, once."""
    _CountedRest.unpacked = 0
    copy = pickle.loads(pickle.dumps(ChildShare(SkLogsAhead([str(SK_LOG)]), _CountedRest())))
    assert _CountedRest.unpacked == 0  # still packed as it arrives
    assert [r[:2] for r in copy.compute(iter([0]))] == [("log", 0)]
    assert _CountedRest.unpacked == 0
    assert list(copy.compute(iter([1, 2]))) == [("rest", ("digests", (0, 1)))]
    assert _CountedRest.unpacked == 1


def test_pack_error_is_the_one_the_plog_scan_uses() -> None:
    """The child packs a read's error as it packs a plog's (one way for a ParseError across the pipe)."""
    outcome = SkLogsAhead(["/no/such/super_kernel.log"]).read(0)
    with pytest.raises(ParseError) as here:
        read_super_kernel_log("/no/such/super_kernel.log")
    assert outcome == ("error", pack_error(here.value))


def test_every_model_directorys_super_kernel_log_not_read_yet_is_offered_within_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the order an analysis reads them (every rank's, for its exception blocks), those not read
    yet, up to SK_LOGS_AHEAD_BYTES in all but at least the first."""
    import skdbg.parsers.evidence as evidence
    from skdbg.triage.context import open_context

    scene = SK_LOG.parents[3]
    ev = open_context(scene).evidence
    ahead = ev.sk_logs_ahead()
    assert ahead is not None
    assert ahead.paths == [str(p) for p in sorted(scene.glob("sk_meta/*/*/super_kernel.log"))]
    _ = ev.model_evidence[0].handler  # read here
    assert ev.sk_logs_ahead() is None
    many = tmp_path / "scene"
    shutil.copytree(scene, many)
    for pid in ("48214", "48215"):
        shutil.copytree(many / "sk_meta" / "48213", many / "sk_meta" / pid)
    several = open_context(many).evidence
    assert len({m.pid for m in several.models}) == 3
    logs = [str(m.files["super_kernel_log"]) for m in several.models]
    offered = several.sk_logs_ahead()
    assert offered is not None and offered.paths == logs
    _ = several.model_evidence[1].handler  # the second rank's read: the others are still offered
    offered = several.sk_logs_ahead()
    assert offered is not None and offered.paths == [logs[0], logs[2]]
    size = Path(logs[0]).stat().st_size
    monkeypatch.setattr(evidence, "SK_LOGS_AHEAD_BYTES", size)  # room for one file
    offered = several.sk_logs_ahead()
    assert offered is not None and offered.paths == [logs[0]]
    monkeypatch.setattr(evidence, "SK_LOGS_AHEAD_BYTES", 10 * size)
    monkeypatch.setattr(evidence, "SK_LOGS_AHEAD_FILES", 2)  # and so many files at most
    offered = open_context(many).evidence.sk_logs_ahead()  # (none read yet)
    assert offered is not None and offered.paths == logs[:2]
    monkeypatch.setattr(evidence, "SK_LOGS_AHEAD_BYTES", 1)  # the first is offered whatever its size
    offered = several.sk_logs_ahead()
    assert offered is not None and offered.paths == [logs[0]]
