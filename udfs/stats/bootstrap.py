"""Document-clustered bootstrap of a mean of per-query values (paired deltas or per-query slopes).

Queries are nested in documents, so documents are resampled, not queries. With the n_c distinct
documents sorted by id, replicate b draws n_c document indices uniformly with replacement
(``rng.integers(0, n_c, n_c)``, ``rng = numpy.random.default_rng(seed)``, replicates drawn in order),
and every query of a drawn document enters as a bundle:

    c_bj     = times document j is drawn in replicate b          (multinomial counts)
    δ*_b     = Σ_j c_bj · S_j / Σ_j c_bj · n_j,   S_j = sum of the values of document j's queries,
                                                  n_j = its number of queries
    estimate = unweighted mean of the values (all queries)
    CI95     = 2.5th / 97.5th percentiles of δ*  (numpy linear interpolation)
    p        = min(1, 2 · min(Pr[δ* <= 0], Pr[δ* >= 0]))          (two-sided; a replicate with
               |δ*| <= 1e-12 · max|value| is an exact zero whose last bits are rounding, and
               counts in both tails)
    n_far    = min(#{δ* <= 0}, #{δ* >= 0}) = the replicates on the far side of zero (zeros in both),
               so p = min(1, 2 · n_far / B); p = 0 means n_far = 0: no replicate crossed zero, and
               the p-value is only known to be below the resolution, shown as "< 1/B"
    se       = sd(δ*, ddof=1)

Vectorized: the counts of a block of replicates come from one ``bincount`` and all replicate means
from one matrix product; several value vectors over the same document set share the draws (common
random numbers), which gives each exactly what a call on its own with the same seed gives.

:func:`paired_bootstrap` is the special case where every value is its own resampling unit (a query,
for studies that resample queries): the n units in the order given draw exactly as n clusters that
sort in that order, δ*_b = Σ_i c_bi · v_i / n; problems of equal length share the draws.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

_BLOCK = 1000  # replicates per block (bounds memory: BLOCK x n_docs counts)


@dataclass(frozen=True)
class BootstrapResult:
    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    se: float
    n: int
    n_clusters: int
    n_far: int = 0  # replicates on the far side of zero (module doc); p = min(1, 2 * n_far / B)


def cluster_bootstrap(
    values: Sequence[float], clusters: Sequence, n_boot: int = 10_000, seed: int = 0
) -> BootstrapResult:
    """Clustered bootstrap of the mean of ``values`` (one per query), ``clusters`` its document ids."""
    return cluster_bootstrap_many([values], [clusters], n_boot, seed)[0]


def cluster_bootstrap_many(
    values: Sequence[Sequence[float]], clusters: Sequence[Sequence], n_boot: int = 10_000, seed: int = 0
) -> list[BootstrapResult]:
    """:func:`cluster_bootstrap` for many problems at once; problems over the same document set
    share one draw of the resampling counts (identical to separate calls with the same seed)."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} value lists but {len(clusters)} cluster lists")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    prepared = []
    by_docset: dict[tuple, list[int]] = {}
    for i, (v, c) in enumerate(zip(values, clusters)):
        v = np.asarray(v, dtype=np.float64)
        c = np.asarray(c)
        if len(v) != len(c):
            raise ValueError(f"problem {i}: {len(v)} values but {len(c)} cluster labels")
        if len(v) == 0:
            raise ValueError(f"problem {i}: no values to bootstrap")
        if not np.isfinite(v).all():
            raise ValueError(f"problem {i}: {int((~np.isfinite(v)).sum())} non-finite value(s)")
        labels, inv = np.unique(c, return_inverse=True)
        sums = np.bincount(inv, weights=v, minlength=len(labels))
        counts = np.bincount(inv, minlength=len(labels)).astype(np.float64)
        prepared.append((v, sums, counts, len(labels)))
        by_docset.setdefault(tuple(labels.tolist()), []).append(i)
    results: list[BootstrapResult | None] = [None] * len(values)
    for idx in by_docset.values():
        n_c = prepared[idx[0]][3]
        stats = np.column_stack([col for i in idx for col in (prepared[i][1], prepared[i][2])])
        reps = _replicate_means(stats, n_c, n_boot, seed)
        for j, i in enumerate(idx):
            v = prepared[i][0]
            results[i] = _summarize(float(v.mean()), reps[:, j], len(v), n_c, float(np.abs(v).max()))
    return results  # type: ignore[return-value]


def paired_bootstrap(values: Sequence[float], n_boot: int = 10_000, seed: int = 0) -> BootstrapResult:
    """Bootstrap of the mean of ``values`` resampling the values themselves (one per paired unit,
    e.g. the per-query deltas of two methods), in the order given. Equals :func:`cluster_bootstrap`
    with distinct cluster labels sorted in that order."""
    return paired_bootstrap_many([values], n_boot, seed)[0]


