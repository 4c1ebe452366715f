"""sk_device_args.log read from a path (fast branch) against the same lines read one by one (general branch).

The fast branch builds each task and dfx row from one match (a task line with its ``entry[j]`` lines, a
dfx line with its four-per-line ``entryAic``/``entryAiv`` lines), rebuilds it when a later entry line
adds to it, and counts lines / records pids without a call per match. The general branch (MetaLines
from the line layer) is the oracle: the whole result — blocks, gaps, Unrecognized with their lines,
``lines_read``, ``first_prefix``, ``pid_first_line`` — must be equal. Lines are written by hand in the
§3.9 format (``DumpDeviceArgsDetail`` / ``DumpTaskQueDetail``), not by the scene builder.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.device_args import _FAST, parse_device_args
from skdbg.parsers.skmeta_lines import iter_meta_lines


def _p(pid: int = 48213, ms: int = 445) -> str:
    return f"2026-06-10 14:01:02.{ms:03d} [{pid}:140425347876672] [DEBUG] [sk_task_builder.cpp:33] [DumpTaskQueDetail] "


HEAD = [
    "Dumping device args for function: sk_7_decoder_start_Op0000_000000_end_Op0001_377a4f",
    "SkHeaderInfo: aicOff=48, aivOff=944, counterOff=2176, dfxOff=6976, eventConfigOff=426976, nodeCnt=2, "
    "totalSize=427008",
    "",
    "AIC TaskQue: cap=4, tasks=3",
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _same(path: Path) -> object:
    fast = parse_device_args(path)
    assert fast == parse_device_args(list(iter_meta_lines(path)), file=str(path))
    return fast


def _task_line(i: int, typ: str, nid: bool, rt: bool, extra: bool, entries: int) -> str:
    return (
        f"[{i}] type={typ}, idx={i + 1}"
        + (f", nodeId={100 + i}" if nid else "")
        + (", relatedType=AIC_ONLY" if rt else "")
        + f", blk=24, entries={entries}, args=0x12c11000{i:x}000, debugOptions=0x{i % 3:x}"
        + (", extraInfo=0x1" if extra else "")
    )


@st.composite
def _task(draw: st.DrawFn, i: int) -> list[str]:
    """A task line and the entry lines after it: in order, short, long, out of order or odd."""
    declared = draw(st.integers(0, 6))
    shown = draw(st.integers(0, 6))
    line = _task_line(
        i,
        draw(st.sampled_from(["FUNC", "SYNC", "EVENT_WAIT"])),
        *draw(st.tuples(*[st.booleans()] * 3)),
        declared,
    )
    out = [line]
    for k in range(shown):
        j = draw(st.sampled_from([k, k, k, k + 1, 0]))
        lead, trail = draw(st.sampled_from(["   ", "\t", ""])), draw(st.sampled_from(["", " "]))
        out.append(f"{lead}entry[{j}]=0x124080b{i:02x}{j:x}00{trail}")
    return out


@st.composite
def _dfx(draw: st.DrawFn, i: int) -> list[str]:
    """A dfx line and its entry lines: four per line (aic then aiv, or one of them), one per line, none."""
    tail = ", numBlocks=48, cubeNum=0, vecNum=48" if draw(st.booleans()) else ""
    out = [f"dfx[{i}]: bin=0xaaaaf3c{i}0a50, ori=0xaaaaf3c{i}1110, aicSize=0x0, aivSize=0x1A0{tail}"]
    for core in draw(st.sampled_from([("c", "v"), ("c",), ("v",), ("v", "c"), ()])):
        out.append("  " + ", ".join(f"entryAi{core}[{j}]=0x{i}{j}" for j in range(4)))
    for _ in range(draw(st.integers(0, 2))):
        out.append(f"  entryAi{draw(st.sampled_from('cv'))}[{draw(st.integers(0, 3))}]=0x5")
    return out


@st.composite
def _file(draw: st.DrawFn) -> list[str]:
    tasks = [line for i in range(draw(st.integers(0, 5))) for line in draw(_task(i))]
    dfx = [line for i in range(draw(st.integers(0, 3))) for line in draw(_dfx(i))]
    late = [_task_line(9, "FUNC", True, True, True, 0)] if draw(st.booleans()) else []  # after the dfx rows
    bodies = [*HEAD, *tasks, "AIV TaskQue: cap=1, tasks=1", *tasks[:3], *dfx, *late]
    if draw(st.booleans()):
        bodies = bodies + bodies  # a rerun: a second block of the same name
    pids = draw(
        st.lists(st.sampled_from([48213, 48213, 48213, 7, 9]), min_size=len(bodies), max_size=len(bodies))
    )
    return [(_p(pid) + body if body else "") for pid, body in zip(pids, bodies, strict=True)]


@settings(max_examples=300, deadline=None)
@given(_file())
def test_generated_files_read_alike(tmp_path_factory: object, lines: list[str]) -> None:
    path = tmp_path_factory.mktemp("da") / "sk_device_args.log"  # type: ignore[attr-defined]
    _same(_write(path, lines))


def test_entries_past_the_match_and_late_dfx_entries(tmp_path: Path) -> None:
    """A task's entry[4], entry[5] (after the four its match takes) and a dfx row's one-per-line values
    after its four-per-line ones rebuild the row; an entry out of order is the general branch's."""
    bodies = [
        *HEAD,
        _task_line(0, "FUNC", True, True, True, 6),
        *(f"   entry[{j}]=0x{j + 1:x}0" for j in range(6)),
        _task_line(1, "SYNC", False, False, False, 0),
        "   entry[1]=0x7",
        "dfx[0]: bin=0x1, ori=0x2, aicSize=0x3, aivSize=0x4, numBlocks=24, cubeNum=24, vecNum=0",
        "  entryAic[0]=0xa, entryAic[1]=0xb, entryAic[2]=0xc, entryAic[3]=0xd",
        "  entryAiv[2]=0x5, ",
        "  entryAic[3]=0xF",
    ]
    res = _same(_write(tmp_path / "sk_device_args.log", [_p() + b if b else "" for b in bodies]))
    (block,) = res.blocks  # type: ignore[attr-defined]
    first, second = block.queues[0].tasks
    assert (first.entries, first.extra_info, first.src.line) == ((0x10, 0x20, 0x30, 0x40, 0x50, 0x60), 1, 5)
    assert (second.entries, second.node_id_raw, second.related_type, second.src.line) == ((), None, None, 12)
    (d,) = block.dfx
    assert (d.entry_aic, d.entry_aiv, d.num_blocks, d.src.line) == (
        (0xA, 0xB, 0xC, 0xF),
        (None, None, 5, None),
        24,
        14,
    )
    assert [(u.src.line, u.context) for u in res.unrecognized] == [(13, "sk_device_args:entry_out_of_order")]  # type: ignore[attr-defined]


