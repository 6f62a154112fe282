"""The warehouse for analysts in Python: the marts as polars DataFrames, read-only, with the experiment record.

    >>> from ragwh import open_warehouse
    >>> wh = open_warehouse("warehouse/ragwh.duckdb")          # default: the same file `ragwh run` writes
    >>> wh.experiment["name"], wh.experiment["status"]         # which experiment produced these numbers
    >>> wh.contrasts().filter(pl.col("is_primary"))             # the chunking study's contrasts
    >>> wh.table("query_metrics", metric="cov-nDCG@10")         # any mart, optionally filtered on columns
    >>> wh.sql("SELECT condition, avg(value) FROM query_metrics GROUP BY ALL")
    >>> wh.close()                                              # or: with open_warehouse() as wh: ...

The file is opened read-only (several notebooks may read it while nothing writes it; ``ragwh run`` holds it
while it runs). ``table`` takes only the names of the warehouse's tables and views (:meth:`Warehouse.tables`);
filters are bound parameters, never pasted into SQL.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from warehouse.db import WarehouseError, connect
from warehouse.paths import warehouse_path


class Warehouse:
    """A read-only view of one warehouse file; :func:`open_warehouse` makes one."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path: Path = warehouse_path(path)
        self._con = connect(self.path, read_only=True, create=False)

    # -- what is there -------------------------------------------------------------------------------------
    def tables(self) -> list[str]:
        """The names of the warehouse's tables and views (marts, intermediate and staging models, base tables)."""
        return [
            r[0]
            for r in self._con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY table_name"
            ).fetchall()
        ]

    @property
    def experiments(self) -> pl.DataFrame:
        """Every run recorded in the warehouse, newest first: config, code, package versions, precision, device,
        status (the ``experiments`` table)."""
        if "experiments" not in self.tables():
            return pl.DataFrame()
        return self.sql("SELECT * FROM experiments ORDER BY started_at DESC, experiment_id DESC")

    @property
    def experiment(self) -> dict[str, Any]:
        """The newest experiment record as a dict, its JSON columns (config, overrides, packages) parsed;
        empty when the warehouse holds none."""
        rows = self.experiments.head(1).to_dicts()
        if not rows:
            return {}
        record = rows[0]
        for column in [c for c in record if c.endswith("_json")]:
            record[column.removesuffix("_json")] = json.loads(record.pop(column) or "null")
        return record

    # -- data ----------------------------------------------------------------------------------------------
    def sql(self, query: str, params: list | dict | None = None) -> pl.DataFrame:
        """Run one read-only query (DuckDB SQL, ``?`` or ``$name`` parameters) and return its result."""
        return pl.from_arrow(self._con.sql(query, params=params or None).to_arrow_table())

    def table(self, name: str, **equals: Any) -> pl.DataFrame:
        """The whole of table or view ``name`` (its stored order is not guaranteed: sort what you show), or the
        rows whose columns equal the keyword arguments: ``wh.table("query_metrics", metric="cov-nDCG@10")``."""
        known = self.tables()
        if name not in known:
            raise WarehouseError(
                f"{self.path}: no table or view {name!r} (the warehouse holds {len(known)}: "
                "see Warehouse.tables(); run `ragwh run` to build the marts)"
            )
        columns = set(self.sql(f'SELECT * FROM "{name}" LIMIT 0').columns)
        unknown = sorted(set(equals) - columns)
        if unknown:
            raise WarehouseError(
                f"{self.path}: table {name!r} has no column {unknown[0]!r} (columns: {', '.join(sorted(columns))})"
            )
        where = " AND ".join(f'"{c}" = ${c}' for c in equals)
        return self.sql(f'SELECT * FROM "{name}"' + (f" WHERE {where}" if where else ""), equals or None)

    def contrasts(self) -> pl.DataFrame:
        """The chunking study's contrasts (every cell; the pre-registered primary cell first)."""
        return self.sql("SELECT * FROM contrasts ORDER BY NOT is_primary, metric, contrast, corpus, embedder, reranker")

    def condition_means(self) -> pl.DataFrame:
        """Per-condition means of every metric in every cell (chunking study)."""
        return self.sql("SELECT * FROM condition_means ORDER BY corpus, embedder, reranker, metric, condition")

    def query_metrics(self) -> pl.DataFrame:
        """One row per query, condition, cell and metric (chunking study)."""
        return self.table("query_metrics")

    def rewrite_query_metrics(self) -> pl.DataFrame:
        """One row per query, strategy, seed and metric (rewriting study)."""
        return self.table("rewrite_query_metrics")

    # -- lifetime ------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        record = self.experiment
        held = f"{record.get('name')!r} ({record.get('study')}, {record.get('status')})" if record else "no experiment"
        return f"<ragwh Warehouse {self.path}: {held}, read-only>"


def open_warehouse(path: str | os.PathLike | None = None) -> Warehouse:
    """Open a warehouse read-only for analysis: ``path``, else ``$RAGWH_WAREHOUSE``, else
    ``warehouse/ragwh.duckdb`` under the working directory (what ``ragwh run`` wrote). A missing file or one
    another process holds for writing raises :class:`warehouse.db.WarehouseError` with one line."""
    return Warehouse(path)
