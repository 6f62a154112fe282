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
    return _minmax_rows(np.asarray(scores, dtype=np.float64)[None, :])[0]


def _minmax_rows(s: np.ndarray) -> np.ndarray:
    """Row-wise min-max over the finite entries of ``s`` (NaN = padding, stays NaN)."""
    with np.errstate(invalid="ignore"):
        lo = np.nanmin(np.where(np.isnan(s), np.inf, s), axis=1, keepdims=True)
        hi = np.nanmax(np.where(np.isnan(s), -np.inf, s), axis=1, keepdims=True)
        span = hi - lo
        out = np.where(span > 0, (s - lo) / np.where(span > 0, span, 1.0), 1.0)
    return np.where(np.isnan(s), np.nan, out)


def mmr_order(scores: np.ndarray, vectors: np.ndarray, k: int, lam: float) -> np.ndarray:
    """Indices (into the pool) of the first ``min(k, n)`` MMR picks, in pick order (module doc)."""
    n = len(scores)
    if n == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    picks = mmr_batch(np.asarray(scores, dtype=np.float64)[None, :], np.asarray(vectors)[None, :, :], k, lam)[0]
    return picks[picks >= 0]


def mmr_batch(scores: np.ndarray, vectors: np.ndarray, k: int, lam: float) -> np.ndarray:
    """MMR for ``B`` pools at once: ``scores`` (B, n) with NaN padding past each pool's end, ``vectors``
    (B, n, d). Returns picks (B, min(k, n)) in pick order, -1 once a pool is exhausted. Each row is
    exactly :func:`mmr_order` of that pool (the same greedy rule, vectorized over pools). Cosines are
    computed in float32 (the stored vectors' precision), objectives in float64."""
    s = np.asarray(scores, dtype=np.float64)
    b, n = s.shape
    k = min(k, n)
    rel = _minmax_rows(s)
    v = np.asarray(vectors, dtype=np.float32)  # the stored vectors' precision; objectives in float64
    available = ~np.isnan(s)
    rel = np.where(available, rel, 0.0)
    penalty = np.zeros((b, n))  # max cosine to any picked candidate (0 before the first pick)
    picks = np.full((b, k), -1, dtype=np.int64)
    rows = np.arange(b)
    for step in range(k):
        objective = np.where(available, lam * rel - (1.0 - lam) * penalty, -np.inf)
        j = np.argmax(objective, axis=1)  # first maximum: the earliest candidate in pool order
        live = available[rows, j]
        picks[live, step] = j[live]
        available[rows, j] = False
        sim = np.matmul(v, v[rows, j][:, :, None])[:, :, 0].astype(np.float64)  # cosines to the new picks only
        penalty = np.where(live[:, None], sim if step == 0 else np.maximum(penalty, sim), penalty)
    return picks
