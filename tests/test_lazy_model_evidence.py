"""sk_meta model directories are parsed file by file when asked for (parsers/evidence.py ModelEvidence).

What must hold: an analysis of a scene with several ranks' sk_meta parses the other ranks' super_kernel.log
(their exception blocks) and not their other files; the faulting rank's files are all parsed and their
unreadable-file gaps reported; and however lazily the files were parsed, the gaps are listed in the order a
full parse gives them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import skdbg.parsers.evidence as evidence_mod
import skdbg.parsers.filelog_outline as filelog_outline
from skdbg.cli import main
from skdbg.scene import evidence_for, open_scene

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream"
FAULT_PID = "48213"
MODEL = "model_48_1"
#: a deferred WAIT placement as the file logger writes it (upstream wording, artifacts §3.3)
DEFERRED_LINE = (
    "2026-06-10 14:01:02.500 [48213:140425347876672] [INFO] [sk_node.cpp:33] "
    "[ReorderWaitNodesForTaskBuild] task reorder: place deferred wait node, waitNodeId=101, streamIdx=0, "
    "originalIdx=1, finalIdx=3, targetKernelIdx=3\n"
)


def _two_ranks(tmp_path: Path) -> Path:
    """The bundled scene plus a second rank's sk_meta: the same model files without the exception block."""
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLE, scene)
    other = scene / "sk_meta" / "48214" / MODEL
    shutil.copytree(scene / "sk_meta" / FAULT_PID / MODEL, other)
    log = other / "super_kernel.log"
    kept = [ln for ln in log.read_text().splitlines(keepends=True) if "sk_dfx_exception_handler" not in ln]
    log.write_text("".join(kept))
    return scene


def _at_once(ask: Callable[[], object]) -> list[object]:
    """What two threads started together get from ``ask``."""
    import threading

    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(ask())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def _analyze(scene: Path) -> dict[str, object]:
    result = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_other_ranks_give_their_exception_blocks_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = _two_ranks(tmp_path)
    parsed: list[str] = []
    real = evidence_mod._part_parser

    def noting(name: str) -> object:
        parse = real(name)

        def run(path: Path) -> object:
            parsed.append(f"{path.parent.parent.name}/{path.name}")
            return parse(path)

        return run

    monkeypatch.setattr(evidence_mod, "_part_parser", noting)
    outlined: list[str] = []
    real_outline = filelog_outline.outline_file_log

    def outlining(path: Path, *, what: str) -> object:
        outlined.append(f"{path.parent.parent.name}/{path.name}")
        return real_outline(path, what=what)

    monkeypatch.setattr(filelog_outline, "outline_file_log", outlining)
    with_other = _analyze(scene)
    assert parsed and all(p.startswith(f"{FAULT_PID}/") for p in parsed), parsed
    # the faulting rank's files, all of them; of sk_node_detail.log only which processes wrote it
    assert f"{FAULT_PID}/sk_scope_split.log" in parsed and f"{FAULT_PID}/sk_node_detail.log" not in parsed
    assert outlined == [f"{FAULT_PID}/sk_node_detail.log"]
    # the verdict is the one of the scene without the other rank
    alone = _analyze(EXAMPLE)
    assert with_other["verdict"] == alone["verdict"] and with_other["proposal"] == alone["proposal"]


def test_the_faulting_ranks_unreadable_files_are_reported_the_others_are_not_read(tmp_path: Path) -> None:
    """Binary in the faulting rank, sk_node_detail.log (which no verdict reads) is still a warning. The
    other rank's binary file is never read by ``analyze`` (``inspect`` lists it)."""
    scene = _two_ranks(tmp_path)
    (scene / "sk_meta" / FAULT_PID / MODEL / "sk_node_detail.log").write_bytes(b"\x00" * 64)
    (scene / "sk_meta" / "48214" / MODEL / "sk_device_args.log").write_bytes(b"\x00" * 64)
    warnings = _analyze(scene)["warnings"]
    assert isinstance(warnings, list)
    assert any(f"{FAULT_PID}/{MODEL}/sk_node_detail.log" in w for w in warnings), warnings
    assert not any("48214" in w for w in warnings), warnings
    ev = evidence_for(open_scene(scene))
    ev.load_all()
    unreadable = [g.detail for g in ev.gaps if g.kind == "unreadable"]
    assert any(f"48214/{MODEL}/sk_device_args.log" in d for d in unreadable), unreadable


