"""Validation of the two machine contracts (spec/analysis-json.md): ``skdbg.analysis/1`` and
``skdbg.verify/1``.

Why JSON Schema *and* code: the schemas (package data ``skdbg/triage/schemas/*.json``, draft
2020-12) let any consumer check a document without skdbg; the few rules a schema cannot state
readably — a ``low``/``n/a`` verdict never carries a ``proposed`` exclusion, marker edits are
ascending and non-overlapping, a gate after a failed one is ``not_run`` (triage.md §5.1) — are
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


__all__ = ["SchemaError", "check_marker_edits", "load_schema", "validate_analysis", "validate_verify"]
