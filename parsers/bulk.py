"""Helpers for parsers that turn one file into tens of thousands of records.

Why: an sk_meta file or ``sk_task_queue.json`` becomes that many small frozen records (nodes, tasks,
sources), all kept, and a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__`` (~150 ns a field: 5 µs for a 32-field node). :func:`frozen_builder` makes the
same object at the speed of a mutable one. (The cyclic collector's cost over these records is the
command line's business: it raises the collector's thresholds for batch commands, see ``skdbg.cli``.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Generic, TypeVar, cast, overload

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


#: a row :class:`LazyRecords` keeps until its records are read (what its ``make`` takes)
R = TypeVar("R")


class LazyRecords(Sequence[T], Generic[T, R]):
    """The records of a table, made from its rows when one is first read: an immutable sequence that
    compares, hashes and pickles as the tuple of those records.

    Why: some sk_meta tables are parsed whole (every row is checked, its gaps and counts reported) but
    their records are read by nothing an analysis runs: ``sk_scope_split.log``'s 5,000 node rows on the
    bench scene (a record and a node of ~30 fields each, ~8 ms of the parse, and as many objects the
    process keeps, faults in and tears down), ``sk_device_args.log``'s 2,500 SkDfxInfo rows (~5 ms: an
    analysis reads them only when an exception block prints no DfxInfo table, or to place a deferred
    wait's kernel) and its 5,000 task rows (~5 ms: the index map, its conflicts and the entry counts are
    kept beside them; the records are read by the wait-for analysis, or where no task queue JSON names
    the tasks). A parser that has
    checked a row keeps only what its record is made of; ``make`` turns a kept row into the record the
    parser would have made, the same whenever it runs (a row holds values, never state that changes).
    ``len`` needs no record.

    The records are made once, by the first reader, under a lock (a second thread waits for them); the
    rows are dropped then. Equal to a tuple (or another :class:`LazyRecords`) of equal records in order,
    as the tuple of its records is, and to nothing else (a list is not equal to a tuple); a pickle (and a
    deep copy) holds that tuple itself. It is a sequence, not a tuple: ``+``, ``<`` and ``json`` refuse
    it, and ``dataclasses.asdict`` leaves its records as they are; the tables' readers only iterate,
    index and count. (Made in a forked child, whose copy of the lock a thread of the parent may hold,
    it could wait for ever: a child reads none of these tables.)"""

    __slots__ = ("_len", "_lock", "_make", "_made", "_rows")

    def __init__(self, make: Callable[[R], T], rows: Sequence[R]) -> None:
        self._make: Callable[[R], T] | None = make
        self._rows: Sequence[R] = rows
        self._len = len(rows)  # (not read from the rows later: a reader may be dropping them)
        self._made: tuple[T, ...] | None = None
        self._lock = threading.Lock()

    def records(self) -> tuple[T, ...]:
        """Every record, made now if none was read yet."""
        made = self._made
        if made is None:
            with self._lock:
                made = self._made
                if made is None:
                    make = self._make
                    assert make is not None
                    made = self._made = tuple(map(make, self._rows))
                    self._rows, self._make = (), None
        return made

    @property
    def made(self) -> bool:
        """Whether the records were made (a reader read one)."""
        return self._made is not None

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self.records()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRecords):
            other = other.records()
        if not isinstance(other, tuple):
            return NotImplemented
        return self.records() == other

    def __hash__(self) -> int:
        return hash(self.records())

    def __repr__(self) -> str:
        return repr(self.records())

    def __reduce__(self) -> tuple[type[tuple[T, ...]], tuple[tuple[T, ...]]]:
        return tuple, (self.records(),)


def kept_records(make: Callable[[R], T], items: list[R], rows: bool) -> Sequence[T]:
    """A parsed table whose items are records and, where ``rows`` is true, rows kept to be made records on
    first read: a :class:`LazyRecords` then (``make`` gives a record back as it is and makes a row its
    record; ``R`` covers both), else the tuple of the records, as the table was before rows were kept."""
    if rows:
        return LazyRecords(make, items)
    return cast("tuple[T, ...]", tuple(items))
