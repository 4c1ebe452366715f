"""What an analysis needs of ``super_kernel.log``'s facts, from its read alone (:class:`SkLogOutline`).

Why a module apart from the facts' parser (:mod:`skdbg.parsers.super_kernel_log`): an analysis reads
the outline of every such log and parses the facts only when the outline says a deferred WAIT may be
among them; the parser's record classes and patterns (~3.5 ms of every start that imported them) are
loaded then, not before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from skdbg.parsers.filelog_outline import provenance_of
from skdbg.parsers.sklog_runs import SkLog
from skdbg.parsers.skmeta_lines import MetaLine

#: text every line of a deferred WAIT placement holds (the parser's pattern holds it: checked there)
DEFERRED_TEXT = "place deferred wait node, "


@dataclass(frozen=True, slots=True)
class SkLogOutline:
    """What triage needs of super_kernel.log's facts, known from its read alone, with no fact parsed.

    It holds the file-logger provenance (gate F4/F7), equal to what the full parse records, and says
    whether a line may be a deferred WAIT placement, the one fact triage reads.

    Why: a 2,000-kernel model's log holds ~25,000 fact records, ~0.1 s of parsing. Only ``skdbg
    inspect`` and the TUI's tables read them, so an analysis parses them only when that text is in
    the file (see :meth:`~skdbg.parsers.evidence.ModelEvidence.deferred_waits`)."""

    file: str
    #: as :attr:`~skdbg.parsers.skmeta_lines.MetaResultBase.first_prefix`: (ts, pid, line) of the
    #: first prefixed line
    first_prefix: tuple[datetime | None, int, int | None] | None
    #: as :attr:`~skdbg.parsers.skmeta_lines.MetaResultBase.pid_first_line` (read-only)
    pid_first_line: Mapping[int, int | None]
    #: some line holds :data:`DEFERRED_TEXT`. When False, the full parse has no deferred wait.
    may_defer_waits: bool


def outline_super_kernel_log(log: SkLog) -> SkLogOutline:
    """:class:`SkLogOutline` of a read log (no fact parsed).

    Exact by construction. The full parse records provenance from the lines it reads one by one
    (:class:`MetaLine`), in file order; a run's lines are of writers such a line named first. A
    deferred wait is a message the parser's pattern (``super_kernel_log._DEFERRED``) matches, so its
    line holds :data:`DEFERRED_TEXT`: a run's bytes are searched whole, and a line read one by one is
    searched in its message (where ``[CONT:n]`` pieces are joined)."""
    first, pids = provenance_of(log.items)
    needle = DEFERRED_TEXT.encode("ascii")
    defer = any(
        DEFERRED_TEXT in item.message if isinstance(item, MetaLine) else needle in item.data
        for item in log.items
    )
    return SkLogOutline(log.file, first, pids, defer)
