"""The SK node ``Format()`` grammar shared by every sk_meta listing (artifacts.md §3.5, row 54).

Why a dedicated module: the same node text appears in sk_fused_nodes, sk_node_detail,
sk_scope_split, sk_fusion_fail_reasons and super_kernel.log, embedded in different sentences
(``Processed node <node>: type=…``, ``Node <node>: reason: …``, ``[i] <node>``). Callers find the
``[nodeId:`` opening and hand the rest to :func:`match_node`, which reports where the node text
ends so the caller can continue with its own grammar.

Forms accepted (upstream ``sk_node.cpp`` ``*Node::Format`` and ``KernelInfos::Format``):

* current: ``[nodeId:…, streamId:…, streamIdxInGraph:…, nodeIdxInStream:…] - KernelInfos{…}``,
  event/memory/default payloads *inside* the bracket;
* fixture (hand-written, §3.14): ``[nodeId:10, streamId:1] - KernelInfos{…}`` with fields missing;
* legacy: ``[nodeId:…, streamIdxInGraph:…, nodeIdxInStream:…] - Kernel:<func>`` and
  ``- Event:Notify(eventId:…)``; also the intermediate ``…, Kernel name:<func>]`` that the
  upstream ``sk_node_tracing.py`` accepts.

``funcName`` is read up to ``, kernelType:`` (names may contain ``,``/``}`` in pathological cases).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import TypeVar

from skdbg import regexcode
from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import ParseError, Source, parse_int

V = TypeVar("V")

EVENT_TYPES = ("EventNotify", "EventWait", "EventReset", "Unknown")
LEGACY_EVENT = {"Notify": "EventNotify", "Wait": "EventWait", "Reset": "EventReset"}
SCOPE_MARKER_PREFIXES = {
    "sk_scope_kernel_begin": "begin",
    "sk_scope_kernel_end": "end",
    "sk_placeholder_kernel": "placeholder",
}

_HEAD = regexcode.compile(
    r"\[nodeId:(?P<nid>\d+)"
    r"(?:, streamId:(?P<sid>-?\d+))?"
    r"(?:, streamIdxInGraph:(?P<sidx>\d+))?"
    r"(?:, nodeIdxInStream:(?P<nidx>\d+))?"
)
_INT = r"(?:0[xX][0-9a-fA-F]+|\d+)"
_EVENT_INNER = regexcode.compile(
    r"(?P<et>EventNotify|EventWait|EventReset|Unknown)\((?P<args>[^)]*)\)\]",
)
_EVENT_AFTER = regexcode.compile(r" - (?P<et>EventNotify|EventWait|EventReset|Unknown)\((?P<args>[^)]*)\)")
_MEM_WRITE = regexcode.compile(r"MemoryWrite\((?P<args>[^)]*)\)\]")
_MEM_WAIT = regexcode.compile(r"MemoryWait\((?P<args>[^)]*)\)\]")
_DEFAULT = regexcode.compile(r"type: Default\]")
_KERNEL_NAME = regexcode.compile(r"Kernel name:(?P<f>[^\]]*)\]")
_LEGACY_KERNEL = regexcode.compile(r" - Kernel:(?P<f>[^\s:\]]+)")
_LEGACY_EVENT = regexcode.compile(r" - Event:(?P<et>\w+)(?:\((?P<args>[^)]*)\))?")
_ARG = regexcode.compile(r"\s*(?P<k>\w+):(?P<v>[^,]*)")
_KFIELD = regexcode.compile(r", (?P<k>\w+):(?P<v>\[[^\]]*\]|[^,}]*)")
_KERNEL_OPEN = " - KernelInfos{funcName:"

_INT_FIELDS = {
    "cap": "cap",
    "numBlocks": "num_blocks",
    "cubeNum": "cube_num",
    "vecNum": "vec_num",
    "dynUbufSize": "dyn_ubuf_size",
    "allocUbufSize": "alloc_ubuf_size",
    "resolvedNum": "resolved_num",
    "binHdl": "bin_hdl",
    "funcHdl": "func_hdl",
    "launchKernelCfg": "launch_kernel_cfg",
    "devArgs": "dev_args",
}
_BOOL_FIELDS = {
    "isScheModeOn": "is_sche_mode_on",
    "needMixKernelSplit": "need_mix_kernel_split",
    "isSimtOp": "is_simt_op",
}


@dataclass(frozen=True, slots=True)
class Node:
    """One node as printed by ``Format()``.

    ``kind`` ∈ kernel, event, memory_write, memory_wait, default. ``form`` tells which printer
    produced it: ``current`` (all ids), ``fixture`` (streamId but no idx fields) or ``legacy``
    (no streamId, or the ``Kernel:``/``Event:`` payloads).
    """

    src: Source
    kind: str
    node_id: int
    stream_id: int | None
    stream_idx_in_graph: int | None
    node_idx_in_stream: int | None
    form: str
    text: str  # the node text exactly as printed
    # kernel fields (None when the printer omitted them)
    func_name: str | None = None
    kernel_type: str | None = None
    task_ratio: tuple[int, int] | None = None
    cap: int | None = None
    num_blocks: int | None = None
    cube_num: int | None = None
    vec_num: int | None = None
    is_sche_mode_on: bool | None = None
    need_mix_kernel_split: bool | None = None
    is_simt_op: bool = False
    dyn_ubuf_size: int | None = None
    alloc_ubuf_size: int | None = None
    resolved_num: int | None = None
    bin_hdl: int | None = None
    func_hdl: int | None = None
    launch_kernel_cfg: int | None = None
    dev_args: int | None = None
    extra_fields: tuple[tuple[str, str], ...] = ()  # KernelInfos keys this parser does not know
    # event / memory fields
    event_type: str | None = None  # EventNotify, EventWait, EventReset, Unknown
    event_id: int | None = None
    event_flag: int | None = None
    event_task_flag: int | None = None
    memory_value: int | None = None
    memory_wait_flag: int | None = None

    @property
    def is_kernel(self) -> bool:
        return self.kind == "kernel"

    @property
    def scope_marker(self) -> str | None:
        """``begin``/``end``/``placeholder`` for the scope marker kernels (§3.5), else None."""
        if self.func_name is None:
            return None
        for prefix, what in SCOPE_MARKER_PREFIXES.items():
            if self.func_name == prefix or self.func_name.startswith(prefix + "_"):
                return what
        return None

    @property
    def is_scope_marker(self) -> bool:
        return self.scope_marker is not None


_INT_RE = regexcode.compile(_INT)
_RATIO_RE = regexcode.compile(r"\[(\d+),\s*(\d+)\]")


def _err(src: Source, expected: str, got: str) -> ParseError:
    return ParseError(src.file, expected, line=src.line, got=got)


def _int(value: str, key: str, src: Source, text: str) -> int:
    v = value.strip()
    if _INT_RE.fullmatch(v) is None:
        raise _err(src, f"an integer for node field {key!r}", text)
    return _number(v, key, src, text)


def _number(digits: str, key: str, src: Source, text: str) -> int:
    """``digits`` (already known to be a number) as the integer of node field ``key``; a number no
    runtime prints (wider than 64 bits, or longer than ``int`` converts) is a :class:`ParseError` of
    the node, not a ``ValueError`` out of the parser. Why here: the line-level oversized check leaves
    a digit run that a letter follows (``nodeId:999…9x``) to the node grammar, as part of a name."""
    try:
        return parse_int(digits)
    except ValueError as exc:
        raise _err(src, f"an integer of at most 64 bits for node field {key!r}", text) from exc


def _args(args: str, src: Source, text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in args.split(","):
        if not part.strip():
            continue
        m = _ARG.fullmatch(part)
        if m is None:
            raise _err(src, "'key:value' pairs inside an event/memory node", text)
        out[m.group("k")] = _int(m.group("v"), m.group("k"), src, text)
    return out


def _form(sid: str | None, sidx: str | None, nidx: str | None) -> str:
    if sid is None:
        return "legacy"
    if sidx is None or nidx is None:
        return "fixture"
    return "current"


def _kernel(text: str, pos: int, src: Source) -> tuple[dict[str, object], int]:
    """Parse ``KernelInfos{funcName:…}`` starting right after ``funcName:``; return fields, end."""
    kt = text.find(", kernelType:", pos)
    close_simple = text.find("}", pos)
    if kt < 0:
        # Fixture shortcut seen upstream: ``KernelInfos{funcName:X}`` with nothing else.
        if close_simple < 0:
            raise _err(src, "'}' closing KernelInfos{…}", text[pos - 24 :])
        return {"func_name": text[pos:close_simple]}, close_simple + 1
    out: dict[str, object] = {"func_name": text[pos:kt]}
    extra: list[tuple[str, str]] = []
    i = kt
    while True:
        if text.startswith("}", i):
            out["extra_fields"] = tuple(extra)
            return out, i + 1
        m = _KFIELD.match(text, i)
        if m is None:
            raise _err(src, "', key:value' or '}' inside KernelInfos{…}", text[i:])
        k, v = m.group("k"), m.group("v")
        if k == "kernelType":
            out["kernel_type"] = v
        elif k == "taskRatio":
            rm = _RATIO_RE.fullmatch(v)
            if rm is None:
                raise _err(src, "taskRatio:[<a>,<b>]", v)
            out["task_ratio"] = (_number(rm.group(1), k, src, text), _number(rm.group(2), k, src, text))
        elif k in _INT_FIELDS:
            out[_INT_FIELDS[k]] = _int(v, k, src, text)
        elif k in _BOOL_FIELDS:
            if v not in ("0", "1"):
                raise _err(src, f"0 or 1 for {k}", v)
            out[_BOOL_FIELDS[k]] = v == "1"
        else:
            extra.append((k, v))
        i = m.end()


class _NodeCache(dict[str, V]):
    """A node cache: a dict that also counts the characters of its keys (see :func:`_bounded_put`)."""

    __slots__ = ("chars",)

    def __init__(self) -> None:
        super().__init__()
        self.chars = 0

    def clear(self) -> None:
        super().clear()
        self.chars = 0


#: parsed nodes by the text from their start to the end of the line: every node is printed in several
#: sk_meta files (fused nodes, scope split, super_kernel.log …) and is parsed once (bounded). The value
#: holds every Node field but ``src`` in declaration order (positional construction is the cheap one).
_NODE_CACHE: _NodeCache[tuple[tuple[object, ...], int]] = _NodeCache()
#: entries per node cache before it is emptied. Why this many: the caches pay off only if they hold a
#: whole model's nodes until its last listing is parsed. At 8,192 a model of 10,000 kernels (22,500
#: node texts) emptied them over and over and parsed each listing afresh: 0.33 s more of the main
#: thread, and more memory, since every record then held values of its own instead of the cached ones
#: (peak 517 MB against 493 MB). An entry of a usual node is ~700 bytes (its text and the values'
#: tuple; the values are the records' own), so 65,536 of them are ~45 MB, a model of some 35,000 nodes.
_NODE_CACHE_MAX = 1 << 16
#: characters of keys per node cache before it is emptied: nodes with long names (C++ templates of
#: kilobytes) reach it before :data:`_NODE_CACHE_MAX`, so no cache holds more than ~32 MB of text, what a
#: long-running process (the TUI, ``scan``) keeps after the scene is gone
_NODE_CACHE_CHARS = 1 << 25
_FIELDS_AFTER_SRC = tuple(f.name for f in dataclass_fields(Node))[1:]


#: ``Node(src, *values)`` at the speed of a mutable record (bulk.frozen_builder): sk_meta files list
#: tens of thousands of nodes, and the frozen ``__init__`` costs ~5 µs for 32 fields
_build_node = frozen_builder(Node)

#: a value the runtime prints for an integer KernelInfos field, narrow enough that it always fits 64 bits
_N = r"(0x[0-9a-fA-F]{1,16}|[0-9]{1,19})"
_D = r"([0-9]{1,19})"
#: the current printer's kernel node with its fields in the printer's order (artifacts.md §3.5) and
#: plain values: one match instead of a field loop. Anything else (other order, unknown keys, spaces,
#: events, legacy forms, long numbers) falls through to the general grammar, which decides alone.
#: Group 6 holds the fields from ``kernelType`` to ``resolvedNum`` (a capture changes no match).
_FAST_KERNEL = regexcode.compile(
    rf"\[nodeId:{_D}, streamId:(-?[0-9]{{1,19}}), streamIdxInGraph:{_D}, nodeIdxInStream:{_D}\]"
    r" - KernelInfos\{funcName:(.*?), kernelType:(([A-Za-z0-9_]*), "
    rf"taskRatio:\[{_D}, *{_D}\], cap:{_N}, numBlocks:{_N}, cubeNum:{_N}, vecNum:{_N}, "
    r"isScheModeOn:([01]), needMixKernelSplit:([01])(?:, isSimtOp:([01]))?"
    rf"(?:, dynUbufSize:{_N})?(?:, allocUbufSize:{_N})?, resolvedNum:{_N})"
    rf"(?:, binHdl:{_N})?(?:, funcHdl:{_N})?(?:, launchKernelCfg:{_N})?(?:, devArgs:{_N})?\}}"
)
_ID_GROUPS = (1, 2, 3, 4, 5, 6)  # nodeId, streamId, streamIdxInGraph, nodeIdxInStream, funcName, the middle
_MID_GROUPS = tuple(range(7, 20))  # kernelType … resolvedNum
_HANDLE_GROUPS = (20, 21, 22, 23)  # binHdl, funcHdl, launchKernelCfg, devArgs


def _num(v: str | None) -> int | None:
    if v is None:
        return None
    return int(v, 16) if v[1:2] == "x" else int(v)


#: the current printer's event node (ids, then the event inside the brackets, §3.5) with its three
#: arguments in the printer's order; other argument lists take the general grammar
_FAST_EVENT = regexcode.compile(
    rf"\[nodeId:{_D}, streamId:(-?[0-9]{{1,19}}), streamIdxInGraph:{_D}, nodeIdxInStream:{_D}, "
    rf"(EventNotify|EventWait|EventReset|Unknown)\(eventId:{_N}, eventFlag:{_N}, eventTaskFlag:{_N}\)\]"
)


def _fast_event(text: str, pos: int, key: str | None = None) -> tuple[tuple[object, ...], int] | None:
    """:func:`_fast_kernel` for an event node (all its fields come from fixed-text-delimited groups)."""
    m = _FAST_EVENT.match(text, pos)
    if m is None:
        return None
    node_text = key if key is not None and m.end() - pos == len(key) else m.group()
    hit = _TEXT_CACHE.get(node_text)
    if hit is not None:
        return hit
    nid, sid, sidx, nidx, et, eid, eflag, etask = m.groups()
    args = (
        "event", int(nid), int(sid), int(sidx), int(nidx), "current", node_text,
        None, None, None, None, None, None, None, None, None, False, None, None, None,
        None, None, None, None, (),
        et, _num(eid), _num(eflag), _num(etask), None, None,
    )  # fmt: skip
    hit = (args, len(node_text))
    _bounded_put(_TEXT_CACHE, node_text, hit)
    return hit


#: the Node fields of a current-form kernel or event node by its exact text (fused nodes print
#: ``devArgs``, node detail and the scope split passes the same node without): conversions done once per
#: distinct node. An entry is also what _fast_kernel (or _fast_event, tried where it gives None) reads
#: from any longer text that begins with its text: both forms are delimited by fixed text up to their
#: closing ``}`` or ``)]``, no other reading of them reaches past it, and a kernel node cannot read as an
#: event node or the reverse (``]`` vs ``,`` after the ids).
_TEXT_CACHE: _NodeCache[tuple[tuple[object, ...], int]] = _NodeCache()
#: the Node fields ``kernel_type`` … ``resolved_num`` by the text printing them (group 6 of
#: _FAST_KERNEL): a graph's kernels share a handful of launch shapes, converted once each
_MID_CACHE: _NodeCache[tuple[object, ...]] = _NodeCache()
_DEV_ARGS = ", devArgs:"
_DEV_GROUP = 23  # the ``devArgs`` value's group in _FAST_KERNEL
#: the event fields of a kernel node
_NO_EVENT = (None,) * 6


def _mid_fields(m: re.Match[str], mid: str) -> tuple[object, ...]:
    """``kernel_type`` … ``resolved_num`` of a _FAST_KERNEL match, remembered by their text ``mid``."""
    ktype, ra, rb, cap, nb, cube, vec, sche, mix, simt, dyn, alloc, resolved = m.group(*_MID_GROUPS)
    nums: tuple[int | None, ...]
    try:  # int(v, 0) reads 0x… and plain decimal alike; a decimal with a leading zero raises
        nums = (
            int(cap, 0), int(nb, 0), int(cube, 0), int(vec, 0),
            None if dyn is None else int(dyn, 0), None if alloc is None else int(alloc, 0), int(resolved, 0),
        )  # fmt: skip
    except ValueError:
        nums = tuple(_num(v) for v in (cap, nb, cube, vec, dyn, alloc, resolved))
    c_, nb_, cube_, vec_, dyn_, alloc_, res_ = nums
    fields = (
        ktype, (int(ra), int(rb)), c_, nb_, cube_, vec_, sche == "1", mix == "1", simt == "1", dyn_, alloc_, res_,
    )  # fmt: skip
    _bounded_put(_MID_CACHE, mid, fields)
    return fields


def _fast_kernel(text: str, pos: int, key: str | None = None) -> tuple[tuple[object, ...], int] | None:
    """The Node fields (all but ``src``) and the length of a current-form kernel node at ``text[pos]``,
    or None when the text is not in that exact form (the caller then runs the general grammar).

    Equal to the general grammar wherever it answers: every field is delimited by fixed text, so the
    match is the only reading, and ``funcName`` ends at the first ``, kernelType:`` as there. ``key``
    (``text[pos:]``, when the caller has it) stands for the node text when the node fills it: the same
    characters, whose hash the caller's own lookup has already computed, instead of a copy."""
    m = _FAST_KERNEL.match(text, pos)
    if m is None:
        return None
    node_text = key if key is not None and m.end() - pos == len(key) else m.group()
    hit = _TEXT_CACHE.get(node_text)
    if hit is not None:
        return hit
    nid, sid, sidx, nidx, func, mid = m.group(*_ID_GROUPS)
    if ", kernelType:" in func:  # the lazy name stopped at a later marker: not the general reading
        return None
    mid_fields = _MID_CACHE.get(mid) or _mid_fields(m, mid)
    bin_hdl, func_hdl, cfg, dev = m.group(*_HANDLE_GROUPS)
    try:  # int(v, 0) reads 0x… and plain decimal alike; a decimal with a leading zero raises
        bin_, fh_, cfg_, dev_ = (
            None if bin_hdl is None else int(bin_hdl, 0), None if func_hdl is None else int(func_hdl, 0),
            None if cfg is None else int(cfg, 0), None if dev is None else int(dev, 0),
        )  # fmt: skip
    except ValueError:
        bin_, fh_, cfg_, dev_ = (_num(bin_hdl), _num(func_hdl), _num(cfg), _num(dev))
    ids = (int(nid), int(sid), int(sidx), int(nidx))
    args = ("kernel", *ids, "current", node_text, func, *mid_fields, bin_, fh_, cfg_, dev_, (), *_NO_EVENT)
    hit = (args, len(node_text))
    _bounded_put(_TEXT_CACHE, node_text, hit)
    if dev is not None:
        # the same node as the listings printed before the device args were set show it: node detail
        # and the scope split print the very nodes ``sk_fused_nodes.log`` (parsed first) lists with
        # them. It is the reading this function gives that text: the match of the longer text up to
        # the devArgs group is the match of the shorter one (every field is delimited by fixed text;
        # the optional group is left out and the closing ``}`` follows).
        short = node_text[: m.start(_DEV_GROUP) - m.start() - len(_DEV_ARGS)] + "}"
        if short not in _TEXT_CACHE:
            _bounded_put(
                _TEXT_CACHE,
                short,
                (
                    (
                        "kernel",
                        *ids,
                        "current",
                        short,
                        func,
                        *mid_fields,
                        bin_,
                        fh_,
                        cfg_,
                        None,
                        (),
                        *_NO_EVENT,
                    ),
                    len(short),
                ),
            )
    return hit


