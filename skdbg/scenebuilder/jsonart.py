"""Writers for the JSON artifacts of a failure scene, byte-compatible with their producers.

Why: no public sample of ``sk_task_queue.json``, the graph JSON or a real ``sk_prof`` file exists
(artifacts.md §3.14), so parser tests, the example scene and benchmarks build them here from the
format specification:

* ``sk_task_queue.json`` and the graph JSON are nlohmann ``ordered_json`` ``dump(2)``: keys in
  insertion order, two-space indent, ``": "``/``","`` separators, no trailing newline, UTF-8
  unescaped (§3.10, §3.11) — which is exactly ``json.dumps(indent=2, ensure_ascii=False)``;
* ``sk_prof_device_<d>.json`` is produced like ``SkEventRecorder`` does it: the file starts as
  ``[{}]`` and every event seeks two bytes back and writes ``<body>},\\n{}]`` (§5). Names are
  written raw, as the recorder's ``%s`` does (no JSON escaping);
* ``run.json``, the environment probe and ``source_sites.json`` follow scene-layout.md.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ----------------------------------------------------------------------------------------------
# common


def dump_ordered(doc: Any) -> str:
    """nlohmann ``ordered_json::dump(2)`` rendering of ``doc`` (dict order preserved)."""
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _write(path: str | os.PathLike[str], text: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


# ----------------------------------------------------------------------------------------------
# sk_task_queue.json (§3.10)


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One ``TaskInfo``; ``entries`` beyond four are not written (the dumper stops at 4)."""

    node_index: int
    type: str = "FUNC"
    num_blocks: int = 0
    args: int = 0
    debug_options: int = 0
    entries: tuple[int, ...] = ()
    entry_cnt: int | None = None  # default: len(entries)


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """One queue; ``tasks=None`` omits ``taskQue`` (queue never created)."""

    tasks: tuple[TaskSpec, ...] | None = ()
    num_blocks: int | None = None  # default: max task numBlocks
    func_cnt: int | None = None  # default: number of FUNC tasks


@dataclass(frozen=True, slots=True)
class ScopeSpec:
    scope_id: int
    aic: QueueSpec = field(default_factory=QueueSpec)
    aiv: QueueSpec = field(default_factory=QueueSpec)


def _task_json(t: TaskSpec) -> dict[str, Any]:
    cnt = len(t.entries) if t.entry_cnt is None else t.entry_cnt
    return {
        "nodeIndex": t.node_index,
        "type": t.type,
        "numBlocks": t.num_blocks,
        "entryCnt": cnt,
        "args": f"{t.args:#x}",
        "debugOptions": t.debug_options,
        "entries": [f"{e:#x}" for e in t.entries[: min(cnt, 4)]],
    }


def _queue_json(q: QueueSpec) -> dict[str, Any]:
    tasks = q.tasks or ()
    out: dict[str, Any] = {
        "numBlocks": q.num_blocks
        if q.num_blocks is not None
        else max((t.num_blocks for t in tasks), default=0),
        "funcCnt": q.func_cnt if q.func_cnt is not None else sum(1 for t in tasks if t.type == "FUNC"),
    }
    if q.tasks is not None:
        out["taskQue"] = {"taskCnt": len(q.tasks), "taskInfos": [_task_json(t) for t in q.tasks]}
    return out


def scope_json(scope: ScopeSpec) -> dict[str, Any]:
    return {
        "scopeId": scope.scope_id,
        "taskQueues": {"aic": _queue_json(scope.aic), "aiv": _queue_json(scope.aiv)},
    }


def task_queue_json(model_id: str, scopes: Sequence[ScopeSpec]) -> str:
    """The whole ``sk_task_queue.json`` text; scopes are written in the order given (the runtime's
    order is an unordered map's, so tests pass them unsorted)."""
    doc = {
        "version": "1.0",
        "description": "SuperKernel Task Queue Information",
        "modelId": model_id,
        "scopeCount": len(scopes),
        "scopes": [scope_json(s) for s in scopes],
    }
    return dump_ordered(doc)


def task_queue_root_json(aic: QueueSpec, aiv: QueueSpec, scope_id: int | None = None) -> str:
    """The root-level variant accepted by the sk-model-analysis contract (§3.10), with or without
    ``scopeId``."""
    doc: dict[str, Any] = {}
    if scope_id is not None:
        doc["scopeId"] = scope_id
    doc["taskQueues"] = {"aic": _queue_json(aic), "aiv": _queue_json(aiv)}
    return dump_ordered(doc)


