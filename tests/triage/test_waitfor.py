"""X5 hang triage as a wait-for graph (triage.md §7 X5, §3.3 SYNC kinds, §3.6 bystanders): one built
scene per finding kind, expectations written by hand from the spec.

Each scene is a hang (no faulting child; the runtime's task timeout) whose exception cores sit in
SK-entry code (bystanders). Which core waits on what follows from the queues the scene lays out (the
scene builder puts FUNC tasks in their core type's queue, a SYNC right after its kernel, and every
EVENT_* task in every used queue, in task order = child order); the cited lines are found here by
plain text search in the written artifacts, never taken from the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from skdbg.scenebuilder.scene import ALL_FILES, Child, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis
from skdbg.triage.render import render_markdown, render_text
from skdbg.triage.report import write_report
from skdbg.triage.schema import validate_analysis
from skdbg.triage.waitfor import WaitFor, drawable, to_digraph


def _hang(
    tmp: Path, children: Sequence[Child], cores: Sequence[FaultCore], **kw: object
) -> tuple[Path, Analysis]:
    spec = SceneSpec(
        children=children,
        cores=cores,
        fault="sk",
        handler="full",
        failure_phase="hang",
        runtime_timeout=True,
        **kw,  # type: ignore[arg-type]
    )
    root = build_scene(spec, tmp / "scene").root
    return root, analyze_context(open_context(root))


def _stuck(core: int, core_type: str, state: str, k: int) -> FaultCore:
    """A bystander: PC in SK-entry code, trace state (state, k)."""
    return FaultCore(core, core_type, pc=("entry",), state=(state, k))


def _meta(root: Path, name: str) -> Path:
    (found,) = root.glob(f"sk_meta/*/model_*/{name}")
    return found


def _row(root: Path, queue: str, needle: str) -> str:
    """``file:line`` of the first sk_device_args.log row containing ``needle`` in queue ``AIC``/``AIV``."""
    path = _meta(root, "sk_device_args.log")
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if f"{queue} TaskQue:" in ln)
    i = next(i for i in range(start, len(lines)) if needle in lines[i])
    return f"{path.relative_to(root).as_posix()}:{i + 1}"


def _fused(root: Path, needle: str) -> str:
    path = _meta(root, "sk_fused_nodes.log")
    i = next(i for i, ln in enumerate(path.read_text().splitlines()) if needle in ln)
    return f"{path.relative_to(root).as_posix()}:{i + 1}"


def _edges(wf: WaitFor) -> set[tuple[str, str, str]]:
    return {(e.src, e.dst, e.kind) for e in wf.edges}


def _cited(a: Analysis, kind: str) -> set[str]:
    assert a.wait_for is not None
    f = a.wait_for.finding(kind)
    assert f is not None, [x.kind for x in a.wait_for.findings]
    return {e.where for e in f.evidence}


# ------------------------------------------------------------------------------------------ unmatched


def test_unmatched_wait_whose_notifier_exists_nowhere(tmp_path: Path) -> None:
    """Tasks 0 F(AIC), 1 F(AIV), 2 EVENT_WAIT eventId 5 (both queues), 3 F(AIV), 4 F(AIC). The AIC core
    finished task 0, the AIV core task 1: both stop at task 2, and no EventNotify of eventId 5 exists."""
    root, a = _hang(
        tmp_path,
        [
            Kernel("QuantMatmul_a1", "AIC_ONLY"),
            Kernel("Gelu_b2", "AIV_ONLY"),
            Event("EventWait", 5),
            Kernel("Add_c3", "AIV_ONLY"),
            Kernel("QuantMatmul_d4", "AIC_ONLY"),
        ],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "OP_FINISHED", 1)],
    )
    wf = a.wait_for
    assert wf is not None and wf.kind == "unmatched_wait"
    assert [f.kind for f in wf.findings] == ["unmatched_wait"]
    f = wf.findings[0]
    assert f.cores == (24, 25) and "exists nowhere" in f.detail and "eventId=5" in f.detail
    assert _edges(wf) == {
        ("core:24", "task:2", "blocked_at"),
        ("core:25", "task:2", "blocked_at"),
        ("task:2", "missing:eventId:5", "event"),
    }
    assert _cited(a, "unmatched_wait") >= {
        _row(root, "AIC", "type=EVENT_WAIT, idx=2,"),
        _row(root, "AIV", "type=EVENT_WAIT, idx=2,"),
        _fused(root, "EventWait(eventId:0x5"),
    }
    assert all(e.rule == "X5" for e in f.evidence)
    # the verdict stays what X5 says: no child blamed, D2 offered, no circular flag
    assert (a.verdict.confidence, a.verdict.rule, a.verdict.suspect) == ("low", "C6", None)
    assert "X5" in a.routes and "D2" in [s.id for s in a.next_steps]
    assert "circular_wait" not in a.verdict.flags


# ------------------------------------------------------------------------------------------ circular


def test_circular_wait_across_cores(tmp_path: Path) -> None:
    """Task 0 F(AIC) then SYNC 6 (wait AIV→AIC) in the AIC queue; task 1 F(AIV) then SYNC 5 (wait AIC→AIV)
    in the AIV queue. Neither queue has a SET, so the AIC core waits on the AIV core and back (§3.3)."""
    root, a = _hang(
        tmp_path,
        [
            Kernel("QuantMatmul_a1", "AIC_ONLY", sync_after=6),
            Kernel("Gelu_b2", "AIV_ONLY", sync_after=5),
            Kernel("Add_c3", "AIV_ONLY"),
        ],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "OP_FINISHED", 1)],
    )
    wf = a.wait_for
    assert wf is not None and wf.kind == "circular_wait"
    f = wf.findings[0]
    assert (f.across, f.cores) == ("cores", (24, 25))
    assert set(f.nodes) == {"core:24", "sync:aic:1", "core:25", "sync:aiv:1"}
    assert _edges(wf) >= {
        ("core:24", "sync:aic:1", "blocked_at"),
        ("sync:aic:1", "core:25", "sync"),
        ("core:25", "sync:aiv:1", "blocked_at"),
        ("sync:aiv:1", "core:24", "sync"),
    }
    assert _cited(a, "circular_wait") == {
        _row(root, "AIC", "type=SYNC, idx=0,"),
        _row(root, "AIV", "type=SYNC, idx=1,"),
    }
    assert "circular_wait" in a.verdict.flags
    assert all("circular_wait" in c.flags for c in a.fault.cores)
    assert (a.verdict.confidence, a.verdict.rule) == ("low", "C6") and "X5" in a.routes
    d2 = [s for s in a.next_steps if s.id == "D2"]
    assert d2 and all("wait-for graph: circular_wait across cores" in s.why for s in d2)


def test_circular_wait_across_streams(tmp_path: Path) -> None:
    """Stream 0: wait eventId 1 (task 1), then notify eventId 2 (task 2). Stream 1: wait eventId 2 (task 4),
    then notify eventId 1 (task 5). Each stream's notify is behind its own wait, which waits for the other
    stream's notify: 1 → 5 → 4 → 2 → 1. The AIC core finished task 0; the AIV core never ran a child."""
    root, a = _hang(
        tmp_path,
        [
            Kernel("QuantMatmul_a1", "AIC_ONLY"),
            Event("EventWait", 1),
            Event("EventNotify", 2),
            Kernel("Gelu_b2", "AIV_ONLY", stream=1),
            Event("EventWait", 2, stream=1),
            Event("EventNotify", 1, stream=1),
            Kernel("Add_c3", "AIV_ONLY"),
        ],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "SK_ENTRY_LAUNCHED", 0)],
    )
    wf = a.wait_for
    assert wf is not None and wf.kind == "circular_wait"
    assert [f.kind for f in wf.findings] == ["circular_wait"]  # not also "unmatched"
    f = wf.findings[0]
    assert f.across == "streams" and f.cores == (24, 25)
    assert list(f.nodes) == ["task:1", "task:5", "task:4", "task:2"]
    assert _edges(wf) >= {
        ("core:24", "task:1", "blocked_at"),
        ("core:25", "task:1", "blocked_at"),
        ("task:1", "task:5", "event"),
        ("task:5", "task:4", "stream_order"),
        ("task:4", "task:2", "event"),
        ("task:2", "task:1", "stream_order"),
    }
    assert _cited(a, "circular_wait") >= {
        _fused(root, "EventWait(eventId:0x1"),
        _fused(root, "EventNotify(eventId:0x1"),
        _fused(root, "EventWait(eventId:0x2"),
        _fused(root, "EventNotify(eventId:0x2"),
        _row(root, "AIC", "type=EVENT_WAIT, idx=1,"),
    }
    lanes = {n.id: n.lane for n in wf.nodes}
    assert (lanes["task:1"], lanes["task:5"]) == ("stream 0", "stream 1")
    assert "circular_wait" in a.verdict.flags


