"""The bundled example failure scene ``aiv-fault-add-custom``: the §1.7 incident as a whole scene on disk.

Why: no real AOT SK failure scene is public (artifacts.md §3.14). The README walkthrough, the CLI smoke
tests and new users need one coherent scene whose files agree with each other the way a real run's do.
Every file is rendered by the existing scene-builder writers from ONE description (the constants and
:func:`_children` below), so the numbers cannot drift apart:

* the child ELFs are written first (:func:`skdbg.scenebuilder.elf.child_elf`) and every device address is
  derived from their layout — ``entryAic/Aiv[j] = binDevAddr + sknlFunc[j]`` (§4.6), ``Function size`` =
  the variant's ``st_size``, so resolving core 30's ``CurrentPC`` through ``bin_files/`` lands in
  ``add_custom``'s split-2 SK variant (§4.7) exactly where the plog's DfxInfo says;
* the SK handler block (plog at INFO level, and its copy in ``super_kernel.log``) is
  :func:`skdbg.scenebuilder.sk_incident.to_plog_lines` of an :class:`IncidentSpec` built from the same
  nodes, tasks and addresses as ``sk_device_args.log`` and ``sk_task_queue.json``;
* the runtime's own fault lines (§1.5) name the same core, PCs, args base, stream and entry.

StartPC, add_custom's size 0x1a2c, the fault offset 0xa58 inside the variant, the args layout and COND
are those of §1.7; the child entry addresses (and so CurrentPC) differ from the §1.7 text, which the spec
marks as invented: a child image holds its four SK variants back to back, so the entries are spaced by
the variant size rounded to the ELF writer's 0x100 alignment (the cube and Cast children get small sizes
to keep the ELFs tiny).
Output is deterministic (fixed seed, fixed clock), so the committed copy can be compared byte for byte.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from skdbg.scenebuilder import jsonart, skmeta
from skdbg.scenebuilder.elf import ChildKernel, bin_file_name, child_elf, entry_elf
from skdbg.scenebuilder.plog import (
    PROC,
    errcode_msg,
    noise_lines,
    runtime_incident_lines,
    runtime_line,
)
from skdbg.scenebuilder.sk_incident import (
    CoreSpec,
    IncidentSpec,
    example_incident,
    render,
    to_filelog_lines,
    to_plog_lines,
)
from skdbg.scenebuilder.sk_incident import NodeSpec as DfxNodeSpec
from skdbg.scenebuilder.sk_incident import TaskSpec as QueueTaskSpec

SCENE_NAME = "aiv-fault-add-custom"
PID = 48213
DEVICE = 0
RANK = 3
MODEL_ID = "48_1"
SCOPE_ID = 3
SCOPE_NAME = "decoder.layer.0.mlp"
ENTRY = "sk_entry_mix11_op_trace"
FAULT_CORE = 30
STREAM_ID = 2  # runtime stream of the SK task and graph stream of its children
RUNTIME_TASK_ID = 1
TID = skmeta.DEFAULT_TID

# Clock of the run (local time of the machine, the clock of the plog too — scene-layout.md).
PROCESS_START = datetime(2026, 6, 10, 14, 0, 58, 123000)
BUILD_TS = datetime(2026, 6, 10, 14, 1, 2, 345000)
FAULT_TS = datetime(2026, 6, 10, 14, 3, 21, 518402)  # first SK handler line (§1.7)
RUNTIME_FAULT_TS = FAULT_TS - timedelta(microseconds=302)  # runtime core report precedes the callbacks
RUN_START = "2026-06-10T14:00:58.000"
RUN_END = "2026-06-10T14:03:24.000"

# Entry binary: the four mix/aiv/aic entries back to back; StartPC = base + offset of ENTRY (§4.6).
ENTRY_NAMES = ("sk_entry_aic", "sk_entry_aiv", "sk_entry_mix11", ENTRY)
ENTRY_FUNC_SIZE = 0x400
ENTRY_BASE = 0x124080A03000
START_PC = ENTRY_BASE + ENTRY_NAMES.index(ENTRY) * ENTRY_FUNC_SIZE  # 0x124080a03c00 as in §1.7
ENTRY_BIN_HDL = 0xAAAAF3B00010
ENTRY_FUNC_HDL = 0xAAAAF3B00C40
FAULT_OFFSET_IN_VARIANT = 0xA58  # CurrentPC − Entry address of §1.7

# sk device args layout of §1.7 (header 48 B, queues, counters at 2176, dfx at 6976, events at 7480).
ARGS_DEV = 0x12C100400000
HEADER_OFFSETS = (48, 944, 2176, 6976, 7480)
TOTAL_SIZE = 7512

SOURCE_FILE = "src/model.py"


@dataclass(frozen=True, slots=True)
class Child:
    """One fused child: graph node, device image and handles, in one place."""

    node_id: int
    func_name: str
    kernel_type: str  # AIC_ONLY | AIV_ONLY
    base: int  # binDevAddr (device base of the child image)
    size: int  # aicSize/aivSize = st_size of each SK variant
    num_blocks: int
    bin_hdl: int
    func_hdl: int
    dev_args: int
    variant_names: tuple[str, ...] = ()

    @property
    def core(self) -> str:
        return "AIC" if self.kernel_type == "AIC_ONLY" else "AIV"

    def kernel(self) -> ChildKernel:
        return ChildKernel(
            self.func_name,
            self.base,
            variant_names=self.variant_names,
            variant_size=self.size,
            variant_bind="WEAK",
        )


def _children() -> tuple[Child, ...]:
    add_variants = tuple(f"_Z13add_custom_skILj{i}EEvPK13AddCustomArgsPN2sk12SkSystemArgsE" for i in range(4))
    return (
        Child(120, "QuantBatchMatmulV3_8ab2c4f1_1", "AIC_ONLY", 0x124080B04800, 0x980, 24,
              0xAAAAF3C21A50, 0xAAAAF3C22110, 0x12C100410000),
        Child(121, "add_custom", "AIV_ONLY", 0x124080C01000, 0x1A2C, 48,
              0xAAAAF3D00A10, 0xAAAAF3D01C80, 0x12C100412000, add_variants),
        Child(122, "Cast_9f3e21_2", "AIV_ONLY", 0x124080D01000, 0x610, 48,
              0xAAAAF3D80B20, 0xAAAAF3D81D90, 0x12C100414000),
    )  # fmt: skip


FAULT_NODE = 1  # node index of add_custom
FAULT_SPLIT = FAULT_CORE % 4  # 30 % 4 = 2 (§1.6.1)

# Nodes of the captured graph outside the scope (unfusible, NOT_IN_SCOPE).
OUTSIDE = (
    skmeta.NodeSpec(117, stream_id=STREAM_ID, node_idx=0, func_name="static_kernel_RmsNorm_5c1d07aa",
                    num_blocks=48, vec_num=48, bin_hdl=0xAAAAF3A90C30, func_hdl=0xAAAAF3A91E40),
    skmeta.NodeSpec(125, stream_id=STREAM_ID, node_idx=4, func_name="static_kernel_MatMulV3_e07b3c19",
                    kernel_type="AIC_ONLY", task_ratio=(1, 0), num_blocks=24, cube_num=24, vec_num=0,
                    bin_hdl=0xAAAAF3E10F00, func_hdl=0xAAAAF3E11A20),
)  # fmt: skip


# ------------------------------------------------------------------------------------------ model


@dataclass(frozen=True, slots=True)
class _Built:
    """Everything derived from the ELF layouts, shared by all writers."""

    children: tuple[Child, ...]
    elves: dict[str, bytes]  # bin_files name -> bytes
    entries: tuple[tuple[int, int, int, int], ...]  # per child: the four SK variant addresses
    offsets: tuple[tuple[int, int, int, int], ...]  # per child: sknlFunc[0..3]
    symbols: tuple[tuple[str, ...], ...]  # per child: the four variant symbols
    current_pc: int


def _build_images() -> _Built:
    children = _children()
    elves: dict[str, bytes] = {}
    entries: list[tuple[int, int, int, int]] = []
    offsets: list[tuple[int, int, int, int]] = []
    symbols: list[tuple[str, ...]] = []
    for c in children:
        data, layout = child_elf(c.kernel())
        elves[bin_file_name(c.func_name, c.base)] = data
        offs = tuple(o for _n, o, _s in layout.variants)
        if len(offs) != 4 or any(s != c.size for _n, _o, s in layout.variants):
            raise ValueError(f"{c.func_name}: the ELF writer must place four variants of size 0x{c.size:x}")
        offsets.append((offs[0], offs[1], offs[2], offs[3]))
        entries.append((c.base + offs[0], c.base + offs[1], c.base + offs[2], c.base + offs[3]))
        symbols.append(tuple(n for n, _o, _s in layout.variants))
    elves[f"sk_entry_0x{ENTRY_BASE:X}.o"] = entry_elf(ENTRY_NAMES, size=ENTRY_FUNC_SIZE)
    pc = entries[FAULT_NODE][FAULT_SPLIT] + FAULT_OFFSET_IN_VARIANT
    return _Built(children, elves, tuple(entries), tuple(offsets), tuple(symbols), pc)


def _graph_node(c: Child, idx: int, *, built: bool) -> skmeta.NodeSpec:
    """The child as ``Format()`` prints it; ``built`` adds the device args assigned at build time."""
    aic = c.kernel_type == "AIC_ONLY"
    return skmeta.NodeSpec(
        c.node_id,
        stream_id=STREAM_ID,
        node_idx=idx + 1,
        func_name=c.func_name,
        kernel_type=c.kernel_type,
        task_ratio=(1, 0) if aic else (0, 1),
        num_blocks=c.num_blocks,
        cube_num=c.num_blocks if aic else 0,
        vec_num=0 if aic else c.num_blocks,
        bin_hdl=c.bin_hdl,
        func_hdl=c.func_hdl,
        dev_args=c.dev_args if built else None,
    )


# Task queues of §1.7: (node index, type, numBlocks, args). SYNC args = SkCoreSyncType (§3.9).
AIC_QUEUE = ((0, "FUNC", 24, None), (0, "SYNC", 0, 0x3), (0, "SYNC", 0, 0x6))
AIV_QUEUE = ((0, "SYNC", 0, 0x5), (1, "FUNC", 48, None), (2, "FUNC", 48, None), (2, "SYNC", 0, 0x4))


def _queue(
    b: _Built, rows: Sequence[tuple[int, str, int, int | None]]
) -> list[tuple[int, str, int, int, tuple[int, ...]]]:
    """Resolve FUNC args/entries from the child table: (idx, type, blk, args, entries)."""
    out: list[tuple[int, str, int, int, tuple[int, ...]]] = []
    for idx, typ, blk, args in rows:
        if typ == "FUNC":
            out.append((idx, typ, blk, b.children[idx].dev_args, b.entries[idx]))
        else:
            out.append((idx, typ, blk, args if args is not None else 0, ()))
    return out


def _incident(b: _Built) -> IncidentSpec:
    """The §1.7 incident re-addressed to this scene's images: same layout, dialect D5, core 30 in node 1."""
    nodes = []
    for c, ent in zip(b.children, b.entries, strict=True):
        aic = c.kernel_type == "AIC_ONLY"
        nodes.append(
            DfxNodeSpec(
                c.bin_hdl,
                c.func_hdl,
                aic_size=c.size if aic else 0,
                aiv_size=0 if aic else c.size,
                num_blocks=c.num_blocks,
                cube_num=c.num_blocks if aic else 0,
                vec_num=0 if aic else c.num_blocks,
                origin_name=c.func_name,
                entry_aic=ent if aic else (0, 0, 0, 0),
                entry_aiv=(0, 0, 0, 0) if aic else ent,
            )
        )
    return example_incident(
        entry=ENTRY,
        dialect="D5",
        pid=PID,
        proc=PROC,
        tid=TID,
        start=FAULT_TS,
        scope_id=SCOPE_ID,
        model_ids=(MODEL_ID,),
        args_dev=ARGS_DEV,
        args_len=TOTAL_SIZE,
        aic_que_offset=HEADER_OFFSETS[0],
        aiv_que_offset=HEADER_OFFSETS[1],
        counter_offset=HEADER_OFFSETS[2],
        dfx_offset=HEADER_OFFSETS[3],
        total_size=TOTAL_SIZE,
        nodes=tuple(nodes),
        aic_tasks=tuple(QueueTaskSpec(i, t, n, a) for i, t, n, a, _e in _queue(b, AIC_QUEUE)),
        aiv_tasks=tuple(QueueTaskSpec(i, t, n, a) for i, t, n, a, _e in _queue(b, AIV_QUEUE)),
        cores=(
            CoreSpec(
                FAULT_CORE,
                "AIV",
                START_PC,
                b.current_pc,
                match=(FAULT_NODE, FAULT_SPLIT),
                sk_symbol=b.symbols[FAULT_NODE][FAULT_SPLIT],
                sk_bind="WEAK",
                func_offset=b.offsets[FAULT_NODE][FAULT_SPLIT],
            ),
        ),
        entry_bin_hdl=ENTRY_BIN_HDL,
        sk_func_name=_sk_spec(b).func_name,
    )


