"""The README's worked example (detect → adapt → validate on examples/kernels/my_op.asc) behaves as documented."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skdbg.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kernels"


def test_readme_worked_example(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["codegen", "detect", str(EXAMPLE / "my_op.asc")])
    assert res.exit_code == 0 and json.loads(res.stdout)["overall_form"] == "none"
    out = tmp_path / "my_op"
    res = runner.invoke(
        main,
        [
            "codegen",
            "adapt",
            str(EXAMPLE / "my_op.asc"),
            "-o",
            str(out),
            "--io-contract",
            str(EXAMPLE / "my_op.io.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    text = (out / "operator-sk-adapted" / "my_op.asc").read_text()
    assert "alignas(4) uint8_t flag;" in text
    assert "__sk__ __cube__ void my_op_sk(const MyOpArgs *args, sk::SkSystemArgs *sysArgs)" in text
    assert "SK_BIND(my_op, 4, my_op_sk<0>, my_op_sk<1>, my_op_sk<2>, my_op_sk<3>);" in text
    assert text.startswith((EXAMPLE / "my_op.asc").read_text().rstrip("\n"))
    res = runner.invoke(main, ["codegen", "validate", str(out / "operator-sk-adapted")])
    assert res.exit_code == 0
    assert {f["rule_id"] for f in json.loads(res.stdout)["findings"]} == {"sk.bind-mask-dcci-disabled"}
    res = runner.invoke(main, ["codegen", "adapt", str(EXAMPLE / "my_op.asc"), "-o", str(tmp_path / "nc")])
    assert res.exit_code == 4 and "needs-human" in res.stderr


def test_help_documents_both_halves_and_exit_codes() -> None:
    res = CliRunner().invoke(main, ["codegen", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    assert "Operator SK adaptation" in text and "SK generation" in text
    assert "4 needs-human" in text and "5 needs-target-arch" in text
    for cmd in ("detect", "adapt", "aggregate", "validate", "remediate", "templates", "compare"):
        assert cmd in text
