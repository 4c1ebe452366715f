"""In-memory text as the line records the parsers read (tests only: production always reads files)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hypothesis import strategies as st

from skdbg.parsers.skmeta_lines import MetaLine, to_meta_line
from skdbg.parsers.textio import TextLine


def iter_text_lines(text: str, *, start: int = 1) -> Iterator[TextLine]:
    """The contract of :func:`skdbg.parsers.textio.iter_lines` for a string: numbers from ``start``,
    CR before LF dropped, a last line without LF yielded with ``complete=False``."""
    lines = text.split("\n")
    last = lines.pop()
    for i, line in enumerate(lines):
        yield TextLine(start + i, line[:-1] if line.endswith("\r") else line, True)
    if last:
        yield TextLine(start + len(lines), last[:-1] if last.endswith("\r") else last, False)


def iter_meta_text(text: str, file: str = "<text>") -> Iterator[MetaLine]:
    """Sk_meta lines of a string, as :func:`skdbg.parsers.skmeta_lines.iter_meta_lines` gives a file's."""
    for tl in iter_text_lines(text):
        yield to_meta_line(tl, file)


def pooled_log(pool: Sequence[str], *, max_repeat: int, max_size: int) -> st.SearchStrategy[bytes]:
    """A log file's bytes drawn from ``pool``: up to ``max_size`` picks, each line repeated 1 to
    ``max_repeat`` times (a repeat makes a run of one kind), LF or CRLF line ends, and a last line that
    may be cut without its line end (a file copied while written). The readers' property tests compare
    two readings of such files."""

    def join(picks: list[tuple[int, int]], eol: str, cut_last: bool) -> bytes:
        lines = [pool[i] for i, n in picks for _ in range(n)]
        return (eol.join(lines) + ("" if cut_last else eol)).encode()

    return st.builds(
        join,
        st.lists(st.tuples(st.sampled_from(range(len(pool))), st.integers(1, max_repeat)), max_size=max_size),
        st.sampled_from(["\n", "\r\n"]),
        st.booleans(),
    )
