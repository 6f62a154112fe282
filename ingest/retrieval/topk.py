"""Exact inner-product top-k, streamed: the one retrieval kernel.

For queries ``Q`` (q x d) and an index ``X`` (n x d), row ``i`` of the result lists the positions
``j`` of the ``k' = min(k, n)`` largest scores ``s_ij = <Q_i, X_j>`` (float32), ordered by score
descending and then by position ascending (callers sort ``X`` by ``chunk_id`` so that ties break by
chunk_id). The score matrix is computed in tiles of ``query_batch x index_block`` (numpy GEMM), in
index order. Until a row holds ``k'`` scores, each tile is reduced with ``argpartition`` to its top
``k'`` and merged into the running top ``k'``; afterwards a tile only offers the scores *above* the row's
running k'-th score (a comparison, not a partition): every position of a later tile is larger than every
position held, so a score equal to the k'-th ranks after it and cannot enter. Peak memory is
``query_batch * index_block * (4 + 8)`` bytes for the tile and its partition indices, never ``q * n``.

Ties are exact: ``argpartition`` picks an arbitrary subset among values equal to the k'-th largest,
so a tile row whose (k'+1)-th value equals its k'-th is re-ranked with a full stable sort.
"""

from __future__ import annotations

import numpy as np


def _sort_rows(pos: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first ``k`` entries in (score desc, position asc) order."""
    by_pos = np.argsort(pos, axis=1, kind="stable")
    pos = np.take_along_axis(pos, by_pos, axis=1)
    scores = np.take_along_axis(scores, by_pos, axis=1)
    by_score = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(pos, by_score, axis=1), np.take_along_axis(scores, by_score, axis=1)


def _tile_topk(tile: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` positions (unordered, exact under ties) and scores of each row of a score tile."""
    b, m = tile.shape
    if m <= k:
        return np.broadcast_to(np.arange(m), (b, m)).copy(), tile.copy()
    part = np.argpartition(tile, m - k - 1, axis=1)
    top = part[:, m - k :]
    top_scores = np.take_along_axis(tile, top, axis=1)
    next_scores = tile[np.arange(b), part[:, m - k - 1]]
    for row in np.flatnonzero(next_scores >= top_scores.min(axis=1)):
        order = np.lexsort((np.arange(m), -tile[row]))[:k]
        top[row] = order
        top_scores[row] = tile[row, order]
    return top, top_scores


def topk_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a dense score block (q x n), the ``k' = min(k, n)`` positions of the largest scores and
    those scores, ordered by score descending then position ascending (exact under ties): the rule of
    :func:`topk_inner_product`, for scores computed elsewhere (BM25)."""
    kk = min(k, scores.shape[1])
    if kk == 0 or scores.shape[0] == 0:
        return np.empty((scores.shape[0], kk), dtype=np.int64), np.empty((scores.shape[0], kk), dtype=scores.dtype)
    pos, top = _tile_topk(scores, kk)
    return _sort_rows(pos, top, kk)


def topk_inner_product(
    queries: np.ndarray,
    index: np.ndarray,
    k: int,
    *,
    query_batch: int = 512,
    index_block: int = 32768,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(positions int64 (q, k'), scores float32 (q, k'))``, ``k' = min(k, n)``, rows ordered
    by score descending then position ascending. ``q == 0`` or ``n == 0`` gives empty arrays. Scores are
    assumed finite (L2-normalized vectors): where a NaN ranks is not defined."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    index = np.ascontiguousarray(index, dtype=np.float32)
    n_queries, n = len(queries), len(index)
    kk = min(k, n)
    out_pos = np.empty((n_queries, kk), dtype=np.int64)
    out_scores = np.empty((n_queries, kk), dtype=np.float32)
    if kk == 0 or n_queries == 0:
        return out_pos, out_scores
    for qs in range(0, n_queries, query_batch):
        qe = min(qs + query_batch, n_queries)
        best_pos = best_scores = None
        for bs in range(0, n, index_block):
            be = min(bs + index_block, n)
            tile = queries[qs:qe] @ index[bs:be].T
            if best_pos is not None and best_pos.shape[1] == kk and _merge_above(best_pos, best_scores, tile, bs):
                continue  # every row full: it took only the scores above its k'-th
            pos, scores = _tile_topk(tile, kk)
            pos += bs
            if best_pos is None:
                best_pos, best_scores = _sort_rows(pos, scores, kk)
            else:
                best_pos, best_scores = _sort_rows(
                    np.concatenate([best_pos, pos], axis=1), np.concatenate([best_scores, scores], axis=1), kk
                )
        out_pos[qs:qe], out_scores[qs:qe] = best_pos, best_scores
    return out_pos, out_scores


def _merge_above(best_pos: np.ndarray, best_scores: np.ndarray, tile: np.ndarray, offset: int) -> bool:
    """Merge into the sorted running top ``k`` (in place) the scores of ``tile`` (positions from ``offset``,
    all above every position held) that exceed their row's k-th score (module doc). False, leaving them
    as they were, when more than ``k`` per row would enter: the tile is then partitioned as the first ones,
    which keeps the memory of the module doc."""
    k, width = best_pos.shape[1], tile.shape[1]
    kth = best_scores[:, -1:]
    above = tile > np.where(np.isnan(kth), -np.inf, kth)
    entering = np.count_nonzero(above)
    if entering > tile.shape[0] * k:
        return False
    if entering == 0:
        return True
    # flat indices (~10x faster than a 2-D nonzero), so rows come ascending
    rows, cols = np.divmod(np.flatnonzero(above), width)
    counts = np.bincount(rows, minlength=len(best_pos))
    hit = np.flatnonzero(counts)
    counts = counts[hit]
    # per hit row: its k held entries, then its new ones (positions ascending), one sort for all rows
    row_of = np.concatenate([np.repeat(hit, k), rows])
    pos = np.concatenate([best_pos[hit].ravel(), cols + offset])
    score = np.concatenate([best_scores[hit].ravel(), tile[rows, cols]])
    order = np.lexsort((pos, -score, row_of))
    starts = np.concatenate([[0], np.cumsum(k + counts)[:-1]])
    take = order[starts[:, None] + np.arange(k)]
    best_pos[hit] = pos[take]
    best_scores[hit] = score[take]
    return True
