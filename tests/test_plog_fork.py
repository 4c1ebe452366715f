"""The plog scan in a forked child (parsers/plog_fork.py, skdbg/forkstream.py) gives what a scan in
this process gives: the same records, gaps, errors and digests, whatever happens to the child.

Everything that forks runs in a subprocess of its own (``_run``): a pytest process may run threads
(plugins, an earlier test's), and a process may fork only while no other thread runs. Those tests are
skipped where no child can be forked (not Linux, one CPU). The packing itself is tested here, on lines
written by hand in the plog shapes of artifacts.md §1.1 and on the scene builder's plogs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from skdbg.forkstream import available_cpus
from skdbg.parsers.common import ParseError, ReadFailure
from skdbg.parsers.hashbehind import CountingSha256, Sha256Done
from skdbg.parsers.plog import MAX_LINE, PlogRows, ScannedFile
from skdbg.parsers.plog_fork import (
    FORK_MIN_BYTES,
    LoadedLater,
    _do_share,
    pack_scanned,
    scan_files,
    start_forked_plog_scan,
    unpack_scanned,
)
from tests.support.plog_lines import HAND_LINES

ROOT = Path(__file__).resolve().parents[1]

#: a fresh interpreter here may fork a child that computes (Linux, two CPUs, no SKDBG_NO_FORK); the
#: thread condition of can_fork_child holds in the subprocesses ``_run`` starts
forks = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and hasattr(os, "fork") and available_cpus() >= 2),
    reason="no forked child here: not Linux, or one CPU",
)

#: handler lines in the shape the bench scene's plog holds them (§1.5: the SK logger's copy), another
#: pid's fault line (kept apart for F1) and a marker line with no plog prefix (error-manager text)
MORE_LINES = [
    b"[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.635.541 [sk_dfx_exception_handler.cpp:1411]"
    b"[SK][PrintDfxInfo] === SkDfxInfo (offset=6976, nodeCnt=2) ===",
    b"[INFO] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.724 [sk_dfx_exception_handler.cpp:1645]"
    b"[SK][PrintTaskQueue] taskCnt: 2",
    b"[ERROR] RUNTIME(50001,python3):2026-06-10-14:03:21.518.248 [stream.cc:1509]48301 GetError:[INIT]"
    b"[DEFAULT]Stream Synchronize failed, stream_id=2, retCode=0x31, [vector core exception].",
    b"[ERROR] RUNTIME(48213,python3):2026-13-10-14:03:21.518.248 [stream.cc:1509]48301 GetError:"
    b" Stream Synchronize failed, stream_id=2 (a stamp out of range: no datetime)",
    b"The extend info: errcode:(0x800000, 0, 0) errorStr: out of range (no plog prefix)",
]


def _plog_files(tmp_path: Path) -> list[str]:
    """A plog of hand-written lines among plain ones (its last line unterminated), one with a marker
    line over MAX_LINE (a gap), a binary file and a missing one (each a ParseError), a large one."""
    plain = b"[INFO] GE(48213,python3):2026-06-10-14:00:00.000.001 [graph.cc:1]48213 Build: nothing to see\n"
    lines = [plain * 3 + line + b"\n" for line in [*HAND_LINES, *MORE_LINES]]
    a = tmp_path / "plog-48213_20260610140000001.log"
    a.write_bytes(b"".join(lines) + MORE_LINES[0])
    b = tmp_path / "plog-48213_20260610140000002.log"
    b.write_bytes(
        plain + b"[ERROR] RUNTIME(48213,python3): EZ9999 " + b"x" * (MAX_LINE + 10) + b"\n" + HAND_LINES[0]
    )
    c = tmp_path / "plog-48213_20260610140000003.log"
    c.write_bytes(b"\x00\x01\x02 not text\n")
    d = tmp_path / "plog-48213_20260610140000004.log"  # never written: missing
    e = tmp_path / "plog-48213_20260610140000005.log"
    e.write_bytes(plain * (FORK_MIN_BYTES // len(plain) + 1) + b"".join(lines))
    return [str(p) for p in (a, b, c, d, e)]


def _same(a: ScannedFile, b: ScannedFile) -> None:
    """``b`` (a file's scan after packing) holds what ``a`` (the scan here) holds, field by field."""
    assert b.parts == a.parts
    assert b.gaps == a.gaps
    # the fields read of it (each read of a file may move its access time)
    assert [None if s is None else (s.st_ino, s.st_size, s.st_mtime) for s in (a.stat, b.stat)] == [
        None if a.stat is None else (a.stat.st_ino, a.stat.st_size, a.stat.st_mtime)
    ] * 2
    hasher = a.hasher
    assert b.hasher == (
        Sha256Done(hasher.size, hasher.hexdigest()) if isinstance(hasher, CountingSha256) else hasher
    )
    if a.error is None:
        assert b.error is None
    else:
        assert type(b.error) is type(a.error)
        assert str(b.error) == str(a.error)
        assert vars(b.error) == vars(a.error)


def test_a_packed_file_is_the_file_scanned_here(tmp_path: Path) -> None:
    paths = _plog_files(tmp_path)
    here = list(scan_files(paths, CountingSha256))
    assert len(here) == len(paths)
    records = [x for done in here for items, _ in done.parts for x in items]
    assert any(getattr(x, "is_sk", False) for x in records)  # the handler lines are records
    assert any(getattr(x, "ts", 0) is None for x in records)  # and the stamp out of range is one
    assert sum(len(done.gaps) for done in here) == 1  # the over-long marker line
    assert [type(done.error) for done in here].count(type(None)) == 3  # the binary and the missing one
    for done in here:
        _same(done, unpack_scanned(pickle.loads(pickle.dumps(pack_scanned(done)))))


def test_rows_sent_are_the_records_made_here(tmp_path: Path) -> None:
    """A scan asked for rows (the child's) gives the batches the bulk tokenizer takes whole as rows,
    the others as records; unpacked after a pickle, the files are the scan here, record for record,
    records only. One file's lines (handler rows, another pid's fault line, a stamp out of range) are
    all the tokenizer's: its batch travels as rows, and the stamp out of range comes back None."""
    tokenized = tmp_path / "plog-48213_20260610140000006.log"
    tokenized.write_bytes(b"\n".join([MORE_LINES[0], MORE_LINES[3], MORE_LINES[1], MORE_LINES[2]]) + b"\n")
    paths = [*_plog_files(tmp_path), str(tokenized)]
    here = list(scan_files(paths, CountingSha256))
    as_rows = list(scan_files(paths, CountingSha256, rows=True))
    kinds = [type(items) for done in as_rows for items, _ in done.parts]
    assert PlogRows in kinds and list in kinds  # both forms: the odd lines keep the general path
    assert all(flag for done in as_rows for items, flag in done.parts if type(items) is PlogRows)
    assert [type(items) for items, _ in as_rows[-1].parts] == [PlogRows]
    sent = pickle.loads(pickle.dumps([pack_scanned(done) for done in as_rows]))
    assert PlogRows in [type(items) for packed in sent for items, _ in packed[0]]
    back = [unpack_scanned(b) for b in sent]
    assert not any(type(items) is PlogRows for done in back for items, _ in done.parts)
    for a, b in zip(here, back, strict=True):
        _same(a, b)
    assert [r.ts is None for r in back[-1].parts[0][0]] == [False, True, False, False]


def test_the_childs_scan_thread_looks_up_in_small_calls_and_a_scan_here_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's work, run here: its scan thread makes its prefilter lookups at most
    ``_GATHER_UNCONTENDED`` words a call (its lookups seldom wait for the GIL,
    :func:`~skdbg.parsers.plog.uncontended_lookups`), and its files are the scan here; a scan in this
    thread, which never said so, keeps the larger calls."""
    import threading

    import numpy as np

    from skdbg.parsers import plog as plog_mod
    from skdbg.parsers import plog_fork

    monkeypatch.setattr(plog_fork, "one_blas_thread", lambda: None)  # no OPENBLAS_NUM_THREADS here
    kept: list[bool] = []  # the child keeps its freed memory (this process's allocator is left as it is)
    monkeypatch.setattr(plog_fork, "keep_freed_memory", lambda: kept.append(True))
    calls: list[tuple[str, int]] = []
    real_take = np.take

    def take(table: object, words: object, **kwargs: object) -> object:
        if "out" in kwargs:  # a lookup slice (the anchors' choice and the line bounds call it without)
            calls.append((threading.current_thread().name, len(words)))  # type: ignore[arg-type]
        return real_take(table, words, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "take", take)
    paths = _plog_files(tmp_path)  # one file over 1 MiB: lookups of more than 64 K words to make
    values = [item for sent in plog_fork._in_child(paths, None) for item in sent]
    in_child = [n for name, n in calls if name == "skdbg-child-scan"]
    assert in_child and max(in_child) <= plog_mod._GATHER_UNCONTENDED < sum(in_child)
    assert kept == [True]
    sent: list[ScannedFile] = []
    parts: list[tuple[object, bool]] = []  # a file's batches come before it, as the parent files them
    for item in values:
        if item[0] == "p":
            parts.extend((plog_fork._unpack_items(batch), flag) for batch, flag in item[1])
        else:
            sent.append(unpack_scanned(item[1]))
            sent[-1].parts[:0], parts = parts, []
    calls.clear()
    here = list(scan_files(paths, None))
    assert max(n for _, n in calls) > plog_mod._GATHER_UNCONTENDED
    for a, b in zip(here, sent, strict=True):
        _same(a, b)


@pytest.mark.parametrize(("cpus", "in_step"), [(1, True), (2, True), (3, False), (8, False)])
def test_the_childs_scan_hashes_in_step_only_where_a_lane_would_not_have_a_cpu_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpus: int, in_step: bool
) -> None:
    """The child's work, run here, on a machine of ``cpus`` CPUs: with fewer than three its scan
    thread hashes each read itself (:func:`~skdbg.parsers.plog.hash_in_step`: no byte goes through a
    lane), else behind its search in a lane; the digests are the files' either way."""
    import hashlib
    import threading

    from skdbg.parsers import plog as plog_mod
    from skdbg.parsers import plog_fork
    from skdbg.parsers.hashbehind import HashLane

    monkeypatch.setattr(plog_fork, "one_blas_thread", lambda: None)
    monkeypatch.setattr(plog_fork, "keep_freed_memory", lambda: None)
    monkeypatch.setattr(plog_fork, "available_cpus", lambda: cpus)
    stepping: list[str] = []
    real_step = plog_mod.hash_in_step

    def hash_in_step() -> None:
        stepping.append(threading.current_thread().name)
        real_step()

    monkeypatch.setattr(plog_fork, "hash_in_step", hash_in_step)
    fed: list[int] = []
    real_feed = HashLane.feed

    def feed(self: HashLane, hasher: object, data: bytes | memoryview) -> None:
        fed.append(len(data))
        real_feed(self, hasher, data)  # type: ignore[arg-type]

    monkeypatch.setattr(HashLane, "feed", feed)
    paths = _plog_files(tmp_path)  # the last one over 1 MiB: a lane of its own when not in step
    values = [item for sent in plog_fork._in_child(paths, CountingSha256) for item in sent]
    assert stepping == (["skdbg-child-scan"] if in_step else [])
    assert (fed == []) is in_step
    digests = {
        p: unpack_scanned(item[1]).hasher.hexdigest()  # type: ignore[union-attr]
        for p, item in zip(paths, (i for i in values if i[0] == "f"), strict=True)
        if Path(p).exists() and unpack_scanned(item[1]).error is None
    }
    assert digests == {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in digests}
    assert len(digests) == 3  # the two plogs of text lines and the large one (binary, missing: errors)


def test_a_packed_read_failure_keeps_its_class_message_fields_and_cause(tmp_path: Path) -> None:
    failure = ReadFailure("plog-1_2.log", "the whole file", line=17, got="Input/output error")
    failure.__cause__ = OSError(5, "Input/output error")
    done = ScannedFile([], [], None, failure, None)
    back = unpack_scanned(pickle.loads(pickle.dumps(pack_scanned(done))))
    assert type(back.error) is ReadFailure
    assert str(back.error) == "plog-1_2.log:17: expected the whole file, got 'Input/output error'"
    assert (back.error.file, back.error.line, back.error.expected) == ("plog-1_2.log", 17, "the whole file")
    assert isinstance(back.error.__cause__, OSError)
    assert back.error.__cause__.errno == 5


def test_a_read_failure_from_the_child_counts_as_a_failed_read_here() -> None:
    """The child counted its failed read in its own process: unpacked here, it counts here too, so the
    result cache keeps no verdict built without the file (a content error is no failed read)."""
    from skdbg.parsers.fsguard import failed_reads

    failure = pack_scanned(ScannedFile([], [], None, ReadFailure("plog-1_2.log", "the whole file"), None))
    content = pack_scanned(ScannedFile([], [], None, ParseError("plog-1_2.log", "a CANN plog (text)"), None))
    before = failed_reads()
    unpack_scanned(pickle.loads(pickle.dumps(content)))
    assert failed_reads() == before
    unpack_scanned(pickle.loads(pickle.dumps(failure)))
    assert failed_reads() == before + 1


def test_small_plogs_are_scanned_in_this_process(tmp_path: Path) -> None:
    small = tmp_path / "plog-48213_20260610140000001.log"
    small.write_bytes(b"\n".join(HAND_LINES) + b"\n")
    assert start_forked_plog_scan([str(small)], hashed=True) is None


def test_no_fork_when_told_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "plog-48213_20260610140000001.log"
    big.write_bytes(b"x\n" * FORK_MIN_BYTES)
    monkeypatch.setenv("SKDBG_NO_FORK", "1")
    assert start_forked_plog_scan([str(big)], hashed=True) is None


#: for the scripts below: "none" when this process has no child left (all reaped), else "some"
_CHILDREN_LEFT = """
import os as _os


def children_left():
    try:
        _os.waitpid(-1, _os.WNOHANG)
    except ChildProcessError:
        return "none"
    return "some"
"""


def _run(code: str, *, env: dict[str, str] | None = None) -> bytes:
    """``code`` in a fresh interpreter (no other thread: it may fork), after :data:`_CHILDREN_LEFT`;
    its stdout."""
    full = dict(os.environ)
    full.pop("SKDBG_NO_FORK", None)
    full.update(env or {})
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), full.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", _CHILDREN_LEFT + textwrap.dedent(code)],
        capture_output=True,
        env=full,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