def _sk_spec(b: _Built) -> skmeta.SkSpec:
    """The scheduled scope as the sk_meta printers see it (fused nodes, device args)."""

    def tasks(rows: Sequence[tuple[int, str, int, int | None]]) -> list[skmeta.TaskSpec]:
        # relatedType = kernel type of the node the task belongs to (idx → nodeId, §3.9); inferred for SYNC
        return [
            skmeta.TaskSpec(
                typ,
                idx,
                node_id=b.children[idx].node_id,
                related_type=b.children[idx].kernel_type,
                blk=blk,
                entries=entries,
                args=args,
            )
            for idx, typ, blk, args, entries in _queue(b, rows)
        ]

    dfx = []
    for c, ent in zip(b.children, b.entries, strict=True):
        aic = c.kernel_type == "AIC_ONLY"
        dfx.append(
            skmeta.DfxSpec(
                bin=c.bin_hdl,
                ori=c.func_hdl,
                aic_size=c.size if aic else 0,
                aiv_size=0 if aic else c.size,
                num_blocks=c.num_blocks,
                cube_num=c.num_blocks if aic else 0,
                vec_num=0 if aic else c.num_blocks,
                entry_aic=ent if aic else (0, 0, 0, 0),
                entry_aiv=(0, 0, 0, 0) if aic else ent,
            )
        )
    return skmeta.SkSpec(
        SCOPE_ID,
        SCOPE_NAME,
        [_graph_node(c, i, built=True) for i, c in enumerate(b.children)],
        aic_tasks=tasks(AIC_QUEUE),
        aiv_tasks=tasks(AIV_QUEUE),
        dfx=dfx,
        aic_cap=len(AIC_QUEUE),
        aiv_cap=len(AIV_QUEUE),
        header_offsets=HEADER_OFFSETS,
        total_size=TOTAL_SIZE,
    )


