"""Shared span-coverage kernels: which gold characters each ranked chunk covers *first*.

Half-open character intervals ``[start, end)`` everywhere. For a ranking (intervals in rank order)
and the query's gold spans, the *new coverage* of interval ``i`` on span ``s`` is

    new(i, s) = | (I_i ∩ S_s)  minus  ∪_{j ranked above i} (I_j ∩ S_s) |      (characters)

so every gold character of a span is credited exactly once, to the highest-ranked chunk covering it.
Computed with elementary segments: per span, the clipped intervals' endpoints cut the span into
segments; each segment is credited to the first (highest-ranked) clipped interval containing it.
"""

from __future__ import annotations

import numpy as np

from udfs.ragged import Ragged, RaggedLike, as_ragged, check_same_shape, ragged_arange


def coverage_inputs(
    chunk_starts: RaggedLike, chunk_ends: RaggedLike, span_starts: RaggedLike, span_ends: RaggedLike
) -> tuple[Ragged, Ragged, Ragged, Ragged]:
    """Validated ragged chunk and gold-span offsets: starts/ends of equal shape, one span list per
    ranking, every span non-empty (:func:`check_spans`)."""
    cs, ce = as_ragged(chunk_starts, np.int64, "chunk starts"), as_ragged(chunk_ends, np.int64, "chunk ends")
    ss, se = as_ragged(span_starts, np.int64, "span starts"), as_ragged(span_ends, np.int64, "span ends")
    check_same_shape(cs, ce, "chunk starts/ends")
    check_same_shape(ss, se, "span starts/ends")
    if cs.n_rows != ss.n_rows:
        raise ValueError(f"{cs.n_rows} rankings but {ss.n_rows} span lists")
    check_spans(ss, se)
    return cs, ce, ss, se


def check_spans(spans_start: Ragged, spans_end: Ragged) -> None:
    """Raise on an empty or inverted span, or a row without any span (those queries are excluded,
    and counted, upstream; a kernel never silently scores them)."""
    bad = spans_end.values <= spans_start.values
    if bad.any():
        row = int(spans_start.row_ids[np.argmax(bad)])
        raise ValueError(f"row {row}: gold span with char_end <= char_start")
    empty = spans_start.lengths == 0
    if empty.any():
        raise ValueError(f"row {int(np.argmax(empty))}: no gold spans (exclude such queries before scoring)")


