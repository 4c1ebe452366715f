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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import Literal, overload

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Source, lazy_regex, oversized_number

LINE_RE = lazy_regex(
    r"^\[\s*(?P<level>[A-Z]+)\s*\]\s*(?P<module>[A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(?P<pid>\d+)\s*,(?P<proc>[^)]*)\)\s*:\s*"
    r"(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3})\s*(?P<pre>(?:\[[^\]]*\]\s*)*?)\[\s*(?P<src>[^\]]*?):(?P<line>\d+)\s*\](?P<rest>.*)$"
)
SK_REST_RE = lazy_regex(r"^\s*\[SK\]\[(?P<func>[^\]]*)\] ?(?P<text>.*)$")
IDEDD_REST_RE = lazy_regex(r"^\s*\[tid:\s*(?P<tid>\d+)\]\s?(?P<text>.*)$")
TID_FUNC_RE = lazy_regex(
    r"^\s*(?P<tid>\d+)\s+(?P<func>[A-Za-z_~][\w:~<>]*)\s*:(?P<tags>(?:\[[A-Z_]+\])*)\s?(?P<text>.*)$"
)
TS_RE = lazy_regex(r"^(\d{4})-(\d{2})-(\d{2})-(\d{2}):(\d{2}):(\d{2})\.(\d{3})\.(\d{3})$")
TAG_RE = regexcode.compile(r"\[([A-Z_]+)\]")


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
    if TS_RE().match(text) is None:
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


def _second(head: str) -> tuple[int, int, int, int, int, int] | None:
    """The datetime fields of a stamp's first 19 characters (None: out of range), cached."""
    try:
        return _SECONDS[head]
    except KeyError:
        pass
    fields: tuple[int, int, int, int, int, int] | None = (
        int(head[0:4]),
        int(head[5:7]),
        int(head[8:10]),
        int(head[11:13]),
        int(head[14:16]),
        int(head[17:19]),
    )
    try:
        datetime(*fields)  # type: ignore[misc]
    except ValueError:
        fields = None
    if len(_SECONDS) >= _SECONDS_MAX:
        _SECONDS.clear()
    _SECONDS[head] = fields
    return fields


def _stamp(ts_text: str) -> datetime | None:
    """:func:`parse_plog_ts` for a stamp :data:`LINE_RE` already matched (same fields, same format)."""
    fields = _second(ts_text[:19])
    if fields is None:
        return None
    try:  # three ASCII digits each, looked up (a regex's ``\d`` also takes other digits: ``int`` then)
        fraction = _DIGITS3[ts_text[20:23]] * 1000 + _DIGITS3[ts_text[24:27]]
    except KeyError:
        fraction = int(ts_text[20:23]) * 1000 + int(ts_text[24:27])
    return datetime(*fields, fraction)


#: the ``ts`` of a stamp a tokenizer here matched (None: not a valid date, e.g. month 13)
stamp_of_text = _stamp

_SECOND_OF = itemgetter(slice(0, 19))


def dated_stamps(stamps: Sequence[str]) -> bool:
    """Each of ``stamps`` is ASCII text of a stamp's 27 characters whose date and time to the second are
    valid (month 1–12, …): the checks a stamp a tokenizer here took needs, its form being
    :data:`_STAMP`'s already (digits and separators where they belong: a row's, :func:`fast_plog_rows`),
    for it to order as its time does, a string comparison being a time comparison. One date check per
    distinct second (a block of lines shares a few): ~2 ms for the bench plog's 18,000 SK lines, where a
    call per stamp cost ~6. True for no stamps."""
    if set(map(len, stamps)) - {27} or not "".join(stamps).isascii():
        return False
    try:
        return all(_second(second) is not None for second in set(map(_SECOND_OF, stamps)))
    except ValueError:  # not digits where _STAMP has them (no tokenizer's stamp)
        return False