# ------------------------------------------------------------------------------------------ sk_meta


def _style(ts: datetime, src_file: str, level: str = "INFO") -> skmeta.LogStyle:
    return skmeta.LogStyle(ts=ts, pid=PID, tid=TID, level=level, src_file=src_file)


def _build_facts(b: _Built, sk: skmeta.SkSpec, model_rel: str, ts: datetime) -> list[str]:
    """super_kernel.log build facts of §3.3: bind map, child ↔ binDevAddr, split symbols, dumps, entry."""
    recs: list[tuple[str, str]] = []
    for c, offs, ent, syms in zip(b.children, b.offsets, b.entries, b.symbols, strict=True):
        aic = c.kernel_type == "AIC_ONLY"
        size = len(b.elves[bin_file_name(c.func_name, c.base)])
        recs.append(("InitSuperKernelBindMap", f"binHdl=0x{c.bin_hdl:x}, metaNum=1, payloadSize=52"))
        recs.append(
            (
                "InitSuperKernelBindMap",
                f"[0] cap=0, globalFunc=0x0, skFunc[0]=0x{offs[0]:x}, skFunc[1]=0x{offs[1]:x}, "
                f"skFunc[2]=0x{offs[2]:x}, skFunc[3]=0x{offs[3]:x}",
            )
        )
        recs.append(
            (
                "GetSubKernelAddr",
                f"funcName={c.func_name}, binDevAddr=0x{c.base:x}, binDevSize={size}, "
                f"aicAddr=0x{c.base if aic else 0:x}, aivAddr=0x{0 if aic else c.base:x}",
            )
        )
        recs.append(("GetSubKernelAddr", "aicOffset=0x0, aivOffset=0x0"))
        for j in range(4):
            recs.append(
                ("GetSplitSymbol", f"split[{j}] {c.core} symbol={syms[j]}, size=0x{c.size:x}, bind=WEAK")
            )
        for j in range(4):
            a0, a1 = (ent[j], 0) if aic else (0, ent[j])
            p0, p1 = (0x10, 0) if aic else (0, 0x8)
            recs.append(
                (
                    "GetSplitSymbol",
                    f"split[{j}] funcAddr[0]=0x{a0:x}, funcAddr[1]=0x{a1:x}, prefetchCnt[0]=0x{p0:x}, "
                    f"prefetchCnt[1]=0x{p1:x}, cap=0",
                )
            )
    recs.append(
        (
            "GenEntryInfo",
            "GenEntryInfo: enableDebug=0, enableProfiling=0, enableOpTrace=1, enableEarlyStart=0, useSimtEntry=0",
        )
    )
    for i, n in enumerate(sk.nodes):
        recs.append(("BuildTaskQueue", f"index={i}, nodeType=KERNEL, nodeInfo={skmeta.render_node(n)}"))
    recs += [("ReorderTaskNodes", m) for m in skmeta.reordered_nodes_msgs(sk.nodes)]
    recs.append(
        (
            "ScheduleScope",
            f"schedule scope: build finished, entryType=MIX_AIC_1_1, entryFuncHandle=0x{ENTRY_FUNC_HDL:x}, "
            f"skFuncName={sk.func_name}",
        )
    )
    for c in b.children:
        name = bin_file_name(c.func_name, c.base)
        recs.append(
            (
                "DumpKernelBinaries",
                f"Dumped kernel binary: {model_rel}/bin_files/{name}, size={len(b.elves[name])}, codeSegAddr={c.base}",
            )
        )
    entry_name = f"sk_entry_0x{ENTRY_BASE:X}.o"
    recs.append(
        (
            "DumpKernelBinaries",
            f"Dumped SK entry binary: {model_rel}/bin_files/{entry_name}, size={len(b.elves[entry_name])}, "
            f"codeSegAddr={ENTRY_BASE}",
        )
    )
    return skmeta.super_kernel_log_lines(recs, _style(ts, "sk_node.cpp"))


