"""``sk_prof_device_<d>.json`` — per-child, per-core timing events of the SK recorder (artifacts.md §5).

Why streamed: the recorder appends for the whole run and files reach several GB (row 65). The
reader decodes one array element at a time with :meth:`json.JSONDecoder.raw_decode` over a bounded
text buffer, so memory stays proportional to one event, not to the file.

Shapes accepted (row 64):

* the real recorder shape ``[{…},\\n{…},\\n{}]`` — the file starts as ``[{}]`` and every write seeks
  two bytes back and appends ``<body>},\\n{}]``; empty objects are the format's seed/terminator and
  are skipped; ``[{}]`` is a valid file with no events;
* a crash-truncated file without the final ``]`` (or cut inside an event) — events read so far are
  kept and a ``truncated`` :class:`Gap` is recorded;
* the auto-tune fixture shape ``{"traceEvents": […]}`` (events without ``[b/n]`` prefix or ``pid``);
* the older recorder (``sk_event_dev_device_<d>.json``): ``args.modelRI`` integer instead of
  ``modelId``, extra ``nodeName``/``deviceId``/``coreId`` args, ``modelRI: <n>`` model-level events.

Event kinds: a *child* event is named ``[<blockIdx>/<blockNum>]<funcName>`` and has ``args.nodeId``
(the node index inside the SK, not the graph nodeId); an *SK-level* event is named
``[<blockIdx>/<blockNum>] <skFuncName>`` (one space; an empty SK name leaves a trailing space) and
has no ``nodeId``. ``ts``/``dur`` are µs floats.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg.parsers.common import MAX_U64, Gap, ParseError, Source, Unrecognized
from skdbg.parsers.frames import empty_frame
from skdbg.parsers.fsguard import open_regular

if TYPE_CHECKING:
    import pandas as pd

#: File names the recorder has used (current first); ``.tmp.json`` is the old recorder's spill file.
PROF_FILE_RE = re.compile(r"^(?:sk_prof_device_|sk_event_dev_device_)(\d{1,19})(?:\.tmp)?\.json$")
PROF_FILE_GLOBS = ("sk_prof_device_*.json", "sk_event_dev_device_*.json")

_NAME_RE = re.compile(r"^\[(\d+)/(\d+)\]( ?)(.*)$", re.DOTALL)
_MODEL_EVENT_RE = re.compile(r"^modelRI: (\d+)$")
_WS_RE = re.compile(r"[ \t\r\n]*")

#: Bytes read per chunk, and the largest single array element accepted before declaring it
#: malformed (a real record fits in the recorder's 1024-byte line buffer, §5).
CHUNK_CHARS = 1 << 20
#: the first decode window (characters): one event of a real recorder file fits in it
_FIRST_WINDOW = 1024
MAX_ELEMENT_CHARS = 4 << 20

CHILD = "child"
SK = "sk"
MODEL = "model"
OTHER = "other"


def prof_device_id(path: str | os.PathLike[str]) -> int | None:
    """Device id from a recorder file name (current or legacy), else None."""
    m = PROF_FILE_RE.match(Path(path).name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class ProfEvent:
    """One Chrome-trace complete event of the SK recorder."""

    src: Source  # line = line where the element starts; json_path = "[i]" / "traceEvents[i]"
    index: int  # array position, counting the empty seed/terminator objects
    level: str  # "child" | "sk" | "model" | "other"
    name: str  # verbatim
    func_name: str  # child funcName, SK name ("" for an empty SK name), or the bare name
    block_idx: int | None
    block_num: int | None
    ph: str | None
    pid: str | None  # "AIC" / "AIV" (core type), absent in the fixture shape
    tid: int | None  # core buffer index
    ts: float  # µs
    dur: float  # µs
    model_id: str | None  # args.modelId "<rtsId>_<callCount>"
    model_ri: int | None  # legacy args.modelRI
    sk_id: int | None  # args.skId = scope id
    node_id: int | None  # args.nodeId = node index inside the SK
    core_id: int | None  # legacy args.coreId
    device_id: int | None  # legacy args.deviceId

    @property
    def end(self) -> float:
        return self.ts + self.dur


@dataclass(slots=True)
class ProfIssues:
    """What the streaming reader could not use, filled while iterating."""

    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)


class ProfReader:
    """Iterate the events of one recorder file without loading it.

    ``for ev in ProfReader(path): …``; afterwards ``reader.gaps``, ``reader.unrecognized``,
    ``reader.complete`` (the closing ``]`` was seen), ``reader.shape`` (``"array"`` or
    ``"traceEvents"``) and ``reader.event_count`` describe the file. A file that is not JSON of
    either shape raises :class:`ParseError` on the first ``next()``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        chunk_chars: int = CHUNK_CHARS,
        max_element_chars: int = MAX_ELEMENT_CHARS,
    ) -> None:
        self.path = Path(path)
        self.file = str(self.path)
        self.chunk_chars = chunk_chars
        self.max_element_chars = max_element_chars
        self.issues = ProfIssues()
        self.complete = False
        self.shape: str | None = None
        self.event_count = 0
        self.device_id = prof_device_id(self.path)

    @property
    def gaps(self) -> list[Gap]:
        return self.issues.gaps

    @property
    def unrecognized(self) -> list[Unrecognized]:
        return self.issues.unrecognized

    def __iter__(self) -> Iterator[ProfEvent]:
        # Each pass starts afresh, so iterating twice does not duplicate gaps or counts.
        self.issues = ProfIssues()
        self.complete = False
        self.shape = None
        self.event_count = 0
        return _Stream(self).events()


