"""Template catalog (``templates list|render``): small clean kernel assets rendered with jinja2 (spec §1.16).

Upstream keeps the catalog in YAML and renders with ``string.Template``; here each template is a
``template.json`` plus jinja2 files (StrictUndefined) shipped as package data, so no YAML dependency.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from skdbg.atomic import ensure_fresh_dir, write_tree
from skdbg.codegen.render import render_string

CTYPES = {"float16": "half", "float32": "float", "int32": "int32_t", "int64": "int64_t"}
MANIFEST = "operator-sk-template-manifest.json"


class TemplateError(ValueError):
    """Unknown template, bad parameter, or an unusable output directory (usage error)."""


def _root() -> Any:
    return resources.files("skdbg.codegen").joinpath("templates").joinpath("catalog")


def list_templates() -> list[dict[str, Any]]:
    out = []
    for child in sorted(_root().iterdir(), key=lambda c: c.name):
        spec_file = child.joinpath("template.json")
        if not spec_file.is_file():
            continue
        try:
            spec = json.loads(spec_file.read_text(encoding="utf-8"))
            out.append(
                {
                    "id": spec["id"],
                    "description": spec["description"],
                    "path": str(spec_file),
                    "parameters": spec["parameters"],
                    "file_count": len(spec["files"]),
                }
            )
        except (ValueError, KeyError) as exc:
            out.append({"id": child.name, "path": str(spec_file), "error": str(exc)})
    return out


def _resolve_params(spec: dict[str, Any], given: dict[str, str]) -> dict[str, Any]:
    unknown = sorted(set(given) - set(spec["parameters"]))
    if unknown:
        raise TemplateError(f"unknown template parameters: {unknown}")
    values: dict[str, Any] = {"id": spec["id"]}
    for name, p in spec["parameters"].items():
        if name in given:
            raw: Any = given[name]
        elif "default" in p:
            raw = p["default"]
        else:
            raise TemplateError(f"missing required template parameter: {name}")
        if p.get("kind") == "int":
            try:
                raw = int(raw)
            except ValueError as exc:
                raise TemplateError(f"value {raw!r} is not an integer for parameter {name!r}") from exc
        if p.get("kind") == "choice" and raw not in p["allowed"]:
            raise TemplateError(f"value {raw!r} not in allowed {p['allowed']} for parameter {name!r}")
        values[name] = raw
    if "dtype" in values:
        values["ctype"] = CTYPES[str(values["dtype"])]
    return values


def render_template(
    template_id: str, params: dict[str, str], out_dir: Path, *, force: bool = False
) -> dict[str, Any]:
    """Render a template into ``out_dir`` (the :mod:`skdbg.atomic` output-folder convention)."""
    folder = _root().joinpath(template_id)
    if not template_id.isidentifier() or not folder.joinpath("template.json").is_file():
        raise TemplateError(f"template not found: {template_id}")
    ensure_fresh_dir(out_dir, force=force)
    spec = json.loads(folder.joinpath("template.json").read_text(encoding="utf-8"))
    values = _resolve_params(spec, params)
    rendered: dict[str, str] = {}
    for f in spec["files"]:
        rel = Path(f["path"])
        if rel.is_absolute() or ".." in rel.parts:
            raise TemplateError(f"template file path escapes the output directory: {rel}")
        rendered[rel.as_posix()] = render_string(
            folder.joinpath(f["template"]).read_text(encoding="utf-8"), **values
        )
    written = list(rendered)
    manifest = {
        "status": "generated",
        "template_id": template_id,
        "parameters": {k: v for k, v in values.items() if k in spec["parameters"]},
        "output_dir": str(out_dir.resolve()),
        "written_files": written,
    }
    # assembled next to the target and renamed into place: a failure leaves no half-written directory
    write_tree(out_dir, {**rendered, MANIFEST: json.dumps(manifest, indent=2) + "\n"}, force=force)
    return manifest
