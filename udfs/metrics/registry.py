"""The metrics registry: ``seeds/metric_registry.csv``, the one place a metric name lives.

One row per (level, metric): ``level`` is ``span`` (chunks scored against gold character spans) or
``document`` (documents against qrels); ``kernel`` the function in ``udfs/metrics/`` (``file.py::function``);
``sql_function`` the UDF of ``udfs/register.py`` (``UDFS``) that wraps that kernel and the marts call
(``query_metrics``, ``rewrite_query_metrics``; cov-nDCG@10 is computed there from ``cov_ndcg``'s two halves
``cov_dcg`` / ``cov_idcg``, so that the ideal is computed once per pool); ``ranks_kernel`` the second kernel
that computes the same metric from the ranks of the relevant documents alone (binary gains), for the fused
rankings of ``udfs/ensembles.py`` that are never materialized (empty where there is none: the span
metrics); ``ir_measures`` the same measure's name there (``Success@10`` for HIT@10, ``RR@10`` for MRR@10;
empty where it has none, as for span recall R@50); ``alias`` a name unique across both levels. The stored
names are the papers' and are never renamed.

Reading the registry imports neither DuckDB nor NumPy (only :func:`warehouse.paths.seed_rows`); resolving a
kernel (:meth:`Metric.kernel_function`, :meth:`Metric.ranks_function`) imports its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from warehouse.paths import seed_rows

LEVELS = ("span", "document")


def resolve(spec: str) -> Callable:
    """The function a registry path ``udfs/<package>/<file>.py::<function>`` names."""
    path, _, name = spec.partition("::")
    return getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)


@dataclass(frozen=True)
class Metric:
    metric: str
    level: str
    kernel: str
    sql_function: str
    ranks_kernel: str | None
    ir_measures: str | None
    alias: str
    description: str

    def kernel_function(self) -> Callable:
        """The kernel ``kernel`` names (the one ``sql_function`` wraps)."""
        return resolve(self.kernel)

    def ranks_function(self) -> Callable | None:
        """The kernel ``ranks_kernel`` names, None where there is none."""
        return resolve(self.ranks_kernel) if self.ranks_kernel else None


@cache
def metric_registry() -> tuple[Metric, ...]:
    """The seed's rows, in file order (its order is the order tables and reports list metrics in)."""
    path, rows = seed_rows("metric_registry")
    out = []
    for n, r in enumerate(rows, 2):
        if (
            r.get("level") not in LEVELS
            or not r.get("metric")
            or "::" not in (r.get("kernel") or "")
            or not r.get("sql_function")
            or (r.get("ranks_kernel") and "::" not in r["ranks_kernel"])
        ):
            raise ValueError(
                f"{path}: line {n}: level must be one of {', '.join(LEVELS)}, metric and sql_function "
                f"non-empty, kernel (and ranks_kernel where given) 'file.py::function': {r}"
            )
        out.append(
            Metric(
                r["metric"],
                r["level"],
                r["kernel"],
                r["sql_function"],
                r["ranks_kernel"] or None,
                r["ir_measures"] or None,
                r["alias"],
                r["description"],
            )
        )
    return tuple(out)


def registered_metrics(level: str | None = None) -> tuple[str, ...]:
    """The registry's stored metric names of one level (or of both, each once), in registry order (the marts'
    metrics; :func:`ragwh.experiment.report.data.held_metrics` are those a built warehouse holds)."""
    return tuple(dict.fromkeys(m.metric for m in metric_registry() if level is None or m.level == level))
