"""COND decode (artifacts.md §1.6.3) and the index-wrap check of trap T5 (triage.md §3.7), rows 35–37."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.cond import STATE_NAMES, check_cond, decode_cond, encode_cond, state_name


def test_decode_example_value_from_1_7() -> None:
    """§1.7: COND = 0x30000 | 2 | (1 << 8) → running node 1 of scope 3, model index 0."""
    d = decode_cond(0x30102)
    assert (d.state, d.state_name, d.op_index, d.scope_id, d.model_idx, d.high_bits) == (
        2, "OP_LAUNCHED", 1, 3, 0, 0,
    )  # fmt: skip
    assert d.available is True
    assert encode_cond(2, 1, 3, 0) == 0x30102


def test_row35_cond_zero_is_unavailable() -> None:
    """Row 35: COND = 0 means the driver did not report it — no state, no comparison."""
    d = decode_cond(0)
    assert d.available is False
    c = check_cond(0, sk_scope_id=3, model_idx=0, node_cnt=3)
    assert c.flags == ("cond_unavailable",)
    assert c.scope_match is None and c.cond_index_overflow is False and c.candidates == ()


def test_row36_every_state_and_unknown_state_decoded_and_compared() -> None:
    """Row 36: states 0–4 and an unknown 7; bits 16–47 decoded and compared with the header identity."""
    for state in (0, 1, 2, 3, 4, 7):
        value = encode_cond(state, 2, 5, 1)
        d = decode_cond(value)
        assert d.state == state
        assert d.state_name == STATE_NAMES.get(state, "UNKNOWN(7)")
        assert (d.op_index, d.scope_id, d.model_idx) == (2, 5, 1)
        c = check_cond(value, sk_scope_id=5, model_idx=1, node_cnt=3)
        assert (c.scope_match, c.model_match, c.cond_index_overflow) == (True, True, False)
        assert c.candidates == (2,)
    assert state_name(7) == "UNKNOWN(7)"
    other = check_cond(encode_cond(2, 1, 3, 0), sk_scope_id=4, model_idx=0, node_cnt=3)
    assert other.scope_match is False and "cond_index_overflow" in other.flags


def test_row37_index_wrap_recovered_when_leak_lands_on_zero_bits() -> None:
    """Row 37: node 260 → opIndex 4, the leaked bit 1 lands on scope 2 (bit 0 clear) → recovered 260."""
    value = encode_cond(2, 260, 2, 0)
    d = decode_cond(value)
    assert (d.op_index, d.scope_id) == (4, 3)
    c = check_cond(value, sk_scope_id=2, model_idx=0, node_cnt=300)
    assert c.cond_index_overflow is True
    assert c.candidates == (4, 260)
    assert c.consistent_candidates == (260,)
    assert c.recovered_index == 260
    assert "cond_index_overflow" in c.flags and "index_modulo_256" in c.flags


def test_row37_index_wrap_hidden_by_set_scope_bits_stays_ambiguous() -> None:
    """T5: with scope 3 the leaked bit 1 is hidden — no mismatch, but both 4 and 260 stay possible."""
    c = check_cond(encode_cond(2, 260, 3, 0), sk_scope_id=3, model_idx=0, node_cnt=300)
    assert c.cond_index_overflow is False
    assert c.consistent_candidates == (4, 260)
    assert c.recovered_index is None
    assert "index_modulo_256" in c.flags


def test_unrecoverable_overflow_and_unknown_node_count() -> None:
    """A decoded scope that is not a superset of the printed one cannot come from a leak."""
    c = check_cond(encode_cond(2, 4, 1, 0), sk_scope_id=2, model_idx=0, node_cnt=600)
    assert c.cond_index_overflow is True and c.recovered_index is None
    assert "cond_index_unrecoverable" in c.flags
    u = check_cond(0x30102, sk_scope_id=3)
    assert "node_cnt_unknown" in u.flags and u.candidates == ()


def test_high_bits_and_out_of_range_index_flagged() -> None:
    c = check_cond((1 << 50) | 0x30502, sk_scope_id=3, model_idx=0, node_cnt=3)
    assert "cond_high_bits_set" in c.flags and "op_index_out_of_range" in c.flags


@settings(max_examples=200)
@given(
    st.integers(0, 255), st.integers(0, 255), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)
)  # fmt: skip
def test_encode_decode_round_trip_below_256(state: int, index: int, scope: int, model: int) -> None:
    d = decode_cond(encode_cond(state, index, scope, model))
    assert (d.state, d.op_index, d.scope_id, d.model_idx, d.high_bits) == (state, index, scope, model, 0)
    c = check_cond(d, sk_scope_id=scope, model_idx=model, node_cnt=index + 1)
    if d.value == 0:  # all-zero is indistinguishable from "not reported" (row 35)
        assert c.flags == ("cond_unavailable",)
        return
    assert c.cond_index_overflow is False and index in c.consistent_candidates


@settings(max_examples=200)
@given(st.integers(0, 2000), st.integers(0, 0xFFFF), st.integers(1, 2001))
def test_true_index_always_among_consistent_candidates(index: int, scope: int, extra: int) -> None:
    """Whatever leaks, the real index is never excluded (T5 candidates are a safe superset)."""
    node_cnt = index + extra
    c = check_cond(encode_cond(2, index, scope, 0), sk_scope_id=scope, model_idx=0, node_cnt=node_cnt)
    assert index in c.candidates and index in c.consistent_candidates
    if c.recovered_index is not None:
        assert c.recovered_index == index


@given(st.integers(-(2**70), 2**70))
def test_decode_never_raises(value: int) -> None:
    d = decode_cond(value)
    assert 0 <= d.value < 2**64
