"""The handler run regex's kinds (sk_lines.run_line_regex) against classify, the oracle.

The run reader (sk_parser._Parser._feed_run) takes the kind and groups of the most frequent table
rows from its run regex; classify of the line's body must give the same Classified for every line the
regex names a kind, and every body classify would give one of those kinds must still reach it (the
regex leaves a body it does not take to classify). Bodies are hand-written in the catalogue's formats
(artifacts.md §1.4.3/§1.4.4) and varied by hypothesis: blanks and tabs around them, other numbers,
names, a tail of text, a cut.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers import sk_parser
from skdbg.parsers.sk_lines import RUN_KINDS, RUN_OTHER, classify
from skdbg.parsers.sklog_runs import RUN_LINE_TEXT

PREFIX = "2026-06-10 14:03:21.635 [48213:140425347876672] [ERROR] [sk_dfx_exception_handler.cpp:1411] [PrintDfxInfo] "

EXAMPLES = {
    "entry_addr": "    entryAiv[0]=0x124080b00200",
    "queue_task": "  [0] index=1, type=FUNC, numBlocks=24, args=0x12c110002000",
    "dfx_node": "  [node 0] binHdl=0xaaaaf3c00a50, funcHdlOri=0xaaaaf3c01110, aicSize=0x0, aivSize=0x1a0, "
    "numBlocks=48, cubeNum=0, vecNum=48",
    "origin_name": "    Origin function name: Op0000_000000",
    "node_not_func": "    Node[8] is not a FUNC type",
}
# bodies near the fast forms that classify reads otherwise (another kind, or unknown)
NEAR = [
    "    entryAic[12]=0xABCdef",
    "entryAiv[3]=0x",
    "entryAix[0]=0x1",
    "  [12] index=3, type=EVENT_NOTIFY, numBlocks=0, args=0x5",
    "  [0] index=-1, type=FUNC, numBlocks=24, args=0x1",
    "  [node 1] binHdl=0x1, funcHdlOri=0x2, aicSize=0x3, aivSize=0x4",
    "  [node x] binHdl=0x1, funcHdlOri=0x2, aicSize=0x3, aivSize=0x4, numBlocks=1, cubeNum=2, vecNum=3",
    "Origin function name: ",
    "Origin function name:  two  blanks",
    "Origin function name: a\tb",
    "Origin function name: [Core 3] x",
    "Node[] is not a FUNC type",
    "Node[4] is not a FUNC type.",
    "Failed to get origin function name for node 3, ret=-1",
    "[Core 3] Origin function name: Op1",
    "",
    "   ",
]


def _match(body: str) -> tuple[str, object]:
    """``(kind the run regex names, what the run reader classifies the body as)``."""
    rl = sk_parser._run_lines()
    m = rl.regex.fullmatch(PREFIX + body + "\n")
    assert m is not None  # any body of a run line
    kind = m.lastgroup
    assert kind is not None
    ref = RUN_LINE_TEXT.fullmatch(PREFIX + body + "\n")
    assert ref is not None
    assert (m[1], m[kind]) == ref.groups()  # the prefix and body the plain run-line regex gives
    spec = rl.groups.get(kind)
    if spec is None:
        assert kind == RUN_OTHER
        return kind, classify(m[kind])
    idx, many, d = spec  # as _feed_run makes the Classified
    return kind, (kind, None, m.group(*idx) if many else (m[idx[0]],), d)


def test_examples_take_the_regex_kind() -> None:
    """Each example is named by the regex (the path under test) and classified as classify does."""
    for kind, body in EXAMPLES.items():
        got_kind, c = _match(body)
        assert got_kind == kind
        assert c == classify(body)
        assert c is not None and c[0] == kind


def test_near_forms_as_classify() -> None:
    for body in NEAR:
        _, c = _match(body)
        assert c == classify(body), body


_blank = st.text(alphabet=" \t", max_size=3)
_num = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["", "-1", "007", "x"]))
_hex = st.one_of(st.integers(0, 2**64).map(lambda v: f"{v:x}"), st.sampled_from(["", "ABCdef", "g1"]))
_name = st.text(alphabet="abcXYZ_09 .[]:=,\t", max_size=12)


@st.composite
def _bodies(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(RUN_KINDS))
    if kind == "entry_addr":
        core = draw(st.sampled_from(["Aic", "Aiv", "AIC", "aiv"]))
        core_body = f"entry{core}[{draw(_num)}]=0x{draw(_hex)}"
    elif kind == "queue_task":
        t = draw(st.sampled_from(["FUNC", "SYNC", "EVENT_NOTIFY", "", "A B"]))
        core_body = (
            f"[{draw(_num)}] index={draw(_num)}, type={t}, numBlocks={draw(_num)}, args=0x{draw(_hex)}"
        )
    elif kind == "dfx_node":
        h = [draw(_hex) for _ in range(4)]
        n = [draw(_num) for _ in range(4)]
        core_body = (
            f"[node {n[0]}] binHdl=0x{h[0]}, funcHdlOri=0x{h[1]}, aicSize=0x{h[2]}, aivSize=0x{h[3]}, "
            f"numBlocks={n[1]}, cubeNum={n[2]}, vecNum={n[3]}"
        )
    elif kind == "origin_name":
        core_body = f"Origin function name: {draw(_name)}"
    else:
        core_body = f"Node[{draw(_num)}] is not a FUNC type"
    if draw(st.booleans()):  # a cut line
        core_body = core_body[: draw(st.integers(0, len(core_body)))]
    tail = draw(st.sampled_from(["", "", " x", ",", "\t"]))
    return draw(_blank) + core_body + tail + draw(_blank)


@given(_bodies())
def test_generated_bodies_as_classify(body: str) -> None:
    kind, c = _match(body)
    assert c == classify(body)
    if kind != RUN_OTHER:  # the regex named it: classify agrees on the kind
        assert c is not None and c[0] == kind