@forks
def test_a_stream_gives_the_values_in_order_and_a_lost_child_says_how_many() -> None:
    out = _run(
        """
        import fcntl, json, os
        from skdbg.forkstream import ChildLost, ForkedStream, can_fork_child

        assert can_fork_child()
        got = {}
        try:  # the stream's pipe holds a MiB where the system lets a pipe hold that much
            cap = int(open("/proc/sys/fs/pipe-max-size").read())
        except OSError:
            cap = 0
        with ForkedStream(lambda: iter([1, "two", (3, b"\\x00" * 200_000)])) as s:
            size = fcntl.fcntl(s._pipe.fileno(), fcntl.F_GETPIPE_SZ)
            got["pipe"] = size == 1 << 20 if cap >= 1 << 20 else size >= 4096
            values = list(s)
        got["values"] = [values[0], values[1], values[2][0], len(values[2][1])]

        def failing():
            yield "a"
            yield "b"
            raise RuntimeError("the producer failed")

        try:
            with ForkedStream(failing) as s:
                got["before"] = [v for v in s]
        except ChildLost as lost:
            got["lost_after"] = lost.received

        def killed():
            yield 1
            os._exit(9)

        try:
            with ForkedStream(killed) as s:
                for v in s:
                    pass
        except ChildLost as lost:
            got["killed_after"] = lost.received

        def endless():
            while True:
                yield 0

        with ForkedStream(endless) as s:  # left part-way: close ends the child and reaps it
            next(iter(s))
        got["zombies"] = children_left()
        print(json.dumps(got))
        """
    )
    assert json.loads(out) == {
        "pipe": True,
        "values": [1, "two", 3, 200_000],
        "lost_after": 2,
        "killed_after": 1,
        "zombies": "none",
    }


@forks
def test_a_child_lost_part_way_loses_no_file(tmp_path: Path) -> None:
    paths = _plog_files(tmp_path)
    out = _run(
        f"""
        import os, pickle, sys
        import skdbg.parsers.plog_fork as pf
        from skdbg.parsers.hashbehind import CountingSha256

        paths = {paths!r}
        real = pf._in_child

        def dies_after_two(paths, new_hasher, also=None, claims=None):
            files = 0
            for sent in real(paths, new_hasher, also, claims):
                for item in sent:  # one item a value: the loss comes right after the second file
                    yield [item]
                    files += item[0] == "f"
                    if files == 2:
                        os._exit(9)

        pf._in_child = dies_after_two  # the child runs it: a fork keeps the parent's module state
        scan = pf.start_forked_plog_scan(paths, hashed=True)
        assert scan is not None, "the scan was not forked"
        scanned_here = []
        real_scan = pf.scan_files  # (the child has forked: this process's scans are recorded)

        def recorded(paths, new_hasher):
            scanned_here.append(list(paths))
            return real_scan(paths, new_hasher)

        pf.scan_files = recorded
        forked, quiet = [], []
        for d in scan.files():  # the helper may claim the child's other work once it sends no more
            forked.append(pf.pack_scanned(d))
            quiet.append(scan.quiet_for() == float("inf"))
        assert scanned_here == [paths[2:]], scanned_here  # the child sent two files, then was lost
        assert quiet == [False, False] + [True] * (len(paths) - 2), quiet
        pf.scan_files = real_scan
        here = [pf.pack_scanned(d) for d in pf.scan_files(paths, CountingSha256)]
        sys.stdout.buffer.write(pickle.dumps((forked, here)))
        """
    )
    forked, here = pickle.loads(out)
    assert len(forked) == len(here) == len(paths)
    for a, b in zip(here, forked, strict=True):
        _same(unpack_scanned(a), unpack_scanned(b))