def _write_sk_meta(model_dir: Path, b: _Built, spec: IncidentSpec, sk: skmeta.SkSpec) -> None:
    """The model directory of §3.1; dedicated-file lines are repeated in super_kernel.log (§3.2)."""
    step = timedelta(milliseconds=20)
    in_scope = [_graph_node(c, i, built=False) for i, c in enumerate(b.children)]
    graph = [OUTSIDE[0], *in_scope, OUTSIDE[1]]
    detail = skmeta.node_detail_lines(
        [
            skmeta.NodeDetailSpec(
                n, "KERNEL", scope_flags="1" if n in in_scope else "0", is_fusible=n in in_scope
            )
            for n in graph
        ],
        _style(BUILD_TS, "sk_graph.cpp"),
    )
    snapshot = skmeta.ScopeSnapshotSpec(
        SCOPE_ID,
        in_scope,
        scope_bit_flags="1",
        scope_names=SCOPE_NAME,
        break_info="breakReason=NONE",
        streams=[(0, in_scope[0].node_id, in_scope[-1].node_id, len(in_scope))],
    )
    split = skmeta.scope_split_lines(
        [[skmeta.PassSpec("InitialScopeSplitPass", [snapshot])]],
        skmeta.PassSpec("ScopeSplitPipelineFinal", [snapshot]),
        _style(BUILD_TS + step, "sk_scope_split.cpp"),
    )
    fail = skmeta.fail_reasons_lines(
        [skmeta.UnfusibleSpec(n, "NOT_IN_SCOPE") for n in OUTSIDE],
        [skmeta.OriginalScopeSpec(SCOPE_ID, "1", SCOPE_NAME, [n.node_id for n in in_scope])],
        [skmeta.FusedScopeSpec(SCOPE_ID, "1", [n.node_id for n in in_scope], scope_names=SCOPE_NAME)],
        style=_style(BUILD_TS + 2 * step, "sk_graph.cpp"),
    )
    model_rel = f"sk_meta/{PID}/{model_dir.name}"
    facts = _build_facts(b, sk, model_rel, BUILD_TS + 3 * step)
    fused = skmeta.fused_nodes_lines([sk], _style(BUILD_TS + 4 * step, "sk_optimizer.cpp"))
    args = skmeta.device_args_lines([sk], style=_style(BUILD_TS + 5 * step, "sk_task_builder.cpp", "DEBUG"))
    skmeta.write_lines(model_dir / "sk_node_detail.log", detail)
    skmeta.write_lines(model_dir / "sk_scope_split.log", split)
    skmeta.write_lines(model_dir / "sk_fusion_fail_reasons.log", fail)
    skmeta.write_lines(model_dir / "sk_fused_nodes.log", fused)
    skmeta.write_lines(model_dir / "sk_device_args.log", args)
    skmeta.write_lines(
        model_dir / "super_kernel.log",
        [*detail, *split, *fail, *facts, *fused, *args, *to_filelog_lines(spec)],
    )
    jsonart.write_task_queue(
        model_dir / "sk_task_queue.json",
        MODEL_ID,
        [
            jsonart.ScopeSpec(
                SCOPE_ID,
                aic=jsonart.QueueSpec(
                    tuple(jsonart.TaskSpec(i, t, n, a, entries=e) for i, t, n, a, e in _queue(b, AIC_QUEUE))
                ),
                aiv=jsonart.QueueSpec(
                    tuple(jsonart.TaskSpec(i, t, n, a, entries=e) for i, t, n, a, e in _queue(b, AIV_QUEUE))
                ),
            )
        ],
    )
    bins = model_dir / "bin_files"
    bins.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(b.elves.items()):
        (bins / name).write_bytes(data)


