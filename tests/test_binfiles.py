"""``bin_files/`` names and the image table (artifacts.md §3.12, §4.7, rows 72–73)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.parsers.binfiles import (
    load_image_table,
    matches_func_name,
    parse_bin_file_name,
    sanitize_func_name,
)
from skdbg.parsers.common import ParseError
from skdbg.parsers.elf import open_elf
from skdbg.scenebuilder.elf import ChildKernel, bin_file_name, write_bin_files


def test_row72_plain_child_name() -> None:
    """Row 72: ``<name>_0x<UPPERHEX>.o``."""
    n = parse_bin_file_name("/x/bin_files/add_custom_0x12C0000000.o")
    assert n is not None
    assert (n.kind, n.func_name, n.base, n.hex_text, n.upper_hex) == (
        "child",
        "add_custom",
        0x12C0000000,
        "12C0000000",
        True,
    )


def test_row72_name_containing_0x_itself() -> None:
    """Row 72: names that contain ``_0x`` split on the LAST ``_0x``."""
    n = parse_bin_file_name("QuantBatchMatmulV3_0x1f_kernel_0xAB_0x12C0000400.o")
    assert n is not None and n.func_name == "QuantBatchMatmulV3_0x1f_kernel_0xAB" and n.base == 0x12C0000400


def test_row72_sanitized_characters() -> None:
    """Row 72: upstream SanitizePathComponent replaces ``/ \\ : * ? " < > |`` with ``_`` (sk_common.h)."""
    raw = 'kernel/name:with*chars?"<>|\\x'
    assert sanitize_func_name(raw) == "kernel_name_with_chars______x"
    name = bin_file_name(raw, 0x7000)
    assert name == "kernel_name_with_chars______x_0x7000.o"
    n = parse_bin_file_name(name)
    assert n is not None and matches_func_name(n.func_name or "", raw)


def test_row72_entry_name() -> None:
    """Row 72: ``sk_entry_0x….o`` is the SK entry binary; ``sk_entry_foo_0x….o`` is a child."""
    n = parse_bin_file_name("sk_entry_0x1240000000.o")
    assert n is not None and (n.kind, n.func_name, n.base) == ("entry", None, 0x1240000000)
    c = parse_bin_file_name("sk_entry_like_0x10.o")
    assert c is not None and c.kind == "child" and c.func_name == "sk_entry_like"


@pytest.mark.parametrize("bad", ["foo.o", "foo_0x.o", "foo_0xZZ.o", "_0x12.o", "foo_0x12.bin", "foo_0x12"])
def test_row72_names_that_do_not_fit(bad: str) -> None:
    assert parse_bin_file_name(bad) is None


def test_row72_lower_case_hex_is_accepted_and_flagged() -> None:
    n = parse_bin_file_name("k_0xabc.o")
    assert n is not None and n.base == 0xABC and not n.upper_hex


@settings(max_examples=200)
@given(st.text(min_size=1, max_size=40).filter(lambda s: "\0" not in s), st.integers(0, 2**64 - 1))
def test_generated_names_round_trip(func: str, base: int) -> None:
    n = parse_bin_file_name(bin_file_name(func, base))
    if sanitize_func_name(func) == "sk_entry":
        assert n is not None and n.kind == "entry"
        return
    assert n is not None and n.base == base and n.func_name == sanitize_func_name(func)


def _scene(tmp_path: Path) -> tuple[Path, dict[str, tuple[Path, object]]]:
    a = ChildKernel("add_custom", 0x12C0000000)
    written = write_bin_files(tmp_path / "model_48_1", [a], entry_base=0x1240000000)
    size_a = open_elf(written["add_custom"][0]).extent.size  # type: ignore[union-attr]
    b = ChildKernel("mul/custom", 0x12C0000000 + size_a, n_variants=2)  # adjacent image
    written.update(write_bin_files(tmp_path / "model_48_1", [b]))
    return tmp_path / "model_48_1", written  # type: ignore[return-value]


def test_row73_pc_in_child_variant_maps_to_global_and_split(tmp_path: Path) -> None:
    """Row 73: PC in a child binary → SK variant → child global + split index via the bind map."""
    model, written = _scene(tmp_path)
    table = load_image_table(model)
    layout = written["add_custom"][1]
    name2, off2, _size2 = layout.variants[2]  # type: ignore[attr-defined]
    loc = table.locate(0x12C0000000 + off2 + 0x10)
    assert loc.image is not None and loc.image.func_name == "add_custom" and not loc.in_entry
    assert (loc.symbol, loc.offset_in_symbol, loc.tier, loc.confidence) == (name2, 0x10, "symtab", "high")
    assert (loc.child_global, loc.split_index) == ("add_custom", 2)
    assert "SK variant split 2 of child global add_custom (bind map)" in loc.reason
    if loc.demangled != loc.symbol:  # c++filt present
        assert loc.demangled == "void add_custom_sk<2u>()"