def _large_in_the_middle(tmp_path: Path) -> list[str]:
    """:func:`_plog_files` with the large file (scanned alone: sent in batches) second, its marker
    lines ~80 batches' worth."""
    paths = _plog_files(tmp_path)
    big = Path(paths[-1])
    big.write_bytes(big.read_bytes() + b"".join(MORE_LINES[0] + b"\n" for _ in range(5_000)))
    return [paths[0], paths[-1], *paths[1:-1]]


_RECORDED = """
import os, pickle, sys
import skdbg.parsers.plog_fork as pf
from skdbg.parsers.hashbehind import CountingSha256

paths = {paths!r}
die_after_batches = {die!r}
real = pf._in_child

def one_item_a_value(paths, new_hasher, also=None, claims=None):
    seen = 0
    for sent in real(paths, new_hasher, also, claims):
        for item in sent:
            yield [item]
            seen += item[0] == "p"
            if seen == die_after_batches:
                os._exit(9)  # the large file's batches partly sent

pf._in_child = one_item_a_value  # the child runs it: a fork keeps the parent's module state
scan = pf.start_forked_plog_scan(paths, hashed=True)
assert scan is not None, "the scan was not forked"
# this process's side, recorded from now on (the child has forked)
inside, scanned_here = [], []
real_unpack, real_scan = pf.unpack_scanned, pf.scan_files
pf.unpack_scanned = lambda packed, *rest: inside.append(len(packed[0])) or real_unpack(packed, *rest)
pf.scan_files = lambda paths, new_hasher: scanned_here.append(list(paths)) or real_scan(paths, new_hasher)
forked = [pf.pack_scanned(d) for d in scan.files()]
quiet = scan.quiet_for()  # 0 once the files are filed; without end once the child sent no more
scan.finish()
pf.unpack_scanned, pf.scan_files = real_unpack, real_scan
here = [pf.pack_scanned(d) for d in pf.scan_files(paths, CountingSha256)]
sys.stdout.buffer.write(pickle.dumps((forked, here, inside, scanned_here, quiet)))
"""


@forks
def test_a_forked_scan_gives_every_file_as_scanned_here(tmp_path: Path) -> None:
    """Whole files and a file sent a batch at a time (the large one, scanned alone, between the
    others) come back as the scan here gives them."""
    paths = _large_in_the_middle(tmp_path)
    forked, here, inside, scanned_here, quiet = pickle.loads(_run(_RECORDED.format(paths=paths, die=None)))
    assert len(forked) == len(here) == len(paths)
    for a, b in zip(here, forked, strict=True):
        _same(unpack_scanned(a), unpack_scanned(b))
    assert len(unpack_scanned(forked[1]).parts) > 50
    assert inside[1] == 0  # the large file's whole result came without its batches: they came ahead
    assert scanned_here == []
    assert quiet == 0.0  # every file came from the child: it was never taken for gone


@forks
def test_the_child_sends_the_batches_the_tokenizer_took_as_rows(tmp_path: Path) -> None:
    """What the child sends (watched there, written to a file): the large file's batches and the
    packed files' come as rows where the bulk tokenizer took them, as records elsewhere; here they
    are the scan here's records."""
    paths = _large_in_the_middle(tmp_path)
    seen = tmp_path / "sent.json"
    out = _run(
        f"""
        import json, pickle, sys
        import skdbg.parsers.plog_fork as pf
        from skdbg.parsers.hashbehind import CountingSha256

        real = pf._in_child

        def watched(paths, new_hasher, also=None, claims=None):
            kinds = []
            for sent in real(paths, new_hasher, also, claims):
                for item in sent:
                    batches = item[1] if item[0] == "p" else item[1][0] if item[0] == "f" else []
                    kinds += [type(batch).__name__ for batch, _ in batches]
                yield sent
            with open({str(seen)!r}, "w") as fh:
                json.dump(kinds, fh)

        pf._in_child = watched  # the child runs it: a fork keeps the parent's module state
        scan = pf.start_forked_plog_scan({paths!r}, hashed=True)
        assert scan is not None, "the scan was not forked"
        files = list(scan.files())
        scan.finish()
        as_sent = sorted({{type(batch).__name__ for d in files for batch, _ in d.parts}})
        forked = [pf.pack_scanned(d) for d in files]
        here = [pf.pack_scanned(d) for d in pf.scan_files({paths!r}, CountingSha256)]
        sys.stdout.buffer.write(pickle.dumps((forked, here, as_sent)))
        """
    )
    forked, here, as_filed = pickle.loads(out)
    assert as_filed == ["list"]  # what this process files: records, the rows made records
    for a, b in zip(here, forked, strict=True):
        _same(unpack_scanned(a), unpack_scanned(b))
    kinds = json.loads(seen.read_text())
    assert kinds.count("PlogRows") > 50  # the large file's handler rows, a batch at a time
    assert "list" in kinds  # the batches holding an odd line: records, made there


@forks
def test_a_child_lost_inside_a_file_sent_in_batches_loses_no_line(tmp_path: Path) -> None:
    """The child dies after two batches of the large file: they are dropped, and that file and the
    ones after it are scanned here."""
    paths = _large_in_the_middle(tmp_path)
    forked, here, _, scanned_here, quiet = pickle.loads(_run(_RECORDED.format(paths=paths, die=2)))
    assert scanned_here == [paths[1:]]
    assert quiet == float("inf")  # the child sends no more: this process may claim its other work
    assert len(forked) == len(here) == len(paths)
    for a, b in zip(here, forked, strict=True):
        _same(unpack_scanned(a), unpack_scanned(b))


