"""G5 is checked after the stages that read the gate (``GateDraft``, issue 18): the analysis must be the
one those stages give on the real gate, whether every artifact can be read or one cannot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from triage_support import build_two_stream

from skdbg.parsers.common import ParseError
from skdbg.triage import engine
from skdbg.triage import gate as gate_module
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context, analyze_staged
from skdbg.triage.gate import GateDraft, draft_gate, run_gate
from skdbg.triage.jsontext import analysis_json_text
from skdbg.triage.localize import localize
from skdbg.triage.stages import Cancelled


def _analysis(root: Path, *, lose: str | None, bad_source: bool = False) -> str:
    """The analysis JSON of ``root`` with ``lose`` (a relative path) gone once the scene is inventoried
    (so it cannot be hashed: G5 fails on it), or the error the analysis ends with; ``bad_source``: the
    model source (run.json's marker file) is no Python."""
    if bad_source:
        marker_file = json.loads((root / "run.json").read_text(encoding="utf-8"))["candidate"]["marker_file"]
        (root / marker_file).write_text("def (:\n", encoding="utf-8")
    ctx = open_context(root)
    if lose is not None:
        (root / lose).unlink()
    try:
        return analysis_json_text(analyze_context(ctx))
    except ParseError as exc:  # the scene block cannot list an artifact without its digest
        return f"{type(exc).__name__}: {exc}".replace(str(root), "<root>")


def _strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine as it ran before the draft: G5 evaluated before the stages that read the gate."""
    monkeypatch.setattr(GateDraft, "assuming_readable", GateDraft.finish)


@pytest.mark.parametrize("bad_source", [False, True])
@pytest.mark.parametrize("lose", [None, "source_sites.json", "run.json"])
def test_the_analysis_is_the_strict_order_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lose: str | None, bad_source: bool
) -> None:
    """Byte for byte the text (or the error) of the engine that checks G5 first, on a scene whose
    artifacts all read and on copies where one vanished after the inventory; with a model source that
    is no Python too, which the proposal reads on a passing gate only: with an artifact gone, the
    strict order's failed gate never reads it, and its error is not the analysis's."""
    # both orders analyse a copy of one scene: the JSON lists each file's mtime to the second, which two
    # scenes built one after the other need not share (a second may turn between them)
    built = build_two_stream(tmp_path / "built", device=0).root
    draft_root = shutil.copytree(built, tmp_path / "draft", symlinks=True)
    strict_root = shutil.copytree(built, tmp_path / "strict", symlinks=True)
    ours = _analysis(draft_root, lose=lose, bad_source=bad_source)
    with monkeypatch.context() as m:
        _strict(m)
        strict = _analysis(strict_root, lose=lose, bad_source=bad_source)
    assert ours == strict
    assert ours.startswith("{") == (lose is None and not bad_source)
    if lose == "source_sites.json":  # the vanished file's error, not the source's
        assert "source_sites.json" in ours and "model source" not in ours


def test_a_lost_artifact_fails_the_finished_gate_only(tmp_path: Path) -> None:
    """The draft's passing gate is what G5 gives when every artifact reads; with one gone, the finished
    gate fails G5 (and so the gate), naming the file: the engine then runs the stages again on it."""
    root = build_two_stream(tmp_path, device=0).root
    ctx = open_context(root)
    loc = localize(ctx)
    (root / "source_sites.json").unlink()
    draft = draft_gate(ctx, loc)
    assumed, finished = draft.assuming_readable(), draft.finish()
    assert "G5" not in assumed.failed and "G5" in finished.failed
    assert not finished.passed and finished != assumed
    assert any("source_sites.json" in g.detail for g in finished.gaps if g.id == "G5")
    assert finished == run_gate(ctx, loc)


def test_assuming_readable_reads_no_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The draft's passing gate asks no digest (it is what lets the stages run while the digests are
    computed); :meth:`GateDraft.finish` asks every artifact's."""
    root = build_two_stream(tmp_path, device=0).root
    ctx = open_context(root)
    loc = localize(ctx)
    asked: list[str] = []
    real = gate_module._g5
    monkeypatch.setattr(gate_module, "_g5", lambda c, g: (asked.append("G5"), real(c, g))[1])
    draft = draft_gate(ctx, loc)
    assumed = draft.assuming_readable()
    assert asked == []
    assert dict(assumed.checks)["G5"] == "passed"
    assert draft.finish() == assumed == run_gate(ctx, loc)
    assert asked == ["G5", "G5"]


def _staged(root: Path, on_stage: Any, cancelled: Any) -> None:
    analyze_staged(open_context(root), on_stage=on_stage, cancelled=cancelled)


def test_a_cancel_during_the_g5_wait_is_honoured(tmp_path: Path) -> None:
    """The token turns true once the last stage was announced (while G5 reads the digests): the
    analysis stops there, naming the last stage, as a cancel between two stages does."""
    seen: list[str] = []
    with pytest.raises(Cancelled, match="cancelled after route"):
        _staged(
            build_two_stream(tmp_path, device=0).root,
            lambda name, *_: seen.append(name),
            lambda: bool(seen) and seen[-1] == "route",
        )
    assert seen[-1] == "route"


def test_a_cancel_between_the_stages_after_the_gate_is_raised_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled before the proposal: it is never run, and the cancel is not held until G5 is known."""
    proposed: list[int] = []
    monkeypatch.setattr(engine, "propose", lambda *a: proposed.append(1))
    seen: list[str] = []
    with pytest.raises(Cancelled, match="cancelled after grade"):
        _staged(
            build_two_stream(tmp_path, device=0).root,
            lambda name, *_: seen.append(name),
            lambda: bool(seen) and seen[-1] == "grade",
        )
    assert proposed == []
    assert seen[-1] == "grade"


def test_a_callback_error_is_raised_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's stage callback fails: its error comes out at once, not held like a stage's."""
    finished: list[int] = []
    real_finish = GateDraft.finish
    monkeypatch.setattr(GateDraft, "finish", lambda self: (finished.append(1), real_finish(self))[1])

    def callback(name: str, *_: object) -> None:
        if name == "propose":
            raise RuntimeError("the progress line broke")

    with pytest.raises(RuntimeError, match="the progress line broke"):
        _staged(build_two_stream(tmp_path, device=0).root, callback, None)
    assert finished == []