# ------------------------------------------------------------------------------------------ plog


NOISE_CHUNKS = (  # (start, lines): process start, graph capture + SK build, warm-up, steady decode, fault step
    (PROCESS_START + timedelta(milliseconds=80), 30),
    (BUILD_TS - timedelta(milliseconds=240), 25),
    (datetime(2026, 6, 10, 14, 1, 40, 0), 30),
    (datetime(2026, 6, 10, 14, 2, 30, 0), 30),
    (FAULT_TS - timedelta(milliseconds=30), 25),
)


def _plog(b: _Built, spec: IncidentSpec) -> list[str]:
    """INFO-level plog: runtime noise, the runtime's fault lines (§1.5), the SK block (§1.7), ErrCode."""
    rng = random.Random(48213)
    out: list[str] = []
    for start, n in NOISE_CHUNKS:
        # a plog written at INFO holds no DEBUG/TRACE records
        out += [
            ln
            for ln in noise_lines(rng, n, pid=PID, start=start)
            if not ln.startswith(("[DEBUG]", "[TRACE]"))
        ]
    runtime = runtime_incident_lines(
        RUNTIME_FAULT_TS,
        pid=PID,
        kernel_name=ENTRY,
        core_id=FAULT_CORE,
        pc_start=START_PC,
        pc_current=b.current_pc,
        para_base=ARGS_DEV,
        stream_id=STREAM_ID,
        task_id=RUNTIME_TASK_ID,
    )
    # runtime_incident_lines ends with the rtStreamSynchronize ErrCode line; the API returns only after
    # the exception callbacks ran, so that line follows the SK handler block.
    out += runtime[:-1]
    sk_lines = to_plog_lines(spec, level="INFO")
    out += sk_lines
    n_sk = len(render(spec))
    errcode_ts = FAULT_TS + timedelta(microseconds=spec.step_us * n_sk + 850)
    out.append(
        runtime_line(
            errcode_ts, errcode_msg(), pid=PID, func="rtStreamSynchronize", src_file="api_c.cc", src_line=782
        )
    )
    return out


