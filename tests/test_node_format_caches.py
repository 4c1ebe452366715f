"""The node caches of ``node_format`` give what the general ``Format()`` grammar gives, in any order.

``match_node`` answers a node text from three caches before any grammar runs: the rest of the line
(``_NODE_CACHE``), the exact text of a current-form kernel node (``_TEXT_CACHE``, which a node printed
with ``devArgs`` also fills for the same node printed without them) and the ``kernelType`` …
``resolvedNum`` fields (``_MID_CACHE``). Each test fills them by parsing texts in the order the
listings come (fused nodes with devArgs, then node detail with a tail, then the scope split's bare
nodes) and compares every answer with ``_match_node_general`` run on an empty line cache.
Example lines follow artifacts.md §3.5/§3.6/§3.7; they are written here, not made by the scene builder.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers import node_format
from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.node_format import Node, match_node

SRC = Source("sk_node_detail.log", 12)
IDS = "[nodeId:{nid}, streamId:0, streamIdxInGraph:1, nodeIdxInStream:{nid}]"
#: a node as ``sk_fused_nodes.log`` prints it (artifacts.md §3.5): devArgs last
FUSED = (
    IDS + " - KernelInfos{{funcName:{f}, kernelType:AIV_ONLY, taskRatio:[0,1], cap:0, numBlocks:48, "
    "cubeNum:0, vecNum:48, isScheModeOn:0, needMixKernelSplit:0, resolvedNum:1, binHdl:0xaaaaf3c00a50, "
    "funcHdl:0xaaaaf3c01110, devArgs:0x12c110000000}}"
)


def _without_dev_args(text: str) -> str:
    """The node as node detail and the scope split print it (no ``, devArgs:<v>``)."""
    head, _, rest = text.rpartition(", devArgs:")
    return head + rest[rest.index("}") :]


def _clear() -> None:
    node_format._NODE_CACHE.clear()
    node_format._TEXT_CACHE.clear()
    node_format._MID_CACHE.clear()


def _answer(run: object, text: str) -> tuple[Node, int] | str | None:
    try:
        return run(text, 0, SRC)  # type: ignore[operator,no-any-return]
    except (ParseError, ValueError) as exc:  # ValueError: a number over 64 bits (refused earlier in files)
        return f"error: {exc}"


def _general(text: str) -> tuple[Node, int] | str | None:
    """The general grammar alone, on an empty line cache, leaving the caches as they were."""
    saved = dict(node_format._NODE_CACHE)
    node_format._NODE_CACHE.clear()
    try:
        return _answer(lambda t, p, s: node_format._match_node_general(t, p, s, t[p:]), text)
    finally:
        node_format._NODE_CACHE.clear()
        node_format._NODE_CACHE.update(saved)


def _listings(fused: str) -> Iterator[str]:
    """The texts one node gives in the order the parsers read them: fused nodes, node detail (with its
    tail), the scope split's two snapshots."""
    bare = _without_dev_args(fused)
    yield fused
    yield bare + ": type=KERNEL, scopeFlags=1, isFusible=1, stackSize=0"
    yield bare
    yield bare


def _check_in_listing_order(fused_texts: list[str]) -> None:
    _clear()
    for fused in fused_texts:
        for text in _listings(fused):
            assert _answer(match_node, text) == _general(text), text


def test_bare_node_after_its_fused_form_has_no_dev_args() -> None:
    _clear()
    fused = FUSED.format(nid=100, f="Op0000_000000")
    bare = _without_dev_args(fused)
    node_format._fast_kernel(fused, 0)
    assert bare in node_format._TEXT_CACHE  # filled by the fused form, before any bare text is read
    node, end = match_node(bare + ": type=KERNEL", 0, SRC)  # type: ignore[misc]
    assert (end, node.text, node.dev_args, node.func_hdl, node.num_blocks) == (
        len(bare),
        bare,
        None,
        0xAAAAF3C01110,
        48,
    )
    assert match_node(bare, 0, SRC) == _general(bare)


@pytest.mark.parametrize(
    "func",
    [
        "Op0000_000000",
        "a, kernelType:X}",  # the marker inside the name: the general grammar decides
        "a, devArgs:0x1}",  # the devArgs key inside the name: only the last one is the field
        "x}, devArgs:0x5",
        "sk_scope_kernel_begin_1",
        "a]b{c",
    ],
)
def test_listing_order_equals_the_general_grammar(func: str) -> None:
    _check_in_listing_order([FUSED.format(nid=7, f=func), FUSED.format(nid=8, f=func)])


def test_shared_launch_fields_with_other_ids() -> None:
    """Two nodes print the same ``kernelType`` … ``resolvedNum`` text: each keeps its own ids."""
    _check_in_listing_order([FUSED.format(nid=n, f=f"Op{n}") for n in (1, 2, 3)])
    a, b = (match_node(_without_dev_args(FUSED.format(nid=n, f="Op")), 0, SRC) for n in (1, 2))
    assert a is not None and b is not None and (a[0].node_id, b[0].node_id) == (1, 2)


def test_mid_fields_with_a_leading_zero_decimal() -> None:
    """``007`` is decimal 7 for the general grammar (int(v, 0) refuses it)."""
    fused = FUSED.format(nid=3, f="Op").replace("vecNum:48", "vecNum:007").replace("cap:0,", "cap:0x10,")
    _check_in_listing_order([fused, fused.replace("nodeId:3,", "nodeId:4,")])
    got = match_node(fused, 0, SRC)
    assert got is not None and (got[0].vec_num, got[0].cap) == (7, 16)


