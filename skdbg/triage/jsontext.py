"""The analysis JSON text as ``analyze --format json`` prints it, remembered for the run.

Why a module of its own: ``analyze --no-cache`` prints this text without loading the result cache's
machinery (:mod:`skdbg.triage.cache`, pickle, platformdirs); the cache stores the very same text.
The standard library's ``json`` writes it: a hand-written encoder saved ~5 ms on a 2,000-ELF scene,
not worth a second JSON writer to keep exact.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skdbg.triage.model import Analysis


#: the last rendered analysis and its text: ``analyze`` stores the text with a new entry, then prints it
_LAST_JSON: list[tuple[Analysis, str]] = []


def analysis_json_text(analysis: Analysis) -> str:
    """The analysis JSON exactly as ``analyze --format json`` prints it (before the final newline).

    Why remembered: the indented text is encoded in Python (``json`` has no C path with ``indent``
    before 3.14; ~12 ms on a 2,000-ELF scene), and a first run renders the same (frozen) analysis for
    the cache entry and for stdout."""
    last = _LAST_JSON[0] if _LAST_JSON else None  # one read: another thread may replace the entry
    if last is not None and last[0] is analysis:
        return last[1]
    text = json.dumps(analysis.to_json(), indent=2, ensure_ascii=False)
    _LAST_JSON[:] = [(analysis, text)]
    return text


__all__ = ["analysis_json_text"]
