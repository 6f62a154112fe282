"""Registers every Python UDF into a DuckDB connection (used by the dbt plugin and the CLI)."""
from __future__ import annotations

import duckdb


def register_all(con: duckdb.DuckDBPyConnection) -> None:
    """Register each kernel of :mod:`udfs` under its SQL name (idempotent per connection)."""
