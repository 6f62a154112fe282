"""Sums and maxima of run columns over many subsets of runs at once, without a matrix product.

For subsets given as rows of an (M, S) membership matrix, each subset's column is built from a
smaller subset already computed (the subset minus its lowest member) and one run column:

    sum_m = sum_{m - low(m)} + x_low(m),    max_m = fmax(max_{m - low(m)}, x_low(m))

one elementwise pass of N values per subset (for all 2^S - 1 subsets: M passes instead of
M · |m| / 2), and no BLAS call, whose threads only cost on products with an inner dimension of S
(<= 15). A subset whose smaller subset is not in the list is summed directly. Results are
bit-identical to summing the members in increasing run order.
"""

from __future__ import annotations

import numpy as np


def _plan(members: np.ndarray) -> list[tuple[int, int, int]]:
    """(output column, column it extends or -1, run added) per subset, smaller subsets first."""
    m = np.asarray(members, dtype=bool)
    masks = (m.astype(np.int64) << np.arange(m.shape[1])).sum(axis=1)
    column = {int(k): j for j, k in enumerate(masks)}
    steps = []
    for j in sorted(range(len(masks)), key=lambda j: (int(masks[j]).bit_count(), int(masks[j]))):
        mask = int(masks[j])
        if mask == 0:
            raise ValueError(f"subset {j} has no member")
        high = mask.bit_length() - 1  # extend the subset without its highest run: runs are added in order
        rest = mask & ~(1 << high)
        steps.append((j, column.get(rest, -2) if rest else -1, high))
    return steps


def subset_reduce(values: np.ndarray, members: np.ndarray, op: str) -> np.ndarray:
    """(N, S) values, (M, S) membership -> (M, N): op 'sum' (adds) or 'fmax' (NaN-ignoring max) of
    each subset's columns, runs combined in increasing order."""
    x = np.ascontiguousarray(np.asarray(values, dtype=np.float64).T)  # (S, N): run columns contiguous
    ufunc = {"sum": np.add, "fmax": np.fmax}[op]
    out = np.empty((len(members), x.shape[1]))
    for j, prev, run in _plan(members):
        if prev == -1:
            out[j] = x[run]
        elif prev >= 0:
            ufunc(out[prev], x[run], out=out[j])
        else:
            cols = np.flatnonzero(members[j])
            out[j] = x[cols[0]]
            for c in cols[1:]:
                ufunc(out[j], x[c], out=out[j])
    return out
