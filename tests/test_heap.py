"""The allocator setting of the commands that read one scene and of the plog scan's child
(:mod:`skdbg.heap`)."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt parameters",
)
def test_freed_memory_is_kept() -> None:
    """keep_freed_memory, in a process of its own (it tunes the process's allocator): memory freed at
    the heap's top is reused by the next requests instead of coming back as fresh pages. Two 16 MiB
    buffers made and dropped twenty times fault thousands of pages with glibc's defaults, next to
    none once it is called."""
    script = textwrap.dedent(
        """
        import resource, sys
        if sys.argv[1] == "keep":
            from skdbg.heap import keep_freed_memory
            keep_freed_memory()
        def faults():
            return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        a = bytearray(16 << 20); b = bytearray(16 << 20); del a, b
        before = faults()
        for _ in range(20):
            a = bytearray(16 << 20); b = bytearray(16 << 20); del a, b
        print(faults() - before)
        """
    )

    def faults(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", script, mode], capture_output=True, text=True, check=True
        )
        return int(done.stdout)

    default, kept = faults("default"), faults("keep")
    # (how many come back fresh by default depends on glibc's adaptive thresholds: many thousand here)
    assert default > 4096 and kept < 1000 and kept * 10 < default


def test_nothing_is_asked_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    """Elsewhere there is no glibc to tune, and Windows' ctypes cannot even open the process's own
    symbols (``CDLL(None)`` raises TypeError there): nothing is loaded or called."""
    import ctypes

    from skdbg.heap import keep_freed_memory

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("no library is opened off Linux")

    import skdbg.heap

    # the module's view of the platform only (a thread of another test may read sys.platform)
    monkeypatch.setattr(skdbg.heap, "sys", SimpleNamespace(platform="win32"))
    monkeypatch.setattr(ctypes, "CDLL", refuse)
    keep_freed_memory()
