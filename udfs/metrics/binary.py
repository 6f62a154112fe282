"""Binary-gain metrics over a ranking of 0/1 relevance flags (the relevance rule's verdicts).

    MRR       = 1 / (rank of the first relevant chunk), 0 if none is retrieved (no cut-off)
    nDCG@k    = DCG@k / IDCG@k,  DCG@k = Σ_{i<=k} rel_i / log2(i + 1),
                IDCG@k = Σ_{i<=min(k, R)} 1 / log2(i + 1), R = relevant chunks in the condition's pool
                (0 when R = 0)

Identical to ranx ``mrr`` / ``ndcg@k`` with qrels = the pool's relevant chunks (gain 1).
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import discounts
from udfs.ragged import RaggedLike, as_ragged, as_vector, truncate


def mrr(relevant: RaggedLike, k: int | None = None) -> np.ndarray:
    """Reciprocal rank of the first relevant item per row (within the top k when given)."""
    rel = as_ragged(relevant, np.bool_, "relevance flags")
    if k is not None:
        rel = truncate(rel, k)
    out = np.zeros(rel.n_rows)
    hits = rel.values
    rows, first = np.unique(rel.row_ids[hits], return_index=True)
    out[rows] = 1.0 / (rel.positions[hits][first] + 1.0)
    return out


def ndcg_binary(relevant: RaggedLike, n_relevant, k: int = 10) -> np.ndarray:
    """Binary nDCG@k per row; ``n_relevant`` = relevant items in the pool (per row)."""
    rel = truncate(as_ragged(relevant, np.bool_, "relevance flags"), k)
    n_rel = as_vector(n_relevant, rel.n_rows, np.int64, "n_relevant")
    retrieved = np.bincount(rel.row_ids, weights=rel.values, minlength=rel.n_rows)
    if (retrieved > n_rel).any():
        row = int(np.argmax(retrieved > n_rel))
        raise ValueError(
            f"row {row}: more relevant items retrieved than the pool holds ({n_rel[row]}); "
            "does the ranking list an item twice?"
        )
    dcg = np.bincount(rel.row_ids, weights=rel.values * discounts(rel.positions), minlength=rel.n_rows)
    ideal = np.concatenate([[0.0], np.cumsum(discounts(np.arange(k)))])
    idcg = ideal[np.minimum(n_rel, k)]
    out = np.zeros(rel.n_rows)
    pos = idcg > 0
    out[pos] = dcg[pos] / idcg[pos]
    return out
