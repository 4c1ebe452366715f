"""sk_meta file-logger lines written by hand (artifacts.md §3.2): the prefix every line of an sk_meta log starts with."""

from __future__ import annotations


def filelog_prefix(
    ms: int,
    func: str = "Dump",
    pid: int = 48213,
    *,
    level: str = "DEBUG",
    source: str = "sk_task_builder.cpp:33",
) -> str:
    """``<stamp> [<pid>:<tid>] [<level>] [<file:line>] [<func>] `` with the stamp's milliseconds ``ms``."""
    return f"2026-06-10 14:01:02.{ms:03d} [{pid}:140425347876672] [{level}] [{source}] [{func}] "
