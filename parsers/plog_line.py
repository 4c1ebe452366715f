"""Tokenizer for one CANN plog line (artifacts.md §1.2).

Grammar: ``[<LEVEL>] <MODULE>(<pid>,<proc>):<YYYY-MM-DD-HH:MM:SS.mmm.uuu> [<file>:<line>]<rest>``
GE TRACE lines may carry extra bracket groups before ``[file:line]`` (``[status:STOP]``); they
are skipped. ``\\s*`` is tolerated around ``(``…``)``, ``:`` and inside ``[``…``]`` (real logs show
``[ERROR]  RUNTIME(…) :2024-…``). ``<rest>`` is split by module:

* SK (``ASCENDCKERNEL`` or any module): ``[SK][<Function>] <text>`` — no tid;
* IDEDD: ``[tid:<tid>] <text>``;
* RUNTIME: ``<tid> <Function>:[TAG][TAG]<text>`` (tags optional);
* GE and others: ``<tid> <Function>: <text>`` when that shape is present, else the whole rest.

Only this module knows the grammar; everything downstream works on :class:`PlogLine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from skdbg.parsers.common import Source, oversized_number

LINE_RE = re.compile(
    r"^\[\s*(?P<level>[A-Z]+)\s*\]\s*(?P<module>[A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(?P<pid>\d+)\s*,(?P<proc>[^)]*)\)\s*:\s*"
    r"(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3})\s*(?P<pre>(?:\[[^\]]*\]\s*)*?)\[\s*(?P<src>[^\]]*?):(?P<line>\d+)\s*\](?P<rest>.*)$"
)
SK_REST_RE = re.compile(r"^\s*\[SK\]\[(?P<func>[^\]]*)\] ?(?P<text>.*)$")
IDEDD_REST_RE = re.compile(r"^\s*\[tid:\s*(?P<tid>\d+)\]\s?(?P<text>.*)$")
TID_FUNC_RE = re.compile(
    r"^\s*(?P<tid>\d+)\s+(?P<func>[A-Za-z_~][\w:~<>]*)\s*:(?P<tags>(?:\[[A-Z_]+\])*)\s?(?P<text>.*)$"
)
TS_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-(\d{2}):(\d{2}):(\d{2})\.(\d{3})\.(\d{3})$")
TAG_RE = re.compile(r"\[([A-Z_]+)\]")


@dataclass(frozen=True, slots=True)
class PlogLine:
    """One parsed plog record; ``text`` is the message body after tid/function/tags."""

    src: Source
    level: str
    module: str
    pid: int
    proc: str
    ts: datetime | None  # None only if the stamp is out of range (e.g. month 13)
    ts_text: str
    src_file: str  # basename of __FILE__
    src_line: int
    tid: int | None
    func: str | None
    tags: tuple[str, ...]
    text: str
    is_sk: bool  # carries the [SK][<Function>] tag of the SK logger
    complete: bool = True  # False: last line of a truncated file

    @property
    def ts_key(self) -> tuple[int, datetime]:
        """Sort key that puts unparsable stamps first instead of raising."""
        return (0, datetime.min) if self.ts is None else (1, self.ts)


def parse_plog_ts(text: str) -> datetime | None:
    """``2026-03-28-11:32:18.888.239`` -> naive datetime with microsecond precision."""
    if TS_RE.match(text) is None:
        return None
    # the pattern fixed every field's position (each \d is one character): slice, no group tuple
    try:
        return datetime(
            int(text[0:4]),
            int(text[5:7]),
            int(text[8:10]),
            int(text[11:13]),
            int(text[14:16]),
            int(text[17:19]),
            int(text[20:23]) * 1000 + int(text[24:27]),
        )
    except ValueError:
        return None


def format_plog_ts(ts: datetime) -> str:
    """Inverse of :func:`parse_plog_ts` (used by the scene builder)."""
    return ts.strftime("%Y-%m-%d-%H:%M:%S.") + f"{ts.microsecond // 1000:03d}.{ts.microsecond % 1000:03d}"


#: the stamp up to the second → its datetime fields (None: out of range); plog lines come in time
#: order, so thousands of lines share an entry (bounded)
_SECONDS: dict[str, tuple[int, int, int, int, int, int] | None] = {}
_SECONDS_MAX = 1 << 12


def _stamp(ts_text: str) -> datetime | None:
    """:func:`parse_plog_ts` for a stamp :data:`LINE_RE` already matched (same fields, same format)."""
    head = ts_text[:19]
    try:
        fields = _SECONDS[head]
    except KeyError:
        fields = (
            int(head[0:4]),
            int(head[5:7]),
            int(head[8:10]),
            int(head[11:13]),
            int(head[14:16]),
            int(head[17:19]),
        )
        try:
            datetime(*fields)
        except ValueError:
            fields = None
        if len(_SECONDS) >= _SECONDS_MAX:
            _SECONDS.clear()
        _SECONDS[head] = fields
    if fields is None:
        return None
    return datetime(*fields, int(ts_text[20:23]) * 1000 + int(ts_text[24:27]))


def parse_plog_line(text: str, src: Source, *, complete: bool = True) -> PlogLine | None:
    """Tokenize one physical line; ``None`` when it is not a CANN plog record.

    A line holding a number wider than any the runtime prints is not a record (it stays unrecognized,
    with its file and line): its fields could not be converted without raising.
    """
    if oversized_number(text) is not None:
        return None
    m = LINE_RE.match(text)
    if m is None:
        return None
    level, module, pid, proc, ts_text, _pre, src_path, line_no, rest = m.groups()
    tid: int | None = None
    func: str | None = None
    tags: tuple[str, ...] = ()
    body = rest
    is_sk = False
    sk = SK_REST_RE.match(rest)
    if sk is not None:
        is_sk = True
        func, body = sk.groups()
    elif (ide := IDEDD_REST_RE.match(rest)) is not None:
        tid = int(ide.group("tid"))
        body = ide.group("text")
    elif (tf := TID_FUNC_RE.match(rest)) is not None:
        tid = int(tf.group("tid"))
        func = tf.group("func")
        tags = tuple(TAG_RE.findall(tf.group("tags")))
        body = tf.group("text")
    return PlogLine(
        src,
        level,
        module,
        int(pid),
        proc.strip(),
        _stamp(ts_text),
        ts_text,
        src_path.strip().rsplit("/", 1)[-1],
        int(line_no),
        tid,
        func,
        tags,
        body.rstrip("\r"),
        is_sk,
        complete,
    )
