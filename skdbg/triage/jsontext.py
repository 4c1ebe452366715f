"""The analysis JSON text as ``analyze --format json`` prints it, remembered for the run.

Why a module of its own: ``analyze --no-cache`` prints this text without loading the result cache's
machinery (:mod:`skdbg.triage.cache`, pickle, platformdirs); the cache stores the very same text.
The standard library's ``json`` writes it, all but the scene's artifact records: those flat records
of strings and integers (one per file, 2,000 on the bench scene) are written here with ``json``'s own
string escaping, ~6 ms less (see :func:`_dumps`); anything else in them is left to ``json``.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

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
    text = _dumps(analysis.to_json())
    _LAST_JSON[:] = [(analysis, text)]
    return text


#: where the scene block starts and, after it, the scene's own (emptied) artifact list. Exact whatever the
#: content: escaped strings hold no raw newline, so a newline and an indentation of four spaces after the
#: top-level "scene" key can only begin one of the scene's own keys (its nested values sit deeper)
_SCENE_START = '\n  "scene": {\n'
_ARTIFACTS_KEY = '\n    "artifacts": []'
#: one artifact record's indentation inside the analysis (scene → artifacts → record)
_RECORD = "\n      "
_FIELD = "\n        "


def _dumps(doc: dict[str, Any]) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, the scene's artifact records written here.

    Why: the indented text is encoded in Python, and the artifact list (five scalars per file, 2,000
    kernel ELFs on the bench scene) was ~6 ms of its ~10; each record is written with the encoder's own
    string escaping (``encode_basestring``) and ``int.__repr__``. Only records of exact ``str``/``int``
    values take this path, placed where the standard encoder put the emptied list; anything else is
    encoded whole by ``json``."""
    scene = doc.get("scene")
    if not isinstance(scene, dict) or not isinstance(records := scene.get("artifacts"), list):
        return json.dumps(doc, indent=2, ensure_ascii=False)
    body = _records_text(records)
    if body is None:
        return json.dumps(doc, indent=2, ensure_ascii=False)
    text = json.dumps({**doc, "scene": {**scene, "artifacts": []}}, indent=2, ensure_ascii=False)
    start = text.find(_SCENE_START)
    at = text.find(_ARTIFACTS_KEY, start) if start >= 0 else -1
    if at < 0:
        return json.dumps(doc, indent=2, ensure_ascii=False)
    close = at + len(_ARTIFACTS_KEY) - 1  # the emptied list's "]"
    return f"{text[: close - 1]}[{body}\n    ]{text[close + 1 :]}"


def _records_text(records: list[Any]) -> str | None:
    """The items of an artifact list at its indentation (from the newline before the first ``{`` up to
    the last ``}``), or None when there are none or a record is not a non-empty dict of ``str`` keys and
    ``str``/``int`` values (``json`` then writes the list)."""
    if not records:
        return None
    enc = encode_basestring
    parts: list[str] = []
    for rec in records:
        if type(rec) is not dict or not rec:
            return None
        fields: list[str] = []
        for key, value in rec.items():
            if type(key) is not str:
                return None
            if type(value) is str:
                fields.append(f"{enc(key)}: {enc(value)}")
            elif type(value) is int:
                fields.append(f"{enc(key)}: {int.__repr__(value)}")
            else:
                return None
        parts.append(f"{_RECORD}{{{_FIELD}{(',' + _FIELD).join(fields)}{_RECORD}}}")
    return ",".join(parts)


__all__ = ["analysis_json_text"]
