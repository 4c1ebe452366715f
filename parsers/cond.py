"""Decode the COND register an SK entry writes with ``set_cond`` (artifacts.md §1.6.3, triage.md §3.3).

Why a module of its own: the handler prints only ``opState`` and the low 8 bits of the task index;
the scope id and the model-id index sit in bits 16–47 and are never printed per core. Decoding
them and comparing with the printed ``SkScopeId``/header value is the only way to notice the
index wrap of nodes ≥ 256 (trap T5) and to tie a core to one SK instance (triage §3.2).

Layout written by the entry: ``cond = (modelIdIdx << 32 | skScopeId << 16) | (opState + (index << 8))``.
The OR (not an add) means that for an index ≥ 256 the bits ``index >> 8`` are OR-ed into the scope
field (and, for huge indices, into the model field); bits already set in the true scope hide them.
"""

from __future__ import annotations

from dataclasses import dataclass

STATE_NAMES: dict[int, str] = {
    0: "ORIGIN",
    1: "SK_ENTRY_LAUNCHED",
    2: "OP_LAUNCHED",
    3: "OP_FINISHED",
    4: "SK_ENTRY_FINISHED",
}
U64 = (1 << 64) - 1


def state_name(state: int) -> str:
    """``SkOpTraceType`` name; unknown states (e.g. 7, row 36) become ``UNKNOWN(7)``."""
    return STATE_NAMES.get(state, f"UNKNOWN({state})")


@dataclass(frozen=True, slots=True)
class CondDecode:
    """The fields of one 64-bit COND value. ``available`` is False for COND = 0 (row 35)."""

    value: int
    state: int  # bits 0-7
    state_name: str
    op_index: int  # bits 8-15: task index modulo 256
    scope_id: int  # bits 16-31 (may carry leaked index bits, T5)
    model_idx: int  # bits 32-47 (index into the modelId map, A27)
    high_bits: int  # bits 48-63, always 0 when written by the entry
    available: bool


def decode_cond(value: int) -> CondDecode:
    """Split a COND value into its fields (§1.6.3). Values outside 0..2^64-1 are masked to 64 bits."""
    v = value & U64
    state = v & 0xFF
    return CondDecode(
        value=v,
        state=state,
        state_name=state_name(state),
        op_index=(v >> 8) & 0xFF,
        scope_id=(v >> 16) & 0xFFFF,
        model_idx=(v >> 32) & 0xFFFF,
        high_bits=(v >> 48) & 0xFFFF,
        available=v != 0,
    )


def encode_cond(state: int, index: int, scope_id: int, model_idx: int) -> int:
    """What the SK entry writes (used by the scene builder and tests): OR of base and state+index<<8."""
    base = ((model_idx & 0xFFFF) << 32) | ((scope_id & 0xFFFF) << 16)
    return (base | ((state & 0xFF) + ((index & 0xFFFFFFFF) << 8))) & U64


@dataclass(frozen=True, slots=True)
class CondCheck:
    """COND compared with the SK identity printed elsewhere (header A15 or the per-core line).

    * ``cond_index_overflow`` — decoded scope (or model index) differs from the expected one (T5).
    * ``candidates`` — every task index ``k + 256·j < nodeCnt`` (T5 rule; empty if nodeCnt unknown).
    * ``consistent_candidates`` — the subset whose leaked bits ``j`` reproduce the decoded scope/model
      exactly when OR-ed into the expected ones (what the OR-encoding allows).
    * ``recovered_index`` — the single consistent candidate when there is exactly one and the check
      was flagged; usable as E3 only together with the ``cond_index_overflow`` flag (triage §3.4 L3).
    """

    cond: CondDecode
    expected_scope_id: int | None
    expected_model_idx: int | None
    node_cnt: int | None
    scope_match: bool | None
    model_match: bool | None
    cond_index_overflow: bool
    candidates: tuple[int, ...]
    consistent_candidates: tuple[int, ...]
    recovered_index: int | None
    flags: tuple[str, ...]


def _leak_consistent(j: int, cond: CondDecode, scope: int | None, model: int | None) -> bool:
    leaked_scope = j & 0xFFFF
    leaked_model = (j >> 16) & 0xFFFF
    if scope is not None and (scope | leaked_scope) != cond.scope_id:
        return False
    return not (model is not None and (model | leaked_model) != cond.model_idx)


def check_cond(
    cond: CondDecode | int,
    *,
    sk_scope_id: int | None = None,
    model_idx: int | None = None,
    node_cnt: int | None = None,
) -> CondCheck:
    """Compare a COND value with the printed ``SkScopeId``/``ModelIdIdx`` (or header) — trap T5."""
    d = cond if isinstance(cond, CondDecode) else decode_cond(cond)
    flags: list[str] = []
    if not d.available:
        return CondCheck(
            d, sk_scope_id, model_idx, node_cnt, None, None, False, (), (), None, ("cond_unavailable",)
        )
    if d.high_bits:
        flags.append("cond_high_bits_set")
    scope_match = None if sk_scope_id is None else d.scope_id == (sk_scope_id & 0xFFFF)
    model_match = None if model_idx is None else d.model_idx == (model_idx & 0xFFFF)
    overflow = scope_match is False or model_match is False
    if overflow:
        flags.append("cond_index_overflow")
    candidates: tuple[int, ...] = ()
    consistent: tuple[int, ...] = ()
    if node_cnt is None:
        flags.append("node_cnt_unknown")
    else:
        candidates = tuple(range(d.op_index, max(node_cnt, 0), 256))
        consistent = tuple(k for k in candidates if _leak_consistent(k >> 8, d, sk_scope_id, model_idx))
        if node_cnt > 256:
            flags.append("index_modulo_256")
        if d.op_index >= node_cnt and d.state in (1, 2, 3):
            flags.append("op_index_out_of_range")
    recovered = consistent[0] if overflow and len(consistent) == 1 else None
    if overflow and recovered is None:
        flags.append("cond_index_unrecoverable")
    return CondCheck(
        cond=d,
        expected_scope_id=sk_scope_id,
        expected_model_idx=model_idx,
        node_cnt=node_cnt,
        scope_match=scope_match,
        model_match=model_match,
        cond_index_overflow=overflow,
        candidates=candidates,
        consistent_candidates=consistent,
        recovered_index=recovered,
        flags=tuple(flags),
    )
