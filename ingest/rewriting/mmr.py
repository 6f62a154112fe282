"""Maximal marginal relevance over one reranked pool.

Candidates ``d`` with stage scores ``s_d`` (reranker score, or cosine without a reranker) and
L2-normalized vectors ``v_d``. Relevance is min-max normalized within the pool::

    rel(d) = (s_d - min s) / (max s - min s)        (rel = 1 for every d when max s = min s)

Picks are greedy: with ``S`` the candidates already picked, the next pick is::

    argmax over d not in S of   lambda * rel(d) - (1 - lambda) * max_{s in S} cos(v_d, v_s)

where the max runs over ALL of ``S`` (empty ``S``: the penalty is 0, so the first pick is the most
relevant candidate). Ties go to the earlier candidate in pool order (the rerank order). LlamaIndex's
``mmr`` penalizes only the most recent pick; that is a different rule (a test pins the difference).
Greedy picks are prefix-stable: the first ``k`` picks for ``k`` are the first ``k`` for any larger k.

Worked example (lambda = 0.5): scores (0.9, 0.8, 0.1), v0 = v1 (cos 1), v2 orthogonal to both.
rel = (1, 0.875, 0). Pick 0 (0.5). Then d1: 0.4375 - 0.5 = -0.0625, d2: 0 - 0 = 0 -> pick 2.
Then d1: 0.4375 - 0.5 * max(1, 0) = -0.0625 (the most-recent rule would give 0.4375 - 0 = 0.4375).
"""
from __future__ import annotations

import numpy as np


def minmax(scores: np.ndarray) -> np.ndarray:
    """``(s - min) / (max - min)`` in float64; all ones when the scores are all equal (or one)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return s
    span = s.max() - s.min()
    return np.ones_like(s) if span == 0 else (s - s.min()) / span


def mmr_order(scores: np.ndarray, vectors: np.ndarray, k: int, lam: float) -> np.ndarray:
    """Indices (into the pool) of the first ``min(k, n)`` MMR picks, in pick order (module doc)."""
    rel = minmax(scores)
    n = len(rel)
    k = min(k, n)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    v = np.asarray(vectors, dtype=np.float64)
    picked = np.empty(k, dtype=np.int64)
    available = np.ones(n, dtype=bool)
    penalty = np.zeros(n)  # max cosine to any picked candidate (0 before the first pick)
    for step in range(k):
        objective = lam * rel - (1.0 - lam) * penalty
        objective[~available] = -np.inf
        j = int(np.argmax(objective))  # first maximum: the earliest candidate in pool order
        picked[step] = j
        available[j] = False
        sim = v @ v[j]  # cosines to the new pick (only the rows MMR needs, not the n x n matrix)
        penalty = sim if step == 0 else np.maximum(penalty, sim)
    return picked