def test_gaps_keep_the_full_parse_order_whatever_was_parsed_first(tmp_path: Path) -> None:
    scene = _two_ranks(tmp_path)
    for pid in (FAULT_PID, "48214"):
        for name in ("sk_fused_nodes.log", "sk_scope_split.log"):
            (scene / "sk_meta" / pid / MODEL / name).write_bytes(b"\x00" * 64)
    opened = open_scene(scene)
    in_order = evidence_for(opened)
    in_order.load_all()
    backwards = evidence_for(opened)
    backwards.start_plog_scan()
    for me in reversed(backwards.model_evidence):  # the last model's last files first
        _ = me.scope_split
        _ = me.fused_nodes
    backwards.load_all()
    assert [(g.kind, g.detail) for g in backwards.gaps] == [(g.kind, g.detail) for g in in_order.gaps]
    order = [g.detail for g in in_order.gaps if g.kind == "unreadable"]
    expected = [
        f"{pid}/{MODEL}/{n}"
        for pid in (FAULT_PID, "48214")
        for n in ("sk_fused_nodes.log", "sk_scope_split.log")
    ]
    assert [next(e for e in expected if e in d) for d in order] == expected


def test_a_part_is_parsed_once_and_super_kernel_log_read_once_for_blocks_and_outline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exception blocks and the outline come from one read; the facts (no deferred wait in this
    log) from a second read, when asked; nothing is read again after."""
    import skdbg.parsers.sklog_runs as sklog  # where the evidence reader looks it up

    reads: list[str] = []
    real = sklog.read_super_kernel_log

    def counting(path: Path) -> object:
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(sklog, "read_super_kernel_log", counting)
    ev = evidence_for(open_scene(EXAMPLE))
    (me,) = ev.model_evidence
    assert me.loaded() == [] and reads == []  # nothing parsed until asked
    first = me.handler
    assert first is not None and me.sk_log_outline is not None and len(reads) == 1
    assert "super_kernel_log" not in me._parts and me.deferred_waits() == () and len(reads) == 1
    assert me.super_kernel_log is not None and len(reads) == 2
    assert me.handler is first and me.fused_nodes is me.fused_nodes
    me.load_all()
    assert len(reads) == 2


def test_load_models_parses_one_ranks_directories_whole_and_no_other(tmp_path: Path) -> None:
    """What ``analyze`` calls before it lists the warnings: the faulting rank's files all parsed, whatever
    triage asked of them; another rank's only as far as they were asked for (no pid: all)."""
    ev = evidence_for(open_scene(_two_ranks(tmp_path)))
    by_pid = {me.model.pid: me for me in ev.model_evidence}
    _ = by_pid[48214].handler
    ev.load_models(48213, facts=False)
    # what an analysis reads: neither super_kernel.log's facts nor sk_node_detail.log's nodes
    assert set(by_pid[48213]._parts) == set(evidence_mod.MODEL_PARTS) - {"super_kernel_log", "node_detail"}
    ev.load_models(48213)
    assert set(by_pid[48213]._parts) == set(evidence_mod.MODEL_PARTS)
    assert set(by_pid[48214]._parts) == {"handler", "sk_log_outline"}
    ev.load_models(None)
    # parsed whole: the nodes give the provenance, no outline is read
    assert set(by_pid[48214]._parts) == set(evidence_mod.MODEL_PARTS) - {"node_detail_outline"}


def test_two_threads_asking_at_once_parse_a_part_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    calls: list[str] = []
    real = evidence_mod._part_parser

    def slow(name: str) -> object:
        parse = real(name)

        def run(path: Path) -> object:
            calls.append(name)
            time.sleep(0.05)  # the second thread arrives while the first parses
            return parse(path)

        return run

    monkeypatch.setattr(evidence_mod, "_part_parser", slow)
    ev = evidence_for(open_scene(EXAMPLE))
    (me,) = ev.model_evidence
    got = _at_once(lambda: me.fused_nodes)
    assert calls == ["fused_nodes"] and got[0] is got[1] is not None


def test_after_an_analysis_another_rank_holds_its_exception_blocks_only(tmp_path: Path) -> None:
    """Every part counts, the kernel ELFs' table (``images``) included."""
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    ctx = open_context(_two_ranks(tmp_path))
    analyze_context(ctx)
    by_pid = {me.model.pid: me for me in ctx.evidence.model_evidence}
    # super_kernel.log's facts: no deferred wait in the file, so triage never asks for them; of
    # sk_node_detail.log triage asks which processes wrote it (its outline), never its nodes
    assert set(by_pid[48213]._parts) == set(evidence_mod.MODEL_PARTS) - {"super_kernel_log", "node_detail"}
    assert set(by_pid[48214]._parts) == {"handler", "sk_log_outline"}


