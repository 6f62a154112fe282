"""The metrics registry: ``seeds/metric_registry.csv``, the one place a metric name lives.

One row per (level, metric): ``level`` is ``span`` (chunks scored against gold character spans) or
``document`` (documents against qrels); ``kernel`` the function in ``udfs/metrics/``; ``ir_measures``
the same measure's name there (``Success@10`` for HIT@10, ``RR@10`` for MRR@10; empty where it has
none, as for span recall R@50); ``alias`` a name unique across both levels. The stored names are the
papers' and are never renamed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from warehouse.paths import seed_rows

LEVELS = ("span", "document")


@dataclass(frozen=True)
class Metric:
    metric: str
    level: str
    kernel: str
    ir_measures: str | None
    alias: str
    description: str


@cache
def metric_registry() -> tuple[Metric, ...]:
    """The seed's rows, in file order (its order is the order tables and reports list metrics in)."""
    path, rows = seed_rows("metric_registry")
    out = []
    for n, r in enumerate(rows, 2):
        if r.get("level") not in LEVELS or not r.get("metric"):
            raise ValueError(f"{path}: line {n}: level must be one of {', '.join(LEVELS)} and metric non-empty: {r}")
        out.append(Metric(r["metric"], r["level"], r["kernel"], r["ir_measures"] or None, r["alias"], r["description"]))
    return tuple(out)


def metric_names(level: str | None = None) -> tuple[str, ...]:
    """Stored metric names of one level (or of both, each once), in registry order."""
    return tuple(dict.fromkeys(m.metric for m in metric_registry() if level is None or m.level == level))
