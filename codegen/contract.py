"""IO contract (``--io-contract FILE``): schema, normalisation and the §1.9.4 diagnostics.

File/JSON/schema problems are usage errors (:class:`ContractError`, exit 2); mismatches between a valid
contract and the kernel are escalations (blocker findings for a human), never guesses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.codegen.reader import KernelEntry, Param

KINDS = ("tensor", "tensor_list", "scalar", "host_struct")
_SCALAR_WORDS = ("int", "uint", "float", "double", "half", "bool", "size_t")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*\Z")


class ContractError(ValueError):
    """The contract file itself is unusable (usage error, exit 2)."""


@dataclass
class EntryContract:
    name: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    workspaces: list[str] = field(default_factory=list)
    return_tensor: str = ""
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    launch: dict[str, Any] = field(default_factory=dict)
    compile: dict[str, list[str]] = field(default_factory=dict)
    runtime_wrapper: dict[str, Any] | None = None
    bind_target: str | None = None
    public_entry_name: str | None = None
    source_entry_name: str | None = None

    def to_json(self, path: str) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "workspaces": self.workspaces,
            "pybind_return_tensor": self.return_tensor,
            "parameters": self.parameters,
            "launch": self.launch,
            "compile": self.compile,
            "runtime_wrapper": self.runtime_wrapper,
            "bind_target": self.bind_target,
            "contract_path": path,
        }


def _names(raw: Any, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(x, str) and _IDENT_RE.match(x) for x in raw):
        raise ContractError(f"{where} must be a list of parameter names")
    return list(raw)


def _entry(name: str, raw: Any) -> EntryContract:
    where = f"IO contract entry {name!r}"
    if not _IDENT_RE.match(name):
        raise ContractError(f"{where}: entry name must be a C++ identifier")
    if isinstance(raw, str):
        raw = {"outputs": [raw]}
    if not isinstance(raw, dict):
        raise ContractError(f"{where} must be a string or an object")
    ec = EntryContract(name)
    ec.inputs = _names(raw.get("inputs", raw.get("input_tensors")), f"{where} inputs")
    ec.outputs = _names(raw.get("outputs", raw.get("output_tensors")), f"{where} outputs")
    ec.workspaces = _names(raw.get("workspaces", raw.get("workspace_tensors")), f"{where} workspaces")
    ret = raw.get("pybind_return_tensor", raw.get("return_tensor"))
    if ret is None:
        if len(ec.outputs) != 1:
            raise ContractError(f"{where} must declare pybind_return_tensor or exactly one output tensor")
        ret = ec.outputs[0]
    if not isinstance(ret, str) or ret not in ec.outputs:
        raise ContractError(f"{where} pybind_return_tensor {ret!r} must be listed in outputs")
    ec.return_tensor = ret
    params = raw.get("parameters", raw.get("params", {}))
    if not isinstance(params, dict):
        raise ContractError(f"{where} parameters must be an object")
    for pname, spec in params.items():
        spec = {"kind": spec} if isinstance(spec, str) else spec
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            kind = spec.get("kind") if isinstance(spec, dict) else spec
            raise ContractError(f"{where} parameter {pname!r} has unsupported kind {kind!r}")
        if "nullable" in spec and not isinstance(spec["nullable"], bool):
            raise ContractError(f"{where} parameter {pname!r} nullable must be a boolean")
        ec.parameters[str(pname)] = dict(spec)
    launch = raw.get("launch", {})
    if not isinstance(launch, dict):
        raise ContractError(f"{where} launch must be an object")
    if "block_dim" in launch:
        bd = launch["block_dim"]
        if not isinstance(bd, int) or isinstance(bd, bool) or bd <= 0:
            raise ContractError(f"{where} launch.block_dim must be a positive integer")
    ec.launch = dict(launch)
    comp = raw.get("compile", {})
    defines = list(comp.get("defines", raw.get("compile_defines", [])))
    ec.compile = {
        "defines": [d if d.startswith("-D") else f"-D{d}" for d in defines],
        "options": list(comp.get("options", raw.get("compile_options", []))),
    }
    wrapper = raw.get("runtime_wrapper")
    if wrapper is not None:
        _check_wrapper(where, wrapper)
        ec.runtime_wrapper = dict(wrapper)
    bt = raw.get("bind_target")
    if bt is not None and not isinstance(bt, str):
        raise ContractError(f"{where} bind_target must be a string")
    ec.bind_target = bt
    ec.public_entry_name = raw.get("public_entry_name", raw.get("entry_name"))
    ec.source_entry_name = raw.get("source_entry_name")
    return ec


def _check_wrapper(where: str, w: Any) -> None:
    if not isinstance(w, dict):
        raise ContractError(f"{where} runtime_wrapper must be an object")
    src = w.get("source")
    if not isinstance(src, str) or not src or Path(src).is_absolute() or ".." in Path(src).parts:
        raise ContractError(f"{where} runtime_wrapper.source must be a relative path inside the asset")
    if "entry" in w and not (isinstance(w["entry"], str) and _IDENT_RE.match(w["entry"])):
        raise ContractError(f"{where} runtime_wrapper.entry must be a C++ identifier")
    strategy = w.get("tensor_list_descriptor_strategy")
    if strategy is not None and strategy != "prepared_workspace_tail":
        raise ContractError(f"{where} tensor_list_descriptor_strategy has unsupported value {strategy!r}")
    if "prepare_entry" in w and not w["prepare_entry"]:
        raise ContractError(f"{where} runtime_wrapper.prepare_entry must be non-empty")
    db = w.get("descriptor_bytes")
    if db is not None and (not isinstance(db, int) or isinstance(db, bool) or db <= 0):
        raise ContractError(f"{where} runtime_wrapper.descriptor_bytes must be a positive integer")


@dataclass
class Contract:
    path: str
    entries: dict[str, EntryContract]

    def lookup(self, name: str) -> EntryContract | None:
        if name in self.entries:
            return self.entries[name]
        for ec in self.entries.values():
            if name in (ec.source_entry_name, ec.public_entry_name):
                return ec
        return None


def load_contract(path: Path) -> Contract:
    if not path.is_file():
        raise ContractError(f"IO contract file not found: {path}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ContractError(f"IO contract must be valid JSON: {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise ContractError("IO contract must contain an 'entries' object")
    version = doc.get("schema_version", 1)
    if version != 1 or isinstance(version, bool):
        raise ContractError(f"unsupported IO contract schema_version: {version}")
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        raise ContractError("IO contract must contain an 'entries' object")
    return Contract(str(path.resolve()), {str(k): _entry(str(k), v) for k, v in entries.items()})


def param_kind(p: Param) -> str:
    """Detected kind: tensor-like pointer types, scalars by (substring) type words, else host_struct."""
    if "GM_ADDR" in p.c_type or "__gm__" in p.c_type or "*" in p.c_type:
        return "tensor"
    if any(w in p.c_type for w in _SCALAR_WORDS):
        return "scalar"
    return "host_struct"


def escalation(rule: str, message: str, evidence: list[str]) -> dict[str, Any]:
    return {
        "finding_id": rule,
        "rule_id": rule,
        "severity": "blocker",
        "category": "codegen",
        "actionable_by": ["human"],
        "remediation_hint": {"kind": "human-decision"},
        "evidence": evidence,
        "message": message,
    }


@dataclass
class ContractCheck:
    escalations: list[dict[str, Any]]
    return_tensor: str | None
    return_source: str
    matched: EntryContract | None


def check_entry(entry: KernelEntry, contract: Contract | None, asset_root: Path) -> ContractCheck:
    """The §1.9.4 diagnostics for one entry, first failing check wins."""
    kinds = {p.name: param_kind(p) for p in entry.params}
    tensors = [n for n, k in kinds.items() if k == "tensor"]
    hosts = [n for n, k in kinds.items() if k == "host_struct"]
    ec = contract.lookup(entry.name) if contract else None
    e = entry.name
    if ec is None:
        schema = "{entries: {<entry>: {inputs, outputs, workspaces, pybind_return_tensor, parameters}}}"
        if hosts:
            return ContractCheck(
                [
                    escalation(
                        "codegen.runtime-parameter-contract-required",
                        f"entry {e} has host-struct parameters {hosts}; declare them in an IO contract.",
                        [f"entry={e}", f"host_struct_parameters={hosts}", f"contract_schema={schema}"],
                    )
                ],
                None,
                "unresolved",
                None,
            )
        if len(tensors) > 1:
            return ContractCheck(
                [
                    escalation(
                        "codegen.pybind-return-tensor-unresolved",
                        f"entry {e} has several tensor parameters; an IO contract must name the return tensor.",
                        [f"entry={e}", f"tensor_parameters={tensors}", f"contract_schema={schema}"],
                    )
                ],
                None,
                "unresolved",
                None,
            )
        if tensors:
            return ContractCheck([], tensors[0], "single-tensor-default", None)
        return ContractCheck([], None, "no-tensor-default", None)

    def fail(rule: str, message: str, evidence: list[str]) -> ContractCheck:
        return ContractCheck([escalation(rule, message, [f"entry={e}", *evidence])], None, "unresolved", ec)

    if ec.bind_target and not entry.template_params and ec.bind_target != e:
        return fail(
            "codegen.io-contract-bind-target-mismatch",
            f"contract bind_target {ec.bind_target!r} does not match entry {e}.",
            [f"bind_target={ec.bind_target}"],
        )
    unknown = [n for n in ec.parameters if n not in kinds]
    if unknown:
        return fail(
            "codegen.io-contract-parameter-invalid",
            f"IO contract names parameters that {e} does not have: {unknown}.",
            [f"unknown_parameters={unknown}"],
        )
    for n, spec in ec.parameters.items():
        declared, detected = spec["kind"], kinds[n]
        if declared != detected and not (detected == "tensor" and declared == "tensor_list"):
            return fail(
                "codegen.io-contract-parameter-kind-mismatch",
                f"parameter {n} of {e} is declared {declared} but detected {detected}.",
                [f"parameter={n}", f"declared={declared}", f"detected={detected}"],
            )
    lists = [n for n, s in ec.parameters.items() if s["kind"] == "tensor_list"]
    if lists and not ec.runtime_wrapper:
        return fail(
            "codegen.tensor-list-runtime-wrapper-required",
            f"tensor_list parameters {lists} of {e} need a runtime_wrapper.",
            [f"tensor_list_parameters={lists}"],
        )
    if ec.runtime_wrapper:
        src = asset_root / ec.runtime_wrapper["source"]
        if not src.is_file():
            return fail(
                "codegen.runtime-wrapper-source-missing",
                f"runtime wrapper source {ec.runtime_wrapper['source']} not found in the asset.",
                [f"source={ec.runtime_wrapper['source']}"],
            )
        went = ec.runtime_wrapper.get("entry")
        if went and not re.search(
            rf"\b{re.escape(went)}\s*\(", src.read_text(encoding="utf-8", errors="replace")
        ):
            return fail(
                "codegen.runtime-wrapper-entry-missing",
                f"runtime wrapper entry {went} not found in {ec.runtime_wrapper['source']}.",
                [f"entry_symbol={went}"],
            )
        if lists:
            if ec.runtime_wrapper.get("tensor_list_descriptor_strategy") != "prepared_workspace_tail":
                return fail(
                    "codegen.tensor-list-prepared-runtime-state-required",
                    "tensor_list parameters need tensor_list_descriptor_strategy 'prepared_workspace_tail'.",
                    [f"tensor_list_parameters={lists}"],
                )
            if ec.runtime_wrapper.get("descriptor_order") != lists:
                return fail(
                    "codegen.tensor-list-descriptor-order-mismatch",
                    f"descriptor_order must equal the tensor_list parameters in declaration order: {lists}.",
                    [f"descriptor_order={ec.runtime_wrapper.get('descriptor_order')}"],
                )
    missing_hosts = [n for n in hosts if n not in ec.parameters]
    if missing_hosts:
        return fail(
            "codegen.runtime-parameter-contract-required",
            f"host-struct parameters {missing_hosts} of {e} are not declared in the contract parameters.",
            [f"host_struct_parameters={missing_hosts}"],
        )
    declared_io = ec.inputs + ec.outputs + ec.workspaces
    bad = [n for n in declared_io if kinds.get(n) != "tensor"]
    if bad:
        return fail(
            "codegen.io-contract-tensor-invalid",
            f"inputs/outputs/workspaces name non-tensor parameters of {e}: {bad}.",
            [f"invalid_io_tensors={bad}"],
        )
    undeclared = [n for n in tensors if n not in declared_io]
    if undeclared:
        return fail(
            "codegen.io-contract-tensor-incomplete",
            f"tensor parameters of {e} missing from inputs/outputs/workspaces: {undeclared}.",
            [f"undeclared_io_tensors={undeclared}"],
        )
    if kinds.get(ec.return_tensor) != "tensor":
        return fail(
            "codegen.pybind-return-tensor-invalid",
            f"return tensor {ec.return_tensor} is not a tensor parameter of {e}.",
            [f"pybind_return_tensor={ec.return_tensor}"],
        )
    return ContractCheck([], ec.return_tensor, "explicit-io-contract", ec)
