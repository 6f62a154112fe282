"""Secondary check of a paired contrast: a linear mixed model with a random intercept per document.

    score_qa = β0 + β1 · [arm a = treatment] + u_doc(q) + ε_qa,   u ~ N(0, τ²), ε ~ N(0, σ²)

fitted by REML with statsmodels ``MixedLM`` (score ~ condition, groups = document). Reported: β1 (the
treatment - control difference in metric units), its standard error, Wald z, two-sided p and 95% CI.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
from statsmodels.regression.mixed_linear_model import MixedLM


@dataclass(frozen=True)
class MixedResult:
    coef: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n_obs: int
    n_groups: int
    converged: bool


def mixedlm_contrast(scores: Sequence[float], treatment: Sequence[bool], groups: Sequence) -> MixedResult:
    """Fit score ~ treatment indicator with a random intercept per group; return β1 and its test."""
    y = np.asarray(scores, dtype=np.float64)
    t = np.asarray(treatment, dtype=np.float64)
    g = np.asarray(groups)
    if not (len(y) == len(t) == len(g)):
        raise ValueError("scores, treatment and groups differ in length")
    if not np.isfinite(y).all():
        raise ValueError(f"{int((~np.isfinite(y)).sum())} non-finite score(s)")
    exog = np.column_stack([np.ones_like(t), t])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = MixedLM(y, exog, groups=g).fit(reml=True)
    lo, hi = fit.conf_int(alpha=0.05)[1]
    return MixedResult(
        float(fit.fe_params[1]),
        float(fit.bse_fe[1]),
        float(fit.tvalues[1]),
        float(fit.pvalues[1]),
        float(lo),
        float(hi),
        len(y),
        len(np.unique(g)),
        bool(fit.converged),
    )


MIXED_SCHEMA = pa.schema(
    [
        ("contrast", pa.string()),
        ("corpus", pa.string()),
        ("embedder", pa.string()),
        ("reranker", pa.string()),
        ("metric", pa.string()),
        ("coef", pa.float64()),
        ("se", pa.float64()),
        ("z", pa.float64()),
        ("p_value", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("n_obs", pa.int64()),
        ("n_groups", pa.int64()),
        ("converged", pa.bool_()),
    ]
)

_KEYS = ("contrast", "corpus", "embedder", "reranker", "metric")


def mixedlm_table(deltas: pa.Table) -> pa.Table:
    """One MixedLM fit per (contrast, corpus, embedder, reranker, metric) of a ``int_contrast_deltas``
    table (columns: those keys, cluster_id, treatment_value, control_value): each paired query
    contributes its treatment score (indicator 1) and its control score (0), grouped by cluster_id."""
    rows: list[dict] = []
    if deltas.num_rows:
        keys = list(zip(*(deltas.column(k).to_pylist() for k in _KEYS)))
        cluster = np.asarray(deltas.column("cluster_id").to_pylist(), dtype=object)
        tv = deltas.column("treatment_value").to_numpy(zero_copy_only=False).astype(np.float64)
        cv = deltas.column("control_value").to_numpy(zero_copy_only=False).astype(np.float64)
        groups: dict[tuple, list[int]] = {}
        for i, k in enumerate(keys):
            groups.setdefault(k, []).append(i)
        for key in sorted(groups):
            idx = np.asarray(groups[key])
            res = mixedlm_contrast(
                np.concatenate([tv[idx], cv[idx]]),
                np.concatenate([np.ones(len(idx), bool), np.zeros(len(idx), bool)]),
                np.concatenate([cluster[idx], cluster[idx]]).astype(str),
            )
            rows.append({**dict(zip(_KEYS, key)), **res.__dict__})
    return pa.Table.from_pylist(rows, schema=MIXED_SCHEMA)
