"""The environment benchmark children run in: the one a user's shell has, with bytecode caches on.

Why: some machines (CI images, this project's sandboxes) export ``PYTHONDONTWRITEBYTECODE=1``. Python
then recompiles every module of an editable install from source on each start — about 0.1–0.15 s for
skdbg's modules — while a wheel install (and every anchor program installed by pip, e.g. toolong) has its
``.pyc`` files written at install time. Timing skdbg that way would measure the sandbox, not the tool.
So each benchmark child runs without that variable, after one un-timed run that writes the caches, and
the benchmark prints that it did.
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Sequence

NOTE = "bytecode caches on for every child (PYTHONDONTWRITEBYTECODE removed), one un-timed priming run first"


def user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` minus PYTHONDONTWRITEBYTECODE, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra or {})
    return env


def prime(argv: Sequence[str]) -> None:
    """Run ``argv`` once, untimed, so the interpreter writes the bytecode caches it will read later."""
    subprocess.run(list(argv), env=user_env(), capture_output=True, check=False)


def children_usage() -> tuple[float, int]:
    """User + system CPU seconds and minor page faults of every waited-for child so far (the machine may
    be shared: CPU time is what a run costs whatever else runs; wall time is what the user waits). A
    child's own reaped children count in it: skdbg's include its forked workers (the plog scan's child,
    the diff's worker), which it reaps before it ends."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, ru.ru_minflt


__all__ = ["NOTE", "children_usage", "prime", "user_env"]
