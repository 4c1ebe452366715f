"""``fault.scope_id``, ``fault.model`` and ``fault.scope_resolution`` across dialects D0–D5 (issue 11 item 9).

triage.md §3.2 item 3 and F5/F6: the SK a fault names is tied to the metadata by the printed SkScopeId
(D2–D4 ``ModelRIIdx…SkScopeId`` and SkHeaderInfo, D5 also ``ModelId``), by the COND decode, by the
ordered DFX origin-name list (D0–D1 print no scope id), or — with no DFX block — by the process's
metadata holding exactly one SK. Whichever way the SK is known, its scope id and model dir are filled.
Expected values are written from the scene each test builds, never read back from skdbg.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, SkDef, build_scene
from skdbg.triage.engine import analyze
from skdbg.triage.schema import SchemaError, check_scope_resolution, validate_analysis

KIDS = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Kernel("DequantSwiglu_9a", "AIV_ONLY"),
]
OTHER = SkDef(4, "decoder.layer.1.attn", [Kernel("FlashAttn_31", "AIC_ONLY"), Kernel("Cast_9f", "AIV_ONLY")])
#: the faulting SK lives in model_52_3, scope 11 — deliberately not the scene builder's defaults
MODEL, SCOPE = "52_3", 11
ALL = ("D0", "D1", "D2", "D3", "D4", "D5")


def scene(tmp: Path, dialect: str, **kw: object) -> Path:
    spec = SceneSpec(
        children=KIDS,
        cores=[FaultCore(3, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        dialect=dialect,
        model_id=MODEL,
        scope_id=SCOPE,
        **kw,  # type: ignore[arg-type]
    )
    return build_scene(spec, tmp / "scene").root


def fault_of(root: Path) -> dict[str, object]:
    doc = analyze(root).to_json()
    validate_analysis(doc)
    fault: dict[str, object] = doc["fault"]
    return fault


@pytest.mark.parametrize(
    ("dialect", "how"),
    [
        ("D0", "name_sequence"),
        ("D1", "name_sequence"),
        ("D2", "header"),
        ("D3", "header"),
        ("D4", "header"),
        ("D5", "header"),
    ],
)
def test_sk_known_from_the_handler_block_names_scope_and_model(
    tmp_path: Path, dialect: str, how: str
) -> None:
    """Situation: a fault in child 2 of scope 11 (model_52_3), which shares its model dir with another SK
    (scope 4). D0–D1 print no scope id, so the SK is the one whose child list equals the DFX origin names;
    D2–D4 print SkScopeId (the model dir is the one holding it), D5 also prints ModelId."""
    f = fault_of(scene(tmp_path, dialect, extra_sks=[OTHER]))
    assert (f["dialect"], f["scope_id"], f["model"], f["scope_resolution"]) == (dialect, SCOPE, MODEL, how)


@pytest.mark.parametrize("dialect", ALL)
def test_sk_known_by_the_single_sk_rule_names_scope_and_model(tmp_path: Path, dialect: str) -> None:
    """Situation: the handler aborts before its DFX table (no PC block, no header scope) and the process's
    metadata holds exactly one SK — scope 11 of model_52_3 — which the single-SK rule names (§3.2 item 3b)."""
    f = fault_of(scene(tmp_path, dialect, dfx=False))
    assert (f["scope_id"], f["model"], f["scope_resolution"]) == (SCOPE, MODEL, "single_sk")


@pytest.mark.parametrize("dialect", ALL)
def test_sk_not_known_leaves_scope_and_resolution_empty(tmp_path: Path, dialect: str) -> None:
    """Situation: no DFX table and two SKs in the metadata: the instance is ambiguous (C1). Nothing may be
    filled from a guess: scope id, model and resolution stay null."""
    f = fault_of(scene(tmp_path, dialect, dfx=False, extra_sks=[OTHER]))
    assert (f["scope_id"], f["model"], f["scope_resolution"]) == (None, None, None)


def test_scope_from_the_cond_register_only(tmp_path: Path) -> None:
    """Situation: a D4 fault whose printed SkScopeId lines are missing from the logs (header and core line cut),
    while core 3's COND register still encodes scope 11 with 3 tasks (no index bit can leak, T5). The SK is tied
    by the COND decode; the model dir is the one holding scope 11."""
    root = scene(tmp_path, "D4", extra_sks=[OTHER])
    for log in [*root.glob("log/plog/*.log"), *root.glob("sk_meta/*/*/super_kernel.log")]:
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(ln for ln in lines if "SkScopeId=" not in ln and "skScopeId=" not in ln))
    f = fault_of(root)
    assert (f["scope_id"], f["model"], f["scope_resolution"]) == (SCOPE, MODEL, "cond")


def test_non_sk_fault_has_no_scope_resolution(tmp_path: Path) -> None:
    """Situation: the faulting kernel is an ordinary operator (X3). No SK is named, whatever the metadata holds."""
    f = fault_of(scene(tmp_path, "D5", fault="non_sk"))
    assert (f["kind"], f["scope_resolution"]) == ("non_sk", None)


def test_text_output_names_the_resolution(tmp_path: Path) -> None:
    """Situation: a D1 fault (no printed scope id). The text output shows scope, model and how the SK was found."""
    root = scene(tmp_path, "D1", extra_sks=[OTHER])
    res = CliRunner().invoke(main, ["analyze", str(root)], catch_exceptions=False)
    assert res.exit_code == 0
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("fault:"))
    assert f"scope {SCOPE}, model {MODEL} (SK resolved by name_sequence)" in line
    js = CliRunner().invoke(main, ["analyze", str(root), "--format", "json"], catch_exceptions=False)
    assert json.loads(js.stdout)["fault"]["scope_resolution"] == "name_sequence"


@pytest.mark.parametrize(
    ("fault", "where"),
    [
        (
            {"scope_resolution": "single_sk", "scope_id": None, "model": "48_1", "dialect": "D1"},
            "/fault/scope_id",
        ),
        (
            {"scope_resolution": "name_sequence", "scope_id": 7, "model": None, "dialect": "D0"},
            "/fault/model",
        ),
        (
            {"scope_resolution": "header", "scope_id": 7, "model": "48_1", "dialect": "D1"},
            "/fault/scope_resolution",
        ),
    ],
)
def test_contract_rejects_a_resolved_sk_without_identity(fault: dict[str, object], where: str) -> None:
    """The cross-field rule of the analysis contract: a resolved SK names scope and model, and D0–D1 (no
    printed scope id) cannot be resolved by header."""
    with pytest.raises(SchemaError) as err:
        check_scope_resolution(fault)
    assert err.value.where == where
