"""``json.dumps(obj, indent=2)``, the same text, faster for the manifests codegen writes.

Why: with ``indent`` set, the standard library encodes in pure Python, one generator step per
value; the ``adapt`` manifest of a 500-kernel asset has ~100k values and took about a tenth of the
command's time. Here strings, the bulk of it, go through the same C escaping function
(``encode_basestring_ascii``) and the structure is laid out by one recursive function. Anything
outside plain JSON data (non-string keys, floats, other types) is left to :func:`json.dumps` itself,
so the text can only be the standard one.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any


class _Fallback(Exception):
    """A value this encoder leaves to :func:`json.dumps` (the whole document is then encoded there)."""


def dumps_indent2(obj: Any) -> str:
    """``json.dumps(obj, indent=2)``."""
    out: list[str] = []
    try:
        _emit(obj, out, "\n")
    except _Fallback:
        return json.dumps(obj, indent=2)
    return "".join(out)


def _emit(o: Any, out: list[str], nl: str) -> None:
    if isinstance(o, str):
        out.append(encode_basestring_ascii(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for k, v in o.items():
            if not isinstance(k, str):
                raise _Fallback
            out.append(sep + encode_basestring_ascii(k) + ": ")
            _emit(v, out, inner)
            sep = "," + inner
        out.append(nl + "}")
    elif isinstance(o, list | tuple):
        if not o:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for v in o:
            out.append(sep)
            _emit(v, out, inner)
            sep = "," + inner
        out.append(nl + "]")
    else:
        raise _Fallback
