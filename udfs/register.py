"""Registers every Python UDF into a DuckDB connection (used by the dbt plugin and the CLI).

All UDFs are Arrow-vectorized (``type='arrow'``): DuckDB hands each call a batch of rows whose LIST
arguments arrive as Arrow list arrays; the kernels work on the flat buffers (see :mod:`udfs.ragged`).
Integer arguments such as ``k`` or a budget must be constant within a query (a literal or dbt var).

SQL name -> kernel
    cov_ndcg(r_start, r_end, s_start, s_end, p_start, p_end, k)   udfs.metrics.cov_ndcg.cov_ndcg
    cov_dcg(r_start, r_end, s_start, s_end, k), cov_idcg(p_start, p_end, s_start, s_end, k)
                                                                   its two halves (IDCG once per pool)
    span_recall(r_start, r_end, s_start, s_end, k)                 udfs.metrics.span_recall.span_recall
    token_budget_coverage(r_start, r_end, tokens, s_start, s_end, budget)
                                                                   udfs.metrics.token_budget
    binary_mrr(rel), binary_ndcg(rel, n_relevant, k)               udfs.metrics.binary
    doc_hit(run_rel, k), doc_recall(run_rel, qrels_rel, k), doc_ndcg(run_rel, qrels_rel, k),
    doc_mrr(run_rel, k)                                            udfs.metrics.doc_level
    cluster_bootstrap(values, clusters, n_boot, seed) -> STRUCT    udfs.stats.bootstrap.cluster_bootstrap_many
    slice_heterogeneity(values, clusters, groups, n_boot, seed) -> STRUCT
                                                                   udfs.stats.heterogeneity.slice_heterogeneity_many
    holm_adjust(p_values) -> DOUBLE[]                              udfs.stats.multiple.holm_families
    cohens_dz(deltas)                                              udfs.stats.effects.cohens_dz_rows
    mde(se)                                                        udfs.stats.effects.mde (alpha .05, power .8)
    paired_bootstrap(values, n_boot, seed) -> STRUCT               udfs.stats.bootstrap.paired_bootstrap_many
                                                                   (each value its own unit, in list order)
    squad_score(answer, golds) -> STRUCT(em, f1)                   udfs.metrics.squad.squad_scores (max over golds)
    squad_normalize(text)                                          udfs.metrics.squad.normalize_answer
"""

from __future__ import annotations

from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa
from duckdb.sqltypes import BIGINT, BOOLEAN, DOUBLE, VARCHAR

from udfs.metrics.binary import mrr, ndcg_binary
from udfs.metrics.cov_ndcg import cov_dcg, cov_idcg, cov_ndcg
from udfs.metrics.doc_level import hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k
from udfs.metrics.span_recall import span_recall
from udfs.metrics.squad import normalize_answer, squad_scores
from udfs.metrics.token_budget import token_budget_coverage
from udfs.ragged import as_ragged
from udfs.stats.bootstrap import cluster_bootstrap_many, paired_bootstrap_many
from udfs.stats.effects import cohens_dz_rows, mde
from udfs.stats.heterogeneity import slice_heterogeneity_many
from udfs.stats.multiple import holm_families

_INTS = duckdb.list_type(BIGINT)
_DOUBLES = duckdb.list_type(DOUBLE)
_BOOLS = duckdb.list_type(BOOLEAN)
_BOOTSTRAP = duckdb.struct_type(
    {
        "estimate": DOUBLE,
        "ci_low": DOUBLE,
        "ci_high": DOUBLE,
        "p_value": DOUBLE,
        "se": DOUBLE,
        "n": BIGINT,
        "n_clusters": BIGINT,
        "n_far": BIGINT,
    }
)


def _const(arg, name: str) -> int:
    """The single value of a constant integer argument (k, budget, B, seed)."""
    values = np.unique(np.asarray(arg.to_numpy() if hasattr(arg, "to_numpy") else arg))
    if len(values) != 1:
        raise ValueError(f"{name} must be constant within a query, got {values[:5].tolist()}")
    return int(values[0])


def _out(values: np.ndarray) -> pa.Array:
    return pa.array(np.asarray(values, dtype=np.float64))


_EMPTY = pa.array([], type=pa.float64())


def _cov_ndcg(r_start, r_end, s_start, s_end, p_start, p_end, k):
    return _out(cov_ndcg(r_start, r_end, s_start, s_end, p_start, p_end, _const(k, "k"))) if len(k) else _EMPTY


