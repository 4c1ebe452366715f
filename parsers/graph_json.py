"""``sk_graph_origin.json`` / ``sk_graph_updated.json`` — the captured task graph (artifacts.md §3.11).

Why: this is where a runtime task becomes a graph node with a kernel name, binary handle and scope
name, and — in ``sk_graph_updated.json`` — where the node that launches an SK carries ``skinfos``
(``scopeId``, ``scopeName``, start/end kernel names): the join between a faulting runtime task and
an SK scope (§6, row 63).

Shape (``SuperKernelGraph::ToJson`` + ``DumpGraphJsonToFile``): root ``version``, ``description``,
``modelId``, ``deviceId``, ``options``, ``totalStreams``, ``totalNodes``, ``streams[]`` of
``{streamIdxInGraph, nodeCount, nodes[]}``; node = ``{nodeId, streamIdxInGraph, nodeIdxInStream,
nodeType, scopeName|null, isScope*, preNodeId|"none", nextNodeId|"none", taskInfo: [ … ]}``.

The per-task parameter object's key varies by release: §3.11 names ``kernelParams``,
``eventParams``, ``valueWriteParams``, ``valueWaitParams``; the ``sk_dump_json.cpp`` revisions in
mirror-cann/graph-autofusion (e.g. @02b96a52) write ``eventRecordParams``, ``eventWaitParams``,
``eventResetParams`` instead of ``eventParams``. Every ``*Params`` key is therefore accepted and
kept verbatim; ``kernelParams`` is additionally typed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.frames import Col, records_frame
from skdbg.parsers.jsonload import (
    as_list,
    as_object,
    get_bool,
    get_hex,
    get_int,
    get_str,
    hex_value,
    is_int,
    join,
    load_json,
    node_ref,
    show,
    type_error,
)

if TYPE_CHECKING:
    import pandas as pd

WHAT = "SK graph JSON"

PARAM_KEYS = (
    "kernelParams",
    "eventParams",
    "eventRecordParams",
    "eventWaitParams",
    "eventResetParams",
    "valueWriteParams",
    "valueWaitParams",
)

_ROOT_KEYS = {
    "version",
    "description",
    "modelId",
    "deviceId",
    "options",
    "totalStreams",
    "totalNodes",
    "streams",
}
_NODE_KEYS = {
    "nodeId",
    "streamIdxInGraph",
    "nodeIdxInStream",
    "nodeType",
    "scopeName",
    "isScopeNode",
    "isScopeBegin",
    "isScopeEnd",
    "isScopePlaceholder",
    "preNodeId",
    "nextNodeId",
    "taskInfo",
    "skinfos",
}
_TASK_KEYS = {"taskId", "streamId", "taskType", "taskTypeInt"}


@dataclass(frozen=True, slots=True)
class ResolvedFunc:
    """``resolvedFuncs[i]`` — one split binary's AIC/AIV entry (index 0 = AIC, 1 = AIV)."""

    func_addr: tuple[int | None, int | None]
    func_offset: tuple[int | None, int | None]
    prefetch_cnt: tuple[int | None, int | None]
    symbol_bind: tuple[str | None, str | None]


@dataclass(frozen=True, slots=True)
class KernelParams:
    """Typed view of ``kernelParams`` (addresses are ints; absent keys are None)."""

    func_name: str | None
    func_handle: int | None
    bin_handle: int | None
    num_blocks: int | None
    devargs: int | None
    args_size: int | None
    kernel_type: str | None
    kernel_type_int: int | None
    task_ratio: tuple[int, ...]
    need_mix_kernel_split: bool | None
    is_simt_op: bool | None
    resolved_num: int | None
    resolved_funcs: tuple[ResolvedFunc, ...]


@dataclass(frozen=True, slots=True)
class GraphTask:
    """One element of a node's ``taskInfo`` array."""

    src: Source
    task_id: int | None
    stream_id: int | None
    task_type: str | None
    task_type_int: int | None
    params_kind: str | None  # which ``*Params`` key was present
    params: dict[str, Any]  # that object verbatim
    kernel: KernelParams | None


@dataclass(frozen=True, slots=True)
class SkInfo:
    """``skinfos`` on the node that launches an SK (sk_graph_updated.json only)."""

    src: Source
    scope_id: int
    scope_name: str | None
    start_kernel_func_name: str | None
    end_kernel_func_name: str | None