_ANALYSE = """
import json, os, sys
import skdbg.scene as scene_module
from skdbg.triage.context import check_inputs, open_context, start_reading
from skdbg.triage.engine import analyze_context
from skdbg.triage.jsontext import analysis_json_text

import time

import skdbg.forkstream as forkstream
import skdbg.parsers.evidence as evidence_module
import skdbg.parsers.plog_fork as plog_fork
import skdbg.parsers.scan_child as scan_child
import skdbg.parsers.sk_log_ahead as sk_log_ahead

flags = set(sys.argv[2].split("+"))  # a mode, or several joined by "+"
original_in_child = plog_fork._in_child

# what of the other work it was sent the child unpacked (a standby child only: a file each, named by the
# class unpacked, as the child's process writes them)
loaded_prefix = os.path.join(os.path.dirname(sys.argv[1]), f"loaded-{os.getpid()}-")
real_load = plog_fork.LoadedLater.load


def recording_load(self):
    unpacking = not self.unpacked  # (this process holds the work: only the child unpacks it)
    work = real_load(self)
    if unpacking:
        open(loaded_prefix + type(work).__name__, "w").close()
    return work


def unpacked_in_child():
    import glob

    return sorted(p[len(loaded_prefix):] for p in glob.glob(loaded_prefix + "*"))


plog_fork.LoadedLater.load = recording_load


def until_all_claimed(claims):
    # in the child: wait until this process has claimed every chunk (the claims pipe is empty)
    import array, fcntl, termios

    unread = array.array("i", [0])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        fcntl.ioctl(claims._read, termios.FIONREAD, unread, True)
        if unread[0] == 0:
            return
        time.sleep(0.01)


if "slow-scan" in flags:  # the child scans once this process, waiting for it, claimed all
    real_in_child = plog_fork._in_child

    def scan_after_the_claims(paths, new_hasher, also=None, claims=None):
        until_all_claimed(claims)
        yield from real_in_child(paths, new_hasher, also, claims)

    plog_fork._in_child = scan_after_the_claims
elif sys.argv[2] == "slow-child-hashing":  # the child claims once the readers here claimed all
    real_claimed = forkstream.SharedClaims.claimed

    def claimed_after_the_parent(self):
        until_all_claimed(self)
        yield from real_claimed(self)

    forkstream.SharedClaims.claimed = claimed_after_the_parent
elif sys.argv[2] == "child-dies-at-start":  # as it starts hashing the artifacts, after its scan
    scene_module.ArtifactDigests.compute = lambda self, claimed: os._exit(7)
elif sys.argv[2] == "child-dies-after-plogs":  # every plog sent, the digests never
    real_child = plog_fork._in_child

    def plogs_only(paths, new_hasher, also=None, claims=None):
        yield from real_child(paths, new_hasher, None, None)
        os._exit(7)

    plog_fork._in_child = plogs_only
# what a reader of super_kernel.log got from the work shared with the child: "SkLog" (the child read it),
# "ParseError" (the child's read failed), "None" (this process reads it)
took = []
real_take = sk_log_ahead.SkLogsAhead.take


def recording_take(self, path, claim_here):
    got = real_take(self, path, claim_here)
    took.append(type(got).__name__ if got is not None else "None")
    return got


sk_log_ahead.SkLogsAhead.take = recording_take
read_ahead = []  # the files this process read while it waited for another's
real_read_ahead = sk_log_ahead.SkLogsAhead._read_ahead_here


def read_ahead_units(self):
    with self._changed:  # (the filing thread notes the child's outcomes meanwhile)
        return {j for j, got in self._outcomes.items() if got[0] == "log_here"}


def recording_read_ahead(self, unit):
    before = read_ahead_units(self)
    real_read_ahead(self, unit)
    read_ahead.extend(sorted(read_ahead_units(self) - before))


sk_log_ahead.SkLogsAhead._read_ahead_here = recording_read_ahead
if flags & {"child-reads-sk-log", "child-dies-reading-sk-log"}:
    # the child claims super_kernel.log: nothing here claims before the child's word on it has come
    evidence_module._help_until_ready = lambda forked, load: None

    def take_after_the_child(self, path, claim_here):
        with self._changed:
            self._changed.wait_for(lambda: self._index[path] in self._outcomes or self._settled, 60)
        return recording_take(self, path, claim_here)

    sk_log_ahead.SkLogsAhead.take = take_after_the_child
if "parent-reads-ahead" in flags:
    # a handshake: the child claims the first file and says so (a flag file); this process, asked for that
    # file, waits for the word, then claims the second; the child reads the first only once the second is
    # claimed, so this process, waiting for the first, reads the second meanwhile
    import array
    import fcntl
    import tempfile
    import termios

    flag = os.path.join(tempfile.mkdtemp(), "child-claimed-the-first-file")
    real_read = sk_log_ahead.SkLogsAhead.read
    shared = []
    real_child = plog_fork._in_child

    def unread(claims):
        n = array.array("i", [0])
        fcntl.ioctl(claims._read, termios.FIONREAD, n, True)
        return n[0]

    def keep_claims(paths, new_hasher, also=None, claims=None):
        shared.append(claims)
        yield from real_child(paths, new_hasher, also, claims)

    def read_after_the_parent(self, unit):
        if unit == 0:
            left = unread(shared[0])  # before the word: this process claims nothing until it comes
            open(flag, "w").close()
            deadline = time.monotonic() + 60
            while unread(shared[0]) == left and time.monotonic() < deadline:
                time.sleep(0.01)
        return real_read(self, unit)

    plog_fork._in_child = keep_claims
    sk_log_ahead.SkLogsAhead.read = read_after_the_parent
    evidence_module._help_until_ready = lambda forked, load: None
if "child-dies-reading-sk-log" in flags:  # in the child, once it claimed the file
    sk_log_ahead.SkLogsAhead.read = lambda self, unit: os._exit(7)
if "child-exits-in-its-share" in flags:  # the child's share raises what no `except Exception` stops


    def exits(self, claimed):
        next(iter(claimed))  # a chunk claimed, then the work ends without a result
        raise SystemExit(3)

    scene_module.ArtifactDigests.compute = exits
if "sk-log-read-fails" in flags:  # every read of super_kernel.log fails (here and in the child)
    import skdbg.parsers.fsguard as fsguard

    real_readinto = fsguard._file_readinto

    def failing_readinto(f, buffer):
        if str(getattr(f, "_path", "")).endswith("super_kernel.log"):
            raise OSError(5, "Input/output error")
        return real_readinto(f, buffer)

    fsguard._file_readinto = failing_readinto
standby_used = []
if "standby" in flags:  # as `skdbg analyze` does: the child forked before the scene is opened (and
    # after this harness's patches, which it inherits; a replaced _in_child is sent to it by name)
    if plog_fork._in_child is not original_in_child:
        plog_fork._in_child.__module__, plog_fork._in_child.__qualname__ = plog_fork.__name__, "_in_child"
    real_start = forkstream.StandbyChild.start
    forkstream.StandbyChild.start = lambda self, *a: standby_used.append(1) or real_start(self, *a)
    assert scan_child.prepare_scan_child(sys.argv[1]), "no standby child"
ctx = open_context(sys.argv[1])
start_reading(ctx)  # as `skdbg analyze` does: before the triage stages are imported
if "parent-reads-ahead" in flags:  # and this process asks for the first file once the child claimed it
    take_now = sk_log_ahead.SkLogsAhead.take

    def take_once_the_child_claimed(self, path, claim_here):
        deadline = time.monotonic() + 60
        while self._index[path] == 0 and not os.path.exists(flag) and time.monotonic() < deadline:
            time.sleep(0.01)
        return take_now(self, path, claim_here)

    sk_log_ahead.SkLogsAhead.take = take_once_the_child_claimed
hashed_here = []
real = scene_module._small_digest
scene_module._small_digest = lambda path: hashed_here.append(path) or real(path)
claimed_here = []  # the artifacts this process hashed while it waited for the scan (claimed chunks)
real_do_here = scene_module.ArtifactDigests.do_here


units = []


def recording_do_here(self, chunk):
    units[:] = [self.units()]
    claimed_here.extend(os.path.relpath(self.todo[i].path, sys.argv[1]) for i in chunk)
    return real_do_here(self, chunk)


scene_module.ArtifactDigests.do_here = recording_do_here
check_inputs(ctx)
forked = ctx.evidence.plog_scan_forked
if sys.argv[2] == "slow-child-hashing":  # the plogs are filed before they are asked for: no help then
    time.sleep(1)
_ = ctx.evidence.plogs
text = analysis_json_text(analyze_context(ctx))


def children_left_once_filed():
    # children_left() once the threads that file the child's results (and help with its other work)
    # are done: the filing thread reaps the child, after its last digests
    import threading

    for thread in threading.enumerate():
        if thread.name in ("skdbg-plog-scan", "skdbg-plog-help"):
            thread.join()
    return children_left()


print(json.dumps({
    "forked": forked,
    "sk_rows": sum(len(pe.sk_rows) for pe in ctx.evidence.plogs),
    "standby_used": bool(standby_used),
    "standby_left": len(scan_child._STANDBY),
    "children": children_left_once_filed(),
    "thread_hashed": ctx.scene._hasher is not None,
    "hashed_here": sorted(os.path.relpath(p, sys.argv[1]) for p in hashed_here),
    "claimed_here": claimed_here,
    "units": units[0] if units else None,
    "took": took,
    "read_ahead": read_ahead,
    "read_failed": ctx.read_failed,
    "unpacked_in_child": unpacked_in_child(),
    "analysis": text,
    "gaps": [[g.kind, g.detail] for g in ctx.evidence.gaps],
    "errors": [[role, [str(e) for e in errs]] for role, errs in ctx.evidence.errors.items()],
}))
"""


