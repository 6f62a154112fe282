"""CombMAX, the score-based union: each document keeps its maximum score over the member runs.

    fused(d) = max_{s in members, s lists d} score_s(d)        (raw scores, no normalization)

Equals ranx ``fuse(runs, norm=None, method="max")`` (ranx fills an unlisted document with -1e9 before
taking the max, which never wins since every fused document is listed by some member). Example: runs
A = {d1: 0.9, d2: 0.4}, B = {d2: 0.7, d3: 0.5} fuse to {d1: 0.9, d2: 0.7, d3: 0.5}.
"""

from __future__ import annotations

import numpy as np

from udfs.fusion.subsets import subset_reduce


def comb_max(scores: np.ndarray, members: np.ndarray) -> np.ndarray:
    """(N, S) scores (NaN = not listed), (M, S) membership -> (N, M) fused scores (NaN = in no member)."""
    return subset_reduce(scores, np.asarray(members, dtype=bool), "fmax").T
