"""The analysis JSON text as ``analyze --format json`` prints it, remembered for the run.

Why a module of its own: ``analyze --no-cache`` prints this text without loading the result cache's
machinery (:mod:`skdbg.triage.cache`, pickle, platformdirs); the cache stores the very same text.
:func:`skdbg.jsonindent.dumps_indented` writes it: the standard library's indented text, byte for
byte, with the C encoder doing each flat container (~7 ms instead of ~14 ms on a 2,000-ELF scene).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skdbg.jsonindent import dumps_indented

if TYPE_CHECKING:
    from skdbg.triage.model import Analysis


#: the last rendered analysis and its text: ``analyze`` stores the text with a new entry, then prints it
_LAST_JSON: list[tuple[Analysis, str]] = []


def analysis_json_text(analysis: Analysis) -> str:
    """The analysis JSON exactly as ``analyze --format json`` prints it (before the final newline).

    Why remembered: a first run renders the same (frozen) analysis for the cache entry and for stdout,
    and the indented text is walked in Python (:mod:`skdbg.jsonindent`)."""
    last = _LAST_JSON[0] if _LAST_JSON else None  # one read: another thread may replace the entry
    if last is not None and last[0] is analysis:
        return last[1]
    text = dumps_indented(analysis.to_json(), indent=2, ensure_ascii=False)
    _LAST_JSON[:] = [(analysis, text)]
    return text


__all__ = ["analysis_json_text"]
