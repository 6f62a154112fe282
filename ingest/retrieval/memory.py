"""Fail early, before a job allocates, when what it would hold cannot fit in the memory this machine has free.

A job that outgrows RAM does not fail on its own: it swaps the machine to death. So the stages that hold
something per text or per vector estimate it first (the embedding job: the texts and keys the driver reads;
the rewriting stage's dense index: the float32 matrix, the chunk texts and the HNSW graphs,
:func:`index_memory`) and refuse, with one line, when the estimate exceeds ``max_memory_fraction`` of the
memory available now (Linux ``MemAvailable``, read with psutil).

The fraction is a named setting: ``max_memory_fraction`` (default :data:`DEFAULT_FRACTION`) in a chunking
experiment's config, or the variable ``RAGWH_MAX_MEMORY_FRACTION`` (it wins; ``1`` allows all of the available
memory, a large value disables the check). The estimates are lower bounds of what Python holds, not of what the
model needs (that is the model's own, once per process).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: The share of the available memory a job's estimate may take.
DEFAULT_FRACTION = 0.8
ENV_FRACTION = "RAGWH_MAX_MEMORY_FRACTION"
#: CPython's overhead of one ``str`` object (compact ASCII) and of its slot in a list.
STR_OVERHEAD = 49 + 8
#: A text is held twice while it is read: in the Arrow result and as a Python ``str``.
TEXT_COPIES = 2
#: A key (sha256 hex, 64 characters) as a Python ``str`` plus its Arrow copy.
KEY_BYTES = 64 + STR_OVERHEAD + 64 + 4
#: hnswlib's per-element overhead besides vector and links: label, level, link-list headers and the visited list.
HNSW_OVERHEAD = 64


class MemoryEstimateError(MemoryError):
    """A job whose estimated memory exceeds the allowed share of the available memory (one line)."""


_configured: float | None = None


def set_max_memory_fraction(fraction: float | None) -> None:
    """The configured fraction for this process (an experiment's ``max_memory_fraction``; None: the default)."""
    global _configured
    _configured = fraction


def max_memory_fraction() -> float:
    """``RAGWH_MAX_MEMORY_FRACTION`` when set, else the configured fraction, else :data:`DEFAULT_FRACTION`."""
    raw = os.environ.get(ENV_FRACTION)
    if raw is None or not raw.strip():
        return _configured if _configured is not None else DEFAULT_FRACTION
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{ENV_FRACTION}={raw!r}: expected a number > 0 (a share of the available memory, e.g. 0.8)")
    return value


def available_bytes() -> int:
    """Memory available to a new allocation without swapping (``MemAvailable``)."""
    import psutil

    return int(psutil.virtual_memory().available)


def texts_memory(n_texts: int, n_chars: int) -> int:
    """Bytes a driver holds for ``n_texts`` texts of ``n_chars`` characters in all and their keys."""
    return TEXT_COPIES * (n_chars + n_texts * STR_OVERHEAD) + n_texts * KEY_BYTES


def index_memory(n_vectors: int, dim: int, n_chars: int, hnsw_m: int | None = None, graphs: int = 1) -> int:
    """Bytes of a dense index over ``n_vectors`` ``dim``-dimensional float32 vectors: the matrix, the chunk
    texts (``n_chars`` characters), and ``graphs`` HNSW graphs alive at once with ``hnsw_m`` links per node
    (each stores its own copy of the vectors, ``2 * M`` level-0 links of 4 bytes and :data:`HNSW_OVERHEAD`)."""
    matrix = n_vectors * dim * 4
    texts = TEXT_COPIES * (n_chars + n_vectors * STR_OVERHEAD)
    graph = 0 if hnsw_m is None else graphs * graph_memory(n_vectors, dim, hnsw_m)
    return matrix + texts + graph


def graph_memory(n_vectors: int, dim: int, hnsw_m: int) -> int:
    """Bytes of one hnswlib graph: per node its own copy of the vector, ``2 * M`` level-0 links of 4 bytes
    and :data:`HNSW_OVERHEAD`."""
    return n_vectors * (dim * 4 + hnsw_m * 2 * 4 + HNSW_OVERHEAD)


def gib(n: int | float) -> str:
    return f"{n / 2**30:.2f} GiB"


def check_memory(need: int, what: str, instead: str, available: int | None = None) -> None:
    """Raise :class:`MemoryEstimateError` when ``need`` bytes exceed ``max_memory_fraction()`` of the
    available memory; ``what`` names the job, ``instead`` what else to do besides raising the setting."""
    if need <= 0:
        return
    fraction = max_memory_fraction()
    free = available_bytes() if available is None else available
    if need > fraction * free:
        raise MemoryEstimateError(
            f"{what} needs an estimated {gib(need)} but {gib(free)} is available and max_memory_fraction is "
            f"{fraction:g} (allowed {gib(fraction * free)}): {instead}, run on a machine with more memory, or raise "
            f"max_memory_fraction (config key, or {ENV_FRACTION}) if the estimate is too cautious"
        )


def total_chars(texts: Sequence[str]) -> int:
    return sum(map(len, texts))
