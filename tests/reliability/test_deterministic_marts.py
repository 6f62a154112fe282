"""``condition_means`` and ``metric_cuts`` are bit-identical whatever order
``int_query_metrics`` (the per-query scores they read) holds its rows in (two builds used to differ by ~1e-16 because float sums depend
on the order rows reach the aggregate)."""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa

from warehouse.db import connect
from warehouse.dbt import run_dbt

N = 3000  # per cell: enough terms that a reordered float sum changes its last bits


def _int_query_metrics(order_seed: int) -> pa.Table:
    rng = random.Random(7)
    rows = [
        {
            "corpus": "qasper",
            "embedder": "e",
            "reranker": "none",
            "condition": cond,
            "query_id": f"qasper/q{i}",
            "doc_id": f"qasper/d{i % 40}",
            "query_type": ("extractive", "abstractive")[i % 2],
            "topic_bucket": None,
            "metric": metric,
            "value": rng.random(),
        }
        for cond in ("A3", "G3")
        for metric in ("cov-nDCG@10", "R@50")
        for i in range(N)
    ]
    random.Random(order_seed).shuffle(rows)
    return pa.Table.from_pylist(rows)


def _build(path, order_seed: int) -> dict[str, list[tuple]]:
    con = connect(path)
    con.register("qm", _int_query_metrics(order_seed))
    con.execute("CREATE TABLE int_query_metrics AS SELECT * FROM qm")
    con.close()
    run_dbt("run", path, select="condition_means metric_cuts", progress=False)
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("condition_means", "metric_cuts")
        }
    finally:
        con.close()


def test_means_do_not_depend_on_row_order(tmp_path):
    first, second = _build(tmp_path / "a.duckdb", 1), _build(tmp_path / "b.duckdb", 2)
    for table in ("condition_means", "metric_cuts"):
        assert len(first[table]) == len(second[table]) > 0
        assert first[table] == second[table], table  # exact float equality, not approx
