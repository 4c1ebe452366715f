"""``sk_task_queue.json`` — the structured per-scope AIC/AIV task queues (artifacts.md §3.10).

Why: the node index printed by the SK exception handler (``node[N]``, COND ``opIndex``, counter
``opId``) joins to ``nodeIndex`` here (§6). This file also carries each task's ``debugOptions``
bitmask, which is how skdbg tells a diagnostic run from a clean one (triage.md §2.1 F9).

Accepted shapes (§3.10 and the sk-model-analysis contract):

* ``{"version", "description", "modelId", "scopeCount", "scopes": [{"scopeId", "taskQueues"}]}`` —
  scopes in any order (built from an unordered map), so they are indexed by ``scopeId``;
* a root-level ``{"scopeId": …, "taskQueues": {…}}`` object, and the same without ``scopeId``.

Per queue ``numBlocks``/``funcCnt``/``taskQue`` may be absent (``taskQue`` is missing when the
queue was never created). ``args`` and ``entries`` are ``"0x…"`` strings; ``debugOptions`` is a
*decimal* integer. A field of the wrong type is a :class:`ParseError` naming its JSON path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from skdbg import regexcode
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.jsonload import (
    as_list,
    as_object,
    get_int,
    get_str,
    hex_value,
    join,
    load_json,
    req_str,
    show,
    type_error,
)

if TYPE_CHECKING:
    import pandas as pd

WHAT = "sk_task_queue.json"

#: ``TaskInfo.type`` strings (§1.4.1 A16); others are kept and reported as Unrecognized.
TASK_TYPES = ("FUNC", "SYNC", "PRELOAD", "EVENT_NOTIFY", "EVENT_WAIT", "EVENT_RESET", "UNKNOWN")

#: Per-task debug bits (§2 "Per-task debug bits"); names are skdbg's.
DEBUG_OPTION_BITS: dict[int, str] = {
    0x1: "disable_dcci",
    0x2: "debug_sync_all",
    0x4: "dcci_before_child",
    0x8: "dcci_after_child_requested",
    0x10: "cross_core_sync_check",
    0x20: "dcci_after_child",
}

QUEUE_NAMES = ("aic", "aiv")

#: the seven members of a task entry, in the producer's order
_TASK_FIELDS = ("nodeIndex", "type", "numBlocks", "entryCnt", "args", "debugOptions", "entries")
_TASK_KEYS = frozenset(_TASK_FIELDS)
_QUEUE_KEYS = {"numBlocks", "funcCnt", "taskQue"}
_ROOT_KEYS = {"version", "description", "modelId", "scopeCount", "scopes", "scopeId", "taskQueues"}


def decode_debug_options(value: int) -> tuple[str, ...]:
    """Names of the set bits, lowest first; an undocumented bit is named ``bit_0x<hex>``."""
    names: list[str] = []
    bit = 1
    while bit <= value:
        if value & bit:
            names.append(DEBUG_OPTION_BITS.get(bit, f"bit_{bit:#x}"))
        bit <<= 1
    return tuple(names)


@dataclass(frozen=True, slots=True)
class QueueTask:
    """One ``taskInfos[k]`` entry. ``node_index`` is the device node index, not the graph nodeId (§0)."""

    src: Source
    scope_id: int | None
    queue: str  # "aic" | "aiv"
    position: int  # k in taskInfos
    node_index: int
    type: str
    num_blocks: int | None
    entry_cnt: int | None
    args: int | None
    debug_options: int | None
    debug_flags: tuple[str, ...]
    entries: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TaskQueue:
    """``taskQueues.aic`` or ``taskQueues.aiv`` of one scope."""

    src: Source
    scope_id: int | None
    queue: str
    num_blocks: int | None
    func_cnt: int | None
    task_cnt: int | None  # None when ``taskQue`` is absent (queue never created)
    has_task_que: bool
    tasks: tuple[QueueTask, ...]


@dataclass(frozen=True, slots=True)
class TaskQueueScope:
    """One scope of ``sk_task_queue.json``: its AIC and AIV queues (None: that queue is absent)."""

    src: Source
    scope_id: int | None  # None only in the root-level variant without ``scopeId``
    aic: TaskQueue | None
    aiv: TaskQueue | None

    @property
    def queues(self) -> tuple[TaskQueue, ...]:
        return tuple(q for q in (self.aic, self.aiv) if q is not None)

    def tasks(self) -> Iterator[QueueTask]:
        for q in self.queues:
            yield from q.tasks


@dataclass(slots=True)
class TaskQueueFile:
    """Parse result of one ``sk_task_queue.json``."""

    file: str
    layout: str  # "scopes" (current) | "root" (root-level taskQueues variant)
    version: str | None
    description: str | None
    model_id: str | None
    scope_count: int | None
    scopes: list[TaskQueueScope]
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    @property
    def by_scope(self) -> dict[int | None, TaskQueueScope]:
        """Scopes indexed by ``scopeId`` (the file order is not meaningful, §3.10)."""
        return {s.scope_id: s for s in self.scopes}

    def scope(self, scope_id: int | None) -> TaskQueueScope | None:
        return self.by_scope.get(scope_id)

    def tasks(self) -> Iterator[QueueTask]:
        for s in self.scopes:
            yield from s.tasks()

    def to_frame(self) -> pd.DataFrame:
        """One row per task: file, line (always None for JSON), json_path, model_id, scope_id, queue,
        position, node_index, type, num_blocks, entry_cnt, args, debug_options, debug_flags
        (comma-joined), entry0..entry3."""

        ctx = {"model_id": self.model_id}
        return records_frame(((ctx, t) for t in self.tasks()), TASK_FRAME_COLS)


def _entry(j: int) -> Col:
    return Col(f"entry{j}", lambda t: t.entries[j] if j < len(t.entries) else None)


TASK_FRAME_COLS = (
    *SRC_COLS,
    Col("json_path", lambda t: t.src.json_path),
    Col("model_id"),
    Col("scope_id"),
    Col("queue"),
    Col("position"),
    Col("node_index"),
    Col("type"),
    Col("num_blocks"),
    Col("entry_cnt"),
    Col("args"),
    Col("debug_options"),
    Col("debug_flags", lambda t: ",".join(t.debug_flags)),
    *(_entry(j) for j in range(4)),
)
TASK_FRAME_COLUMNS = [c.name for c in TASK_FRAME_COLS]
QUEUE_FRAME_COLUMNS = [
    "file",
    "line",
    "json_path",
    "model_id",
    "scope_id",
    "queue",
    "num_blocks",
    "func_cnt",
    "task_cnt",
    "has_task_que",
]


def parse_task_queue(path: str | os.PathLike[str]) -> TaskQueueFile:
    """Parse ``sk_task_queue.json``. Raises :class:`ParseError` for unreadable/malformed JSON (row 62)
    or a field of the wrong type; consistency problems become gaps."""
    file, doc = load_json(path, what=WHAT)
    return task_queue_from_json(doc, file)


def task_queue_from_json(doc: Any, file: str) -> TaskQueueFile:
    """Build the result from an already-decoded document (also used by tests and the loader)."""
    root = as_object(doc, file, "")
    unrec: list[Unrecognized] = []
    gaps: list[Gap] = []
    for key in root:
        if key not in _ROOT_KEYS:
            unrec.append(_unknown_key(file, key, root[key], "", "sk_task_queue:root"))
    version = get_str(root, "version", file, "")
    description = get_str(root, "description", file, "")
    model_id = _model_id(root, file)
    scope_count = get_int(root, "scopeCount", file, "")
    scopes: list[TaskQueueScope] = []
    if "scopes" in root:
        layout = "scopes"
        for i, item in enumerate(as_list(root["scopes"], file, "scopes")):
            path = join("scopes", i)
            obj = as_object(item, file, path)
            for key in obj:
                if key not in ("scopeId", "taskQueues"):
                    unrec.append(_unknown_key(file, key, obj[key], path, "sk_task_queue:scope"))
            scopes.append(_scope(obj, file, path, unrec, gaps))
        if "taskQueues" in root:
            unrec.append(_unknown_key(file, "taskQueues", root["taskQueues"], "", "sk_task_queue:root"))
    elif "taskQueues" in root:
        layout = "root"  # §3.10: sk-model-analysis contract, single scope, scopeId optional
        scopes.append(_scope(root, file, "", unrec, gaps))
    else:
        raise type_error(file, "the document root", "an object with 'scopes' or 'taskQueues'", root)
    if scope_count is not None and scope_count != len(scopes):
        gaps.append(
            Gap(
                "count_mismatch",
                f"scopeCount={scope_count} but {len(scopes)} scope(s) listed",
                Source(file, json_path="scopeCount"),
            )
        )
    seen: dict[int | None, int] = {}
    for s in scopes:
        if s.scope_id in seen:
            gaps.append(
                Gap(
                    "duplicate_scope",
                    f"scopeId {s.scope_id} listed twice ({seen[s.scope_id] + 1} times so far); "
                    "lookups by scopeId return the last one",
                    s.src,
                )
            )
        seen[s.scope_id] = seen.get(s.scope_id, 0) + 1
    return TaskQueueFile(file, layout, version, description, model_id, scope_count, scopes, unrec, gaps)


def _model_id(root: dict[str, Any], file: str) -> str | None:
    value = root.get("modelId")
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # older producers wrote the bare rts model id
    raise type_error(file, "modelId", 'a string "<rtsId>_<callCount>"', value)


def _scope(
    obj: dict[str, Any], file: str, path: str, unrec: list[Unrecognized], gaps: list[Gap]
) -> TaskQueueScope:
    scope_id = get_int(obj, "scopeId", file, path)
    tq_path = join(path, "taskQueues")
    if "taskQueues" not in obj:
        raise type_error(file, tq_path, "an object with 'aic'/'aiv' queues", None)
    tq = as_object(obj["taskQueues"], file, tq_path)
    queues: dict[str, TaskQueue] = {}
    for name, value in tq.items():
        if name not in QUEUE_NAMES:
            unrec.append(_unknown_key(file, name, value, tq_path, "sk_task_queue:taskQueues"))
            continue
        queues[name] = _queue(value, file, join(tq_path, name), scope_id, name, unrec, gaps)
    return TaskQueueScope(
        Source(file, json_path=path or None), scope_id, queues.get("aic"), queues.get("aiv")
    )


def _queue(
    value: Any,
    file: str,
    path: str,
    scope_id: int | None,
    name: str,
    unrec: list[Unrecognized],
    gaps: list[Gap],
) -> TaskQueue:
    obj = as_object(value, file, path)
    for key in obj:
        if key not in _QUEUE_KEYS:
            unrec.append(_unknown_key(file, key, obj[key], path, "sk_task_queue:queue"))
    num_blocks = get_int(obj, "numBlocks", file, path)
    func_cnt = get_int(obj, "funcCnt", file, path)
    tasks: list[QueueTask] = []
    task_cnt: int | None = None
    has_que = "taskQue" in obj
    if has_que:
        que_path = join(path, "taskQue")
        que = as_object(obj["taskQue"], file, que_path)
        task_cnt = get_int(que, "taskCnt", file, que_path)
        infos_path = join(que_path, "taskInfos")
        infos = as_list(que.get("taskInfos", []), file, infos_path)
        bulk = _tasks_bulk(infos, file, infos_path, scope_id, name)
        if bulk is not None:
            tasks = bulk
        else:
            for k, item in enumerate(infos):
                task_path = f"{infos_path}[{k}]"  # jsonload.join of an index
                task = _task_plain(item, file, task_path, scope_id, name, k)
                if task is None:
                    task = _task(item, file, task_path, scope_id, name, k, unrec, gaps)
                tasks.append(task)
        if task_cnt is not None and task_cnt != len(tasks):
            gaps.append(
                Gap(
                    "count_mismatch",
                    f"taskCnt={task_cnt} but {len(tasks)} taskInfos listed",
                    Source(file, json_path=join(que_path, "taskCnt")),
                )
            )
    return TaskQueue(
        Source(file, json_path=path), scope_id, name, num_blocks, func_cnt, task_cnt, has_que, tuple(tasks)
    )


_TASK_TYPE_SET = frozenset(TASK_TYPES)
_build_task = frozen_builder(QueueTask)
_DEBUG_FLAGS: dict[int, tuple[str, ...]] = {}


def _debug_flags(debug: int) -> tuple[str, ...]:
    """:func:`decode_debug_options`, once per distinct value (a file holds a handful)."""
    hit = _DEBUG_FLAGS.get(debug)
    if hit is None:
        if len(_DEBUG_FLAGS) >= 1024:
            _DEBUG_FLAGS.clear()
        hit = _DEBUG_FLAGS[debug] = decode_debug_options(debug)
    return hit


def _task_plain(
    obj: Any, file: str, path: str, scope_id: int | None, queue: str, position: int
) -> QueueTask | None:
    """A task entry of the usual shape, or None so :func:`_task` reads it (and words its errors).

    Usual shape: known keys only, integers where integers go, ``"0x…"`` strings for ``args`` and
    ``entries``, a known type and a consistent entry count — then the general reading gives exactly this
    record and no unrecognized item or gap."""
    if type(obj) is not dict or not obj.keys() <= _TASK_KEYS:
        return None
    node_index = obj.get("nodeIndex")
    ttype = obj.get("type")
    if type(node_index) is not int or type(ttype) is not str or ttype not in _TASK_TYPE_SET:
        return None
    # _opt_int inline (a call each costs more than the test): an integer, or absent; else not plain
    num_blocks = obj.get("numBlocks")
    if type(num_blocks) is not int and (num_blocks is not None or "numBlocks" in obj):
        return None
    entry_cnt = obj.get("entryCnt")
    if type(entry_cnt) is not int and (entry_cnt is not None or "entryCnt" in obj):
        return None
    debug = obj.get("debugOptions")
    if type(debug) is not int and (debug is not None or "debugOptions" in obj):
        return None
    args: int | None = None
    try:
        if "args" in obj:
            a = obj["args"]
            if type(a) is not str or a[:2] != "0x" or len(a.strip()) <= 2:
                return None
            args = int(a[2:], 16)
        entries: tuple[int, ...] = ()
        if "entries" in obj:
            raw = obj["entries"]
            if type(raw) is not list:
                return None
            values: list[int] = []  # one pass: a bad shape or a bad digit both make the entry not plain
            for e in raw:
                if type(e) is not str or e[:2] != "0x" or len(e.strip()) <= 2:
                    return None
                values.append(int(e[2:], 16))
            entries = tuple(values)
            if entry_cnt is not None and len(entries) != min(entry_cnt, 4):
                return None
    except ValueError:
        return None
    flags: tuple[str, ...] = ()
    if debug is not None and debug >= 0:
        cached = _DEBUG_FLAGS.get(debug)  # _debug_flags' cache read here: no call for a known value
        flags = cached if cached is not None else _debug_flags(debug)
    return _build_task(
        build_source(file, None, path),
        scope_id,
        queue,
        position,
        node_index,
        ttype,
        num_blocks,
        entry_cnt,
        args,
        debug,
        flags,
        entries,
    )


#: a task entry's members in :data:`_TASK_FIELDS` order (one C call reads them all)
_TASK_MEMBERS = itemgetter(*_TASK_FIELDS)
#: a run of ``"0x…"`` strings joined by commas: each is then a plain hex string (``int(s, 16)`` reads it)
_HEX_RUN = regexcode.compile(r"0x[0-9a-fA-F]+(?:,0x[0-9a-fA-F]+)*")
_BASE16 = repeat(16)


def _all_hex(values: Sequence[Any]) -> bool:
    """Every value a ``"0x<hex digits>"`` string, checked over all of them at once: the joined text
    matches and holds no comma but the separators (so no value held one)."""
    try:
        text = ",".join(values)
    except TypeError:  # a value that is not a string
        return False
    return text.count(",") == len(values) - 1 and _HEX_RUN.fullmatch(text) is not None


def _tasks_bulk(
    infos: list[Any], file: str, infos_path: str, scope_id: int | None, queue: str
) -> list[QueueTask] | None:
    """All of a queue's ``taskInfos`` at once when each is :func:`_task_plain`'s usual shape with every
    member present and hex values of the form ``0x<digits>``; None (read them one by one) otherwise.

    Why: each check runs once per column in C (``map``/``set``/one regex over the joined hex strings)
    rather than as a dozen Python steps per task; the records are the ones the per-task reading gives,
    which found nothing to report for any of them."""
    if not infos:
        return None
    if set(map(type, infos)) != {dict} or set(map(len, infos)) != {len(_TASK_KEYS)}:
        return None  # a non-object, or a member missing or unknown (seven members, all ours: see below)
    try:
        rows = list(map(_TASK_MEMBERS, infos))
    except KeyError:
        return None
    nodes, types, num_blocks, entry_cnts, args, debugs, entries = zip(
        *rows, strict=True
    )  # every row has seven members
    if (
        set(map(type, nodes)) != {int}  # not bool: type(True) is bool
        or set(map(type, types)) != {str}
        or not _TASK_TYPE_SET.issuperset(types)
        or set(map(type, num_blocks)) != {int}
        or set(map(type, entry_cnts)) != {int}
        or set(map(type, debugs)) != {int}
        or set(map(type, entries)) != {list}
        or list(map(len, entries)) != list(map(min, entry_cnts, repeat(4)))  # §3.10: the first min(cnt, 4)
        or not _all_hex(args)
    ):
        return None
    flat = list(chain.from_iterable(entries))
    if flat and not _all_hex(flat):
        return None
    flags = {d: _debug_flags(d) if d >= 0 else () for d in set(debugs)}
    build, source = _build_task, build_source
    return [
        build(
            source(file, None, f"{infos_path}[{k}]"),  # jsonload.join of an index
            scope_id,
            queue,
            k,
            node,
            ttype,
            blocks,
            cnt,
            int(arg, 16),
            debug,
            flags[debug],
            tuple(map(int, ents, _BASE16)),
        )
        for k, (node, ttype, blocks, cnt, arg, debug, ents) in enumerate(rows)
    ]


def _task(
    value: Any,
    file: str,
    path: str,
    scope_id: int | None,
    queue: str,
    position: int,
    unrec: list[Unrecognized],
    gaps: list[Gap],
) -> QueueTask:
    obj = as_object(value, file, path)
    src = Source(file, json_path=path)
    for key in obj:
        if key not in _TASK_KEYS:
            unrec.append(_unknown_key(file, key, obj[key], path, "sk_task_queue:task"))
    node_index = get_int(obj, "nodeIndex", file, path, required=True)
    assert node_index is not None
    ttype = req_str(obj, "type", file, path)
    if ttype not in TASK_TYPES:
        unrec.append(Unrecognized(src, ttype, "sk_task_queue:type"))
    num_blocks = get_int(obj, "numBlocks", file, path)
    entry_cnt = get_int(obj, "entryCnt", file, path)
    args = hex_value(obj["args"], file, join(path, "args")) if "args" in obj else None
    debug = get_int(obj, "debugOptions", file, path)  # decimal integer, §3.10
    entries: list[int] = []
    if "entries" in obj:
        ent_path = join(path, "entries")
        for j, e in enumerate(as_list(obj["entries"], file, ent_path)):
            entries.append(hex_value(e, file, join(ent_path, j)))
    if entry_cnt is not None and "entries" in obj and len(entries) != min(entry_cnt, 4):
        # The dumper writes the first min(entryCnt, 4) entries (§3.10); anything else is a damaged record.
        gaps.append(
            Gap(
                "count_mismatch",
                f"entryCnt={entry_cnt} but {len(entries)} entries listed (expected {min(entry_cnt, 4)})",
                src,
            )
        )
    return QueueTask(
        src,
        scope_id,
        queue,
        position,
        node_index,
        ttype,
        num_blocks,
        entry_cnt,
        args,
        debug,
        decode_debug_options(debug) if debug is not None and debug >= 0 else (),
        tuple(entries),
    )


def _unknown_key(file: str, key: str, value: Any, path: str, context: str) -> Unrecognized:
    """A member this parser does not know: kept (not dropped) so a newer producer's fields are visible."""
    return Unrecognized(Source(file, json_path=join(path, key)), f"{key}: {show(value)}", context)
