"""A batch command's process ends without the interpreter's teardown (skdbg/process_end.py) only where
nothing differs from a normal exit: the ``atexit`` handlers ran, stdout and stderr are whole, the status
is the one the command exited with.

The decisions are tested here with ``os._exit`` replaced; the real end runs in subprocesses, through
the console script's function (:func:`skdbg.cli.run`), on a bundled scene.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg import process_end
from skdbg.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENE = ROOT / "examples" / "scenes" / "high-single-stream"


class Ended(Exception):
    """``os._exit`` was called (with ``status``)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


@pytest.fixture
def end(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``os._exit`` raises :class:`Ended`; the atexit runner is replaced by one that notes its call;
    the request flag starts unset. Yields the notes."""
    notes: list[str] = []

    def exit_now(status: int) -> None:
        raise Ended(status)

    monkeypatch.setattr(process_end.os, "_exit", exit_now)
    monkeypatch.setattr(process_end.atexit, "_run_exitfuncs", lambda: notes.append("atexit"), raising=False)
    monkeypatch.setattr(process_end, "_ASKED", False)
    yield notes


def test_nothing_ends_unless_a_command_asked(end: list[str]) -> None:
    process_end.end_process(0)
    assert end == []


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), (True, 1), (-1, -1)])
def test_an_asked_end_runs_the_handlers_then_ends_with_the_status(
    end: list[str], code: object, status: int
) -> None:
    process_end.end_without_teardown()
    with pytest.raises(Ended) as ended:
        process_end.end_process(code)
    assert ended.value.status == status
    assert end == ["atexit"]


@pytest.mark.parametrize("code", ["skdbg: a message for Python to print", 2**40, 1.5])
def test_a_code_python_would_handle_itself_leaves_the_normal_exit(end: list[str], code: object) -> None:
    process_end.end_without_teardown()
    process_end.end_process(code)  # returns: nothing run
    assert end == []


def test_a_running_thread_that_is_no_daemon_leaves_the_normal_exit(end: list[str]) -> None:
    process_end.end_without_teardown()
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        process_end.end_process(0)
    finally:
        release.set()
        worker.join()
    assert end == []
    # a daemon thread is left to the end, as the normal exit leaves it
    release.clear()
    daemon = threading.Thread(target=release.wait, daemon=True)
    daemon.start()
    try:
        with pytest.raises(Ended):
            process_end.end_process(0)
    finally:
        release.set()
        daemon.join()


def test_a_failing_flush_leaves_the_normal_exit_after_the_handlers(
    end: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Closed(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    process_end.end_without_teardown()
    process_end.end_process(0)
    assert end == ["atexit"]  # (they ran; the normal exit finds none left to run)


def test_a_python_without_the_atexit_runner_leaves_the_normal_exit(
    end: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(process_end.atexit, "_run_exitfuncs")
    process_end.end_without_teardown()
    process_end.end_process(0)
    assert end == []


def test_one_scene_commands_ask_and_others_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_end, "_ASKED", False)
    CliRunner().invoke(main, ["explain", "C3"])
    CliRunner().invoke(main, ["locate"])
    assert not process_end.asked()
    result = CliRunner().invoke(main, ["analyze", str(SCENE), "--format", "json", "--no-cache"])
    assert result.exit_code == 0
    assert process_end.asked()


def test_the_console_script_hands_the_exit_code_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import skdbg.cli

    seen: list[object] = []
    monkeypatch.setattr(skdbg.cli, "end_process", seen.append)
    monkeypatch.setattr(sys, "argv", ["skdbg", "analyze", "/no/such/scene"])
    with pytest.raises(SystemExit) as exited:
        skdbg.cli.run()
    assert exited.value.code == 3
    assert seen == [3]


#: the console script's function in a process of its own, with an atexit handler and an object whose
#: deletion by the modules' teardown prints
_SCRIPT = """
import atexit, os, sys
atexit.register(lambda: sys.stderr.write("atexit handler ran\\n"))
class Canary:
    def __del__(self, write=os.write):
        write(2, b"torn down\\n")
import json
json._skdbg_canary = Canary()  # (in a module that lives until the teardown clears it)
mode = sys.argv[1]
sys.argv = ["skdbg", *sys.argv[2:]]
import skdbg.cli
if mode == "thread":  # a thread that is no daemon runs until the end has been decided
    import threading
    release = threading.Event()
    threading.Thread(target=release.wait, daemon=False).start()
    decide = skdbg.cli.end_process
    def end_then_release(code):
        decide(code)
        release.set()
    skdbg.cli.end_process = end_then_release
skdbg.cli.run()
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_a_one_scene_command_ends_with_its_handlers_run_its_output_whole_and_no_teardown() -> None:
    expected = CliRunner().invoke(main, ["analyze", str(SCENE), "--format", "json", "--no-cache"]).output
    done = _run("-", "analyze", str(SCENE), "--format", "json", "--no-cache")
    assert done.returncode == 0
    assert done.stdout == expected
    assert json.loads(done.stdout)["verdict"]["rule"]  # (the whole document)
    assert done.stderr == "atexit handler ran\n"  # and no teardown


def test_its_failure_ends_with_exit_3_and_its_message() -> None:
    done = _run("-", "analyze", "/no/such/scene")
    assert done.returncode == 3
    assert done.stderr.startswith("skdbg: error: /no/such/scene")
    assert done.stderr.endswith("atexit handler ran\n")


def test_other_commands_and_running_threads_get_the_normal_exit() -> None:
    other = _run("-", "locate")
    assert other.returncode == 0
    assert other.stderr == "atexit handler ran\ntorn down\n"
    waited = _run("thread", "analyze", str(SCENE), "--format", "json", "--no-cache")
    assert waited.returncode == 0
    assert waited.stderr == "atexit handler ran\ntorn down\n"


def test_the_package_installs_the_script_that_ends_so() -> None:
    """pyproject's console script is :func:`skdbg.cli.run` (``main`` would never end this way)."""
    text = (ROOT / "pyproject.toml").read_text()
    scripts = text[text.index("[project.scripts]") :].split("\n\n", 1)[0].splitlines()[1:]
    assert scripts == ['skdbg = "skdbg.cli:run"']


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="no signal masks here")
def test_an_interrupt_in_the_last_instant_is_held_back(
    end: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT is blocked while the output is flushed and the process ends (a Ctrl-C there ends nothing
    more than the command did), and released when the normal exit follows instead."""
    import signal

    seen: list[bool] = []

    class Watching(io.StringIO):
        def flush(self) -> None:
            seen.append(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()))

    monkeypatch.setattr(sys, "stdout", Watching())
    process_end.end_without_teardown()
    with pytest.raises(Ended):
        process_end.end_process(0)
    assert seen == [True]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())

    class Closed(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    process_end.end_process(0)  # the normal exit follows: the mask is as it was
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