def first_cover(
    iv_start: Ragged, iv_end: Ragged, sp_start: Ragged, sp_end: Ragged
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """New coverage of every (interval, span) pair of the same row that overlaps.

    Intervals are taken in their flat order (rank order within each row). Returns
    ``(interval_index, span_index, new_chars)`` over flat indices, only pairs with overlap > 0."""
    n_sp = sp_start.lengths
    iv_row = iv_start.row_ids
    # Only intervals overlapping some span of their row can cover anything: find them with one
    # vectorized pass per span slot (no interval x span product), then pair just those.
    hit = np.zeros(len(iv_start.values), dtype=bool)
    first_sp = sp_start.offsets[:-1]
    for j in range(int(n_sp.max()) if len(n_sp) else 0):
        has = np.flatnonzero(n_sp[iv_row] > j)
        sp = first_sp[iv_row[has]] + j
        hit[has] |= np.minimum(iv_end.values[has], sp_end.values[sp]) > np.maximum(
            iv_start.values[has], sp_start.values[sp]
        )
    cand = np.flatnonzero(hit)
    reps = n_sp[iv_row[cand]]
    pair_iv = np.repeat(cand, reps)
    pair_sp = np.repeat(first_sp[iv_row[cand]], reps) + ragged_arange(reps)
    lo = np.maximum(iv_start.values[pair_iv], sp_start.values[pair_sp])
    hi = np.minimum(iv_end.values[pair_iv], sp_end.values[pair_sp])
    keep = hi > lo
    pair_iv, pair_sp, lo, hi = pair_iv[keep], pair_sp[keep], lo[keep], hi[keep]
    if len(pair_iv) == 0:
        return pair_iv, pair_sp, np.zeros(0, dtype=np.float64)
    # Pairs grouped by span, in rank order inside each span.
    order = np.lexsort((pair_iv, pair_sp))
    pair_iv, pair_sp, lo, hi = pair_iv[order], pair_sp[order], lo[order], hi[order]
    return pair_iv, pair_sp, _credit_first(pair_sp, lo, hi)


def _credit_first(key: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per key (sorted, intervals in precedence order): characters each interval covers first."""
    n = len(key)
    # Fast path: within every key the intervals are disjoint -> each keeps its whole length.
    srt = np.lexsort((lo, key))
    k_s, lo_s, hi_s = key[srt], lo[srt], hi[srt]
    same = k_s[1:] == k_s[:-1]
    if not np.any(same & (lo_s[1:] < hi_s[:-1])):
        return (hi - lo).astype(np.float64)
    # Elementary segments between the sorted distinct endpoints of each key.
    pts_key = np.concatenate([key, key])
    pts = np.concatenate([lo, hi])
    o = np.lexsort((pts, pts_key))
    pts_key, pts = pts_key[o], pts[o]
    distinct = np.ones(len(pts), dtype=bool)
    distinct[1:] = (pts_key[1:] != pts_key[:-1]) | (pts[1:] != pts[:-1])
    pts_key, pts = pts_key[distinct], pts[distinct]
    seg_ok = pts_key[1:] == pts_key[:-1]
    seg_key, seg_lo, seg_hi = pts_key[:-1][seg_ok], pts[:-1][seg_ok], pts[1:][seg_ok]
    # Candidate intervals of each segment = all intervals of its key, in precedence order.
    uk, first, count = np.unique(key, return_index=True, return_counts=True)
    kpos = np.searchsorted(uk, seg_key)
    reps = count[kpos]
    seg_id = np.repeat(np.arange(len(seg_key), dtype=np.int64), reps)
    cand = np.repeat(first[kpos], reps) + ragged_arange(reps)
    covers = (lo[cand] <= seg_lo[seg_id]) & (hi[cand] >= seg_hi[seg_id])
    seg_id, cand = seg_id[covers], cand[covers]
    _, first_idx = np.unique(seg_id, return_index=True)
    winner = cand[first_idx]
    seg_len = (seg_hi - seg_lo)[seg_id[first_idx]].astype(np.float64)
    return np.bincount(winner, weights=seg_len, minlength=n)


def merge_spans(sp_start: Ragged, sp_end: Ragged) -> tuple[Ragged, Ragged]:
    """Union of each row's spans as disjoint sorted intervals (each gold character once)."""
    row = sp_start.row_ids
    o = np.lexsort((sp_start.values, row))
    row, s, e = row[o], sp_start.values[o].astype(np.int64), sp_end.values[o].astype(np.int64)
    if len(s) == 0:
        return sp_start, sp_end
    base = int(max(e.max(), 0)) + 1
    shifted = e + row * base  # cumulative max never leaks across rows
    prev_max = np.maximum.accumulate(shifted)
    starts_new = np.ones(len(s), dtype=bool)
    starts_new[1:] = (row[1:] != row[:-1]) | (s[1:] + row[1:] * base > prev_max[:-1])
    m_start = s[starts_new]
    m_end = np.maximum.reduceat(e, np.flatnonzero(starts_new))
    m_row = row[starts_new]
    counts = np.bincount(m_row, minlength=sp_start.n_rows)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Ragged(m_start, offsets), Ragged(m_end, offsets)


def discounts(positions: np.ndarray) -> np.ndarray:
    """DCG discount 1 / log2(rank + 1) for 0-based positions (rank = position + 1)."""
    return 1.0 / np.log2(positions + 2.0)
