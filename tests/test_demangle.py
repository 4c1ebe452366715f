"""Itanium demangling through one ``c++filt`` process, raw names without it (artifacts.md §4.4, row 74)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from skdbg.parsers import demangle as dm

MANGLED = ["_Z13add_custom_skILj0EEvv", "_Z13add_custom_skILj3EEvv"]


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no remembered names (the module keeps them for the process)."""
    monkeypatch.setattr(dm, "_cache", {})
    yield


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils c++filt not installed")
def test_row74_mangled_variants_demangled_when_cxxfilt_exists() -> None:
    """Row 74: SK variant template instances are shown demangled; plain names pass through."""
    got = dm.demangle_many([*MANGLED, "sk_entry_aic", "add_custom", MANGLED[0]])
    assert got == [
        "void add_custom_sk<0u>()",
        "void add_custom_sk<3u>()",
        "sk_entry_aic",
        "add_custom",
        got[0],
    ]
    assert dm.demangle("_Z3foov") == "foo()"


def test_row74_raw_names_without_cxxfilt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row 74: no ``c++filt`` on PATH → the raw names, unchanged."""
    monkeypatch.setattr(dm.shutil, "which", lambda _name: None)
    assert dm.demangler_path() is None
    assert dm.demangle_many([*MANGLED, "plain"]) == [*MANGLED, "plain"]


def test_row74_broken_tool_falls_back_to_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dm.shutil, "which", lambda _name: "/nonexistent/c++filt")
    assert dm.demangle_many(MANGLED) == MANGLED


def test_row74_one_process_for_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """All names of a batch go through a single subprocess call."""
    calls: list[str] = []

    class Done:
        returncode = 0

        def __init__(self, text: str) -> None:
            self.stdout = "\n".join(f"<{n}>" for n in text.splitlines()) + "\n"

    def fake_run(argv: list[str], *, input: str, **_kw: object) -> Done:  # noqa: A002 - subprocess.run keyword
        calls.append(input)
        return Done(input)

    monkeypatch.setattr(dm.shutil, "which", lambda _name: "/usr/bin/c++filt")
    monkeypatch.setattr(dm.subprocess, "run", fake_run)
    assert dm.demangle_many([*MANGLED, "x", "_Zbad\nname"]) == [
        f"<{MANGLED[0]}>",
        f"<{MANGLED[1]}>",
        "x",
        "_Zbad\nname",
    ]
    assert len(calls) == 1


def test_row74_line_count_mismatch_gives_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    class Short:
        returncode = 0
        stdout = "only one line\n"

    monkeypatch.setattr(dm.shutil, "which", lambda _name: "/usr/bin/c++filt")
    monkeypatch.setattr(dm.subprocess, "run", lambda *a, **k: Short())
    assert dm.demangle_many(MANGLED) == MANGLED
