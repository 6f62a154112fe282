"""Effect sizes for paired per-query deltas.

Cohen's dz (standardized mean of paired differences):

    dz = mean(δ) / sd(δ, ddof=1)        (NaN when fewer than 2 deltas or sd = 0)

Minimum detectable effect (MDE) from the bootstrap spread, two-sided α and power 1 - β under the
normal approximation of the estimator's sampling distribution:

    MDE = (z_{1-α/2} + z_{1-β}) · SE_boot,   SE_boot = sd of the bootstrap replicate means
    α = 0.05, 1 - β = 0.80  ->  MDE = (1.959964 + 0.841621) · SE_boot = 2.801585 · SE_boot

Units: those of the metric (e.g. cov-nDCG@10 points on the 0..1 scale).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.stats import norm

from udfs.ragged import RaggedLike, as_ragged


def cohens_dz(deltas: Sequence[float]) -> float:
    """Cohen's dz of one vector of paired deltas."""
    return float(cohens_dz_rows([list(deltas)])[0])


def cohens_dz_rows(deltas: RaggedLike) -> np.ndarray:
    """Cohen's dz per row of a ragged array of deltas (vectorized)."""
    r = as_ragged(deltas, np.float64, "deltas")
    n = r.lengths.astype(np.float64)
    s1 = np.bincount(r.row_ids, weights=r.values, minlength=r.n_rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s1 / n
        ss = np.bincount(r.row_ids, weights=(r.values - mean[r.row_ids]) ** 2, minlength=r.n_rows)
        sd = np.sqrt(ss / (n - 1))
        out = np.where((n >= 2) & (sd > 0), mean / sd, np.nan)
    return out


def mde(se: float | np.ndarray, alpha: float = 0.05, power: float = 0.80) -> float | np.ndarray:
    """Minimum detectable effect (two-sided) = (z_{1-α/2} + z_{power}) · se."""
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError("alpha and power must lie in (0, 1)")
    return (norm.ppf(1 - alpha / 2) + norm.ppf(power)) * np.asarray(se, dtype=np.float64)