@dataclass(frozen=True, slots=True)
class GraphNode:
    src: Source
    node_id: int
    stream_idx: int | None
    node_idx_in_stream: int | None
    node_type: str | None
    scope_name: str | None  # null → None
    is_scope_node: bool | None
    is_scope_begin: bool | None
    is_scope_end: bool | None
    is_scope_placeholder: bool | None
    pre_node_id: int | None  # "none" → None
    next_node_id: int | None
    tasks: tuple[GraphTask, ...]
    skinfo: SkInfo | None

    @property
    def kernel(self) -> KernelParams | None:
        for t in self.tasks:
            if t.kernel is not None:
                return t.kernel
        return None

    @property
    def func_name(self) -> str | None:
        k = self.kernel
        return k.func_name if k is not None else None


@dataclass(frozen=True, slots=True)
class GraphStream:
    src: Source
    stream_idx: int | None
    node_count: int | None
    node_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GraphOption:
    """One SK option in ``options``: key = option name, value ``{"name", "type", "value"}``."""

    src: Source
    key: str
    name: str | None
    type: str | None
    value: Any


@dataclass(slots=True)
class GraphFile:
    file: str
    version: str | None
    description: str | None
    model_id: str | None
    device_id: int | None
    total_streams: int | None
    total_nodes: int | None
    options_raw: dict[str, Any] | None
    options: list[GraphOption]
    streams: list[GraphStream]
    nodes: list[GraphNode]
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    @property
    def by_node_id(self) -> dict[int, GraphNode]:
        return {n.node_id: n for n in self.nodes}

    def node(self, node_id: int) -> GraphNode | None:
        return self.by_node_id.get(node_id)

    def tasks(self) -> Iterator[GraphTask]:
        for n in self.nodes:
            yield from n.tasks

    def to_frame(self) -> pd.DataFrame:
        """One row per node; see :data:`NODE_FRAME_COLUMNS`."""

        ctx = {"model_id": self.model_id}
        return records_frame(((ctx, n) for n in self.nodes), NODE_FRAME_COLS)


def _of(part: str, name: str, column: str | None = None) -> Col:
    """A column read from one part of the node: its first task, its kernel or its SK info (None
    without that part); named ``column`` (default ``name``)."""

    def get(n: Any) -> Any:
        obj = (n.tasks[0] if n.tasks else None) if part == "task" else getattr(n, part)
        return getattr(obj, name) if obj else None

    return Col(column or name, get)


NODE_FRAME_COLS = (
    Col("file", lambda n: n.src.file),
    Col("line", lambda n: n.src.line),
    Col("json_path", lambda n: n.src.json_path),
    Col("model_id"),
    Col("node_id"),
    Col("stream_idx"),
    Col("node_idx_in_stream"),
    Col("node_type"),
    Col("scope_name"),
    Col("is_scope_node"),
    Col("is_scope_begin"),
    Col("is_scope_end"),
    Col("is_scope_placeholder"),
    Col("pre_node_id"),
    Col("next_node_id"),
    _of("task", "task_id"),
    _of("task", "stream_id"),
    _of("task", "task_type"),
    _of("task", "params_kind"),
    _of("kernel", "func_name"),
    _of("kernel", "bin_handle"),
    _of("kernel", "func_handle"),
    _of("kernel", "num_blocks"),
    _of("kernel", "kernel_type"),
    _of("skinfo", "scope_id", "sk_scope_id"),
    _of("skinfo", "scope_name", "sk_scope_name"),
    _of("skinfo", "start_kernel_func_name", "sk_start_func"),
    _of("skinfo", "end_kernel_func_name", "sk_end_func"),
)
NODE_FRAME_COLUMNS = [c.name for c in NODE_FRAME_COLS]


def parse_graph_json(path: str | os.PathLike[str]) -> GraphFile:
    """Parse ``sk_graph_origin.json`` or ``sk_graph_updated.json`` (same schema, §3.11)."""
    file, doc = load_json(path, what=WHAT)
    return graph_from_json(doc, file)


