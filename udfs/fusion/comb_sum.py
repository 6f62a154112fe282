"""CombSUM (Fox & Shaw 1993) of min-max normalized scores.

    fused(d) = Σ_{s in members, s lists d} x'_s(d),   x' = min-max normalized within the run's list
                                                      (:mod:`udfs.fusion.min_max`)

Equals ranx ``fuse(runs, norm="min-max", method="sum")``. Example: A = {d1: 0.9, d2: 0.4} and
B = {d2: 0.7, d3: 0.5} normalize to {d1: 1, d2: 0} and {d2: 1, d3: 0}: fused {d1: 1, d2: 1, d3: 0}.
"""

from __future__ import annotations

import numpy as np

from udfs.fusion.subsets import subset_reduce


def comb_sum(normalized: np.ndarray, members: np.ndarray) -> np.ndarray:
    """(N, S) normalized scores (NaN = not listed), (M, S) membership -> (N, M) (NaN = in no member)."""
    x = np.asarray(normalized, dtype=np.float64)
    listed = ~np.isnan(x)
    m = np.asarray(members, dtype=bool)
    fused = subset_reduce(np.where(listed, x, 0.0), m, "sum")
    fused[subset_reduce(listed, m, "sum") == 0] = np.nan
    return fused.T
