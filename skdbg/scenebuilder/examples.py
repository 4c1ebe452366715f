"""The bundled example scenes of issue item 10, each a :class:`SceneSpec` built by :mod:`.scene`.

Why: the triage engine needs small, committed scenes that each exercise one confidence grade or route, so a
reader can run ``skdbg analyze examples/scenes/<name>`` and see the rule that decides it. Every scene is
described here once and regenerated with ONE command::

    python -m skdbg.scenebuilder.examples [DEST]     # DEST defaults to examples/scenes

Only the scene folders named in :data:`SCENES` are replaced; the hand-built ``aiv-fault-add-custom`` scene
(:mod:`.example`) and the README beside them are never touched. ``tests/scenebuilder/test_example_scenes.py``
checks that the committed copies are byte-identical to a fresh build. The expected verdict of each scene
(:attr:`ExampleScene.expected`) is documentation for ``examples/scenes/README.md``; the engine's assertions
on these scenes live with the engine's tests.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from skdbg.scenebuilder.scene import (
    ALL_FILES,
    BuiltScene,
    Event,
    FaultCore,
    Kernel,
    SceneSpec,
    SkDef,
    build_scene,
    model_source,
)


@dataclass(frozen=True)
class ExampleScene:
    """One bundled scene: its name, how it is built and what triage is expected to conclude (with rule ids)."""

    name: str
    spec: Callable[[], SceneSpec]
    expected: str
    shows: str
    #: files written after the build, relative path → text (a re-launch's edited model source)
    extra_files: Callable[[], dict[str, str]] | None = None


def high_single_stream() -> SceneSpec:
    """Single stream, op_trace D5: core 30 runs child 2 (E1) and its PC lies only in child 2's range (E2)."""
    return SceneSpec(
        name="high-single-stream",
        children=[
            Kernel("RmsNorm_5c1d07aa", "AIV_ONLY"),
            Kernel("QuantBatchMatmulV3_8ab2c4f1", "AIC_ONLY", sync_after=3),
            Kernel("SwiGlu_41d9e0", "AIV_ONLY"),
            Kernel("Cast_9f3e21", "AIV_ONLY"),
        ],
        cores=[FaultCore(30, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
        dialect="D5",
        op_trace=True,
        debug_options={"debug_op_exec_trace": 1},
        noise_lines=20,  # the op_trace all-core listing is large: keep the scene under 200 KB
    )


def duplicate_symbol_medium() -> SceneSpec:
    """Children 1 and 3 share one binary (identical DFX ranges, T4); no op_trace; COND names task 3 (E3)."""
    return SceneSpec(
        name="duplicate-symbol-medium",
        children=[
            Kernel("RmsNorm_5c1d07aa", "AIV_ONLY"),
            Kernel("MatMulV3_e07b3c19", "AIC_ONLY"),
            Kernel("Add_7c1e", "AIV_ONLY"),
            Kernel("MatMulV3_e07b3c19", "AIC_ONLY", shares_binary_with=1),
            Kernel("Cast_9f3e21", "AIV_ONLY"),
        ],
        cores=[FaultCore(5, "AIC", pc=("child", 3), state=("OP_LAUNCHED", 3))],
        dialect="D5",
        op_trace=False,
        noise_lines=40,
    )


def entry_only_low() -> SceneSpec:
    """A timeout: the handler printed only its anchor line (entry name); no DFX table, no task queue."""
    return SceneSpec(
        name="entry-only-low",
        children=[
            Kernel("RmsNorm_5c1d07aa", "AIV_ONLY"),
            Kernel("QuantBatchMatmulV3_8ab2c4f1", "AIC_ONLY"),
            Kernel("Cast_9f3e21", "AIV_ONLY"),
        ],
        fault="none",
        handler="anchor_only",
        dialect="D5",
        op_trace=False,
        files=ALL_FILES - {"task_queue", "device_args"},
        failure_phase="timeout",
        noise_lines=40,
    )


def event_bound_split() -> SceneSpec:
    """Two streams: the faulting child 4 (stream 1, E1+E2) is gated by EventWait 1 whose EventNotify is on
    stream 0, and it writes a cache read by child 5 on stream 0 (run.json cache_writers). The fragment
    {notify, wait, child 4, reader 5} is a contiguous run of statements with fusible children on both sides,
    so a dependency-aligned split is representable (§4.4 rule 2)."""
    return SceneSpec(
        name="event-bound-split",
        children=[
            Kernel("RmsNorm_5c1d07aa", "AIV_ONLY"),
            Kernel("QuantBatchMatmulV3_8ab2c4f1", "AIC_ONLY"),
            Event("EventNotify", event_id=1, stream=0),
            Event("EventWait", event_id=1, stream=1),
            Kernel("KvRopeCache_77a0", "AIV_ONLY", stream=1),
            Kernel("FlashAttentionScore_3b8e", "AIV_ONLY"),
            Kernel("Cast_9f3e21", "AIV_ONLY"),
        ],
        cores=[FaultCore(30, "AIV", pc=("child", 4), state=("OP_LAUNCHED", 4))],
        dialect="D5",
        op_trace=True,
        debug_options={"debug_op_exec_trace": 1},
        cache_writers={104: [105]},
        noise_lines=12,  # the op_trace all-core listing is large: keep the scene under 200 KB
    )


def non_sk_fault() -> SceneSpec:
    """A device fault in a standalone kernel whose name resembles the SK child Add_7c1e (T2): not an SK fault."""
    return SceneSpec(
        name="non-sk-fault",
        children=[
            Kernel("RmsNorm_5c1d07aa", "AIV_ONLY"),
            Kernel("Add_7c1e", "AIV_ONLY"),
            Kernel("Cast_9f3e21", "AIV_ONLY"),
        ],
        cores=[FaultCore(30, "AIV")],
        fault="non_sk",
        non_sk_kernel="Add_7c1e_kernel0",
        dialect="D5",
        noise_lines=40,
    )


#: the round the re-launched candidate belongs to: the failed attempt's round (run.json) + the first exclusion
FIXED_ROUND = "EX1-BASE-X1"
#: position of the child the proposal of ``high-single-stream`` excludes (SwiGlu_41d9e0, task 2)
_EXCLUDED = 2


def high_single_stream_fixed() -> SceneSpec:
    """The re-launch of ``high-single-stream`` with its proposal applied: SwiGlu_41d9e0 runs unfused
    (IN_UNFUSIBLE_SCOPE) between the SK of the children before it and a new SK (scope 8) of the child after
    it; a new process (pid 50001) an hour later, exit 0, no fault, diagnostics off, round EX1-BASE-X1."""
    spec = high_single_stream()
    k = list(spec.children)
    excluded = k[_EXCLUDED]
    assert isinstance(excluded, Kernel)
    return replace(
        spec,
        name="high-single-stream-fixed",
        children=k[:_EXCLUDED],
        extra_sks=[SkDef(8, spec.scope_name, k[_EXCLUDED + 1 :])],
        unfusible=[(excluded, "IN_UNFUSIBLE_SCOPE")],
        cores=[],
        pid=50001,
        seed=50001,
        fault="none",
        op_trace=False,
        debug_options={},
        run_start=datetime(2026, 6, 10, 15, 12, 4, 0),
        run_end=datetime(2026, 6, 10, 15, 15, 31, 0),
        build_ts=datetime(2026, 6, 10, 15, 12, 8, 912000),
        fault_ts=datetime(2026, 6, 10, 15, 15, 29, 77000),
        run={
            "round_id": FIXED_ROUND,
            "attempt": 1,
            "failure_phase": None,  # a clean run has no failure phase
            "exit": {"status": 0, "signal": None, "timeout": False},
        },
    )


def high_single_stream_fixed_source() -> dict[str, str]:
    """``src/model.py`` of the failed attempt with the proposal's marker edits: ``super_kernel_scope_begin(None)``
    before the excluded child's statement and ``super_kernel_scope_end(None)`` after it (mechanism
    explicit_none_exclusion; the env probe accepts it)."""
    spec = high_single_stream()
    text, sites = model_source(spec)
    child = spec.children[_EXCLUDED]
    assert isinstance(child, Kernel)
    node_id = 100 + _EXCLUDED
    line = sites[node_id]
    lines = text.splitlines(keepends=True)
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    begin = (
        f"{indent}torch.npu.super_kernel_scope_begin(None)  # skdbg: exclude {child.func_name} "
        f"(task {_EXCLUDED}, nodeId {node_id})\n"
    )
    end = f"{indent}torch.npu.super_kernel_scope_end(None)  # skdbg: end of exclusion\n"
    edited = lines[: line - 1] + [begin, lines[line - 1], end] + lines[line:]
    return {"src/model.py": "".join(edited)}


SCENES: tuple[ExampleScene, ...] = (
    ExampleScene(
        "high-single-stream",
        high_single_stream,
        expected="high (C3): E1 and a unique E2 on core 30 name task 2 (SwiGlu_41d9e0); the task queue has FUNC "
        "task 2 whose entries contain the matched entry address",
        shows="the best case: op_trace on (debug_op_exec_trace), one stream, one exception core",
    ),
    ExampleScene(
        "duplicate-symbol-medium",
        duplicate_symbol_medium,
        expected="medium (C4): the PC matches tasks 1 and 3 (shared binary, E2 ambiguous; the handler's "
        "'Found in node[1]' is the T4 first match); COND OP_LAUNCHED opIndex=3 gives E3=3 and the device args / "
        "fused nodes agree (E4)",
        shows="trap T4 (first-match PC) with a duplicate symbol resolved by the COND register",
    ),
    ExampleScene(
        "entry-only-low",
        entry_only_low,
        expected="low (C6): only the SK entry is known (anchor line, no DFX table, no task queue, no device "
        "args); next step D1: rerun with debug_op_exec_trace",
        shows="what skdbg says when a hang/timeout leaves only 'Exception is from superkernel function'",
    ),
    ExampleScene(
        "event-bound-split",
        event_bound_split,
        expected="high (C3) on task 4 (KvRopeCache_77a0); the fragment adds the attached EventWait, its "
        "EventNotify partner and the cross-stream cache reader FlashAttentionScore_3b8e: proposal "
        "dependency_aligned_split (route R5), or blocked per §4.4 if the split cannot be represented",
        shows="event and cache safety constraints (§4.2, §4.3) shaping the exclusion proposal",
    ),
    ExampleScene(
        "non-sk-fault",
        non_sk_fault,
        expected="n/a, route X3: the faulting kernel Add_7c1e_kernel0 is not an SK entry; its resemblance to "
        "the child Add_7c1e is not evidence (T2)",
        shows="a generic device fault next to an SK that did not fault",
    ),
    ExampleScene(
        "high-single-stream-fixed",
        high_single_stream_fixed,
        expected="the second attempt of high-single-stream: `skdbg verify high-single-stream "
        "high-single-stream-fixed` passes V1-V3 (V4 not needed, V5 needs three clean runs)",
        shows="a re-launched candidate (new pid, later start, the proposal applied to src/model.py) for the "
        "session walkthrough",
        extra_files=high_single_stream_fixed_source,
    ),
)

DEFAULT_DEST = Path(__file__).resolve().parents[2] / "examples" / "scenes"


def build_examples(dest: Path, names: Sequence[str] | None = None) -> dict[str, BuiltScene]:
    """Build the scenes (all, or ``names``) under ``dest/<name>``; each folder is replaced."""
    out: dict[str, BuiltScene] = {}
    for sc in SCENES:
        if names is not None and sc.name not in names:
            continue
        target = Path(dest) / sc.name
        if target.exists():
            shutil.rmtree(target)
        out[sc.name] = build_scene(sc.spec(), target)
        for rel, text in (sc.extra_files() if sc.extra_files is not None else {}).items():
            dest_file = target / rel
            dest_file.parent.mkdir(parents=True, exist_ok=True)
            dest_file.write_text(text, encoding="utf-8", newline="\n")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m skdbg.scenebuilder.examples",
        description="write the bundled example scenes: " + ", ".join(s.name for s in SCENES),
    )
    ap.add_argument("dest", nargs="?", type=Path, default=DEFAULT_DEST, help=f"default: {DEFAULT_DEST}")
    args = ap.parse_args(argv)
    dest: Path = args.dest
    if dest.exists() and not dest.is_dir():
        print(f"refusing to write into {dest}: not a directory", file=sys.stderr)
        return 2
    for sc in SCENES:
        target = dest / sc.name
        # replace only what is recognisably a scene (or empty): never wipe an arbitrary directory
        if target.exists() and (
            not target.is_dir() or (any(target.iterdir()) and not (target / "run.json").is_file())
        ):
            print(f"refusing to replace {target}: not an example scene folder (no run.json)", file=sys.stderr)
            return 2
    for name, built in build_examples(dest).items():
        print(f"{name}: {built.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