def match_node(text: str, pos: int, src: Source, end: int | None = None) -> tuple[Node, int] | None:
    """Parse a node starting at ``text[pos]``; return ``(node, end)`` or None if no ``[nodeId:``.

    Raises :class:`ParseError` (with the file/line of ``src``) when the text opens a node but
    its payload does not follow any known ``Format()`` form.

    ``end`` is where the caller expects the node to end (before a tail of its own grammar, e.g. node
    detail's ``: type=…``): a guess only, tried against the text cache before the line is parsed; a
    wrong guess costs one lookup and changes no answer.
    """
    # a node text read before (by this or another listing) that the rest begins with: the one-match
    # forms read any text beginning with that node the same way (see _TEXT_CACHE)
    if end is not None and (hit := _TEXT_CACHE.get(text[pos:end])) is not None:
        return _build_node(src, *hit[0]), pos + hit[1]
    got = node_fields(text, pos)
    if got is None:
        return _match_node_general(text, pos, src, text[pos:])
    # the same node text, printed by another file or printer: only src differs
    return _build_node(src, *got[0]), got[1]


#: what :func:`node_fields` gives: every field of a :class:`Node` but ``src``, in order
NodeFields = tuple[object, ...]


def node_fields(text: str, pos: int) -> tuple[NodeFields, int] | None:
    """The node :func:`match_node` reads at ``text[pos]`` when one of the one-match forms reads it (a
    node text met before, a current-form kernel or event node): its fields but ``src`` and its end; None
    when only the general grammar can say (``match_node`` then reads it, or raises). The fields are
    shared by every reading of the same text (never changed): :func:`node_from_fields` makes the node.

    Why apart from ``match_node``: a parser that checks a row now and makes its record only when a
    reader asks (:class:`~skdbg.parsers.bulk.LazyRecords`) keeps these fields instead of the node."""
    key = text[pos:]
    hit = _TEXT_CACHE.get(key) or _NODE_CACHE.get(key)
    if hit is None:
        hit = _fast_kernel(text, pos, key) or _fast_event(text, pos, key)
        if hit is None:
            return None
        if hit[1] != len(key):  # a node filling the rest is in the text cache
            _bounded_put(_NODE_CACHE, key, hit)
    return hit[0], pos + hit[1]


