"""Issue 14 class 2: SK function-name splitting is linear and capped.

The reference below enumerates every (scope, first, last) reading by brute force, straight from the
definition of ``sk_<id>_<scope>_start_<first>_end_<last>`` (artifacts §3.4): it is the independent
expectation the linear splitter must agree with on small names.
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.device_args import parse_device_args
from skdbg.parsers.fused_nodes import MAX_SK_FUNC_NAME, parse_fused_nodes, split_sk_func_name


def _readings(rest: str) -> list[tuple[str, str, str]]:
    out = []
    for i in range(len(rest)):
        if not rest.startswith("_start_", i):
            continue
        for j in range(i + 7, len(rest)):
            if rest.startswith("_end_", j) and j + 5 < len(rest):
                out.append((rest[:i], rest[i + 7 : j], rest[j + 5 :]))
    return out


def _expected(name: str, first: str | None, last: str | None) -> tuple[object, ...]:
    rest = name[len("sk_7_") :]
    if first is not None and last is not None and rest.endswith(f"_start_{first}_end_{last}"):
        return (rest[: -len(f"_start_{first}_end_{last}")], first, last, False, True)
    every = _readings(rest)
    if rest.startswith("no_kernel_scope_") and (first is None or not every):
        return (rest[len("no_kernel_scope_") :], None, None, bool(every), False)
    if not every:
        return (None, None, None, False, False)
    if first is not None or last is not None:
        hinted = [r for r in every if (first is None or r[1] == first) and (last is None or r[2] == last)]
        if len(hinted) == 1:
            return (*hinted[0], False, True)
    best = max(every, key=lambda r: (len(r[0]), len(r[1])))
    return (*best, len(every) > 1, False)


_PIECES = st.sampled_from(["_start_", "_end_", "a", "b", "_", "start", "end", "no_kernel_scope_", "x_end_"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_PIECES, max_size=12).map("".join),
    st.none() | st.sampled_from(["a", "b", "ab", "x", "a_end_b"]),
    st.none() | st.sampled_from(["a", "b", "ba", "x", "b_start_a"]),
)
def test_linear_split_equals_every_reading_enumerated(rest: str, first: str | None, last: str | None) -> None:
    got = split_sk_func_name("sk_7_" + rest, first, last)
    want = _expected("sk_7_" + rest, first, last)
    assert (got.scope_name, got.first_func, got.last_func, got.ambiguous, got.resolved_by_nodes) == want


def test_marker_heavy_name_costs_linear_memory() -> None:
    """A name made of nothing but markers has ~n²/100 readings; splitting must not list them."""
    name = "sk_1_" + "_start__end_" * (MAX_SK_FUNC_NAME // 12 - 1) + "k"
    tracemalloc.start()
    got = split_sk_func_name(name)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got.ambiguous and got.last_func == "k"
    assert peak < 50 * len(name)  # the old splitter needed gigabytes here


def test_over_long_name_is_a_gap_with_file_and_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    name = "sk_3_s_start_" + "a_end_" * (MAX_SK_FUNC_NAME // 6) + "b"
    log = tmp_path / "sk_fused_nodes.log"
    log.write_text(
        "SK Function: ok_first, scope id: 1, Node Count: 0\n"
        f"SK Function: {name}, scope id: 3, Node Count: 0\n"
    )
    res = parse_fused_nodes(log)
    gaps = [g for g in res.gaps if g.kind == "sk_name_too_long"]
    assert [(g.src.file, g.src.line) for g in gaps if g.src] == [(str(log), 2)]
    assert res.blocks[1].name.scope_id is None and res.blocks[1].name.too_long


def test_over_long_name_in_device_args_is_a_gap(tmp_path) -> None:  # type: ignore[no-untyped-def]
    name = "sk_3_s_start_a_end_" + "b" * (MAX_SK_FUNC_NAME + 1)
    log = tmp_path / "sk_device_args.log"
    log.write_text(f"Dumping device args for function: {name}\n")
    res = parse_device_args(log)
    assert [g.src.line for g in res.gaps if g.kind == "sk_name_too_long" and g.src] == [1]
