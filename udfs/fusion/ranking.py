"""Rankings of fused scores within query groups: the rank of chosen items, and the top k.

Within a group, items are ordered by fused score descending; equal scores are broken by the item's
position in the group (the stack's document-key order: doc_id ascending), so every ranking is total
and deterministic:

    rank(t) = 1 + #{i in group(t): f_i > f_t} + #{i in group(t): f_i = f_t and i < t}

An item with a NaN fused score is not in the fused list: its rank is +inf, and it never pushes
another item down. (ranx breaks ties by its own unstable sort; rankings without ties agree.)
"""

from __future__ import annotations

import numpy as np


def ranks_of(fused: np.ndarray, offsets: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(N, M) fused scores, group ``offsets``, (T,) item rows -> (T, M) ranks (float, +inf = not listed).

    Vectorized over targets and fusions: the groups are padded to their largest size D and compared in
    one (T, D, M) block, so callers bound T·D·M by processing groups in chunks."""
    f = np.asarray(fused, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.int64)
    if len(targets) == 0:
        return np.empty((0, f.shape[1]))
    lengths = np.diff(offsets)
    group = np.searchsorted(offsets, targets, side="right") - 1
    width = int(lengths[group].max())
    pos = np.arange(width)
    idx = offsets[group][:, None] + pos[None, :]  # (T, D)
    valid = pos[None, :] < lengths[group][:, None]
    block = f[np.where(valid, idx, 0)]  # (T, D, M)
    block[~valid] = np.nan
    ft = f[targets][:, None, :]  # (T, 1, M)
    before = (idx < targets[:, None])[:, :, None]
    ahead = (block > ft) | ((block == ft) & before)
    ranks = 1.0 + ahead.sum(axis=1)
    ranks[np.isnan(f[targets])] = np.inf
    return ranks


def top_k(fused: np.ndarray, offsets: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(N,) fused scores of one fusion -> (item rows, 1-based ranks) of each group's first k items,
    groups in order, ranks ascending within a group; NaN items are left out."""
    f = np.asarray(fused, dtype=np.float64)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    group = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    keep = np.flatnonzero(~np.isnan(f))
    order = keep[np.lexsort((keep, -f[keep], group[keep]))]
    g = group[order]
    start = np.concatenate([[0], np.flatnonzero(g[1:] != g[:-1]) + 1]) if len(g) else np.zeros(0, dtype=np.int64)
    first = np.repeat(start, np.diff(np.concatenate([start, [len(g)]])))
    rank = np.arange(len(g)) - first + 1
    sel = rank <= k
    return order[sel], rank[sel]