def parse_plog_line(text: str, src: Source, *, complete: bool = True) -> PlogLine | None:
    """Tokenize one physical line; ``None`` when it is not a CANN plog record.

    A line holding a number wider than any the runtime prints is not a record (it stays unrecognized,
    with its file and line): its fields could not be converted without raising.
    """
    if oversized_number(text) is not None:
        return None
    m = LINE_RE().match(text)
    if m is None:
        return None
    level, module, pid, proc, ts_text, _pre, src_path, line_no, rest = m.groups()
    tid: int | None = None
    func: str | None = None
    tags: tuple[str, ...] = ()
    body = rest
    is_sk = False
    sk = SK_REST_RE().match(rest)
    if sk is not None:
        is_sk = True
        func, body = sk.groups()
    elif (ide := IDEDD_REST_RE().match(rest)) is not None:
        tid = int(ide.group("tid"))
        body = ide.group("text")
    elif (tf := TID_FUNC_RE().match(rest)) is not None:
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


# ----------------------------------------------------------------------------- fast path
#
# Why: ``skdbg analyze`` tokenizes every marker line of a GB plog (tens of thousands, most of them SK
# exception-handler lines) in a thread that shares the GIL with the sk_meta parsing, so each
# microsecond per line is paid serially. :func:`parse_plog_line` runs two to four patterns and the
# frozen ``__init__`` of a 15-field record; :func:`fast_plog_lines` runs one pattern per line, reuses
# what repeats from line to line (the ``[LEVEL] MODULE(pid,proc)`` head, the ``[file:line]``
# location, the stamp's second, the tag run) and builds the record without the frozen ``__init__``.
# It is a *subset* of the grammar above, never a second grammar: it recognises only lines for which
# :func:`parse_plog_line` gives the very same record, and says "not recognised" (None) for every
# other line, which the caller hands to the general path.
#
# Preconditions (the scan establishes both, for whole batches of lines): the text is one physical
# line (no ``\n``; :func:`fast_plog_line` checks it) and holds no oversized number
# (:func:`~skdbg.parsers.common.oversized_number` is None; the general path refuses such lines).
#
# Why each shortcut is equivalent (``LINE_RE``'s matcher tries the alternatives of every quantifier
# in priority order and keeps the first success; below, the fast pattern's match fixes that success):
#
# * every ``\s*`` of LINE_RE whose fast twin is `` *`` or nothing is followed, in the fast pattern,
#   by a character that is not whitespace (``[``, a letter, a digit, ``(``, ``,``, ``:``); the greedy
#   ``\s*`` therefore takes exactly the spaces the fast pattern took, and no other split exists;
# * ``[A-Z]+``, ``\d+`` (fast: ``[0-9]+``), the module name and ``[^)]*`` are each followed by a
#   character outside their class, so their greedy runs are the fast pattern's runs; the stamp has
#   a fixed width. The head (``[LEVEL] MODULE(pid,proc)``) is therefore parsed the same way
#   whatever follows it: its fields are a function of its text, computed once per distinct head;
# * ``pre`` is lazy, so zero extra bracket groups are tried first; ``[`` + path + ``:`` + digits +
#   ``]`` then matches with the same ``src`` and ``line``: the fast path's characters exclude ``:``,
#   ``]`` and whitespace, so the lazy ``[^\]]*?`` stops at the fast path's ``:`` (the only one) and
#   ``src.strip()`` is the path itself; its basename is computed once per distinct location;
# * ``rest`` (``.*$``) is everything after ``]`` (the text holds no newline); the rest shapes copy
#   SK_REST_RE, IDEDD_REST_RE and TID_FUNC_RE with their leading ``\s*`` matching nothing (the rest
#   starts with ``[`` or a digit) and are tried in the same order: a rest starting with a digit fails
#   the first two, one starting with ``[tid:`` fails the first. Each ends in ``(?P<text>.*)$``, which
#   takes all that is left: the fast pattern stops before it and the text is the rest of the line;
# * TID_FUNC_RE's function name ``[A-Za-z_~][\w:~<>]*`` is greedy and may hold ``:``: the matcher
#   first tries the longest run and gives characters back until ``\s*:`` follows. The fast name
#   holds no ``:`` and is followed by ``:``; the lookahead ``(?![\w:~<>]|\s*:)`` says that this
#   ``:`` ends the run and that the run is not followed by ``\s*:``, so the longest try fails and
#   the next one (one character shorter, the fast name) is the first success; the tags (greedy,
#   then ``\s?``) are the same subpatterns (``\s`` without ``\n``, the same on a line without one);
# * the record's values are computed by the same functions (``int``, ``str.strip``, the stamp's
#   :func:`_second`, ``TAG_RE.findall``, ``rstrip("\r")``) from the same substrings; the stamp's
#   milli- and microseconds (three ASCII digits each) by a table of ``int`` of every such text.

