"""While it waits for a forked plog scan, this process hashes artifacts for the child only when the child
is quiet (issue 18): while the child sends lines, it and the thread filing them need both CPUs."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from skdbg.parsers import evidence
from skdbg.parsers.background import BackgroundLoad
from skdbg.parsers.plog_fork import ForkedPlogScan


def _bare_scan() -> ForkedPlogScan:
    """A ForkedPlogScan with only what :meth:`ForkedPlogScan.quiet_for` reads (no child)."""
    scan = ForkedPlogScan.__new__(ForkedPlogScan)
    scan._waiting_since = None
    scan._gone = False
    return scan


def test_quiet_for_counts_the_wait_for_a_value_only() -> None:
    """Zero before the first value is asked for and while a value is filed; the time waited so far
    while the next one is awaited."""
    scan = _bare_scan()
    seen: list[float] = []

    def values() -> Iterator[list[tuple[str]]]:
        for _ in range(2):
            time.sleep(0.03)
            seen.append(scan.quiet_for())  # asked from inside the wait
            yield [("p",)]

    assert scan.quiet_for() == 0.0
    for _ in scan._waited_for(values()):
        assert scan.quiet_for() == 0.0  # filing it
    assert scan.quiet_for() == 0.0  # the values ended
    assert len(seen) == 2 and all(q >= 0.025 for q in seen)


class _Child:
    """What the helper sees of a forked scan: a scripted quiet time, and chunks it may claim."""

    def __init__(self, quiet: list[float], chunks: int) -> None:
        self.quiet = quiet
        self.chunks = chunks
        self.claimed = 0

    def quiet_for(self) -> float:
        return self.quiet.pop(0) if len(self.quiet) > 1 else self.quiet[0]

    def help(self) -> bool:
        if self.claimed == self.chunks:
            return False
        self.claimed += 1
        return True


def _load_until(event: threading.Event) -> BackgroundLoad[int]:
    return BackgroundLoad(lambda: event.wait(5) and 1, name="test-load")


def test_no_chunk_is_claimed_while_the_child_sends() -> None:
    """The filing thread never waits long (values keep coming): nothing is claimed here."""
    done = threading.Event()
    child = _Child([0.0], chunks=10)
    load = _load_until(done)
    helper = threading.Thread(target=evidence._help_until_ready, args=(child, load))
    helper.start()
    time.sleep(0.1)
    done.set()
    helper.join(5)
    assert not helper.is_alive()
    assert child.claimed == 0


def test_a_quiet_child_gets_every_chunk_claimed() -> None:
    """The child has sent nothing for longer than HELP_AFTER_QUIET: every chunk is claimed here, then
    the helper ends without waiting for the load."""
    done = threading.Event()
    child = _Child([evidence.HELP_AFTER_QUIET + 0.01], chunks=7)
    load = _load_until(done)
    helper = threading.Thread(target=evidence._help_until_ready, args=(child, load))
    helper.start()
    helper.join(5)
    assert not helper.is_alive()
    assert child.claimed == 7
    done.set()


def test_helping_resumes_once_the_child_falls_quiet() -> None:
    """Busy at first (no claim), then quiet: the chunks are claimed from then on."""
    done = threading.Event()
    child = _Child([0.0, 0.0, evidence.HELP_AFTER_QUIET], chunks=3)
    load = _load_until(done)
    helper = threading.Thread(target=evidence._help_until_ready, args=(child, load))
    helper.start()
    helper.join(5)
    assert child.claimed == 3
    done.set()


def test_background_load_wait() -> None:
    """``wait`` returns False on a timeout, True once the load ended."""
    done = threading.Event()
    load = _load_until(done)
    assert load.wait(0.01) is False
    done.set()
    assert load.wait(5) is True
    assert load.result() == 1


def test_a_child_that_sends_no_more_is_quiet_for_good() -> None:
    """Lost (or its stream ended short), the child sends nothing more while its files are scanned here:
    the helper may claim what is left of its other work at once."""
    scan = _bare_scan()
    scan._gone = True
    assert scan.quiet_for() > 3600
