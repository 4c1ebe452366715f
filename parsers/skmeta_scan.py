"""Whole-buffer scanning of the dedicated sk_meta files: the common lines by one regex, the rest as MetaLines.

Why: ``sk_device_args.log``, ``sk_scope_split.log``, ``sk_fused_nodes.log`` and ``sk_node_detail.log``
are tens of thousands of lines of a handful of shapes. Making a :class:`~skmeta_lines.MetaLine` per line
(decode, CONT check, prefix split, timestamp) and then running a regex cascade on it cost more than the
grammar itself. Here each chunk of whole lines (``textio.iter_line_blocks``) is decoded once and a
parser's *fast* pattern — the file-logger prefix followed by its common line shapes — runs over it with
``finditer``. A line the pattern does not take is handed over as the MetaLine the line layer makes for
it, so the parser's general code decides it exactly as before.

The fast pattern must be a strict narrowing of the general reading: it only takes lines the general
code would read the same way (ASCII digits, spaces/tabs as blanks, no ``\\n`` in any class) and the
parser falls back to :meth:`FastScan.meta_line` for anything it cannot finish. Chunks holding a
``[CONT:`` marker in a line of ``PIECE`` bytes or more (the only lines the layer changes) go
through the line layer whole, line by line from their bytes; so does a chunk that may hold an
oversized number unless the matched line itself is clean.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

from skdbg import regexcode
from skdbg.parsers import textio
from skdbg.parsers.common import may_hold_oversized, oversized_number
from skdbg.parsers.filelog import has_long_line, prefix_ts
from skdbg.parsers.fsguard import open_regular
from skdbg.parsers.skmeta_lines import MetaLine, MetaResultBase, raw_meta_line, text_meta_line, to_meta_line
from skdbg.parsers.textio import MAX_LINE, TextLine, check_text_file, iter_line_blocks

_TS = r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}"
#: ``filelog.PREFIX_RE`` narrowed to ASCII digits and to one line; groups ``ts``, ``tail`` (all after the
#: stamp) and ``pid``. The ``[file:line]`` part ends at the first ``]`` and its ``:`` is the last one
#: before it (only digits may follow), so greedy and lazy readings agree and the split is
#: ``PREFIX_RE``'s; the optional space after ``[func]`` is taken when present, and every fast body starts
#: with ``[ \t]*``, so a body cannot match differently by leaving it.
FAST_PREFIX = (
    rf"(?P<ts>{_TS})(?P<tail> \[(?P<pid>[0-9]+):[0-9]+\] \[[A-Z]+\] \[[^\]\n]*:[0-9]+\] \[[^\]\n]*\] ?)"
)
#: the prefix of a further line of a multi-line match: a stamp and then the very text of the first line's
#: prefix after its stamp (same pid, level, source and function; a string compare instead of a parse).
#: Equal text splits the same way, and a space the first line lacked goes to the body's ``[ \t]*``.
NEXT_PREFIX = rf"\n{_TS}(?P=tail)"


def fast_pattern(body: str) -> re.Pattern[str]:
    """The prefix, then ``body`` (alternatives with named groups) up to the line end. ``body`` may take
    further lines only through :data:`NEXT_PREFIX`; nothing else in it may match ``\\n``."""
    return regexcode.compile(rf"^{FAST_PREFIX}(?:{body})$", re.MULTILINE)


def _chunks(
    path: str | os.PathLike[str], lines_done: Callable[[], int], *, what: str, max_line: int = MAX_LINE
) -> Iterator[tuple[str, bool, bytes] | MetaLine]:
    """The file as ``(text, check, body)`` per chunk of whole lines — the very blocks of
    ``textio.iter_line_blocks`` (same reads, same ``check``), decoded, ``\\r`` before ``\\n`` dropped,
    and the bytes they were decoded from (without the last newline) — without making a bytes object
    per line. A line that may be over ``max_line`` bytes, and everything
    after it, comes from the line layer itself (resumed at that line), as does the last line when the
    file does not end with a newline.

    ``lines_done()`` is the number of lines the consumer has taken from the chunks so far: it numbers
    them as it goes (it splits every chunk into its lines anyway), so the lines of a chunk are not
    counted a second time here; only the resumed and last lines need the count."""
    p = check_text_file(path, what=what)
    file = str(path)
    carry = b""
    with open_regular(p, what=what) as fh:
        while chunk := fh.read(textio.CHUNK):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n", len(carry))
            if cut < 0:
                if len(data) > max_line:
                    break  # a line over the limit: the line layer cuts it
                carry = data
                continue
            body = data[:cut]
            size = len(body)
            if size > max_line and (
                size > 2 * max_line or body.find(b"\n", size - max_line - 1, max_line + 1) < 0
            ):
                break  # a line may be over the limit (every such line spans that window)
            carry = data[cut + 1 :]
            check = may_hold_oversized(body)
            text = body.decode("utf-8", "replace")
            if "\r" in text:  # CRLF: the line layer drops a CR before LF
                text = (text + "\n").replace("\r\n", "\n")[:-1]
            yield text, check, body
        else:
            if len(carry) <= max_line:
                if carry:
                    if carry.endswith(b"\r"):
                        carry = carry[:-1]
                    line = TextLine(lines_done() + 1, carry.decode("utf-8", "replace"), False, None, carry)
                    yield to_meta_line(line, file)
                return
            # an unterminated last line over the limit: the line layer cuts it (below)
    # rare: resume with the line layer after the lines yielded so far (this reader's buffers let go first)
    chunk = data = carry = body = b""
    text = ""
    no = lines_done()
    for block in iter_line_blocks(path, what=what, max_line=max_line):
        if isinstance(block, TextLine):
            if block.no > no:
                yield to_meta_line(block, file)
            continue
        for k, raw in enumerate(block.lines):
            if block.first_no + k > no:
                yield raw_meta_line(raw, block.first_no + k, file, check=block.check)


def _meta_line(line: str, no: int, file: str, check: bool) -> MetaLine:
    """``raw_meta_line`` of a whole line already decoded, of a chunk whose bytes hold no long line with
    a ``[CONT:`` marker (those chunks go through the line layer from their bytes): nothing to rejoin."""
    return text_meta_line(line, no, file, check=check)


class FastScan:
    """Iterate a file as fast-pattern matches ``(match, line_no)`` and, for every other line, MetaLines.

    :meth:`note` does for a matched line what ``MetaResultBase.note_common`` does for a prefixed,
    complete, non-blank line (line count, first prefix, first line per pid); :meth:`meta_line` gives
    the MetaLine of the current match, for the parser's general code.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        pattern: re.Pattern[str],
        *,
        what: str,
        multiline: bool = False,
        max_line: int = MAX_LINE,
    ) -> None:
        self.path = path
        self.file = str(path)
        self.pattern = pattern
        self.what = what
        self.multiline = multiline
        self.max_line = max_line
        #: lines of the last match (``multiline`` patterns: 1 + its newlines)
        self.span = 1
        self._match: re.Match[str] | None = None
        self._match_no = 0
        self._check = False
        #: the pid text of the last match :meth:`note` recorded: a parser may count a further match of
        #: that pid itself (``res.lines_read += 1``, all :meth:`note` does for it) and save the call
        self.pid_text = ""

    def __iter__(self) -> Iterator[MetaLine | tuple[re.Match[str], int]]:
        file = self.file
        multiline = self.multiline
        no = 1  # number of the next line of a chunk
        # the reader asks how many lines were taken when it resumes: ``no`` as it is then (late binding)
        lines_done = lambda: no - 1  # noqa: E731
        for chunk in _chunks(self.path, lines_done, what=self.what, max_line=self.max_line):
            if isinstance(chunk, MetaLine):
                yield chunk
                continue
            text, check, body = chunk
            # a number in other digits than ASCII's is not seen by the chunk's byte test: a chunk
            # that is not ASCII has each match checked (as the line layer checks such a line)
            check = check or not text.isascii()
            self._check = check
            # pieces of a long record: the line layer rejoins them, on the line's bytes (a piece border
            # may cut a character)
            if has_long_line(body) and b"[CONT:" in body:
                if b"\r" in body:
                    body = (body + b"\n").replace(b"\r\n", b"\n")[:-1]
                for raw in body.split(b"\n"):
                    yield raw_meta_line(raw, no, file, check=check)
                    no += 1
                continue
            body = b""  # not held while the chunk's text is matched
            pos = 0  # ``no`` is the number of the line that starts at ``pos``
            for m in self.pattern.finditer(text):
                start, end = m.span()
                if start != pos:
                    for line in text[pos : start - 1].split("\n"):
                        yield _meta_line(line, no, file, check)
                        no += 1
                # the lines of the match counted in the chunk (no copy of its text)
                span = 1 + text.count("\n", start, end) if multiline else 1
                if check and oversized_number(group := m.group()) is not None:
                    for line in group.split("\n"):
                        yield _meta_line(line, no, file, True)
                        no += 1
                else:
                    self.span, self._match, self._match_no = span, m, no
                    yield m, no
                    no += span
                pos = end + 1
            if pos <= len(text):
                for line in text[pos:].split("\n"):
                    yield _meta_line(line, no, file, check)
                    no += 1
            text = ""  # not held while later chunks (or the line layer's resumed lines) are read

    def meta_line(self, no: int) -> MetaLine:
        """The line layer's MetaLine of line ``no`` of the current match (a matched line the parser
        hands to its general code)."""
        assert self._match is not None  # called for a line of the last match
        text = self._match.group()
        line = text.split("\n")[no - self._match_no] if self.span > 1 else text
        return _meta_line(line, no, self.file, self._check)

    def note(self, res: MetaResultBase, m: re.Match[str], no: int, span: int = 1) -> None:
        """``note_common`` for the ``span`` lines of a match (each has a prefix with the same pid, and
        none is blank, a format error, a comment or oversized)."""
        res.lines_read += span
        pid_text = m.group("pid")
        if pid_text != self.pid_text:  # a pid already seen on the last matched line is recorded
            self.pid_text = pid_text
            pid = int(pid_text)
            if res.first_prefix is None:
                res.first_prefix = (prefix_ts(m.group("ts")), pid, no)
            if pid not in res.pid_first_line:
                res.pid_first_line[pid] = no