def test_a_full_cache_is_emptied_and_refilled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_format, "_NODE_CACHE_MAX", 4)
    _check_in_listing_order([FUSED.format(nid=n, f=f"Op{n % 3}") for n in range(9)])
    assert len(node_format._TEXT_CACHE) <= 4 and len(node_format._MID_CACHE) <= 4


def test_a_cache_is_bounded_by_the_characters_of_its_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes with kilobyte names fill a cache's character budget long before its entry count."""
    long_names = [FUSED.format(nid=n, f="Op_" + "x" * 3000 + str(n)) for n in range(6)]
    monkeypatch.setattr(node_format, "_NODE_CACHE_CHARS", 10_000)
    _check_in_listing_order(long_names)
    text = node_format._TEXT_CACHE
    assert 0 < len(text) <= 3 and text.chars == sum(map(len, text)) <= 10_000
    text.clear()
    assert text.chars == 0


_value = st.sampled_from(
    ["0", "48", "007", "0x1f", "0xAAAAF3C00A50", "18446744073709551615", "0x" + "f" * 17]
)
_name = st.lists(st.sampled_from([*"ab_0}]{[,: ", ", kernelType:", ", devArgs:", "\u0661"]), max_size=8).map(
    "".join
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            _name,
            _value,
            _value,
            _value,
            st.booleans(),
            st.sampled_from(["", ", isSimtOp:1", ", dynUbufSize:0x20, allocUbufSize:64"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_listing_order_equals_the_general_grammar(
    nodes: list[tuple[int, str, str, str, str, bool, str]],
) -> None:
    texts = []
    for nid, func, cap, handle, dev, launch, extra in nodes:
        text = (
            FUSED.format(nid=nid, f=func)
            .replace("cap:0,", f"cap:{cap},")
            .replace("binHdl:0xaaaaf3c00a50", f"binHdl:{handle}")
            .replace("devArgs:0x12c110000000", f"devArgs:{dev}")
            .replace("needMixKernelSplit:0", "needMixKernelSplit:0" + extra)
        )
        if launch:
            text = text.replace(", devArgs:", ", launchKernelCfg:0x7, devArgs:")
        texts.append(text)
    _check_in_listing_order(texts)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["Op0000_000000", "a}: type=b", "x, kernelType:Y}"]),
    st.sampled_from([": type=KERNEL, scopeFlags=01, isFusible=1, stackSize=2", "}: type=3", " trailing", ""]),
    st.integers(-3, 400),
)
def test_end_guess_changes_no_answer(func: str, tail: str, guess: int) -> None:
    """A guessed node end (right, short, long, past the text, inside the name) never changes the answer."""
    _clear()
    fused = FUSED.format(nid=5, f=func)
    bare = _without_dev_args(fused)
    match_node(fused, 0, SRC)  # fills the kernel cache as sk_fused_nodes.log does
    text = "Processed node " + bare + tail
    pos = len("Processed node ")
    for end in (pos + guess, pos + len(bare), text.rfind(": type=")):
        try:
            got: object = match_node(text, pos, SRC, end)
        except ParseError as exc:
            got = f"error: {exc}"
        saved = dict(node_format._NODE_CACHE)
        node_format._NODE_CACHE.clear()
        try:
            want: object = node_format._match_node_general(text, pos, SRC, text[pos:])
        except ParseError as exc:
            want = f"error: {exc}"
        node_format._NODE_CACHE.update(saved)
        assert got == want, (text, end)


def test_end_guess_is_tried_on_current_kernel_nodes_only() -> None:
    """A legacy ``- Kernel:<func>`` node seen before is no prefix answer: its name runs on (§3.6 legacy)."""
    _clear()
    legacy = "[nodeId:5, streamIdxInGraph:0, nodeIdxInStream:1] - Kernel:foo"
    match_node(legacy, 0, SRC)
    text = legacy + "bar: type=0"
    got = match_node(text, 0, SRC, len(legacy))
    assert got is not None and got[0].func_name == "foobar" and got == _general(text)


EVENT = (
    "[nodeId:108, streamId:0, streamIdxInGraph:0, nodeIdxInStream:9, EventNotify(eventId:0x1, eventFlag:0x0, "
    "eventTaskFlag:0x0)]"
)


@pytest.mark.parametrize(
    "tail",
    [
        ": type=NOTIFY, scopeFlags=1, isFusible=1, stackSize=0",
        ")]: type=2",
        "",
        " x",
        ", EventWait(eventId:1)]",
    ],
)
def test_event_node_read_before_answers_a_text_beginning_with_it(tail: str) -> None:
    """Event nodes (§3.5) are cached by their text too: the scope split's bare node, then node detail's."""
    _clear()
    assert match_node(EVENT, 0, SRC) == _general(EVENT)
    assert EVENT in node_format._TEXT_CACHE
    text = EVENT + tail
    for end in (len(EVENT), text.rfind(": type="), None):
        got = match_node(text, 0, SRC, end)
        assert got == _general(text) and got is not None and got[0].event_id == 1


def test_event_and_kernel_texts_never_answer_each_other() -> None:
    _clear()
    kernel = _without_dev_args(FUSED.format(nid=108, f="Op"))
    for first, second in ((EVENT, kernel), (kernel, EVENT)):
        match_node(first, 0, SRC)
        got = match_node(second + ": type=0", 0, SRC, len(second))
        assert got == _general(second + ": type=0") and got is not None and got[1] == len(second)
