"""Acceptance (issue 11 item 12): ``skdbg explain`` knows every id skdbg can print.

Two independent walks, because either alone can miss something:

* dynamic — run ``analyze`` on every bundled scene and on built scenes that drive many rules
  (gate failures, non-SK / GE / compile / no-fusion / environment, R4, R2/R3/X4/X5, D2/D3, R5/R6,
  every dialect), ``verify`` on scene pairs, and codegen ``adapt``/``validate``; collect every
  id-shaped value from the JSON (gate checks and gaps, evidence levels and rules, traps, flags,
  confidence rule, routes, next steps, mechanisms, safety kinds, verify gates and statuses, finding
  rule ids) and every id-shaped token in the free text;
* static — read skdbg's own source (string constants only, docstrings and comments excluded) for
  the ids code can emit: rule ids, section references, parser gap kinds, flags, safety kinds,
  codegen finding ids.

Each collected id must have a glossary entry; the failure message lists the missing ones.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.glossary import lookup
from skdbg.scenebuilder.scene import ALL_FILES, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.engine import analyze
from skdbg.triage.verify import verify_scenes

REPO = Path(__file__).resolve().parents[2]
SCENES = sorted(p for p in (REPO / "examples" / "scenes").iterdir() if (p / "run.json").is_file())

#: id-shaped tokens inside free text: rule ids, section references, codegen finding ids
SHORT_ID = re.compile(r"(?<![\w.])([GFLTCRXDNVE][0-9])(?![\w])")
SECTION = re.compile(r"§\d+(?:\.\d+)*(?:\([a-e]\))?(?: rule [1-3]| [ABC](?![\w]))?")
FINDING = re.compile(
    r"(?<![\w.])((?:codegen|sk|compat|includes|contract|validate|build)\.[a-z0-9]+-[a-z0-9-]+)"
)

THREE = [Kernel("MatA_11", "AIC_ONLY"), Kernel("AddB_22", "AIV_ONLY"), Kernel("CastC_33", "AIV_ONLY")]
SHARED = [
    Kernel("AddB_22", "AIV_ONLY"),
    Kernel("MulD_44", "AIV_ONLY"),
    Kernel("AddB_22", "AIV_ONLY", shares_binary_with=0),
]
EVENT_BOUND = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Event("EventNotify", event_id=1, stream=0),
    Event("EventWait", event_id=1, stream=1),
    Kernel("RopeCache_77", "AIV_ONLY", stream=1),
    Kernel("CastC_33", "AIV_ONLY"),
]


def _core(k: int, **kw: Any) -> FaultCore:
    return FaultCore(core_id=30, core_type="AIV", pc=("child", k), **kw)


def built_specs() -> dict[str, SceneSpec]:
    """Situations chosen to make the engine emit as many different ids as it can."""
    one = [_core(1)]
    return {
        "stale_meta_pid": SceneSpec(children=THREE, cores=one, sk_meta_pid=4242),
        "meta_from_other_process": SceneSpec(children=THREE, cores=one, meta_pid=4242),
        "non_sk": SceneSpec(children=THREE, fault="non_sk"),
        "ge_sk": SceneSpec(children=THREE, fault="ge_sk"),
        "compile": SceneSpec(children=THREE, fault="none", failure_phase="compile"),
        "no_fusion": SceneSpec(
            children=THREE, fault="none", failure_phase="execution", files=ALL_FILES - {"fused_nodes"}
        ),
        "environment": SceneSpec(children=THREE, fault="none", run={"failure_phase": "not_run"}),
        "clean_under_debug": SceneSpec(
            children=THREE,
            fault="none",
            failure_phase="execution",
            debug_options={"debug_sync_all": 1},
            run={"exit": {"status": 0, "signal": None, "timeout": False}},
        ),
        "entry_only_timeout": SceneSpec(children=THREE, handler="anchor_only", failure_phase="timeout"),
        "hang_no_fault": SceneSpec(children=THREE, fault="none", failure_phase="hang"),
        "cond_medium": SceneSpec(
            children=SHARED,
            cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        ),
        "shared_pc_low": SceneSpec(
            children=SHARED, cores=[FaultCore(core_id=31, core_type="AIV", pc=("child", 2))], dialect="D3"
        ),
        "conflict": SceneSpec(children=THREE, cores=[_core(1), FaultCore(core_id=31, pc=("child", 2))]),
        "bystander": SceneSpec(
            children=[Kernel("MatA_11", "AIC_ONLY", sync_after=6), Kernel("AddB_22", "AIV_ONLY")],
            op_trace=True,
            cores=[FaultCore(core_id=3, core_type="AIC", pc=("entry",), state=("OP_FINISHED", 0))],
        ),
        "pc_zero_mix": SceneSpec(
            children=[Kernel("MixE_55", "MIX_AIC_1_2"), Kernel("AddB_22", "AIV_ONLY")],
            cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",))],
        ),
        "isolated_event_reason": SceneSpec(
            children=[Kernel("AddB_22"), Event("EventNotify", event_id=1), Kernel("CastC_33")],
            scope_reasons=["ISOLATED_EVENT"],
            cores=[FaultCore(core_id=30, core_type="AIV", pc=("zero",))],
        ),
        "exceed_core_max": SceneSpec(
            children=THREE, scope_reasons=["EXCEED_CORE_MAX"], cores=[FaultCore(core_id=30, pc=("zero",))]
        ),
        "event_bound": SceneSpec(
            children=EVENT_BOUND, cores=[_core(4, state=("OP_LAUNCHED", 4))], op_trace=True
        ),
        "one_statement_two_children": SceneSpec(
            children=[Kernel("AddB_22"), Kernel("MulD_44", same_statement_as=0), Kernel("CastC_33")],
            cores=[_core(0, state=("OP_LAUNCHED", 0))],
            op_trace=True,
        ),
        "no_probe": SceneSpec(children=THREE, cores=one, probe=None, op_trace=True),
        "no_source": SceneSpec(children=THREE, cores=one, source=False),
        "no_metadata_files": SceneSpec(children=THREE, cores=one, files=frozenset({"fused_nodes"})),
        **{f"dialect_{d}": SceneSpec(children=THREE, cores=one, dialect=d) for d in ("D0", "D1", "D2", "D4")},
    }


# ------------------------------------------------------------------ collecting


def _strings(doc: Any) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


def text_ids(text: str) -> set[str]:
    return set(SHORT_ID.findall(text)) | set(SECTION.findall(text)) | set(FINDING.findall(text))


def analysis_ids(doc: dict[str, Any]) -> set[str]:
    """Every id-shaped value of a skdbg.analysis/1 document, field by field, plus ids in its text."""
    ids: set[str] = set()
    g, f, v, p = doc["gate"], doc["fault"], doc["verdict"], doc["proposal"]
    ids |= set(g["failed"]) | {x["id"] for x in g["gaps"]} | set(g["checks"])
    ids |= {f["kind"], f["phase"]} | ({f["dialect"]} if f["dialect"] else set())
    if f.get("scope_resolution"):
        ids.add(f["scope_resolution"])
    for c in f["cores"]:
        ids |= {c["role"], *c["flags"]} | {c[k] for k in ("state_name", "cond_state") if c.get(k)}
    ids |= {v["confidence"], v["rule"], *v["flags"]}
    for e in v["evidence"]:
        ids |= {e["level"]} | ({e["rule"]} if e.get("rule") else set())
    if v["suspect"] is not None:
        ids.add(v["suspect"]["identity"])
    ids |= set(doc["routes"]) | {s["id"] for s in doc["next_steps"]}
    ids |= {p["status"]} | {s["kind"] for s in p["safety"]}
    ids |= {x for x in (p["mechanism"], p["source_site"]) if x}
    for s in _strings(doc):
        ids |= text_ids(s)
    return ids


def verify_ids(doc: dict[str, Any]) -> set[str]:
    ids = set(doc["routes"])
    for g in doc["verification"]:
        ids |= {g["gate"], g["result"]}
    ids |= {doc["round"]["status"], doc["attempt"]["status"]} | {x["status"] for x in doc["ledger"]}
    for s in _strings(doc):
        ids |= text_ids(s)
    return ids


def unknown(ids: set[str]) -> list[str]:
    return sorted(i for i in ids if not lookup(i))


# ------------------------------------------------------------------ dynamic walk


def test_every_id_in_bundled_scene_output_is_explained() -> None:
    seen: set[str] = set()
    for scene in SCENES:
        seen |= analysis_ids(analyze(scene).to_json())
    # the bundled scenes alone already print rule ids of every family the text output names
    assert {"C3", "C4", "C6", "C0", "R2", "R3", "R5", "X3", "L1", "L2", "L3", "L4", "T3", "T4", "D1"} <= seen
    assert unknown(seen) == []


def test_every_id_in_built_scene_output_is_explained(tmp_path: Path) -> None:
    seen: set[str] = set()
    for name, spec in built_specs().items():
        root = build_scene(spec, tmp_path / name).root
        seen |= analysis_ids(analyze(root).to_json())
    # the built situations reach the gate, route and next-step families too
    assert {"R1", "X1", "X2", "X4", "X5", "X6", "X7", "R4", "D2", "D3", "N1", "RETEST"} <= seen
    assert len({i for i in seen if SHORT_ID.fullmatch(i)}) >= 30
    assert unknown(seen) == []


def test_every_id_in_verify_output_is_explained() -> None:
    seen: set[str] = set()
    pairs = [(a, b) for a in SCENES for b in SCENES if a != b][:8]
    for old, new in pairs:
        seen |= verify_ids(verify_scenes(old, new).to_json())
    assert {"V1", "V2", "V3", "V4", "V5"} <= seen
    assert unknown(seen) == []


def test_every_codegen_finding_id_is_explained(tmp_path: Path) -> None:
    kernels = REPO / "examples" / "kernels"
    run = CliRunner()
    seen: set[str] = set()
    bare = run.invoke(main, ["codegen", "adapt", str(kernels / "my_op.asc"), "-o", str(tmp_path / "bare")])
    assert bare.exit_code == 4  # needs-human without the IO contract
    seen |= text_ids(bare.stdout + bare.stderr)
    for doc in (tmp_path / "bare").rglob("*.json"):
        seen |= text_ids(doc.read_text())
    args = ["codegen", "adapt", str(kernels / "my_op.asc"), "-o", str(tmp_path / "ok")]
    ok = run.invoke(main, [*args, "--io-contract", str(kernels / "my_op.io.json")])
    assert ok.exit_code == 0, ok.output
    for pack in ("spec", "all"):
        res = run.invoke(
            main, ["codegen", "validate", str(tmp_path / "ok" / "operator-sk-adapted"), "--rule-pack", pack]
        )
        findings = json.loads(res.stdout)["findings"]
        seen |= {f["rule_id"] for f in findings}
        seen |= {str((f.get("remediation_hint") or {}).get("kind")) for f in findings} - {"None"}
    assert {"codegen.pybind-return-tensor-unresolved", "sk.bind-mask-dcci-disabled"} <= seen
    assert unknown(seen) == []


# ------------------------------------------------------------------ static walk over the source


def _source_strings(path: Path) -> Iterator[str]:
    """String constants of a module, f-string pieces included, docstrings excluded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