def _cov_dcg(r_start, r_end, s_start, s_end, k):
    return _out(cov_dcg(r_start, r_end, s_start, s_end, _const(k, "k"))) if len(k) else _EMPTY


def _cov_idcg(p_start, p_end, s_start, s_end, k):
    return _out(cov_idcg(p_start, p_end, s_start, s_end, _const(k, "k"))) if len(k) else _EMPTY


def _span_recall(r_start, r_end, s_start, s_end, k):
    return _out(span_recall(r_start, r_end, s_start, s_end, _const(k, "k"))) if len(k) else _EMPTY


def _token_budget(r_start, r_end, tokens, s_start, s_end, budget):
    if not len(budget):
        return _EMPTY
    return _out(token_budget_coverage(r_start, r_end, tokens, s_start, s_end, _const(budget, "budget")))


def _binary_mrr(rel):
    return _out(mrr(rel))


def _doc_hit(run_rel, k):
    return _out(hit_at_k(run_rel, _const(k, "k"))) if len(k) else _EMPTY


def _doc_recall(run_rel, qrels_rel, k):
    return _out(recall_at_k(run_rel, qrels_rel, _const(k, "k"))) if len(k) else _EMPTY


def _doc_ndcg(run_rel, qrels_rel, k):
    return _out(ndcg_at_k(run_rel, qrels_rel, _const(k, "k"))) if len(k) else _EMPTY


def _doc_mrr(run_rel, k):
    return _out(mrr_at_k(run_rel, _const(k, "k"))) if len(k) else _EMPTY


def _cohens_dz(deltas):
    return _out(cohens_dz_rows(deltas))


def _binary_ndcg(rel, n_relevant, k):
    return _out(ndcg_binary(rel, n_relevant, _const(k, "k"))) if len(k) else _EMPTY


_BOOTSTRAP_FIELDS = (
    ("estimate", pa.float64()),
    ("ci_low", pa.float64()),
    ("ci_high", pa.float64()),
    ("p_value", pa.float64()),
    ("se", pa.float64()),
    ("n", pa.int64()),
    ("n_clusters", pa.int64()),
    ("n_far", pa.int64()),
)


def _bootstrap(values, clusters, n_boot, seed):
    if not len(n_boot):
        return pa.array([], type=pa.struct(list(_BOOTSTRAP_FIELDS)))
    v = as_ragged(values, np.float64, "values")
    c = clusters.combine_chunks() if isinstance(clusters, pa.ChunkedArray) else clusters
    labels = np.asarray(c.flatten().to_numpy(zero_copy_only=False), dtype=object)
    offsets = np.asarray(c.offsets, dtype=np.int64) - int(c.offsets[0].as_py())
    rows = [(v.values[v.offsets[i] : v.offsets[i + 1]], labels[offsets[i] : offsets[i + 1]]) for i in range(v.n_rows)]
    res = cluster_bootstrap_many(
        [r[0] for r in rows], [r[1] for r in rows], _const(n_boot, "n_boot"), _const(seed, "seed")
    )
    return pa.StructArray.from_arrays(
        [pa.array([getattr(r, f) for r in res], type=t) for f, t in _BOOTSTRAP_FIELDS],
        names=[f for f, _ in _BOOTSTRAP_FIELDS],
    )


def _bootstrap_struct(res) -> pa.StructArray:
    return pa.StructArray.from_arrays(
        [pa.array([getattr(r, f) for r in res], type=t) for f, t in _BOOTSTRAP_FIELDS],
        names=[f for f, _ in _BOOTSTRAP_FIELDS],
    )


def _paired_bootstrap(values, n_boot, seed):
    if not len(n_boot):
        return pa.array([], type=pa.struct(list(_BOOTSTRAP_FIELDS)))
    v = as_ragged(values, np.float64, "values")
    rows = [v.values[v.offsets[i] : v.offsets[i + 1]] for i in range(v.n_rows)]
    return _bootstrap_struct(paired_bootstrap_many(rows, _const(n_boot, "n_boot"), _const(seed, "seed")))


_HETEROGENEITY_FIELDS = (
    ("statistic", pa.float64()),
    ("p_value", pa.float64()),
    ("n_exceed", pa.int64()),
    ("n_slices", pa.int64()),
)


def _list_rows(arr) -> list[np.ndarray]:
    """The rows of an Arrow list array (any element type) as object / number arrays."""
    a = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    flat = np.asarray(a.flatten().to_numpy(zero_copy_only=False))
    offsets = np.asarray(a.offsets, dtype=np.int64) - int(a.offsets[0].as_py())
    return [flat[offsets[i] : offsets[i + 1]] for i in range(len(a))]


