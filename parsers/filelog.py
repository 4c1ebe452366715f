"""The SK file-logger line format of every ``sk_meta/<pid>/model_*/*.log`` (artifacts.md §3.2).

``YYYY-MM-DD HH:MM:SS.mmm [<pid>:<tid>] [<LEVEL>] [<file>:<line>] [<Function>] <message>``

The prefix is optional: hand-written fixtures and older files carry bare messages, so
:func:`split_prefix` returns the message either way plus the prefix when present.
Records longer than 4096 bytes are written in pieces with ``[CONT:<n>] `` markers spliced in
*without* a newline (at byte offsets 4096, 8192+len(marker), …); :func:`rejoin_cont_bytes` removes them
from a line's bytes, before it is decoded (a piece border may fall inside a character's UTF-8 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from skdbg import regexcode

PREFIX_RE = regexcode.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \[(?P<pid>\d+):(?P<tid>\d+)\] "
    r"\[(?P<level>[A-Z]+)\] \[(?P<src>[^\]]*?):(?P<line>\d+)\] \[(?P<func>[^\]]*)\] ?"
)
CONT_RE = regexcode.compile(rb"\[CONT:\d+\] ")
PIECE = 4096
FORMAT_ERROR = "[FORMAT_ERROR] Failed to format log message"


@dataclass(frozen=True, slots=True)
class FileLogPrefix:
    """The SK file logger's prefix of one line (§3.2): stamp, writer pid and tid, level, source file and
    line, function; ``ts`` is None when the stamp is out of range (its text is kept)."""

    ts: datetime | None
    ts_text: str
    pid: int
    tid: int
    level: str  # TRACE, DEBUG, INFO, WARN, ERROR
    src_file: str
    src_line: int
    func: str


def parse_filelog_ts(text: str) -> datetime | None:
    """``YYYY-MM-DD HH:MM:SS.mmm`` → datetime; None when out of range.

    Sliced by position (the prefix regex already fixed the shape): ``strptime`` costs ~50 µs a line,
    which dominated reading sk_meta files of thousands of nodes.
    """
    if len(text) < 19 or text[4] != "-" or text[7] != "-" or text[10] != " " or text[13] != ":":
        try:
            return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f")
        except ValueError:
            return None
    try:
        frac = text[20:]
        micro = int((frac + "000000")[:6]) if frac else 0
        return datetime(
            int(text[0:4]),
            int(text[5:7]),
            int(text[8:10]),
            int(text[11:13]),
            int(text[14:16]),
            int(text[17:19]),
            micro,
        )
    except ValueError:
        return None


_TAIL_CACHE: dict[str, tuple[int, int, str, str, int, str]] = {}
_CACHE_MAX = 4096


_SECOND_CACHE: dict[str, datetime | None] = {}
_MISSING = datetime.min  # a cache-miss marker no log prints (year 1)


def second_of(text: str) -> datetime | None:
    """The datetime of a stamp's whole second (``YYYY-MM-DD HH:MM:SS``; None when out of range),
    parsed once per distinct second: the lines of one burst share it."""
    base = _SECOND_CACHE.get(text, _MISSING)
    if base is _MISSING:
        if len(_SECOND_CACHE) >= _CACHE_MAX:
            _SECOND_CACHE.clear()
        base = _SECOND_CACHE[text] = parse_filelog_ts(text)
    return base


def prefix_ts(text: str) -> datetime | None:
    """``text`` as PREFIX_RE matched it (``YYYY-MM-DD HH:MM:SS.mmm``): its whole second, converted once
    per distinct second (:func:`second_of`; the lines of one burst share it), plus the milliseconds (a
    whole second plus under 1000 ms stays inside that second, so this equals putting them in)."""
    base = second_of(text[:19])
    return None if base is None else base + MILLIS[int(text[20:23])]


#: ``timedelta`` of each millisecond count (a stamp is its whole second plus these)
MILLIS = [timedelta(milliseconds=i) for i in range(1000)]
_SECOND_B_CACHE: dict[bytes, datetime | None] = {}


def ts_from_bytes(ts: bytes) -> datetime | None:
    """:func:`prefix_ts` for the undecoded ASCII timestamp of a prefix (``YYYY-MM-DD HH:MM:SS.mmm``):
    the second is parsed once, the milliseconds are added (a whole second plus under 1000 ms stays
    inside that second, so this equals putting them in)."""
    second = ts[:19]
    base = _SECOND_B_CACHE.get(second, _MISSING)
    if base is _MISSING:
        if len(_SECOND_B_CACHE) >= _CACHE_MAX:
            _SECOND_B_CACHE.clear()
        base = _SECOND_B_CACHE[second] = parse_filelog_ts(second.decode("ascii"))
    return None if base is None else base + MILLIS[int(ts[20:23])]


def split_prefix(line: str) -> tuple[FileLogPrefix | None, str]:
    """Return ``(prefix or None, message)``; the message keeps its own leading indentation.

    Metadata files are 10⁵ lines written in bursts by a few functions, so the timestamp and the
    ``[pid:tid] [LEVEL] [file:line] [func]`` tail are parsed once per distinct text (bounded caches).
    """
    m = PREFIX_RE.match(line)
    if m is None:
        return None, line
    ts_text = line[:23]  # the ts group: 23 characters (each \d is one)
    tail_text = line[23 : m.end()]
    tail = _TAIL_CACHE.get(tail_text)
    if tail is None:
        if len(_TAIL_CACHE) >= _CACHE_MAX:
            _TAIL_CACHE.clear()
        tail = _TAIL_CACHE[tail_text] = (
            int(m.group("pid")),
            int(m.group("tid")),
            m.group("level"),
            m.group("src").rsplit("/", 1)[-1],
            int(m.group("line")),
            m.group("func"),
        )
    prefix = FileLogPrefix(prefix_ts(ts_text), ts_text, *tail)
    return prefix, line[m.end() :]


def has_long_line(data: str | bytes) -> bool:
    """True when a line of ``data`` (whole lines, text or ASCII-compatible bytes) has ``PIECE``
    characters or bytes or more. Given a line's bytes, only such a line can hold a ``[CONT:n]`` marker
    that :func:`rejoin_cont_bytes` removes (it leaves a shorter line as it is); given text, the answer
    holds for ASCII text only (a character may take several bytes), so a reader of text asks it of the
    bytes, or of text it knows is ASCII. A chunk without such a line needs no marker search, which
    would cost a scan of it: one ``rfind`` per ``PIECE`` instead. The line at ``pos`` is shorter when a
    newline ends it within ``PIECE`` of ``pos``, and so is every line up to the last newline there."""
    newline = "\n" if isinstance(data, str) else b"\n"
    pos, end = 0, len(data)
    while end - pos >= PIECE:  # shorter rest: every line in it is shorter (a last line may lack its newline)
        nl = data.rfind(newline, pos, pos + PIECE)  # type: ignore[arg-type]  # same type as data
        if nl < 0:
            return True
        pos = nl + 1
    return False


def rejoin_cont_bytes(raw: bytes) -> bytes:
    """``raw`` (one line's bytes, without its newline) without the ``[CONT:n] `` markers the file logger
    spliced in at its piece borders: at byte ``PIECE``, then ``PIECE`` bytes after each marker's end,
    as long as a marker is there. ``raw`` itself (the same object) when there is none to remove.

    Why bytes: the logger cuts a record every ``PIECE`` bytes, inside a character's UTF-8 bytes too;
    the line is whole, and decodes to its characters, only once the pieces are joined."""
    if len(raw) <= PIECE or b"[CONT:" not in raw:
        return raw
    kept: list[bytes] = []
    start, pos = 0, PIECE  # the next piece begins at ``start``; its marker is expected at ``pos``
    while pos < len(raw):
        m = CONT_RE.match(raw, pos)
        if m is None:
            break
        kept.append(raw[start:pos])
        start = m.end()
        pos = start + PIECE
    if not kept:
        return raw
    kept.append(raw[start:])
    return b"".join(kept)


def rejoin_cont(line: str) -> str:
    """:func:`rejoin_cont_bytes` of a line known only as text (its UTF-8 bytes; the line itself when
    there is no marker to remove). Exact for text that was decoded without a replacement; a reader that
    has the line's bytes rejoins those instead (see :func:`rejoin_cont_bytes`)."""
    if "[CONT:" not in line:
        return line
    raw = line.encode("utf-8", errors="surrogateescape")
    joined = rejoin_cont_bytes(raw)
    return line if joined is raw else joined.decode("utf-8", errors="replace")


def format_filelog_prefix(
    ts: datetime, pid: int, tid: int, level: str, src_file: str, src_line: int, func: str
) -> str:
    """Inverse of :func:`split_prefix` (used by the scene builder)."""
    stamp = ts.strftime("%Y-%m-%d %H:%M:%S.") + f"{ts.microsecond // 1000:03d}"
    return f"{stamp} [{pid}:{tid}] [{level}] [{src_file}:{src_line}] [{func}] "
