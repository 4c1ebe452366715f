"""The aclgraph-canonical package around adapted sources (spec §1.11): csrc wrappers, pybind, torch.library,
multi-arch ``setup.py`` and the run-time arch selector — all rendered from jinja2 templates.

Input is what ``adapt`` produced per file (adapted text + entry metadata); output is a mapping
``relative path → text`` below ``operator-sk-adapted/``, so the caller writes everything atomically.
"""

from __future__ import annotations

import pprint
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.codegen.arch import SOC_ARCH_RULES, normalise_arch
from skdbg.codegen.contract import param_kind
from skdbg.codegen.reader import Param
from skdbg.codegen.render import render

ACLGRAPH_INCLUDES = (
    "#include <pybind11/pybind11.h>",
    "#include <torch/extension.h>",
    "#include <cstdint>",
    "#include <limits>",
    "#include <vector>",
    '#include "third_party/acl/inc/acl/acl_rt.h"',
    '#include "torch_npu/csrc/core/npu/NPUStream.h"',
    '#include "kernel_operator.h"',
)
_QUOTED_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def safe_identifier(name: str) -> str:
    """Package/module names: lower-case, non-identifier characters → ``_``, a leading digit gets ``op_``."""
    out = re.sub(r"\W", "_", name.strip().lower()) or "op"
    return "op_" + out if out[0].isdigit() else out


class SupportConflictError(ValueError):
    """Two different support files map to the same ``csrc/`` path: a human must rename one."""


@dataclass
class AdaptedFile:
    rel: str
    text: str
    source_path: Path
    entries: list[dict[str, Any]] = field(default_factory=list)


def _ptr_type(c_type: str) -> str:
    if "GM_ADDR" in c_type:
        return "uint8_t *"
    return re.sub(r"\s+", " ", c_type.replace("__gm__", "")).strip()


def _declared(meta: dict[str, Any], name: str) -> dict[str, Any]:
    contract = meta.get("io_contract") or {}
    spec = (contract.get("parameters") or {}).get(name)
    return dict(spec) if isinstance(spec, dict) else {}


def _param_plan(meta: dict[str, Any]) -> list[dict[str, Any]]:
    plan = []
    for p in meta["parameters"]:
        declared = _declared(meta, p["name"])
        kind = declared.get("kind") or param_kind(Param(p["name"], p["c_type"]))
        plan.append(
            {
                "name": p["name"],
                "c_type": p["c_type"],
                "kind": kind,
                "nullable": bool(declared.get("nullable")),
            }
        )
    return plan


def wrapper_of(meta: dict[str, Any]) -> dict[str, Any]:
    """Signature, setup lines and launch arguments of ``run_<entry>`` (spec §1.11)."""
    sig, setup, args = [], [], []
    for p in _param_plan(meta):
        n = p["name"]
        if p["kind"] in {"tensor", "tensor_list"}:
            ptr = _ptr_type(p["c_type"])
            if p["nullable"]:
                sig.append(f"const pybind11::object &{n}")
                setup.append(f"{ptr} {n}_ptr = nullptr;")
                setup.append(
                    f"if (!{n}.is_none()) {{ {n}_ptr = ({ptr})({n}.cast<at::Tensor>().mutable_data_ptr()); }}"
                )
                args.append(f"{n}_ptr")
            else:
                sig.append(f"const at::Tensor &{n}")
                args.append(f"({ptr})({n}.mutable_data_ptr())")
        elif p["kind"] == "host_struct":
            t = p["c_type"]
            sig.append(f"const std::vector<int64_t> &{n}")
            setup += [
                f'TORCH_CHECK({n}.size() == sizeof({t}), "{n} must hold sizeof({t}) bytes");',
                f"{t} {n}_host;",
                f"auto *{n}_bytes = reinterpret_cast<uint8_t *>(&{n}_host);",
                f"for (size_t i = 0; i < {n}.size(); ++i) {{",
                f'    TORCH_CHECK({n}[i] >= 0 && {n}[i] <= 255, "{n} bytes must be in 0..255");',
                f"    {n}_bytes[i] = static_cast<uint8_t>({n}[i]);",
                "}",
            ]
            args.append(f"{n}_host")
        else:
            sig.append(f"{p['c_type']} {n}")
            args.append(n)
    if not meta["parameters"]:
        sig.append("const at::Tensor &x")
    tensors = [p["name"] for p in _param_plan(meta) if p["kind"] == "tensor"]
    ret = meta.get("pybind_return_tensor") or (tensors[0] if tensors else "x")
    launch = (meta.get("io_contract") or {}).get("launch") or {}
    return {
        "entry": meta["entry_name"],
        "signature": ", ".join(sig),
        "setup": setup,
        "launch_args": ", ".join(args),
        "bind_target": meta["bind_target"],
        "block_dim": launch.get("block_dim", "ascendc_ops::get_current_aicore_num()"),
        "ret": ret,
    }