def _heterogeneity(values, clusters, groups, n_boot, seed):
    if not len(n_boot):
        return pa.array([], type=pa.struct(list(_HETEROGENEITY_FIELDS)))
    b, s = _const(n_boot, "n_boot"), _const(seed, "seed")
    res = slice_heterogeneity_many(_list_rows(values), _list_rows(clusters), _list_rows(groups), b, s)
    return pa.StructArray.from_arrays(
        [pa.array([getattr(r, f) for r in res], type=t) for f, t in _HETEROGENEITY_FIELDS],
        names=[f for f, _ in _HETEROGENEITY_FIELDS],
    )


def _strings(arr) -> list:
    a = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    return a.to_pylist()


def _squad_score(answer, golds):
    em, f1 = squad_scores(_strings(answer), _strings(golds))
    return pa.StructArray.from_arrays([pa.array(em), pa.array(f1)], names=["em", "f1"])


def _squad_normalize(text):
    return pa.array([None if t is None else normalize_answer(t) for t in _strings(text)], type=pa.string())


def _holm(p_values):
    r = holm_families(p_values)
    return pa.ListArray.from_arrays(pa.array(r.offsets.astype(np.int32)), pa.array(r.values))


def _mde(se):
    s = se.combine_chunks() if isinstance(se, pa.ChunkedArray) else se
    return pa.array(mde(s.to_numpy(zero_copy_only=False).astype(np.float64)))


# name -> (callable, parameter types, return type)
UDFS: dict[str, tuple[Callable, list, object]] = {
    "cov_ndcg": (_cov_ndcg, [_INTS] * 6 + [BIGINT], DOUBLE),
    "cov_dcg": (_cov_dcg, [_INTS] * 4 + [BIGINT], DOUBLE),
    "cov_idcg": (_cov_idcg, [_INTS] * 4 + [BIGINT], DOUBLE),
    "span_recall": (_span_recall, [_INTS] * 4 + [BIGINT], DOUBLE),
    "token_budget_coverage": (_token_budget, [_INTS] * 5 + [BIGINT], DOUBLE),
    "binary_mrr": (_binary_mrr, [_BOOLS], DOUBLE),
    "binary_ndcg": (_binary_ndcg, [_BOOLS, BIGINT, BIGINT], DOUBLE),
    "doc_hit": (_doc_hit, [_DOUBLES, BIGINT], DOUBLE),
    "doc_recall": (_doc_recall, [_DOUBLES, _DOUBLES, BIGINT], DOUBLE),
    "doc_ndcg": (_doc_ndcg, [_DOUBLES, _DOUBLES, BIGINT], DOUBLE),
    "doc_mrr": (_doc_mrr, [_DOUBLES, BIGINT], DOUBLE),
    "cluster_bootstrap": (_bootstrap, [_DOUBLES, duckdb.list_type(VARCHAR), BIGINT, BIGINT], _BOOTSTRAP),
    "holm_adjust": (_holm, [_DOUBLES], _DOUBLES),
    "slice_heterogeneity": (
        _heterogeneity,
        [_DOUBLES, duckdb.list_type(VARCHAR), duckdb.list_type(VARCHAR), BIGINT, BIGINT],
        duckdb.struct_type({"statistic": DOUBLE, "p_value": DOUBLE, "n_exceed": BIGINT, "n_slices": BIGINT}),
    ),
    "cohens_dz": (_cohens_dz, [_DOUBLES], DOUBLE),
    "mde": (_mde, [DOUBLE], DOUBLE),
    # query-rewriting study (arXiv 2609.05637)
    "paired_bootstrap": (_paired_bootstrap, [_DOUBLES, BIGINT, BIGINT], _BOOTSTRAP),
    "squad_score": (
        _squad_score,
        [VARCHAR, duckdb.list_type(VARCHAR)],
        duckdb.struct_type({"em": DOUBLE, "f1": DOUBLE}),
    ),
    "squad_normalize": (_squad_normalize, [VARCHAR], VARCHAR),
}


def register_all(con: duckdb.DuckDBPyConnection) -> None:
    """Register each kernel of :mod:`udfs` under its SQL name (idempotent per connection)."""
    existing = {
        r[0]
        for r in con.execute(
            f"SELECT function_name FROM duckdb_functions() WHERE function_name IN ({', '.join(repr(n) for n in UDFS)})"
        ).fetchall()
    }
    for name, (fn, params, ret) in UDFS.items():
        if name in existing:
            continue
        con.create_function(name, fn, params, ret, type="arrow", side_effects=False)