# ------------------------------------------------------------------------------------------ side files

MODEL_PY = '''"""Decoder MLP of the example scene: the SK scope decoder.layer.0.mlp fuses three children."""

import torch
import torch_npu
from custom_ops import add_custom


class DecoderMLP(torch.nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.RMSNorm(hidden)
        self.down = torch.nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, weight, scale, bias):
        h = self.norm(x)
        torch.npu.super_kernel_scope_begin("decoder.layer.0.mlp")
        a = torch_npu.npu_quant_matmul(h, weight, scale, output_dtype=torch.float16)
        b = add_custom(a, bias)
        c = b.to(torch.float32)
        torch.npu.super_kernel_scope_end("decoder.layer.0.mlp")
        return self.down(c)
'''

# statement emitting each child (graph nodeId → text fragment of its line in MODEL_PY)
SOURCE_STATEMENTS = {120: "npu_quant_matmul(", 121: "add_custom(a, bias)", 122: "b.to(torch.float32)"}


def source_sites() -> dict[int, int]:
    """nodeId → 1-based line of MODEL_PY, computed from the text so the two never disagree."""
    lines = MODEL_PY.splitlines()
    out: dict[int, int] = {}
    for node_id, fragment in SOURCE_STATEMENTS.items():
        hits = [i + 1 for i, ln in enumerate(lines) if fragment in ln]
        if len(hits) != 1:
            raise ValueError(f"statement {fragment!r} must occur exactly once in the model source")
        out[node_id] = hits[0]
    return out


