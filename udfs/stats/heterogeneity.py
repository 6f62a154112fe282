"""Heterogeneity of a paired delta across the values of a label: does the mean delta differ between slices?

Exploratory. One test per (contrast, cell, label), over the slices that meet the minimum size. With the
queries i of G slices (slice g(i), paired delta δ_i, document d(i)):

    n_g = queries of slice g, m_g = mean δ over them, N = Σ n_g, m̄ = Σ_g n_g m_g / N   (the pooled mean)
    Q   = Σ_g (n_g / N) · (m_g − m̄)²          the n-weighted between-slice variance of the slice means
                                               (ANOVA's between-slice sum of squares / N; metric units²)

Null distribution by a document-clustered bootstrap with the null imposed: each delta is centred on its
slice's mean, r_i = δ_i − m_g(i), so every slice has mean 0 in the resampled population (no
heterogeneity, everything else — within-slice spread, the slices' sizes, a label that varies inside a
document, the correlation of a document's queries — kept). Replicate b draws the documents exactly as
:func:`udfs.stats.bootstrap.cluster_bootstrap` does (same seed, same counts c_bj over the documents sorted by
id) and carries every query of a drawn document with its slice:

    N*_bg = Σ_j c_bj · n_jg,   m*_bg = Σ_j c_bj · R_jg / N*_bg     (R_jg: residual sum of document j in g)
    Q*_b  = Σ_g (N*_bg / N*_b) · (m*_bg − m̄*_b)²                   (a slice drawn empty drops out)
    p     = #{Q*_b >= Q} / B                                         (one-sided: Q is a spread, >= 0;
             Q*_b counts as >= Q within 1e-12 relative rounding)

so identical slices (Q = 0) give p = 1, and p = 0 means no replicate reached Q: p < 1/B. The test uses
the bootstrap the contrast itself uses, needs no normality of the deltas (bounded metrics: many ties at
0, skewed), and resamples documents, not slices, so it stays valid when a document's queries fall in
several slices (a query label). docs/slicing.md says why this test and not the mixed model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from udfs.stats.bootstrap import resampling_counts


@dataclass(frozen=True)
class HeterogeneityResult:
    statistic: float  # Q (metric units squared)
    p_value: float  # n_exceed / B
    n_exceed: int  # replicates with Q* >= Q
    n_slices: int  # G
    n: int  # queries
    n_clusters: int  # documents


def slice_heterogeneity(
    values: Sequence[float], clusters: Sequence, groups: Sequence, n_boot: int = 10_000, seed: int = 0
) -> HeterogeneityResult:
    """The heterogeneity test of the module doc: ``values`` the paired deltas, ``clusters`` their documents,
    ``groups`` their slices (the label's value). Fewer than two slices: statistic 0, p NaN."""
    return slice_heterogeneity_many([values], [clusters], [groups], n_boot, seed)[0]


def slice_heterogeneity_many(
    values: Sequence[Sequence[float]],
    clusters: Sequence[Sequence],
    groups: Sequence[Sequence],
    n_boot: int = 10_000,
    seed: int = 0,
) -> list[HeterogeneityResult]:
    """:func:`slice_heterogeneity` for many tests; tests over the same documents share one matrix product per
    block of replicates (identical to separate calls: the draws depend only on the documents, B and seed)."""
    if not (len(values) == len(clusters) == len(groups)):
        raise ValueError(f"{len(values)} value lists, {len(clusters)} cluster lists, {len(groups)} group lists")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    results: list[HeterogeneityResult | None] = [None] * len(values)
    by_docs: dict[tuple, list[tuple]] = {}
    for i, (values_i, clusters_i, groups_i) in enumerate(zip(values, clusters, groups)):
        v, c, g = np.asarray(values_i, dtype=np.float64), np.asarray(clusters_i), np.asarray(groups_i)
        if not (len(v) == len(c) == len(g)):
            raise ValueError(f"{len(v)} values, {len(c)} clusters and {len(g)} groups: lengths differ")
        if len(v) == 0:
            raise ValueError("no values to test")
        if not np.isfinite(v).all():
            raise ValueError(f"{int((~np.isfinite(v)).sum())} non-finite value(s)")
        docs, d_inv = np.unique(c, return_inverse=True)
        slices, g_inv = np.unique(g, return_inverse=True)
        n_c, n_g = len(docs), len(slices)
        if n_g < 2:
            results[i] = HeterogeneityResult(0.0, float("nan"), 0, n_g, len(v), n_c)
            continue
        size = np.bincount(g_inv, minlength=n_g).astype(np.float64)
        means = np.bincount(g_inv, weights=v, minlength=n_g) / size
        q = _spread(means[None, :], size[None, :])[0]
        cell = d_inv * n_g + g_inv  # (document, slice) -> flat index
        sums = np.bincount(cell, weights=v - means[g_inv], minlength=n_c * n_g).reshape(n_c, n_g)
        counts = np.bincount(cell, minlength=n_c * n_g).reshape(n_c, n_g).astype(np.float64)
        tol = 1e-12 * max(q, float(np.abs(v).max()) ** 2)
        by_docs.setdefault(tuple(docs.tolist()), []).append((i, q, tol, n_g, np.hstack([sums, counts]), len(v)))
    for docs, tests in by_docs.items():
        stats = np.hstack([t[4] for t in tests])
        starts = np.cumsum([0] + [2 * t[3] for t in tests])
        exceed = [0] * len(tests)
        for _, draw in resampling_counts(len(docs), n_boot, seed):
            acc = draw.astype(np.float64) @ stats
            for k, (_, q, tol, n_g, _, _) in enumerate(tests):
                r_sum, r_n = acc[:, starts[k] : starts[k] + n_g], acc[:, starts[k] + n_g : starts[k + 1]]
                with np.errstate(invalid="ignore", divide="ignore"):
                    m_star = np.where(r_n > 0, r_sum / r_n, 0.0)
                exceed[k] += int(np.count_nonzero(_spread(m_star, r_n) >= q - tol))
        for k, (i, q, _, n_g, _, n) in enumerate(tests):
            results[i] = HeterogeneityResult(float(q), exceed[k] / n_boot, exceed[k], n_g, n, len(docs))
    return results  # type: ignore[return-value]


def _spread(means: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Q per row: Σ_g w_g (m_g − m̄)², w_g = n_g / Σ n_g (rows: replicates; an empty slice has weight 0)."""
    w = sizes / sizes.sum(axis=1, keepdims=True)
    pooled = (w * means).sum(axis=1, keepdims=True)
    return (w * (means - pooled) ** 2).sum(axis=1)
