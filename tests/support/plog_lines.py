"""Plog lines written by hand in the shapes of artifacts.md §1.1/§1.5 (not by the scene builder):
a runtime fault line, a plain Launch line, an error-manager code line and an SK handler line."""

from __future__ import annotations

HAND_LINES = [
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:00:01.123.456 [stream.cc:1024]48213 Synchronize:"
    b" Stream synchronize failed, stream_id=3, retCode=0x7150050.",
    b"[INFO] RUNTIME(48213,python3):2026-06-10-14:00:01.123.500 [task.cc:77]48213 Launch: ok",
    b"EZ9999: Inner Error!",
    b"[ERROR] RUNTIME(48213,python3):2026-06-10-14:00:01.124.000 [sk.cc:10]48213 Dump: [SK][Handler] x=1",
]
