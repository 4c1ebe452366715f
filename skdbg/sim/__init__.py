"""skdbg.sim — the SK device emulator (docs/sim.md).

A *model* (``model.json`` + its marker file ``src/model.py``) describes an ordered op graph; running it
reads the scope markers, plans the SKs with the codegen planner, injects a fault and writes what a
real device run writes (plog, ``sk_meta/<pid>/…``) through the scene builder. Public API::

    from skdbg.sim import SimError, SimModel, SimResult, load_model, run_job, write_scene
"""

from __future__ import annotations

from skdbg.sim.api import SimResult, run_job, write_scene
from skdbg.sim.errors import SimError
from skdbg.sim.load import load_model
from skdbg.sim.ops import FaultSpec, SimModel, SimOp

__all__ = ["FaultSpec", "SimError", "SimModel", "SimOp", "SimResult", "load_model", "run_job", "write_scene"]