def graph_from_json(doc: Any, file: str) -> GraphFile:
    root = as_object(doc, file, "")
    unrec: list[Unrecognized] = []
    gaps: list[Gap] = []
    for key in root:
        if key not in _ROOT_KEYS:
            unrec.append(_unknown(file, "", key, root[key], "graph_json:root"))
    model = root.get("modelId")
    if model is not None and not isinstance(model, str) and not is_int(model):
        raise type_error(file, "modelId", "a string or an integer", model)
    options_raw: dict[str, Any] | None = None
    options: list[GraphOption] = []
    if "options" in root:
        options_raw = as_object(root["options"], file, "options")
        options = _options(options_raw, file)
    streams: list[GraphStream] = []
    nodes: list[GraphNode] = []
    for i, item in enumerate(as_list(root.get("streams", []), file, "streams")):
        spath = join("streams", i)
        sobj = as_object(item, file, spath)
        for key in sobj:
            if key not in ("streamIdxInGraph", "nodeCount", "nodes"):
                unrec.append(_unknown(file, spath, key, sobj[key], "graph_json:stream"))
        sidx = get_int(sobj, "streamIdxInGraph", file, spath)
        count = get_int(sobj, "nodeCount", file, spath)
        ids: list[int] = []
        npath = join(spath, "nodes")
        for j, nitem in enumerate(as_list(sobj.get("nodes", []), file, npath)):
            node = _node(nitem, file, join(npath, j), unrec)
            nodes.append(node)
            ids.append(node.node_id)
        if count is not None and count != len(ids):
            gaps.append(
                Gap(
                    "count_mismatch",
                    f"stream {sidx}: nodeCount={count} but {len(ids)} node(s) listed",
                    Source(file, json_path=join(spath, "nodeCount")),
                )
            )
        streams.append(GraphStream(Source(file, json_path=spath), sidx, count, tuple(ids)))
    total_nodes = get_int(root, "totalNodes", file, "")
    total_streams = get_int(root, "totalStreams", file, "")
    if total_nodes is not None and total_nodes != len(nodes):
        gaps.append(
            Gap(
                "count_mismatch",
                f"totalNodes={total_nodes} but {len(nodes)} node(s) listed",
                Source(file, json_path="totalNodes"),
            )
        )
    if total_streams is not None and total_streams != len(streams):
        gaps.append(
            Gap(
                "count_mismatch",
                f"totalStreams={total_streams} but {len(streams)} stream(s) listed",
                Source(file, json_path="totalStreams"),
            )
        )
    seen: set[int] = set()
    for n in nodes:
        if n.node_id in seen:
            gaps.append(Gap("duplicate_node", f"nodeId {n.node_id} listed more than once", n.src))
        seen.add(n.node_id)
    return GraphFile(
        file=file,
        version=get_str(root, "version", file, ""),
        description=get_str(root, "description", file, ""),
        model_id=None if model is None else str(model),
        device_id=get_int(root, "deviceId", file, ""),
        total_streams=total_streams,
        total_nodes=total_nodes,
        options_raw=options_raw,
        options=options,
        streams=streams,
        nodes=nodes,
        unrecognized=unrec,
        gaps=gaps,
    )


def _options(obj: dict[str, Any], file: str) -> list[GraphOption]:
    """SK options object: ``{name: {"name","type","value"}}`` plus ``inner_options`` (kept raw in
    ``options_raw``); the pre-SK placeholder ``{"numOptions": 0, "options": []}`` yields none."""
    out: list[GraphOption] = []
    for key, value in obj.items():
        if not isinstance(value, dict) or "value" not in value:
            continue
        path = join("options", key)
        out.append(
            GraphOption(
                Source(file, json_path=path),
                key,
                get_str(value, "name", file, path),
                get_str(value, "type", file, path),
                value["value"],
            )
        )
    return out


def _node(value: Any, file: str, path: str, unrec: list[Unrecognized]) -> GraphNode:
    obj = as_object(value, file, path)
    for key in obj:
        if key not in _NODE_KEYS:
            unrec.append(_unknown(file, path, key, obj[key], "graph_json:node"))
    node_id = get_int(obj, "nodeId", file, path, required=True)
    assert node_id is not None
    tasks: list[GraphTask] = []
    tpath = join(path, "taskInfo")
    for k, item in enumerate(as_list(obj.get("taskInfo", []), file, tpath)):
        tasks.append(_task(item, file, join(tpath, k), unrec))
    skinfo = None
    if "skinfos" in obj:
        skinfo = _skinfo(obj["skinfos"], file, join(path, "skinfos"))
    return GraphNode(
        src=Source(file, json_path=path),
        node_id=node_id,
        stream_idx=get_int(obj, "streamIdxInGraph", file, path),
        node_idx_in_stream=get_int(obj, "nodeIdxInStream", file, path),
        node_type=get_str(obj, "nodeType", file, path),
        scope_name=get_str(obj, "scopeName", file, path, nullable=True),
        is_scope_node=get_bool(obj, "isScopeNode", file, path),
        is_scope_begin=get_bool(obj, "isScopeBegin", file, path),
        is_scope_end=get_bool(obj, "isScopeEnd", file, path),
        is_scope_placeholder=get_bool(obj, "isScopePlaceholder", file, path),
        pre_node_id=node_ref(obj, "preNodeId", file, path),
        next_node_id=node_ref(obj, "nextNodeId", file, path),
        tasks=tuple(tasks),
        skinfo=skinfo,
    )


