"""Scope planning: the runtime's scope-split pipeline replayed over an :class:`OpDag` (codegen.md §2.12).

Why: to re-validate an exclusion skdbg must say, before anybody re-launches, which SKs the edited model
will get — the fused node lists, and for every cut its break reason and trigger node. Gate V3 then
compares that prediction with the fresh metadata (:func:`compare_plan` in ``plan_scene``).

Passes, in the runtime's order: ``InitialScopeSplitPass`` → ``ScheModeKernelSplitPass`` →
``DeadlockRefinePass`` → ``EventOnlyStreamRemovePass`` (with ``debug_per_op_max_core_num=1`` only
``PerOpMaxCoreSplitPass``). Rules of the initial pass as implemented here:

* all streams advance together; the next node taken is the ready stream head earliest in capture order;
* a head outside every named scope (when named scopes exist) or with other scope bit flags ends that
  stream's part of the scope — a named-scope boundary, not a break;
* an unfusible head inside the scope ends the stream and is the scope's break (``UNFUSIBLE_NODE``,
  the first such node is the trigger);
* a wait whose notify has not been taken yet suspends its stream;
* unfusible nodes at a scope start are skipped (they run unfused, in stream order).
"""

from __future__ import annotations

from dataclasses import replace

from skdbg.codegen.fusion.plan_model import (
    BREAK_DEADLOCK,
    BREAK_NONE,
    BREAK_PER_OP,
    BREAK_SYNCALL,
    BREAK_UNFUSIBLE,
    EVENT_KINDS,
    NOTIFY_KINDS,
    REASON_ISOLATED_EVENT,
    REASON_NOT_IN_SCOPE,
    WAIT_KINDS,
    BreakInfo,
    OpDag,
    OpNode,
    Plan,
    PlanError,
    PlannedScope,
)

PASS_INITIAL = "InitialScopeSplitPass"
PASS_SCHEMODE = "ScheModeKernelSplitPass"
PASS_DEADLOCK = "DeadlockRefinePass"
PASS_EVENT_ONLY = "EventOnlyStreamRemovePass"
PASS_PER_OP = "PerOpMaxCoreSplitPass"


def wait_partners(dag: OpDag) -> dict[int, int]:
    """wait nodeId → the notify nodeId it waits for: the latest same-id notify before it in capture
    order (event ids are reused), else the first one after it. Waits without any notify are external."""
    out: dict[int, int] = {}
    last: dict[int, int] = {}
    first: dict[int, int] = {}
    for n in dag.nodes:
        if n.kind in NOTIFY_KINDS and n.event_id is not None:
            first.setdefault(n.event_id, n.node_id)
    for n in dag.nodes:
        if n.event_id is None:
            continue
        if n.kind in NOTIFY_KINDS:
            last[n.event_id] = n.node_id
        elif n.kind in WAIT_KINDS:
            partner = last.get(n.event_id, first.get(n.event_id))
            if partner is not None:
                out[n.node_id] = partner
    return out


def _initial(dag: OpDag) -> tuple[list[PlannedScope], dict[int, str]]:
    streams = dag.streams()
    order = {n.node_id: i for i, n in enumerate(dag.nodes)}
    partner = wait_partners(dag)
    named = any(n.in_named_scope for n in dag.nodes)

    def outside(n: OpNode) -> bool:
        return named and not n.in_named_scope

    pos = dict.fromkeys(streams, 0)
    taken: set[int] = set()
    unfused: dict[int, str] = {}
    scopes: list[PlannedScope] = []
    while True:
        for s, seq in streams.items():
            while pos[s] < len(seq) and (not seq[pos[s]].fusible or outside(seq[pos[s]])):
                n = seq[pos[s]]
                unfused[n.node_id] = n.fail_reason or REASON_NOT_IN_SCOPE
                taken.add(n.node_id)
                pos[s] += 1
        if all(pos[s] >= len(seq) for s, seq in streams.items()):
            break
        flags: str | None = None
        members: list[int] = []
        ended: set[int] = set()
        brk: BreakInfo | None = None
        while True:
            ready: list[OpNode] = []
            for s, seq in streams.items():
                if s in ended or pos[s] >= len(seq):
                    continue
                head = seq[pos[s]]
                if head.node_id in partner and partner[head.node_id] not in taken:
                    continue  # the wait is suspended until its notify is taken
                ready.append(head)
            if not ready:
                break
            n = min(ready, key=lambda x: order[x.node_id])
            if outside(n) or (flags is not None and n.scope_flags != flags):
                ended.add(n.stream)
                continue
            if not n.fusible:
                ended.add(n.stream)
                if brk is None:
                    brk = BreakInfo(BREAK_UNFUSIBLE, n.node_id, n.stream, "unfused node causes scope break")
                continue
            if flags is None:
                flags = n.scope_flags
            members.append(n.node_id)
            taken.add(n.node_id)
            pos[n.stream] += 1
        if not members or flags is None:
            stuck = sorted(seq[pos[s]].node_id for s, seq in streams.items() if pos[s] < len(seq))
            raise PlanError(f"deadlock: the waits at stream heads {stuck} can never be satisfied")
        scopes.append(
            PlannedScope(dag.scope_ids.get(flags), flags, tuple(members), brk or BreakInfo(BREAK_NONE))
        )
    return scopes, unfused


