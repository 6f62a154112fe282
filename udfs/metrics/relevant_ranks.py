"""The four binary document metrics of a ranking, from the ranks of its relevant documents only.

When a ranking is known only through the ranks r_1..r_m of the relevant documents it lists (as for
fused rankings, :mod:`udfs.ensembles`, where materializing every list would cost far more), with
R = relevant documents judged for the query (qrels relevance >= 1):

    HIT@k  = 1 if some r_i <= k, else 0
    R@k    = #{i: r_i <= k} / R
    nDCG@k = Σ_{r_i <= k} 1 / log2(r_i + 1)  /  Σ_{j=1}^{min(R, k)} 1 / log2(j + 1)
    MRR@k  = 1 / min r_i if min r_i <= k, else 0

which are exactly :mod:`udfs.metrics.doc_level` (and ranx) with binary gains. Example: R = 2, relevant
documents at ranks 2 and 12, k = 10: HIT 1, R@10 0.5, nDCG@10 = (1/log2 3) / (1 + 1/log2 3) = 0.3869,
MRR@10 0.5.
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import discounts


def metrics_from_ranks(
    ranks: np.ndarray, row: np.ndarray, n_relevant: np.ndarray, k: int = 10
) -> dict[str, np.ndarray]:
    """(T, M) ranks of relevant documents (+inf = not retrieved), ``row`` (T,) the ranking each belongs
    to (sorted, in 0..n_rows-1), ``n_relevant`` (n_rows,) R per ranking -> name -> (n_rows, M) scores
    named ``HIT@k``, ``R@k``, ``nDCG@k``, ``MRR@k``. A ranking with R = 0 is an error."""
    ranks = np.asarray(ranks, dtype=np.float64)
    row = np.asarray(row, dtype=np.int64)
    n_rel = np.asarray(n_relevant, dtype=np.int64)
    n_rows, width = len(n_rel), ranks.shape[1] if ranks.ndim == 2 else 0
    if (n_rel < 1).any():
        raise ValueError(f"ranking {int(np.argmax(n_rel < 1))}: no relevant judgment (exclude such queries upstream)")
    if len(row) and (np.any(np.diff(row) < 0) or row[0] < 0 or row[-1] >= n_rows):
        raise ValueError("row ids must be sorted and lie in 0..n_rows-1")
    counts = np.bincount(row, minlength=n_rows)
    if (counts > n_rel).any():
        bad = int(np.argmax(counts > n_rel))
        raise ValueError(f"ranking {bad}: {counts[bad]} relevant ranks but R = {n_rel[bad]}")
    inside = ranks <= k
    gain = np.where(inside, discounts(np.where(inside, ranks, 1.0) - 1.0), 0.0)
    recip = np.where(inside, 1.0 / np.where(inside, ranks, 1.0), 0.0)
    found, dcg, best = (np.zeros((n_rows, width)) for _ in range(3))
    present = np.flatnonzero(counts)
    if len(row):
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[present]
        found[present] = np.add.reduceat(inside.astype(np.float64), starts, axis=0)
        dcg[present] = np.add.reduceat(gain, starts, axis=0)
        best[present] = np.maximum.reduceat(recip, starts, axis=0)
    ideal = np.concatenate([[0.0], np.cumsum(discounts(np.arange(k)))])[np.minimum(n_rel, k)]
    return {
        f"HIT@{k}": (found > 0).astype(np.float64),
        f"R@{k}": found / n_rel[:, None],
        f"nDCG@{k}": dcg / ideal[:, None],
        f"MRR@{k}": best,
    }
