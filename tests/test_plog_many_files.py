"""Per-file shortcuts of the plog scan for scenes of many small plogs (issue 18).

The scan tests a file's head for binary data on its own first read instead of opening the file a
second time through :func:`check_text_file`, and looks anchors up with a sorted-array search instead
of ``np.isin``. Each is compared here with the general path it replaces (the oracle).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skdbg.parsers.plog as plog_mod
from skdbg.parsers.common import Gap, ParseError, Source
from skdbg.parsers.plog import WHAT, PlogFile, scan_plog_parts
from skdbg.parsers.textio import BINARY_PROBE, check_text_file
from skdbg.scene import open_scene
from tests.support.plog_lines import HAND_LINES as _LINES  # hand-written from the spec's example lines


def _scan(path: Path) -> tuple[object, str | None]:
    """What the scan yields for ``path`` (or its error text) and the SHA-256 it fed."""
    sha = hashlib.sha256()
    try:
        items = [batch for batch in scan_plog_parts(path, gaps=[], hasher=sha)]
    except ParseError as exc:
        return ("error", str(exc)), None
    return items, sha.hexdigest()


def _oracle(path: Path) -> tuple[object, str | None]:
    """The general path: ``check_text_file`` first (its own open and read), then the scan without
    the head test (scan_marker_lines' reader), as scan_plog_parts did before."""
    try:
        check_text_file(path, what=WHAT)
    except ParseError as exc:
        return ("error", str(exc)), None
    sha = hashlib.sha256()
    cuts: list[tuple[int, int]] = []
    batches = plog_mod._batches(plog_mod._marker_line_columns(path, plog_mod.FAULT_MARKERS, cuts, sha))
    items = [plog_mod._batch_records(str(path), *b, None) for b in batches]
    return items, sha.hexdigest()


def _heads() -> list[bytes]:
    text = b"\n".join(_LINES) + b"\n"
    body = text * (3 * BINARY_PROBE // len(text))
    return [
        b"",
        text,
        text.rstrip(b"\n"),  # last line without newline
        b"\x00" + text,  # NUL at the start
        body[: BINARY_PROBE - 1] + b"\x00" + body[BINARY_PROBE:],  # NUL at the last probed byte
        body[:BINARY_PROBE] + b"\x00" + body[BINARY_PROBE + 1 :],  # NUL just past the probe: text
        b"\x01\x02\x03" * 400 + text,  # mostly control bytes
        b"\x01" * (BINARY_PROBE // 10) + body,  # control bytes at exactly a tenth: text
        b"\x01" * (BINARY_PROBE // 10 + 1) + body,  # one more: binary
        body,
    ]


@pytest.mark.parametrize("k", range(len(_heads())))
def test_head_test_on_the_scans_read_matches_check_text_file(tmp_path: Path, k: int) -> None:
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(_heads()[k])
    assert _scan(path) == _oracle(path)


@pytest.mark.parametrize("short", [1, 100, BINARY_PROBE - 1])
def test_a_short_first_read_still_probes_the_whole_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short: int
) -> None:
    """A read that returns fewer bytes than asked (a network file system) is read on until the probe
    is full, as ``check_text_file``'s ``read`` does: a NUL past the first read is still seen."""
    text = b"\n".join(_LINES) + b"\n"
    data = (text * 200)[: BINARY_PROBE - 10] + b"\x00" + text
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    real = plog_mod._read_head

    def read_short(reader, buf, hasher, p):  # type: ignore[no-untyped-def]
        class Short:
            def readinto(self, mv):  # type: ignore[no-untyped-def]
                return reader.readinto(mv[:short])

        return real(Short(), buf, hasher, p)  # type: ignore[arg-type]

    monkeypatch.setattr(plog_mod, "_read_head", read_short)
    assert _scan(path) == _oracle(path)
    assert _scan(path)[0][0] == "error"  # type: ignore[index]


def test_missing_file_and_directory_are_the_same_errors(tmp_path: Path) -> None:
    for path in (tmp_path / "plog-1_20260610140000000.log", tmp_path):
        assert _scan(path) == _oracle(path)
        assert _scan(path)[0][0] == "error"  # type: ignore[index]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.one_of(st.sampled_from(_LINES), st.binary(max_size=300).filter(lambda b: b"\n" not in b)),
        max_size=80,
    ),
    newline_at_end=st.booleans(),
)
def test_scan_of_any_small_file_matches_the_two_open_path(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], newline_at_end: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    path = tmp_path_factory.mktemp("h") / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    assert _scan(path) == _oracle(path)


def test_member_finds_only_the_members() -> None:
    members = np.array([3, 7, 0xFFFFFFFF], dtype=np.uint32)
    values = np.array([0, 3, 4, 7, 8, 0xFFFFFFFE, 0xFFFFFFFF], dtype=np.uint32)
    assert plog_mod._member(values, members).tolist() == [False, True, False, True, False, False, True]
    assert plog_mod._member(values, np.array([], dtype=np.uint32)).tolist() == [False] * 7


@settings(max_examples=200, deadline=None)
@given(
    members=st.sets(st.integers(0, 2**32 - 1), max_size=40),
    values=st.lists(st.integers(0, 2**32 - 1), max_size=200),
    picks=st.lists(st.integers(0, 39), max_size=50),
)
def test_member_is_isin(members: set[int], values: list[int], picks: list[int]) -> None:
    ms = sorted(members)
    vs = values + [ms[i % len(ms)] for i in picks] if ms else values
    m = np.array(ms, dtype=np.uint32)
    v = np.array(vs, dtype=np.uint32)
    assert plog_mod._member(v, m).tolist() == np.isin(v, m).tolist()


_NAMES = [
    "plog-48213_20260610140000000.log",
    "device-7_20260610140000000.log",
    "plog-48213_2026061014000000.log",  # 16-digit stamp: no datetime
    "plog-48213_20261310140000000.log",  # month 13: no datetime
    "plog-1234567890123456789_1.log",
    "plog-12345678901234567890_1.log",  # pid of 20 digits: not plog-named
    "plog-48213_20260610140000000.log.1",
    "Plog-48213_20260610140000000.log",
    "plog_excerpt.log",
]


def _parse_plog_name_oracle(path: str | Path) -> PlogFile | None:
    """``parse_plog_name`` as it was before ``plog_file_named`` (the general path, kept as the oracle)."""
    p = Path(path)
    m = plog_mod.PLOG_NAME_RE.match(p.name)
    if m is None:
        return None
    return PlogFile(
        src=Source(str(p)),
        kind=m.group("kind"),
        pid=int(m.group("pid")),
        stamp=plog_mod._parse_stamp(m.group("stamp")),
        stamp_text=m.group("stamp"),
    )


@pytest.mark.parametrize("name", _NAMES)
def test_plog_file_named_is_parse_plog_name(tmp_path: Path, name: str) -> None:
    p = tmp_path / "log" / name
    assert plog_mod.plog_file_named(str(p), name) == _parse_plog_name_oracle(p)
    assert plog_mod.parse_plog_name(str(p)) == _parse_plog_name_oracle(str(p))


def test_scene_walk_names_each_plog_as_parse_plog_name(tmp_path: Path) -> None:
    """open_scene's plogs and their artifacts: each as the general path names its file."""
    for rel in ("log/plog/plog-7_20260610140000000.log", "log/device-7_20260610140001000.log", "a/b/x.log"):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(_LINES[0] + b"\n")
    scene = open_scene(tmp_path)
    named = [pf for pf in scene.plogs if pf.stamp_text]
    assert len(named) == 2
    assert named == [_parse_plog_name_oracle(pf.path) for pf in named]
    logs = [a for a in scene.artifacts if a.kind in ("plog", "device_log")]
    assert [a.path for a in logs] == [Path(pf.path) for pf in scene.plogs]
    assert [str(a.path) for a in logs] == [pf.path for pf in scene.plogs]


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["plog", "device", "dev", ""]),
    pid=st.text("0123456789", max_size=21),
    stamp=st.text("0123456789x", max_size=32),
    ext=st.sampled_from([".log", ".LOG", ".log~", ""]),
)
def test_plog_file_named_is_parse_plog_name_for_any_name(kind: str, pid: str, stamp: str, ext: str) -> None:
    name = f"{kind}-{pid}_{stamp}{ext}"
    p = Path("/scene/log/plog") / name
    assert plog_mod.plog_file_named(str(p), p.name) == _parse_plog_name_oracle(p)
    assert plog_mod.parse_plog_name(p) == _parse_plog_name_oracle(p)