def test_row73_pc_in_entry_binary(tmp_path: Path) -> None:
    """Row 73: PC in the entry binary → SK glue, no child."""
    model, _w = _scene(tmp_path)
    loc = load_image_table(model).locate(0x1240000000 + 0x400 + 4)
    assert loc.in_entry and loc.symbol == "sk_entry_aiv" and loc.child_global is None
    assert "SK glue" in loc.reason


def test_row73_pc_outside_every_image(tmp_path: Path) -> None:
    """Row 73: PC in no image → unresolved with the neighbouring images named."""
    model, _w = _scene(tmp_path)
    table = load_image_table(model)
    loc = table.locate(0x1300000000)
    assert loc.image is None and loc.tier == "unresolved" and loc.confidence == "none"
    assert loc.reason.startswith("0x1300000000 is outside every dumped image after mul_custom_0x")
    low = table.locate(0x1000)
    assert "before sk_entry_0x1240000000.o at 0x1240000000" in low.reason


def test_row73_adjacent_images(tmp_path: Path) -> None:
    """Row 73: two adjacent images — the last byte of A is A, the first byte of B is B."""
    model, written = _scene(tmp_path)
    table = load_image_table(model)
    imgs = {i.func_name: i for i in table.images if i.kind == "child"}
    a, b = imgs["add_custom"], imgs["mul_custom"]
    assert a.end == b.base
    assert table.locate(a.end - 1).image == a  # type: ignore[operator]
    at_b = table.locate(b.base)
    assert at_b.image == b and at_b.symbol == "mul/custom" and at_b.child_global == "mul/custom"
    assert "original global kernel" in at_b.reason
    assert [g.kind for g in table.gaps] == []
    assert table.entry is not None and table.entry.base == 0x1240000000


def test_row73_gap_inside_an_image(tmp_path: Path) -> None:
    model, written = _scene(tmp_path)
    layout = written["add_custom"][1]
    _n, off0, size0 = layout.variants[0]  # type: ignore[attr-defined]
    loc = load_image_table(model).locate(0x12C0000000 + off0 + size0 + 4)
    assert loc.image is not None and loc.tier == "unresolved" and "gap between" in loc.reason