def test_stream_cycle_from_the_task_queue_json_alone(tmp_path: Path) -> None:
    """Without sk_device_args.log the tasks carry no nodeId; with no reordered wait (T6) the event node
    at fused position = task index still gives each event task its eventId and stream. Without the
    fused nodes too, only the queue is left: the notify is behind the wait in the cores' own queues."""
    kids = [
        Kernel("QuantMatmul_a1", "AIC_ONLY"),
        Event("EventWait", 1),
        Event("EventNotify", 2),
        Kernel("Gelu_b2", "AIV_ONLY", stream=1),
        Event("EventWait", 2, stream=1),
        Event("EventNotify", 1, stream=1),
    ]
    cores = [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "SK_ENTRY_LAUNCHED", 0)]
    _root, a = _hang(tmp_path / "a", kids, cores, files=ALL_FILES - {"device_args"})
    assert a.wait_for is not None
    assert [(f.kind, f.across) for f in a.wait_for.findings] == [("circular_wait", "streams")]
    _root, b = _hang(tmp_path / "b", kids, cores, files=ALL_FILES - {"device_args", "fused_nodes"})
    assert b.wait_for is not None
    assert [f.kind for f in b.wait_for.findings] == ["unmatched_wait"]
    assert "sits behind the waiter" in b.wait_for.findings[0].detail


