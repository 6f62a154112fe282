"""Connections to the warehouse and the one helper every loader uses to write atomically."""
from __future__ import annotations

import contextlib
import os
from typing import Iterable, Iterator

import duckdb

from warehouse.paths import warehouse_path
from warehouse.schema import ensure_schema


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse (creating the file and every loaded table if needed) with UDFs registered."""
    target = warehouse_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(target), read_only=read_only)
    if not read_only:
        ensure_schema(con)
    from udfs.register import register_all

    register_all(con)
    return con


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All-or-nothing block: a failure inside leaves the warehouse exactly as it was."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def replace_where(con: duckdb.DuckDBPyConnection, table: str, where: str, params: list, rows) -> int:
    """Delete the rows of ``table`` matching ``where`` and insert ``rows`` (a pyarrow/polars/pandas
    table whose columns are a subset of the table's, by name). Call inside :func:`transaction`.
    Returns the number of rows inserted."""
    con.execute(f"DELETE FROM {table} WHERE {where}", params)
    if rows is None or len(rows) == 0:
        return 0
    con.register("_rows_to_insert", rows)
    try:
        cols = ", ".join(f'"{c}"' for c in _column_names(rows))
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _rows_to_insert")
    finally:
        con.unregister("_rows_to_insert")
    return len(rows)


def _column_names(rows) -> list[str]:
    if hasattr(rows, "column_names"):
        return list(rows.column_names)
    return list(rows.columns)



# Tables that hang off a document: rows whose document was removed by a reload are deleted with it.
_DOC_DEPENDENTS = ("sections", "chunks", "chunkset_docs", "placebo_paths", "induction_log")


def purge_removed_documents(con: duckdb.DuckDBPyConnection, corpus: str) -> dict[str, int]:
    """Delete rows derived from documents of ``corpus`` that are no longer in ``documents``
    (structures, chunks, prefixes, chunkset and placebo rows, induction log). Call inside the same
    :func:`transaction` as the reload. Returns the number of rows deleted per table."""
    prefix = corpus + "/"
    deleted: dict[str, int] = {}
    for table in _DOC_DEPENDENTS:
        n = con.execute(
            f"DELETE FROM {table} WHERE starts_with(doc_id, ?) "
            "AND doc_id NOT IN (SELECT doc_id FROM documents WHERE corpus = ?)", [prefix, corpus]).fetchone()[0]
        deleted[table] = int(n)
    n = con.execute("DELETE FROM chunk_prefixes WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)").fetchone()[0]
    deleted["chunk_prefixes"] = int(n)
    return deleted


def replace_structured_corpus(con: duckdb.DuckDBPyConnection, corpus: str, tables: dict, stages: Iterable[str],
                              quarantine_stages: Iterable[str]) -> None:
    """Replace a corpus with gold structure: its documents, paragraphs and gold sections, and the
    funnel and quarantine rows of the loader's own ``stages``; then purge what hung off documents
    that are gone. Call inside :func:`transaction` (the loader adds its other tables there)."""
    prefix = corpus + "/"
    stage_list = ", ".join(f"'{s}'" for s in stages)
    quarantine_list = ", ".join(f"'{s}'" for s in quarantine_stages)
    replace_where(con, "paragraphs", "starts_with(doc_id, ?)", [prefix], tables["paragraphs"])
    replace_where(con, "sections", "structure = 'gold' AND starts_with(doc_id, ?)", [prefix], tables["sections"])
    replace_where(con, "documents", "corpus = ?", [corpus], tables["documents"])
    replace_where(con, "funnel", f"corpus = ? AND stage IN ({stage_list})", [corpus], tables["funnel"])
    replace_where(con, "quarantine", f"corpus = ? AND stage IN ({quarantine_list})", [corpus], tables["quarantine"])
    purge_removed_documents(con, corpus)