def test_super_kernel_log_is_read_once_where_it_holds_exception_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked for its exception blocks first, the faulting rank's super_kernel.log gives its facts in the
    same read when it holds a deferred wait (triage asks for those next); another rank's gives its facts
    only when asked, from a second read; nothing twice."""
    import skdbg.parsers.sklog_runs as sklog  # where the evidence reader looks it up

    reads: list[str] = []
    real = sklog.read_super_kernel_log

    def counting(path: Path) -> object:
        reads.append(path.parent.parent.name)
        return real(path)

    monkeypatch.setattr(sklog, "read_super_kernel_log", counting)
    scene = _two_ranks(tmp_path)
    with (scene / "sk_meta" / FAULT_PID / MODEL / "super_kernel.log").open("a") as log:
        log.write(DEFERRED_LINE)
    ev = evidence_for(open_scene(scene))
    by_pid = {me.model.pid: me for me in ev.model_evidence}
    for me in ev.model_evidence:
        _ = me.handler
    assert sorted(reads) == [FAULT_PID, "48214"]
    assert set(by_pid[48213]._parts) == {"handler", "sk_log_outline", "super_kernel_log"}
    assert [w.get("waitNodeId") for w in by_pid[48213].deferred_waits()] == [101]
    assert sorted(reads) == [FAULT_PID, "48214"]
    handler = by_pid[48214].handler
    assert by_pid[48214].super_kernel_log is not None
    assert sorted(reads) == [FAULT_PID, "48214", "48214"] and by_pid[48214].handler is handler


def test_the_model_list_is_made_once_when_two_threads_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    class Slow(evidence_mod.ModelEvidence):
        __slots__ = ()

        def __init__(self, *args: object) -> None:
            time.sleep(0.05)  # the second thread arrives while the first makes the list
            super().__init__(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(evidence_mod, "ModelEvidence", Slow)
    ev = evidence_for(open_scene(EXAMPLE))
    got = _at_once(lambda: ev.model_evidence)
    assert got[0] is got[1]
    assert sum(g is evidence_mod._MODEL_GAPS for g in ev._gaps) == 1


@pytest.mark.parametrize(
    "variant",
    [
        {},  # the exception block in the model's super_kernel.log
        {"extra_models": ["48_2"]},  # a second model directory of the rank, without one
        {"handler": "none"},  # the block only in the plog
    ],
    ids=["block-in-log", "second-model", "block-in-plog-only"],
)
def test_a_reordered_sk_gets_the_analysis_of_a_full_parse_from_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variant: dict[str, object]
) -> None:
    """A scene whose super_kernel.log places deferred waits (T6): the analysis asks for them, gets the
    facts parsed in the read that gave the exception blocks and the outline (each file read once), and
    is the analysis of a full parse."""
    import skdbg.parsers.sklog_runs as sklog  # where the evidence reader looks it up
    from skdbg.parsers.evidence import ModelEvidence
    from skdbg.scenebuilder.scene import Event, FaultCore, Kernel, SceneSpec, build_scene
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context
    from skdbg.triage.jsontext import analysis_json_text

    children = [Kernel("A_1"), Event("EventWait", event_id=2), Kernel("B_2"), Kernel("C_3")]
    spec = SceneSpec(
        children=children,
        reorder={1: 3},
        dialect="D5",
        cores=[FaultCore(30, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        **variant,  # type: ignore[arg-type]
    )
    root = build_scene(spec, tmp_path / "scene").root
    reads: list[str] = []
    real = sklog.read_super_kernel_log

    def counting(path: Path) -> object:
        reads.append(path.parent.name)
        return real(path)

    monkeypatch.setattr(sklog, "read_super_kernel_log", counting)
    ctx = open_context(root)
    lazily = analysis_json_text(analyze_context(ctx))
    assert sorted(reads) == sorted(me.model.path.name for me in ctx.evidence.model_evidence)
    for me in ctx.evidence.model_evidence:
        # the waits were asked for: facts parsed (sk_node_detail.log: its outline, no node)
        assert set(me._parts) == set(evidence_mod.MODEL_PARTS) - {"node_detail"}
        assert [w.get("waitNodeId") for w in me.deferred_waits()]  # and found

    def whole(self: ModelEvidence) -> tuple[object, ...]:
        facts = self.super_kernel_log
        return () if facts is None else tuple(facts.deferred_waits)

    monkeypatch.setattr(ModelEvidence, "deferred_waits", whole)
    assert analysis_json_text(analyze_context(open_context(root))) == lazily
