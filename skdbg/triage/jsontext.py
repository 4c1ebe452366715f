"""``json.dumps(doc, indent=2, ensure_ascii=False)`` for plain JSON trees, in one recursive pass.

Why: with ``indent`` set the standard library encodes in pure Python through nested generators (its C
encoder has no indentation before 3.14), and the analysis JSON of a scene with 2,000 kernel ELFs is
30,000 values: 14 ms of a first run. This walks the tree once and appends strings to one list, using
the C string escaper for every string. Anything but dict (str keys), list, tuple, str, int, float,
bool and None — or a tree too deep to recurse — is left to ``json.dumps`` itself, which then gives
the very text or error it always gave.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C escaper with ensure_ascii=False
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skdbg.triage.model import Analysis

_INDENT = "  "


class _Unsupported(Exception):
    """A value the fast walk does not encode: the standard encoder takes the whole tree."""


def _float_text(f: float) -> str:
    """As the standard encoder writes a float with ``allow_nan=True``."""
    if f != f:
        return "NaN"
    if f == float("inf"):
        return "Infinity"
    if f == -float("inf"):
        return "-Infinity"
    return float.__repr__(f)


def _walk(o: Any, out: list[str], nl: str) -> None:
    """Append the text of ``o``; ``nl`` is a newline plus the indentation of the line ``o`` starts on."""
    t = type(o)
    if t is str:
        out.append(encode_basestring(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif t is int:
        out.append(int.__repr__(o))
    elif t is float:
        out.append(_float_text(o))
    elif t is dict:
        if not o:
            out.append("{}")
            return
        inner = nl + _INDENT
        sep = "{" + inner
        for k, v in o.items():
            if type(k) is not str:
                raise _Unsupported
            tv = type(v)
            if tv is str:  # the common leaves inline: a call per value is a third of the walk
                out.append(sep + encode_basestring(k) + ": " + encode_basestring(v))
            elif tv is int:
                out.append(sep + encode_basestring(k) + ": " + int.__repr__(v))
            else:
                out.append(sep + encode_basestring(k) + ": ")
                _walk(v, out, inner)
            sep = "," + inner
        out.append(nl + "}")
    elif t is list or t is tuple:
        if not o:
            out.append("[]")
            return
        inner = nl + _INDENT
        sep = "[" + inner
        for v in o:
            tv = type(v)
            if tv is str:
                out.append(sep + encode_basestring(v))
            elif tv is int:
                out.append(sep + int.__repr__(v))
            else:
                out.append(sep)
                _walk(v, out, inner)
            sep = "," + inner
        out.append(nl + "]")
    else:
        raise _Unsupported


def dumps_indented(doc: Any) -> str:
    """Exactly ``json.dumps(doc, indent=2, ensure_ascii=False)`` (that call is the fallback and the oracle)."""
    out: list[str] = []
    try:
        _walk(doc, out, "\n")
    except (_Unsupported, RecursionError):
        return json.dumps(doc, indent=2, ensure_ascii=False)
    return "".join(out)


#: the last rendered analysis and its text: ``analyze`` stores the text with a new entry, then prints it
_LAST_JSON: list[tuple[Analysis, str]] = []


def analysis_json_text(analysis: Analysis) -> str:
    """The analysis JSON exactly as ``analyze --format json`` prints it (before the final newline).

    Why remembered: the indented text is built in Python (6 ms on a 2,000-ELF scene), and a first
    run renders the same (frozen) analysis for the cache entry and for stdout. Here, not in
    :mod:`skdbg.triage.cache`: ``analyze --no-cache`` prints it without loading the cache machinery."""
    if _LAST_JSON and _LAST_JSON[0][0] is analysis:
        return _LAST_JSON[0][1]
    text = dumps_indented(analysis.to_json())
    _LAST_JSON[:] = [(analysis, text)]
    return text


__all__ = ["analysis_json_text", "dumps_indented"]
