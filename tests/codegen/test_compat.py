"""validate --rule-pack compat (codegen.md Part 3 item 46) and that its rules do fire when backed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main


def _asset(tmp_path: Path) -> Path:
    a = tmp_path / "asset"
    a.mkdir()
    (a / "k.asc").write_text(
        '#include "kernel_operator.h"\n// sk-arch: dav-2200\n'
        "__global__ __mix__(1, 2) void k(GM_ADDR x) { aclrtSynchronizeDevice(); }\n"
    )
    return a


def test_item46_shipped_matrix_verifies_nothing(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main,
        [
            "codegen",
            "validate",
            str(_asset(tmp_path)),
            "--rule-pack",
            "compat",
            "--target-chip",
            "ascend-910b",
            "--target-cann",
            "8.2.0",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["findings"] == []
    meta = doc["metadata"]["compat"]
    assert meta["overall_verdict"] == "not-verified" and meta["target_chip_known"] is True
    assert meta["recorded_cann_versions"] == ["9.0.0", "8.2.0"]
    assert "no official-source-backed checks" in meta["verification"]


def test_compat_rules_fire_only_with_official_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    official = ["https://www.hiascend.com/document/x"]
    facts = {
        "forbidden_acl_apis": {"value": ["aclrtSynchronizeDevice"], "official_sources": official},
        "mix_aic_aiv_supported": {"value": False, "official_sources": official, "cann_versions": ["8.2.0"]},
        "arch_alias": {"value": "dav-2201", "official_sources": ["https://example.com/blog"]},
    }
    mdir = tmp_path / "m"
    mdir.mkdir()
    (mdir / "x.json").write_text(
        json.dumps({"chips": {"chip-x": {"cann_versions": ["8.2.0"], "facts": facts}}})
    )
    monkeypatch.setenv("SK_COMPAT_MATRIX_DIR", str(mdir))
    args = ["codegen", "validate", str(_asset(tmp_path)), "--rule-pack", "compat", "--target-chip", "chip-x"]
    res = CliRunner().invoke(main, [*args, "--target-cann", "8.2.0"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert sorted(f["rule_id"] for f in doc["findings"]) == [
        "compat.forbidden-acl-api",
        "compat.mix-aic-aiv-unsupported",
    ]
    assert (
        doc["metadata"]["compat"]["overall_verdict"] == "incompatible"
    )  # the blog-sourced alias never fires
    res = CliRunner().invoke(main, [*args, "--target-cann", "9.0.0"])
    assert [f["rule_id"] for f in json.loads(res.stdout)["findings"]] == ["compat.forbidden-acl-api"]