@pytest.fixture(scope="module")
def big_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built scene whose plog holds over FORK_MIN_BYTES, with a binary rotated plog beside it (its
    error and gap must keep their place among sk_meta's)."""
    from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene

    spec = SceneSpec(
        children=[Kernel(f"Op{i:02d}_{i}") for i in range(12)],
        cores=[FaultCore(30, "AIV", pc=("child", 5), state=("OP_LAUNCHED", 5))],
        noise_lines=12_000,
    )
    root = build_scene(spec, tmp_path_factory.mktemp("big") / "scene").root
    plogs = sorted((root / "log" / "plog").glob("plog-*.log"))
    assert sum(p.stat().st_size for p in plogs) >= FORK_MIN_BYTES
    (plogs[0].parent / (plogs[0].stem[:-3] + "999.log")).write_bytes(b"\x00\x01 not text\n")
    (root / "analyse.py").write_text(_ANALYSE)
    return root


def _analyse(root: Path, mode: str, env: dict[str, str] | None = None) -> dict[str, object]:
    code = (
        f"import runpy, sys; sys.argv = ['x', {str(root)!r}, {mode!r}]; "
        f"runpy.run_path({str(root / 'analyse.py')!r}, init_globals={{'children_left': children_left}})"
    )
    return cast("dict[str, object]", json.loads(_run(code, env=env)))


def _same_output(run: dict[str, object], here: dict[str, object]) -> None:
    """``run`` gave what ``here`` (a run without the child) gave: the analysis, the gaps, the errors."""
    assert run["analysis"] == here["analysis"]
    assert (run["gaps"], run["errors"]) == (here["gaps"], here["errors"])


def _with_and_without_the_child(scene: Path, mode: str) -> tuple[dict[str, object], dict[str, object]]:
    """The harness's run of ``scene`` in ``mode``, and its run without a child (``SKDBG_NO_FORK``)."""
    return _analyse(scene, mode), _analyse(scene, "plain", env={"SKDBG_NO_FORK": "1"})


#: a test run twice: with the child made to read every super_kernel.log, and as it comes (either side)
child_or_either = pytest.mark.parametrize("mode", ["child-reads-sk-log", "plain"])


def _copy_of(scene: Path, factory: pytest.TempPathFactory, name: str) -> Path:
    root = factory.mktemp(name) / "scene"
    shutil.copytree(scene, root)
    return root


@forks
def test_an_analysis_with_the_scan_forked_is_the_analysis_without(big_scene: Path) -> None:
    forked = _analyse(big_scene, "plain")
    here = _analyse(big_scene, "plain", env={"SKDBG_NO_FORK": "1"})
    assert (forked["forked"], here["forked"]) == (True, False)
    # the child's SK handler lines were kept as rows (plog_rows), the scan here made them records
    assert (cast(int, forked["sk_rows"]) > 100, here["sk_rows"]) == (True, 0)
    assert forked["analysis"] == here["analysis"]  # the artifacts' SHA-256, sizes and times too
    assert forked["gaps"] == here["gaps"]
    assert forked["errors"] == here["errors"]
    assert [role for role, _ in here["errors"]][:1] == ["plog"]  # the damage above was met
    _hashed_by_the_child_or_while_waiting(forked)
    assert here["thread_hashed"] is True


def _hashed_by_the_child_or_while_waiting(run: dict[str, object]) -> None:
    """The other artifacts were hashed by the child or by this process in chunks it claimed while it
    waited for the scan, each once, never by a thread here nor on demand (a reader waits for the
    child's digests); but the binary plog: the scan stopped at its first bytes and handed no digest
    over, so G5 hashes it here (as without the fork); and the model source, an artifact only once
    run.json named it (after the child was given the scene's files), hashed here when G5 asks."""
    hashed = cast("list[str]", run["hashed_here"])
    claimed = cast("list[str]", run["claimed_here"])
    assert run["thread_hashed"] is False
    binary = "log/plog/plog-48213_20260610140058999.log"
    assert [p for p in hashed if p.endswith("999.log")] == [binary]
    assert len(hashed) == len(set(hashed))  # no file hashed twice here
    assert set(hashed) - set(claimed) == {binary, "src/model.py"}
    assert len(claimed) == len(set(claimed))  # no chunk claimed twice


@forks
def test_an_analysis_in_a_standby_child_is_the_analysis_without(big_scene: Path) -> None:
    """The child forked before the scene was opened gets the paths and the artifacts to hash pickled,
    and gives what a child forked with them in place gives."""
    standby = _analyse(big_scene, "standby")
    here = _analyse(big_scene, "plain", env={"SKDBG_NO_FORK": "1"})
    assert (standby["forked"], standby["standby_used"], standby["standby_left"]) == (True, True, 0)
    _same_output(standby, here)
    # the child hashed every other artifact (from their pickled paths) but those this process claimed
    _hashed_by_the_child_or_while_waiting(standby)
    assert standby["children"] == "none"


@forks
def test_this_process_hashes_while_it_waits_for_a_slow_scan(big_scene: Path) -> None:
    """The child's scan is slow: this process, waiting for it, claims every chunk of the hashing,
    and the child, once scanned, finds none left; the output is the same."""
    slow = _analyse(big_scene, "slow-scan")
    here = _analyse(big_scene, "plain", env={"SKDBG_NO_FORK": "1"})
    assert slow["forked"] is True
    assert slow["analysis"] == here["analysis"]
    _hashed_by_the_child_or_while_waiting(slow)
    claimed = cast("list[str]", slow["claimed_here"])
    assert len(claimed) == slow["units"]
    assert any(p.endswith(".o") for p in claimed)  # the kernel ELFs too


@forks
def test_a_reader_waiting_for_the_childs_digests_hashes_what_is_unclaimed(big_scene: Path) -> None:
    """The child is slow to start on the other artifacts: the gate's reader, which would only wait,
    claims and hashes them here; the output is the same."""
    late = _analyse(big_scene, "slow-child-hashing")
    here = _analyse(big_scene, "plain", env={"SKDBG_NO_FORK": "1"})
    assert late["forked"] is True
    assert late["analysis"] == here["analysis"]
    _hashed_by_the_child_or_while_waiting(late)
    assert len(cast("list[str]", late["claimed_here"])) == late["units"]


@forks
def test_super_kernel_log_read_by_the_child_gives_the_analysis_without(big_scene: Path) -> None:
    """The child, its scan done, reads the rank's super_kernel.log while this process parses the other
    files; what it sends gives the analysis, gaps and errors of a read here, and is the only read."""
    child, here = _with_and_without_the_child(big_scene, "child-reads-sk-log")
    assert child["forked"] is True
    assert child["took"] == ["SkLog"]
    assert here["took"] == []  # no child: nothing shared, the file read here as before
    _same_output(child, here)
    assert child["children"] == "none"


@forks
def test_super_kernel_log_claimed_here_first_is_read_here(big_scene: Path) -> None:
    """This process claims every unit before the child does (the child claims only then): it reads
    super_kernel.log itself; the output is the same."""
    late, here = _with_and_without_the_child(big_scene, "slow-child-hashing")
    assert late["took"] == ["None"]
    _same_output(late, here)


@forks
def test_a_child_lost_reading_super_kernel_log_leaves_it_to_this_process(big_scene: Path) -> None:
    lost, here = _with_and_without_the_child(big_scene, "child-dies-reading-sk-log")
    assert lost["took"] == ["None"]  # the child sent nothing: read here
    _same_output(lost, here)
    assert len(cast("list[str]", lost["hashed_here"])) > 1  # and its digests: each hashed here when asked


@forks
def test_a_standby_child_reads_super_kernel_log_as_a_child_forked_in_place(big_scene: Path) -> None:
    """The standby child gets the file's path pickled with the rest of its work and reads it the same."""
    standby, here = _with_and_without_the_child(big_scene, "standby+child-reads-sk-log")
    assert (standby["forked"], standby["standby_used"], standby["took"]) == (True, True, ["SkLog"])
    assert "ChildShare" in standby["unpacked_in_child"]  # it unpacked the work it took
    _same_output(standby, here)


@forks
def test_a_standby_child_never_unpacks_work_this_process_claimed_all_of(big_scene: Path) -> None:
    """The scan is slow: this process claims every unit while it waits; the standby child, its scan
    done, finds none left and never unpacks the work (the artifacts it was sent stay a pickle)."""
    slow, here = _with_and_without_the_child(big_scene, "standby+slow-scan")
    assert (slow["forked"], slow["standby_used"], slow["unpacked_in_child"]) == (True, True, [])
    assert slow["took"] == ["None"]  # super_kernel.log read here
    _same_output(slow, here)


@forks
def test_a_failed_read_of_super_kernel_log_in_the_child_keeps_the_verdict_out_of_the_cache(
    big_scene: Path,
) -> None:
    """The child's read fails on the disk: the error is filed here as a read here would file it, and
    counted as a failed read of this process (the result cache keeps no verdict built without it)."""
    child = _analyse(big_scene, "child-reads-sk-log+sk-log-read-fails")
    here = _analyse(big_scene, "sk-log-read-fails", env={"SKDBG_NO_FORK": "1"})
    assert child["took"] == ["ReadFailure"]  # (a ParseError)
    assert child["read_failed"] is True
    assert here["read_failed"] is True
    _same_output(child, here)
    assert "super_kernel_log" in [role for role, _ in here["errors"]]


@forks
def test_a_child_whose_share_ends_with_system_exit_still_ends_its_stream(big_scene: Path) -> None:
    """The child's other work raises SystemExit (no ``except Exception`` stops it): the stream still
    ends, this process stops waiting for the child's results and does the work itself."""
    ended, here = _with_and_without_the_child(big_scene, "child-exits-in-its-share")
    assert ended["forked"] is True
    _same_output(ended, here)
    assert ended["children"] == "none"


@pytest.fixture(scope="module")
def three_ranks_scene(big_scene: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``big_scene`` with two more ranks' sk_meta (copies): an analysis reads each one's exception blocks."""
    root = _copy_of(big_scene, tmp_path_factory, "three-ranks")
    (rank,) = (root / "sk_meta").iterdir()
    for pid in (int(rank.name) + 1, int(rank.name) + 2):
        shutil.copytree(rank, rank.parent / str(pid))
    return root


@forks
@child_or_either
def test_several_ranks_super_kernel_logs_shared_with_the_child_give_the_analysis_without(
    three_ranks_scene: Path, mode: str
) -> None:
    """Each rank's super_kernel.log is read by whichever side comes to it first (forced: the child, all
    three); the analysis, gaps and errors are those of a run without the child."""
    forked, here = _with_and_without_the_child(three_ranks_scene, mode)
    assert forked["forked"] is True
    if mode == "child-reads-sk-log":
        assert forked["took"] == ["SkLog", "SkLog", "SkLog"]
    else:
        assert len(cast("list[str]", forked["took"])) == 3
    _same_output(forked, here)
    assert forked["children"] == "none"


@forks
def test_a_reader_waiting_for_the_child_reads_the_next_rank_meanwhile(three_ranks_scene: Path) -> None:
    """The child has the first rank's file; this process, waiting for it, claims the second and reads it
    meanwhile; the third goes to whichever side comes first. The output is that of a run without the child."""
    ahead, here = _with_and_without_the_child(three_ranks_scene, "parent-reads-ahead")
    assert ahead["forked"] is True
    assert cast("list[str]", ahead["took"])[:2] == ["SkLog", "SkLog"]  # the child's, then read ahead here
    assert ahead["read_ahead"] == [1]
    _same_output(ahead, here)
    assert ahead["children"] == "none"


@pytest.fixture(scope="module")
def binary_sk_log_scene(big_scene: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``big_scene`` with a super_kernel.log that is not text (its read raises a ParseError)."""
    root = _copy_of(big_scene, tmp_path_factory, "binary-sk-log")
    (log,) = root.glob("sk_meta/*/*/super_kernel.log")
    log.write_bytes(b"\x00\x01\x02 not a log\n" * 4)
    return root


@forks
@child_or_either
def test_a_super_kernel_log_the_child_cannot_read_is_filed_as_a_read_here(
    binary_sk_log_scene: Path, mode: str
) -> None:
    """The child's read fails with a ParseError: it comes back as that error, and is filed where and as
    this process's read's would be (an unreadable-file gap, the CLI's error)."""
    forked, here = _with_and_without_the_child(binary_sk_log_scene, mode)
    if mode == "child-reads-sk-log":
        assert forked["took"] == ["ParseError"]
    _same_output(forked, here)
    roles = [role for role, _ in here["errors"]]
    assert "super_kernel_log" in roles  # the damage was met
    assert any(kind == "unreadable" and "super_kernel.log" in detail for kind, detail in here["gaps"])


@forks
def test_claims_are_shared_with_a_child_each_number_once() -> None:
    """This process and a child (forked, and a standby child given the claims pickled) claim from the
    same chunks at the same time: between them every number once."""
    out = _run(
        """
        import json
        from skdbg.forkstream import ForkedStream, SharedClaims, StandbyChild

        def claim_all(claims):
            yield list(claims.claim())  # one chunk first: the parent claims only once it has it
            yield list(claims.claimed())

        got = {}
        for how in ("forked", "standby"):
            claims = SharedClaims()
            standby = StandbyChild(lambda: None) if how == "standby" else None
            claims.offer(100_000)
            if standby is None:
                stream = ForkedStream(lambda: claim_all(claims))
            else:
                stream = standby.start(claim_all, claims)
            values = iter(stream)
            theirs = next(values)
            mine = list(claims.claimed())
            theirs += next(values)
            stream.drain()
            stream.close()
            claims.close()
            got[how] = [sorted(mine + theirs) == list(range(100_000)), len(theirs) > 0]
        got["children"] = children_left()
        print(json.dumps(got))
        """
    )
    assert json.loads(out) == {"forked": [True, True], "standby": [True, True], "children": "none"}


class _CountedWork:
    """A :class:`ChildWork` whose unpicklings are counted (at module level, so it pickles)."""

    loads = 0

    def __init__(self, n: int) -> None:
        self.n = n

    def __setstate__(self, state: dict[str, int]) -> None:
        type(self).loads += 1
        self.__dict__.update(state)

    def units(self) -> int:
        return self.n

    def alone(self) -> int:
        return 0

    def compute(self, claimed: Iterable[int]) -> Iterator[list[int]]:
        yield sorted(claimed)

    def do_here(self, chunk: Iterable[int]) -> None:
        pass

    def adopt(self, result: object) -> None:
        pass

    def settle(self) -> None:
        pass


def test_the_work_a_standby_child_shares_is_loaded_only_when_some_is_left() -> None:
    """As a standby child gets it (pickled inside its work), the other work stays a pickle until the
    child comes to it with some unit unclaimed: when this process claimed them all, it is never loaded."""
    from skdbg.forkstream import SharedClaims

    later = pickle.loads(pickle.dumps(LoadedLater(_CountedWork(6))))
    _CountedWork.loads = 0
    taken, open_ = SharedClaims(), SharedClaims()
    try:
        taken.offer(6)
        while taken.claim() is not None:  # the other process took every chunk first
            pass
        assert list(_do_share(later, taken)) == []
        assert _CountedWork.loads == 0
        open_.offer(6)
        assert list(_do_share(later, open_)) == [[0, 1, 2, 3, 4, 5]]
        assert _CountedWork.loads == 1
        assert later.load().n == 6 and _CountedWork.loads == 1  # loaded once
        again = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(LoadedLater(_CountedWork(4))))))
        assert again.load().n == 4  # pickled again before it was loaded: the same work
    finally:
        taken.close()
        open_.close()