def write_task_queue(path: str | os.PathLike[str], model_id: str, scopes: Sequence[ScopeSpec]) -> Path:
    return _write(path, task_queue_json(model_id, scopes))


# ----------------------------------------------------------------------------------------------
# sk_graph_origin.json / sk_graph_updated.json (§3.11)


def kernel_params(
    func_name: str,
    *,
    func_handle: int,
    bin_handle: int,
    num_blocks: int = 24,
    kernel_type: str = "AIC_ONLY",
    kernel_type_int: int = 0,
    task_ratio: tuple[int, int] = (1, 0),
    devargs: int = 0x12C100400000,
    args_size: int = 64,
    resolved_funcs: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A ``kernelParams`` object with the §3.11 key order (addresses as ``0x`` hex strings)."""
    out: dict[str, Any] = {
        "funcName": func_name,
        "funcHandle": f"{func_handle:#x}",
        "numBlocks": num_blocks,
        "cap": 0,
        "devargs": f"{devargs:#x}",
        "argsSize": args_size,
        "isHostArgs": False,
        "launchKernelCfg": "0x0",
        "binHandle": f"{bin_handle:#x}",
        "kernelTypeInt": kernel_type_int,
        "kernelType": kernel_type,
        "needMixKernelSplit": False,
        "isSimtOp": False,
        "taskRatio": list(task_ratio),
        "opInfoPtr": "0x0",
        "opInfoSize": 0,
        "dynUbufSize": 0,
        "allocUbufSize": 0,
        "hasDynUbufSize": False,
        "hasAllocUbufSize": False,
        "taskGrp": "0x0",
        "resolvedNum": len(resolved_funcs),
    }
    if resolved_funcs:
        out["resolvedFuncs"] = [dict(r) for r in resolved_funcs]
    return out


def resolved_func(
    func_addr: tuple[int, int], func_offset: tuple[int, int], prefetch: tuple[int, int], bind: tuple[str, str]
) -> dict[str, Any]:
    """One ``resolvedFuncs`` element, in the insertion order of ``AddResolvedFuncsToJson``."""
    return {
        "funcAddr": [f"{func_addr[0]:#x}", f"{func_addr[1]:#x}"],
        "funcOffset": [f"{func_offset[0]:#x}", f"{func_offset[1]:#x}"],
        "prefetchCnt": list(prefetch),
        "symbolBind": list(bind),
    }


@dataclass(frozen=True, slots=True)
class GraphNodeSpec:
    """One graph node. ``params_kind``/``params``: e.g. ``"kernelParams"`` + :func:`kernel_params`,
    or ``"eventRecordParams"`` + ``{"eventId": "0x…", "eventFlag": 0}``."""

    node_id: int
    node_type: str = "KERNEL"
    params_kind: str | None = "kernelParams"
    params: Mapping[str, Any] | None = None
    task_type: str = "KERNEL"
    task_type_int: int = 0
    stream_id: int = 0
    scope_name: str | None = None
    is_scope_node: bool = False
    is_scope_begin: bool = False
    is_scope_end: bool = False
    is_scope_placeholder: bool = False
    skinfos: Mapping[str, Any] | None = None


def skinfos(scope_id: int, scope_name: str | None, start_func: str, end_func: str) -> dict[str, Any]:
    """The ``skinfos`` object of an SK launch node (empty scope name → null)."""
    return {
        "scopeId": scope_id,
        "scopeName": scope_name or None,
        "startKernelFuncName": start_func,
        "endKernelFuncName": end_func,
    }


def graph_json(
    model_id: str,
    streams: Sequence[Sequence[GraphNodeSpec]],
    *,
    device_id: int = 0,
    options: Mapping[str, Any] | None = None,
) -> str:
    """Graph JSON text. Nodes of a stream are listed in the order given; ``preNodeId``/``nextNodeId``
    link consecutive nodes of a stream (``"none"`` at the ends), ``nodeIdxInStream`` is the position,
    as ``UpdateNodeRelations`` builds them."""
    streams_json = []
    total = 0
    for sidx, nodes in enumerate(streams):
        nodes_json = []
        for pos, n in enumerate(nodes):
            pre = nodes[pos - 1].node_id if pos > 0 else "none"
            nxt = nodes[pos + 1].node_id if pos + 1 < len(nodes) else "none"
            task: dict[str, Any] = {
                "taskId": n.node_id,
                "streamId": n.stream_id,
                "taskType": n.task_type,
                "taskTypeInt": n.task_type_int,
            }
            if n.params_kind is not None:
                task[n.params_kind] = dict(n.params or {})
            node: dict[str, Any] = {
                "nodeId": n.node_id,
                "streamIdxInGraph": sidx,
                "nodeIdxInStream": pos,
                "nodeType": n.node_type,
                "scopeName": n.scope_name,
                "isScopeNode": n.is_scope_node,
                "isScopeBegin": n.is_scope_begin,
                "isScopeEnd": n.is_scope_end,
                "isScopePlaceholder": n.is_scope_placeholder,
                "preNodeId": pre,
                "nextNodeId": nxt,
                "taskInfo": [task],
            }
            if n.skinfos is not None:
                node["skinfos"] = dict(n.skinfos)
            nodes_json.append(node)
        total += len(nodes)
        streams_json.append({"streamIdxInGraph": sidx, "nodeCount": len(nodes), "nodes": nodes_json})
    doc = {
        "version": "1.0",
        "description": "SuperKernel Raw Task Information from modelRI",
        "modelId": model_id,
        "deviceId": device_id,
        "options": dict(options) if options is not None else {"numOptions": 0, "options": []},
        "totalStreams": len(streams),
        "totalNodes": total,
        "streams": streams_json,
    }
    return dump_ordered(doc)


def sk_option(name: str, value: Any, type_: str = "int") -> dict[str, Any]:
    """One entry of the SK options object: ``{"name", "type", "value"}``."""
    return {"name": name, "type": type_, "value": value}


def write_graph_json(
    path: str | os.PathLike[str], model_id: str, streams: Sequence[Sequence[GraphNodeSpec]], **kw: Any
) -> Path:
    return _write(path, graph_json(model_id, streams, **kw))


# ----------------------------------------------------------------------------------------------
# sk_prof_device_<d>.json (§5)

#: DAV_2201: core ids >= 25 are AIV (``CoreIsAiv`` in sk_event_recorder.cpp).
AIV_FIRST_CORE = 25


def core_pid(core: int) -> str:
    return "AIV" if core >= AIV_FIRST_CORE else "AIC"


def prof_child_body(
    block_idx: int,
    block_num: int,
    func_name: str,
    core: int,
    ts_us: float,
    dur_us: float,
    *,
    model_id: str = "48_1",
    sk_id: int = 3,
    node_id: int = 0,
    legacy_model_ri: int | None = None,
) -> str:
    """The recorder's child record body (everything between the array's ``{`` and ``}``)."""
    model = f'"modelRI":{legacy_model_ri}' if legacy_model_ri is not None else f'"modelId":"{model_id}"'
    return (
        f'"ph":"X","name":"[{block_idx % 256}/{block_num % 256}]{func_name}","pid":"{core_pid(core)}",'
        f'"tid":{core},"ts":{ts_us:f},"dur":{dur_us:f},"args":{{{model},"skId":{sk_id},"nodeId":{node_id}}}'
    )


def prof_sk_body(
    block_idx: int,
    block_num: int,
    sk_name: str,
    core: int,
    ts_us: float,
    dur_us: float,
    *,
    model_id: str = "48_1",
    sk_id: int = 3,
    legacy_model_ri: int | None = None,
) -> str:
    """The recorder's SK-level record body: ``"[b/n] <skName>"`` (space; empty name → trailing space)."""
    model = f'"modelRI":{legacy_model_ri}' if legacy_model_ri is not None else f'"modelId":"{model_id}"'
    return (
        f'"ph":"X","name":"[{block_idx % 256}/{block_num % 256}] {sk_name}","pid":"{core_pid(core)}",'
        f'"tid":{core},"ts":{ts_us:f},"dur":{dur_us:f},"args":{{{model},"skId":{sk_id}}}'
    )


