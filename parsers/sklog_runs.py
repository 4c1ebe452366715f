"""``super_kernel.log`` read a chunk at a time with one bytes regex: runs of ordinary lines stay bytes.

Why: the bench log holds 70k lines, and making a decoded, prefix-split line object of each cost more
than everything triage then does with them. Most lines are ordinary: a file-logger prefix (§3.2) of a
writer pid already seen, printable ASCII, a non-blank body. Such lines only need counting (repeats of
the dedicated files), a fact regex (build facts) or, for the exception handler's lines, a message each.
One regex over the chunk sorts the lines into runs of those three kinds in C; every other line (no
prefix, a new pid, blank, ``[FORMAT_ERROR]``, a line of the handler's source file under another
function, a cut or unterminated line) becomes the :class:`~skdbg.parsers.skmeta_lines.MetaLine` the
line-by-line reader makes, and so does every line of a run that holds ``[CONT:n]`` pieces (in a line of
``PIECE`` bytes or more), non-ASCII or control bytes or an oversized number (:func:`_clean`), so each
edge case keeps exactly its line-by-line treatment.

Provenance (first prefix, first line per pid; gate F4/F7) needs no work for a run: a run only holds
pids an earlier :class:`MetaLine` of the same file wrote, so they are recorded already. That is also why
another sk_meta log whose provenance alone an analysis needs is read this way
(:mod:`skdbg.parsers.filelog_outline`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from skdbg import regexcode
from skdbg.parsers import common
from skdbg.parsers.bulk import build_source
from skdbg.parsers.common import Source
from skdbg.parsers.filelog import FORMAT_ERROR, FileLogPrefix, has_long_line, split_prefix
from skdbg.parsers.skmeta_lines import MetaLine, raw_meta_line, to_meta_line
from skdbg.parsers.textio import TextLine, iter_line_chunks

HANDLER_FILE = "sk_dfx_exception_handler.cpp"
# [SK] functions of sk_dfx_exception_handler.cpp (§1.4); their lines are the handler parser's.
HANDLER_FUNCS = frozenset(
    {
        "HandleException",
        "IsSuperKernelException",
        "ExtractSkDeviceEntryArgsPtr",
        "PrintSkHeaderInfo",
        "PrintTaskQueue",
        "PrintCounterInfo",
        "PrintDfxInfo",
        "ParseAndPrintSubKernelSymbols",
        "IdentifyErrorNodeByPC",
        "FindErrorNodeByPC",
        "PrintMatchedNodeBasicInfo",
        "PrintFuncSymbolInfo",
        "PrintNodeDevArgs",
        "PrintNoMatchInfo",
        "PrintCoreSymbols",
        "PrintAllCoreSymbols",
        "GetCondRegValue",
        "ParseAndPrintCondInfo",
        "PrintCondSubKernelInfo",
        "PrintModelIdIndexMap",
        "ExceptionDumpInfoCallBack",
        "ProcessExceptionDump",
        "FillExceptionDumpInfo",
    }
)

# Printers of the dedicated files whose lines super_kernel.log repeats (§3.2, §3.4–§3.9): none of the
# facts of super_kernel.log comes from them, so their (many) lines are counted as plain text.
OTHER_FILE_PRINTERS = frozenset(
    {
        "PrintSKNodesDetail",
        "DumpDeviceArgsDetail",
        "DumpTaskQueDetail",
        "PrintScopeDetails",
        "UpdateNodeScopeBitFlags",
    }
)

#: at most this many writer pids get runs; lines of further pids are read one by one (still exact)
MAX_RUN_PIDS = 32

#: the stamp, each digit written out: ``re`` runs a fixed-count repeat (``[0-9]{4}``) slower than its items
#: one by one (the run regex over the bench scene's 15 MB super_kernel.log: 32 -> 28 ms)
_TS = rb"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9]"
#: end of the func field, then a body that is neither blank nor the format-error text (stripped, the
#: only body the line layer turns into a format-error record); the blanks before it are all taken by
#: ``[ \t]*`` (a non-blank must follow), so the lookahead sees the body's first character
_BODY = rb"\] ?[ \t]*(?!" + re.escape(FORMAT_ERROR.encode()) + rb"[ \t]*\n)[^ \t\n][^\n]*\n"
#: after the ``:`` of a source-file field: the field before it does not end with the exception
#: handler's file name (``FileLogPrefix.src_file`` is the base name of the field up to its last
#: ``:digits``, so every line of that file is left out, and a few others that are then read one by one
#: as well). A lookbehind, tried only at a ``:``, costs less than a lookahead scanning the field.
_NOT_HANDLER_FILE = rb"(?<!" + re.escape(HANDLER_FILE.encode()) + rb":)"


def _alt(names: frozenset[str]) -> bytes:
    return b"|".join(re.escape(n.encode()) for n in sorted(names))


def _pattern(pids: list[bytes]) -> re.Pattern[bytes]:
    """One match at a line start: a run of plain repeats (``p``), of handler lines (``h``), of other
    prefixed lines (``o``) — each line of a known pid, sorted by its function — or any single line
    (``x``). Runs are possessive (``++``) where ``re`` knows the form (Python 3.11+): nothing follows
    them, so no backtracking state is kept per line; 3.10 gets the same matches with a plain ``+``. A
    line of the handler's source file is never in a plain or other run (it is the handler parser's
    whatever its function) and a format-error line in none: such a line is an ``x`` line.

    Within a run, a line whose text from the stamp's end to its function's end is the very text of
    the line before it (``(?P=…_tail)``: the same pid, thread, level, source and function, as a
    burst's lines are) is checked by that comparison instead of the prefix grammar; any other line is
    checked by the grammar. The same lines make the same runs: a line that passes the comparison has
    the text of a prefix the grammar took, followed by the ``]`` that closes its function (so a
    longer function name sharing the start is no match), and the grammar's verdict depends on that
    text alone (the handler-file lookbehind reads only the source field, the ``o`` lookahead only the
    function and its ``]``); ``_BODY`` checks the body either way. A line the comparison refuses is
    tried against the grammar, so no line the grammar takes ends a run.
    Why: the grammar (pid, thread, level, the ``file:line`` field and its lookbehind, the function
    names) was most of the regex's time; on the bench scene's 15 MB super_kernel.log the matching
    took ~20 ms instead of ~40 ms (minimum of 5 runs, Python 3.11; the whole read 68 → 50 ms, minimum
    of 7; issue 18, thirty-eighth round)."""
    if not pids:  # nothing is known yet: every line is read one by one
        return re.compile(rb"(?P<x>[^\n]*\n)")
    after_ts = rb" \[(?:" + b"|".join(pids) + rb"):\d+\] \[[A-Z]+\] \[[^\]\n]*:%s\d+\] \["
    plain = rb"(?:" + _alt(OTHER_FILE_PRINTERS) + rb")"
    handler = rb"(?:" + _alt(HANDLER_FUNCS) + rb")"
    other = rb"(?!(?:" + _alt(HANDLER_FUNCS | OTHER_FILE_PRINTERS) + rb")\])[^\]\n]*"
    runs = []
    for name, src, func in (
        (b"p", _NOT_HANDLER_FILE, plain),
        (b"h", b"", handler),
        (b"o", _NOT_HANDLER_FILE, other),
    ):
        tail = name + b"_tail"
        first = rb"%s(?P<%s>%s%s)%s" % (_TS, tail, after_ts % src, func, _BODY)
        same = rb"(?:%s(?P=%s)%s)%s" % (_TS, tail, _BODY, _SAME_REPEAT)
        runs.append(rb"(?P<%s>(?:%s%s)%s)" % (name, first, same, _RUN_REPEAT))
    return re.compile(b"|".join([*runs, rb"(?P<x>[^\n]*\n)"]))


#: one or more lines of a run: possessive from Python 3.11 (``re`` refuses ``++`` before that)
_RUN_REPEAT = b"++" if sys.version_info >= (3, 11) else b"+"
#: the lines after one checked by the grammar that repeat its prefix: possessive from 3.11 as well
_SAME_REPEAT = b"*+" if sys.version_info >= (3, 11) else b"*"

#: bytes → ``x`` for a hex digit, a space for other printable ASCII, tab and newline, NUL for the rest
_CLASSES = bytes(
    0x78 if chr(b) in "0123456789abcdefABCDEF" else 0x20 if b in (9, 10) or 0x20 <= b < 0x7F else 0
    for b in range(256)
)
_HEX_RUN = b"x" * common._MIN_RUN  # common.may_hold_oversized's shortest run of an oversized number


def _clean(data: bytes) -> bool:
    """True when no line of a run needs the line-by-line treatment (see the module docstring; the run
    regex already left out format-error lines and, from plain and other runs, the handler file's)."""
    if has_long_line(data) and b"[CONT:" in data:
        return False
    classes = data.translate(_CLASSES)
    return b"\0" not in classes and _HEX_RUN not in classes


@dataclass(frozen=True, slots=True)
class LineRun:
    """Consecutive whole lines of one kind, undecoded (each ends with ``\\n``): prefixed with a pid
    seen before, printable ASCII, not blank, no ``[CONT:n]``/``[FORMAT_ERROR]``/oversized number."""

    first_no: int
    count: int
    data: bytes

    def lines(self) -> Iterator[tuple[int, bytes]]:
        data = self.data
        pos = 0
        for no in range(self.first_no, self.first_no + self.count):
            nl = data.index(b"\n", pos)
            yield no, data[pos:nl]
            pos = nl + 1


class PlainRun(LineRun):
    """Lines of :data:`OTHER_FILE_PRINTERS`: their content is parsed from the dedicated files."""

    __slots__ = ()


class HandlerRun(LineRun):
    """Lines of the exception handler whose function is one of :data:`HANDLER_FUNCS` (a line of its
    source file under another function is read one by one, see :func:`_clean`)."""

    __slots__ = ()


class OtherRun(LineRun):
    """Other prefixed lines: build facts (§3.3) or plain text."""

    __slots__ = ()


SkLogItem = MetaLine | PlainRun | HandlerRun | OtherRun

#: a run line (the run regex checked its prefix already, so a field is just up to its ``]``):
#: ``(ts, pid, body)`` and ``(prefix, body)``
_FIELD = rb" \[[^\]]*\]"
FACT_LINE = regexcode.compile(rb"(.{23}) \[(\d+):[^\]]*\]" + _FIELD * 3 + rb" ?([^\n]*)\n")
PREFIXED_LINE = regexcode.compile(rb"(.{23}" + _FIELD * 4 + rb" ?)([^\n]*)\n")
T = TypeVar("T")
K = TypeVar("K")
_PREFIX_CACHE: dict[bytes, FileLogPrefix] = {}
_TEXT_PREFIX_CACHE: dict[str, FileLogPrefix] = {}
_CACHE_MAX = 4096
#: :data:`PREFIXED_LINE` over a run decoded as text (runs are ASCII): a reader that decodes a whole run
#: at once (the handler parser's run path) matches its lines with this
RUN_LINE_TEXT = regexcode.compile(PREFIXED_LINE.pattern.decode("ascii"))
#: the prefix group of :data:`RUN_LINE_TEXT` (a reader's own run regex starts with it)
RUN_PREFIX_TEXT = PREFIXED_LINE.pattern.decode("ascii").removesuffix(r"([^\n]*)\n")
assert RUN_LINE_TEXT.pattern == RUN_PREFIX_TEXT + r"([^\n]*)\n"


def _remember_prefix(cache: dict[K, FileLogPrefix], key: K, text: str) -> FileLogPrefix:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    parsed = split_prefix(text)[0]
    assert parsed is not None  # a run line's prefix matched the run regex already
    cache[key] = parsed
    return parsed


def run_prefix(prefix: bytes) -> FileLogPrefix:
    """The parsed prefix of a run line (ASCII, so the text regex sees what the bytes regex saw);
    bursts share their prefix text, so it is parsed once per distinct text."""
    got = _PREFIX_CACHE.get(prefix)
    return got if got is not None else _remember_prefix(_PREFIX_CACHE, prefix, prefix.decode("ascii"))


def run_prefix_text(prefix: str) -> FileLogPrefix:
    """:func:`run_prefix` of a prefix matched by :data:`RUN_LINE_TEXT`."""
    got = _TEXT_PREFIX_CACHE.get(prefix)
    return got if got is not None else _remember_prefix(_TEXT_PREFIX_CACHE, prefix, prefix)


@dataclass
class SkLog:
    """super_kernel.log as :func:`read_super_kernel_log` reads it: its lines in file order, as runs
    and single :class:`MetaLine` s."""

    file: str
    items: list[SkLogItem] = field(default_factory=list)

    def __iter__(self) -> Iterator[SkLogItem]:
        return iter(self.items)

    def handler_lines(self) -> Iterator[tuple[FileLogPrefix | None, str, Source]]:
        """``(prefix, message, src)`` of each line the exception-handler parser reads: the handler's
        lines and, since nothing tells them apart, lines without a prefix; blank lines are left out."""
        return self.handler_messages(_triple)

    def handler_messages(self, make: Callable[[FileLogPrefix | None, str, Source], T]) -> Iterator[T]:
        """:meth:`handler_lines`, each made into ``make(prefix, message, src)`` (no tuple per line)."""
        file = self.file
        for part in self.handler_parts():
            if not isinstance(part, HandlerRun):
                yield make(*part)
                continue
            prefix_of = _PREFIX_CACHE.get
            # finditer, not findall: one match alive at a time, so no list of 10⁴ tuples for the GC
            for no, m in enumerate(PREFIXED_LINE.finditer(part.data), part.first_no):
                prefix, body = m.groups()
                yield make(
                    prefix_of(prefix) or run_prefix(prefix),
                    body.decode("ascii"),
                    build_source(file, no, None),
                )

    def handler_parts(self) -> Iterator[HandlerRun | tuple[FileLogPrefix | None, str, Source]]:
        """The lines of :meth:`handler_lines` with each :class:`HandlerRun` left whole (its lines are
        the run's lines, in order): a reader that knows the run format reads them without a
        ``(prefix, message, src)`` per line (:func:`skdbg.parsers.sk_parser.parse_sk_log`)."""
        for item in self.items:
            if isinstance(item, HandlerRun):
                yield item
            elif isinstance(item, MetaLine) and item.message.strip():
                p = item.prefix
                if p is None or p.src_file == HANDLER_FILE or p.func in HANDLER_FUNCS:
                    yield p, item.message, item.src


def _triple(
    prefix: FileLogPrefix | None, message: str, src: Source
) -> tuple[FileLogPrefix | None, str, Source]:
    return prefix, message, src


def read_super_kernel_log(path: str | os.PathLike[str], *, what: str = "super_kernel.log") -> SkLog:
    """super_kernel.log as runs (see the module docstring); raises ParseError for a missing/binary file
    (``what`` names the file in its message: another sk_meta log read for its outline alone,
    :mod:`skdbg.parsers.filelog_outline`, is named as its own parser names it)."""
    file = str(path)
    log = SkLog(file)
    items = log.items
    pids: list[bytes] = []
    match = _pattern(pids).match

    def learn(ml: MetaLine) -> bool:
        """Note the writer pid of a decoded line; True when it is new (the pattern must be remade)."""
        if ml.prefix is None or len(pids) >= MAX_RUN_PIDS:
            return False
        pid = str(ml.prefix.pid).encode()
        if pid in pids:
            return False
        pids.append(pid)
        return True

    for chunk in iter_line_chunks(path, what=what, scan_oversized=False):
        if isinstance(chunk, TextLine):
            ml = to_meta_line(chunk, file)
            items.append(ml)
            if learn(ml):
                match = _pattern(pids).match
            continue
        data, no, check = chunk.data, chunk.first_no, chunk.check
        pos, end = 0, len(data)
        end_no = no + chunk.count  # the number of the line after the chunk
        while pos < end:
            m = match(data, pos)
            assert m is not None  # the x branch matches any whole line
            kind, stop = m.lastgroup, m.end()
            if kind == "x":
                ml = raw_meta_line(data[pos : stop - 1], no, file, check=check)
                items.append(ml)
                no += 1
                if learn(ml):
                    match = _pattern(pids).match
            else:
                run = data[pos:stop]
                # a run that ends the chunk holds the chunk's remaining lines (counted by the reader)
                count = end_no - no if stop == end else run.count(b"\n")
                if not _clean(run):
                    for i, raw in enumerate(run.split(b"\n")[:-1]):
                        items.append(raw_meta_line(raw, no + i, file, check=check))
                elif kind == "p":
                    items.append(PlainRun(no, count, run))
                elif kind == "h":
                    items.append(HandlerRun(no, count, run))
                else:
                    items.append(OtherRun(no, count, run))
                no += count
            pos = stop
    return log