def test_pids_and_line_count_of_matched_lines(tmp_path: Path) -> None:
    """Matched lines are counted together and a pid is recorded at its first line, also when the pid
    changes back and forth between matches."""
    bodies = [
        *HEAD,
        _task_line(0, "FUNC", True, True, True, 1),
        "   entry[0]=0x1",
        _task_line(1, "SYNC", True, True, True, 0),
    ]
    pids = [48213, 48213, 48213, 48213, 7, 7, 48213]
    lines = [_p(pid, ms) + b if b else "" for ms, (pid, b) in enumerate(zip(pids, bodies, strict=True))]
    lines.append(_p(9) + _task_line(2, "SYNC", True, True, True, 0))
    res = _same(_write(tmp_path / "sk_device_args.log", lines))
    assert res.lines_read == 8  # type: ignore[attr-defined]
    assert res.pid_first_line == {48213: 1, 7: 5, 9: 8}  # type: ignore[attr-defined]
    # the task of pid 7 and its entry of pid 7 are one match; pid 48213's task after it is its own
    tasks = res.blocks[0].queues[0].tasks  # type: ignore[attr-defined]
    assert [(t.position, t.entries, t.src.line) for t in tasks] == [(0, (1,), 5), (1, (), 7), (2, (), 8)]


@settings(max_examples=200, deadline=None)
@given(_file())
def test_branch_optionals_match_like_repeat_optionals(lines: list[str]) -> None:
    """The fast pattern's optional parts are written ``(?:X|)``; written ``(?:X)?`` (its earlier form) it
    gives the very same matches and groups."""
    text = "\n".join(lines)
    repeat_form = re.compile(_FAST.pattern.replace("|)", ")?"), _FAST.flags)
    assert _FAST.pattern.count("|)") == 10
    assert [(m.span(), m.groups()) for m in _FAST.finditer(text)] == [
        (m.span(), m.groups()) for m in repeat_form.finditer(text)
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4), st.sampled_from([None, 0, 7, 18446744073709551615, 18446744073709551614])
        ),
        max_size=10,
    ),
    st.integers(0, 10),
)
def test_task_index_to_node_id_is_its_definition(
    tmp_path_factory: object, tasks: list[tuple[int, int | None]], cut: int
) -> None:
    """First task per index wins (setdefault), tasks without nodeId skipped, the out-of-range sentinel
    read as None, across both queues, in first-seen order."""
    bodies = [*HEAD[:3], f"AIC TaskQue: cap=9, tasks={cut}"]
    for k, (idx, nid) in enumerate(tasks):
        if k == cut:
            bodies.append("AIV TaskQue: cap=9, tasks=9")
        node = "" if nid is None else f", nodeId={nid}"
        bodies.append(f"[{k}] type=FUNC, idx={idx}{node}, blk=1, entries=0, args=0x1, debugOptions=0x0")
    path = tmp_path_factory.mktemp("da") / "sk_device_args.log"  # type: ignore[attr-defined]
    (block,) = parse_device_args(_write(path, [_p() + b if b else "" for b in bodies])).blocks
    expected: dict[int, int | None] = {}
    for t in block.tasks:
        if t.node_id_raw is not None:
            expected.setdefault(t.idx, t.node_id)
    assert list(block.task_index_to_node_id().items()) == list(expected.items())
    assert len(block.tasks) == len(tasks)