#: a plog stamp, each digit written out: ``re`` runs a fixed-count repeat (``[0-9]{4}``) slower than its
#: items one by one (:data:`skdbg.parsers.sklog_runs._TS`)
_STAMP = r"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9]\.[0-9][0-9][0-9]"

FAST_LINE_RE = lazy_regex(
    r"(?P<head>\[[A-Z]+\] *[A-Za-z_][A-Za-z0-9_]*\([0-9]+,[^)]*\)):"
    rf"(?P<ts>{_STAMP}) *"
    r"\[(?P<at>[A-Za-z0-9_.+\-/]*:[0-9]+)\]"
    r"(?:\[SK\]\[(?P<sk_func>[^\]\n]*)\] ?"
    r"|(?P<tid>[0-9]+) +(?P<func>[A-Za-z_~][A-Za-z0-9_~<>]*):(?![\w:~<>]|\s*:)"
    r"(?P<tags>(?:\[[A-Z_]+\])*)[^\S\n]?"
    r"|\[tid:(?P<idedd_tid>[0-9]+)\][^\S\n]?)"
)
#: the head of :data:`FAST_LINE_RE`, split into its fields
_HEAD_RE = regexcode.compile(r"\[([A-Z]+)\] *([A-Za-z_][A-Za-z0-9_]*)\(([0-9]+),([^)]*)\)")

#: ``PlogLine(*values)`` without the frozen ``__init__`` (same object, ~5x cheaper)
build_plog_line = frozen_builder(PlogLine)
#: ``Source(file, line, None)`` without the frozen ``__init__`` (one per record)

#: what repeats from line to line, by its text: head → (level, module, pid, proc), ``file:line`` →
#: (basename, line), tag run (``[INIT][DEFAULT]``) → tags. A log holds a handful of heads and tag
#: runs and a few hundred locations; each table is emptied when it reaches :data:`_REPEATS_MAX`.
#: Only texts up to :data:`_REPEAT_KEY_MAX` characters are kept: a head or location can be up to a
#: line long (1 MiB), and 4,096 such keys would pin gigabytes after the scan; longer ones are
#: worked out each time (they are rare, and never repeat in a real log).
_HEADS: dict[str, tuple[str, str, int, str]] = {}
_PLACES: dict[str, tuple[str, int]] = {}
_TAGS: dict[str, tuple[str, ...]] = {}
_FUNCS: dict[str, str] = {}
_REPEATS_MAX = 1 << 12
_REPEAT_KEY_MAX = 256
#: ``int`` of every three-ASCII-digit text (the stamp's milli- and microseconds), by lookup
_DIGITS3 = {f"{i:03d}": i for i in range(1000)}


def _head(head: str) -> tuple[str, str, int, str]:
    fields = _HEADS.get(head)
    if fields is None:
        m = _HEAD_RE.fullmatch(head)
        assert m is not None  # the head group of FAST_LINE_RE is this pattern
        level, module, pid, proc = m.groups()
        fields = (level, module, int(pid), proc.strip())
        if len(head) <= _REPEAT_KEY_MAX:
            if len(_HEADS) >= _REPEATS_MAX:
                _HEADS.clear()
            _HEADS[head] = fields
    return fields


def _place(at: str) -> tuple[str, int]:
    place = _PLACES.get(at)
    if place is None:
        path, _, line_no = at.rpartition(":")
        place = (path.rsplit("/", 1)[-1], int(line_no))
        if len(at) <= _REPEAT_KEY_MAX:
            if len(_PLACES) >= _REPEATS_MAX:
                _PLACES.clear()
            _PLACES[at] = place
    return place


def _shared_func(func: str) -> str:
    """``func`` as the one string object of its text (a function name repeats on every line of a
    burst: the SK handler's ``PrintDfxInfo`` on ~13,000 lines of the bench plog).

    Why: a row made in the scan's child is pickled to the parent (:func:`fast_plog_rows`); pickle
    writes a string object once and then refers to it, so rows sharing the object make a ~10% smaller
    stream, ~1.7 ms less to unpickle and 18,000 fewer strings in the parent on the bench scene."""
    shared = _FUNCS.get(func)
    if shared is None:
        if len(func) > _REPEAT_KEY_MAX:
            return func
        if len(_FUNCS) >= _REPEATS_MAX:
            _FUNCS.clear()
        shared = _FUNCS[func] = func
    return shared