def schema_of(meta: dict[str, Any]) -> tuple[str, list[str]]:
    """torch schema ``entry(Tensor x, int n) -> Tensor`` and the argument names in order."""
    parts, names = [], []
    for p in _param_plan(meta):
        n, t = p["name"], p["c_type"]
        if p["kind"] in {"tensor", "tensor_list"}:
            parts.append(f"Tensor? {n}" if p["nullable"] else f"Tensor {n}")
        elif p["kind"] == "host_struct":
            parts.append(f"int[] {n}")
        elif "float" in t or "double" in t:
            parts.append(f"float {n}")
        elif "bool" in t:
            parts.append(f"bool {n}")
        else:
            parts.append(f"int {n}")
        names.append(n)
    if not names:
        parts, names = ["Tensor x"], ["x"]
    return f"{meta['entry_name']}({', '.join(parts)}) -> Tensor", names


def _copy_quoted_includes(src: Path, text: str, files: dict[str, str], prefix: str = "csrc") -> None:
    """Quoted includes that exist next to ``src`` go to ``csrc/`` (transitively), keeping their relative path."""
    todo = [(src.parent, text)]
    while todo:
        base, body = todo.pop()
        for inc in _QUOTED_INCLUDE_RE.findall(body):
            path = (base / inc).resolve()
            rel = f"{prefix}/{Path(inc).as_posix()}"
            if ".." in Path(inc).parts or not path.is_file():
                continue
            content = path.read_text(encoding="utf-8", errors="replace")
            if rel in files:
                if files[rel] != content:
                    raise SupportConflictError(f"two different files would become {rel} (one is {path})")
                continue
            files[rel] = content
            todo.append((path.parent, content))


def _wrapper_entry(meta: dict[str, Any]) -> str | None:
    rw = meta.get("runtime_wrapper") or {}
    entry = rw.get("entry")
    return str(entry) if entry else None


def _copy_runtime_wrapper(meta: dict[str, Any], files: dict[str, str]) -> str:
    """Copy the contract's wrapper source to a unique ``csrc/`` name (never ``pybind11*``); returns it."""
    src = Path(meta["runtime_wrapper"]["source_path"])
    stem, suffix = src.stem, src.suffix
    if stem.startswith("pybind11"):
        stem = "wrapper_" + stem
    rel, k = f"csrc/{stem}{suffix}", 0
    text = src.read_text(encoding="utf-8", errors="replace")
    while rel in files and files[rel] != text:
        k += 1
        rel = f"csrc/{stem}_{k}{suffix}"
    files[rel] = text
    _copy_quoted_includes(src, text, files)
    meta["runtime_wrapper"]["csrc_file"] = rel
    return rel


