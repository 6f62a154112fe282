"""Table-by-table comparison of two warehouse files (the reliability suite's notion of "equal").

Two warehouses are equal when they hold the same base tables with the same columns, and every table
has the same multiset of rows: ``A EXCEPT ALL B`` and ``B EXCEPT ALL A`` are both empty. Columns
that record when or how long something ran (TIMESTAMP columns, ``stage_manifest.seconds`` and its
one-line ``detail`` log message, which counts what *this* run embedded) are left out, and so are the
``experiments`` log (one row per run: a rerun adds one) and which run wrote a setting
(``experiment_settings.experiment_id``); nothing else is. Views are not compared: they are functions of
the tables.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

#: Non-timestamp columns that describe a run rather than the data: (table, column).
TIMING_COLUMNS = {("stage_manifest", "seconds"), ("stage_manifest", "detail"), ("experiment_settings", "experiment_id")}
#: Tables that log runs rather than hold data.
RUN_LOGS = {"experiments"}


def _columns(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute(
        "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
        "JOIN information_schema.tables t USING (table_catalog, table_schema, table_name) "
        "WHERE c.table_catalog = ? AND c.table_schema = 'main' AND t.table_type = 'BASE TABLE' "
        "ORDER BY c.table_name, c.ordinal_position",
        [catalog],
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        if table not in RUN_LOGS:
            out.setdefault(table, []).append((column, dtype))
    return out


def compared_columns(table: str, columns: list[tuple[str, str]]) -> list[str]:
    """The columns of ``table`` that take part in the comparison (see module docstring)."""
    return [
        c for c, t in columns if not t.upper().startswith(("TIMESTAMP", "DATE")) and (table, c) not in TIMING_COLUMNS
    ]


def warehouse_differences(a: Path, b: Path) -> dict[str, str]:
    """``{table: what differs}`` between warehouses ``a`` and ``b``; empty when they are equal."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        cols_a, cols_b = _columns(con, "a"), _columns(con, "b")
        problems: dict[str, str] = {}
        for table in sorted(set(cols_a) ^ set(cols_b)):
            problems[table] = f"only in {'a' if table in cols_a else 'b'}"
        for table in sorted(set(cols_a) & set(cols_b)):
            if cols_a[table] != cols_b[table]:
                problems[table] = f"columns differ: {cols_a[table]} vs {cols_b[table]}"
                continue
            select = ", ".join(f'"{c}"' for c in compared_columns(table, cols_a[table]))
            only_a, only_b = (
                con.execute(
                    f'SELECT count(*) FROM (SELECT {select} FROM {x}.main."{table}" EXCEPT ALL '
                    f'SELECT {select} FROM {y}.main."{table}")'
                ).fetchone()[0]
                for x, y in (("a", "b"), ("b", "a"))
            )
            if only_a or only_b:
                problems[table] = f"{only_a} row(s) only in a, {only_b} only in b"
        return problems
    finally:
        con.close()