# ----------------------------------------------------------------------------- many files to a block


def _scan_each(paths: list[Path]) -> list[tuple[object, ...]]:
    """The oracle: scan_plog_parts of each file alone, with a hasher of its own."""
    out: list[tuple[object, ...]] = []
    for path in paths:
        sha = hashlib.sha256()
        gaps: list[Gap] = []
        parts: list[object] = []
        error = None
        try:
            for part in scan_plog_parts(path, gaps=gaps, hasher=sha):
                parts.append(part)
        except ParseError as exc:
            error = str(exc)
        out.append((parts, gaps, error, None if error else sha.hexdigest()))
    return out


def _scan_packed(paths: list[Path]) -> list[tuple[object, ...]]:
    reached: list[int] = []

    def note(i: int) -> None:
        reached.append(i)

    out: list[tuple[object, ...]] = []
    for done in plog_mod.scan_plog_files([str(p) for p in paths], new_hasher=hashlib.sha256, reached=note):
        error = None if done.error is None else str(done.error)
        digest = None if error else done.hasher.hexdigest()  # type: ignore[union-attr]
        out.append((done.parts, done.gaps, error, digest))
    assert reached == list(range(len(paths)))
    return out


def _contents() -> st.SearchStrategy[bytes]:
    line = st.one_of(
        st.sampled_from([*_LINES, b"", b"plain text", b"EZ9999 first words\r", b"[SK][", b"x" * 70]),
        st.binary(max_size=120).filter(lambda b: b"\n" not in b),
    )
    body = st.builds(
        lambda ls, end: b"\n".join(ls) + (b"\n" if end and ls else b""),
        st.lists(line, max_size=40),
        st.booleans(),
    )
    return st.one_of(body, st.builds(lambda b: b"\x00" + b, body))


