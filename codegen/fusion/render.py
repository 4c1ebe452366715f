"""jinja2 rendering of the fixed text blocks of a SuperKernel source (package data ``templates/``).

Why jinja2 with StrictUndefined: a missing variable must fail loudly instead of leaving an empty hole
in generated C++ that a golden comparison might not catch for every option combination.
"""

from __future__ import annotations

from typing import Any

from skdbg.codegen.render import render_from


def render(name: str, **values: Any) -> str:
    """Render one template of ``templates/`` with the given values (the codegen environment's strict
    settings, over this package's templates)."""
    return render_from("skdbg.codegen.fusion", name, **values)
