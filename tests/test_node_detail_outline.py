"""sk_node_detail.log's outline (parsers/filelog_outline.py) against its full parse.

An analysis reads one thing of sk_node_detail.log: which processes wrote it (gates F4/F7). The outline
gives that from a read of the file alone, so its 2,500 node lines are parsed only for the tables.
What must hold, whatever the lines: the outline's provenance is the full parse's, and a file the
parser cannot read gives the outline the same error. The lines are written by hand from artifacts.md
§3.2 (file-logger prefix) and §3.6 (sk_node_detail.log).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from textlines import pooled_log

from skdbg.parsers.common import ParseError
from skdbg.parsers.filelog_outline import outline_file_log
from skdbg.parsers.node_detail import WHAT, parse_node_detail

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scenes"


def _pfx(
    pid: str = "48213", ts: str = "2026-06-10 14:01:02.346", func: str = "UpdateNodeScopeBitFlags"
) -> str:
    return f"{ts} [{pid}:140425347876672] [INFO] [sk_graph.cpp:33] [{func}] "


NODE = (
    "Processed node [nodeId:100, streamId:0, streamIdxInGraph:0, nodeIdxInStream:1] - KernelInfos{"
    "funcName:Op0000_000000, kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, cubeNum:0, "
    "vecNum:48, isScheModeOn:0, needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, "
    "funcHdl:0xaaaaf3c01110}: type=KERNEL, scopeFlags=1, isFusible=1, stackSize=0"
)


def _cont_split(pid: str) -> str:
    """A record the logger split at 4,096 bytes with a 21-digit number across the border (§3.2)."""
    head = _pfx(pid=pid)
    head += "x" * (4096 - len(head) - 12) + " 99999999999"
    return head + "[CONT:1] 9999999999 tail"


_CONT_SPLIT = _cont_split("7")

#: node lines, lines of other writers and lines the reader takes one by one
LINES = [
    _pfx() + NODE,
    _pfx(pid="7") + NODE,  # another writer (F7)
    _pfx(pid="048213") + NODE,  # the same pid, written otherwise
    _pfx(ts="2026-13-10 14:01:02.345") + NODE,  # a month that does not exist: no stamp, still a prefix
    _pfx() + NODE.replace("nodeId:100", "nodeId:x"),  # not a node: unrecognized, still prefixed
    _pfx() + "A" * 4100 + "[CONT:1] " + NODE,  # continued: read one by one
    _pfx() + "caf\u00e9 " + NODE,  # non-ASCII: read one by one
    _pfx() + NODE.replace("stackSize=0", "stackSize=123456789012345678901"),  # an oversized number
    _pfx(func="PrintScopeDetails") + "BreakInfo: breakReason=NONE",  # another function
    # a number in Arabic-Indic digits, too long for 64 bits: the line is no writer's, read either way
    _pfx(pid="9") + NODE.replace("stackSize=0", "stackSize=" + "\u0661" * 25),
    _CONT_SPLIT,  # a number whole only once the pieces are rejoined: no writer's either
    "2026-06-10 14:01:02 [48213:1] [INFO] [a.cpp:1] [F] a stamp without milliseconds",
    "[FORMAT_ERROR] no prefix",
    "no prefix at all",
    NODE,
    "",
]


def _check(path: Path) -> None:
    full = parse_node_detail(path)
    outline = outline_file_log(path, what=WHAT)
    assert outline.file == full.file
    assert outline.first_prefix == full.first_prefix
    assert outline.pid_first_line == full.pid_first_line


@settings(max_examples=200, deadline=None)
@given(pooled_log(LINES, max_repeat=3, max_size=30))
def test_the_outline_agrees_with_the_full_parse(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("outline") / "sk_node_detail.log"
    path.write_bytes(data)
    _check(path)


def test_two_writers_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "sk_node_detail.log"
    path.write_text("no prefix\n" + _pfx() + NODE + "\n" + _pfx(pid="9") + NODE + "\n" + _pfx() + NODE + "\n")
    _check(path)
    outline = outline_file_log(path, what=WHAT)
    assert dict(outline.pid_first_line) == {48213: 2, 9: 3}
    assert outline.first_prefix is not None and outline.first_prefix[1:] == (48213, 2)


@pytest.mark.parametrize("content", [None, b"\x00\x01\x02binary\x00" * 100])
def test_an_unreadable_file_is_the_parsers_error(tmp_path: Path, content: bytes | None) -> None:
    """A missing or binary file: the same error, with the same message, as the full parse's."""
    path = tmp_path / "sk_node_detail.log"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ParseError) as full:
        parse_node_detail(path)
    with pytest.raises(ParseError) as outlined:
        outline_file_log(path, what=WHAT)
    assert str(outlined.value) == str(full.value)