@settings(max_examples=80, deadline=None)
@given(
    contents=st.lists(st.one_of(st.none(), _contents()), min_size=1, max_size=12),
    pack=st.sampled_from([0, 300, 1 << 20]),
    small=st.sampled_from([plog_mod._SMALL_BLOCK, 256]),
)
def test_files_scanned_many_to_a_block_are_each_scanned_alone(
    tmp_path_factory: pytest.TempPathFactory, contents: list[bytes | None], pack: int, small: int
) -> None:
    """Small blocks (64 KB: a few flushes), files up to ``pack`` bytes packed (0: none; 300: some),
    missing files among them: each file's batches, gaps, error and digest as scanned alone."""
    folder = tmp_path_factory.mktemp("many")
    paths = []
    for k, data in enumerate(contents):
        path = folder / f"plog-48213_2026061014{k:07d}.log"
        if data is not None:
            path.write_bytes(data)
        paths.append(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plog_mod, "CHUNK", 64 << 10)
        mp.setattr(plog_mod, "_PACK_FILE", pack)
        mp.setattr(plog_mod, "_STATE", plog_mod._ScanState())
        mp.setattr(plog_mod, "_SMALL_BLOCK", small)  # 256: blocks and line counts the numpy way
        assert _scan_packed(paths) == _scan_each(paths)