def test_claims_say_whether_a_chunk_is_left() -> None:
    from skdbg.forkstream import SharedClaims

    claims = SharedClaims()
    assert claims.pending() is False  # nothing offered
    claims.offer(10)
    assert claims.pending() is True
    while claims.claim() is not None:
        pass
    assert claims.pending() is False
    claims.offer(3)
    claims.close()
    assert claims.pending() is False  # closed: nothing to claim here


def test_claims_hand_out_each_number_once_in_bounded_chunks() -> None:
    from skdbg.forkstream import SharedClaims

    claims = SharedClaims()
    assert claims.claim() is None  # nothing offered yet
    claims.offer(0)
    assert claims.claim() is None
    claims.offer(10_000)
    chunks = []
    while (chunk := claims.claim()) is not None:
        chunks.append(chunk)
    assert [n for c in chunks for n in c] == list(range(10_000))
    assert len(chunks) <= claims.max_chunks
    assert claims.max_chunks >= 64
    small = SharedClaims()
    small.offer(3)
    assert [list(c) for c in iter(small.claim, None)] == [[0], [1], [2]]
    small.close()
    small.close()  # a second close does nothing
    assert small.claim() is None  # closed: nothing to claim
    claims.close()


def test_units_offered_alone_come_first_each_in_a_chunk_of_its_own() -> None:
    from skdbg.forkstream import SharedClaims

    claims = SharedClaims()
    claims.offer(10_000, alone=2)
    chunks = list(iter(claims.claim, None))
    assert [list(c) for c in chunks[:2]] == [[0], [1]]
    assert [n for c in chunks for n in c] == list(range(10_000))
    assert len(chunks) <= claims.max_chunks
    assert len(chunks[2]) > 1  # the rest still in chunks of several
    claims.close()
    few = SharedClaims()
    few.offer(2, alone=5)  # more asked alone than offered: each alone
    assert [list(c) for c in iter(few.claim, None)] == [[0], [1]]
    few.close()
    many = SharedClaims()
    many.offer(5 * many.max_chunks, alone=10 * many.max_chunks)  # the records still fit one write
    got = list(iter(many.claim, None))
    assert len(got) == many.max_chunks
    assert [n for c in got for n in c] == list(range(5 * many.max_chunks))
    many.close()


@forks
@pytest.mark.parametrize("mode", ["child-dies-at-start", "child-dies-after-plogs"])
def test_a_child_lost_before_its_digests_leaves_them_to_this_process(big_scene: Path, mode: str) -> None:
    lost = _analyse(big_scene, mode)
    here = _analyse(big_scene, "plain", env={"SKDBG_NO_FORK": "1"})
    assert lost["forked"] is True
    _same_output(lost, here)
    assert len(cast("list[str]", lost["hashed_here"])) > 1  # each artifact hashed here when first asked for


