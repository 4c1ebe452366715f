"""The allocator setting of batch commands and of the plog scan's child (:mod:`skdbg.heap`)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
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