def _py(*folders: str) -> list[Path]:
    out: list[Path] = []
    for folder in folders:
        out += [p for p in (REPO / folder).rglob("*.py") if "tui" not in p.parts or folder.endswith("tui")]
    return out


def static_ids() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}

    def note(code: str, where: Path) -> None:
        found.setdefault(code, set()).add(str(where.relative_to(REPO)))

    # rule ids and section references the triage engine, sessions and CLI can print
    for path in _py("skdbg/triage", "sessions") + sorted((REPO / "skdbg").glob("*.py")):
        for s in _source_strings(path):
            for code in (*SHORT_ID.findall(s), *SECTION.findall(s)):
                note(code, path)
    source = {p: p.read_text(encoding="utf-8") for p in _py("parsers", "skdbg", "sessions", "codegen")}
    for path, text in source.items():
        for kind in re.findall(r"Gap\(\s*\"([a-z_]+)\"", text):  # parser evidence gaps (inspect --table gaps)
            note(kind, path)
        for flag in re.findall(r"\.flag\(\"([a-z_]+)\"\)", text):  # verdict / core flags
            note(flag, path)
        for kind in re.findall(r"SafetyNote\(\s*kind=\"([a-z_]+)\"|\bkind=\"([a-z_]+)\",", text):
            for k in kind:
                if k and path.name == "proposal.py":  # safety-note kinds
                    note(k, path)
        for code in re.findall(
            r"\"((?:codegen|sk|compat|includes|contract|validate|build)\.[a-z0-9]+-[a-z0-9-]+)\"", text
        ):
            note(code, path)
    return found


def test_every_id_literal_in_the_source_is_explained() -> None:
    found = static_ids()
    # the walk really reads the engine: it sees ids of every family
    for code in ("G1", "F9", "L3", "T5", "C4", "R6", "X5", "D3", "N1", "V3", "§4.4 rule 3"):
        assert code in found, code
    assert (
        "cond_index_overflow" in found and "missing_file" in found and "sk.bind-mask-dcci-disabled" in found
    )
    missing = {code: sorted(where) for code, where in found.items() if not lookup(code)}
    assert missing == {}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see §4.4 rule 3 and §4.2(e); T4 quote", {"§4.4 rule 3", "§4.2(e)", "T4"}),
        (
            "nodeId 0x1F; R5/R6; sk.bind-mask-dcci-disabled warning",
            {"R5", "R6", "sk.bind-mask-dcci-disabled"},
        ),
        ("§4.5 C: halves; D1, E3 (COND)", {"§4.5 C", "D1", "E3"}),
    ],
)
def test_text_token_patterns(text: str, expected: set[str]) -> None:
    """The free-text patterns find exactly the ids a reader would (so the walks above are not blind)."""
    assert text_ids(text) == expected
