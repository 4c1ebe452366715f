"""Hang scenes for the wait-for graph's pictures (tests/pictures, tests/tui), built with the scene builder."""

from __future__ import annotations

from pathlib import Path

from skdbg.scenebuilder.scene import FaultCore, Kernel, SceneSpec, build_scene


def circular_hang(tmp: Path) -> Path:
    spec = SceneSpec(
        children=[
            Kernel("QuantMatmul_a1", "AIC_ONLY", sync_after=6),
            Kernel("Gelu_b2", "AIV_ONLY", sync_after=5),
            Kernel("Add_c3", "AIV_ONLY"),
        ],
        cores=[
            FaultCore(24, "AIC", pc=("entry",), state=("OP_FINISHED", 0)),
            FaultCore(25, "AIV", pc=("entry",), state=("OP_FINISHED", 1)),
        ],
        fault="sk",
        handler="full",
        failure_phase="hang",
        runtime_timeout=True,
    )
    return build_scene(spec, tmp / "scene").root
