"""Every verdict of the bundled and upstream scenes stays exactly as it was (issue 18 acceptance).

Why: issue 18 rewrites how artifacts are read (lazy frames, hashing while reading, a result cache, a new
plog prefilter) without changing what skdbg concludes. The goldens under tests/data/golden/analysis were
captured from the analysis JSON BEFORE those changes; the only field normalised away is each artifact's
``mtime``, which is the checkout time of the working tree, not a property of the scene. Regenerate a golden
only for a deliberate verdict change: ``python tests/test_analysis_golden.py`` (and say why in the commit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from skdbg.scene import NotASceneError, open_scene
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "data" / "golden" / "analysis"


def _is_scene(folder: Path) -> bool:
    """Upstream data folders that hold a failure scene (the codegen goldens and eval lists do not)."""
    try:
        open_scene(folder)
    except NotASceneError:
        return False
    return True


SCENES = sorted(p for p in (REPO / "examples" / "scenes").iterdir() if p.is_dir()) + sorted(
    p for p in (REPO / "tests" / "data" / "upstream").iterdir() if p.is_dir() and _is_scene(p)
)


def _golden_name(scene: Path) -> str:
    return f"{scene.parent.name}__{scene.name}.json"


def normalised(doc: Any) -> Any:
    """The analysis JSON without the fields that vary with the checkout (artifact mtimes)."""
    if isinstance(doc, dict):
        return {k: ("<mtime>" if k == "mtime" else normalised(v)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [normalised(v) for v in doc]
    return doc


def analysis_doc(scene: Path) -> Any:
    return normalised(analyze_context(open_context(scene)).to_json())


@pytest.mark.parametrize("scene", SCENES, ids=[_golden_name(s) for s in SCENES])
def test_analysis_json_matches_the_golden(scene: Path) -> None:
    """The whole analysis JSON (gate, fault, attribution, routes, proposal, artifacts with SHA-256) is unchanged."""
    expected = json.loads((GOLDEN / _golden_name(scene)).read_text(encoding="utf-8"))
    assert analysis_doc(scene) == expected


def test_every_scene_has_a_golden() -> None:
    """A new bundled scene without a golden would silently escape the check."""
    assert sorted(p.name for p in GOLDEN.glob("*.json")) == sorted(_golden_name(s) for s in SCENES)


if __name__ == "__main__":  # regenerate: only for a deliberate, explained verdict change
    for s in SCENES:
        text = json.dumps(analysis_doc(s), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        (GOLDEN / _golden_name(s)).write_text(text, encoding="utf-8")
    sys.exit(0)