def build_canonical(
    adapted: list[AdaptedFile], package_name: str, package_version: str, module: str | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """Files of the canonical tree and the manifest fields describing it."""
    package = safe_identifier(package_name)
    entries = [m for f in adapted for m in f.entries]
    module = module or f"{safe_identifier(entries[0]['entry_name'])}_sk_pkg_lib"
    files: dict[str, str] = {}
    specs: list[dict[str, Any]] = []
    bases: dict[str, str] = {}
    for f in adapted:
        if not f.entries:
            continue
        own = [m for m in f.entries if not _wrapper_entry(m)]
        missing = [inc for inc in ACLGRAPH_INCLUDES if inc not in f.text]
        csrc = f"csrc/{f.entries[0]['entry_name']}.asc"
        files[csrc] = render(
            "canonical_entry.asc.j2",
            missing_includes=missing,
            adapted_source=f.text.rstrip("\n") + "\n",
            wrappers=[wrapper_of(m) for m in own],
        )
        _copy_quoted_includes(f.source_path, f.text, files)
        for m in f.entries:
            e = m["entry_name"]
            base = safe_identifier(e)
            if base in bases.values():
                raise ValueError(f"aclgraph entry names collide after module-name sanitization: {base}")
            bases[e] = base
            w = wrapper_of(m)
            extra = [_copy_runtime_wrapper(m, files)] if _wrapper_entry(m) else []
            files[f"csrc/pybind11_{e}.asc"] = render(
                "pybind11.asc.j2",
                module=e,
                entries=[
                    {"entry": e, "wrapper": _wrapper_entry(m) or f"run_{e}", "signature": w["signature"]}
                ],
            )
            m["csrc_file"] = csrc
            specs.append(
                {
                    "entry_name": e,
                    "module_base": base,
                    "csrc_file": csrc,
                    "pybind_file": f"csrc/pybind11_{e}.asc",
                    "extra_sources": extra,
                    "supported_arches": [normalise_arch(a) for a in m.get("supported_arches", [])],
                    "compile_defines": list(
                        ((m.get("io_contract") or {}).get("compile") or {}).get("defines", [])
                    ),
                    "compile_options": list(
                        ((m.get("io_contract") or {}).get("compile") or {}).get("options", [])
                    ),
                }
            )
    files["csrc/pybind11.asc"] = render(
        "pybind11.asc.j2",
        module=module,
        entries=[
            {
                "entry": m["entry_name"],
                "wrapper": _wrapper_entry(m) or f"run_{m['entry_name']}",
                "signature": wrapper_of(m)["signature"],
            }
            for m in entries
        ],
    )
    schemas = {m["entry_name"]: schema_of(m) for m in entries}
    arches = sorted({a for s in specs for a in s["supported_arches"]})
    rules_literal = pprint.pformat(SOC_ARCH_RULES, width=100)
    files[f"{package}/_torch_library.py"] = render(
        "torch_library.py.j2",
        schemas_literal=repr({e: s for e, (s, _n) in schemas.items()}),
        schema_args_literal=repr({e: n for e, (_s, n) in schemas.items()}),
        returns_literal=repr({m["entry_name"]: wrapper_of(m)["ret"] for m in entries}),
    )
    files[f"{package}/_arch_selector.py"] = render(
        "arch_selector.py.j2",
        package=package,
        rules_literal=rules_literal,
        module_bases_literal=pprint.pformat(bases),
    )
    files[f"{package}/__init__.py"] = render(
        "init.py.j2", package=package, entries=[m["entry_name"] for m in entries], arches_literal=repr(arches)
    )
    files["setup.py"] = render(
        "setup.py.j2",
        package=package,
        package_literal=repr(package),
        version_literal=repr(package_version),
        rules_literal=rules_literal,
        entry_specs_literal=pprint.pformat(specs, width=100, sort_dicts=False),
    )
    meta = {
        "pybind_layout": "aclgraph-canonical",
        "pybind_module": module,
        "package_name": package_name,
        "package_version": package_version,
        "python_package": package,
        "canonical_written_files": [f"operator-sk-adapted/{k}" for k in sorted(files)],
    }
    return files, meta