def _split(scope: PlannedScope, at: int, brk: BreakInfo) -> tuple[PlannedScope, PlannedScope]:
    """Cut a scope before fused position ``at``: the first part ends with ``brk``, the second keeps the
    original end reason. Every stream's part stays a prefix/suffix, so stream order is preserved."""
    first = replace(scope, node_ids=scope.node_ids[:at], break_info=brk)
    second = replace(scope, node_ids=scope.node_ids[at:])
    return first, second


def _schemode(dag: OpDag, scopes: list[PlannedScope]) -> list[PlannedScope]:
    nodes = dag.by_id()
    out: list[PlannedScope] = []
    work = list(scopes)
    while work:
        scope = work.pop(0)
        merged = (0, 0)
        sche: list[int] = []
        cut: tuple[int, BreakInfo] | None = None
        for at, nid in enumerate(scope.node_ids):
            n = nodes[nid]
            if n.kind != "KERNEL":
                continue
            cur = (n.cube_num, n.vec_num)
            kind = None
            if n.sche_mode and merged != (0, 0) and (cur[0] < merged[0] or cur[1] < merged[1]):
                kind = "drop"
            elif sche and (cur[0] > merged[0] or cur[1] > merged[1]):
                kind = "rise"
            if kind is not None:
                detail = f"ScheMode core {kind} at node {nid}: merged({merged[0]},{merged[1]}) -> cur({cur[0]},{cur[1]})"
                group = tuple(sche + ([nid] if n.sche_mode else []))
                cut = (at, BreakInfo(BREAK_SYNCALL, nid, n.stream, detail, group))
                break
            merged = (max(merged[0], cur[0]), max(merged[1], cur[1]))
            if n.sche_mode:
                sche.append(nid)
        if cut is None:
            out.append(scope)
            continue
        first, second = _split(scope, cut[0], cut[1])
        out.append(first)
        work.insert(0, second)
    return out


def _deadlock(dag: OpDag, scopes: list[PlannedScope]) -> list[PlannedScope]:
    partner = wait_partners(dag)
    nodes = dag.by_id()
    out: list[PlannedScope] = []
    work = list(scopes)
    while work:
        scope = work.pop(0)
        where = {nid: i for i, nid in enumerate(scope.node_ids)}
        cut = None
        for at, nid in enumerate(scope.node_ids):
            p = partner.get(nid)
            if p is not None and p in where and where[p] > at:
                if at == 0:
                    raise PlanError(
                        f"deadlock at wait {nid}: its notify {p} follows it and the scope cannot be split"
                    )
                n = nodes[nid]
                cut = (at, BreakInfo(BREAK_DEADLOCK, nid, n.stream, f"wait {nid} precedes its notify {p}"))
                break
        if cut is None:
            out.append(scope)
            continue
        first, second = _split(scope, cut[0], cut[1])
        out.append(first)
        work.insert(0, second)
    return out


def _event_only(dag: OpDag, scopes: list[PlannedScope], unfused: dict[int, str]) -> list[PlannedScope]:
    nodes = dag.by_id()
    out: list[PlannedScope] = []
    for scope in scopes:
        per_stream: dict[int, list[int]] = {}
        for nid in scope.node_ids:
            per_stream.setdefault(nodes[nid].stream, []).append(nid)
        isolated = {
            nid
            for members in per_stream.values()
            if all(nodes[i].kind in EVENT_KINDS for i in members)
            for nid in members
        }
        for nid in isolated:
            unfused[nid] = REASON_ISOLATED_EVENT
        kept = tuple(nid for nid in scope.node_ids if nid not in isolated)
        if kept:
            out.append(replace(scope, node_ids=kept))
    return out


def _per_op(dag: OpDag, scopes: list[PlannedScope]) -> list[PlannedScope]:
    """``debug_per_op_max_core_num=1``: one kernel per scope; events travel with the next kernel."""
    nodes = dag.by_id()
    out: list[PlannedScope] = []
    for scope in scopes:
        rest = scope
        while True:
            kernels = [i for i, nid in enumerate(rest.node_ids) if nodes[nid].kind == "KERNEL"]
            if len(kernels) < 2:
                out.append(rest)
                break
            trigger = nodes[rest.node_ids[kernels[1]]]
            brk = BreakInfo(BREAK_PER_OP, trigger.node_id, trigger.stream, "Per-Op debug mode")
            first, rest = _split(rest, kernels[0] + 1, brk)
            out.append(first)
    return out


def plan_scopes(dag: OpDag, *, per_op_max_core: bool = False) -> Plan:
    """Predict the fused scopes of ``dag`` (see the module docstring for the rules)."""
    scopes, unfused = _initial(dag)
    if per_op_max_core:
        return Plan(dag, tuple(_per_op(dag, scopes)), unfused, (PASS_PER_OP,))
    scopes = _schemode(dag, scopes)
    scopes = _deadlock(dag, scopes)
    scopes = _event_only(dag, scopes, unfused)
    return Plan(dag, tuple(scopes), unfused, (PASS_INITIAL, PASS_SCHEMODE, PASS_DEADLOCK, PASS_EVENT_ONLY))
