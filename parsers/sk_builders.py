"""The SK handler parser's blocks under construction: :mod:`skdbg.parsers.sk_parser` opens them as it
follows the stream, :mod:`skdbg.parsers.sk_rows` writes each line's values into them, and
:mod:`skdbg.parsers.sk_freeze` makes them records.

Why a module of their own: the three need the blocks' shapes, and none needs the others' code.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from skdbg.parsers.common import Source
from skdbg.parsers.sk_fields import (
    BValues,
    CondValues,
    CoreValues,
    DfxNodeValues,
    HeaderValues,
    PreValues,
    QueueValues,
    SymbolValues,
    TraceValues,
)
from skdbg.parsers.sk_records import AbortInfo, CounterEntry, QueueTask, SkipDuplicate, Sources

if TYPE_CHECKING:
    from skdbg.parsers.sk_lines import Classified
    from skdbg.parsers.sk_parser import SkMessage

#: the values of one kind of block (a ``TypedDict`` of :mod:`skdbg.parsers.sk_fields`)
V = TypeVar("V", bound=Mapping[str, object])


class _Fields(Generic[V]):
    """Collects printed values with their source; a repeated key with a different value is a conflict.

    ``values`` is typed by the kind of block (``_Fields[CoreValues]``): its reads are checked. The keys
    are written by name (the field table's rules, the parser's own lines), so :meth:`put` takes any."""

    __slots__ = ("values", "srcs")

    def __init__(self) -> None:
        self.values: V = cast("V", {})
        self.srcs: dict[str, Source] = {}

    @classmethod
    def of(cls, values: V, srcs: dict[str, Source]) -> _Fields[V]:
        """Fields filled at once (each value's source in ``srcs``), without two empty dicts first."""
        f: _Fields[V] = object.__new__(cls)
        f.values = values
        f.srcs = srcs
        return f

    def has(self, key: str) -> bool:
        return key in self.values

    def put(self, key: str, value: object, src: Source) -> bool:
        values = cast("dict[str, object]", self.values)
        if key in values:
            return bool(values[key] == value)
        values[key] = value
        self.srcs[key] = src
        return True

    def sources(self) -> Sources:
        return tuple(self.srcs.items())


class _TraceB:
    def __init__(self, src: Source, core_id: int, in_all_core: bool) -> None:
        self.src = src
        self.core_id = core_id
        self.in_all_core = in_all_core
        self.f: _Fields[TraceValues] = _Fields()
        self.symbols: list[tuple[_Fields[SymbolValues], list[str]]] = []

    def symbol(self) -> tuple[_Fields[SymbolValues], list[str]] | None:
        return self.symbols[-1] if self.symbols else None


class _CoreB:
    def __init__(self, src: Source, core_id: int, callback: str) -> None:
        self.src = src
        self.core_id = core_id
        self.callback = callback
        self.f: _Fields[CoreValues] = _Fields()
        self.trace: _TraceB | None = None
        self.cond: _Fields[CondValues] | None = None
        self.notes: list[tuple[str, Source]] = []


class _BB:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.anchor: Source | None = None
        self.entry: str | None = None
        self.f: _Fields[BValues] = _Fields()
        self.records: list[
            tuple[Source, int, list[tuple[str, str]], list[tuple[Source, int, list[tuple[str, str]]]]]
        ] = []
        self.skips: list[SkipDuplicate] = []
        self.cores: list[_CoreB] = []
        self.notes: list[tuple[str, Source]] = []
        self.failure: str | None = None
        self.in_tensor = False


class _IncidentB:
    """Mutable incident under construction; made an :class:`~skdbg.parsers.sk_records.Incident` by
    :func:`~skdbg.parsers.sk_freeze.freeze_incident`."""

    def __init__(self, src: Source, pid: int | None) -> None:
        self.src = src
        self.pid = pid
        self.anchor: Source | None = None
        self.entry: str | None = None
        self.op_trace: bool | None = None
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.origins: list[str] = []
        self.files: list[str] = []
        self.line_count = 0
        self.touched: list[Source] = []  # sources of the messages counted (sk_copies)
        self.sigs: list[tuple[int, int, str]] = []
        self.pre: _Fields[PreValues] = _Fields()
        self.header: _Fields[HeaderValues] | None = None
        self.header_src: Source | None = None
        self.queues: dict[str, tuple[Source, _Fields[QueueValues], list[QueueTask]]] = {}
        self.counters: tuple[Source, int, list[CounterEntry]] | None = None
        self.dfx: (
            tuple[Source, int, int, list[tuple[Source, _Fields[DfxNodeValues], list[int], list[int]]]] | None
        ) = None
        self.cores: list[_CoreB] = []
        self.model_map: tuple[Source, str, int, list[tuple[int, str]]] | None = None
        self.model_errors: list[tuple[int, int, Source]] = []
        self.all_core: tuple[Source, int, list[_TraceB]] | None = None
        self.b: _BB | None = None
        self.abort: AbortInfo | None = None
        self.section = "pre"
        self.queue_key: str | None = None
        self.pending_arch: tuple[str, int, int, Source] | None = None
        self.notes: list[tuple[str, Source]] = []
        self.tentative: list[tuple[SkMessage, Classified]] | None = None

    # -- bookkeeping
    def touch(self, msg: SkMessage) -> None:
        self.touch_at(msg.src, msg.origin, msg.ts, msg.pid)

    def touch_at(self, src: Source, origin: str, ts: datetime | None, pid: int | None) -> None:
        """Count one message. Apart from the count and ``touched``, a second message of the same
        origin, file, stamp and pid changes nothing (the bulk path relies on it, see _feed_run)."""
        self.line_count += 1
        self.touched.append(src)
        if origin not in self.origins:
            self.origins.append(origin)
        if src.file not in self.files:
            self.files.append(src.file)
        if ts is not None:
            if self.first_ts is None or ts < self.first_ts:
                self.first_ts = ts
            if self.last_ts is None or ts > self.last_ts:
                self.last_ts = ts
        if self.pid is None and pid is not None:
            self.pid = pid

    def has_a_content(self) -> bool:
        return bool(self.header or self.queues or self.counters or self.dfx or self.cores or self.model_map)

    def has_late_content(self) -> bool:
        return bool(self.dfx or self.cores or self.model_map or self.all_core)