class _Stream:
    """Buffered decoder state: ``buf[pos:]`` is unread text; ``line`` is the line number at ``pos``."""

    def __init__(self, reader: ProfReader) -> None:
        self.r = reader
        self.buf = ""
        self.pos = 0
        self.line = 1
        self.eof = False
        self.read_bytes = 0
        self.fh: Any = None
        self.dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.decoder = json.JSONDecoder()

    # -- buffer -----------------------------------------------------------------------------
    def _fill(self) -> bool:
        """Append one chunk; False at end of file. Drops consumed text first (keeps memory bounded)."""
        if self.eof:
            return False
        if self.pos:
            self.buf = self.buf[self.pos :]
            self.pos = 0
        raw = self.fh.read(self.r.chunk_chars)
        if not raw:
            self.eof = True
            self.buf += self.dec.decode(b"", final=True)
            return False
        nul = raw.find(b"\x00")
        if nul >= 0:
            offset = self.read_bytes + nul
            if offset < 16:
                raise ParseError(self.r.file, "an SK profiling JSON file (text), got binary data (NUL bytes)")
            # A crash can leave a zero-filled tail (the file size was extended before the data hit
            # the disk): keep what precedes it and say so.
            self.r.issues.gaps.append(
                Gap(
                    "zero_filled",
                    f"NUL bytes from byte offset {offset} on; the rest of the file is ignored",
                    Source(self.r.file),
                )
            )
            raw = raw[:nul]
            self.eof = True
            self.buf += self.dec.decode(raw, final=True)
            return bool(raw)
        self.read_bytes += len(raw)
        self.buf += self.dec.decode(raw)
        return True

    def _advance(self, new_pos: int) -> None:
        self.line += self.buf.count("\n", self.pos, new_pos)
        self.pos = new_pos

    def _skip_ws(self) -> str | None:
        """Skip whitespace; return the next character (None at end of file)."""
        while True:
            p = _WS_RE.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # '*' always matches
            self._advance(p)
            if p < len(self.buf):
                return self.buf[p]
            if not self._fill():
                return None

    def _decode(self) -> tuple[Any, bool]:
        """Decode one JSON value at ``pos``. Returns ``(value, True)``; ``(None, False)`` when the value
        cannot be decoded even with more input (malformed, or cut off by end of file).

        The decoder sees a window starting at ``pos`` that grows only while the value may continue:
        a decode error costs time in the size of the window (the error's line number is counted from
        the start of the text given), so a file of many malformed lines stays linear.
        """
        window = _FIRST_WINDOW
        while True:
            text = self.buf[self.pos : self.pos + window]
            more_buffered = self.pos + len(text) < len(self.buf)
            try:
                value, end = self.decoder.raw_decode(text)
            except json.JSONDecodeError as exc:
                if not _may_need_more(exc, len(text)):
                    return None, False
                if more_buffered:
                    window *= 4
                    continue
                if len(self.buf) - self.pos > self.r.max_element_chars or not self._fill():
                    return None, False
                continue
            except (RecursionError, ValueError):
                # ValueError: an integer beyond the int/str conversion limit; RecursionError: nesting
                return None, False
            # A number at the very end of the text may continue in the next window or chunk.
            if end == len(text) and not isinstance(value, dict | list | str):
                if more_buffered:
                    window *= 4
                    continue
                if not self.eof and self._fill():
                    continue
            self._advance(self.pos + end)
            return value, True

    # -- parsing ----------------------------------------------------------------------------
    def events(self) -> Iterator[ProfEvent]:
        r = self.r
        self.fh = open_regular(r.path, what="an SK profiling JSON file")
        try:
            first = self._skip_ws()
            if first == "\ufeff":
                self._advance(self.pos + 1)
                first = self._skip_ws()
            if first is None:
                r.issues.gaps.append(
                    Gap(
                        "truncated",
                        "empty profiling file: the recorder never wrote its '[{}]' seed",
                        Source(r.file),
                        collect="ASCEND_PROF_SK_ON=<KB per core> and a clean process exit",
                    )
                )
                return
            if first == "[":
                r.shape = "array"
                self._advance(self.pos + 1)
                yield from self._array("")
            elif first == "{":
                r.shape = "traceEvents"
                yield from self._object()
            else:
                raise ParseError(
                    r.file,
                    "an SK profiling JSON array '[{…},' or object '{\"traceEvents\": […]}'",
                    line=self.line,
                    got=self.buf[self.pos : self.pos + 40],
                )
        finally:
            self.fh.close()

    def _object(self) -> Iterator[ProfEvent]:
        """``{"traceEvents": [...], ...}``: find the events array; other members are skipped."""
        r = self.r
        self._advance(self.pos + 1)
        while True:
            c = self._skip_ws()
            if c is None:
                self._truncated("inside the top-level object")
                return
            if c == "}":
                if r.shape == "traceEvents" and not r.complete:
                    r.issues.gaps.append(
                        Gap("no_events", "object has no 'traceEvents' array", Source(r.file, self.line))
                    )
                return
            if c == ",":
                self._advance(self.pos + 1)
                continue
            line = self.line
            key, ok = self._decode()
            if not ok or not isinstance(key, str):
                self._bad_structure("a member name of the top-level object", line)
                return
            c = self._skip_ws()
            if c != ":":
                if c is None:
                    self._truncated("inside the top-level object")
                else:
                    self._bad_structure("':' after a member name", self.line)
                return
            self._advance(self.pos + 1)
            c = self._skip_ws()
            if c is None:
                self._truncated("inside the top-level object")
                return
            if key == "traceEvents" and c == "[":
                self._advance(self.pos + 1)
                yield from self._array("traceEvents")
                if not r.complete:
                    return
                continue
            line = self.line
            _, ok = self._decode()
            if not ok:
                self._truncated_or_bad(f"the value of '{key}'", line)
                return

    def _array(self, prefix: str) -> Iterator[ProfEvent]:
        r = self.r
        index = 0
        while True:
            c = self._skip_ws()
            if c is None:
                self._truncated(f"after {r.event_count} event(s), before the closing ']'")
                return
            if c == "]":
                self._advance(self.pos + 1)
                r.complete = True
                if prefix == "":
                    c = self._skip_ws()
                    if c is not None:
                        start = self.line
                        rest = self.buf[self.pos : self.pos + 200]
                        r.issues.unrecognized.append(
                            Unrecognized(Source(r.file, start), rest, "sk_prof:after_array")
                        )
                return
            if c == ",":
                self._advance(self.pos + 1)
                continue
            line = self.line
            value, ok = self._decode()
            path = f"{prefix}[{index}]"
            if not ok:
                if self.eof:
                    snippet = self.buf[self.pos : self.pos + 120]
                    self._truncated(f"inside element {path} at line {line}: {snippet!r}")
                    return
                # Malformed element mid-file (e.g. a name with a raw '"'): keep it, resync at next line.
                end = self._resync()
                r.issues.unrecognized.append(
                    Unrecognized(
                        Source(r.file, line, path), self.buf[self.pos : min(end, self.pos + 400)], "sk_prof"
                    )
                )
                self._advance(end)
                index += 1
                continue
            index += 1
            if isinstance(value, dict) and not value:
                continue  # the '{}' seed / terminator of the append format
            ev = _event(value, Source(r.file, line, path), index - 1, r.issues)
            if ev is not None:
                r.event_count += 1
                yield ev

    def _resync(self) -> int:
        """End of the current line (real files hold one event per line), reading on as needed but
        never holding more than ``max_element_chars`` of one line."""
        while True:
            nl = self.buf.find("\n", self.pos + 1)
            if nl >= 0:
                return nl
            if len(self.buf) - self.pos > self.r.max_element_chars or not self._fill():
                return len(self.buf)

    def _truncated(self, where: str) -> None:
        self.r.issues.gaps.append(
            Gap(
                "truncated",
                f"profiling file ends {where}; {self.r.event_count} event(s) before it are kept",
                Source(self.r.file, self.line),
                collect="let the process exit normally so the recorder flushes (artifacts.md §5)",
            )
        )

    def _truncated_or_bad(self, what: str, line: int) -> None:
        if self.eof:
            self._truncated(f"inside {what}")
        else:
            self._bad_structure(what, line)

    def _bad_structure(self, what: str, line: int) -> None:
        if self.eof:
            self._truncated(f"while reading {what}")
            return
        raise ParseError(self.r.file, what, line=line, got=self.buf[self.pos : self.pos + 40])