def _run_doc() -> dict[str, object]:
    doc = jsonart.example_run(
        experiment_id="EX1",
        round_id="EX1-BASE",
        command="python3 infer.py --config configs/decoder_mlp.yaml",
        rank=RANK,
        device=DEVICE,
        pid=PID,
        start=RUN_START,
        end=RUN_END,
        failure_phase="device_fault",
        failing_path={"prompt_id": "p-0001", "step": 7},
    )
    candidate = dict(doc["candidate"])
    candidate["scope_names"] = [SCOPE_NAME]
    candidate["marker_file"] = SOURCE_FILE
    candidate["super_kernel_debug_options"] = {"debug_op_exec_trace": 1}  # the *_op_trace entry ran
    doc["candidate"] = candidate
    return doc


# ------------------------------------------------------------------------------------------ entry points


def build_example_scene(dest: Path) -> Path:
    """Write the scene into ``dest`` (created; existing files with the same names are overwritten)."""
    dest = Path(dest)
    b = _build_images()
    spec = _incident(b)
    sk = _sk_spec(b)
    model_dir = dest / "sk_meta" / str(PID) / f"model_{MODEL_ID}"
    _write_sk_meta(model_dir, b, spec, sk)
    stamp = PROCESS_START.strftime("%Y%m%d%H%M%S") + f"{PROCESS_START.microsecond // 1000:03d}"
    skmeta.write_lines(dest / "log" / "plog" / f"plog-{PID}_{stamp}.log", _plog(b, spec))
    jsonart.write_run_json(dest / "run.json", _run_doc())
    jsonart.write_env_probe(dest / "env" / "check_environment.json", jsonart.env_probe())
    jsonart.write_source_sites(dest / "source_sites.json", source_sites())
    src = dest / SOURCE_FILE
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(MODEL_PY, encoding="utf-8", newline="\n")
    return dest


DEFAULT_DEST = Path(__file__).resolve().parents[2] / "examples" / "scenes" / SCENE_NAME


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m skdbg.scenebuilder.example",
        description=f"write the bundled example scene {SCENE_NAME}",
    )
    ap.add_argument("dest", nargs="?", type=Path, default=DEFAULT_DEST, help=f"default: {DEFAULT_DEST}")
    args = ap.parse_args(argv)
    dest: Path = args.dest
    if dest.exists():
        # replace only what is recognisably a scene (or empty): never wipe an arbitrary directory
        if not dest.is_dir() or (any(dest.iterdir()) and not (dest / "run.json").is_file()):
            print(f"refusing to replace {dest}: not an example scene folder (no run.json)", file=sys.stderr)
            return 2
        shutil.rmtree(dest)
    build_example_scene(dest)
    print(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
