"""Holm step-down adjustment of a family of p-values (controls the family-wise error rate).

With the m p-values sorted ascending p_(1) <= ... <= p_(m):

    p̃_(i) = min(1, max_{j<=i} (m - j + 1) · p_(j))

and each adjusted value returned in the input order (equals statsmodels
``multipletests(method="holm")``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from udfs.ragged import Ragged, RaggedLike, as_ragged


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values of one family, in input order."""
    r = Ragged(np.asarray(p_values, dtype=np.float64), np.array([0, len(p_values)], dtype=np.int64))
    return _holm_ragged(r)


def holm_families(p_values: RaggedLike) -> Ragged:
    """Holm within each row of a ragged array of families (flat values in input order)."""
    r = as_ragged(p_values, np.float64, "p-values")
    return Ragged(_holm_ragged(r), r.offsets)


def _holm_ragged(r: Ragged) -> np.ndarray:
    p = r.values
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p-values must lie in [0, 1] (no NaN)")
    row = r.row_ids
    m = r.lengths[row].astype(np.float64)
    o = np.lexsort((p, row))
    rank = r.positions  # 0-based rank j-1 in the sorted order
    scaled = np.minimum(1.0, (m[o] - rank) * p[o])
    # Running max within each family: offset rows so the cumulative max never crosses a family.
    stepped = np.maximum.accumulate(scaled + row[o] * 2.0) - row[o] * 2.0
    out = np.empty_like(p)
    out[o] = stepped
    return out