@forks
def test_a_ctrl_c_at_the_fork_runs_nothing_of_the_parent_in_the_child() -> None:
    """A SIGINT that reaches the child as it starts is dropped there: the child never raises
    KeyboardInterrupt through the parent's frames (their ``finally`` blocks, atexit, a flush of the
    parent's output buffers), and the parent gets every value."""
    out = _run(
        """
        import atexit, json, os, signal, sys
        from skdbg.forkstream import ForkedStream

        real_fork = os.fork

        def fork_then_interrupt():
            pid = real_fork()
            if pid == 0:
                os.kill(os.getpid(), signal.SIGINT)  # delivered as soon as the child unblocks it
            return pid

        os.fork = fork_then_interrupt
        atexit.register(lambda: print("atexit ran in", "child" if os.getpid() != parent else "parent"))
        parent = os.getpid()
        sys.stdout.write("buffered before the fork; ")
        try:
            with ForkedStream(lambda: iter([1, 2, 3])) as s:
                values = list(s)
        finally:
            print(json.dumps(values))
        """
    )
    assert out.decode() == "buffered before the fork; [1, 2, 3]\natexit ran in parent\n"


def test_a_digest_handed_over_after_an_error_does_not_replace_it(tmp_path: Path) -> None:
    """The first answer stands: an artifact that could not be read when G5 asked keeps its error, even
    if a digest of it arrives later (the child read it before it changed), so no output lists a
    SHA-256 for a file the gate said could not be hashed."""
    from skdbg.scene import Artifact

    elf = tmp_path / "kernel.o"
    elf.mkdir()  # replaced by a directory after the child hashed it
    artifact = Artifact(kind="bin_file", path=elf, root=tmp_path)
    with pytest.raises(ParseError) as first:
        artifact.digest()
    artifact.remember_digest(4, "ab" * 32, 1.0)
    with pytest.raises(ParseError) as again:
        artifact.digest()
    assert again.value is first.value


@forks
def test_a_scan_nobody_can_file_ends_its_child(tmp_path: Path) -> None:
    """When the thread that files the child's results cannot start (no thread to be had, Ctrl-C at that
    moment), the error reaches the caller and the child is ended and reaped at once, not left writing
    into a pipe no one reads until the process ends."""
    paths = _plog_files(tmp_path)
    out = _run(
        f"""
        import json, os
        import skdbg.parsers.background as background
        import skdbg.parsers.plog_fork as pf
        from skdbg.scene import evidence_for, open_scene

        def no_thread(self, *args, **kwargs):
            raise RuntimeError("can't start new thread")

        background.BackgroundLoad.__init__ = no_thread
        started = []
        real = pf.start_forked_plog_scan
        pf.start_forked_plog_scan = lambda *a, **k: started.append(real(*a, **k)) or started[-1]
        got = {{}}
        ev = evidence_for(open_scene({str(tmp_path)!r}))  # the plogs of _plog_files
        assert len(ev.plog_files) == {len(paths) - 1}, ev.plog_files  # all but the missing one
        try:
            ev.start_plog_scan()
        except RuntimeError as exc:
            got["error"] = str(exc)
        got["forked"] = started[0] is not None
        got["children"] = children_left()
        print(json.dumps(got))
        """
    )
    assert json.loads(out) == {"error": "can't start new thread", "forked": True, "children": "none"}


@forks
def test_a_standby_child_gets_ready_then_streams_the_work_it_is_sent() -> None:
    """``ready`` runs in the child before the work (even when it fails, the work still runs); an
    argument larger than a pipe holds goes through; work that never arrives is a lost child; a
    dismissed child is ended and reaped; the work is sent once."""
    out = _run(
        """
        import fcntl, json, os
        from skdbg.forkstream import ChildLost, StandbyChild

        import time

        READY = {}

        def ready():
            READY["pid"] = os.getpid()

        def slow_ready():
            time.sleep(2)
            ready()

        def not_ready():
            raise ImportError("no such module")

        def work(big, n):
            yield READY.get("pid") == os.getpid()  # ready ran, and in this very process
            yield len(big)
            yield from range(n)

        got = {}
        child = StandbyChild(slow_ready)
        try:  # the work pipe holds a MiB where the system lets a pipe hold that much
            cap = int(open("/proc/sys/fs/pipe-max-size").read())
        except OSError:
            cap = 0
        size = fcntl.fcntl(child._work, fcntl.F_GETPIPE_SZ)
        got["pipe"] = size == 1 << 20 if cap >= 1 << 20 else size >= 4096
        began = time.monotonic()
        stream = child.start(work, b"x" * 3_000_000, 3)  # read by the child while it gets ready
        got["sent_before_ready"] = time.monotonic() - began < 1.0
        got["values"] = list(stream)
        try:
            child.start(work, b"", 0)
        except RuntimeError as exc:
            got["again"] = str(exc)
        got["after_failed_ready"] = list(StandbyChild(not_ready).start(work, b"ab", 1))
        lost = StandbyChild(ready)  # its work goes astray (the pipe is swapped for /dev/null)
        os.close(lost._work)
        lost._work = os.open(os.devnull, os.O_WRONLY)
        try:
            got["astray"] = list(lost.start(work, b"", 0))
        except ChildLost as exc:
            got["astray"] = exc.received
        lost.dismiss()
        idle = StandbyChild(ready)
        idle.dismiss()
        idle.dismiss()  # a second dismiss does nothing
        got["children"] = children_left()
        print(json.dumps(got))
        """
    )
    assert json.loads(out) == {
        "pipe": True,
        "sent_before_ready": True,
        "values": [True, 3_000_000, 0, 1, 2],
        "again": "a standby child's work is sent once",
        "after_failed_ready": [False, 2, 0],
        "astray": 0,  # lost with nothing received: never a finished stream of no values
        "children": "none",
    }


def _small_scene_with_a_large_log(tmp_path: Path, plogs: bool) -> Path:
    """A bundled scene whose plogs are small (or gone), beside a large ``*.log`` that is no plog: the
    guess of :func:`logs_reach` says fork, the scan then does not (or there is none)."""
    import shutil

    root = tmp_path / "scene"
    shutil.copytree(ROOT / "examples" / "scenes" / "high-single-stream", root)
    if not plogs:
        for p in root.rglob("plog-*.log"):
            p.unlink()
    (root / "notes.log").write_bytes(b"a note that is no plog line\n" * (FORK_MIN_BYTES // 20))
    return root


@forks
@pytest.mark.parametrize("plogs", [True, False], ids=["small-plogs", "no-plog"])
def test_analyze_ends_a_standby_child_no_scan_took(tmp_path: Path, plogs: bool) -> None:
    root = _small_scene_with_a_large_log(tmp_path, plogs)
    out = _run(
        f"""
        import contextlib, io, json
        import skdbg.parsers.scan_child as pf
        from skdbg.cli import main

        import skdbg.triage.context as context

        prepared, at_check = [], []
        real = pf.prepare_scan_child
        pf.prepare_scan_child = lambda *a: prepared.append(real(*a)) or prepared[-1]
        real_check = context.check_inputs

        def check_inputs(ctx):  # the scene is open, the scan started or not: no standby child left
            at_check.append([len(pf._STANDBY), children_left()])
            return real_check(ctx)

        context.check_inputs = check_inputs
        with contextlib.redirect_stdout(io.StringIO()) as text:
            main(["analyze", {str(root)!r}, "--no-cache", "--format", "json"], standalone_mode=False)
        print(json.dumps({{
            "prepared": prepared,
            "at_check": at_check,
            "left": len(pf._STANDBY),
            "children": children_left(),
            "verdict": json.loads(text.getvalue())["verdict"]["rule"],
        }}))
        """
    )
    got = json.loads(out)
    assert (got["prepared"], got["at_check"], got["left"], got["children"]) == (
        [True],
        [[0, "none"]],
        0,
        "none",
    )
    plain = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "analyze", str(root), "--no-cache", "--format", "json"],
        capture_output=True,
        env={**os.environ, "SKDBG_NO_FORK": "1"},
        check=True,
    )
    assert got["verdict"] == json.loads(plain.stdout)["verdict"]["rule"]