def _may_need_more(exc: json.JSONDecodeError, buffered: int) -> bool:
    """Could this decode error be the buffer ending mid-element (rather than bad JSON)?

    A cut-off element fails at (or a few characters before, inside a number/literal) the end of
    the buffer, or as an unterminated string/escape; an error well inside the buffer is final.
    """
    if exc.msg.startswith(("Unterminated string", "Invalid \\uXXXX")):
        return True
    return exc.pos >= buffered - 16


def _event(value: Any, src: Source, index: int, issues: ProfIssues) -> ProfEvent | None:
    """Type-check one array element; anything unusable is kept as Unrecognized (never dropped)."""

    def bad(why: str) -> None:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
        issues.unrecognized.append(Unrecognized(src, text[:400], f"sk_prof:{why}"))

    if not isinstance(value, dict):
        bad("not an object")
        return None
    name = value.get("name")
    ts: Any = value.get("ts")
    dur: Any = value.get("dur")
    if not isinstance(name, str):
        bad("name missing or not a string")
        return None
    if not _is_num(ts) or not _is_num(dur):
        bad("ts/dur missing or not numbers")
        return None
    args = value.get("args", {})
    if not isinstance(args, dict):
        bad("args not an object")
        return None
    model_id_v = args.get("modelId")
    model_id = (
        model_id_v if isinstance(model_id_v, str) else (str(model_id_v) if _is_int(model_id_v) else None)
    )
    model_ri: Any = args.get("modelRI") if _is_int(args.get("modelRI")) else None
    sk_id = _opt_int(args, "skId")
    node_id = _opt_int(args, "nodeId")
    pid_v = value.get("pid")
    pid = pid_v if isinstance(pid_v, str) else (str(pid_v) if _is_int(pid_v) else None)
    tid = value.get("tid") if _is_int(value.get("tid")) else None
    ph = value.get("ph") if isinstance(value.get("ph"), str) else None

    block_idx = block_num = None
    m = _NAME_RE.match(name)
    if m:
        block_idx, block_num = int(m.group(1)), int(m.group(2))
        func_name = m.group(4)
        # The separating space is the SK-level signature (§5); a child name is glued to "]".
        level = SK if m.group(3) == " " and node_id is None else CHILD
    else:
        func_name = name
        mm = _MODEL_EVENT_RE.match(name)
        if mm and node_id is None:
            level = MODEL
            if model_ri is None:
                model_ri = int(mm.group(1))
        else:
            level = CHILD if node_id is not None else OTHER
    return ProfEvent(
        src=src,
        index=index,
        level=level,
        name=name,
        func_name=func_name,
        block_idx=block_idx,
        block_num=block_num,
        ph=ph,
        pid=pid,
        tid=int(tid) if tid is not None else None,
        ts=float(ts),
        dur=float(dur),
        model_id=model_id,
        model_ri=int(model_ri) if model_ri is not None else None,
        sk_id=sk_id,
        node_id=node_id,
        core_id=_opt_int(args, "coreId"),
        device_id=_opt_int(args, "deviceId"),
    )