# ------------------------------------------------------------------------------------------ SyncAll


def test_syncall_whose_child_core_count_does_not_match(tmp_path: Path) -> None:
    """Task 0 runs on 40 AIV blocks, then a SyncAll (SYNC 0) that waits for blk=48 cores. The counters
    (op_trace) show the exception core 25 and cores 26…64 — 40 cores — finished task 0."""
    reached = {c: ("OP_FINISHED", 0) for c in range(26, 65)}
    root, a = _hang(
        tmp_path,
        [
            Kernel("Gelu_a1", "AIV_ONLY", num_blocks=40, sync_after=0, sync_blocks=48),
            Kernel("Add_b2", "AIV_ONLY"),
        ],
        [_stuck(25, "AIV", "OP_FINISHED", 0)],
        op_trace=True,
        counters=reached,
    )
    wf = a.wait_for
    assert wf is not None and wf.kind == "syncall_mismatch"
    f = wf.findings[0]
    assert f.cores == (25,)
    assert "blk=48" in f.detail and "numBlocks=40" in f.detail and "40 core(s) reached it" in f.detail
    assert ("core:25", "sync:aiv:1", "blocked_at") in _edges(wf)
    assert any(e.src == "sync:aiv:1" and e.kind == "barrier" for e in wf.edges)
    cited = _cited(a, "syncall_mismatch")
    assert _row(root, "AIV", "type=SYNC, idx=0,") in cited
    assert _row(root, "AIV", "type=FUNC, idx=0,") in cited
    assert (a.verdict.confidence, a.verdict.suspect) == ("low", None) and "X5" in a.routes


def test_matching_syncall_is_no_finding(tmp_path: Path) -> None:
    """The same SyncAll with blk = the child's 48 blocks and no counters: nothing contradicts the count."""
    _root, a = _hang(
        tmp_path,
        [
            Kernel("Gelu_a1", "AIV_ONLY", num_blocks=48, sync_after=0, sync_blocks=48),
            Kernel("Add_b2", "AIV_ONLY"),
        ],
        [_stuck(25, "AIV", "OP_FINISHED", 0)],
    )
    assert a.wait_for is not None and a.wait_for.kind == "none" and a.wait_for.findings == ()


def test_no_blocking_edge_is_kind_none(tmp_path: Path) -> None:
    """A bystander whose SK entry finished (state 4) waits on nothing: a graph with its core, no edge."""
    _root, a = _hang(
        tmp_path,
        [Kernel("Gelu_a1", "AIV_ONLY"), Kernel("Add_b2", "AIV_ONLY")],
        [_stuck(25, "AIV", "SK_ENTRY_FINISHED", 0)],
    )
    wf = a.wait_for
    assert wf is not None and wf.kind == "none"
    assert [n.id for n in wf.nodes] == ["core:25"] and wf.edges == ()
    assert "(no blocking edge)" in render_text(a)


# ------------------------------------------------------------------------------------------ outputs


def test_json_schema_text_and_markdown_carry_the_graph(tmp_path: Path) -> None:
    root, a = _hang(
        tmp_path,
        [Kernel("QuantMatmul_a1", "AIC_ONLY", sync_after=6), Kernel("Gelu_b2", "AIV_ONLY", sync_after=5)],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "OP_FINISHED", 1)],
    )
    doc = a.to_json()
    validate_analysis(doc)
    wf = doc["wait_for"]
    assert wf["kind"] == "circular_wait" and wf["findings"][0]["across"] == "cores"
    assert {(e["src"], e["dst"]) for e in wf["edges"]} >= {
        ("sync:aic:1", "core:25"),
        ("sync:aiv:1", "core:24"),
    }
    sync_row = _row(root, "AIC", "type=SYNC, idx=0,")
    text = render_text(a)
    assert "wait-for: circular_wait" in text
    assert "core 24 (AIC) --blocked_at--> [AIC queue] task 0 SYNC wait AIV→AIC (AIC slot 1)" in text
    assert sync_row in text
    md = render_markdown(a)
    assert "## Wait-for graph: circular_wait" in md and f"`{sync_row}`" in md


