"""Pilot tests of the Candidate screen (issue 16 item 2): what `skdbg codegen candidate` makes of the
proposal in hand, the CLI's error when it cannot, and writing the folder (refusal, confirm = --force).

Expectations are written from the scenes and the spec (triage.md §4, codegen.md): high-single-stream
excludes SwiGlu (nodeId 102) from the SK 100–103 with an explicit None pair, so the SK splits into
[100, 101] and [103]; event-bound-split's event pair 102/103 sits on stream 1 next to stream 0.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, Static
from tui_support import SIZE, scene, settle

from skdbg.cli import main
from skdbg.tui.app import SkdbgApp
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.candidate import CandidateScreen, ReplaceScreen
from skdbg.tui.screens.session_ref import SessionRef


def plain(app: SkdbgApp, selector: str) -> str:
    """The text a Static shows (markup or a Rich renderable), without styles."""
    widget = app.screen.query_one(selector, Static)
    content = widget.content
    if isinstance(content, str):
        return str(widget.render())
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(content)
    return console.export_text()


async def open_candidate(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("7")
    await settle(pilot)


def titles(app: SkdbgApp) -> list[str]:
    return [n.title or "" for n in app._notifications]


def messages(app: SkdbgApp) -> list[str]:
    return [n.message for n in app._notifications]


def cli_candidate(tmp: Path, scene_dir: Path, proposal: dict[str, object], out: Path) -> tuple[int, str]:
    """Run `skdbg codegen candidate` on the same proposal (as the CLI reads it, from a file): exit, stderr."""
    prop = tmp / "proposal.json"
    prop.write_text(json.dumps({"proposal": proposal}), encoding="utf-8")
    res = CliRunner().invoke(
        main, ["codegen", "candidate", str(scene_dir), "--proposal", str(prop), "-o", str(out)]
    )
    return res.exit_code, res.stderr


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------------------------------ what it shows


async def test_shows_sks_patch_env_and_plan_of_the_current_proposal_not_accepted_yet() -> None:
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        assert isinstance(app.screen, CandidateScreen)
        status = plain(app, "#candidate-status")
        assert "current proposal — not accepted yet" in status
        assert "explicit_none_exclusion" in status and "excludes 102" in status
        assert not app.screen.query_one("#candidate-error").display
        sks = plain(app, "#candidate-sks")
        before, after = sks.split("After —")
        # before: the one SK of the failed run, SwiGlu cut out
        assert "✂ 102 SwiGlu_41d9e0 [AIV_ONLY]" in before
        assert "100 RmsNorm_5c1d07aa" in before and "103 Cast_9f3e21" in before
        # after: two SKs, [100, 101] then [103]; SwiGlu in neither
        assert "2 predicted SK(s)" in after
        assert after.index("100 RmsNorm_5c1d07aa") < after.index("101 QuantBatchMatmulV3_8ab2c4f1")
        assert after.index("#1 decoder.layer.0.mlp") < after.index("103 Cast_9f3e21")
        assert "SwiGlu" not in after.split("unfused after the edit")[0]
        assert "102 (IN_UNFUSIBLE_SCOPE)" in after
        assert "prediction agrees with the proposal" in after
        patch = plain(app, "#candidate-patch")
        assert "+++ b/src/model.py" in patch
        assert "+        torch.npu.super_kernel_scope_begin(None)" in patch
        assert "+        torch.npu.super_kernel_scope_end(None)" in patch
        env = plain(app, "#candidate-env")
        assert "ASCEND_OP_COMPILE_SAVE_KERNEL_META=1" in env
        assert 'backend="npugraph_ex"' in env and "super_kernel_debug_options={}" in env
        plan = plain(app, "#candidate-plan")
        for gate in ("V1", "V2", "V3", "V4", "V5"):
            assert f"│ {gate}" in plan
        assert "IN_UNFUSIBLE_SCOPE" in plan  # V3 expects the reason of the explicit None pair


async def test_accepted_proposal_is_labelled_and_edits_rebuild_the_candidate(tmp_path: Path) -> None:
    app = SkdbgApp(scene("high-single-stream"), session=SessionRef(tmp_path / "ledger"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5", "a")
        await settle(pilot)
        await pilot.press("enter")  # Accept records it in a new ledger session
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        status = plain(app, "#candidate-status")
        assert "accepted proposal" in status and "not accepted" not in status
        # a new mechanism on the Proposal screen is a new candidate (and no longer accepted)
        await pilot.press("5", "m")
        await settle(pilot)
        assert app.state is not None and app.state.proposal.mechanism == "close_reopen_exclusion"
        await pilot.press("7")
        await settle(pilot)
        assert "not accepted yet" in plain(app, "#candidate-status")
        assert "close_reopen_exclusion" in plain(app, "#candidate-status")
        assert "NOT_IN_SCOPE" in plain(app, "#candidate-sks")  # close/reopen leaves 102 outside any scope


async def test_streams_events_and_dropped_debug_options_on_an_event_scene() -> None:
    app = SkdbgApp(scene("event-bound-split"))
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        sks = plain(app, "#candidate-sks")
        before, after = sks.split("After —")
        assert "0, 1" in before  # the failed SK spans streams 0 and 1
        assert "✂ event 1: 102→103 (in this SK)" in before  # the event pair is cut out with the fragment
        assert before.count("event 1:") == 1  # both ends of the pair are in the SK: listed once
        assert "#0 decoder.layer.0.mlp.pre" in after and "#1 decoder.layer.0.mlp.post" in after
        assert "event 1" not in after  # the event pair left with the cut
        env = plain(app, "#candidate-env")
        # the failed run traced op execution (a diagnostic); the candidate is a clean round without it
        assert re.search(r'dropped +\{"debug_op_exec_trace": 1\} \(debug options of the failed run', env)
        assert re.search(r"option +super_kernel_debug_options=\{\}", env)
        assert "python3 infer.py --config configs/scene.yaml" in env
        assert '"prompt_id": "p-0001"' in env and '"step": 7' in env


# ------------------------------------------------------------------------------------------ errors


async def test_no_proposal_shows_the_cli_error_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = SkdbgApp(scene("non-sk-fault"))
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        assert app.state is not None
        error = plain(app, "#candidate-error")
        assert app.screen.query_one("#candidate-error").display
        assert not app.screen.query_one("#candidate-scroll").display
        code, out = cli_candidate(
            tmp_path, scene("non-sk-fault"), app.state.proposal.to_json(), tmp_path / "cli"
        )
        assert code == 3
        cli_message = out.split("skdbg: error: ", 1)[1].strip()
        # the same words; the CLI names its --proposal file where the TUI names the proposal in hand
        assert (
            cli_message.split(": ", 1)[1]
            == "proposal status 'none'; only a \"proposed\" exclusion can be regenerated"
        )
        assert error == "cannot build the candidate: current proposal: " + cli_message.split(": ", 1)[1]
        await pilot.press("w")
        await settle(pilot)
        assert not isinstance(app.screen, PromptScreen)
        assert "no candidate" in titles(app)
        assert list(tmp_path.iterdir()) == [tmp_path / "proposal.json"]


async def test_missing_marker_source_says_why_and_s_sets_the_source_root(tmp_path: Path) -> None:
    copy = tmp_path / "scene"
    shutil.copytree(scene("high-single-stream"), copy)
    app = SkdbgApp(copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (copy / "src" / "model.py").unlink()  # the model source lives elsewhere (a checkout, not the scene)
        await pilot.press("7")
        await settle(pilot)
        error = plain(app, "#candidate-error")
        assert error.startswith("cannot build the candidate: cannot read the marker file (")
        assert "src/model.py" in error and "; pass --source-root" in error
        assert "s sets the source root" in error
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        field = app.screen.query_one(Input)
        assert field.value == str(copy)
        field.value = str(scene("high-single-stream"))
        await pilot.press("enter")
        await settle(pilot)
        assert not app.screen.query_one("#candidate-error").display
        assert "+        torch.npu.super_kernel_scope_begin(None)" in plain(app, "#candidate-patch")
        assert str(scene("high-single-stream")) in plain(app, "#candidate-status")


# ------------------------------------------------------------------------------------------ writing


async def test_w_writes_the_same_folder_as_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        default = tmp_path / "skdbg-candidate-high-single-stream"
        assert app.screen.query_one(Input).value == str(default)
        await pilot.press("enter")
        await settle(pilot)
        assert f"candidate written: {default}" in messages(app)
        assert f"written: {default}" in plain(app, "#candidate-status")
        assert app.state is not None
        code, _ = cli_candidate(
            tmp_path, scene("high-single-stream"), app.state.proposal.to_json(), tmp_path / "cli"
        )
    assert code == 0
    written = tree(default)
    assert sorted(written) == [
        "candidate.json",
        "marker.patch",
        "sk/sk_0_decoder.layer.0.mlp.json",
        "sk/sk_1_decoder.layer.0.mlp.json",
    ]
    assert written == tree(tmp_path / "cli")
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]  # atomic: no staging left behind


@pytest.mark.parametrize("keep_key", ["n", "escape"])
async def test_non_empty_folder_is_refused_then_replaced_only_when_confirmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_key: str
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "skdbg-candidate-high-single-stream"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    app = SkdbgApp(scene("high-single-stream"))
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReplaceScreen)
        why = str(app.screen.query_one("#replace-why", Static).render())
        assert why == f"candidate folder already exists: {out} is not empty (use --force to replace it)"
        await pilot.press(keep_key)
        await settle(pilot)
        assert isinstance(app.screen, CandidateScreen)
        assert tree(out) == {"notes.txt": "mine\n"}
        assert f"kept {out}: nothing written" in messages(app)
        # again, and this time confirm: the CLI's --force replaces the folder as a whole
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReplaceScreen)
        await pilot.press("y")
        await settle(pilot)
        assert f"candidate written: {out}" in messages(app)
    assert "notes.txt" not in tree(out)
    assert "+        torch.npu.super_kernel_scope_begin(None)" in (out / "marker.patch").read_text(
        encoding="utf-8"
    )


async def test_a_file_or_a_folder_holding_the_scene_is_refused_without_offering_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    copy = tmp_path / "scenes" / "s1"
    shutil.copytree(scene("high-single-stream"), copy)
    blocker = work / "a-file"
    blocker.write_text("x", encoding="utf-8")
    app = SkdbgApp(copy)
    async with app.run_test(size=SIZE) as pilot:
        await open_candidate(pilot)
        for target, words in (
            (blocker, f"candidate folder {blocker} exists and is not a directory"),
            (tmp_path / "scenes", f"candidate folder {tmp_path / 'scenes'} is or holds {copy}"),
        ):
            await pilot.press("w")
            await settle(pilot)
            app.screen.query_one(Input).value = str(target)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, CandidateScreen), (
                "no Replace question: --force would be refused too"
            )
            assert any(m.startswith(words) for m in messages(app)), messages(app)
    assert blocker.read_text(encoding="utf-8") == "x"
    assert (copy / "run.json").is_file()


# ------------------------------------------------------------------------------------------ the shared headless call


def _proposal_of(scene_dir: Path) -> dict[str, object]:
    from skdbg.triage.context import open_context
    from skdbg.triage.engine import analyze_context

    proposal: dict[str, object] = analyze_context(open_context(scene_dir)).to_json()["proposal"]
    return proposal


def test_build_candidate_describes_the_sk_before_and_the_sks_after() -> None:
    """The screen's before/after come from build_candidate itself: the failed SK 100–103, then the
    two SKs the explicit None pair around 102 leaves; the "after" descriptions are the sk/*.json files."""
    from skdbg.codegen.fusion.candidate import build_candidate

    where = scene("high-single-stream")
    cand = build_candidate(where, _proposal_of(where))
    assert [d["kernels"] for d in cand.baseline] == [[100, 101, 102, 103]]
    assert [d["kernels"] for d in cand.predicted] == [[100, 101], [103]]
    files = [s["file"] for s in cand.manifest["prediction"]["candidate_sks"]]
    assert [json.loads(cand.files[f]) for f in files] == list(cand.predicted)
    assert cand.inputs == (where,)


def test_write_candidate_protects_the_scene_it_was_built_from(tmp_path: Path) -> None:
    from skdbg.atomic import OutputNotEmptyError
    from skdbg.codegen.fusion.candidate import build_candidate, write_candidate

    copy = tmp_path / "scenes" / "s1"
    shutil.copytree(scene("high-single-stream"), copy)
    cand = build_candidate(copy, _proposal_of(copy))
    with pytest.raises(OutputNotEmptyError, match="is or holds"):
        write_candidate(cand, tmp_path / "scenes", force=True)
    assert (copy / "run.json").is_file()


def test_cli_still_refuses_a_missing_scene_with_exit_3(tmp_path: Path) -> None:
    code, err = cli_candidate(
        tmp_path, tmp_path / "absent", _proposal_of(scene("high-single-stream")), tmp_path / "out"
    )
    assert code == 3
    assert err.strip() == f"skdbg: error: {tmp_path / 'absent'}: not a scene directory"
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ palette, copy, --screen


async def test_start_on_candidate_palette_commands_and_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from skdbg.tui.commands import SkdbgCommands

    app = SkdbgApp(scene("high-single-stream"), start_mode="candidate")  # skdbg tui SCENE --screen candidate
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_text", copied.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CandidateScreen)
        commands = {c[0]: c[1] for c in SkdbgCommands(app.screen).commands()}
        assert "Candidate: source root" in commands
        commands["Candidate: write folder"]()
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, CandidateScreen)
        await pilot.press("c")  # copies the marker patch
        await settle(pilot)
        assert len(copied) == 1 and copied[0].startswith("--- a/src/model.py\n+++ b/src/model.py\n@@ ")
        await pilot.press("1")
        await settle(pilot)
        names = [c[0] for c in SkdbgCommands(app.screen).commands()]
        assert "Go to candidate" in names and "Candidate: write folder" not in names