class SkProfWriter:
    """Appends events exactly like ``SkEventRecorder::Write*EventToJson``: open → ``[{}]``; each event
    seeks to two bytes before the end and writes ``<body>},\\n{}]``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: io.BufferedRandom | None = self.path.open("w+b")
        self._fh.write(b"[{}]")
        self._fh.flush()

    def append(self, body: str) -> None:
        if self._fh is None:
            raise ValueError("SkProfWriter is closed")
        self._fh.seek(-2, os.SEEK_END)
        self._fh.write(body.encode("utf-8") + b"},\n{}]")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SkProfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sk_prof_bytes(bodies: Iterable[str]) -> Iterable[bytes]:
    """The same bytes :class:`SkProfWriter` produces, generated sequentially (for big benchmark
    files): ``[`` + ``{<body>},\\n`` per event + ``{}]``."""
    yield b"["
    for b in bodies:
        yield b"{" + b.encode("utf-8") + b"},\n"
    yield b"{}]"


def write_sk_prof(path: str | os.PathLike[str], bodies: Iterable[str]) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("wb") as fh:
        for chunk in sk_prof_bytes(bodies):
            fh.write(chunk)
    return p


def trace_events_json(events: Sequence[Mapping[str, Any]]) -> str:
    """The ``{"traceEvents": […]}`` object shape of the auto-tune fixture."""
    return dump_ordered({"traceEvents": [dict(e) for e in events]})


# ----------------------------------------------------------------------------------------------
# run.json, env/check_environment.json, source_sites.json (scene-layout.md)


def example_run(**overrides: Any) -> dict[str, Any]:
    """The run.json example of scene-layout.md; keyword arguments replace (``None`` removes) fields."""
    doc: dict[str, Any] = {
        "experiment_id": "E7",
        "round_id": "E7-BASE",
        "attempt": 1,
        "command": "torchrun --nproc_per_node=8 infer.py --config configs/e7.yaml",
        "cwd": ".",
        "rank": 3,
        "device": 3,
        "pid": 48213,
        "start": "2026-08-03T14:08:50.000",
        "end": "2026-08-03T14:09:40.000",
        "exit": {"status": 1, "signal": None, "timeout": False},
        "failure_phase": "device_fault",
        "candidate": {
            "scope_names": ["decoder.layer.0.mlp"],
            "marker_file": "src/model.py",
            "super_kernel_optimize_options": {},
            "super_kernel_debug_options": {},
            "source_revision": "9c1e77d",
            "config_fingerprint": "sha256:5d0c9a7e",
        },
        "env_probe": "env/check_environment.json",
        "source_sites": "source_sites.json",
        "cache_writers": {},
        "failing_path": {"prompt_id": "p-0173", "step": 41},
    }
    for key, value in overrides.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def write_run_json(path: str | os.PathLike[str], doc: Mapping[str, Any]) -> Path:
    return _write(path, json.dumps(dict(doc), indent=2, ensure_ascii=False) + "\n")


def env_probe(
    *,
    ready: bool = True,
    explicit_none_accepted: bool = True,
    debug_accepted: Mapping[str, Sequence[Any]] | None = None,
    optimize_accepted: Mapping[str, Sequence[Any]] | None = None,
) -> dict[str, Any]:
    """The wrapper probe of scene-layout.md (defaults = the documented example)."""
    if debug_accepted is None:
        debug_accepted = {
            "debug_op_exec_trace": [1],
            "debug_sync_all": [1],
            "debug_cross_core_sync_check": [1],
            "debug_per_op_max_core_num": [1],
        }
    if optimize_accepted is None:
        optimize_accepted = {"auto_op_parallel": [1]}
    return {
        "ready": ready,
        "runtime_environment": {"loaded": True},
        "option_probe_status": "completed",
        "scope_capabilities": {
            "explicit_none_exclusion": {
                "accepted": explicit_none_accepted,
                "status": "accepted" if explicit_none_accepted else "rejected",
                "semantic_validation": "not_proven_by_api_probe",
            }
        },
        "options": {
            "debug_options": {k: {"accepted_values": list(v)} for k, v in debug_accepted.items()},
            "optimize_options": {k: {"accepted_values": list(v)} for k, v in optimize_accepted.items()},
        },
    }


def write_env_probe(path: str | os.PathLike[str], doc: Mapping[str, Any]) -> Path:
    return _write(path, json.dumps(dict(doc), indent=2, ensure_ascii=False) + "\n")


def write_source_sites(path: str | os.PathLike[str], sites: Mapping[int, int]) -> Path:
    """``{"<nodeId>": <line>, …}`` (keys are strings in JSON)."""
    return _write(path, json.dumps({str(k): v for k, v in sites.items()}, indent=2) + "\n")