def paired_bootstrap_many(
    values: Sequence[Sequence[float]], n_boot: int = 10_000, seed: int = 0
) -> list[BootstrapResult]:
    """:func:`paired_bootstrap` for many problems; problems of equal length share one draw."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    arrays = []
    for i, v in enumerate(values):
        v = np.asarray(v, dtype=np.float64)
        if len(v) == 0:
            raise ValueError(f"problem {i}: no values to bootstrap")
        if not np.isfinite(v).all():
            raise ValueError(f"problem {i}: {int((~np.isfinite(v)).sum())} non-finite value(s)")
        arrays.append(v)
    by_length: dict[int, list[int]] = {}
    for i, v in enumerate(arrays):
        by_length.setdefault(len(v), []).append(i)
    results: list[BootstrapResult | None] = [None] * len(arrays)
    for n, idx in by_length.items():
        values_n = np.column_stack([arrays[i] for i in idx])
        reps = np.empty((n_boot, len(idx)))
        for b0, counts in _unit_counts(n, n_boot, seed):
            reps[b0 : b0 + len(counts)] = (counts.astype(np.float64) @ values_n) / n
        for i, r in zip(idx, _summarize_columns(values_n.mean(axis=0), reps, n, np.abs(values_n).max(axis=0))):
            results[i] = r
    return results  # type: ignore[return-value]


def resampling_counts(n_c: int, n_boot: int, seed: int) -> tuple[tuple[int, np.ndarray], ...]:
    """The resampling counts c_bj of :func:`cluster_bootstrap` over ``n_c`` documents (sorted by id), as
    (first replicate, read-only (rows, n_c) counts) blocks: the very draws of a bootstrap with this seed,
    for kernels that resample the same documents another way (udfs/stats/heterogeneity.py). Cached."""
    return _unit_counts(n_c, n_boot, seed)


@functools.lru_cache(maxsize=6)
def _unit_counts(n: int, n_boot: int, seed: int) -> tuple[tuple[int, np.ndarray], ...]:
    """The resampling counts of :func:`paired_bootstrap` as (first replicate, (rows, n) counts) blocks:
    the draws of :func:`_replicate_means` for n units. Cached (read-only, uint16 where n allows): many
    calls with the same (n, B, seed), such as a UDF called once per metric column, draw once."""
    rng = np.random.default_rng(seed)
    dtype = np.uint16 if n < 2**16 else np.int64
    blocks = []
    for b0 in range(0, n_boot, _BLOCK):
        nb = min(_BLOCK, n_boot - b0)
        draws = rng.integers(0, n, size=(nb, n))
        draws += (np.arange(nb, dtype=draws.dtype) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=nb * n).reshape(nb, n).astype(dtype)
        counts.setflags(write=False)
        blocks.append((b0, counts))
    return tuple(blocks)


def replicate_means(values: Sequence[float], clusters: Sequence, n_boot: int = 10_000, seed: int = 0) -> np.ndarray:
    """The B replicate means δ*_b themselves (for checks and MDE)."""
    v = np.asarray(values, dtype=np.float64)
    labels, inv = np.unique(np.asarray(clusters), return_inverse=True)
    stats = np.column_stack(
        [np.bincount(inv, weights=v, minlength=len(labels)), np.bincount(inv, minlength=len(labels)).astype(np.float64)]
    )
    return _replicate_means(stats, len(labels), n_boot, seed)[:, 0]


def _replicate_means(stats: np.ndarray, n_c: int, n_boot: int, seed: int) -> np.ndarray:
    """stats: (n_c, 2P) columns (S, n) per problem -> (B, P) replicate means."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, stats.shape[1] // 2))
    for b0 in range(0, n_boot, _BLOCK):
        nb = min(_BLOCK, n_boot - b0)
        draws = rng.integers(0, n_c, size=(nb, n_c))
        draws += (np.arange(nb, dtype=draws.dtype) * n_c)[:, None]
        counts = np.bincount(draws.ravel(), minlength=nb * n_c).reshape(nb, n_c).astype(np.float64)
        acc = counts @ stats
        out[b0 : b0 + nb] = acc[:, 0::2] / acc[:, 1::2]
    return out


def _summarize_columns(estimates: np.ndarray, reps: np.ndarray, n: int, scales: np.ndarray) -> list[BootstrapResult]:
    """:func:`_summarize` of every column of (B, P) replicate means at once (paired: n_c = n)."""
    lo, hi = np.percentile(reps, [2.5, 97.5], axis=0)
    zero = np.abs(reps) <= 1e-12 * scales[None, :]
    below = ((reps < 0) | zero).mean(axis=0)
    above = ((reps > 0) | zero).mean(axis=0)
    p = np.minimum(1.0, 2.0 * np.minimum(below, above))
    se = reps.std(axis=0, ddof=1) if len(reps) > 1 else np.full(reps.shape[1], np.nan)
    return [
        BootstrapResult(float(e), float(a), float(b), float(q), float(d), n, n)
        for e, a, b, q, d in zip(estimates, lo, hi, p, se)
    ]


def _summarize(estimate: float, reps: np.ndarray, n: int, n_c: int, scale: float) -> BootstrapResult:
    lo, hi = np.percentile(reps, [2.5, 97.5])
    zero = np.abs(reps) <= 1e-12 * scale
    n_far = min(int(np.count_nonzero((reps < 0) | zero)), int(np.count_nonzero((reps > 0) | zero)))
    p = min(1.0, 2.0 * n_far / len(reps))
    se = float(np.std(reps, ddof=1)) if len(reps) > 1 else float("nan")
    return BootstrapResult(estimate, float(lo), float(hi), p, se, n, n_c, n_far)
