"""The C allocator's settings for a process that ends once its work is done."""

from __future__ import annotations

#: glibc's ``mallopt`` parameters (``<malloc.h>``) and what :func:`keep_freed_memory` sets them to
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_TRIM_THRESHOLD = 1 << 30  # free memory at the heap's top is kept up to this much (default 128 KiB, then
_TOP_PAD = 64 << 20  # adaptive); the heap grows this much beyond a request (default 128 KiB)
_MMAP_THRESHOLD = 32 << 20  # requests below this come from the heap (glibc's own maximum: 32 MiB)


def keep_freed_memory() -> None:
    """Have the C allocator keep the memory this process frees for its next requests, instead of
    handing it back to the system and taking fresh pages again: for a process that ends once its
    work is done (a batch command, the plog scan's child), never for a long-lived one (the TUI).

    Why: an analysis frees and makes again buffers of a few hundred KB to a few MB (each sk_meta
    file's bytes and lines, the scan's numpy temporaries, each value a forked scan pickles); with
    glibc's defaults part of them went back to the system each time and came back as fresh pages,
    one page fault per 4 KiB (~1.7 us each on the test machine, zeroing included). On the 232 MB
    bench scene: the main thread's 30,000 faults down to 25,000, the scan child's scan thread's 8,500
    to 6,000 (issue 18, thirty-second round). The process then keeps its largest heap until it ends.
    Only glibc has these parameters: ``mallopt`` is looked up, and nothing is done where it is
    missing (the allocator's defaults stay); its answer to each setting is not checked, an unknown
    parameter or value leaving that one as it was."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    for param, value in (
        (_M_TRIM_THRESHOLD, _TRIM_THRESHOLD),
        (_M_TOP_PAD, _TOP_PAD),
        (_M_MMAP_THRESHOLD, _MMAP_THRESHOLD),
    ):
        mallopt(param, value)
