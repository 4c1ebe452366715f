"""Test helpers shared by the triage stage tests (importable because pytest puts ``tests/`` on the path).

Why: the attribution, confidence and routing tests exercise one stage each, so they build the
:class:`Localization` input directly from a scene's first incident instead of running ``localize``;
the gate and localisation tests share one small two-stream scene.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skdbg.scenebuilder.scene import BuiltScene, Event, FaultCore, Kernel, SceneSpec, build_scene
from skdbg.triage.context import TriageContext
from skdbg.triage.model import FaultInfo
from skdbg.triage.skview import all_instances
from skdbg.triage.stages import Localization

DIALECTS = ("D0", "D1", "D2", "D3", "D4", "D5")

#: a two-stream SK: the faulting AIC child, an event pair, a side-stream child
TWO_STREAM_CHILDREN = [
    Kernel("RmsNorm_5c1d", "AIV_ONLY"),
    Kernel("QuantMatmul_5b21", "AIC_ONLY"),
    Event("EventNotify", event_id=1, stream=0),
    Event("EventWait", event_id=1, stream=1),
    Kernel("RopeCache_77", "AIV_ONLY", stream=1),
]
TWO_STREAM_CORE = FaultCore(core_id=3, core_type="AIC", pc=("child", 1), state=("OP_LAUNCHED", 1))


def make_loc(ctx: TriageContext, *, kind: str = "sk", phase: str = "device_fault") -> Localization:
    """A Localization as ``localize`` would build it for the scene's first incident (pid 48213)."""
    incs = ctx.evidence.incidents
    inc = incs[0] if incs else None
    insts = list(all_instances(ctx.evidence))
    sid = inc.sk_scope_id if inc is not None else None
    inst = next((i for i in insts if i.scope_id == sid), None) if sid is not None else None
    if inst is None and len(insts) == 1:
        inst = insts[0]
    dialect = inc.dialect if inc is not None else None
    fault = FaultInfo(
        kind=kind,
        phase=phase,
        entry=inc.entry if inc is not None else None,
        op_trace=inc.op_trace if inc is not None else None,
        dialect=dialect,
        scope_id=sid,
    )
    return Localization(
        pid=48213,
        fault=fault,
        incident=inc,
        incidents=list(incs),
        instance=inst,
        instance_rule="scope_id" if inst is not None else "none",
        dialect_known=dialect in DIALECTS,
    )


def build_two_stream(tmp_path: Path, **kw: Any) -> BuiltScene:
    """The two-stream scene with ``kw`` overriding any SceneSpec field."""
    spec: dict[str, Any] = {"children": TWO_STREAM_CHILDREN, "cores": [TWO_STREAM_CORE]}
    spec.update(kw)
    return build_scene(SceneSpec(**spec), tmp_path / "scene")
