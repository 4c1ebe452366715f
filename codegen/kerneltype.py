"""Kernel-type mapping from ``__global__`` qualifiers to the ``__sk__`` qualifier (spec §1.7)."""

from __future__ import annotations

import re

_MIX_ARGS_RE = re.compile(r"__mix__\s*\(([^()]*)\)")
_MIX_INT_RE = re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*$")


class KernelTypeError(ValueError):
    """The qualifiers name no kernel type (e.g. ``__global__`` alone)."""


def map_kernel_type_for_sk(qualifiers: str) -> str:
    """``__mix__(c,0)``→``__cube__``, ``(0,v)``→``__vector__``, other mixes normalised, else the core type."""
    m = _MIX_ARGS_RE.search(qualifiers)
    if m:
        ints = _MIX_INT_RE.match(m.group(1))
        if ints:
            c, v = int(ints.group(1)), int(ints.group(2))
            if c >= 1 and v == 0:
                return "__cube__"
            if c == 0 and v >= 1:
                return "__vector__"
            return f"__mix__({c}, {v})"
        return "__mix__(" + ", ".join(a.strip() for a in m.group(1).split(",")) + ")"
    words = set(re.findall(r"\w+", qualifiers))
    for kind in ("__mix__", "__vector__", "__cube__", "__aicore__"):
        if kind in words:
            return kind
    raise KernelTypeError(f"cannot map kernel type from qualifiers: {qualifiers!r}")
