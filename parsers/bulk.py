"""Helpers for parsers that turn one file into tens of thousands of records.

Why: an sk_meta file or ``sk_task_queue.json`` becomes that many small frozen records (nodes, tasks,
sources), all kept, and a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__`` (~150 ns a field: 5 µs for a 32-field node). :func:`frozen_builder` makes the
same object at the speed of a mutable one. (The cyclic collector's cost over these records is the
command line's business: it raises the collector's thresholds for batch commands, see ``skdbg.cli``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

from skdbg.classcode import generated_code
from skdbg.parsers.common import Source

T = TypeVar("T")


def frozen_builder(cls: type[T]) -> Callable[..., T]:
    """A function taking every field of ``cls`` positionally, in order, and returning ``cls(*values)``.

    For a frozen dataclass with ``slots=True``, its generated ``__init__``, no ``__post_init__``, no base
    class but ``object`` and slots that are exactly its fields, the object is filled as an instance of a twin class with the same slot layout and no frozen
    ``__setattr__``, then given its class (``__class__`` assignment between equal layouts): equal,
    hashable and frozen like any other instance. For any other class the class itself is returned.
    """
    names = tuple(f.name for f in fields(cls)) if is_dataclass(cls) else ()
    params = getattr(cls, "__dataclass_params__", None)
    if (
        not names
        or cls.__bases__ != (object,)  # a base with a __dict__ or slots of its own changes the layout
        or params is None
        or not (params.frozen and params.init)  # a hand-written __init__ must not be bypassed
        or getattr(cls, "__slots__", None) != names
        or hasattr(cls, "__post_init__")
        or not all(n.isidentifier() and not n.startswith("_fb_") for n in names)
    ):
        return cls
    twin = type(f"_{cls.__name__}Slots", (), {"__slots__": names})
    # the generated code's own names start with ``_fb_``, which no field may (parameters would shadow them)
    arguments = ", ".join(names)
    body = "".join(f"    _fb_obj.{n} = {n}\n" for n in names)
    code = (
        f"def build({arguments}):\n    _fb_obj = _fb_twin()\n{body}"
        "    _fb_obj.__class__ = _fb_cls\n    return _fb_obj\n"
    )
    scope: dict[str, Any] = {}
    # ``_fb_twin()``, not ``object.__new__(_fb_twin)``: the class call goes straight to the C type
    # slots, where ``object.__new__`` is a Python-level method lookup and call (~35 ns a record; the
    # twin has no ``__init__`` of its own, so nothing else runs)
    exec(generated_code(code), {"_fb_twin": twin, "_fb_cls": cls}, scope)  # noqa: S102
    build: Callable[..., T] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    build.__doc__ = f"``{cls.__name__}(*values)`` without the frozen ``__init__``."
    return build


#: ``Source(file, line, json_path)`` without the frozen ``__init__``: the one builder every parser uses
#: for the citation of each record it makes
build_source = frozen_builder(Source)