def _task(value: Any, file: str, path: str, unrec: list[Unrecognized]) -> GraphTask:
    obj = as_object(value, file, path)
    kind: str | None = None
    params: dict[str, Any] = {}
    for key in obj:
        if key in _TASK_KEYS:
            continue
        if key in PARAM_KEYS or key.endswith("Params"):
            if kind is not None:
                unrec.append(_unknown(file, path, key, obj[key], "graph_json:task (second *Params)"))
                continue
            kind = key
            params = as_object(obj[key], file, join(path, key))
        else:
            unrec.append(_unknown(file, path, key, obj[key], "graph_json:task"))
    kernel = _kernel(params, file, join(path, "kernelParams")) if kind == "kernelParams" else None
    return GraphTask(
        src=Source(file, json_path=path),
        task_id=get_int(obj, "taskId", file, path),
        stream_id=get_int(obj, "streamId", file, path),
        task_type=get_str(obj, "taskType", file, path),
        task_type_int=get_int(obj, "taskTypeInt", file, path),
        params_kind=kind,
        params=params,
        kernel=kernel,
    )


def _kernel(obj: dict[str, Any], file: str, path: str) -> KernelParams:
    ratio: list[int] = []
    if "taskRatio" in obj:
        rpath = join(path, "taskRatio")
        for i, v in enumerate(as_list(obj["taskRatio"], file, rpath)):
            if not is_int(v):
                raise type_error(file, join(rpath, i), "an integer", v)
            ratio.append(int(v))
    resolved: list[ResolvedFunc] = []
    if "resolvedFuncs" in obj:
        rfpath = join(path, "resolvedFuncs")
        for i, item in enumerate(as_list(obj["resolvedFuncs"], file, rfpath)):
            resolved.append(_resolved(item, file, join(rfpath, i)))
    return KernelParams(
        func_name=get_str(obj, "funcName", file, path),
        func_handle=get_hex(obj, "funcHandle", file, path),
        bin_handle=get_hex(obj, "binHandle", file, path),
        num_blocks=get_int(obj, "numBlocks", file, path),
        devargs=get_hex(obj, "devargs", file, path),
        args_size=get_int(obj, "argsSize", file, path),
        kernel_type=get_str(obj, "kernelType", file, path),
        kernel_type_int=get_int(obj, "kernelTypeInt", file, path),
        task_ratio=tuple(ratio),
        need_mix_kernel_split=_flag(obj, "needMixKernelSplit", file, path),
        is_simt_op=_flag(obj, "isSimtOp", file, path),
        resolved_num=get_int(obj, "resolvedNum", file, path),
        resolved_funcs=tuple(resolved),
    )


def _flag(obj: dict[str, Any], key: str, file: str, path: str) -> bool | None:
    """A C++ bool that nlohmann may emit as ``true``/``false`` or (from a uint8 field) ``0``/``1``."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if is_int(value) and value in (0, 1):
        return bool(value)
    raise type_error(file, join(path, key), "true/false or 0/1", value)


def _pair(obj: dict[str, Any], key: str, file: str, path: str, conv: str) -> tuple[Any, Any]:
    """A two-element ``[aic, aiv]`` array; ``conv`` is "hex", "int" or "str"."""
    if key not in obj:
        return (None, None)
    p = join(path, key)
    items = as_list(obj[key], file, p)
    if len(items) != 2:
        raise type_error(file, p, "a two-element array [aic, aiv]", items)
    out: list[Any] = []
    for i, v in enumerate(items):
        ip = join(p, i)
        if conv == "hex":
            out.append(hex_value(v, file, ip))
        elif conv == "int":
            if not is_int(v):
                raise type_error(file, ip, "an integer", v)
            out.append(int(v))
        else:
            if not isinstance(v, str):
                raise type_error(file, ip, "a string", v)
            out.append(v)
    return (out[0], out[1])


def _resolved(value: Any, file: str, path: str) -> ResolvedFunc:
    obj = as_object(value, file, path)
    return ResolvedFunc(
        func_addr=_pair(obj, "funcAddr", file, path, "hex"),
        func_offset=_pair(obj, "funcOffset", file, path, "hex"),
        prefetch_cnt=_pair(obj, "prefetchCnt", file, path, "int"),
        symbol_bind=_pair(obj, "symbolBind", file, path, "str"),
    )


def _skinfo(value: Any, file: str, path: str) -> SkInfo:
    obj = as_object(value, file, path)
    scope_id = get_int(obj, "scopeId", file, path, required=True)
    assert scope_id is not None
    return SkInfo(
        src=Source(file, json_path=path),
        scope_id=scope_id,
        scope_name=get_str(obj, "scopeName", file, path, nullable=True),
        start_kernel_func_name=get_str(obj, "startKernelFuncName", file, path),
        end_kernel_func_name=get_str(obj, "endKernelFuncName", file, path),
    )


def _unknown(file: str, path: str, key: str, value: Any, context: str) -> Unrecognized:
    return Unrecognized(Source(file, json_path=join(path, key)), f"{key}: {show(value)}", context)
