"""From a scene's metadata to an :class:`OpDag`, and prediction-vs-metadata comparison (gate V3).

Why here and not in the parsers: the parsers keep every line as printed; the planner needs one
merged view per model — capture order and scope flags from ``sk_node_detail.log`` (else the fused and
unfused lists), fail reasons from ``sk_fusion_fail_reasons.log``, scope ids/names from its original
scopes, and core needs from the ``KernelInfos`` of any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skdbg.codegen.fusion.plan_model import OpDag, OpNode, Plan
from skdbg.parsers.discovery import ModelDir, discover_sk_meta
from skdbg.parsers.fail_reasons import FailReasonsResult, parse_fail_reasons
from skdbg.parsers.fused_nodes import FusedNodesResult, parse_fused_nodes
from skdbg.parsers.graph_json import GraphFile, GraphNode, parse_graph_json
from skdbg.parsers.node_detail import parse_node_detail
from skdbg.parsers.node_format import Node
from skdbg.parsers.scope_split import parse_scope_split

_EVENT_KIND = {"EventNotify": "NOTIFY", "EventWait": "WAIT", "EventReset": "RESET"}
_KIND = {
    "memory_write": "MEMORY_WRITE",
    "memory_wait": "MEMORY_WAIT",
    "default": "DEFAULT",
    "kernel": "KERNEL",
}


def _kind(node: Node) -> str:
    if node.kind == "event":
        return _EVENT_KIND.get(node.event_type or "", "DEFAULT")
    return _KIND.get(node.kind, "DEFAULT")


def _op(node: Node, *, kind: str, flags: str, reason: str | None) -> OpNode:
    return OpNode(
        node_id=node.node_id,
        stream=node.stream_id if node.stream_id is not None else (node.stream_idx_in_graph or 0),
        kind=kind,
        func_name=node.func_name,
        scope_flags=flags,
        fail_reason=reason,
        event_id=node.event_id,
        kernel_type=node.kernel_type,
        num_blocks=node.num_blocks or 0,
        cube_num=node.cube_num or 0,
        vec_num=node.vec_num or 0,
        sche_mode=bool(node.is_sche_mode_on),
    )


_GRAPH_KINDS = {"KERNEL", "NOTIFY", "WAIT", "RESET", "MEMORY_WRITE", "MEMORY_WAIT", "DEFAULT"}


def _event_key(node: GraphNode) -> int | None:
    """Event id of an event node; value write/wait pair by device address (their "event")."""
    for task in node.tasks:
        for key in ("eventId", "devAddr"):
            value = task.params.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str):
                try:
                    return int(value, 0)
                except ValueError:
                    continue
    return None


def _cores(kernel_type: str | None, blocks: int) -> tuple[int, int]:
    """(cube, vec) core need from the normalised kernel type (codegen.md §2.11)."""
    return {
        "AIC_ONLY": (blocks, 0),
        "AIV_ONLY": (0, blocks),
        "MIX_AIC_1_1": (blocks, blocks),
        "MIX_AIC_1_2": (blocks, 2 * blocks),
    }.get(kernel_type or "", (0, blocks))


def dag_from_graph(
    graph: GraphFile, reasons: dict[int, str], scope_ids: dict[str, int] | None = None
) -> OpDag:
    """The captured graph of ``sk_graph_origin.json``: one bit per distinct scope name (in order of
    appearance), scope marker kernels dropped, fusibility from the fail-reason log (the JSON has none)."""
    flags_of: dict[str, str] = {}
    nodes: list[OpNode] = []
    for g in sorted(graph.nodes, key=lambda n: n.node_id):
        if g.is_scope_begin or g.is_scope_end or g.is_scope_placeholder or g.skinfo is not None:
            continue
        if g.scope_name:
            flags_of.setdefault(g.scope_name, "1" + "0" * len(flags_of))
        kind = g.node_type if g.node_type in _GRAPH_KINDS else "DEFAULT"
        kernel = next((t.kernel for t in g.tasks if t.kernel is not None), None)
        blocks = (kernel.num_blocks if kernel else None) or 0
        cube, vec = _cores(kernel.kernel_type if kernel else None, blocks)
        nodes.append(
            OpNode(
                node_id=g.node_id,
                stream=g.stream_idx or 0,
                kind=kind,
                func_name=kernel.func_name if kernel else None,
                scope_flags=flags_of.get(g.scope_name or "", "0"),
                fail_reason=reasons.get(g.node_id, "DEFAULT_NODE" if kind == "DEFAULT" else None),
                event_id=_event_key(g) if kind != "KERNEL" and kind != "DEFAULT" else None,
                kernel_type=kernel.kernel_type if kernel else None,
                num_blocks=blocks,
                cube_num=cube,
                vec_num=vec,
            )
        )
    names = {flags: name for name, flags in flags_of.items()}
    return OpDag(tuple(nodes), dict(scope_ids or {}), names)


@dataclass(frozen=True, slots=True)
class ObservedScope:
    """One SK as the runtime reported it: fused nodes in order, and the break that ended it."""

    scope_id: int
    node_ids: tuple[int, ...]
    break_reason: str
    trigger_node: int | None
    source: str  # file:line of the SK Function line


def _fail_reasons(model: ModelDir) -> FailReasonsResult | None:
    path = model.files.get("fail_reasons")
    return parse_fail_reasons(path) if path else None


def _fused(model: ModelDir) -> FusedNodesResult | None:
    path = model.files.get("fused_nodes")
    return parse_fused_nodes(path) if path else None


def dag_from_model(model: ModelDir) -> OpDag:
    """The captured graph of one ``model_*`` dir as far as its logs show it: ``sk_node_detail.log``
    (capture order, type, scope flags, fusibility), else ``sk_graph_origin.json``, else the fused and
    unfused node lists (each SK block its own scope — only enough to replay what was fused)."""
    fr = _fail_reasons(model)
    reasons = {u.node.node_id: (u.reason or u.reason_raw) for u in fr.unfusible} if fr else {}
    scope_ids: dict[str, int] = {}
    scope_names: dict[str, str] = {}
    for o in fr.original_scopes if fr else []:
        scope_ids.setdefault(o.scope_flags, o.scope_id)
        if o.scope_names:
            scope_names.setdefault(o.scope_flags, o.scope_names)
    detail_path = model.files.get("node_detail")
    nodes: list[OpNode] = []
    if detail_path:
        for d in parse_node_detail(detail_path).nodes:
            kind = (
                d.node_type
                if d.node_type in _KIND.values() or d.node_type in _EVENT_KIND.values()
                else _kind(d.node)
            )
            reason = reasons.get(d.node.node_id)
            if reason is None and d.is_fusible is False:
                reason = (
                    "NOT_IN_SCOPE" if not any(c != "0" for c in (d.scope_flags or "0")) else "OP_UNSUPPORT"
                )
            nodes.append(_op(d.node, kind=kind, flags=d.scope_flags or "0", reason=reason))
        return OpDag(tuple(nodes), scope_ids, scope_names)
    graph_path = model.files.get("graph_origin")
    if graph_path:
        by_name = {name: sid for flags, sid in scope_ids.items() if (name := scope_names.get(flags))}
        dag = dag_from_graph(parse_graph_json(graph_path), reasons)
        ids = {flags: by_name[name] for flags, name in dag.scope_names.items() if name in by_name}
        return OpDag(dag.nodes, ids, dag.scope_names)
    fused = _fused(model)
    # No node detail: every SK block is its own scope (bit i) and unfused kernels lie outside.
    seen: set[int] = set()
    for b_index, block in enumerate(fused.blocks if fused else []):
        flags = format(1 << b_index, "b")
        scope_ids.setdefault(flags, block.scope_id)
        for fn in block.nodes:
            if fn.node.node_id not in seen:
                seen.add(fn.node.node_id)
                nodes.append(_op(fn.node, kind=_kind(fn.node), flags=flags, reason=None))
    for u in fr.unfusible if fr else []:
        if u.node.node_id not in seen:
            seen.add(u.node.node_id)
            nodes.append(_op(u.node, kind=_kind(u.node), flags="0", reason=u.reason or u.reason_raw))
    nodes.sort(key=lambda n: n.node_id)
    return OpDag(tuple(nodes), scope_ids, scope_names)


def observed_scopes(model: ModelDir) -> list[ObservedScope]:
    """The fused SKs of a model with the break info of the final split snapshot (by scope ordinal)."""
    fused = _fused(model)
    breaks: list[tuple[str, int | None]] = []
    split_path = model.files.get("scope_split")
    if split_path:
        snaps = parse_scope_split(split_path).snapshots
        final = [s for s in snaps if s.pass_name == "ScopeSplitPipelineFinal"] or snaps[-1:]
        for sc in final[-1].scopes if final else ():
            bi = sc.break_info
            breaks.append(((bi.break_reason or "NONE") if bi else "NONE", bi.trigger_node if bi else None))
    out: list[ObservedScope] = []
    for i, block in enumerate(fused.blocks if fused else []):
        reason, trigger = breaks[i] if i < len(breaks) else ("NONE", None)
        out.append(
            ObservedScope(
                block.scope_id,
                tuple(n.node.node_id for n in block.nodes),
                reason,
                trigger,
                f"{block.src.file}:{block.src.line}",
            )
        )
    return out


def compare_plan(plan: Plan, observed: list[ObservedScope]) -> list[str]:
    """Differences between a prediction and fresh metadata, one sentence each; empty = they agree.

    Compared per SK in launch order: the fused node list (order included), the break reason and its
    trigger node. This is what gate V3 needs ("the before/after ranges appear as SKs with exactly the
    proposed child multisets")."""
    problems: list[str] = []
    if len(plan.scopes) != len(observed):
        problems.append(f"predicted {len(plan.scopes)} SK(s), the metadata shows {len(observed)}")
    for i, (p, o) in enumerate(zip(plan.scopes, observed, strict=False)):
        if p.node_ids != o.node_ids:
            problems.append(
                f"SK {i} ({o.source}): predicted nodes {list(p.node_ids)}, fused {list(o.node_ids)}"
            )
        if p.break_info.reason != o.break_reason:
            problems.append(
                f"SK {i} ({o.source}): predicted break {p.break_info.reason}, logged {o.break_reason}"
            )
        elif o.trigger_node is not None and p.break_info.trigger_node != o.trigger_node:
            problems.append(
                f"SK {i} ({o.source}): predicted trigger node {p.break_info.trigger_node}, logged {o.trigger_node}"
            )
    return problems


def models_of_scene(scene: str | Path) -> list[ModelDir]:
    return list(discover_sk_meta(scene).models)


def compare_functions(expected: list[list[str]], model: ModelDir) -> list[str]:
    """Gate V3 on a fresh scene: do its SKs hold exactly the expected kernel funcName lists (in order)?"""
    fused = _fused(model)
    seen: list[list[str]] = []
    for block in fused.blocks if fused else []:
        seen.append(
            [n.node.func_name or f"node{n.node.node_id}" for n in block.nodes if n.node.kind == "kernel"]
        )
    if seen == expected:
        return []
    problems: list[str] = []
    if len(seen) != len(expected):
        problems.append(f"expected {len(expected)} SK(s) with kernels, the metadata shows {len(seen)}")
    for i, (e, s) in enumerate(zip(expected, seen, strict=False)):
        if e != s:
            problems.append(f"SK {i}: expected kernels {e}, fused {s}")
    return problems
