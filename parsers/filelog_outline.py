"""The file-logger provenance of an sk_meta log (gates F4/F7), from a read of the file alone.

Why: an analysis needs nothing of ``sk_node_detail.log`` but which processes wrote it (its nodes are
``sk_fused_nodes.log``'s, and only ``skdbg inspect`` and the TUI's tables show them), and parsing its
2,500 node lines cost ~13 ms of the bench analysis's main thread. The file is read as
``super_kernel.log`` is (:func:`~skdbg.parsers.sklog_runs.read_super_kernel_log`: runs of lines of
writers already seen stay bytes), which is all the provenance needs.

Exact by construction, as :func:`~skdbg.parsers.sk_log_outline.outline_super_kernel_log`'s: a full
parse records the first prefixed line and each writer's first line from the lines it reads in file
order; the read makes every line of a writer not seen before a :class:`MetaLine` with the prefix the
line layer gives it (a run holds only writers an earlier such line named), so the first prefixed
line and each writer's first line are among them. A file the parser could not read (missing, binary)
raises the same :class:`~skdbg.parsers.common.ParseError`: the same line layer opens and checks it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from skdbg.parsers.sklog_runs import SkLogItem, read_super_kernel_log
from skdbg.parsers.skmeta_lines import MetaLine

#: (ts, pid, line) of a file's first prefixed line, as a parse result holds it
FirstPrefix = tuple[datetime | None, int, int | None]


@dataclass(frozen=True, slots=True)
class FileLogOutline:
    """An sk_meta log's provenance (a :class:`~skdbg.parsers.skmeta_lines.Provenance`), no line parsed."""

    file: str
    #: as :attr:`~skdbg.parsers.skmeta_lines.MetaResultBase.first_prefix`
    first_prefix: FirstPrefix | None
    #: as :attr:`~skdbg.parsers.skmeta_lines.MetaResultBase.pid_first_line` (read-only)
    pid_first_line: Mapping[int, int | None]


def provenance_of(items: Iterable[SkLogItem]) -> tuple[FirstPrefix | None, Mapping[int, int | None]]:
    """The first prefixed line and each writer's first line among a read log's items (its runs hold
    only writers an earlier line read one by one named)."""
    first: FirstPrefix | None = None
    pids: dict[int, int | None] = {}
    for item in items:
        if isinstance(item, MetaLine):
            prefix = item.prefix
            if prefix is not None:
                if first is None:
                    first = (prefix.ts, prefix.pid, item.src.line)
                pids.setdefault(prefix.pid, item.src.line)
    return first, MappingProxyType(pids)


def outline_file_log(path: str | os.PathLike[str], *, what: str) -> FileLogOutline:
    """The provenance of the sk_meta log at ``path`` (``what``: its name in a read error, as its
    parser names it). Raises the :class:`~skdbg.parsers.common.ParseError` its parser raises for a
    file it cannot read."""
    log = read_super_kernel_log(path, what=what)
    first, pids = provenance_of(log.items)
    return FileLogOutline(log.file, first, pids)
