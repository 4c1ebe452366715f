"""One way to print a value for people: never a Python repr.

Why: text output, reports and TUI screens are read by kernel/model engineers, not Python
programmers. ``None`` becomes ``—``, an option map ``{'debug_op_exec_trace': 1}`` becomes
``debug_op_exec_trace=1`` (the ``key=value`` form the wrapper itself serialises), a list of node
ids ``[100, 101]`` becomes ``100, 101``. Every human rendering goes through :func:`show` so a new
field cannot leak a repr by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: what an absent value prints as
DASH = "—"


def show(value: Any, empty: str = DASH) -> str:
    """Human text for ``value``: ``—`` for None/empty, ``k=v, …`` for mappings, ``a, b`` for
    sequences, ``true``/``false`` for booleans, the string itself otherwise."""
    if value is None:
        return empty
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else empty
    if isinstance(value, Mapping):
        if not value:
            return empty
        return ", ".join(f"{k}={show(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
        return ", ".join(show(v) for v in items) if items else empty
    return str(value)


def one_line(text: str) -> str:
    """A message on one line: line breaks and other control characters inside values are escaped.

    Error and gap messages quote values from hostile input (a kernel name with a newline in it);
    printed raw, such a value would forge extra lines of output.
    """
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)


__all__ = ["DASH", "one_line", "show"]
