"""validate, remediate and templates (codegen.md Part 3 items 39–47)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main
from skdbg.codegen.adapt import AdaptOptions, adapt_asset
from skdbg.codegen.validate import validate_asset

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"


def _rules(tmp_path: Path, name: str, text: str) -> list[str]:
    d = tmp_path / name.replace(".", "_")
    d.mkdir()
    (d / name).write_text(text)
    return [f["rule_id"] for f in validate_asset(d)["findings"]]


def _adapted_tree(tmp_path: Path, mask: int = 3) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DATA / "tricky.asc", src / "tricky.asc")
    m = adapt_asset(src, tmp_path / "out", AdaptOptions(mask=mask))
    assert m["status"] == "completed"
    return tmp_path / "out" / "operator-sk-adapted"


def test_item42_clean_adapted_tree_has_no_findings(tmp_path: Path) -> None:
    tree = _adapted_tree(tmp_path)
    res = CliRunner().invoke(main, ["codegen", "validate", str(tree)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["findings"] == []


def test_default_mask_4_warns_about_disabled_dcci(tmp_path: Path) -> None:
    tree = _adapted_tree(tmp_path, mask=4)
    doc = validate_asset(tree)
    assert {f["rule_id"] for f in doc["findings"]} == {"sk.bind-mask-dcci-disabled"}
    assert doc["findings"][0]["severity"] == "warning" and "disable_dcci" in doc["findings"][0]["message"]


K = '#include "kernel_operator.h"\n'
G = "__global__ __mix__(1,0) void k(GM_ADDR x) {}\n"


def test_item43_each_rule(tmp_path: Path) -> None:
    assert "sk.args-struct-alignas" in _rules(tmp_path, "a.asc", K + G + "struct FooArgs { int16_t k; };\n")
    assert "sk.bind-mask-known" in _rules(tmp_path, "b.asc", K + G + "SK_BIND(k, 8, k_sk<0>);\n")
    five = "SK_BIND(k, 3, k_sk<0>, k_sk<1>, k_sk<2>, k_sk<3>, k_sk<4>);\n"
    assert "sk.bind-max-splits" in _rules(tmp_path, "c.asc", K + G + five)
    assert "sk.args-struct-required" in _rules(
        tmp_path, "d.asc", K + G + "__sk__ __cube__ void k_sk(GM_ADDR x) {}\n"
    )
    assert "sk.global-preserved" in _rules(tmp_path, "e.asc", K + "__sk__ __cube__ void k_sk() {}\n")
    assert "sk.kernel-type-match" in _rules(tmp_path, "f.asc", K + G + "__sk__ __vector__ void k_sk() {}\n")
    d = tmp_path / "g"
    d.mkdir()
    (d / "g.asc").write_text(K + "__global__ __vector__ void k() { skBlockNum; }\n")
    (f,) = validate_asset(d)["findings"]
    assert f["rule_id"] == "sk.sys-args-api-current" and f["severity"] == "blocker"
    assert f["remediation_hint"]["kind"] == "rename-symbol"
    tp = "__sk__ __cube__ void k_sk() {\n    TPipe pipe;\n}\n"
    assert "sk.tpipe-destroy-without-pipe-all" in _rules(tmp_path, "h.asc", K + G + tp)
    d = tmp_path / "i"
    d.mkdir()
    (d / "i.asc").write_text(G)
    (f,) = validate_asset(d)["findings"]
    assert f["rule_id"] == "includes.kernel-operator-h" and f["severity"] == "warning"
    assert f["remediation_hint"]["kind"] == "add-include"


def test_item44_envelope_stable_ids_exit_code(tmp_path: Path) -> None:
    (tmp_path / "g.asc").write_text(K + "__global__ __vector__ void k() { skBlockNum; }\n")
    args = ["codegen", "validate", str(tmp_path), "--stage", "s1", "--iteration-index", "3"]
    r1, r2 = CliRunner().invoke(main, args), CliRunner().invoke(main, args)
    assert r1.exit_code == 1
    d1, d2 = json.loads(r1.stdout), json.loads(r2.stdout)
    assert d1["skill_source"] == "operator-validate" and d1["schema_version"] == 1
    assert (d1["stage"], d1["iteration_index"]) == ("s1", 3)
    fid = d1["findings"][0]["finding_id"]
    assert fid == d2["findings"][0]["finding_id"]
    rule, digest = fid.split(":")
    assert rule == "sk.sys-args-api-current" and len(digest) == 12 and int(digest, 16) >= 0


def test_item45_all_pack_without_contracts(tmp_path: Path) -> None:
    (tmp_path / "k.asc").write_text(K + G)
    res = CliRunner().invoke(main, ["codegen", "validate", str(tmp_path), "--rule-pack", "all"])
    assert res.exit_code == 1
    sev = {f["rule_id"]: f["severity"] for f in json.loads(res.stdout)["findings"]}
    assert sev["contract.asset-layout"] == sev["contract.build-context"] == "blocker"
    assert sev["contract.verify-context"] == "warning"


def test_item47_validate_then_remediate_then_clean(tmp_path: Path) -> None:
    asset = tmp_path / "asset"
    asset.mkdir()
    (asset / "g.asc").write_text("__global__ __vector__ void k() { skBlockNum; }\n")
    runner = CliRunner()
    res = runner.invoke(main, ["codegen", "validate", str(asset), "-o", str(tmp_path / "v")])
    assert res.exit_code == 1
    findings = tmp_path / "v" / "operator-validation-findings.json"
    res = runner.invoke(main, ["codegen", "remediate", str(asset), str(findings)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["applied"] == 2
    res = runner.invoke(main, ["codegen", "validate", str(asset)])
    assert res.exit_code == 0 and json.loads(res.stdout)["findings"] == []
    assert (asset / "g.asc").read_text().startswith('#include "kernel_operator.h"\n')


def test_item39_five_findings(tmp_path: Path) -> None:
    (tmp_path / "a.asc").write_text("#include <x>\nint skBlockNum;\n")
    (tmp_path / "b.asc").write_text("int y;\n")
    auto = ["codegen.apply-remediation"]
    findings = {
        "findings": [
            {
                "finding_id": "f1",
                "actionable_by": auto,
                "remediation_hint": {
                    "kind": "rename-symbol",
                    "target_file": "a.asc",
                    "old_value": "skBlockNum",
                    "new_value": "skNumBlocks",
                },
            },
            {
                "finding_id": "f2",
                "actionable_by": auto,
                "remediation_hint": {
                    "kind": "add-include",
                    "target_file": "b.asc",
                    "new_value": '#include "kernel_operator.h"',
                },
            },
            {"finding_id": "f3", "actionable_by": ["human"], "remediation_hint": {"kind": "human-decision"}},
            {
                "finding_id": "f4",
                "actionable_by": auto,
                "remediation_hint": {
                    "kind": "rename-symbol",
                    "target_file": "../x.asc",
                    "old_value": "a",
                    "new_value": "b",
                },
            },
            {
                "finding_id": "f5",
                "actionable_by": auto,
                "remediation_hint": {
                    "kind": "remove-line-containing",
                    "target_file": "a.asc",
                    "old_value": "absent-needle",
                },
            },
        ]
    }
    fpath = tmp_path / "findings.json"
    fpath.write_text(json.dumps(findings))
    res = CliRunner().invoke(main, ["codegen", "remediate", str(tmp_path), str(fpath)])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert [(r["status"], r["reason"]) for r in doc["results"]] == [
        ("applied", "rename-symbol"),
        ("applied", "add-include"),
        ("escalated", "not_auto_remediable"),
        ("failed", "target_outside_asset"),
        ("skipped", "no_change"),
    ]
    assert doc["summary"] == {"applied": 2, "escalated": 1, "failed": 1, "skipped": 1}
    assert (tmp_path / "b.asc").read_text() == '#include "kernel_operator.h"\nint y;\n'
    assert "skNumBlocks" in (tmp_path / "a.asc").read_text()
    assert json.loads((tmp_path / "operator-sk-remediation.json").read_text())["summary"]["failed"] == 1


def test_item39_replace_pattern_and_bad_regex(tmp_path: Path) -> None:
    from skdbg.codegen.remediate import apply_remediation

    (tmp_path / "a.asc").write_text("int a1; int a2;\n")
    auto = ["codegen.apply-remediation"]
    doc = apply_remediation(
        tmp_path,
        {
            "findings": [
                {
                    "finding_id": "r",
                    "actionable_by": auto,
                    "remediation_hint": {
                        "kind": "replace-pattern",
                        "target_file": "a.asc",
                        "old_value": r"a(\d)",
                        "new_value": r"b\1",
                    },
                },
                {
                    "finding_id": "x",
                    "actionable_by": auto,
                    "remediation_hint": {
                        "kind": "replace-pattern",
                        "target_file": "a.asc",
                        "old_value": "(",
                        "new_value": "",
                    },
                },
            ]
        },
    )
    assert doc["results"][0]["status"] == "applied"
    assert doc["results"][1]["reason"].startswith("invalid_regex:")
    assert (tmp_path / "a.asc").read_text() == "int b1; int b2;\n"


def test_item40_findings_without_list_exit_2(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_text('{"nope": 1}')
    res = CliRunner().invoke(main, ["codegen", "remediate", str(tmp_path), str(tmp_path / "f.json")])
    assert res.exit_code == 2 and "findings' list" in res.stderr


def test_item41_templates(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["codegen", "templates", "list"])
    (t,) = json.loads(res.stdout)["templates"]
    assert t["id"] == "add_custom" and t["file_count"] == 2
    assert t["parameters"]["dtype"]["kind"] == "choice" and t["parameters"]["dtype"]["default"] == "float16"
    out = tmp_path / "t"
    res = runner.invoke(
        main, ["codegen", "templates", "render", "add_custom", "--param", "dtype=float32", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["written_files"] == ["csrc/add_custom.asc", "README.md"]
    assert "GlobalTensor<float>" in (out / "csrc" / "add_custom.asc").read_text()
    res = runner.invoke(
        main,
        ["codegen", "templates", "render", "add_custom", "--param", "dtype=bf16", "-o", str(tmp_path / "u")],
    )
    assert res.exit_code == 2 and "not in allowed" in res.stderr
    res = runner.invoke(main, ["codegen", "templates", "render", "nope", "-o", str(tmp_path / "w")])
    assert res.exit_code == 2 and "template not found: nope" in res.stderr
    res = runner.invoke(main, ["codegen", "templates", "render", "add_custom", "-o", str(out)])
    assert res.exit_code == 2 and "not empty" in res.stderr


def test_rendered_template_adapts_with_contract(tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(main, ["codegen", "templates", "render", "add_custom", "-o", str(tmp_path / "t")])
    res = runner.invoke(main, ["codegen", "adapt", str(tmp_path / "t" / "csrc"), "-o", str(tmp_path / "o1")])
    assert res.exit_code == 4  # three tensors and no contract
    (tmp_path / "io.json").write_text(
        json.dumps({"entries": {"add_custom": {"inputs": ["x", "y"], "outputs": ["z"]}}})
    )
    res = runner.invoke(
        main,
        [
            "codegen",
            "adapt",
            str(tmp_path / "t" / "csrc"),
            "-o",
            str(tmp_path / "o2"),
            "--io-contract",
            str(tmp_path / "io.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    text = (tmp_path / "o2" / "operator-sk-adapted" / "add_custom.asc").read_text()
    assert "sysArgs->skNumBlocks" in text and "pipe.DestroyWithoutPipeAll();" in text
