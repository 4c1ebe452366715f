"""The 31 upstream SuperKernel ST cases (tests/data/upstream/sk-st, CASES.md) as generator requests.

Shared by the golden tests and the fusion item tests: each case becomes an ``SkRequest`` with the
text sizes that give the documented preload page counts (is_inf 2, pows 5, is_finite 2).
"""

from __future__ import annotations

import json
from pathlib import Path

from skdbg.codegen.fusion.model import ChildOp, SkRequest

ST_ROOT = Path(__file__).resolve().parents[1] / "data" / "upstream" / "sk-st"
TEXT_SIZE = {"is_inf": 4096, "pows": 10240, "is_finite": 4096}

_ONE = "te_superkernel_1_stream_2_ops"
_TWO = "te_superkernel_2_stream_2_ops"


def _one_stream(options: str, second: str = "pows") -> tuple[str, str, list[dict[str, object]]]:
    return (
        _ONE,
        f"compile-options=-g:{options}",
        [{"json": "is_inf", "stream_id": 1}, {"json": second, "stream_id": 1}],
    )


def _two_stream(
    options: str,
    second: str = "pows",
    send: list[int] | None = None,
    recv: list[int] | None = None,
    task: str = "normal",
) -> tuple[str, str, list[dict[str, object]]]:
    return (
        _TWO,
        f"compile-options=-g:stream-fusion=1:{options}",
        [
            {"json": "is_inf", "stream_id": 0, "send": send or [], "task_type": task},
            {"json": second, "stream_id": 1, "recv": recv or []},
        ],
    )


CASES: dict[str, tuple[str, str, list[dict[str, object]]]] = {
    "test_sk_1_stream_2_ops_default_aic_only": _one_stream(""),
    "test_sk_1_stream_2_ops_early_start_0_aic_only": _one_stream("early-start=0:"),
    "test_sk_1_stream_2_ops_func_align_256_aic_only": _one_stream("func-align=256:"),
    "test_sk_1_stream_2_ops_preload_code_max_aic_only": _one_stream("preload-code=max:"),
    "test_sk_1_stream_2_ops_debug_dcci_all_1_aic_only": _one_stream("debug-dcci-all=1:"),
    "test_sk_1_stream_2_ops_debug_sync_all_1_aic_only": _one_stream("debug-sync-all=1:"),
    "test_sk_1_stream_2_ops_feed_sync_all_1_aic_only": _one_stream("feed-sync-all=1:"),
    "test_sk_1_stream_2_ops_split_mode_1_aic_only": _one_stream("split-mode=1:", "is_finite"),
    "test_sk_1_stream_2_ops_json_split_none_aic_only": _one_stream("split-mode=4:"),
    "test_sk_1_stream_2_ops_profiling_1_aic_only": _one_stream("profiling=1:"),
    "test_sk_1_stream_3_ops_default_aic_only": (
        "te_superkernel_1_stream_3_ops",
        "compile-options=-g:",
        [{"json": n, "stream_id": 1} for n in ("is_inf", "pows", "is_inf")],
    ),
    "test_sk_2_stream_2_ops_default_aic_only": _two_stream(""),
    "test_sk_2_stream_2_ops_default_aiv_1_0": _two_stream(""),
    "test_sk_2_stream_2_ops_default_aic_1_0": _two_stream(""),
    "test_sk_2_stream_2_ops_default_aic_1_1": _two_stream(""),
    "test_sk_2_stream_2_ops_default_aic_1_2": _two_stream(""),
    "test_sk_2_stream_2_ops_feed_sync_all_1_aic_only": _two_stream("feed-sync-all=1:"),
    "test_sk_2_stream_2_ops_profiling_1_aic_only": _two_stream("profiling=1:"),
    "test_sk_2_stream_2_ops_debug_sync_all_1_aic_only": _two_stream("debug-sync-all=1:"),
    "test_sk_2_stream_2_ops_debug_sync_all_1_aiv_only": _two_stream("debug-sync-all=1:"),
    "test_sk_2_stream_2_ops_preload_code_max_aic_only": _two_stream("preload-code=max:"),
    "test_sk_2_stream_2_ops_default_send_recv_aic_only": _two_stream("", send=[100], recv=[101]),
    "test_sk_2_stream_2_ops_default_send_recv_aiv_only": _two_stream("", send=[100], recv=[101]),
    "test_sk_2_stream_2_ops_default_recv_aic_only": _two_stream("", recv=[101]),
    "test_sk_2_stream_2_ops_default_send_aic_only": _two_stream("", send=[100]),
    "test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only": _two_stream(
        "profiling=1:", "is_finite", [100], [101], "dynamic"
    ),
    "test_sk_2_stream_2_ops_dynamic_send_recv_default_aiv_only": _two_stream(
        "profiling=1:", "is_finite", [100], [101], "dynamic"
    ),
    "test_sk_2_stream_2_ops_dynamic_send_recv_with_synal_all_1_aic_only": _two_stream(
        "profiling=1:feed-sync-all=1:", "is_finite", [100], [101], "dynamic"
    ),
    "test_sk_2_stream_2_ops_dynamic_send_recv_intersect_aic_only": _two_stream(
        "profiling=1:", "is_finite", [100, 101], [100, 101], "dynamic"
    ),
}

for _name, _ev in (("remove_crossed_cub_to_vec", (100, 101)), ("remove_crossed_vec_to_cub", (200, 201))):
    _s, _r = _ev
    CASES[f"test_sk_2_stream_4_ops_{_name}"] = (
        "te_superkernel_2_stream_4_ops",
        "compile-options=-g:stream-fusion=1:",
        [
            {"json": "is_inf", "stream_id": 0, "send": [_s]},
            {"json": "pows", "stream_id": 1, "recv": [_r]},
            {"json": "is_inf", "stream_id": 0, "send": [_r]},
            {"json": "pows", "stream_id": 1, "recv": [_s]},
        ],
    )


def case_request(case: str) -> SkRequest:
    """The generator request of one ST case (child jsons read from its ``inputs/``)."""
    kernel, options, ops = CASES[case]
    inputs = ST_ROOT / case / "inputs"
    children = []
    for op in ops:
        name = str(op["json"])
        path = inputs / f"{name}.json"
        children.append(
            ChildOp(
                info=json.loads(path.read_text()),
                stream_id=int(op["stream_id"]),  # type: ignore[call-overload]
                send_event_list=tuple(op.get("send", [])),  # type: ignore[arg-type]
                recv_event_list=tuple(op.get("recv", [])),  # type: ignore[arg-type]
                task_type=str(op.get("task_type", "normal")),
                text_size=TEXT_SIZE[name],
                source=str(path),
            )
        )
    return SkRequest(
        kernel_name=kernel, ops=tuple(children), options=options, soc="Ascend910_9391", vector_core_cnt=48
    )


def case_ops_json(case: str) -> dict[str, object]:
    """The same case as an ``OPS.json`` document (json paths relative to the case folder)."""
    kernel, options, ops = CASES[case]
    return {
        "kernel_name": kernel,
        "options": options,
        "soc": "Ascend910_9391",
        "vector_core_cnt": 48,
        "ops": [
            {
                "json": f"inputs/{op['json']}.json",
                "stream_id": op["stream_id"],
                "send_event_list": op.get("send", []),
                "recv_event_list": op.get("recv", []),
                "task_type": op.get("task_type", "normal"),
                "text_size": TEXT_SIZE[str(op["json"])],
            }
            for op in ops
        ],
    }