def test_a_table_reads_each_image_once_and_lazy_lookups_equal_full_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lookups of many PCs (a task entry each, as attribution makes them) open each image's ELF and
    metadata once for the table's life, and give what the same lookups give once every image was
    placed (``images`` read: the exact pass)."""
    from skdbg.parsers import binfiles

    model, _w = _scene(tmp_path)
    opened: list[str] = []
    metas: list[str] = []
    real_elf, real_meta = binfiles.cached_elf, binfiles.cached_meta

    def counting_elf(path: str) -> object:
        opened.append(str(path))
        return real_elf(path)

    def counting_meta(image: object) -> object:
        metas.append(image.name)  # type: ignore[attr-defined]
        return real_meta(image)  # type: ignore[arg-type]

    monkeypatch.setattr(binfiles, "cached_elf", counting_elf)
    monkeypatch.setattr(binfiles, "cached_meta", counting_meta)
    lazy = load_image_table(model)
    pcs = [0x1000, 0x1240000000 + 0x404, 0x12C0000000, 0x12C0000010, 0x12C0000000 + 0x7FF, 0x1300000000]
    pcs += [pc + step for pc in pcs for step in (0, 2, 0x40)]
    got = [lazy.locate(pc) for pc in pcs * 3]
    assert len(opened) == len(set(opened)) and len(metas) == len(set(metas))
    exact = load_image_table(model)
    assert len(exact.images) == 3  # every image placed before any lookup (the entry and two children)
    assert got == [exact.locate(pc) for pc in pcs * 3]
    assert [lazy.containing(pc) for pc in pcs] == [exact.containing(pc) for pc in pcs]


def test_function_size_at_is_the_size_locate_gives_at_a_functions_first_byte(tmp_path: Path) -> None:
    """``function_size_at`` (attribution's lookup for each task entry) is ``locate``'s ``sym_size`` where
    ``locate`` places the PC at offset 0 of a symbol outside the SK entry binary, else None: at every
    symbol start, inside, in gaps, in the entry binary, outside every image, at adjacent images'
    borders, and in a broken image (never placed). And it leaves the table as ``locate`` does: the same
    images opened in the same order, the same gaps."""
    from skdbg.parsers import binfiles

    model, written = _scene(tmp_path)
    (model / "bin_files" / bin_file_name("broken", 0x1400000000)).write_bytes(b"\x7fELF not really")
    pcs = [0x1400000000, 0x1400000004]
    for base in (0x1240000000, 0x12C0000000):
        pcs += [base + off for off in range(0, 0x1000, 4)]
    for layout_name in ("add_custom", "mul/custom"):
        layout = written[layout_name][1]
        for _n, off, size in layout.variants:  # type: ignore[attr-defined]
            pcs += [0x12C0000000 + off + d for d in (0, 1, size - 1, size, size + 4)]
    pcs += [0x1000, 0x1300000000]

    def expected(table: binfiles.ImageTable, pc: int) -> int | None:
        loc = table.locate(pc, demangle_names=False)
        if loc.in_entry or loc.sym_size is None or loc.offset_in_symbol != 0:
            return None
        return loc.sym_size

    lean, full = load_image_table(model), load_image_table(model)
    got = [lean.function_size_at(pc) for pc in pcs]
    assert got == [expected(full, pc) for pc in pcs]
    assert sum(size is not None for size in got) >= 4 and 0 not in got  # the check saw real functions
    assert None in got  # and PCs that are no function's start
    assert [(g.kind, g.detail) for g in lean.gaps] == [(g.kind, g.detail) for g in full.gaps]
    assert [g.kind for g in lean.gaps] == ["bad_elf"]
    assert list(lean._infos) == list(full._infos)  # the same images opened, in the same order


def test_function_size_at_places_every_image_for_a_pc_outside_them_as_locate_does(tmp_path: Path) -> None:
    """A PC outside every image makes ``locate`` place every image (its reason names the neighbours),
    and from then on a PC in overlapping images is looked up exactly (the lower image that holds it too
    is found). ``function_size_at`` must leave the table so, or an entry after such a PC would get
    another answer than ``locate`` gave (review of issue 18's forty-fourth round)."""
    x = 0x12C0000000
    model = tmp_path / "m"
    write_bin_files(model, [ChildKernel("aaa", x, n_variants=3)], entry_base=0x1240000000)
    write_bin_files(model, [ChildKernel("ccc", x + 0x10, n_variants=1, func_size=0x20, variant_size=0x20)])
    (model / "bin_files" / bin_file_name("zzz_broken", 0x9000000000)).write_bytes(b"\x7fELF junk")
    full = load_image_table(model)
    in_aaa = next(
        pc
        for pc in range(x + 0x300, x + 0x800, 4)
        if (loc := full.locate(pc, demangle_names=False)).offset_in_symbol == 0 and loc.image is not None
    )
    answers = []
    for order in ([0x1000, in_aaa], [in_aaa, 0x1000]):
        old, new = load_image_table(model), load_image_table(model)
        want: list[int | None] = []
        for pc in order:
            loc = old.locate(pc, demangle_names=False)
            keep = not loc.in_entry and loc.sym_size is not None and loc.offset_in_symbol == 0
            want.append(loc.sym_size if keep else None)
        assert [new.function_size_at(pc) for pc in order] == want
        assert [(g.kind, g.detail) for g in new.gaps] == [(g.kind, g.detail) for g in old.gaps]
        assert list(new._infos) == list(old._infos)
        answers.append(want)
    # after the PC outside every image the lower image is found; before it, the lazy lookup stops at ccc
    assert answers[0][1] is not None and answers[1][0] is None


def test_a_table_keeps_a_bounded_number_of_elves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table keeps the ELFs (each holds its file's bytes) and metadata of the images looked up last,
    as many as the module caches do: with a limit of 1, lookups in the three images keep the last one,
    and lookups in the dropped ones open their ELFs again, with the same answers."""
    from skdbg.parsers import binfiles

    monkeypatch.setattr(binfiles, "_CACHE_LIMIT", 1)
    binfiles._ELF_CACHE.clear()
    binfiles._META_CACHE.clear()
    model, _w = _scene(tmp_path)
    table = load_image_table(model)
    first = table.locate(0x1240000000 + 0x404)  # the entry image
    children = [table.locate(pc) for pc in (0x12C0000010, 0x12C0000000 + 0xA10)]  # the two child images
    assert [len(table._elves), len(table._metas)] == [1, 1]
    assert all("mul_custom" in p for p in (*table._elves, *table._metas))
    again = table.locate(0x1240000000 + 0x404)
    assert again == first and any("sk_entry" in p for p in table._elves) and len(table._elves) == 1
    assert [table.locate(pc) for pc in (0x12C0000010, 0x12C0000000 + 0xA10)] == children


def test_the_cache_key_is_the_resolved_path_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ELF caches' key of a file, a file in a linked folder, a link to a file, a path with ``..``
    after a linked folder and a relative path is what resolving the whole path gives; a missing file
    and a dangling link raise OSError, as ``stat`` did."""

    from skdbg.parsers import binfiles

    real = tmp_path / "real" / "bin_files"
    real.mkdir(parents=True)
    (real / "a_0x10.o").write_bytes(b"x" * 10)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.o").write_bytes(b"y" * 3)
    (tmp_path / "linked").symlink_to(real)
    (real / "link_0x20.o").symlink_to(tmp_path / "elsewhere" / "b.o")
    (tmp_path / "up").symlink_to(real)  # up/.. is real/.., not tmp_path
    (real.parent / "c.o").write_bytes(b"z")
    monkeypatch.chdir(tmp_path)
    paths = [
        real / "a_0x10.o",
        tmp_path / "linked" / "a_0x10.o",
        real / "link_0x20.o",
        tmp_path / "up" / ".." / "c.o",
        Path("linked/a_0x10.o"),
        Path("up/../c.o"),
    ]

    def resolved(p: Path) -> tuple[str, int, int, int, int]:
        st = p.stat()
        return (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)

    for p in paths:
        assert binfiles._key(p) == resolved(p), p
    (real / "dangling_0x30.o").symlink_to(tmp_path / "gone.o")
    for p in (real / "missing_0x40.o", real / "dangling_0x30.o"):
        with pytest.raises(OSError):
            binfiles._key(p)
    # the same relative path from another current folder: its own file (the folders are cached absolute)
    other = tmp_path / "other" / "linked"
    other.mkdir(parents=True)
    (other / "a_0x10.o").write_bytes(b"w" * 10)
    monkeypatch.chdir(tmp_path / "other")
    assert binfiles._key(Path("linked/a_0x10.o")) == resolved(Path("linked/a_0x10.o"))
    assert binfiles._key(Path("linked/a_0x10.o")) != binfiles._key(tmp_path / "linked" / "a_0x10.o")


def test_a_folder_link_re_pointed_keys_the_new_file_apart(tmp_path: Path) -> None:
    """A folder link re-pointed after its real path was taken (a long-lived process): a file of the same
    name, size and mtime in the new target is another key (its inode), so the caches open it."""
    import os

    from skdbg.parsers import binfiles

    old, new = tmp_path / "old", tmp_path / "new"
    for folder, body in ((old, b"OLD!"), (new, b"NEW!")):
        folder.mkdir()
        (folder / "k_0x10.o").write_bytes(body)
        os.utime(folder / "k_0x10.o", ns=(1_000_000_000, 1_000_000_000))
    link = tmp_path / "bin_files"
    link.symlink_to(old)
    first = binfiles._key(link / "k_0x10.o")
    link.unlink()
    link.symlink_to(new)
    again = binfiles._key(link / "k_0x10.o")
    assert first[1:3] == again[1:3]  # same size and mtime
    assert again != first


def test_directory_problems(tmp_path: Path) -> None:
    empty = load_image_table(tmp_path)
    assert [g.kind for g in empty.gaps] == ["missing_bin_files"]
    assert empty.gaps[0].collect == "export ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 before the run"
    d = tmp_path / "m" / "bin_files"
    d.mkdir(parents=True)
    (d / "notes.txt").write_text("x")
    (d / "broken_0x100.o").write_bytes(b"garbage")
    t = load_image_table(d)
    assert [u.text for u in t.unrecognized] == ["notes.txt"]
    assert t.images[0].size is None
    assert [g.kind for g in t.gaps] == ["no_entry_binary", "bad_elf"]
    assert t.locate(0x100).image is None
    f = d / "notes.txt"
    with pytest.raises(ParseError):
        load_image_table(f)


def test_frames(tmp_path: Path) -> None:
    model, _w = _scene(tmp_path)
    table = load_image_table(model)
    frame = table.to_frame()
    assert list(frame.columns) == ["file", "line", "kind", "func_name", "base", "text_offset", "size", "end"]
    assert frame["kind"].tolist() == ["entry", "child", "child"]
    loc = table.locate(0x1240000000)
    assert loc.symbol == "sk_entry_aic" and loc.in_entry
