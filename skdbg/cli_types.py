"""Option types for spans of time: a finite number in range, anything else refused as a usage error.

Why: click's ``FLOAT`` takes ``nan``, ``inf`` and ``1e300``. A check such as ``value < 0`` lets NaN through
(every comparison with it is false), and ``timedelta(seconds=...)``, a window's ends or a job's deadline
then failed deep inside: ``--skew nan`` ended as an internal error (exit 1), and a re-launch with ``--timeout nan`` waited for
its job in a busy loop with no timeout at all. Refused here, such a value is exit 2 with a message that
names the option, before a command does anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from skdbg.spans import MAX_WAIT_SECONDS, MAX_WINDOW_SECONDS, span_expected, span_ok

if TYPE_CHECKING:  # generic in newer click (8.5: two parameters); skdbg supports 8.1, where it is not
    _ParamType = click.ParamType[float, Any]
else:
    _ParamType = click.ParamType


class Span(_ParamType):
    """A finite number of ``unit`` from 0 (or above 0: ``positive``) up to ``most``."""

    def __init__(
        self, unit: str = "seconds", *, positive: bool = False, most: float = MAX_WINDOW_SECONDS
    ) -> None:
        self.unit = unit
        self.name = unit  # the help shows ``--skew SECONDS``
        self.positive = positive
        self.most = most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of {self.unit}", param, ctx)
        if not span_ok(number, positive=self.positive, most=self.most):
            expected = span_expected(self.unit, positive=self.positive, most=self.most)
            self.fail(f"{value!r}: expected {expected}", param, ctx)
        return number


#: a time window (clock skew, grace after a run's end) in seconds
WINDOW_SECONDS = Span("seconds")
#: a clock-skew tolerance in milliseconds
WINDOW_MILLISECONDS = Span("milliseconds", most=MAX_WINDOW_SECONDS * 1000)
#: a job's timeout in seconds (above 0)
TIMEOUT_SECONDS = Span("seconds", positive=True, most=MAX_WAIT_SECONDS)

__all__ = [
    "MAX_WAIT_SECONDS",
    "MAX_WINDOW_SECONDS",
    "TIMEOUT_SECONDS",
    "WINDOW_MILLISECONDS",
    "WINDOW_SECONDS",
    "Span",
    "span_ok",
]