def _tags(tag_text: str) -> tuple[str, ...]:
    tags = _TAGS.get(tag_text)
    if tags is None:
        tags = tuple(TAG_RE.findall(tag_text))
        if len(tag_text) <= _REPEAT_KEY_MAX:
            if len(_TAGS) >= _REPEATS_MAX:
                _TAGS.clear()
            _TAGS[tag_text] = tags
    return tags


def fast_plog_line(text: str, src: Source, complete: bool = True) -> PlogLine | None:
    """:func:`parse_plog_line` for the common shapes (SK, RUNTIME/GE ``tid Func:``, IDEDD), or None
    when the line is not one of them — the caller then asks :func:`parse_plog_line`.

    Equal to :func:`parse_plog_line` field for field whenever it returns a record (see the comment
    above and ``tests/test_plog_line_fast.py``). One line at a time, it checks both preconditions
    itself; :func:`fast_plog_lines` leaves them to its caller (the scan checks whole batches).
    """
    if "\n" in text or oversized_number(text) is not None:
        return None
    return fast_plog_lines((text,), (src,), (complete,))[0]


def fast_plog_lines(
    texts: Sequence[str], sources: Sequence[Source], completes: Sequence[bool]
) -> list[PlogLine | None]:
    """:func:`fast_plog_line` of each line, in one loop: a scan hands its lines over in batches, one
    call and the lookups hoisted out of the loop instead of one per line.

    Preconditions (see the comment above): no text holds a ``\\n`` or an oversized number — a
    number of thousands of digits would make ``int`` raise."""
    out: list[PlogLine | None] = []
    append = out.append
    match = FAST_LINE_RE().match
    build = build_plog_line
    heads, places, tag_runs, digits3 = _HEADS, _PLACES, _TAGS, _DIGITS3
    last_second = None  # the stamp's second of the line before (lines come in time order)
    fields: tuple[int, int, int, int, int, int] | None = None
    for text, src, complete in zip(texts, sources, completes, strict=True):
        m = match(text)
        if m is None:
            append(None)
            continue
        head, ts_text, at, sk_func, tid, func, tag_text, idedd_tid = m.groups()
        level, module, pid, proc = heads.get(head) or _head(head)
        src_file, src_line = places.get(at) or _place(at)
        second = ts_text[:19]  # _stamp(ts_text), the second's fields reused while it lasts
        if second != last_second:
            last_second, fields = second, _second(second)
        ts = (
            None
            if fields is None
            else datetime(*fields, digits3[ts_text[20:23]] * 1000 + digits3[ts_text[24:27]])
        )
        body = text[m.end() :].rstrip("\r")
        # the three rest shapes differ only in tid, function, tags and the SK flag
        tags: tuple[str, ...] | None = ()
        if sk_func is not None:
            line_tid, line_func, is_sk = None, sk_func, True
        elif tid is not None:
            tags = tag_runs.get(tag_text)
            if tags is None:  # () for a line without tags is a cached value too
                tags = _tags(tag_text)
            line_tid, line_func, is_sk = int(tid), func, False
        else:
            line_tid, line_func, is_sk = int(idedd_tid), None, False
        append(
            build(
                src,
                level,
                module,
                pid,
                proc,
                ts,
                ts_text,
                src_file,
                src_line,
                line_tid,
                line_func,
                tags,
                body,
                is_sk,
                complete,
            )
        )
    return out