def _is_int(v: Any) -> bool:
    # json decodes integers to exactly ``int``; ``type(...) is`` also excludes bool, and is fast.
    # Beyond 64 bits it is no id or time the recorder writes: not a usable integer.
    return type(v) is int and -MAX_U64 <= v <= MAX_U64


def _is_num(v: Any) -> bool:
    """A finite time or duration: a float that is not inf/nan, or an integer within 64 bits."""
    return (type(v) is float and math.isfinite(v)) or _is_int(v)


def _opt_int(args: dict[str, Any], key: str) -> int | None:
    v: Any = args.get(key)
    return int(v) if _is_int(v) else None


# ----------------------------------------------------------------------------------------------
# Whole-file results and frames


PROF_FRAME_COLUMNS = [
    "file",
    "line",
    "json_path",
    "index",
    "level",
    "name",
    "func_name",
    "block_idx",
    "block_num",
    "pid",
    "tid",
    "ts",
    "dur",
    "end",
    "model_id",
    "model_ri",
    "sk_id",
    "node_id",
]


def prof_frame(events: list[ProfEvent] | Iterator[ProfEvent]) -> pd.DataFrame:
    """One row per event (columns :data:`PROF_FRAME_COLUMNS`); feed it to :func:`child_summary`."""
    import pandas as pd

    cols: dict[str, list[Any]] = {c: [] for c in PROF_FRAME_COLUMNS}
    for e in events:
        cols["file"].append(e.src.file)
        cols["line"].append(e.src.line)
        cols["json_path"].append(e.src.json_path)
        cols["index"].append(e.index)
        cols["level"].append(e.level)
        cols["name"].append(e.name)
        cols["func_name"].append(e.func_name)
        cols["block_idx"].append(e.block_idx)
        cols["block_num"].append(e.block_num)
        cols["pid"].append(e.pid)
        cols["tid"].append(e.tid)
        cols["ts"].append(e.ts)
        cols["dur"].append(e.dur)
        cols["end"].append(e.end)
        cols["model_id"].append(e.model_id)
        cols["model_ri"].append(e.model_ri)
        cols["sk_id"].append(e.sk_id)
        cols["node_id"].append(e.node_id)
    frame: pd.DataFrame = pd.DataFrame(cols, columns=PROF_FRAME_COLUMNS)
    return _nullable_ints(frame, _INT_COLUMNS)


