"""A process the runtime ended with its task-timeout error is a hang: ``failure_phase: timeout``.

Hand-written lines in the runtime's wording (artifacts.md §1.5 items 2, 3, 6; error 507014
AICORE_TIMEOUT): a timeout says ``[aicore timeout]`` / ``ErrCode=507014``, an exception says
``[vector core exception]`` / ``ErrCode=507035``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.collect.machine import scan_process
from skdbg.parsers.plog import find_plog_files

HEAD = "[ERROR] RUNTIME(4242,python3):2026-06-10-14:03:23.{ms:03d}.000 [{src}]48301 {func}:[INIT][DEFAULT]"
TIMEOUT_LINES = [
    (
        "davinci_kernel_task.cc:1729",
        "PreCheckTaskErr",
        "Kernel task happen error, retCode=0x25, [aicore timeout].",
    ),
    ("stream.cc:1509", "GetError", "Stream Synchronize failed, stream_id=2, retCode=0x25, [aicore timeout]."),
    ("api_c.cc:782", "rtStreamSynchronize", "ErrCode=507014, desc=[aicore timeout], InnerCode=0x715005e"),
]
EXCEPTION_LINES = [
    ("davinci_kernel_task.cc:1200", "PreCheckTaskErr",
     "An error occurred in the kernel task, retCode=0x31, [vector core exception]."),
    ("api_c.cc:782", "rtStreamSynchronize", "ErrCode=507035, desc=[vector core exception], InnerCode=0x715005e"),
]  # fmt: skip


def _process(tmp: Path, lines: list[tuple[str, str, str]]) -> object:
    d = tmp / "debug" / "plog"
    d.mkdir(parents=True)
    text = "".join(
        HEAD.format(ms=i, src=src, func=func) + msg + "\n" for i, (src, func, msg) in enumerate(lines)
    )
    (d / "plog-4242_20260610140323000.log").write_text(text)
    return scan_process(4242, find_plog_files(tmp))


@pytest.mark.parametrize(("lines", "timed_out"), [(TIMEOUT_LINES, True), (EXCEPTION_LINES, False)])
def test_timeout_wording_marks_a_hang(
    tmp_path: Path, lines: list[tuple[str, str, str]], timed_out: bool
) -> None:
    proc = _process(tmp_path, lines)
    assert proc.failed  # type: ignore[attr-defined]
    assert proc.timed_out is timed_out  # type: ignore[attr-defined]
