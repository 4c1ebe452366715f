"""jinja2 rendering of the fixed text blocks of a SuperKernel source (package data ``templates/``).

Why jinja2 with StrictUndefined: a missing variable must fail loudly instead of leaving an empty hole
in generated C++ that a golden comparison might not catch for every option combination.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("skdbg.codegen.fusion", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(name: str, **values: Any) -> str:
    """Render one template of ``templates/`` with the given values."""
    return _env().get_template(name).render(**values)
