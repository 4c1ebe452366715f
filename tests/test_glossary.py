"""The packaged glossary, ``skdbg explain`` and the generated ``docs/glossary.md`` (issue 11 item 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.glossary import AREAS, closest, entries, lookup, markdown, titled

REPO = Path(__file__).resolve().parents[1]


def explain(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["explain", *args])
    return res.exit_code, res.stdout, res.stderr


def test_docs_glossary_is_generated_from_the_package_data() -> None:
    """docs/glossary.md is exactly what `skdbg explain --markdown` prints (regenerate it after
    editing skdbg/glossary.json)."""
    assert (REPO / "docs" / "glossary.md").read_text(encoding="utf-8") == markdown()
    code, out, _ = explain("--markdown")
    assert code == 0 and out == markdown()


def test_every_spec_id_family_is_complete() -> None:
    """Hand-written from the rule tables: every G/F/L/T/C/R/X/D/N/V id exists."""
    expected = (
        [f"G{i}" for i in range(1, 6)]
        + [f"F{i}" for i in range(1, 10)]
        + [f"L{i}" for i in range(1, 5)]
        + [f"T{i}" for i in range(1, 10)]
        + [f"C{i}" for i in range(0, 7)]
        + [f"R{i}" for i in range(1, 8)]
        + [f"X{i}" for i in range(1, 8)]
        + ["D1", "D2", "D3", "N1", "RETEST"]
        + [f"V{i}" for i in range(1, 6)]
        + [f"D{i}" for i in range(0, 6)]  # log dialects
        + ["§4.4 rule 1", "§4.4 rule 2", "§4.4 rule 3", "§4.2(a)", "§4.2(e)"]
        + ["explicit_none_exclusion", "close_reopen_exclusion", "dependency_aligned_split"]
        + ["invalid", "timed_out", "interrupted", "passed_gates", "header", "single_sk", "name_sequence"]
    )
    assert [c for c in expected if not lookup(c)] == []


def test_entries_are_unique_per_area_and_every_page_exists() -> None:
    keys = [(e.id.lower(), e.area) for e in entries()]
    assert len(keys) == len(set(keys))
    assert all(e.title and e.text and e.where for e in entries())
    for _, page in AREAS.values():
        assert (REPO / "docs" / page).is_file(), page
    raw = json.loads((REPO / "skdbg" / "glossary.json").read_text(encoding="utf-8"))
    assert raw["schema"] == "skdbg.glossary/1" and len(raw["entries"]) == len(entries())


def test_explain_prints_the_entry_case_insensitively() -> None:
    code, out, _ = explain("t4")
    assert code == 0
    assert out.startswith("T4 — handler's first-match PC is only a quote  [Attribution]")
    assert "lowest index" in out and "More: docs/attribution.md" in out
    code, out, _ = explain("R5")
    assert code == 0 and out.startswith("R5 — split at the dependency boundary")
    assert explain("r5")[1] == out


def test_explain_shows_both_meanings_of_a_shared_id() -> None:
    code, out, _ = explain("D1")
    assert code == 0
    first, second = out.split("\n\nD1 — ")
    assert "[Next steps]" in first and "debug_op_exec_trace=1" in first
    assert second.startswith("dialect D1") and "[Log dialects]" in second


def test_explain_section_reference_and_parameterised_status() -> None:
    assert explain("§4.4 rule 3")[1].startswith("§4.4 rule 3 — block the candidate")
    assert explain("4.4 RULE 3")[1] == explain("§4.4 rule 3")[1]
    assert explain("passed_gates(V1..V3)")[1].startswith("passed_gates — ")


def test_explain_without_code_lists_every_id_with_its_title() -> None:
    code, out, _ = explain()
    assert code == 0
    assert "  R5                       split at the dependency boundary" in out
    assert "Routes:" in out and "Codegen:" in out
    listed = [ln.split()[0] for ln in out.splitlines() if ln.startswith("  ")]
    assert len(listed) == len(entries())


@pytest.mark.parametrize("code, near", [("R9", "R7"), ("T10", "T1"), ("sk.bind-mask", "sk.bind-mask-known")])
def test_unknown_code_is_exit_2_with_closest_matches(code: str, near: str) -> None:
    status, out, err = explain(code)
    assert status == 2 and out == ""
    assert f"unknown code {code!r}" in err and near in err.split("closest: ")[1]


def test_closest_prefers_the_same_family() -> None:
    assert closest("R9")[0].startswith("R")


def test_titled_forms() -> None:
    assert titled("R5") == "R5 split at the dependency boundary"
    assert titled("diagnostic_attempt") == "diagnostic_attempt (evidence from a debug run)"
    assert titled("no-such-code") == "no-such-code"