# ----------------------------------------------------------------------------- bulk path
#
# Why: even :func:`fast_plog_lines` pays, per line, a pattern call, a group tuple, the end offset and
# a slice; on the bench scene's 18,000 SK handler lines that is a fifth of the scan thread's Python,
# all of it with the GIL held beside the main thread's parsing. :func:`fast_plog_block` (and
# :func:`fast_plog_rows`, the same lines as tuples) asks one ``findall`` over the batch's lines joined by
# ``\n`` for every line's groups at once (C, one call).
#
# :data:`BLOCK_LINE_RE` is :data:`FAST_LINE_RE` anchored at each line start (``^`` + MULTILINE), with
# the rest of the line as one more group and every class that could run past a line end made to stop
# at ``\n`` (``[^)]`` → ``[^)\n]``, ``\s`` → ``[^\S\n]``; every other class and ``.`` exclude ``\n``
# already). On a text without ``\n`` each change matches what it replaces, and at the line's end the
# ``\n`` is refused exactly where the end of a one-line text is refused (the lookahead fails on
# neither). So no match leaves its line, each match is the one :data:`FAST_LINE_RE` makes of that
# line (same groups: the added ``(.*)`` always succeeds, it takes what ``text[m.end():]`` takes), and a
# line holds at most one match (the next one can start only after a ``\n``). ``findall`` giving as
# many matches as there are lines therefore means every line matched, in order; anything else sends
# the batch back to :func:`fast_plog_lines`. ``findall`` gives ``""`` for a group that did not take
# part: the RUNTIME/GE and IDEDD alternatives are told by their tids (``[0-9]+``, never empty when
# taken), and the SK alternative is the one where both are empty.

BLOCK_LINE_RE = regexcode.compile(
    r"^(\[[A-Z]+\] *[A-Za-z_][A-Za-z0-9_]*\([0-9]+,[^)\n]*\)):"
    rf"({_STAMP}) *"
    r"\[([A-Za-z0-9_.+\-/]*:[0-9]+)\]"
    r"(?:\[SK\]\[([^\]\n]*)\] ?"
    r"|([0-9]+) +([A-Za-z_~][A-Za-z0-9_~<>]*):(?![\w:~<>]|[^\S\n]*:)"
    r"((?:\[[A-Z_]+\])*)[^\S\n]?"
    r"|\[tid:([0-9]+)\][^\S\n]?)"
    r"(.*)",
    re.MULTILINE,
)


#: one marker line as :func:`fast_plog_rows` gives it: the fields of its :class:`PlogLine` in field
#: order but its source as ``file, line`` (a bulk line's ``json_path`` is None) and without ``ts``, which
#: :func:`plog_lines_of_rows` works out from ``ts_text``
PlogRow = tuple[
    str, int, str, str, int, str, str, str, int, "int | None", "str | None", "tuple[str, ...]", str, bool, bool
]  # fmt: skip


def fast_plog_block(
    block: str, file: str, nos: Sequence[int], completes: Sequence[bool]
) -> list[PlogLine] | None:
    """:func:`fast_plog_lines` of ``block.split("\\n")``, line ``k`` coming from ``Source(file,
    nos[k])``, when it recognises every one of those lines (the common case); else None (nothing
    recognised: ask :func:`fast_plog_lines`).

    Same preconditions as :func:`fast_plog_lines` for each line; ``nos`` and ``completes`` have one
    entry per line. See the comment above for why the records are the same."""
    return _tokenized(block, file, nos, completes, rows=False)


def fast_plog_rows(
    block: str, file: str, nos: Sequence[int], completes: Sequence[bool]
) -> list[PlogRow] | None:
    """:func:`fast_plog_block`'s lines as :data:`PlogRow` tuples: :func:`plog_lines_of_rows` makes
    them the same records.

    Why a form of its own: a plog scan in a child process (:mod:`skdbg.parsers.plog_fork`) sends its
    lines to the parent, which makes the records (or keeps a batch of SK-logger lines as rows:
    :mod:`skdbg.parsers.plog_rows`). Made in the child and sent as records, each line
    cost the child its record, the datetime of its stamp and that datetime's pickle (about half the
    child's work on the SK handler block's 18,000 lines); a row is one tuple of strings and numbers,
    and the stamp travels as its text only."""
    return _tokenized(block, file, nos, completes, rows=True)


@overload
def _tokenized(
    block: str, file: str, nos: Sequence[int], completes: Sequence[bool], *, rows: Literal[False]
) -> list[PlogLine] | None: ...


@overload
def _tokenized(
    block: str, file: str, nos: Sequence[int], completes: Sequence[bool], *, rows: Literal[True]
) -> list[PlogRow] | None: ...


