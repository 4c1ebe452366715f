"""Loading small JSON artifacts and reading typed fields out of them, with precise errors.

Why a helper: every JSON artifact skdbg reads (``sk_task_queue.json``, graph JSON, ``run.json``,
the environment probe, ``source_sites.json``) is written by a different producer, and the only
useful report of a bad file names the file, the line/column of a syntax error (artifacts.md §7.5
row 62) or the JSON path of a field with the wrong type. These functions produce exactly those
:class:`ParseError` messages so the parsers stay short and uniform.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from skdbg.parsers.common import ParseError
from skdbg.parsers.fsguard import read_regular


class JsonSyntaxError(ParseError):
    """Malformed or truncated JSON; carries the column reported by :mod:`json` as well as the line."""

    def __init__(self, file: str, expected: str, *, line: int, column: int, got: str | None = None) -> None:
        super().__init__(file, expected, line=line, got=got)
        self.column = column


def read_json_text(path: str | os.PathLike[str], *, what: str) -> tuple[str, str]:
    """Return ``(file, text)`` of a JSON artifact; ParseError for a missing file, a directory or NUL bytes.

    JSON artifacts here are at most a few MB (the multi-GB profiling trace is streamed by
    ``sk_prof`` instead), so reading them whole is fine. Invalid UTF-8 is replaced rather than
    rejected: a damaged byte inside a kernel name must not hide the rest of the file.
    """
    p = Path(path)
    file = str(p)
    raw = read_regular(p, what=what)
    if b"\x00" in raw[:8192]:
        raise ParseError(file, f"{what} (JSON text), got binary data (NUL bytes)")
    text = raw.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return file, text


def loads_json(text: str, *, file: str, what: str) -> Any:
    """Parse JSON text; syntax errors become :class:`JsonSyntaxError` naming line and column (row 62)."""
    if not text.strip():
        raise ParseError(file, f"{what} (a JSON document), got an empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonSyntaxError(
            file,
            f"{what} as valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            line=exc.lineno,
            column=exc.colno,
        ) from exc
    except (ValueError, RecursionError) as exc:
        # ValueError: integer literals beyond the int/str conversion limit; RecursionError: absurd nesting.
        raise ParseError(file, f"{what} as JSON Python can represent ({type(exc).__name__}: {exc})") from exc


def load_json(path: str | os.PathLike[str], *, what: str) -> tuple[str, Any]:
    """Read and parse one JSON file; returns ``(file, document)``."""
    file, text = read_json_text(path, what=what)
    return file, loads_json(text, file=file, what=what)


# --------------------------------------------------------------------------------------------
# Typed field access. ``path`` is the JSON path of the containing value, e.g. ``scopes[0]``.


def join(path: str, key: str | int) -> str:
    """JSON path of a member (``a.b``) or an element (``a[3]``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def show(value: Any) -> str:
    """A short rendering of an offending JSON value for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_MISSING = object()


def type_error(file: str, path: str, expected: str, value: Any) -> ParseError:
    got = "nothing (key missing)" if value is _MISSING else show(value)
    return ParseError(file, f"{path} to be {expected}", got=got)


def is_int(value: Any) -> bool:
    """JSON integer (``true``/``false`` are not integers even though Python says so)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_object(value: Any, file: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise type_error(file, path or "the document root", "an object", value)
    return value


def as_list(value: Any, file: str, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise type_error(file, path, "an array", value)
    return value


def get_int(obj: dict[str, Any], key: str, file: str, path: str, *, required: bool = False) -> int | None:
    value = obj.get(key, _MISSING)
    if value is _MISSING and not required:
        return None
    if not is_int(value):
        raise type_error(file, join(path, key), "an integer", value)
    return int(value)


def get_str(
    obj: dict[str, Any], key: str, file: str, path: str, *, required: bool = False, nullable: bool = False
) -> str | None:
    value = obj.get(key, _MISSING)
    if value is _MISSING and not required:
        return None
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise type_error(file, join(path, key), "a string" + (" or null" if nullable else ""), value)
    return value


def req_str(obj: dict[str, Any], key: str, file: str, path: str) -> str:
    value = get_str(obj, key, file, path, required=True)
    assert value is not None
    return value


def get_bool(obj: dict[str, Any], key: str, file: str, path: str) -> bool | None:
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        return None
    if not isinstance(value, bool):
        raise type_error(file, join(path, key), "true or false", value)
    return value


def hex_value(value: Any, file: str, path: str) -> int:
    """An address/handle written as ``"0x…"`` by ``std::hex`` (or already an integer)."""
    if is_int(value):
        return int(value)
    if isinstance(value, str):
        t = value.strip()
        if t[:2].lower() == "0x" and len(t) > 2:
            try:
                return int(t[2:], 16)
            except ValueError:
                pass
    raise type_error(file, path, 'a hex string "0x…"', value)


def get_hex(obj: dict[str, Any], key: str, file: str, path: str) -> int | None:
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        return None
    return hex_value(value, file, join(path, key))


def node_ref(obj: dict[str, Any], key: str, file: str, path: str) -> int | None:
    """``preNodeId``/``nextNodeId``: an integer, or the string ``"none"`` for INVALID_TASK_ID (§3.11)."""
    value = obj.get(key, _MISSING)
    if value is _MISSING or value == "none":
        return None
    if not is_int(value):
        raise type_error(file, join(path, key), 'an integer or "none"', value)
    return int(value)