def test_a_usage_error_is_refused_before_a_standby_child_is_forked(tmp_path: Path) -> None:
    """``--skew -1`` on a scene whose logs would fork the scan's standby child: exit 2, and the child
    was never prepared. A valid run then forks it before the triage options' module is loaded (the
    options are checked before the fork, their module loaded after it: the child starts sooner)."""
    root = _small_scene_with_a_large_log(tmp_path, True)
    out = _run(
        f"""
        import contextlib, io, json, sys
        import skdbg.parsers.scan_child as pf
        from skdbg.cli import main

        prepared, loaded = [], []
        real = pf.prepare_scan_child

        def prepare(*a):
            loaded.append("skdbg.triage.context" in sys.modules)
            prepared.append(real(*a))
            return prepared[-1]

        pf.prepare_scan_child = prepare
        import click

        try:
            main(["analyze", {str(root)!r}, "--no-cache", "--skew", "-1"], standalone_mode=False)
            code, message = 0, ""
        except click.ClickException as exc:
            code, message = exc.exit_code, exc.format_message()
        refused = {{"code": code, "prepared": list(prepared), "children": children_left(), "err": message}}
        with contextlib.redirect_stdout(io.StringIO()):
            main(["analyze", {str(root)!r}, "--no-cache", "--format", "json"], standalone_mode=False)
        print(json.dumps({{"refused": refused, "prepared": prepared, "loaded": loaded,
                           "children": children_left()}}))
        """
    )
    got = json.loads(out)
    refused = got["refused"]
    assert (refused["code"], refused["prepared"], refused["children"]) == (2, [], "none")
    assert "'--skew'" in refused["err"] and "expected a finite number of seconds" in refused["err"]
    assert (got["prepared"], got["loaded"], got["children"]) == ([True], [False], "none")


def test_the_logs_guess_counts_logs_outside_sk_meta_and_stops_at_the_size(tmp_path: Path) -> None:
    from skdbg.parsers.scan_child import logs_reach

    (tmp_path / "sk_meta" / "123").mkdir(parents=True)
    (tmp_path / "sk_meta" / "123" / "super_kernel.log").write_bytes(b"x" * 5000)  # not counted
    (tmp_path / "log" / "plog").mkdir(parents=True)
    (tmp_path / "log" / "plog" / "plog-1_20260101000000001.log").write_bytes(b"x" * 600)
    (tmp_path / "kernel.o").write_bytes(b"x" * 5000)  # not a log
    assert logs_reach(tmp_path, 600)
    assert not logs_reach(tmp_path, 601)
    (tmp_path / "run.log").write_bytes(b"x" * 400)
    assert logs_reach(tmp_path, 1000)
    outside = tmp_path.parent / (tmp_path.name + "-elsewhere")
    outside.mkdir()
    (outside / "big.log").write_bytes(b"x" * 5000)
    (tmp_path / "linked").symlink_to(outside, target_is_directory=True)  # a folder link: not followed
    assert not logs_reach(tmp_path, 1001)
    assert not logs_reach(tmp_path / "missing", 1)


def test_the_logs_guess_looks_no_further_than_it_must(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skdbg.parsers.scan_child as scan_child

    for i in range(5):
        (tmp_path / f"rank{i}").mkdir()
        (tmp_path / f"rank{i}" / "plog-1_20260101000000001.log").write_bytes(b"x" * 100)
    opened: list[str] = []
    real = os.scandir
    monkeypatch.setattr(scan_child.os, "scandir", lambda path: opened.append(path) or real(path))
    assert scan_child.logs_reach(tmp_path, 100)  # the first rank's log is enough
    assert len(opened) == 2  # the scene, then one rank folder
    opened.clear()
    monkeypatch.setattr(scan_child, "MAX_ENTRIES", 3)
    assert not scan_child.logs_reach(tmp_path, 500)  # past three entries the answer is no
    assert len(opened) == 1


def test_the_digests_a_standby_child_gets_are_those_of_the_same_artifacts(tmp_path: Path) -> None:
    """A pickled :class:`ArtifactDigests` (what a standby child gets) hashes the same files and gives
    the digests the original would, by the same indices."""
    from skdbg.scene import open_scene

    root = ROOT / "examples" / "scenes" / "high-single-stream"
    original = open_scene(root).digests_in_child()
    copy = pickle.loads(pickle.dumps(original))
    assert [(a.kind, a.path, a.root) for a in copy.todo] == [(a.kind, a.path, a.root) for a in original.todo]
    assert len(copy.todo) > 5
    everything = range(original.units())
    results = list(original.compute(everything))
    assert len(results) == 1  # one result: every digest at once
    assert len(results[0]) == len(original.todo)
    assert list(copy.compute(everything)) == results


def test_a_standby_childs_digests_make_no_artifact_and_skip_what_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy a standby child gets hashes by the paths' text: it makes no :class:`Artifact` for the
    two thousand ELFs it hashes, gives each readable file's size, SHA-256 and mtime by index, and leaves
    out a file it cannot read (a missing one here; its reader here meets the error). Asked for its
    artifacts, it still gives the same ones as the original."""
    import skdbg.scene as scene_mod
    from skdbg.scene import open_scene

    root = tmp_path / "scene"
    shutil.copytree(ROOT / "examples" / "scenes" / "high-single-stream", root)
    original = open_scene(root).digests_in_child()
    sent = pickle.dumps(original)
    gone = original.todo[2].path
    gone.unlink()
    made: list[str] = []
    real_artifact = scene_mod.Artifact

    class Counting(real_artifact):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(str(args[1]))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(scene_mod, "Artifact", Counting)
    copy = pickle.loads(sent)
    assert copy.units() == original.units()
    [digests] = list(copy.compute(range(copy.units())))
    assert made == []
    assert [i for i, *_ in digests] == [i for i in range(original.units()) if i != 2]
    for i, size, sha256, mtime in digests:
        path = original.todo[i].path
        data = path.read_bytes()
        assert (size, sha256, mtime) == (len(data), hashlib.sha256(data).hexdigest(), path.stat().st_mtime)
    monkeypatch.setattr(scene_mod, "Artifact", real_artifact)
    assert [(a.kind, a.path, a.root) for a in copy.todo] == [(a.kind, a.path, a.root) for a in original.todo]


@forks
def test_work_a_standby_child_cannot_get_keeps_the_scan_here(tmp_path: Path) -> None:
    """``also`` that does not pickle: the standby child is ended, the scan runs in this process."""
    paths = _plog_files(tmp_path)
    out = _run(
        f"""
        import json, threading
        import skdbg.parsers.plog_fork as pf
        import skdbg.parsers.scan_child as sc

        class Unpicklable:
            lock = None

            def __init__(self):
                self.lock = threading.Lock()

            def units(self):
                return 1

            def alone(self):
                return 0

            def compute(self, claimed):
                return ()

        assert sc.prepare_scan_child({str(tmp_path)!r})
        scan = pf.start_forked_plog_scan({paths!r}, hashed=True, also=Unpicklable())
        print(json.dumps({{"scan": scan is None, "left": len(sc._STANDBY), "children": children_left()}}))
        """
    )
    assert json.loads(out) == {"scan": True, "left": 0, "children": "none"}


@forks
def test_a_stream_that_ends_short_of_the_files_has_the_rest_scanned_here(tmp_path: Path) -> None:
    paths = _plog_files(tmp_path)
    out = _run(
        f"""
        import pickle, sys
        import skdbg.parsers.plog_fork as pf
        from skdbg.parsers.hashbehind import CountingSha256

        real = pf._in_child

        def first_file_only(paths, new_hasher, also=None, claims=None):  # then a clean end
            for sent in real(paths, new_hasher, also, claims):
                ends = [i for i, item in enumerate(sent) if item[0] == "f"]
                if ends:
                    yield sent[: ends[0] + 1]  # up to the first whole file: then no more
                    return
                yield sent

        pf._in_child = first_file_only
        scan = pf.start_forked_plog_scan({paths!r}, hashed=True)
        assert scan is not None, "the scan was not forked"
        forked = [pf.pack_scanned(d) for d in scan.files()]
        scan.finish()
        here = [pf.pack_scanned(d) for d in pf.scan_files({paths!r}, CountingSha256)]
        sys.stdout.buffer.write(pickle.dumps((forked, here, children_left())))
        """
    )
    forked, here, children = pickle.loads(out)
    assert len(forked) == len(here) == len(paths)
    for a, b in zip(here, forked, strict=True):
        _same(unpack_scanned(a), unpack_scanned(b))
    assert children == "none"


@forks
def test_analyze_refusing_a_scene_leaves_no_standby_child(tmp_path: Path) -> None:
    root = _small_scene_with_a_large_log(tmp_path, True)
    (root / "run.json").write_text("{ not json")
    out = _run(
        f"""
        import json
        import skdbg.parsers.scan_child as sc
        from skdbg.cli import main

        prepared = []
        real = sc.prepare_scan_child
        sc.prepare_scan_child = lambda *a: prepared.append(real(*a)) or prepared[-1]
        try:
            main(["analyze", {str(root)!r}, "--no-cache", "--format", "json"])
        except SystemExit as exc:
            code = exc.code
        left = len(sc._STANDBY)
        print(json.dumps({{"code": code, "prepared": prepared, "left": left, "children": children_left()}}))
        """
    )
    assert json.loads(out) == {"code": 3, "prepared": [True], "left": 0, "children": "none"}