def match_node_general(text: str, pos: int, src: Source) -> tuple[Node, int] | None:
    """:func:`match_node` of a node :func:`node_fields` found no one-match reading for: the general grammar
    alone (a caller that tried ``node_fields`` first does not try the one-match forms twice)."""
    return _match_node_general(text, pos, src, text[pos:])


def node_from_fields(src: Source, fields: NodeFields) -> Node:
    """The :class:`Node` of ``fields`` (:func:`node_fields`) cited at ``src``: what ``match_node`` makes."""
    return _build_node(src, *fields)


def _bounded_put(cache: _NodeCache[V], key: str, value: V) -> None:
    """Store ``value`` under ``key``, emptying ``cache`` first when it holds :data:`_NODE_CACHE_MAX`
    entries or :data:`_NODE_CACHE_CHARS` characters of keys (the node caches stay bounded whatever a
    model holds; an emptied cache only costs parses)."""
    if len(cache) >= _NODE_CACHE_MAX or cache.chars + len(key) > _NODE_CACHE_CHARS:
        cache.clear()
    cache[key] = value
    cache.chars += len(key)


def _match_node_general(text: str, pos: int, src: Source, key: str) -> tuple[Node, int] | None:
    """The whole ``Format()`` grammar (every form; precise errors)."""
    head = _HEAD.match(text, pos)
    if head is None:
        return None
    nid, sid, sidx, nidx = head.group("nid", "sid", "sidx", "nidx")
    base: dict[str, object] = {
        "node_id": _number(nid, "nodeId", src, text),
        "stream_id": _number(sid, "streamId", src, text) if sid is not None else None,
        "stream_idx_in_graph": _number(sidx, "streamIdxInGraph", src, text) if sidx is not None else None,
        "node_idx_in_stream": _number(nidx, "nodeIdxInStream", src, text) if nidx is not None else None,
    }
    form = _form(sid, sidx, nidx)
    i = head.end()
    fields: dict[str, object]
    if text.startswith("]", i):
        i += 1
        if text.startswith(_KERNEL_OPEN, i):
            fields, end = _kernel(text, i + len(_KERNEL_OPEN), src)
            fields["kind"] = "kernel"
        elif (m := _LEGACY_KERNEL.match(text, i)) is not None:
            fields, end, form = {"kind": "kernel", "func_name": m.group("f")}, m.end(), "legacy"
        elif (m := _LEGACY_EVENT.match(text, i)) is not None:
            et = LEGACY_EVENT.get(m.group("et"), m.group("et"))
            a = _args(m.group("args") or "", src, text)
            fields = {"kind": "event", "event_type": et, "event_id": a.get("eventId")}
            end, form = m.end(), "legacy"
        elif (m := _EVENT_AFTER.match(text, i)) is not None:
            a = _args(m.group("args"), src, text)
            fields = _event_fields(m.group("et"), a)
            end = m.end()
        else:
            raise _err(
                src, "' - KernelInfos{…}' (or legacy ' - Kernel:'/' - Event:') after the node ids", text
            )
    elif text.startswith(", ", i):
        i += 2
        if (m := _EVENT_INNER.match(text, i)) is not None:
            fields = _event_fields(m.group("et"), _args(m.group("args"), src, text))
        elif (m := _MEM_WRITE.match(text, i)) is not None:
            a = _args(m.group("args"), src, text)
            fields = {"kind": "memory_write", "memory_value": a.get("value"), "event_id": a.get("eventId")}
        elif (m := _MEM_WAIT.match(text, i)) is not None:
            a = _args(m.group("args"), src, text)
            fields = {
                "kind": "memory_wait",
                "memory_wait_flag": a.get("flag"),
                "memory_value": a.get("value"),
                "event_id": a.get("eventId"),
            }
        elif (m := _DEFAULT.match(text, i)) is not None:
            fields = {"kind": "default"}
        elif (m := _KERNEL_NAME.match(text, i)) is not None:
            fields, form = {"kind": "kernel", "func_name": m.group("f")}, "legacy"
        else:
            raise _err(
                src,
                "an event/MemoryWrite/MemoryWait/'type: Default' payload inside the node brackets",
                text,
            )
        end = m.end()
    else:
        raise _err(src, "']' or ', ' after the node ids", text)
    kw = {"form": form, "text": text[pos:end], **base, **fields}
    node = Node(src=src, **kw)  # type: ignore[arg-type]
    _bounded_put(_NODE_CACHE, key, (tuple(getattr(node, name) for name in _FIELDS_AFTER_SRC), end - pos))
    return node, end


def _event_fields(et: str, a: dict[str, int]) -> dict[str, object]:
    return {
        "kind": "event",
        "event_type": et,
        "event_id": a.get("eventId"),
        "event_flag": a.get("eventFlag"),
        "event_task_flag": a.get("eventTaskFlag"),
    }
