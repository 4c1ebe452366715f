"""super_kernel.log's outline (parsers/sk_log_outline.outline_super_kernel_log) against its full parse.

An analysis reads two things of super_kernel.log's facts: the file-logger provenance (gate F4/F7) and the
deferred WAIT placements (T6). The outline gives the first from the read alone and says whether the
second can be non-empty, so the ~25,000 other facts of a large model are parsed only when asked for.
What must hold, whatever the lines: the outline's provenance is the full parse's, and a file the outline
says holds no deferred wait gives none when parsed whole. The lines are written by hand from
artifacts.md §3.2 (file-logger prefix) and §3.3 (the reorder lines, upstream wording).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from textlines import pooled_log

from skdbg.parsers.sk_log_outline import outline_super_kernel_log
from skdbg.parsers.sklog_runs import read_super_kernel_log
from skdbg.parsers.super_kernel_log import parse_super_kernel_log
from skdbg.triage.engine import WARNING_GAP_KINDS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scenes"


def _pfx(
    func: str, pid: str = "48213", src: str = "sk_node.cpp:33", ts: str = "2026-06-10 14:01:02.345"
) -> str:
    return f"{ts} [{pid}:140425347876672] [INFO] [{src}] [{func}] "


PLACE = "task reorder: place deferred wait node, waitNodeId=101, streamIdx=0, originalIdx=1, finalIdx=3"
NODE = (
    "[nodeId:100, streamId:0, streamIdxInGraph:0, nodeIdxInStream:1] - KernelInfos{funcName:Op_a, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48}"
)

#: lines that make or do not make a deferred wait, next to lines that change the reader's runs
LINES = [
    _pfx("ReorderWaitNodesForTaskBuild") + PLACE,  # a deferred wait
    _pfx("ReorderWaitNodesForTaskBuild", pid="7") + PLACE,  # of another writer (read one by one first)
    _pfx("ReorderWaitNodesForTaskBuild") + "  " + PLACE + "  ",  # the message is stripped
    _pfx("ReorderWaitNodesForTaskBuild") + PLACE.replace("=101", "=x"),  # the text, but no fact
    _pfx("ReorderWaitNodesForTaskBuild")
    + "task reorder: defer wait node for same-stream kernel, waitNodeId=101, streamIdx=0, originalIdx=1",
    _pfx("ReorderWaitNodesForTaskBuild") + "task reorder finished: originalCount=4, moveCount=1",
    _pfx("PrintDfxInfo") + PLACE,  # a handler function: the handler's line, never a fact
    _pfx("PrintSKNodesDetail") + PLACE,  # a repeat of the dedicated files: a fact only in an open block
    _pfx("PrintTaskNodesDetail") + "reordered task nodes: node count=2",  # opens a block
    _pfx("PrintTaskNodesDetail") + "  [0] " + NODE,
    _pfx("DumpFusionFailReasons") + "Fusion fail reasons summary:",  # opens a block
    _pfx("DumpFusionFailReasons") + "  Total nodes: 4",
    _pfx("GetSplitSymbol") + "split[0] AIV symbol=_Z2opv, size=0x1a0, bind=WEAK",
    _pfx("GetSubKernelAddr")
    + "funcName=Op_a, binDevAddr=0x124080b00000, binDevSize=3568, aicAddr=0x0, aivAddr=0x1",
    _pfx("ReorderWaitNodesForTaskBuild") + "A" * 4100 + "[CONT:1] " + PLACE,  # read one by one
    _pfx("ReorderWaitNodesForTaskBuild") + "caf\u00e9 " + PLACE,  # non-ASCII: read one by one
    _pfx("ReorderWaitNodesForTaskBuild", pid="048213") + PLACE,  # the same pid, written otherwise
    _pfx("Process", ts="2026-13-10 14:01:02.345") + "a month that does not exist",
    _pfx("Process") + "scope id 123456789012345678901",  # an oversized number
    "no prefix at all",
    PLACE,  # unprefixed: the handler parser's line
    "",
]


def _check(path: Path) -> bool:
    """The outline of ``path`` agrees with its full parse; returns whether it may hold deferred waits."""
    log = read_super_kernel_log(path)
    outline = outline_super_kernel_log(log)
    full = parse_super_kernel_log(log, file=str(path))
    assert outline.file == full.file
    assert outline.first_prefix == full.first_prefix
    assert outline.pid_first_line == full.pid_first_line
    if not outline.may_defer_waits:
        assert full.deferred_waits == []
    # an analysis leaves the facts unparsed: their parse must add no gap it reports as a warning
    assert not [g for g in full.gaps if g.kind in WARNING_GAP_KINDS]
    return outline.may_defer_waits


@settings(max_examples=200, deadline=None)
@given(pooled_log(LINES, max_repeat=3, max_size=30))
def test_the_outline_agrees_with_the_full_parse(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("outline") / "super_kernel.log"
    path.write_bytes(data)
    _check(path)


def test_a_deferred_wait_in_a_run_is_seen(tmp_path: Path) -> None:
    """The writer is known after the first line, so the second deferred wait is in a run's bytes."""
    path = tmp_path / "super_kernel.log"
    path.write_text("".join(_pfx("ReorderWaitNodesForTaskBuild") + PLACE + "\n" for _ in range(3)))
    assert _check(path)
    assert len(parse_super_kernel_log(path).deferred_waits) == 3


def test_a_log_without_the_text_needs_no_facts(tmp_path: Path) -> None:
    path = tmp_path / "super_kernel.log"
    path.write_text(
        _pfx("ReorderWaitNodesForTaskBuild")
        + "task reorder disabled: auto_op_parallel is not CUSTOMIZE_QUEUE\n"
        + _pfx("GetSplitSymbol", pid="9")
        + "split[0] AIV symbol=_Z2opv, size=0x1a0, bind=WEAK\n"
    )
    assert not _check(path)
    outline = outline_super_kernel_log(read_super_kernel_log(path))
    assert outline.pid_first_line == {48213: 1, 9: 2}
    assert outline.first_prefix is not None and outline.first_prefix[1:] == (48213, 1)


def test_bundled_scenes_outline_as_parsed_whole() -> None:
    logs = sorted(EXAMPLES.glob("*/sk_meta/*/*/super_kernel.log"))
    assert len(logs) >= 5
    for log in logs:
        _check(log)
