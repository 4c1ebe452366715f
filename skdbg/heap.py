"""The C allocator's settings for a process that ends once its work is done."""

from __future__ import annotations

import sys

#: glibc's ``mallopt`` parameters (``<malloc.h>``)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: free memory at the heap's top is kept up to this much (glibc: 128 KiB, then twice the mmap threshold)
_TRIM_THRESHOLD = 1 << 30
#: requests below this come from the heap, not a mapping of their own (glibc's own maximum: 32 MiB).
#: Set beside the trim threshold, which alone turns glibc's adaptive thresholds off and maps every
#: request over 128 KiB afresh (more page faults than the defaults, measured)
_MMAP_THRESHOLD = 32 << 20


def keep_freed_memory() -> None:
    """Have the C allocator keep the memory this process frees for its next requests, instead of
    handing it back to the system and taking fresh pages again: for a process that ends once its
    work is done (a command that reads one scene, the plog scan's child), never for a long-lived one
    (the TUI, a command that goes through many scenes).

    Why: an analysis frees and makes again buffers of a few hundred KB to a few MB (each sk_meta
    file's bytes and lines, the scan's numpy temporaries, each value a forked scan pickles); with
    glibc's defaults part of them went back to the system each time and came back as fresh pages,
    one page fault per 4 KiB (~1.7 us each on the test machine, zeroing included). On the 232 MB
    bench scene: the main thread's 30,000 faults down to 25,000, the scan child's scan thread's 8,500
    to 6,000 (issue 18, thirty-second round). The process then keeps its largest heap until it ends.
    Only glibc has these parameters: on Linux ``mallopt`` is looked up, and nothing is done where it
    is missing (musl has a stub that ignores them) or elsewhere, and the trim threshold is set only
    once the mmap threshold was taken."""
    if not sys.platform.startswith("linux"):
        return  # no glibc (and no ``CDLL(None)`` on Windows)
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, TypeError):
        return
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # the mmap threshold first: where it is refused (a 32-bit glibc's maximum is lower), the trim
    # threshold alone would only turn the adaptive thresholds off
    if mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1:
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