def test_bundled_scenes_outline_as_parsed_whole() -> None:
    logs = sorted(EXAMPLES.glob("*/sk_meta/*/*/sk_node_detail.log"))
    assert len(logs) >= 5
    for log in logs:
        _check(log)


def _scene(tmp_path: Path) -> Path:
    import shutil

    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLES / "high-single-stream", scene)
    return scene


def test_an_analysis_reads_the_outline_and_the_provenance_is_the_parses(tmp_path: Path) -> None:
    """What an analysis loads gives sk_node_detail.log's provenance from the outline (no node parsed);
    once the nodes are parsed (a table asks), the provenance is theirs, and the same."""
    from skdbg.scene import evidence_for, open_scene

    ev = evidence_for(open_scene(_scene(tmp_path)))
    ev.load_models(None, facts=False)
    (me,) = ev.model_evidence
    assert "node_detail" not in me._parts
    outlined = me.provenance("node_detail")
    assert outlined is me.node_detail_outline and outlined is not None
    full = me.node_detail
    assert full is not None and me.provenance("node_detail") is full
    assert (outlined.first_prefix, dict(outlined.pid_first_line)) == (full.first_prefix, full.pid_first_line)


def test_an_unreadable_file_is_one_warning_whatever_reads_it_after(tmp_path: Path) -> None:
    """A binary sk_node_detail.log: the outline's read files its unreadable gap and error, in the
    file's place among the gaps; the nodes asked for afterwards are known unreadable, not read again."""
    from skdbg.scene import evidence_for, open_scene

    scene = _scene(tmp_path)
    (next(scene.glob("sk_meta/*/*/sk_node_detail.log"))).write_bytes(b"\x00" * 64)
    lazily = evidence_for(open_scene(scene))
    lazily.load_models(None, facts=False)
    (me,) = lazily.model_evidence
    assert me.provenance("node_detail") is None and me.node_detail is None
    whole = evidence_for(open_scene(scene))
    whole.load_all()
    unreadable = [(g.kind, g.detail) for g in lazily.gaps if g.kind == "unreadable"]
    assert len(unreadable) == 1 and "sk_node_detail.log" in unreadable[0][1]
    assert unreadable == [(g.kind, g.detail) for g in whole.gaps if g.kind == "unreadable"]
    assert [str(e) for e in lazily.errors["node_detail"]] == [str(e) for e in whole.errors["node_detail"]]


def test_nodes_parsed_first_spare_the_outline(tmp_path: Path) -> None:
    """The nodes parsed before the analysis (a table shown first): the analysis reads no outline and
    takes the provenance from them; the file is not read a second time."""
    from skdbg.scene import evidence_for, open_scene

    ev = evidence_for(open_scene(_scene(tmp_path)))
    (me,) = ev.model_evidence
    nodes = me.node_detail
    ev.load_models(None, facts=False)
    assert "node_detail_outline" not in me._parts
    assert me.node_detail is nodes and me.provenance("node_detail") is nodes


def test_the_outline_asked_after_the_nodes_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread asks for the outline once another has parsed the nodes (a table shown meanwhile): the
    file is not read again, and an unreadable one is not reported twice."""
    import skdbg.parsers.filelog_outline as filelog_outline
    from skdbg.scene import evidence_for, open_scene

    scene = _scene(tmp_path)
    next(scene.glob("sk_meta/*/*/sk_node_detail.log")).write_bytes(b"\x00" * 64)
    reads: list[str] = []
    monkeypatch.setattr(filelog_outline, "outline_file_log", lambda *a, **k: reads.append("read"))
    ev = evidence_for(open_scene(scene))
    (me,) = ev.model_evidence
    assert me.node_detail is None  # unreadable: one gap
    assert me.node_detail_outline is None and reads == []
    assert me.provenance("node_detail") is None
    assert len([g for g in ev.gaps if g.kind == "unreadable"]) == 1 and len(ev.errors["node_detail"]) == 1
