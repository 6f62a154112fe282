"""Span recall R@k: share of a query's gold spans that the top-k chunks cover to at least 50%.

    covered(s) = | S_s ∩ ∪_{i<=k} I_i | / |S_s|        (characters; the union counts each once)
    R@k        = (1/m) · Σ_s [covered(s) >= threshold],   threshold = 0.5

Chunks of another document are empty intervals (cover nothing).
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import coverage_inputs, first_cover
from udfs.ragged import RaggedLike, as_ragged, truncate


def span_coverage(
    chunk_starts: RaggedLike, chunk_ends: RaggedLike, span_starts: RaggedLike, span_ends: RaggedLike, k: int = 50
) -> np.ndarray:
    """Covered share of every gold span (flat, in span order) by the union of each row's top k."""
    cs, ce, ss, se = coverage_inputs(chunk_starts, chunk_ends, span_starts, span_ends)
    _, sp, new = first_cover(truncate(cs, k), truncate(ce, k), ss, se)
    covered = np.bincount(sp, weights=new, minlength=len(ss.values))
    return covered / (se.values - ss.values)


def span_recall(
    chunk_starts: RaggedLike,
    chunk_ends: RaggedLike,
    span_starts: RaggedLike,
    span_ends: RaggedLike,
    k: int = 50,
    threshold: float = 0.5,
) -> np.ndarray:
    """R@k per row: fraction of the row's spans whose covered share is >= ``threshold``."""
    share = span_coverage(chunk_starts, chunk_ends, span_starts, span_ends, k)
    ss = as_ragged(span_starts, np.int64, "span starts")
    hit = (share >= threshold).astype(np.float64)
    return np.bincount(ss.row_ids, weights=hit, minlength=ss.n_rows) / ss.lengths
