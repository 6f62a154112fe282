"""Reciprocal-rank fusion (Cormack et al. 2009).

    fused(d) = Σ_{s in members, s lists d} 1 / (k + rank_s(d)),    k = 60, rank 1-based

Equals ranx ``fuse(runs, method="rrf", params={"k": 60})``: ranx min-max normalizes first (its
default ``norm``), which keeps each run's order, then scores the document at position i (0-based, in
the run's score order) 1 / (k + i + 1) and sums them (CombSUM). Here the rank is the run's stored
rank, which is that position when the run is ranked by score. Example: k = 60, A ranks d1, d2 and B
ranks d2, d3: d2 gets 1/62 + 1/61 = 0.032523, d1 1/61, d3 1/62.
"""

from __future__ import annotations

import numpy as np

from udfs.fusion.subsets import subset_reduce

K = 60


def rrf(ranks: np.ndarray, members: np.ndarray, k: int = K) -> np.ndarray:
    """(N, S) 1-based ranks (0 = not listed), (M, S) membership -> (N, M) fused scores (NaN = in no member)."""
    r = np.asarray(ranks, dtype=np.int64)
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, got {k}")
    listed = r > 0
    m = np.asarray(members, dtype=bool)
    fused = subset_reduce(np.where(listed, 1.0 / (k + np.where(listed, r, 1)), 0.0), m, "sum")
    count = subset_reduce(listed, m, "sum")
    fused[count == 0] = np.nan
    return fused.T