#: Integer columns that may be absent per event; nullable so a missing value does not turn the
#: column into floats (node index 3 must stay 3, not 3.0, for joins).
_INT_COLUMNS = ("line", "index", "block_idx", "block_num", "tid", "model_ri", "sk_id", "node_id")


def _nullable_ints(frame: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
    for c in cols:
        if c in frame.columns:
            try:
                frame[c] = frame[c].astype("Int64")
            except (TypeError, ValueError, OverflowError):
                frame[c] = frame[c].astype(object)  # e.g. a legacy modelRI beyond int64
    return frame


SUMMARY_KEYS = ["model_id", "model_ri", "sk_id", "node_id", "func_name"]
SUMMARY_COLUMNS = [
    *SUMMARY_KEYS,
    "events",
    "cores",
    "aic_events",
    "aiv_events",
    "total_dur",
    "mean_dur",
    "min_dur",
    "max_dur",
    "first_ts",
    "last_end",
]


def child_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per child (model, SK, node index, funcName): event count, distinct cores, AIC/AIV split,
    duration stats (µs) and the covered interval. Columns :data:`SUMMARY_COLUMNS`."""

    child = frame[frame["level"] == CHILD]
    if child.empty:
        empty: pd.DataFrame = empty_frame(SUMMARY_COLUMNS)
        return empty
    g = child.groupby(SUMMARY_KEYS, dropna=False, sort=True)
    out = g.agg(
        events=("dur", "size"),
        cores=("tid", "nunique"),
        aic_events=("pid", lambda s: int((s == "AIC").sum())),
        aiv_events=("pid", lambda s: int((s == "AIV").sum())),
        total_dur=("dur", "sum"),
        mean_dur=("dur", "mean"),
        min_dur=("dur", "min"),
        max_dur=("dur", "max"),
        first_ts=("ts", "min"),
        last_end=("end", "max"),
    ).reset_index()
    result: pd.DataFrame = out[SUMMARY_COLUMNS]
    return result
