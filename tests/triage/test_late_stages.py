"""The work of the late stages done before localisation (``engine.prepare_late_stages``): made once,
before localisation waits for the plogs, and the analysis is the one made without it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from triage_support import build_two_stream

import skdbg.parsers.markers as markers
import skdbg.triage.engine as engine
from skdbg.parsers.common import ParseError
from skdbg.triage.context import TriageContext, open_context
from skdbg.triage.jsontext import analysis_json_text

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def _analysis(root: Path) -> str:
    return analysis_json_text(engine.analyze(root))


def _without_prepare(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        m.setattr(engine, "prepare_late_stages", lambda ctx: None)
        markers._SCANS.clear()
        return _analysis(root)


def _scans_and_localisation(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The events of the next analysis, in order: ``"scan"`` for each marker scan made, ``"localize"``
    when localisation starts (the scan cache emptied first)."""
    events: list[str] = []
    real_init = markers.MarkerScan.__init__
    real_localize = engine.localize

    def counted_init(self: markers.MarkerScan, *args: object, **kwargs: object) -> None:
        events.append("scan")
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(markers.MarkerScan, "__init__", counted_init)
    monkeypatch.setattr(engine, "localize", lambda ctx: events.append("localize") or real_localize(ctx))
    markers._SCANS.clear()
    return events


def test_the_marker_scan_is_made_once_before_localisation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = build_two_stream(tmp_path, device=0)
    events = _scans_and_localisation(monkeypatch)
    analysis = engine.analyze_context(open_context(b.root))
    assert events == ["scan", "localize"]  # the gate (F8) and the proposal read the same scan
    assert analysis.proposal is not None and analysis.proposal.status == "proposed"


@pytest.mark.parametrize("reorder", [None, "auto"])
def test_the_analysis_is_the_one_made_without_the_early_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reorder: str | None
) -> None:
    """With a super_kernel.log that may hold deferred waits too (``reorder``: the early SK reads its facts
    where the analysis parses them later)."""
    b = build_two_stream(tmp_path, device=0, **({} if reorder is None else {"reorder": reorder}))
    markers._SCANS.clear()
    early = _analysis(b.root)
    assert early == _without_prepare(b.root, monkeypatch)
    assert '"status": "proposed"' in early


