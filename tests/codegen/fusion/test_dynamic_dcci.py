"""Issue 13 item 7: a dynamic child's DCCI calls follow the SK options, a static child's its JSON.

The expectation is written from the option table (codegen spec §2.2) and upstream's generator rule for
dynamic children: ``dcci-disable-on-kernel`` listing the child's ``sub_operator_op_type`` removes both
calls; otherwise a call is emitted exactly when the op type is listed in ``dcci-before-kernel-start`` /
``dcci-after-kernel-end`` and the JSON does not disable DCCI on the kernel. The JSON's before/after
flags never count for a dynamic child (it was compiled before the SK options were known). A static
child ignores the options (its own compile already applied them) and uses its JSON flags.

Base scene: ST case ``dynamic_send_recv_default_aic_only`` (child 0 = IsInf, child 1 = static IsFinite
with all DCCI flags false), with child 0 switched between dynamic and static.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from sk_st_cases import case_request

from skdbg.codegen.fusion.generate import generate_superkernel
from skdbg.codegen.fusion.model import SkRequest

CASE = "test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only"
BASE_OPTIONS = "compile-options=-g:stream-fusion=1:profiling=1"
KEYS = ("dcci-before-kernel-start", "dcci-after-kernel-end", "dcci-disable-on-kernel")
BEFORE_LINE = "// option: dcci-before-kernel-start"
AFTER_LINE = "// option: dcci-after-kernel-end"


def _request(
    dynamic: bool, op_type: str, json_flags: tuple[bool, bool, bool], listed: tuple[bool, bool, bool]
) -> SkRequest:
    req = case_request(CASE)
    first = req.ops[0]
    info = dict(first.info)
    info["sub_operator_op_type"] = op_type
    info["sub_operator_call_dcci_before_kernel_start"] = json_flags[0]
    info["sub_operator_call_dcci_after_kernel_end"] = json_flags[1]
    info["sub_operator_call_dcci_disable_on_kernel"] = json_flags[2]
    ops = (replace(first, info=info, task_type="dynamic" if dynamic else "normal"), *req.ops[1:])
    options = BASE_OPTIONS + "".join(f":{k}=Other, IsInf" for k, on in zip(KEYS, listed, strict=True) if on)
    return replace(req, ops=ops, options=options)


def _expected(
    dynamic: bool, op_type: str, json_flags: tuple[bool, bool, bool], listed: tuple[bool, bool, bool]
) -> tuple[int, int]:
    """(before lines, after lines) in the whole source; child 1 never contributes any."""
    json_before, json_after, json_disable = json_flags
    if not dynamic:
        return int(json_before and not json_disable), int(json_after and not json_disable)
    matches = [on and op_type == "IsInf" for on in listed]
    if matches[2]:
        return 0, 0
    return int(matches[0] and not json_disable), int(matches[1] and not json_disable)


BOOLS = (False, True)


@pytest.mark.parametrize("dynamic", BOOLS, ids=["static", "dynamic"])
@pytest.mark.parametrize("op_type", ["IsInf", "Cast"])
def test_dcci_lines_follow_options_for_dynamic_and_json_for_static(dynamic: bool, op_type: str) -> None:
    for json_flags in itertools.product(BOOLS, repeat=3):
        for listed in itertools.product(BOOLS, repeat=3):
            src = generate_superkernel(_request(dynamic, op_type, json_flags, listed)).source
            got = (src.count(BEFORE_LINE), src.count(AFTER_LINE))
            assert got == _expected(dynamic, op_type, json_flags, listed), (json_flags, listed)


def test_issue_examples() -> None:
    """The two cases from the differential run: option present → emitted; JSON only → not emitted."""
    with_option = _request(True, "IsInf", (False, False, False), (True, False, False))
    assert BEFORE_LINE in generate_superkernel(with_option).source
    json_only = _request(True, "IsInf", (True, True, False), (False, False, False))
    src = generate_superkernel(json_only).source
    assert BEFORE_LINE not in src and AFTER_LINE not in src


def test_dynamic_dcci_call_wraps_the_dynamic_call() -> None:
    """The emitted DCCI lines sit right before / after the child's ``call_func_of_`` line."""
    src = generate_superkernel(_request(True, "IsInf", (False, False, False), (True, True, False))).source
    lines = [ln.strip() for ln in src.splitlines()]
    call = next(i for i, ln in enumerate(lines) if ln.startswith("call_func_of_is_inf__kernel0("))
    assert lines[call - 3] == BEFORE_LINE
    assert lines[call - 2].startswith("dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE")
    assert lines[call + 1] == AFTER_LINE


def test_compiled_json_keeps_the_child_json_flags() -> None:
    """The compiled json's kernel list reports the child JSON's own flags (upstream reads the file)."""
    req = _request(True, "IsInf", (True, False, False), (False, True, False))
    entry = generate_superkernel(req).compiled_json["SuperkernelInfo"]["kernelList"]["aicore"][0]
    assert entry["sub_operator_call_dcci_before_kernel_start"] is True
    assert entry["sub_operator_call_dcci_after_kernel_end"] is False
