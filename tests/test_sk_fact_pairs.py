"""super_kernel.log facts: a child kernel's line and its offsets line read as one match (the child
branch of super_kernel_log._FAST with its optional offsets line) against the line-by-line reader, the oracle.

The line reader (skmeta_lines.iter_meta_lines, each line through _FactParser.step) builds the child
binary from the ``funcName=`` line and rebuilds it with the offsets of the ``aicOffset=`` line after
it (artifacts.md §3.3); the run reader takes the two lines in one match and builds the record once.
Both must give the same result. Hypothesis mixes pairs with what could break one: an offsets line
alone or twice, blanks and tabs around the bodies, another writer, a look-alike line, a block open
before them, a cut last line.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import super_kernel_log as skl
from skdbg.parsers.sklog_runs import OtherRun, read_super_kernel_log
from skdbg.parsers.skmeta_lines import iter_meta_lines


def _pfx(func: str, pid: str = "48213", ts: str = "2026-06-10 14:01:04.910") -> str:
    return f"{ts} [{pid}:140425347876672] [INFO] [sk_node.cpp:33] [{func}] "


CHILD = (
    "funcName=Op0000_000000, binDevAddr=0x124080b00000, binDevSize=3568, aicAddr=0x0, aivAddr=0x124080b00000"
)
OFFSETS = "aicOffset=0x0, aivOffset=0x10"
SYMBOL = "split[0] AIV symbol=_Z16Op0000_000000_skILj0EEvv, size=0x1a0, bind=WEAK"
#: hand-written lines (§3.2 prefix, §3.3 bodies); the first one makes 48213 a known writer
LINES = [
    _pfx("GetSubKernelAddr") + CHILD,
    _pfx("GetSubKernelAddr") + OFFSETS,
    _pfx("GetSubKernelAddr", ts="2026-06-10 14:01:05.001") + "\t" + CHILD + "  ",
    _pfx("GetSubKernelAddr", ts="2026-06-10 14:01:05.002") + " " + "aicOffset=0xAB, aivOffset=0xcd\t",
    _pfx("GetSubKernelAddr") + "aicOffset=0x1, aivOffset=0x2, extra",  # not an offsets line
    _pfx("GetSubKernelAddr") + "aicOffset=0x, aivOffset=0x2",  # not an offsets line
    _pfx("GetSubKernelAddr") + "funcName=Op_b, binDevAddr=0x1, binDevSize=x, aicAddr=0x0, aivAddr=0x1",
    _pfx("GetSplitSymbol") + SYMBOL,
    _pfx("GetSubKernelAddr", pid="7") + OFFSETS,  # another writer
    _pfx("GetSubKernelAddr", pid="7") + CHILD,
    _pfx("PrintTaskNodesDetail") + "reordered task nodes: node count=1",
    _pfx("DumpFusionFailReasons") + "Fusion fail reasons summary:",
    _pfx("Process") + "End aclskOptimize",
    "no prefix at all",
]


def _same_as_line_reader(path: Path) -> None:
    log = read_super_kernel_log(path)
    assert skl.parse_super_kernel_log(log, file=str(path)) == skl.parse_super_kernel_log(
        list(iter_meta_lines(path)), file=str(path)
    )


def _pairs(path: Path) -> int:
    """Matches of the pair branch over the file's runs: the path under test was taken."""
    runs = [item for item in read_super_kernel_log(path) if isinstance(item, OtherRun)]
    matches = (m for run in runs for m in skl._FAST.finditer(run.data.decode()))
    return sum(m.lastgroup == "child" and m[skl._CHILD_OFF[0]] is not None for m in matches)


def test_pairs_give_what_the_line_reader_gives(tmp_path: Path) -> None:
    lines = [
        LINES[7],
        LINES[0],
        LINES[1],
        LINES[7],
        LINES[2],
        LINES[3],
        LINES[0],
        LINES[4],
        LINES[1],
        LINES[1],
    ]
    path = tmp_path / "super_kernel.log"
    path.write_text("\n".join(lines) + "\n")
    assert _pairs(path) == 2
    _same_as_line_reader(path)
    res = skl.parse_super_kernel_log(read_super_kernel_log(path), file=str(path))
    assert [(c.src.line, c.aic_offset, c.aiv_offset) for c in res.child_binaries] == [
        (2, 0x0, 0x10),
        (5, 0xAB, 0xCD),
        (7, 0x0, 0x10),  # completed by a later offsets line (the line between is no fact): no pair
    ]
    assert [s.src.line for s in res.split_symbols] == [1, 4]  # numbering goes on after each pair
    assert [u.src.line for u in res.unrecognized] == [10]  # offsets without a child to complete


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(LINES))), max_size=25),
    st.booleans(),
)
def test_mixed_lines_give_what_the_line_reader_gives(
    tmp_path_factory: object, picks: list[int], cut_last: bool
) -> None:
    lines = [LINES[0], *(LINES[i] for i in picks)]
    path = tmp_path_factory.mktemp("pairs") / "super_kernel.log"  # type: ignore[attr-defined]
    path.write_text("\n".join(lines) + ("" if cut_last else "\n"))
    _same_as_line_reader(path)
