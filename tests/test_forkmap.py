"""skdbg.forkmap: the ordered map over forked workers (its fork path runs in a clean child interpreter:
the test process itself runs pytest-xdist's threads, where the map rightly stays in the process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skdbg import forkmap
from skdbg.forkmap import OrderedMap, process_count

REPO = Path(__file__).resolve().parents[1]


def test_process_count_follows_jobs_and_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkmap, "available_cpus", lambda: 6)
    assert process_count(3, 100, min_items_per_process=32) == 3  # the user's number, whatever the work
    assert process_count(4, 2, min_items_per_process=32) == 2  # never more processes than items
    assert process_count(1, 500, min_items_per_process=32) == 1
    assert process_count(0, 500, min_items_per_process=32) == 6  # one per CPU
    assert process_count(0, 100, min_items_per_process=32) == 3  # each gets 32 items at least
    assert process_count(0, 40, min_items_per_process=32) == 1  # too little to split
    monkeypatch.setattr(forkmap, "available_cpus", lambda: 64)
    assert process_count(0, 100_000, min_items_per_process=32) == forkmap.MAX_AUTO_PROCESSES
    with pytest.raises(ValueError, match="jobs must be 0"):
        process_count(-1, 10, min_items_per_process=1)


def test_chunks_keep_the_order_and_cover_every_item() -> None:
    items = list(range(23))
    for count in (1, 2, 5, 8, 23, 40):
        parts = forkmap._chunks(items, count)
        assert [x for p in parts for x in p] == items
        assert all(parts) and len(parts) == min(count, len(items))
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


def _double(context: int, item: int) -> int:
    return item * context


def test_a_process_with_threads_maps_in_place() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        with OrderedMap(_double, 3, list(range(10)), processes=4) as results:
            assert (results.processes, results.workers) == (1, 0)  # a fork would copy the thread's locks
            assert list(results) == [3 * i for i in range(10)]
    finally:
        stop.set()
        t.join()


_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from skdbg.forkmap import OrderedMap, WorkerTraceback

    PARENT = os.getpid()

    def work(context, item):
        here = os.getpid() == PARENT
        time.sleep(context["parent_delay"] if here else context["worker_delay"])
        if item == context["fail_at"]:
            raise ValueError(f"item {item} is bad")
        if item >= context["die_at"] >= 0 and not here:
            open(context["died"], "w").close()
            os._exit(7)  # a worker killed mid-chunk
        return [item * 2, not here]

    context = json.loads(sys.argv[1])
    if context["fail_fork_at"] or context["sigint_at_fork"]:
        import errno, signal
        real_fork, forks = os.fork, []

        def fork():
            forks.append(1)
            if len(forks) == context["fail_fork_at"]:
                raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
            return real_fork()

        os.fork = fork
        if context["sigint_at_fork"]:  # a Ctrl-C while the workers are forked
            os.register_at_fork(before=lambda: len(forks) == 1 and os.kill(PARENT, signal.SIGINT))
    got, error = [], None
    try:
        with OrderedMap(work, context, list(range(context["items"])), processes=context["processes"]) as results:
            processes = results.processes
            print(json.dumps(os.getpid()), flush=True)  # the test may now signal this process
            if context["only_workers"]:
                results.may_compute = lambda: False
            try:
                for r in results:
                    got.append(r)
            except ValueError as exc:
                cause = exc.__cause__
                error = [str(exc), type(cause).__name__, "in work" in str(cause)]
    except KeyboardInterrupt:
        print(json.dumps({"interrupted": True}))
        sys.exit(0)
    print(json.dumps({"processes": processes, "got": got, "error": error}))
    """
)


