"""Shared helpers of the emulator tests: write a synthetic model, emulate it, analyse the scene."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skdbg.sim import SimModel, SimResult, load_model, write_scene
from skdbg.sim.models import synthetic, write_model
from skdbg.triage.context import open_context
from skdbg.triage.engine import analyze_context
from skdbg.triage.model import Analysis


def model(
    tmp: Path, n: int, culprit: int | Sequence[int], kind: str, *, streams: int = 1, probability: float = 0.5
) -> SimModel:
    doc, src = synthetic(n, culprit, kind, streams=streams, probability=probability)
    return load_model(write_model(tmp / f"model-{kind}-{n}", doc, src, force=True))


def scene(
    m: SimModel,
    out: Path,
    *,
    seed: int = 1,
    debug: Mapping[str, Any] | None = None,
    source: Path | None = None,
    dialect: str = "D5",
    run: Mapping[str, Any] | None = None,
) -> tuple[SimResult, Analysis]:
    opts = {"super_kernel_debug_options": dict(debug or {})}
    res = write_scene(m, out, seed=seed, options=opts, source=source, dialect=dialect, run=run, force=True)
    return res, analyze_context(open_context(out))


def node_of(m: SimModel, name: str) -> int:
    return m.op_named(name).node_id