def _tokenized(
    block: str, file: str, nos: Sequence[int], completes: Sequence[bool], *, rows: bool
) -> list[PlogLine] | list[PlogRow] | None:
    """:func:`fast_plog_block` (``rows`` False) or :func:`fast_plog_rows`: one loop, whose last step
    (the row's tuple, or the stamp's datetime and the record) depends on ``rows``."""
    found = BLOCK_LINE_RE.findall(block)
    if len(found) != len(nos) or len(completes) != len(nos):
        return None
    strip_cr = "\r" in block  # else no body can end in one: no rstrip per line
    records: list[PlogLine] = []
    tuples: list[PlogRow] = []
    append, add = records.append, tuples.append
    build, new_source = build_plog_line, build_source
    heads, places, tag_runs, digits3 = _HEADS, _PLACES, _TAGS, _DIGITS3
    last_head = last_at = last_second = None
    level = module = proc = src_file = ""
    pid = src_line = year = month = day = hour = minute = sec = 0
    fields: tuple[int, int, int, int, int, int] | None = None
    tags: tuple[str, ...] | None
    for row, no, complete in zip(found, nos, completes, strict=True):
        head, ts_text, at, sk_func, tid, func, tag_text, idedd_tid, body = row
        if head != last_head:
            last_head = head
            level, module, pid, proc = heads.get(head) or _head(head)
        if at != last_at:
            last_at = at
            src_file, src_line = places.get(at) or _place(at)
        if strip_cr:
            body = body.rstrip("\r")
        # the three rest shapes differ only in tid, function, tags and the SK flag
        if tid:
            tags = tag_runs.get(tag_text)
            if tags is None:  # () for a line without tags is a cached value too
                tags = _tags(tag_text)
            line_tid, line_func, is_sk = int(tid), func, False
        elif idedd_tid:
            line_tid, line_func, tags, is_sk = int(idedd_tid), None, (), False
        else:
            line_tid, line_func, tags, is_sk = None, sk_func, (), True
        if rows:
            if line_func is not None:
                line_func = _FUNCS.get(line_func) or _shared_func(line_func)
            add(
                (file, no, level, module, pid, proc, ts_text, src_file, src_line, line_tid, line_func, tags, body, is_sk, complete)
            )  # fmt: skip
            continue
        second = ts_text[:19]  # the pattern fixed every field's position in the stamp
        if second != last_second:  # the second's fields as locals: no argument tuple per record
            last_second, fields = second, _second(second)
            if fields is not None:
                year, month, day, hour, minute, sec = fields
        ts = (
            None
            if fields is None
            else datetime(
                year, month, day, hour, minute, sec, digits3[ts_text[20:23]] * 1000 + digits3[ts_text[24:27]]
            )
        )
        append(
            build(
                new_source(file, no, None), level, module, pid, proc, ts, ts_text, src_file, src_line,
                line_tid, line_func, tags, body, is_sk, complete,
            )
        )  # fmt: skip
    return tuples if rows else records


def plog_lines_of_rows(rows: Iterable[PlogRow]) -> list[PlogLine]:
    """The :class:`PlogLine` of each of ``rows`` (:func:`fast_plog_rows`), equal to the record
    :func:`fast_plog_block` makes of its line: ``ts`` is :func:`_stamp` of ``ts_text`` (the tokenizer
    took the stamp whole, and the same fields come out of it)."""
    out: list[PlogLine] = []
    append = out.append
    build, new_source, digits3 = build_plog_line, build_source, _DIGITS3
    # :func:`_stamp` inline, the second's fields kept as locals while it lasts (~0.15 us a row of the
    # ~0.5 the call took: the SK handler block's 18,000 rows are made here as the analysis's last stretch)
    last_second: str | None = None
    fields: tuple[int, int, int, int, int, int] | None = None
    year = month = day = hour = minute = sec = 0
    ts: datetime | None
    for file, no, level, module, pid, proc, ts_text, src_file, src_line, tid, func, tags, body, is_sk, complete in rows:  # fmt: skip
        second = ts_text[:19]
        if second != last_second:
            last_second, fields = second, _second(second)
            if fields is not None:
                year, month, day, hour, minute, sec = fields
        if fields is None:
            ts = None
        else:
            try:
                fraction = digits3[ts_text[20:23]] * 1000 + digits3[ts_text[24:27]]
            except KeyError:  # as _stamp: a digit that is no ASCII digit goes through int
                fraction = int(ts_text[20:23]) * 1000 + int(ts_text[24:27])
            ts = datetime(year, month, day, hour, minute, sec, fraction)
        append(
            build(
                new_source(file, no, None), level, module, pid, proc, ts, ts_text, src_file,
                src_line, tid, func, tags, body, is_sk, complete,
            )
        )  # fmt: skip
    return out