def test_many_files_fill_and_flush_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-made files: some end without a newline (their marker line incomplete), one is empty, one
    binary, one a directory, one larger than a packed file; blocks of 64 KB flush several times."""
    monkeypatch.setattr(plog_mod, "CHUNK", 64 << 10)
    monkeypatch.setattr(plog_mod, "_PACK_FILE", 20 << 10)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    text = b"\n".join(_LINES)
    specs = [
        text * 50,
        text,
        b"",
        text + b"\n",
        b"\x00" + text,
        None,
        text * 400 + b"\n",
        (text + b"\r\n") * 30,
    ]
    paths = []
    for k, data in enumerate(specs * 4):
        path = tmp_path / f"plog-48213_20260610140{k:06d}.log"
        if data is None:
            path.mkdir()
        else:
            path.write_bytes(data)
        paths.append(path)
    got = _scan_packed(paths)
    assert got == _scan_each(paths)
    incomplete = [
        r for parts, *_ in got for batch, _ in parts for r in batch if not getattr(r, "complete", True)
    ]
    assert len(incomplete) == 8  # the marker line closing `text * 50` and `text`, 4 times each
    assert sum(e is not None for *_, e, _ in got) == 8  # binary and directory, 4 times


def test_a_file_grown_past_its_stat_is_scanned_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file larger than its fstat said (it grew): read to its end as scan_plog_parts reads it."""
    text = b"\n".join(_LINES) + b"\n"
    paths = []
    for k, data in enumerate([text, text * 3000, text]):
        path = tmp_path / f"plog-48213_20260610140{k:06d}.log"
        path.write_bytes(data)
        paths.append(path)
    real = plog_mod.open_regular_fd

    def shrunk(path: object, *, what: str) -> tuple[int, os.stat_result]:
        fd, st = real(path, what=what)  # type: ignore[arg-type]
        fields = list(st)
        fields[6] = min(fields[6], 100)  # st_size
        return fd, os.stat_result(fields)

    monkeypatch.setattr(plog_mod, "open_regular_fd", shrunk)
    assert _scan_packed(paths) == _scan_each(paths)


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"\n", b"a", b"\r", b"\x00"]), min_size=1, max_size=3000).map(b"".join),
    picks=st.lists(st.floats(0, 1), max_size=6),
    small=st.sampled_from([1 << 20, 0]),
)
def test_newlines_before_counts_as_bytes_count(data: bytes, picks: list[float], small: int) -> None:
    buf = bytearray(data + b"junk\n after")  # bytes past ``used`` are not counted
    starts = sorted(int(f * len(data)) for f in picks)  # offsets inside the data, newlines among them
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plog_mod, "_SMALL_BLOCK", small)  # 0: the numpy way
        got = plog_mod._newlines_before(buf, len(data), starts)
    assert got == [data.count(b"\n", 0, end) for end in [*starts, len(data)]]


def test_plog_stamps_handed_over_by_the_scan_are_the_files_stat(tmp_path: Path) -> None:
    """The scan hands each plog's hash over with the mtime its fstat gave (no stat each later on the
    main thread): the size and stamp the scene lists are what ``os.stat`` says (the general path)."""
    from skdbg.scene import evidence_for

    text = b"\n".join(_LINES) + b"\n"
    for k, data in enumerate([text, text * 3, b"", text + b"tail without newline"]):
        path = tmp_path / "log" / f"plog-48213_2026061014{k:07d}.log"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (1_700_000_000.25 + k, 1_700_000_000.75 + k))
    scene = open_scene(tmp_path)
    ev = evidence_for(scene)
    handed = ev.start_plog_scan(on_digest=scene.adopt_digest)
    _ = ev.plogs
    plogs = [a for a in scene.artifacts if a.kind == "plog"]
    assert sorted(handed) == sorted(str(a.path) for a in plogs) and len(plogs) == 4
    for a in plogs:
        assert a._hashed_mtime is not None  # handed over: no stat needed
        st = os.stat(a.path)
        assert a.size_and_stamp() == (st.st_size, st.st_mtime)
        assert a.digest() == (st.st_size, hashlib.sha256(a.path.read_bytes()).hexdigest())


