"""Transparent huge pages for an HNSW graph's node block while it is built (Linux; elsewhere nothing).

hnswlib keeps every node's level-0 links and vector in one ``malloc`` block (``M0 * 4 + 4 + d * 4 + 8``
bytes per node: 1,676 at M 16, d 384, so 2.0 GB for 1.2M chunks), and building the graph reads it at random,
one vector per candidate looked at. With 4 KiB pages nearly every such read also misses the TLB; where the
kernel runs transparent huge pages in ``madvise`` mode (Debian's and Ubuntu's default; under ``always`` the
block has them anyway) a block gets 2 MiB pages only if asked, as numpy asks for its own large arrays. This
module asks (``madvise(MADV_HUGEPAGE)``) for the parts of anonymous mappings that appeared while the graph
was allocated and are at least the size of its vectors, before a node is written
(:func:`advise_new_blocks`). Measured on this project's 2-core machine (1,213,191 stand-in vectors, M 16,
ef_construction 100, two graphs built side by side, twice): 562.9 and 557.0 CPU-s per graph without, 488.8
and 492.4 with (benchmarks/README.md, "Huge pages for the graphs"); the saved graphs were the same bytes:
only the page size of the memory changes, never what is written in it.

Nothing else changes if the advice cannot be given (another platform, a kernel without huge pages, a C
library without ``madvise``, a block under :data:`MIN_BLOCK` (64 MiB: a graph of fewer than ~40K chunks at
384-d): the build goes on with ordinary pages. A thread building another graph meanwhile may map memory
too: only new parts of at least the block's size are advised, and a thread arena or stack never is. A block
malloc carves from memory the process already held (a freed region of its heap at least as large, as a long
test session may leave) is not new and keeps its pages; the rewriting stage builds each graph on a pool
thread, whose malloc arena (a thread's own, not the main one) serves nothing over 64 MiB from its heaps, so
there the block is normally a mapping of its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache

MADV_HUGEPAGE = 14  # <sys/mman.h> on Linux
#: a new range under this size is never advised: a glibc thread arena (64 MiB at most) or a thread's stack
MIN_BLOCK = 64 << 20
_LOCK = threading.Lock()  # one allocation watched at a time in this process


def anonymous_ranges() -> list[tuple[int, int]]:
    """The ``(start, end)`` addresses of this process's anonymous mappings, ascending (empty where ``/proc``
    cannot say)."""
    out: list[tuple[int, int]] = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) == 5:  # no path: an anonymous mapping (malloc's large blocks)
                    lo, hi = fields[0].split("-")
                    out.append((int(lo, 16), int(hi, 16)))
    except OSError:
        pass
    return sorted(out)


def new_ranges(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``after``'s ranges that no range of ``before`` covers (the kernel merges a new mapping
    into an adjacent one with the same flags, so a listed range may hold older memory too)."""
    out = []
    for lo, hi in after:
        start = lo
        for b_lo, b_hi in before:
            if b_hi <= start or b_lo >= hi:
                continue
            if b_lo > start:
                out.append((start, b_lo))
            start = max(start, b_hi)
        if start < hi:
            out.append((start, hi))
    return out


@lru_cache(maxsize=1)
def _madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library the interpreter runs on
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


@contextlib.contextmanager
def advise_new_blocks(min_bytes: int) -> Iterator[list[tuple[int, int]]]:
    """Around an allocation (``with advise_new_blocks(n) as advised: allocate()``): on leaving, ask for huge
    pages on every part of an anonymous mapping that appeared meanwhile and spans at least ``max(min_bytes,
    MIN_BLOCK)`` bytes; ``advised`` then lists the ranges the kernel accepted (empty: nothing to advise or
    no way to ask). One such watch runs at a time per process."""
    advised: list[tuple[int, int]] = []
    madvise = _madvise()
    with _LOCK:
        before = anonymous_ranges() if madvise is not None else []
        yield advised
        if madvise is None:
            return
        size = max(min_bytes, MIN_BLOCK)
        for lo, hi in new_ranges(before, anonymous_ranges()):
            if hi - lo >= size and madvise(lo, hi - lo, MADV_HUGEPAGE) == 0:
                advised.append((lo, hi))