def test_analysis_without_bystanders_has_no_wait_for(tmp_path: Path) -> None:
    """A fault inside a child (implicated core) is no hang: the JSON has no ``wait_for`` key."""
    spec = SceneSpec(children=[Kernel("Gelu_a1", "AIV_ONLY")], cores=[FaultCore(25, "AIV", pc=("child", 0))])
    a = analyze_context(open_context(build_scene(spec, tmp_path / "s").root))
    assert a.wait_for is None and "wait_for" not in a.to_json()


def test_drawable_graph_has_lanes_and_edge_kinds(tmp_path: Path) -> None:
    """The plain form a lane-graph renderer draws: nodes with lane/label/style, edges with kind/style."""
    _root, a = _hang(
        tmp_path,
        [Kernel("QuantMatmul_a1", "AIC_ONLY", sync_after=6), Kernel("Gelu_b2", "AIV_ONLY", sync_after=5)],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "OP_FINISHED", 1)],
    )
    assert a.wait_for is not None
    d = drawable(a.wait_for)
    lanes = {n["id"]: n["lane"] for n in d["nodes"]}
    assert lanes == {
        "core:24": "core 24 (AIC)",
        "sync:aic:1": "AIC queue",
        "core:25": "core 25 (AIV)",
        "sync:aiv:1": "AIV queue",
    }
    assert {n["style"] for n in d["nodes"]} == {"cycle"}  # every node is on the cycle
    assert sorted(e["kind"] for e in d["edges"]) == ["blocked_at", "blocked_at", "sync", "sync"]
    g = to_digraph(a.wait_for)
    assert (
        g.nodes["core:24"]["lane"] == "core 24 (AIC)" and g.edges["sync:aic:1", "core:25"]["kind"] == "sync"
    )


def test_report_failure_scene_draws_the_graph(tmp_path: Path) -> None:
    """``skdbg report``: FAILURE_SCENE.md item 3 carries the edge list and the cited finding; the
    report's analysis.json the same ``wait_for``."""
    root, a = _hang(
        tmp_path,
        [
            Kernel("QuantMatmul_a1", "AIC_ONLY"),
            Kernel("Gelu_b2", "AIV_ONLY"),
            Event("EventWait", 5),
            Kernel("Add_c3", "AIV_ONLY"),
        ],
        [_stuck(24, "AIC", "OP_FINISHED", 0), _stuck(25, "AIV", "OP_FINISHED", 1)],
    )
    out = tmp_path / "report"
    write_report(open_context(root), a, out)
    md = (out / "FAILURE_SCENE.md").read_text()
    item3 = md.split("## 3.")[1].split("## 4.")[0]
    assert "wait-for graph (unmatched_wait" in item3
    assert "core 24 (AIC) --blocked_at--> [stream 0] task 2 EVENT_WAIT eventId=5" in item3
    assert "--event--> [nowhere] EVENT_NOTIFY eventId=5" in item3
    assert f"`{_row(root, 'AIC', 'type=EVENT_WAIT, idx=2,')}`" in item3
    doc = json.loads((out / "analysis.json").read_text())
    assert doc["wait_for"]["kind"] == "unmatched_wait"


def test_unmatched_wait_whose_notifier_sits_behind_the_waiter(tmp_path: Path) -> None:
    """Task 1 waits for eventId 3 and its only notify is task 2, right behind it in the same queue and
    stream: the waiting core itself would have to pass the wait to notify it (§7 X5: unmatched)."""
    root, a = _hang(
        tmp_path,
        [
            Kernel("QuantMatmul_a1", "AIC_ONLY"),
            Event("EventWait", 3),
            Event("EventNotify", 3),
            Kernel("QuantMatmul_b2", "AIC_ONLY"),
        ],
        [_stuck(24, "AIC", "OP_FINISHED", 0)],
    )
    wf = a.wait_for
    assert wf is not None and [f.kind for f in wf.findings] == ["unmatched_wait"]
    f = wf.findings[0]
    assert f.cores == (24,) and "sits behind the waiter" in f.detail
    assert _edges(wf) >= {
        ("core:24", "task:1", "blocked_at"),
        ("task:1", "task:2", "event"),
        ("task:2", "core:24", "queue_order"),
    }
    assert _cited(a, "unmatched_wait") >= {
        _row(root, "AIC", "type=EVENT_WAIT, idx=1,"),
        _row(root, "AIC", "type=EVENT_NOTIFY, idx=2,"),
    }
    assert "circular_wait" not in a.verdict.flags
