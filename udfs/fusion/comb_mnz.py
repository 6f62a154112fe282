"""CombMNZ (Fox & Shaw 1993) of min-max normalized scores.

    fused(d) = n(d) · Σ_{s in members, s lists d} x'_s(d),   n(d) = members that list d

(a document listed with normalized score 0 still counts in n(d), as in ranx). Equals ranx
``fuse(runs, norm="min-max", method="mnz")``. Example: A = {d1: 1, d2: 0}, B = {d2: 1, d3: 0}
(normalized) fuse to {d1: 1, d2: 2 · 1 = 2, d3: 0}.
"""

from __future__ import annotations

import numpy as np

from udfs.fusion.subsets import subset_reduce


def comb_mnz(normalized: np.ndarray, members: np.ndarray) -> np.ndarray:
    """(N, S) normalized scores (NaN = not listed), (M, S) membership -> (N, M) (NaN = in no member)."""
    x = np.asarray(normalized, dtype=np.float64)
    listed = ~np.isnan(x)
    m = np.asarray(members, dtype=bool)
    count = subset_reduce(listed, m, "sum")
    fused = subset_reduce(np.where(listed, x, 0.0), m, "sum") * count
    fused[count == 0] = np.nan
    return fused.T
