"""jinja2 environment for every generated text of the package (StrictUndefined: a missing value is a bug)."""

from __future__ import annotations

from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("skdbg.codegen", "templates"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,  # C++ and Python sources, never HTML
)


def render(template: str, **values: Any) -> str:
    return _ENV.get_template(template).render(**values)


def render_string(source: str, **values: Any) -> str:
    """Render a template given as text (catalog templates) with the same strict settings."""
    return _ENV.from_string(source).render(**values)
