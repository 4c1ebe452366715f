"""A module bound to a global name and imported on its first use.

Why: numpy costs about a third of ``skdbg analyze``'s start-up on a small scene, yet only an ELF
symbol table or a big plog needs it. A module that uses numpy in many functions binds ``np`` to a
:class:`LazyModule`; the first ``np.<name>`` imports numpy and rebinds the global to the real module,
so later uses cost nothing extra.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for module ``name`` in the globals ``namespace`` under ``alias`` until first touched."""

    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        if self._namespace.get(self._alias) is self:
            self._namespace[self._alias] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
