"""The analysis JSON text with the artifact records written by hand equals ``json.dumps`` of the same
document (issue 18: the artifact list was most of the output's encoding time).

The oracle is the standard library's indented encoder on the very document; inputs are hand-written
(every JSON escape, non-BMP text, lone surrogates of non-UTF-8 file names, values the fast path must
leave to ``json``), drawn by hypothesis, and the analyses of the bundled example scenes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdbg.triage.engine import analyze
from skdbg.triage.jsontext import _dumps, analysis_json_text

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def _oracle(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _doc(artifacts: Any, **scene: Any) -> dict[str, Any]:
    """An analysis-shaped document: keys before and after the scene block that also hold an
    ``artifacts`` key and text resembling the spliced list."""
    return {
        "schema": "skdbg.analysis/1",
        "scene": {"root": ".", "pid": 48213, "rank": None, "device": 3, **scene, "artifacts": artifacts},
        "gate": {"artifacts": [], "note": '\n    "artifacts": []'},
        "run": {"artifacts": [{"kind": "x"}]},
    }


_RECORD = {
    "kind": "bin_file",
    "path": "sk_meta/48213/model_48_1/bin_files/te_add_1.o",
    "sha256": "ab" * 32,
    "mtime": "2026-06-10T14:00:58",
    "size": 4096,
}
_HAND_WRITTEN = [
    [_RECORD],
    [_RECORD, {**_RECORD, "kind": "plog", "size": 0}],
    [{**_RECORD, "path": 'a "quoted" \\ back\tslash\nnew\x00line\x1f\x7f'}],
    [{**_RECORD, "path": "中文/ü/😀/\u2028\u2029"}],
    [{**_RECORD, "path": "bad\udcff\udc80name.o"}],  # a non-UTF-8 file name, as os.fsdecode gives it
    [{**_RECORD, "size": -1}, {**_RECORD, "size": 2**70}],
    [{"only": "one"}],
    # left to json: other value types, an empty record, a bool, a non-str key, a non-dict record
    [{**_RECORD, "size": 1.5}],
    [{**_RECORD, "size": True}],
    [{**_RECORD, "sha256": None}],
    [_RECORD, {}],
    [{1: "x"}],
    [_RECORD, ["a"]],
    [{**_RECORD, "nested": {"a": 1}}],
    [],
]


@pytest.mark.parametrize("artifacts", _HAND_WRITTEN)
def test_hand_written_records_encode_as_json_does(artifacts: list[Any]) -> None:
    doc = _doc(artifacts)
    assert _dumps(doc) == _oracle(doc)


def test_a_scene_block_without_an_artifact_list_encodes_as_json_does() -> None:
    for doc in ({"schema": "x"}, {"scene": None}, {"scene": {"artifacts": "text"}}, {"scene": {"root": "."}}):
        assert _dumps(doc) == _oracle(doc)


_SCALAR = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
_RECORDS = st.lists(st.dictionaries(st.text(max_size=8), _SCALAR, max_size=6), max_size=8)


@given(_RECORDS, st.one_of(st.none(), st.integers()))
def test_any_records_encode_as_json_does(artifacts: list[dict[str, Any]], pid: int | None) -> None:
    doc = _doc(artifacts, pid=pid)
    assert _dumps(doc) == _oracle(doc)


@given(
    st.lists(st.fixed_dictionaries({k: st.text() for k in ("kind", "path", "sha256", "mtime")}), min_size=1)
)
def test_artifact_shaped_records_encode_as_json_does(artifacts: list[dict[str, Any]]) -> None:
    doc = _doc([{**a, "size": i} for i, a in enumerate(artifacts)])
    assert _dumps(doc) == _oracle(doc)


@pytest.mark.parametrize("scene", sorted(p.name for p in SCENES.iterdir() if p.is_dir()))
def test_example_analyses_print_as_json_dumps_writes_them(scene: str) -> None:
    analysis = analyze(SCENES / scene)
    doc = analysis.to_json()
    assert doc["scene"]["artifacts"]  # the spliced path is the one taken
    assert analysis_json_text(analysis) == _oracle(doc)
