"""Transparent huge pages for an HNSW graph's node block while it is built (Linux; elsewhere nothing).

hnswlib keeps every node's level-0 links and vector in one ``malloc`` block (``M0 * 4 + 4 + d * 4 + 8``
bytes per node: 1,676 at M 16, d 384, so 2.0 GB for 1.2M chunks), and building the graph reads it at random,
one vector per candidate looked at. With 4 KiB pages nearly every such read also misses the TLB; where the
kernel runs transparent huge pages in ``madvise`` mode (the common default) a block gets 2 MiB pages only if
asked, as numpy asks for its own large arrays. :func:`advised_blocks` asks (``madvise(MADV_HUGEPAGE)``) for
the anonymous mappings that appeared while the graph was allocated and are at least the size of its
vectors, before a node is written. Measured on this project's 2-core machine (1,213,191 stand-in vectors,
M 16, ef_construction 100, two graphs built side by side): 562.9 CPU-s per graph without, 488.8 with
(benchmarks/README.md). The graph is the same bytes either way: only the page size of its memory changes.

Nothing else changes if the advice cannot be given (another platform, a kernel without huge pages, a
block below the size, or one that malloc served from its heap: under its mmap threshold, at most 32 MiB,
so a graph of fewer than ~20K chunks): the build goes on with ordinary pages.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from functools import lru_cache

MADV_HUGEPAGE = 14  # <sys/mman.h> on Linux


def anonymous_ranges() -> set[tuple[int, int]]:
    """The ``(start, end)`` addresses of this process's anonymous mappings (empty where ``/proc`` cannot say)."""
    out: set[tuple[int, int]] = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) == 5:  # no path: an anonymous mapping (malloc's large blocks)
                    lo, hi = fields[0].split("-")
                    out.add((int(lo, 16), int(hi, 16)))
    except OSError:
        pass
    return out


@lru_cache(maxsize=1)
def _madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    fn = libc.madvise
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def advised_blocks(before: set[tuple[int, int]], min_bytes: int) -> list[tuple[int, int]]:
    """Ask for huge pages on every anonymous mapping not in ``before`` (:func:`anonymous_ranges`, taken just
    before the allocation) that spans at least ``min_bytes``; returns the ranges the kernel accepted."""
    madvise = _madvise()
    if madvise is None or min_bytes <= 0:
        return []
    accepted = []
    for lo, hi in sorted(anonymous_ranges() - before):
        if hi - lo >= min_bytes and madvise(lo, hi - lo, MADV_HUGEPAGE) == 0:
            accepted.append((lo, hi))
    return accepted
