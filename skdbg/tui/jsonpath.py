"""Find where a JSON path (``scopes[0].taskQueues.aiv.taskQue.taskInfos[1]``) starts in a JSON text.

Why a walker and not a search for the last key: a key like ``taskInfos`` repeats under every
queue and every scope, so the first occurrence is usually the wrong child. The walker follows the
path one step at a time: it reads each object key and skips values it
does not enter with ``json.JSONDecoder.raw_decode``, so only the chosen branch is descended and the
offset it returns is the start of exactly the addressed key or element. Headless (no textual).
"""

from __future__ import annotations

import json
import re

_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def parse_json_path(json_path: str) -> list[str | int] | None:
    """``a.b[2].c`` → ``["a", "b", 2, "c"]``; None if the text is not a path."""
    steps: list[str | int] = []
    pos = 0
    while pos < len(json_path):
        m = _STEP.match(json_path, pos)
        if m is None or m.end() == pos:
            return None
        steps.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return steps or None


def _ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _skip_value(text: str, pos: int) -> int:
    """Offset just after the JSON value starting at ``pos`` (raises ValueError if malformed)."""
    _, end = _DECODER.raw_decode(text, pos)
    return end


def _object_member(text: str, pos: int, key: str) -> tuple[int, int] | None:
    """In the object at ``pos``: (offset of ``key``'s quote, offset of its value), or None."""
    pos = _ws(text, pos + 1)
    if text.startswith("}", pos):
        return None
    while True:
        if not text.startswith('"', pos):
            raise ValueError(f"expected a key at offset {pos}")
        name, after = _DECODER.raw_decode(text, pos)
        colon = _ws(text, after)
        if not text.startswith(":", colon):
            raise ValueError(f"expected ':' at offset {colon}")
        value = _ws(text, colon + 1)
        if name == key:
            return pos, value
        pos = _ws(text, _skip_value(text, value))
        if text.startswith("}", pos):
            return None
        if not text.startswith(",", pos):
            raise ValueError(f"expected ',' at offset {pos}")
        pos = _ws(text, pos + 1)


def _array_element(text: str, pos: int, index: int) -> int | None:
    """Offset of element ``index`` of the array at ``pos``, or None if it is shorter."""
    pos = _ws(text, pos + 1)
    if text.startswith("]", pos):
        return None
    for _ in range(index):
        pos = _ws(text, _skip_value(text, pos))
        if text.startswith("]", pos):
            return None
        if not text.startswith(",", pos):
            raise ValueError(f"expected ',' at offset {pos}")
        pos = _ws(text, pos + 1)
    return pos


def json_path_offset(text: str, json_path: str) -> int | None:
    """Character offset where the addressed key (its quote) or array element starts.

    None when the path does not exist in the text, is not a path, or the text is not JSON up to
    that point — never a nearby guess."""
    steps = parse_json_path(json_path)
    if steps is None:
        return None
    pos = _ws(text, 0)
    mark = pos
    try:
        for step in steps:
            if isinstance(step, int):
                if not text.startswith("[", pos):
                    return None
                found = _array_element(text, pos, step)
                if found is None:
                    return None
                mark = pos = found
            else:
                if not text.startswith("{", pos):
                    return None
                member = _object_member(text, pos, step)
                if member is None:
                    return None
                mark, pos = member
    except ValueError:
        return None
    return mark


def json_path_line(text: str, json_path: str) -> int | None:
    """1-based line where ``json_path`` starts in ``text`` (see ``json_path_offset``)."""
    offset = json_path_offset(text, json_path)
    return None if offset is None else text.count("\n", 0, offset) + 1


__all__ = ["json_path_line", "json_path_offset", "parse_json_path"]
