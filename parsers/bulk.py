"""Helpers for parsers that turn one file into tens of thousands of records.

Why: an sk_meta file or ``sk_task_queue.json`` becomes that many small frozen records (nodes, tasks,
sources), all kept. Two costs then dominate that have nothing to do with the grammar:

* the cyclic garbage collector walks the young objects every few hundred allocations, and now and then
  the whole heap (during an analysis the plog scan's too): a quarter to a third of these parsers' CPU.
  None of their records forms a cycle, so :func:`paused_gc` holds the collector while a parser runs;
  reference counting frees as usual, and the records are examined once afterwards like any others;
* a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (~150 ns a field:
  5 µs for a 32-field node). :func:`frozen_builder` makes the same object at the speed of a mutable one.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def paused_gc(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` with the cyclic collector disabled, unless it already was (then leave it so)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


def frozen_builder(cls: type[T]) -> Callable[..., T]:
    """A function taking every field of ``cls`` positionally, in order, and returning ``cls(*values)``.

    For a frozen dataclass with ``slots=True``, no ``__post_init__`` and slots that are exactly its
    fields, the object is filled as an instance of a twin class with the same slot layout and no frozen
    ``__setattr__``, then given its class (``__class__`` assignment between equal layouts): equal,
    hashable and frozen like any other instance. For any other class the class itself is returned.
    """
    names = tuple(f.name for f in fields(cls)) if is_dataclass(cls) else ()
    if (
        not names
        or getattr(cls, "__slots__", None) != names
        or hasattr(cls, "__post_init__")
        or not all(n.isidentifier() and not n.startswith("_fb_") for n in names)
    ):
        return cls
    twin = type(f"_{cls.__name__}Slots", (), {"__slots__": names})
    # the generated code's own names start with ``_fb_``, which no field may (parameters would shadow them)
    params = ", ".join(names)
    body = "".join(f"    _fb_obj.{n} = {n}\n" for n in names)
    code = (
        f"def build({params}):\n    _fb_obj = _fb_new(_fb_twin)\n{body}"
        "    _fb_obj.__class__ = _fb_cls\n    return _fb_obj\n"
    )
    scope: dict[str, Any] = {}
    exec(code, {"_fb_new": object.__new__, "_fb_twin": twin, "_fb_cls": cls}, scope)  # noqa: S102
    build: Callable[..., T] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    build.__doc__ = f"``{cls.__name__}(*values)`` without the frozen ``__init__``."
    return build
