"""Document-level metrics for corpora judged by qrels (BEIR, HotpotQA), identical to ranx.

Inputs per query: ``run_rel`` = the qrels relevance of each ranked document in rank order (0 when
unjudged; a document appears once, at its best rank), and ``qrels_rel`` = relevance of every judged
document. A document is relevant iff relevance >= 1 (ranx ``rel_lvl=1``); gains are the relevance
values themselves (ranx ``ndcg``, Järvelin & Kekäläinen):

    HIT@k  = 1 if any relevant document is in the top k, else 0
    R@k    = |relevant in top k| / |relevant judged|
    nDCG@k = Σ_{i<=k} g_i / log2(i+1)  /  Σ_{i<=k} g*_i / log2(i+1),  g* = judged gains sorted descending
    MRR@k  = 1 / rank of the first relevant document within the top k, else 0
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import discounts
from udfs.metrics.binary import mrr
from udfs.ragged import Ragged, RaggedLike, as_ragged, truncate


def hit_at_k(run_rel: RaggedLike, k: int = 10) -> np.ndarray:
    """HIT@k per row."""
    r = truncate(as_ragged(run_rel, np.float64, "run relevance"), k)
    return (np.bincount(r.row_ids, weights=(r.values >= 1), minlength=r.n_rows) > 0).astype(np.float64)


def recall_at_k(run_rel: RaggedLike, qrels_rel: RaggedLike, k: int = 10) -> np.ndarray:
    """R@k per row; a row without any relevant judgment is an error (exclude it upstream)."""
    r = truncate(as_ragged(run_rel, np.float64, "run relevance"), k)
    q = _judged(qrels_rel, r.n_rows)
    n_rel = np.bincount(q.row_ids, weights=(q.values >= 1), minlength=q.n_rows)
    found = np.bincount(r.row_ids, weights=(r.values >= 1), minlength=r.n_rows)
    return found / n_rel


def ndcg_at_k(run_rel: RaggedLike, qrels_rel: RaggedLike, k: int = 10) -> np.ndarray:
    """nDCG@k per row with graded gains (relevance values >= 1; lower values gain 0)."""
    r = truncate(as_ragged(run_rel, np.float64, "run relevance"), k)
    q = _judged(qrels_rel, r.n_rows)
    gain = np.where(r.values >= 1, r.values, 0.0)
    dcg = np.bincount(r.row_ids, weights=gain * discounts(r.positions), minlength=r.n_rows)
    qg = np.where(q.values >= 1, q.values, 0.0)
    o = np.lexsort((-qg, q.row_ids))
    ideal = truncate(Ragged(qg[o], q.offsets), k)
    idcg = np.bincount(ideal.row_ids, weights=ideal.values * discounts(ideal.positions), minlength=q.n_rows)
    return dcg / idcg


def mrr_at_k(run_rel: RaggedLike, k: int = 10) -> np.ndarray:
    """MRR@k per row."""
    r = as_ragged(run_rel, np.float64, "run relevance")
    return mrr(Ragged(r.values >= 1, r.offsets), k)


def _judged(qrels_rel: RaggedLike, n_rows: int) -> Ragged:
    q = as_ragged(qrels_rel, np.float64, "qrels relevance")
    if q.n_rows != n_rows:
        raise ValueError(f"{n_rows} rankings but {q.n_rows} qrels lists")
    n_rel = np.bincount(q.row_ids, weights=(q.values >= 1), minlength=q.n_rows)
    if (n_rel == 0).any():
        raise ValueError(f"row {int(np.argmax(n_rel == 0))}: no relevant judgment (exclude such queries upstream)")
    return q
