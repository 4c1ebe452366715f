"""jinja2 environment for every generated text of the package (StrictUndefined: a missing value is a bug).

jinja2 is imported on the first render, not with this module: commands that render nothing (``codegen
detect``, a refused input) do not pay its import, about a tenth of ``codegen adapt``'s time. Each
template is loaded once per process (``codegen adapt`` renders the SK block once per kernel).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


@cache
def _env(package: str = "skdbg.codegen") -> jinja2.Environment:
    """The strict environment over ``package``'s ``templates/`` (one per package, made once)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # C++ and Python sources, never HTML
    )


@cache
def _template(name: str, package: str) -> jinja2.Template:
    return _env(package).get_template(name)


def render(template: str, **values: Any) -> str:
    return _template(template, "skdbg.codegen").render(**values)


def render_from(templates_of: str, template: str, **values: Any) -> str:
    """:func:`render` for a template of another package's ``templates/`` (same strict settings)."""
    return _template(template, templates_of).render(**values)


def render_string(source: str, **values: Any) -> str:
    """Render a template given as text (catalog templates) with the same strict settings."""
    return _env().from_string(source).render(**values)
