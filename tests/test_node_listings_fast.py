"""The three node listings read from a path (fast lines) give what their general branch gives.

``parse_fused_nodes``, ``parse_node_detail`` and ``parse_scope_split`` take their common lines from one
pattern per chunk and answer them without the line layer: the node through ``match_node`` and its caches
(node detail with a guessed node end), the line count without ``FastScan.note`` for a further line of
the same pid. Read from MetaLines instead, every line takes the general branch. Random mixes of the
lines of artifacts.md §3.4/§3.6/§3.7 (current and damaged, several pids, marker text inside names) must
give equal results — records, gaps, Unrecognized lines, line counts, first prefix and pid lines — with
the node caches empty before each reading.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import node_format
from skdbg.parsers.fused_nodes import parse_fused_nodes
from skdbg.parsers.node_detail import parse_node_detail
from skdbg.parsers.scope_split import parse_scope_split
from skdbg.parsers.skmeta_lines import iter_meta_lines

KERNEL = (
    "[nodeId:{n}, streamId:0, streamIdxInGraph:0, nodeIdxInStream:{n}] - KernelInfos{{funcName:{f}, "
    "kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, cubeNum:0, vecNum:48, isScheModeOn:0, "
    "needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, funcHdl:0xaaaaf3c01110{dev}}}"
)
EVENT = (
    "[nodeId:{n}, streamId:0, streamIdxInGraph:0, nodeIdxInStream:{n}, EventWait(eventId:0x1, eventFlag:0x0, "
    "eventTaskFlag:0x0)]"
)
_func = st.sampled_from(
    [
        "Op0000_000000",
        "Op0001_377a4f",
        "a, kernelType:X}",
        "Scope split results end: pass=X",
        "[ScopeSplitPipeline] iteration 3",
        "x}: type=KERNEL",
    ]
)
_node = st.one_of(
    st.builds(
        lambda n, f, dev: KERNEL.format(n=n, f=f, dev=", devArgs:0x12c110000000" if dev else ""),
        st.integers(0, 3),
        _func,
        st.booleans(),
    ),
    st.builds(lambda n: EVENT.format(n=n), st.integers(0, 3)),
    st.just("[nodeId:4, streamId:0, streamIdxInGraph:0, nodeIdxInStream:4] - Bogus"),
    st.just("[nodeId:5, streamIdxInGraph:0, nodeIdxInStream:1] - Kernel:legacy_fn"),
)
_prefix = st.builds(
    lambda ms, pid, func: (
        f"2026-06-10 14:01:02.{ms:03d} [{pid}:140425347876672] [INFO] [sk_x.cpp:33] [{func}] "
    ),
    st.integers(0, 999),
    st.sampled_from([48213, 9]),
    st.sampled_from(["PrintSKNodesDetail", "UpdateNodeScopeBitFlags", "PrintScopeDetails"]),
)
#: the first line's prefix (pid 48213); the lines after it may come from another pid
_P = "2026-06-10 14:01:02.000 [48213:140425347876672] [INFO] [sk_x.cpp:33] [F] "
_indent = st.sampled_from(["", "  ", "    ", "\t"])


def _read_both(parse, path: Path) -> None:  # type: ignore[no-untyped-def]
    for cache in (node_format._NODE_CACHE, node_format._TEXT_CACHE, node_format._MID_CACHE):
        cache.clear()
    fast = parse(path)
    for cache in (node_format._NODE_CACHE, node_format._TEXT_CACHE, node_format._MID_CACHE):
        cache.clear()
    general = parse(iter_meta_lines(path), file=str(path))
    assert fast == general


def _write(tmp: Path, name: str, lines: list[str]) -> Path:
    path = tmp / name
    path.write_bytes(("\n".join(lines) + "\n").encode())
    return path


_position = st.builds(lambda i, ind, node: f"{ind}[{i}] {node}", st.integers(0, 9), _indent, _node)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _prefix,
            st.one_of(
                _position,
                st.builds(
                    lambda ind, n: (
                        f"{ind}SK Function: sk_7_s_start_Op0000_000000_end_Op0001_377a4f, "
                        f"scope id: 7, Node Count: {n}"
                    ),
                    _indent,
                    st.integers(0, 3),
                ),
                st.just(""),
                st.just("unexpected"),
            ),
        ),
        max_size=14,
    )
)
def test_fused_nodes(tmp_path_factory, lines: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    head = [_P + "  SK Function: sk_7_s_start_Op0000_000000_end_Op0001_377a4f, scope id: 7, Node Count: 3"]
    path = _write(tmp_path_factory.mktemp("f"), "sk_fused_nodes.log", head + [p + body for p, body in lines])
    _read_both(parse_fused_nodes, path)


_tail = st.sampled_from(
    [
        ": type=KERNEL, scopeFlags=0100, isFusible=1, stackSize=0",
        ": type=3",
        ": type=WAIT, scopeFlags=1  ",
        ": kind=KERNEL",
        "",
        "}: type=1",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _prefix,
            st.one_of(
                st.builds(lambda ind, node, tail: f"{ind}Processed node {node}{tail}", _indent, _node, _tail),
                st.just("Processed node nothing"),
                st.just(""),
            ),
        ),
        max_size=14,
    )
)
def test_node_detail(tmp_path_factory, lines: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path_factory.mktemp("d"), "sk_node_detail.log", [p + body for p, body in lines])
    _read_both(parse_node_detail, path)


_SPLIT_LINES = (
    "==========[ScopeSplitPipeline] iteration 0==========",
    "========== Scope split results begin: pass=InitialScopeSplitPass, totalScopes=1 ==========",
    "Scope 0 (scopeId=7): 2 nodes, 1 streams, scopeBitFlags=1, scopeNames=[n]",
    "  BreakInfo: breakReason=NONE",
    "  Scope 0 nodes: 2",
    "========== Scope split results end: pass=InitialScopeSplitPass ==========",
)
_split_line = st.sampled_from(_SPLIT_LINES)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_prefix, st.one_of(_split_line, _position, _position)), max_size=16),
)
def test_scope_split(tmp_path_factory, lines: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    head = [_P + _SPLIT_LINES[1], _P + _SPLIT_LINES[2]]  # a snapshot with a scope: node lines go fast
    path = _write(tmp_path_factory.mktemp("s"), "sk_scope_split.log", head + [p + body for p, body in lines])
    _read_both(parse_scope_split, path)
