"""Validation of the two machine contracts (spec/analysis-json.md): ``skdbg.analysis/1`` and
``skdbg.verify/1``.

Why JSON Schema *and* code: the schemas (package data ``skdbg/triage/schemas/*.json``, draft
2020-12) let any consumer check a document without skdbg; the few rules a schema cannot state
readably — a ``low``/``n/a`` verdict never carries a ``proposed`` exclusion, marker edits are
ascending and non-overlapping, the proposal ranges partition the SK's children, a gate after a
failed one is ``not_run`` (triage.md §5.1) — are
checked here so a violation names the rule instead of a schema path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from skdbg.parsers.markers import edit_order_problem

ANALYSIS_SCHEMA_FILE = "analysis.schema.json"
VERIFY_SCHEMA_FILE = "verify.schema.json"
GATE_ORDER = ("V1", "V2", "V3", "V4", "V5")


class SchemaError(ValueError):
    """A document does not follow its contract; the message says where and which rule."""

    def __init__(self, contract: str, where: str, message: str) -> None:
        self.contract = contract
        self.where = where
        super().__init__(f"{contract}: {where}: {message}")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The packaged schema ``name`` (``analysis.schema.json`` / ``verify.schema.json``)."""
    text = resources.files("skdbg.triage").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def _check(doc: Any, name: str, contract: str) -> None:
    validator = jsonschema.Draft202012Validator(load_schema(name))
    errors = sorted(validator.iter_errors(doc), key=lambda e: (len(e.absolute_path), list(e.absolute_path)))
    if errors:
        err = errors[0]
        where = "/" + "/".join(str(p) for p in err.absolute_path)
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SchemaError(contract, where, f"{err.message}{more}")


def validate_analysis(doc: Any) -> None:
    """Raise :class:`SchemaError` unless ``doc`` is a valid ``skdbg.analysis/1`` document."""
    contract = "skdbg.analysis/1"
    _check(doc, ANALYSIS_SCHEMA_FILE, contract)
    assert isinstance(doc, Mapping)
    confidence = doc["verdict"]["confidence"]
    proposal = doc["proposal"]
    if confidence in ("low", "n/a") and proposal["status"] == "proposed":
        # analysis-json.md: "A low or n/a verdict never carries a proposed exclusion" (C4–C6 / R2).
        raise SchemaError(
            contract,
            "/proposal/status",
            f"a {confidence!r} verdict never carries a 'proposed' exclusion (use blocked or none)",
        )
    check_marker_edits(proposal["marker_edits"], contract=contract)
    check_scope_resolution(doc["fault"], contract=contract)
    check_ranges(proposal, contract=contract)


#: dialects whose handler prints no scope id at all (triage.md §3.1.3: ModelRIIdx…SkScopeId arrives in D2)
_NO_PRINTED_SCOPE = ("D0", "D1")


def check_scope_resolution(fault: Mapping[str, Any], *, contract: str = "skdbg.analysis/1") -> None:
    """A resolved SK always names its scope id and model; ``header``/``cond`` need a dialect that prints them.

    Issue 11 item 9: ``fault.scope_id`` and ``fault.model`` are filled whenever the SK is known, however
    it was resolved (§3.2 item 3). D0–D1 print no SkScopeId (no header line, no COND), so a
    ``header`` or ``cond`` resolution there contradicts the dialect.
    """
    how = fault.get("scope_resolution")
    if how is None:
        return
    for key in ("scope_id", "model"):
        if fault.get(key) is None:
            raise SchemaError(contract, f"/fault/{key}", f"is null although the SK was resolved ({how})")
    if how in ("header", "cond") and fault.get("dialect") in _NO_PRINTED_SCOPE:
        raise SchemaError(
            contract,
            "/fault/scope_resolution",
            f"{how!r} but dialect {fault.get('dialect')} prints no scope id (name_sequence or single_sk)",
        )


def check_ranges(proposal: Mapping[str, Any], *, contract: str = "skdbg.analysis/1") -> None:
    """triage.md §4.1/§4.2: ``original`` lists every child node (events included) in SK order;
    before, excluded and after partition it, each in that order; ``collateral`` is excluded (= F)
    minus the suspect child."""
    original = list(proposal.get("original") or [])
    parts = {k: list(proposal.get(k) or []) for k in ("before", "excluded", "after")}
    if not original:
        return
    joined = parts["before"] + parts["excluded"] + parts["after"]
    if sorted(joined) != sorted(original) or len(set(joined)) != len(joined):
        raise SchemaError(contract, "/proposal", "before, excluded and after must partition original")
    for key, part in parts.items():
        members = set(part)
        if part != [i for i in original if i in members]:
            raise SchemaError(contract, f"/proposal/{key}", f"{key} is not in the SK order of original")
    child = (proposal.get("child") or {}).get("node_id")
    excluded = parts["excluded"]
    if child is not None and excluded:
        want = [i for i in excluded if i != child]
        if child not in excluded or list(proposal.get("collateral") or []) != want:
            raise SchemaError(
                contract, "/proposal/collateral", f"collateral must be excluded minus the suspect {child}"
            )


def check_marker_edits(edits: Any, *, contract: str = "skdbg.analysis/1") -> None:
    """Edits of one file are in ascending line order and never overlap (analysis-json.md).

    The rule is the one marker model's (:func:`skdbg.parsers.markers.edit_order_problem`, also used by
    the proposal's edit check and by every ``apply``): per file the key ``(line, insert < replace|delete)``
    strictly ascends, so an insert before line L and a replace of L agree everywhere.
    """
    bad = edit_order_problem((str(e["file"]), int(e["line"]), str(e["op"])) for e in edits)
    if bad is not None:
        raise SchemaError(contract, f"/proposal/marker_edits/{bad[0]}", bad[1])


def validate_verify(doc: Any) -> None:
    """Raise :class:`SchemaError` unless ``doc`` is a valid ``skdbg.verify/1`` document."""
    contract = "skdbg.verify/1"
    _check(doc, VERIFY_SCHEMA_FILE, contract)
    assert isinstance(doc, Mapping)
    gates = [g["gate"] for g in doc["verification"]]
    if gates != sorted(gates, key=GATE_ORDER.index) or len(set(gates)) != len(gates):
        raise SchemaError(contract, "/verification", f"gates must be unique and in V1..V5 order, got {gates}")
    failed_at: str | None = None
    for i, g in enumerate(doc["verification"]):
        if failed_at is not None and g["result"] != "not_run":
            # triage.md §5.1: each gate runs only after the previous passed.
            raise SchemaError(
                contract,
                f"/verification/{i}/result",
                f"{g['gate']} is {g['result']!r} after {failed_at} failed; it must be 'not_run'",
            )
        if g["result"] == "failed" and failed_at is None:
            failed_at = g["gate"]
    if "R4" in doc["routes"] and (
        doc.get("diagnostic") is None or any(g["result"] == "passed" for g in doc["verification"])
    ):
        # triage.md §5.2/R4: a pass under a debug option is a diagnostic, never a passed gate
        raise SchemaError(contract, "/routes", "R4 needs a diagnostic attempt and no passed gate")


__all__ = [
    "SchemaError",
    "check_marker_edits",
    "check_ranges",
    "check_scope_resolution",
    "load_schema",
    "validate_analysis",
    "validate_verify",
]
