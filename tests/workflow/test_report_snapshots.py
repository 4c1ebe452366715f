"""A frozen attempt's report is the report ``skdbg report`` writes, in each language (workflow/freezing.py).

The freeze renders every language at once (triage/report.py ``report_files``: the index, the record and
the JSON documents made once); these tests hold its bytes to the folders ``write_report`` writes one
language at a time, read back from the disk as the freeze used to read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skdbg.pictures.export import faulting_instance, report_pictures
from skdbg.sessions.attempts import REPORT_LANGS
from skdbg.triage.report import REPORT_FILES, report_files, write_report
from skdbg.workflow.freezing import _report_snapshots, analyze_scene

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
JSON_FILES = ("failure_isolation.json", "evidence_index.json", "analysis.json")


@pytest.mark.parametrize("name", ["event-bound-split", "non-sk-fault", "aiv-fault-add-custom"])
def test_the_frozen_report_is_each_languages_report_folder(tmp_path: Path, name: str) -> None:
    ctx, analysis = analyze_scene(SCENES / name)
    pictures = report_pictures(ctx, faulting_instance(ctx), analysis)
    want: dict[str, bytes] = {}
    for lang in REPORT_LANGS:
        first = lang == REPORT_LANGS[0]
        for path in write_report(
            ctx, analysis, tmp_path / lang / "attempt-001", lang=lang, pictures=pictures
        ):
            if path.name in JSON_FILES and not first:
                continue  # the documents are frozen once: the same bytes in every language
            want[path.name if first else f"{lang}/{path.name}"] = path.read_bytes()
    got = _report_snapshots(ctx, analysis, "attempt-001")
    assert list(got) == list(want)  # the same names, in the same order
    assert got == want
    assert set(pictures) and {f"zh/{p}" for p in pictures} <= set(got)


def test_every_language_shares_the_documents_and_names_the_folder(tmp_path: Path) -> None:
    ctx, analysis = analyze_scene(SCENES / "event-bound-split")
    files = report_files(ctx, analysis, report_dir="R1.attempt-002", langs=("en", "zh"))
    assert list(files) == ["en", "zh"]
    assert list(files["en"]) == list(REPORT_FILES) == list(files["zh"])
    for name in JSON_FILES:
        assert files["en"][name] is files["zh"][name]  # made once
    assert json.loads(files["en"]["analysis.json"]) == json.loads(json.dumps(analysis.to_json()))
    assert "R1.attempt-002" in files["en"]["REPORT_INDEX.md"]
    assert files["en"]["FAILURE_SCENE.md"] != files["zh"]["FAILURE_SCENE.md"]  # the labels differ
