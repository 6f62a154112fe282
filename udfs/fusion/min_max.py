"""Min-max normalization of each run's scores within each query group (ranx ``min_max_norm``).

For run s of group g with listed scores x:

    x' = (x - min x) / max(max x - min x, 1e-9)

so a run listing one document (or equal scores) maps them all to 0, exactly as ranx does
(its denominator floor is 1e-9). Unlisted items stay NaN.
"""

from __future__ import annotations

import numpy as np


def min_max_norm(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(N, S) scores (NaN = not listed) -> normalized per (group, run); groups are ``offsets`` slices."""
    s = np.asarray(scores, dtype=np.float64)
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    if len(s) == 0:
        return s.copy()
    lengths = np.diff(offsets)
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(s, starts, axis=0)
        hi = np.fmax.reduceat(s, starts, axis=0)
    lo = np.repeat(lo, lengths, axis=0)
    hi = np.repeat(hi, lengths, axis=0)
    return (s - lo) / np.maximum(hi - lo, 1e-9)
