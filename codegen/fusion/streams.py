"""Two-stream sync graph of the JIT generator (codegen spec §2.6, items 57–58).

Why its own module: the edges (same-stream order, event pairs, mix notify) and the two optimisation
passes (crossed-line removal, keeping one extra send/recv per op) decide which Rule 1/3.1/3.2 syncs
appear; the planner of part 2 reasons about the same edges when it predicts a regenerated scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skdbg.codegen.fusion.blocks import ChildBlocks
from skdbg.codegen.fusion.model import Child, FusionInputError


def task_kind(c: Child) -> str:
    """``cub``, ``vec`` or ``mix`` as the sync graph labels a child."""
    return {"aic": "cub", "aiv": "vec", "mix": "mix"}[c.kernel_type.device]


def sync_label(pre: Child, cur: Child) -> str:
    """Edge label ``pre:cur`` with mix meaning both directions."""
    p, c = task_kind(pre), task_kind(cur)
    if p == "mix" and c == "mix":
        return "cub:vec;vec:cub"
    if p == "mix":
        return "vec:cub" if c == "cub" else "cub:vec"
    if c == "mix":
        return "cub:vec" if p == "cub" else "vec:cub"
    return f"{p}:{c}"


@dataclass
class StreamGraph:
    """The per-arch op lists and the sync edges recorded in each child's send/recv info."""

    children: list[Child]
    cub: list[Child] = field(default_factory=list)
    vec: list[Child] = field(default_factory=list)
    _pos: dict[bool, dict[str, int]] = field(default_factory=dict)
    _named: dict[str, Child] = field(default_factory=dict)

    def edge(self, pre: Child, cur: Child) -> None:
        label = sync_label(pre, cur)
        pre.send_info[cur.multi_stream_name] = label
        cur.recv_info[pre.multi_stream_name] = label

    def index_lists(self) -> None:
        """Name → position maps (names are unique per op index), so the passes stay linear per edge."""
        self._pos = {
            True: {c.multi_stream_name: i for i, c in reversed(list(enumerate(self.vec)))},
            False: {c.multi_stream_name: i for i, c in reversed(list(enumerate(self.cub)))},
        }
        self._named = {c.multi_stream_name: c for c in reversed(self.children)}

    def idx(self, name: str, vec: bool) -> int:
        """Position in the vec (or cub) list; 0 when absent, as upstream's lookup does."""
        return self._pos[vec].get(name, 0)

    def _by_name(self, name: str) -> list[Child]:
        found = self._named.get(name)
        return [found] if found is not None else []

    def _update(self, owner: str, other: str, recv: bool, content: str) -> None:
        for c in self._by_name(owner):
            info = c.recv_info if recv else c.send_info
            if content == "":
                info.pop(other, None)
            else:
                info[other] = content


def _remain(value: str, drop: str) -> str:
    return ";".join(v for v in value.split(";") if v != drop)


def crossing_prefix(g: StreamGraph, c2v: bool) -> list[int]:
    """prefix[r] = the latest sender position among labelled receives of receivers before position r.

    Upstream scans every earlier receiver per edge (``judge_remove``); the edges do not change while
    the pass judges, so one prefix maximum per direction answers every edge in O(1).
    """
    label = "cub:vec" if c2v else "vec:cub"
    receivers = g.vec if c2v else g.cub
    prefix = [-1]
    for op in receivers:
        latest = max((g.idx(k, not c2v) for k, v in op.recv_info.items() if label in v), default=-1)
        prefix.append(max(prefix[-1], latest))
    return prefix


def judge_remove(g: StreamGraph, prefix: list[int], send: str, recv: str, c2v: bool) -> bool:
    """Is the edge send→recv crossed by a later sender reaching an earlier receiver?"""
    return prefix[g.idx(recv, c2v)] > g.idx(send, not c2v)


def _remove_crossed(g: StreamGraph) -> None:
    deletes: list[tuple[str, str, bool, str]] = []
    for ops, label, c2v in ((g.cub, "cub:vec", True), (g.vec, "vec:cub", False)):
        prefix = crossing_prefix(g, c2v)
        for op in ops:
            for key, value in op.send_info.items():
                for sub in value.split(";"):
                    # upstream tests substring membership ("cub" in "cub:vec" holds too)
                    if sub in label and judge_remove(g, prefix, op.multi_stream_name, key, c2v):
                        deletes.append((op.multi_stream_name, key, False, _remain(value, label)))
                        deletes.append((key, op.multi_stream_name, True, _remain(value, label)))
    for owner, other, recv, content in deletes:
        g._update(owner, other, recv, content)


def _remove_multi(g: StreamGraph, send_side: bool) -> None:
    for ops, label, other_vec in ((g.vec, "vec:cub", False), (g.cub, "cub:vec", True)):
        if not send_side:
            label = "cub:vec" if ops is g.vec else "vec:cub"
        deletes: list[tuple[str, str, bool, str]] = []
        for op in ops:
            info = op.send_info if send_side else op.recv_info
            if len(info) <= 1:
                continue
            items = [(k, v, g.idx(k, other_vec)) for k, v in info.items() if label in v]
            if len(items) <= 1:
                continue
            items.sort(key=lambda x: x[2], reverse=not send_side)
            for key, value, _ in items[1:]:
                deletes.append((op.multi_stream_name, key, not send_side, _remain(value, label)))
                deletes.append((key, op.multi_stream_name, send_side, _remain(value, label)))
        for owner, other, recv, content in deletes:
            g._update(owner, other, recv, content)


def build_stream_graph(children: list[Child], blocks: list[ChildBlocks]) -> StreamGraph:
    """Split by arch, add same-stream, event and mix-notify edges, then optimise (§2.6)."""
    g = collect_edges(children, blocks)
    _remove_crossed(g)
    _remove_multi(g, send_side=True)
    _remove_multi(g, send_side=False)
    return g


def collect_edges(children: list[Child], blocks: list[ChildBlocks]) -> StreamGraph:
    """The sync graph before optimisation: same-stream order, event pairs, mix notify edges."""
    g = StreamGraph(children)
    for c in children:
        if task_kind(c) in ("cub", "mix"):
            g.cub.append(c)
        if task_kind(c) in ("vec", "mix"):
            g.vec.append(c)
    g.index_lists()
    streams: dict[int, list[Child]] = {}
    for c in children:
        streams.setdefault(c.stream_id, []).append(c)
    for ops in streams.values():
        ops[-1].is_last_op = True
        for pre, cur in zip(ops, ops[1:], strict=False):
            g.edge(pre, cur)
    senders: dict[int, Child] = {}
    receivers: dict[int, Child] = {}
    for c in children:
        for ev in c.send_events:
            senders[ev] = c
        for ev in c.recv_events:
            receivers[ev] = c
    for ev, sender in senders.items():
        receiver = receivers.get(ev)
        if receiver is None:
            continue
        if receiver is sender:
            raise FusionInputError(
                f"send op {sender.multi_stream_name} can not same with recv op {receiver.multi_stream_name}"
            )
        g.edge(sender, receiver)
    for i, c in enumerate(children[:-1]):
        b = blocks[i]
        if task_kind(c) == "mix" and (b.notify_aic or b.notify_aiv):
            nxt = children[i + 1]
            if task_kind(nxt) == "cub":
                b.notify_aic, b.notify_aiv = b.tmp_notify_aic, ""
            if nxt.stream_id != c.stream_id and nxt.multi_stream_name not in c.send_info:
                g.edge(c, nxt)
    return g