def test_a_model_source_that_is_not_python_fails_as_it_did_without_the_early_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early scan keeps its error to itself: the stage that reads the source meets it (here the
    proposal, which needs the source: the CLI's exit 3), with the same message."""
    b = build_two_stream(tmp_path, device=0)
    model = b.root / "src" / "model.py"
    model.write_text(model.read_text() + "\ndef broken(:\n")
    markers._SCANS.clear()
    with pytest.raises(ParseError) as early:
        engine.analyze(b.root)
    with monkeypatch.context() as m, pytest.raises(ParseError) as late:
        m.setattr(engine, "prepare_late_stages", lambda ctx: None)
        engine.analyze(b.root)
    assert str(early.value) == str(late.value)
    assert re.fullmatch(
        r"src/model\.py:\d+: expected a Python model source, got 'invalid syntax'", str(early.value)
    )


def test_no_early_scan_when_f8_will_not_read_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json names no scopes: F8 does not read the model source, and neither does the early step
    (only the proposal scans it, after localisation)."""
    b = build_two_stream(tmp_path, device=0, run={"candidate": {"scope_names": []}})
    events = _scans_and_localisation(monkeypatch)
    engine.analyze_context(open_context(b.root))
    assert events[0] == "localize"


def test_whatever_the_early_scan_raises_is_left_for_f8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step itself never fails (F8 scans again and meets the error); nothing is kept of the scan."""
    b = build_two_stream(tmp_path, device=0)
    ctx = open_context(b.root)

    def failing_init(self: markers.MarkerScan, *args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(markers.MarkerScan, "__init__", failing_init)
    markers._SCANS.clear()
    engine.prepare_late_stages(ctx)
    assert markers._SCANS == {}


def _sk_meta_read(tmp_path: Path) -> TriageContext:
    """The two-stream scene's context with its sk_meta read, as the analysis has it before its early step."""
    ctx = open_context(build_two_stream(tmp_path, device=0).root)
    engine.read_sk_meta(ctx)
    return ctx


def test_the_single_sk_and_its_fragment_inputs_are_made_once_before_localisation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rank with one SK: the SK, its nodes and the fragment inputs the proposal derives from it are made
    before localisation waits for the plogs, once; every later stage gets the same objects, and the
    early step parses no file and leaves no gap that the analysis would not."""
    import skdbg.triage.fragment as fragment
    from skdbg.triage.skview import instances_of

    made: list[str] = []
    real_groups, real_nodes = fragment._barrier_groups_of, fragment._fnodes_of
    monkeypatch.setattr(fragment, "_barrier_groups_of", lambda sk: made.append("groups") or real_groups(sk))
    monkeypatch.setattr(fragment, "_fnodes_of", lambda sk: made.append("nodes") or real_nodes(sk))
    ctx = _sk_meta_read(tmp_path)
    parsed = {id(me): set(me._parts) for me in ctx.evidence.model_evidence}
    gaps, errors = list(ctx.evidence.gaps), {k: list(v) for k, v in ctx.evidence.errors.items()}
    engine.prepare_late_stages(ctx)
    assert sorted(made) == ["groups", "nodes"]
    assert {id(me): set(me._parts) for me in ctx.evidence.model_evidence} == parsed
    assert list(ctx.evidence.gaps) == gaps
    assert {k: list(v) for k, v in ctx.evidence.errors.items()} == errors
    (me,) = ctx.evidence.model_evidence
    (sk,) = instances_of(me)
    assert instances_of(me) == [sk] and instances_of(me)[0] is sk  # the same SK, a list of its own
    assert instances_of(me) is not instances_of(me)
    analysis = engine.analyze_context(ctx)
    assert sorted(made) == ["groups", "nodes"]  # the proposal took them from the SK
    assert analysis.proposal is not None and analysis.proposal.status == "proposed"


def test_no_sk_is_made_early_when_the_rank_holds_several(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several SKs: localisation names the one at fault, and only that one's fragment inputs are made."""
    ctx = _sk_meta_read(tmp_path)
    (me,) = ctx.evidence.model_evidence
    (sk,) = engine.instances_of(me)
    made: list[object] = []
    monkeypatch.setattr(engine, "instances_of", lambda m: [sk, sk])
    monkeypatch.setattr(engine, "fnodes_of", lambda s: made.append(s))
    monkeypatch.setattr(engine, "barrier_groups_of", lambda s: made.append(s))
    engine.prepare_late_stages(ctx)
    assert made == []


def test_what_the_early_sk_raises_is_left_to_the_stage_that_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step never fails, and keeps nothing of a failed derivation: the stage asks again."""
    import skdbg.triage.fragment as fragment
    from skdbg.triage.skview import instances_of

    ctx = _sk_meta_read(tmp_path)

    def failing(sk: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(fragment, "_barrier_groups_of", failing)
    engine.prepare_late_stages(ctx)
    (me,) = ctx.evidence.model_evidence
    assert "barrier_groups" not in instances_of(me)[0].derived


def test_the_sks_go_with_their_directory(tmp_path: Path) -> None:
    """The SKs are kept on their directory's evidence, not in a table of the module: once the context is
    dropped, the directory and its SKs are garbage (collected with the directory's own reference cycles:
    a scan of many scenes in one process keeps none of them)."""
    import gc

    from skdbg.parsers.evidence import ModelEvidence
    from skdbg.triage.skview import instances_of

    def alive() -> int:
        gc.collect()
        return sum(type(o) is ModelEvidence for o in gc.get_objects())

    before = alive()
    ctx = open_context(build_two_stream(tmp_path, device=0).root)
    engine.read_sk_meta(ctx)
    engine.prepare_late_stages(ctx)
    (me,) = ctx.evidence.model_evidence
    assert me.derived["sk_instances"] == instances_of(me)
    assert alive() == before + 1
    del ctx, me
    assert alive() == before


def _count_sites_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One ``"sites"`` per parse of a source_sites.json from now on."""
    import skdbg.parsers.run_identity as run_identity

    parsed: list[str] = []
    real = run_identity.parse_source_sites
    monkeypatch.setattr(run_identity, "parse_source_sites", lambda p: parsed.append("sites") or real(p))
    return parsed


def test_source_sites_are_parsed_once_before_localisation_and_taken_by_the_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early step parses source_sites.json and reports nothing of it; the proposal takes that parse
    (no second one: the analysis's own early step finds it parsed already), and only then do the file's
    gaps count, as they did when it was parsed then."""
    parsed = _count_sites_parses(monkeypatch)
    b = build_two_stream(tmp_path, device=0)
    sites = b.root / "source_sites.json"
    sites.write_text(sites.read_text().replace("{", '{"not-a-node": 3, ', 1))  # one bad entry: a gap
    ctx = open_context(b.root)
    engine.read_sk_meta(ctx)
    gaps = list(ctx.evidence.gaps)
    engine.prepare_late_stages(ctx)
    assert parsed == ["sites"]
    assert list(ctx.evidence.gaps) == gaps  # nothing reported early
    assert "source_sites" not in vars(ctx.evidence)
    analysis = engine.analyze_context(ctx)
    assert parsed == ["sites"]  # the proposal took the early parse
    assert analysis.proposal is not None and analysis.proposal.status == "proposed"
    assert [g for g in ctx.evidence.gaps if "not-a-node" in g.detail]  # counted once taken
    assert analysis_json_text(analysis) == _without_prepare(b.root, monkeypatch)


def test_source_sites_that_fail_early_are_read_again_where_the_proposal_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source_sites.json that is no JSON: the early parse's error is dropped, the proposal parses the
    file again and meets it, once, and the analysis is the one made without the early step."""
    parsed = _count_sites_parses(monkeypatch)
    b = build_two_stream(tmp_path, device=0)
    (b.root / "source_sites.json").write_text('{"120": 41,')
    ctx = open_context(b.root)
    at_localisation: list[object] = []
    real_localize = engine.localize

    def localize(c: TriageContext) -> object:
        at_localisation.extend([list(parsed), "source_sites" in c.evidence.errors])
        return real_localize(c)

    monkeypatch.setattr(engine, "localize", localize)
    early = analysis_json_text(engine.analyze_context(ctx))
    assert at_localisation == [["sites"], False]  # parsed early, nothing reported
    assert parsed == ["sites", "sites"]  # the failed parse was not kept: the proposal parsed again
    assert len(ctx.evidence.errors["source_sites"]) == 1
    monkeypatch.setattr(engine, "localize", real_localize)
    assert early == _without_prepare(b.root, monkeypatch)


def test_source_sites_no_proposal_reads_leave_the_analysis_and_the_cache_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verdict that makes no proposal (the bundled entry-only-low scene: confidence low) never asks
    for source_sites.json: parsed early, its error is reported nowhere, and a read of it that fails
    early is not counted as a failed read (the result cache would keep no analysis built after one)."""
    import shutil

    import skdbg.parsers.run_identity as run_identity
    from skdbg.parsers.fsguard import read_error

    root = tmp_path / "scene"
    shutil.copytree(SCENES / "entry-only-low", root)
    assert '"source_sites": "source_sites.json"' in (root / "run.json").read_text()
    (root / "source_sites.json").write_text('{"120": 41,')
    parsed = _count_sites_parses(monkeypatch)
    ctx = open_context(root)
    early = analysis_json_text(engine.analyze_context(ctx))
    assert parsed == ["sites"]  # the early parse only: no proposal asked
    assert "source_sites" not in ctx.evidence.errors and not ctx.read_failed
    assert early == _without_prepare(root, monkeypatch)
    assert '"status": "none"' in early

    def unreadable(path: object) -> object:
        raise read_error(str(path), "source_sites.json", OSError(5, "Input/output error"))

    monkeypatch.setattr(run_identity, "parse_source_sites", unreadable)
    ctx = open_context(root)
    engine.analyze_context(ctx)
    assert not ctx.read_failed


def test_the_model_source_and_its_line_index_are_made_before_localisation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where F8 reads the model source, the proposal's model of it (and its line index) is made early and
    taken by the proposal; where F8 does not, only the proposal reads it."""
    import skdbg.triage.markers as triage_markers

    made: list[str] = []
    real = triage_markers.ModelSource.__init__

    def counted(self: triage_markers.ModelSource, *args: object, **kwargs: object) -> None:
        made.append("source")
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(triage_markers.ModelSource, "__init__", counted)
    for case, scopes, early in (("f8-reads", None, ["source"]), ("automatic", [], [])):
        made.clear()
        monkeypatch.setattr(triage_markers, "_SOURCES", {})
        run = {} if scopes is None else {"run": {"candidate": {"scope_names": scopes}}}
        b = build_two_stream(tmp_path / case, device=0, **run)
        ctx = open_context(b.root)
        engine.read_sk_meta(ctx)
        engine.prepare_late_stages(ctx)
        assert made == early
        if early:
            (src,) = triage_markers._SOURCES.values()
            assert "_innermost" in vars(src)
        analysis = engine.analyze_context(ctx)
        assert made == ["source"]  # made once, early or by the proposal
        assert analysis.proposal is not None and analysis.proposal.status == "proposed"