@pytest.mark.parametrize(
    "kbytes",
    [(1, 20), (10,) * 10],  # small then too big to pack / ten that fill the block
)
def test_a_scan_abandoned_while_the_next_file_waits_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kbytes: tuple[int, ...]
) -> None:
    """The next file is opened (for its size) before the packed ones are handed out; a caller that
    stops there (an error while filing, a closed generator) must not leave its descriptor open."""
    import gc

    monkeypatch.setattr(plog_mod, "CHUNK", 64 << 10)  # the least that packs: four binary probes' worth
    monkeypatch.setattr(plog_mod, "_PACK_FILE", 16 << 10)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    line = _LINES[0] + b"\n"
    paths = []
    for k, kb in enumerate(kbytes):
        path = tmp_path / f"plog-48213_2026061014{k:07d}.log"
        path.write_bytes(line * ((kb << 10) // len(line)))
        paths.append(str(path))
    fds = len(os.listdir("/proc/self/fd"))
    scan = plog_mod.scan_plog_files(paths)
    next(scan)  # the packed files handed out while the next one waits, opened
    scan.close()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds


def test_short_reads_of_a_big_file_read_it_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system may return fewer bytes than asked (a network mount); only a short read that
    reaches the size ``fstat`` gave ends the file, any other is followed by more reads."""
    if plog_mod._READV is None:
        pytest.skip("no readv here: the buffered reader reads on by itself")
    real = plog_mod._READV

    def capped(fd: int, buffers: list[memoryview]) -> int:
        return real(fd, [buffers[0][:4099]])

    text = b"\n".join(_LINES) + b"\n"
    data = text * ((3 << 20) // len(text))  # over _PACK_FILE: scanned alone, block by block
    path = tmp_path / "plog-48213_20260610140000000.log"
    path.write_bytes(data)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    expected = _scan_each([path])
    monkeypatch.setattr(plog_mod, "_READV", capped)
    monkeypatch.setattr(plog_mod, "_STATE", plog_mod._ScanState())
    got = _scan_packed([path])

    def flat(scans: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        # shorter reads make smaller blocks, so other batches: the same items, gaps, error and digest
        return [([i for items, _ in parts for i in items], *rest) for parts, *rest in scans]  # type: ignore[attr-defined]

    assert flat(got) == flat(expected)
    (done,) = plog_mod.scan_plog_files([str(path)], new_hasher=hashlib.sha256)
    assert done.hasher is not None and done.hasher.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_plog_whose_size_changed_while_read_is_stamped_by_the_scene(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's fstat said one size, the bytes hashed are another (the file changed while read): its
    mtime is not handed over, and the scene stats the file itself as before."""
    from skdbg.scene import evidence_for

    text = b"\n".join(_LINES) + b"\n"
    paths = []
    for k in range(2):
        path = tmp_path / "log" / f"plog-48213_2026061014{k:07d}.log"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text * (k + 1))
        paths.append(path)
    real_open = plog_mod.open_regular_fd

    def stale_fstat(path: Path, *args: object, **kwargs: object) -> tuple[int, os.stat_result]:
        fd, st = real_open(path, *args, **kwargs)  # type: ignore[arg-type]
        if Path(path) == paths[1]:
            fields = list(st)
            fields[6] += 10  # st_size: ten bytes more than the file gives
            st = os.stat_result(fields)
        return fd, st

    monkeypatch.setattr(plog_mod, "open_regular_fd", stale_fstat)
    scene = open_scene(tmp_path)
    ev = evidence_for(scene)
    ev.start_plog_scan(on_digest=scene.adopt_digest)
    _ = ev.plogs
    by_path = {a.path: a for a in scene.artifacts if a.kind == "plog"}
    assert by_path[paths[0]]._hashed_mtime is not None
    assert by_path[paths[1]]._hashed_mtime is None  # sizes differ: not handed over
    for path in paths:
        st = os.stat(path)
        assert by_path[path].size_and_stamp() == (st.st_size, st.st_mtime)
        assert by_path[path].digest() == (st.st_size, hashlib.sha256(path.read_bytes()).hexdigest())