def _run_child(tmp_path: Path, **context: float) -> dict[str, Any]:
    ctx = {
        "items": 100,
        "processes": 3,
        "fail_at": -1,
        "die_at": -1,
        "parent_delay": 0.0,
        "worker_delay": 0.0,
        "died": str(tmp_path / "died"),
        "only_workers": False,
        "fail_fork_at": 0,
        "sigint_at_fork": False,
        **context,
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(ctx)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=60,  # a map that cannot end (workers nobody stops) fails here instead of hanging
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no warning (a fork with threads alive would print one on 3.12+)
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _start_child(tmp_path: Path, **context: float) -> tuple[subprocess.Popen[str], int]:
    """A slow map in its own session; returns it once its workers run, with the caller's pid."""
    ctx = {"items": 400, "processes": 3, "fail_at": -1, "die_at": -1, "parent_delay": 0.01}
    ctx.update(worker_delay=0.01, died=str(tmp_path / "died"), only_workers=False, fail_fork_at=0)
    ctx.update(sigint_at_fork=False, **context)
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(ctx)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    assert proc.stdout is not None
    parent = json.loads(proc.stdout.readline())
    time.sleep(0.3)
    return proc, parent


def _children(parent: int) -> list[int]:
    """The live (not zombie) processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == parent and state != "Z":
            found.append(int(entry.name))
    return found


def test_forked_workers_compute_in_order(tmp_path: Path) -> None:
    out = _run_child(tmp_path, parent_delay=0.01)  # a slow parent leaves the chunks to the workers
    assert out["processes"] == 3
    got = out["got"]
    assert [r[0] for r in got] == [2 * i for i in range(100)]
    assert sum(r[1] for r in got) > 50  # most items were the workers'
    assert out["error"] is None


def test_the_caller_computes_the_chunks_no_worker_took(tmp_path: Path) -> None:
    out = _run_child(tmp_path, processes=2, worker_delay=0.02)  # a slow worker: the caller takes chunks
    got = out["got"]
    assert [r[0] for r in got] == [2 * i for i in range(100)]
    assert 0 < sum(r[1] for r in got) < 100  # both did some


def test_the_caller_only_waits_while_it_may_not_compute(tmp_path: Path) -> None:
    out = _run_child(tmp_path, processes=2, worker_delay=0.005, only_workers=True)
    got = out["got"]
    assert [r[0] for r in got] == [2 * i for i in range(100)]
    assert all(r[1] for r in got)


@pytest.mark.parametrize("where", ["parent_delay", "worker_delay"])
def test_an_exception_is_raised_at_its_item(tmp_path: Path, where: str) -> None:
    out = _run_child(tmp_path, fail_at=57, **{where: 0.005})
    assert [r[0] for r in out["got"]] == [2 * i for i in range(57)]
    message, cause, names_work = out["error"]
    assert message == "item 57 is bad"
    computed_by_worker = cause == "WorkerTraceback"  # a worker's exception carries its traceback as text
    assert names_work if computed_by_worker else cause == "NoneType"


def test_a_dead_worker_loses_nothing(tmp_path: Path) -> None:
    out = _run_child(tmp_path, die_at=40, parent_delay=0.01)
    assert (tmp_path / "died").exists()  # a worker did die
    got = out["got"]
    assert [r[0] for r in got] == [2 * i for i in range(100)]
    assert not any(r[1] for r in got[40:])  # this process took over from the dead worker
    assert out["error"] is None


def test_a_worker_that_cannot_be_started_leaves_none_behind(tmp_path: Path) -> None:
    """The second fork fails: the first worker is ended and the map runs here (it used to wait for ever)."""
    out = _run_child(tmp_path, fail_fork_at=2)
    assert [r[0] for r in out["got"]] == [2 * i for i in range(100)]
    assert not any(r[1] for r in out["got"])


def test_a_ctrl_c_during_the_fork_is_not_lost(tmp_path: Path) -> None:
    out = _run_child(tmp_path, sigint_at_fork=True)
    assert out == {"interrupted": True}


def test_ctrl_c_to_the_whole_group_stops_the_map_quietly(tmp_path: Path) -> None:
    proc, parent = _start_child(tmp_path, worker_delay=0.0, parent_delay=0.02)  # idle workers, waiting
    workers = _children(parent)
    assert len(workers) == 2
    os.killpg(parent, signal.SIGINT)  # what a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=30)
    assert json.loads(out.splitlines()[-1]) == {"interrupted": True}
    assert err == ""  # the workers ignore it: no KeyboardInterrupt traceback of theirs
    assert _children(parent) == []


def test_workers_end_with_their_caller(tmp_path: Path) -> None:
    proc, parent = _start_child(tmp_path)
    workers = _children(parent)
    assert len(workers) == 2
    os.kill(parent, signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [w for w in workers if _alive(w)]
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_no_workers_when_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """SKDBG_NO_FORK=1 keeps every map in this process (the user's switch for all forking)."""
    monkeypatch.setenv("SKDBG_NO_FORK", "1")
    assert not forkmap.can_fork_workers()
    with OrderedMap(_double, 3, list(range(40)), processes=4) as results:
        assert (results.processes, results.workers) == (1, 0)
        assert list(results) == [3 * i for i in range(40)]
