"""One marker model on scenes: gate F8, proposal and codegen candidate (triage.md §4.5, F8; issue 11 item 11).

Each scene is built with the scene builder and its ``src/model.py`` is then rewritten by hand; the
expected answer comes from reading that source: a commented-out or string-literal marker is no marker,
an aliased import of the API is, and a GE-mode ``torchair.scope.super_kernel("name")`` opens ``name``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from triage_support import TWO_STREAM_CORE, make_loc

from skdbg.codegen.fusion.candidate import CandidateError, build_candidate
from skdbg.parsers.common import Source
from skdbg.parsers.run_identity import parse_run_json
from skdbg.scenebuilder.scene import BuiltScene, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.gate import run_gate
from skdbg.triage.localize import localize
from skdbg.triage.model import GateResult, Verdict
from skdbg.triage.proposal import propose

SCOPE = "decoder.layer.0.mlp"
BEGIN = f'torch.npu.super_kernel_scope_begin("{SCOPE}")'
END = f'torch.npu.super_kernel_scope_end("{SCOPE}")'
K = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Kernel("DequantSwiglu_9a", "AIV_ONLY"),
    Kernel("QuantMatmul_77", "AIC_ONLY"),
]


def _scene(tmp_path: Path) -> BuiltScene:
    """Four AIC/AIV children in one scope; core 3 (AIV) faults in child 2 (DequantSwiglu_9a)."""
    return build_scene(SceneSpec(children=K, cores=[FaultCore(3, "AIV", pc=("child", 2))]), tmp_path / "s")


def _rewrite(b: BuiltScene, old: str, new: str) -> Path:
    p = b.root / "src" / "model.py"
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))
    return p


def _gate(root: Path) -> GateResult:
    ctx = open_context(root)
    return run_gate(ctx, localize(ctx))


def _f8(g: GateResult) -> list[str]:
    return [x.detail for x in g.gaps if x.id == "F8"]


# ------------------------------------------------------------------------------------------ gate F8


def test_f8_commented_out_and_string_markers_do_not_count(tmp_path: Path) -> None:
    """The source opens the candidate scope only in a comment and inside a string literal (the real
    call was removed): the source is not the candidate that ran, F8 fails."""
    b = build_scene(SceneSpec(children=K, cores=[TWO_STREAM_CORE]), tmp_path / "s")
    _rewrite(b, BEGIN, f"# {BEGIN}\n        note = '{BEGIN}'")
    _rewrite(b, END, f"# {END}")
    g = _gate(b.root)
    assert "F8" in g.failed
    assert any(SCOPE in d and "not the candidate" in d for d in _f8(g))


def test_f8_aliased_import_counts(tmp_path: Path) -> None:
    """``import torch_npu as tn`` and ``tn.npu.super_kernel_scope_begin(...)``: the direct API call (§4.5.1)."""
    b = _scene(tmp_path)
    _rewrite(b, "import torch_npu\n", "import torch_npu\nimport torch_npu as tn\n")
    _rewrite(b, BEGIN, BEGIN.replace("torch.npu.", "tn.npu."))
    _rewrite(b, END, END.replace("torch.npu.", "tn.npu."))
    g = _gate(b.root)
    assert "F8" not in g.failed and dict(g.checks)["F8"] == "passed"


def test_f8_wrapper_does_not_count(tmp_path: Path) -> None:
    """A repository wrapper named like the API is not a marker (§4.5.1): F8 fails and says why."""
    b = _scene(tmp_path)
    _rewrite(b, "import torch_npu\n", "import torch_npu\nfrom mylib import super_kernel_scope_begin\n")
    _rewrite(b, BEGIN, BEGIN.replace("torch.npu.", ""))
    g = _gate(b.root)
    assert "F8" in g.failed
    assert any("mylib.super_kernel_scope_begin" in d for d in _f8(g))


def test_f8_ge_scope_opens_the_name(tmp_path: Path) -> None:
    """A model marked with ``torchair.scope.super_kernel("name")`` (GE form, §4.5.2) never fails F8 as
    "not the candidate that ran"."""
    b = _scene(tmp_path)
    text = (b.root / "src" / "model.py").read_text()
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if BEGIN in ln)
    j = next(k for k, ln in enumerate(lines) if END in ln)
    body = ["    " + ln for ln in lines[i + 1 : j]]
    ge = [f'        with torchair.scope.super_kernel("{SCOPE}", "stream-fusion=1"):', *body]
    new = ["import torchair", *lines[:i], *ge, *lines[j + 1 :]]
    (b.root / "src" / "model.py").write_text("\n".join(new) + "\n")
    g = _gate(b.root)
    assert "F8" not in g.failed
    assert not any("not the candidate" in d for d in _f8(g))


# ------------------------------------------------------------------------------------------ proposal


def test_proposal_ignores_commented_and_string_markers(tmp_path: Path) -> None:
    """Next to the real markers the source holds a commented-out pair and the same pair in a string:
    the proposal anchors on the real region only — the same None pair as on the clean source."""
    clean = _scene(tmp_path / "a")
    decoy = _scene(tmp_path / "b")
    tail = f"\n\n# {BEGIN}\n# {END}\nNOTE = '''{BEGIN}\n{END}'''\n"
    src = decoy.root / "src" / "model.py"
    src.write_text(src.read_text() + tail)
    pa = analyze_context(open_context(clean.root)).proposal
    pb = analyze_context(open_context(decoy.root)).proposal
    assert pa.status == pb.status == "proposed"
    child_line = clean.source_lines[clean.node_ids[2]]
    assert [(e.line, e.op) for e in pb.marker_edits] == [(child_line, "insert"), (child_line + 1, "insert")]
    assert pb.marker_edits == pa.marker_edits
    assert not any("several marker regions" in n for n in pb.notes)


def test_proposal_has_no_edits_when_only_commented_markers_remain(tmp_path: Path) -> None:
    """The real begin call is commented out and the end call is a string: there is no scope region to
    cut (the engine's gate already fails F8; the proposal, asked directly for a high verdict on child 2,
    must still not land an edit on those lines) and the note says no balanced direct markers exist."""
    b = _scene(tmp_path)
    _rewrite(b, BEGIN, f"# {BEGIN}")
    _rewrite(b, END, f"'{END}'")
    ctx = open_context(b.root)
    loc = make_loc(ctx)
    assert loc.instance is not None
    v = Verdict(confidence="high", rule="C3", reason="test", suspect=loc.instance.child(2))
    p = propose(ctx, loc, v)
    assert p.marker_edits == ()
    assert any("no balanced direct" in n for n in p.notes)


# ------------------------------------------------------------------------------------------ candidate


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "high-single-stream"


def _example_proposal() -> dict[str, object]:
    ctx = open_context(EXAMPLE)
    doc = analyze_context(ctx).to_json()
    proposal: dict[str, object] = doc["proposal"]
    return proposal


@pytest.mark.parametrize(
    "how",
    [
        lambda t: t.replace("torch.npu.", "# torch.npu.", 1),
        lambda t: t[: len(t) - len(t.lstrip())] + json.dumps(t.strip()),
    ],
    ids=["commented-out", "string-literal"],
)
def test_candidate_refuses_markers_that_are_comments_or_strings(tmp_path: Path, how: object) -> None:
    """The proposal's edits write the None pair as comments / string statements: the patched source has
    no marker change, so the candidate is refused (nothing to re-launch), never written."""
    proposal = _example_proposal()
    edits = proposal["marker_edits"]
    assert isinstance(edits, list) and len(edits) == 2
    for e in edits:
        e["text"] = how(e["text"])  # type: ignore[operator]
    with pytest.raises(CandidateError, match="does not materialise the proposal"):
        build_candidate(EXAMPLE, proposal)


def test_candidate_accepts_the_proposal_as_made(tmp_path: Path) -> None:
    cand = build_candidate(EXAMPLE, _example_proposal())
    assert "+        torch.npu.super_kernel_scope_begin(None)" in cand.files["marker.patch"]


# ------------------------------------------------------------------------------------------ run.json / excerpts


def test_malformed_cache_writers_is_a_gap_with_file_and_line(tmp_path: Path) -> None:
    """run.json declares writer 7 with a reader "x" and a writer key "w1": neither is dropped silently —
    each is a gap citing run.json's line, the well-formed reader 9 is kept, and the proposal's safety
    notes carry the gap."""
    b = _scene(tmp_path)
    run = b.root / "run.json"
    doc = json.loads(run.read_text())
    doc["cache_writers"] = {"7": [9, "x"], "w1": [3]}
    text = json.dumps(doc, indent=2)
    run.write_text(text)
    lines = text.splitlines()
    line7 = next(k for k, ln in enumerate(lines, 1) if ln.strip().startswith('"7"'))
    line_w = next(k for k, ln in enumerate(lines, 1) if ln.strip().startswith('"w1"'))
    rf = parse_run_json(run)
    assert rf.identity.cache_writers == {7: (9,)}
    gaps = [
        (g.src.line, g.src.json_path) for g in rf.gaps if g.src is not None and "cache_writers" in g.detail
    ]
    assert gaps == [(line7, "cache_writers.7"), (line_w, "cache_writers.w1")]
    p = analyze_context(open_context(b.root)).proposal
    cache = [s for s in p.safety if s.kind == "cache" and "evidence gap" in s.detail]
    assert [s.evidence.split(" — ")[0] for s in cache] == [f"run.json:{line7}", f"run.json:{line_w}"]


def test_excerpt_quotes_a_non_sk_line_without_an_sk_tag(tmp_path: Path) -> None:
    """A GE fault-marker line ``<tid> <Function>: <text>`` (the X6 chain's ``origin_op_name``) is cited
    as it is: no ``[SK]`` tag it does not have; an SK-logger line keeps its own ``[SK][<Function>]``."""
    b = _scene(tmp_path)
    ge = "[ERROR] GE(48213,python):2026-06-10-14:01:00.000.000 [dump.cc:12]48213 DumpOp: origin_op_name=sk_sp1\n"
    sk = "[ERROR] ASCENDCKERNEL(48213,python):2026-06-10-14:01:00.000.001 [sk.cpp:9][SK][Dump] block 1\n"
    with b.plog.open("a") as fh:
        fh.write(ge + sk)
    n = len(b.plog.read_text().splitlines())
    ctx = open_context(b.root)
    assert ctx.cite("L1", "plog", Source(str(b.plog), n - 1)).excerpt == "origin_op_name=sk_sp1"
    assert ctx.cite("L1", "plog", Source(str(b.plog), n)).excerpt == "[SK][Dump] block 1"
