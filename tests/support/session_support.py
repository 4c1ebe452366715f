"""Shared by the session tests: the re-launched candidate of the bundled ``high-single-stream`` failure.

Why here: the acceptance loop (tests/workflow/test_loop.py) and the CLI loop build the same NEW scene —
the shape tests/triage/test_verify.py uses for V1–V3 — from the proposal the ledger recorded.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skdbg.parsers.markers import apply_edits_text as apply_edits
from skdbg.scenebuilder.examples import high_single_stream
from skdbg.scenebuilder.scene import SkDef, build_scene
from skdbg.triage.model import MarkerEdit

FAILING = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "high-single-stream"


def build_fixed_scene(dest: Path, round_id: str, proposal: dict[str, object], pid: int = 50001) -> Path:
    """The re-launched candidate: SwiGlu excluded (unfusible, IN_UNFUSIBLE_SCOPE), before/after SKs,
    a new pid, exit 0, no fault, and ``src/model.py`` = the failed attempt's source + the edits."""
    spec = high_single_stream()
    k = spec.children
    new = build_scene(
        replace(
            spec,
            name="fixed",
            children=k[:2],
            extra_sks=[SkDef(8, "decoder.layer.0.mlp", [k[3]])],
            unfusible=[(k[2], "IN_UNFUSIBLE_SCOPE")],
            pid=pid,
            fault="none",
            op_trace=False,
            debug_options={},
            run={"round_id": round_id, "attempt": 1, "exit": {"status": 0, "signal": None, "timeout": False}},
        ),
        dest,
    )
    edits = [MarkerEdit(**e) for e in proposal["marker_edits"]]  # type: ignore[arg-type]
    source = (FAILING / "src" / "model.py").read_text()
    (new.root / "src" / "model.py").write_text(apply_edits(source, edits))
    return new.root
