"""Coverage nDCG@k (cov-nDCG): graded gains from the share of gold-span characters a chunk newly covers.

For a query with gold spans S_1..S_m (characters of its document) and a ranking of chunks
(content offsets ``[char_start, char_end)``; a chunk of another document is an empty interval):

    gain_i  = (1/m) · Σ_s new(i, s) / |S_s|         new(i, s): characters of S_s first covered by chunk i
    DCG@k   = Σ_{i=1..k} gain_i / log2(i + 1)
    IDCG@k  = DCG@k of the greedy maximum-marginal-coverage ordering of the condition's own chunks of
              the document (at each step the chunk with the largest gain given those already picked;
              ties -> the earlier chunk in pool order; stop after k chunks or when no chunk adds anything)
    cov-nDCG@k = min(1, DCG@k / IDCG@k), and 0 when IDCG@k = 0.

Units: gains are fractions of a span (0..1), so DCG is dimensionless. When a document's chunks are
disjoint (every chunkset here tiles its document) gains do not interact, the greedy order is the
optimal one and DCG <= IDCG holds exactly; the cap at 1 only matters for overlapping pools, where
the greedy ideal is not guaranteed optimal.

Worked example (one 100-char span): chunks [0,60) then [40,100) -> gains 0.6, 0.4 ->
DCG = 0.6 + 0.4/log2(3) = 0.852 = IDCG, score 1.0; with a chunk [0,100) in the pool IDCG = 1.0.
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import coverage_inputs, discounts, first_cover
from udfs.ragged import Ragged, RaggedLike, truncate


def cov_dcg(
    chunk_starts: RaggedLike, chunk_ends: RaggedLike, span_starts: RaggedLike, span_ends: RaggedLike, k: int = 10
) -> np.ndarray:
    """DCG@k of each row's ranking with coverage gains (see module docstring); float64 per row."""
    cs, ce, ss, se = coverage_inputs(chunk_starts, chunk_ends, span_starts, span_ends)
    return _dcg(truncate(cs, k), truncate(ce, k), ss, se)


def cov_idcg(
    pool_starts: RaggedLike, pool_ends: RaggedLike, span_starts: RaggedLike, span_ends: RaggedLike, k: int = 10
) -> np.ndarray:
    """IDCG@k: DCG of the greedy maximum-marginal-coverage ordering of each row's chunk pool."""
    ps, pe, ss, se = coverage_inputs(pool_starts, pool_ends, span_starts, span_ends)
    return _greedy_idcg(ps, pe, ss, se, k)


def cov_ndcg(
    chunk_starts: RaggedLike,
    chunk_ends: RaggedLike,
    span_starts: RaggedLike,
    span_ends: RaggedLike,
    pool_starts: RaggedLike,
    pool_ends: RaggedLike,
    k: int = 10,
) -> np.ndarray:
    """cov-nDCG@k per row = min(1, DCG@k / IDCG@k), 0 when IDCG@k = 0."""
    dcg = cov_dcg(chunk_starts, chunk_ends, span_starts, span_ends, k)
    idcg = cov_idcg(pool_starts, pool_ends, span_starts, span_ends, k)
    if len(dcg) != len(idcg):
        raise ValueError("ranking and pool lists differ in row count")
    out = np.zeros(len(dcg))
    pos = idcg > 0
    out[pos] = np.minimum(1.0, dcg[pos] / idcg[pos])
    return out


def _gains(cs: Ragged, ce: Ragged, ss: Ragged, se: Ragged) -> np.ndarray:
    """gain_i per flat chunk: mean over the row's spans of the newly covered share of each span."""
    iv, sp, new = first_cover(cs, ce, ss, se)
    span_len = (se.values - ss.values).astype(np.float64)
    n_spans = ss.lengths.astype(np.float64)
    w = new / span_len[sp] / n_spans[cs.row_ids[iv]]
    return np.bincount(iv, weights=w, minlength=len(cs.values))


def _dcg(cs: Ragged, ce: Ragged, ss: Ragged, se: Ragged) -> np.ndarray:
    g = _gains(cs, ce, ss, se)
    return np.bincount(cs.row_ids, weights=g * discounts(cs.positions), minlength=cs.n_rows)


def _greedy_idcg(ps: Ragged, pe: Ragged, ss: Ragged, se: Ragged, k: int) -> np.ndarray:
    row = ps.row_ids
    o = np.lexsort((ps.values, row))
    r_s, s_s, e_s = row[o], ps.values[o], pe.values[o]
    nonempty = e_s > s_s  # empty chunks cover nothing; drop them so they cannot hide an overlap
    r_n, s_n, e_n = r_s[nonempty], s_s[nonempty], e_s[nonempty]
    overlap = (r_n[1:] == r_n[:-1]) & (s_n[1:] < e_n[:-1])
    slow_rows = np.unique(r_n[1:][overlap])
    # Disjoint pools: gains do not interact, so greedy = sort by gain, descending.
    g = _gains(ps, pe, ss, se)
    o = np.lexsort((-g, row))
    g_sorted, r_sorted = g[o], row[o]
    pos = ps.positions  # positions of the row-sorted order (row offsets unchanged by the sort)
    take = (pos < k) & (g_sorted > 0)
    idcg = np.bincount(r_sorted[take], weights=g_sorted[take] * discounts(pos[take]), minlength=ps.n_rows)
    for r in slow_rows:
        idcg[r] = _greedy_idcg_row(ps, pe, ss, se, int(r), k)
    return idcg


def _greedy_idcg_row(ps: Ragged, pe: Ragged, ss: Ragged, se: Ragged, r: int, k: int) -> float:
    """Greedy ideal for one row whose pool overlaps itself: marginal gains recomputed each step
    from per-span uncovered-character prefix sums (vectorized over candidate chunks)."""
    a = ps.values[ps.offsets[r] : ps.offsets[r + 1]]
    b = pe.values[pe.offsets[r] : pe.offsets[r + 1]]
    spans = list(zip(ss.values[ss.offsets[r] : ss.offsets[r + 1]], se.values[se.offsets[r] : se.offsets[r + 1]]))
    uncovered = [np.ones(int(e - s), dtype=bool) for s, e in spans]
    total = 0.0
    for step in range(k):
        gain = np.zeros(len(a))
        for (s, e), unc in zip(spans, uncovered):
            cum = np.concatenate([[0], np.cumsum(unc)])
            lo = np.clip(a - s, 0, e - s)
            hi = np.clip(b - s, 0, e - s)
            gain += np.where(hi > lo, cum[hi] - cum[np.minimum(lo, hi)], 0) / (e - s)
        gain /= len(spans)
        best = int(np.argmax(gain))
        if gain[best] <= 0:
            break
        total += gain[best] / np.log2(step + 2.0)
        for (s, e), unc in zip(spans, uncovered):
            lo, hi = max(a[best], s) - s, min(b[best], e) - s
            if hi > lo:
                unc[lo:hi] = False
    return total
