"""Spans of time given by a user (a clock-skew window, a grace, a job's timeout): the one range check.

Why one module at the bottom of the layers: the CLI's option types (:mod:`skdbg.cli_types`), the
re-launch API, the fleet verdict and the workbench's job line all refuse the same values; NaN passes a
``< 0`` check (every comparison with it is false), and a window of centuries takes a run's times out of
the calendar. Each of them asks :func:`span_ok` instead of spelling the check again.
"""

from __future__ import annotations

import math
import threading

#: the widest time window a user may give, in seconds: a year. A skew or grace wider than the job is
#: meaningless, and one of centuries took a run's times out of the calendar (``datetime`` stops at
#: year 1), which failed inside as an internal error
MAX_WINDOW_SECONDS = 365 * 24 * 3600.0
#: the longest wait the interpreter's timed waits accept (a larger one raises OverflowError)
MAX_WAIT_SECONDS = threading.TIMEOUT_MAX


def span_ok(number: float, *, positive: bool = False, most: float = MAX_WINDOW_SECONDS) -> bool:
    """``number`` is finite, at least 0 (above 0 when ``positive``) and at most ``most``."""
    return math.isfinite(number) and (number > 0 if positive else number >= 0) and number <= most


def span_expected(unit: str = "seconds", *, positive: bool = False, most: float = MAX_WINDOW_SECONDS) -> str:
    """What :func:`span_ok` accepts, in words, for the messages that refuse a value."""
    low = "above 0" if positive else "from 0"
    return f"a finite number of {unit} {low} up to {most:,.0f}"


__all__ = ["MAX_WAIT_SECONDS", "MAX_WINDOW_SECONDS", "span_expected", "span_ok"]
