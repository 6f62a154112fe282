"""A dense stack of runs: for every query group, the union of the documents its runs list.

Long input rows (one per (group, document, run)), sorted by group, then document key, then run,
become N *items* (one per distinct (group, document)) with, per run s of S:

    scores[n, s] = the run's score for item n, NaN where run s does not list it
    ranks[n, s]  = the run's 1-based rank for item n, 0 where run s does not list it

Items of group g are ``offsets[g]:offsets[g+1]``, in document-key order; that order breaks ties
between equal fused scores (:mod:`udfs.fusion.ranking`), so a caller that sorts by doc_id gets ties
broken by doc_id ascending. Keys are compared as Arrow strings (byte order = code-point order, as
DuckDB's ORDER BY sorts them), vectorized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class RunStack:
    scores: np.ndarray  # (N, S) float64, NaN = not listed
    ranks: np.ndarray  # (N, S) int64, 0 = not listed
    offsets: np.ndarray  # (G + 1,) item offsets per group
    keys: pa.Array  # (N,) the caller's document key of each item
    first_row: np.ndarray  # (N,) index of the item's first input row (to carry per-document attributes)

    @property
    def n_groups(self) -> int:
        return len(self.offsets) - 1

    @property
    def group_of_item(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_groups, dtype=np.int64), np.diff(self.offsets))

    @property
    def item_key(self) -> np.ndarray:
        """The item keys as a numpy object array."""
        return np.asarray(self.keys.to_pylist(), dtype=object)


def stack_runs(group, key, run, rank, score, n_groups: int, n_runs: int) -> RunStack:
    """Build the stack from long rows sorted by (group, key, run). ``group`` in 0..n_groups-1 (every
    group must have at least one row), ``key`` strings (an Arrow array or a sequence), ``run`` in
    0..n_runs-1, ``rank`` >= 1; a (group, key, run) twice is an error (a run lists a document once)."""
    group = np.asarray(group, dtype=np.int64)
    keys = key.combine_chunks() if isinstance(key, pa.ChunkedArray) else key
    keys = keys if isinstance(keys, pa.Array) else pa.array(list(keys), type=pa.string())
    run = np.asarray(run, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if not (len(group) == len(keys) == len(run) == len(rank) == len(score)):
        raise ValueError("group, key, run, rank and score must have one value per row")
    if len(group) and (np.any(np.diff(group) < 0) or group[0] < 0 or group[-1] >= n_groups):
        raise ValueError("rows must be sorted by group, with group ids in 0..n_groups-1")
    if np.any((run < 0) | (run >= n_runs)) or np.any(rank < 1) or np.isnan(score).any():
        raise ValueError("run ids must lie in 0..n_runs-1, ranks be >= 1 and scores not NaN")
    new_item = np.ones(len(group), dtype=bool)
    if len(group) > 1:
        same_group = group[1:] == group[:-1]
        head, tail = keys.slice(1), keys.slice(0, len(keys) - 1)
        same_key = same_group & pc.equal(head, tail).to_numpy(zero_copy_only=False)
        if np.any(same_group & pc.less(head, tail).to_numpy(zero_copy_only=False)):
            raise ValueError("rows must be sorted by document key within each group")
        if np.any(same_key & (run[1:] == run[:-1])):
            raise ValueError("a run lists the same document twice in one group")
        if np.any(same_key & (run[1:] < run[:-1])):
            raise ValueError("rows must be sorted by run within each (group, document)")
        new_item[1:] = ~same_key
    item = np.cumsum(new_item) - 1
    n_items = int(item[-1]) + 1 if len(item) else 0
    scores = np.full((n_items, n_runs), np.nan)
    ranks = np.zeros((n_items, n_runs), dtype=np.int64)
    scores[item, run] = score
    ranks[item, run] = rank
    counts = np.bincount(group[new_item], minlength=n_groups)
    if np.any(counts == 0):
        raise ValueError(f"group {int(np.argmax(counts == 0))} has no rows")
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    first = np.flatnonzero(new_item)
    return RunStack(scores, ranks, offsets, keys.take(pa.array(first)), first)
