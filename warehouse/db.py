"""Connections to the warehouse and the one helper every loader uses to write atomically."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Iterable, Iterator

import duckdb

from warehouse.identity import check_file
from warehouse.paths import warehouse_path
from warehouse.schema import BOOKKEEPING

NEXT_WAREHOUSE = "pass another --warehouse FILE"
#: A DuckDB database file carries this magic at byte offset 8 (after the header checksum).
DUCKDB_MAGIC = (8, b"DUCK")


class WarehouseError(RuntimeError):
    """The warehouse file cannot be opened; a one-line message naming the file and what to do."""


def open_error(path: Path, exc: Exception) -> WarehouseError:
    """Translate DuckDB's error for opening ``path`` into a :class:`WarehouseError` (one line)."""
    message = str(exc)
    holder = re.search(r"Conflicting lock is held in .*?\(PID (\d+)\)", message)
    if "Could not set lock" in message:
        pid = f"PID {holder.group(1)}" if holder else "PID unknown"
        return WarehouseError(
            f"warehouse {path} is in use by another process ({pid}): wait for it to finish, or {NEXT_WAREHOUSE}"
        )
    if "not a valid DuckDB database file" in message:
        return not_duckdb_error(path)
    if "database does not exist" in message:
        return missing_error(path)
    first = message.splitlines()[0] if message else type(exc).__name__
    return WarehouseError(f"cannot open warehouse {path}: {first} ({NEXT_WAREHOUSE})")


#: What the OS says when a write cannot grow a file -> the cause a message names.
WRITE_FAILURES = {
    "file too large": "file size limit",
    "no space left on device": "no space left on device",
    "disk quota exceeded": "disk quota exceeded",
}


def write_failure(path: str | os.PathLike, exc: BaseException) -> WarehouseError | None:
    """The one-line :class:`WarehouseError` for an error that means ``path`` could not be written for want of
    space (file size limit, full disk, quota); None for any other error."""
    message = str(exc)
    cause = next((c for needle, c in WRITE_FAILURES.items() if needle in message.lower()), None)
    if cause is None:
        return None
    named = getattr(exc, "filename", None) or next(iter(re.findall(r'file "([^"]+)"', message)), None)
    if named and not str(named).startswith(str(path)):  # another file (a report, dbt's target, a spill file)
        return WarehouseError(
            f"{named} could not be written ({cause}): free space (or raise the limit) and rerun the "
            "same command, which resumes where it stopped"
        )
    return WarehouseError(
        f"warehouse {path} could not be written ({cause}): what was committed is kept in "
        f"{path}.wal; free space (or raise the limit) and rerun the same command, which resumes there"
    )


def checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Write every committed change into the warehouse file now (``CHECKPOINT``) and make sure it happened:
    DuckDB retries a failed automatic checkpoint silently, leaving the data only in the ``.wal``, so a file
    size limit or a full disk would go unseen. Raises :class:`WarehouseError` (one line: file, cause, what to
    do) when the checkpoint fails for want of space or leaves the log unemptied. In-memory databases: nothing."""
    path = warehouse_file(con)
    if path is None:
        return
    try:
        con.execute("CHECKPOINT")
    except duckdb.TransactionException as exc:
        if write_failure(path, exc) is None and "transaction" in str(exc).lower():
            return  # another connection's open transaction: DuckDB checkpoints after it (nothing is lost)
        raise write_failure(path, exc) or WarehouseError(
            f"warehouse {path}: checkpoint failed: {_first_line(exc)}: rerun the same command"
        ) from None
    except duckdb.Error as exc:
        raise write_failure(path, exc) or WarehouseError(
            f"warehouse {path}: checkpoint failed: {_first_line(exc)}: what was committed is kept in {path}.wal; "
            "rerun the same command"
        ) from None
    wal = Path(f"{path}.wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise WarehouseError(
            f"warehouse {path}: a checkpoint left {wal.stat().st_size} bytes in {wal} (not written "
            "into the file): check free space and the file size limit, then rerun the same command"
        )


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[0].split())
    return text or type(exc).__name__


def not_duckdb_error(path: Path) -> WarehouseError:
    return WarehouseError(
        f"warehouse {path} is not a DuckDB database file: pass the path of a warehouse with "
        "--warehouse (a path that does not exist yet starts a new one)"
    )


def _is_duckdb_file(path: Path) -> bool:
    """The file starts like a DuckDB database (checked before DuckDB opens it: given e.g. an SQLite
    file, DuckDB would try to download and load its SQLite extension)."""
    offset, magic = DUCKDB_MAGIC
    with open(path, "rb") as handle:
        return handle.read(offset + len(magic))[offset:] == magic


def missing_error(path: Path) -> WarehouseError:
    return WarehouseError(
        f"no warehouse at {path}: build one first (`ragwh run`, or `ragwh ingest ...`), or pass --warehouse FILE"
    )


def connect(
    path: str | os.PathLike | None = None, *, read_only: bool = False, create: bool | None = None, files: bool = True
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse with UDFs registered; a writable connection creates every loaded table
    that is missing. ``create`` (default: not ``read_only``) allows creating the file; commands that
    need loaded data pass False, so a missing file is an error and none is created. ``files=False``
    opens it with DuckDB's ``enable_external_access`` off: its SQL reaches no file but the warehouse
    (no ``read_csv``, ``COPY ... TO``, ``ATTACH``, extension installs), and cannot turn it back on.

    Raises :class:`WarehouseError` (one line: the file, the cause, what to do) when the file is held
    by another process, is a directory, is empty or is not a DuckDB database, is another application's
    DuckDB database, is an empty database opened read-only, has an older or newer schema version
    (:func:`warehouse.identity.check_file`), or is missing and may not be created."""
    target = warehouse_path(path)
    create = not read_only if create is None else create
    if target.is_dir():
        raise WarehouseError(
            f"warehouse {target} is a directory: pass a file path with --warehouse (e.g. {target / 'ragwh.duckdb'})"
        )
    if target.is_file() and target.stat().st_size == 0:
        raise WarehouseError(
            f"warehouse {target} is an empty (0-byte) file, not a DuckDB database: delete it to "
            f"start a new warehouse there, or {NEXT_WAREHOUSE}"
        )
    if target.is_file() and not _is_duckdb_file(target):
        raise not_duckdb_error(target)
    if not target.exists():
        if not create:
            raise missing_error(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WarehouseError(f"cannot create warehouse {target}: {exc.strerror} ({NEXT_WAREHOUSE})") from None
    try:
        con = duckdb.connect(
            str(target), read_only=read_only, config={} if files else {"enable_external_access": False}
        )
    except duckdb.Error as exc:
        raise open_error(target, exc) from None
    try:
        check_file(con, target, read_only=read_only)
    except BaseException:
        con.close()
        raise
    from udfs.register import register_all

    register_all(con)
    return con


def discard_if_empty(path: str | os.PathLike | None) -> bool:
    """Delete the warehouse file (and its WAL) when none of its data tables holds a row (the
    bookkeeping tables -- schema version, experiments, settings -- do not count): what a command
    that created the file and then failed calls, so that it leaves no new file behind. Returns
    whether the file was deleted. The caller must have closed its connection."""
    target = warehouse_path(path)
    if not target.is_file():
        return False
    con = duckdb.connect(str(target), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
            if r[0] not in BOOKKEEPING
        ]
        rows = sum(con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
    finally:
        con.close()
    if rows:
        return False
    target.unlink()
    Path(f"{target}.wal").unlink(missing_ok=True)
    return True


def release_cached_memory(con: duckdb.DuckDBPyConnection, floor: str = "64MiB") -> bool:
    """Hand back the memory DuckDB keeps after reads (cached table blocks and freed buffers): lower
    ``memory_limit`` to ``floor``, then ``RESET`` it (:func:`memory_capped` with nothing inside). DuckDB evicts
    cached blocks only when it needs memory itself or when its limit is lowered (duckdb/duckdb#25871
    describes both paths), so a stage that reads much of the warehouse and then allocates outside DuckDB
    (HNSW graphs) calls this in between; at 32K synthetic EnterpriseRAG documents it frees ~0.4 GiB. Blocks
    still pinned by an open result stay; nothing is written, and the next query reads what it needs again.
    Returns whether it ran (see :func:`memory_capped` for when it does not)."""
    with memory_capped(con, floor) as capped:
        return capped


@contextlib.contextmanager
def memory_capped(con: duckdb.DuckDBPyConnection, limit: str) -> Iterator[bool]:
    """Run a block with DuckDB's ``memory_limit`` lowered to ``limit``, then ``RESET`` it: a long streaming
    read inside keeps at most ``limit`` of the blocks it read cached (DuckDB evicts the oldest as it goes)
    instead of every block of the table. Yields whether the limit was lowered: only DuckDB's default limit
    is touched (it reads the same as a fresh database's, and ``RESET`` gives it back exactly: a limit someone
    set, or none, reads back rounded or not at all, so it is left alone), only on a file database (an
    in-memory database's tables live in those buffers: evicting them would write them to a temporary
    folder), and not when more than ``limit`` is pinned already (DuckDB refuses; what it could evict, it
    did). While the limit is lowered another thread's query on the same database could run out of memory:
    use it where the stage is the database's only user."""
    if not _file_backed(con) or not _at_default(con, "memory_limit"):
        yield False
        return
    try:
        con.execute(f"SET memory_limit = '{limit}'")
        lowered = True
    except duckdb.Error:
        lowered = False
    try:
        yield lowered
    except BaseException:
        try:
            con.execute("RESET memory_limit")
        except duckdb.Error:
            pass  # e.g. a result still open on the connection: the block's own error is the one to see
        raise
    con.execute("RESET memory_limit")


def warehouse_file(con: duckdb.DuckDBPyConnection) -> str | None:
    """The file of the connection's current database (None: an in-memory database)."""
    # fetchall, not fetchone: a partly fetched result would block the connection's next statement
    path = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return path[0][0] if path and path[0][0] and path[0][0] != ":memory:" else None


def _file_backed(con: duckdb.DuckDBPyConnection) -> bool:
    return warehouse_file(con) is not None


def _at_default(con: duckdb.DuckDBPyConnection, setting: str) -> bool:
    """Whether ``setting`` reads as a fresh database's (DuckDB's default): only then may a caller change it
    and give it back exactly with ``RESET`` (a value someone set reads back rounded)."""
    query = f"SELECT current_setting('{setting}')"
    with duckdb.connect() as fresh:
        return con.execute(query).fetchall()[0][0] == fresh.execute(query).fetchall()[0][0]


#: WAL bytes between checkpoints while a job appends many small committed batches (DuckDB's default: 16 MiB)
BULK_CHECKPOINT_THRESHOLD = "256MiB"


@contextlib.contextmanager
def bulk_appends(con: duckdb.DuckDBPyConnection, threshold: str = BULK_CHECKPOINT_THRESHOLD) -> Iterator[None]:
    """While a job commits many small batches (embedding jobs: one per 256 texts), checkpoint after every
    ``threshold`` of write-ahead log instead of DuckDB's 16 MiB, then once at the end. A checkpoint's cost
    grows with the table it writes to (duckdb/duckdb#7709; measured here beside a running benchmark: the
    slowest of 60 commits of 256 vectors took 152 ms into an empty ``embeddings`` table and 804 ms into one of
    320K rows), so 16 MiB checkpoints made a job of 1.2M vectors grow faster than its rows. Every batch is
    still committed on its own (an interrupted job keeps them: DuckDB replays the log on the next open); up
    to ``threshold`` of committed rows waits in memory and in the log between checkpoints. A threshold
    someone set is left alone (:func:`_at_default`), as is an in-memory database (it never checkpoints)."""
    if not _file_backed(con) or not _at_default(con, "checkpoint_threshold"):
        yield
        return
    con.execute(f"SET checkpoint_threshold = '{threshold}'")
    try:
        yield
    finally:
        con.execute("RESET checkpoint_threshold")
    try:
        con.execute("CHECKPOINT")
    except duckdb.TransactionException as exc:
        if "current transaction" in str(exc):
            raise  # the caller's own open transaction: never swallowed (DuckDB aborts it)
        # another connection holds a transaction: the next commit over 16 MiB of log checkpoints instead


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
    (structures, chunks, prefixes, chunkset rows, placebo rows of or borrowing from them, induction
    log) and the runs that ranked their chunks. Call inside the same :func:`transaction` as the
    reload. Returns the number of rows deleted per table."""
    prefix = corpus + "/"
    deleted: dict[str, int] = {}
    for table in _DOC_DEPENDENTS:
        n = con.execute(
            f"DELETE FROM {table} WHERE starts_with(doc_id, ?) "
            "AND doc_id NOT IN (SELECT doc_id FROM documents WHERE corpus = ?)",
            [prefix, corpus],
        ).fetchone()[0]
        deleted[table] = int(n)
    n = con.execute("DELETE FROM chunk_prefixes WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)").fetchone()[0]
    deleted["chunk_prefixes"] = int(n)
    n = con.execute(
        "DELETE FROM placebo_paths WHERE corpus = ? AND placebo_doc_id NOT IN "
        "(SELECT doc_id FROM documents WHERE corpus = ?)",
        [corpus, corpus],
    ).fetchone()[0]
    deleted["placebo_paths"] += int(n)
    deleted.update(purge_dangling_runs(con))
    return deleted


def purge_dangling_runs(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Delete every run that ranks a chunk no longer in ``chunks`` -- the whole run (all its rows,
    keyed by corpus, embedder, reranker, condition), its ``run_manifest`` row (so retrieval recomputes
    it) and, for a first-stage run, its ``routing`` rows. Call inside the :func:`transaction` that
    removed the chunks. Returns the number of rows deleted per table. An imported run (``ragwh import run``)
    is never recomputed, so one among them raises :class:`WarehouseError` (one line naming it) instead, and the
    caller's transaction leaves the warehouse as it was."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _stale_runs AS SELECT DISTINCT corpus, embedder, reranker, condition "
        "FROM runs WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"
    )
    try:
        imported = con.execute(
            "SELECT DISTINCT m.embedder, m.corpus, m.condition, json_extract_string(m.system_params, '$.file') "
            "FROM run_manifest m JOIN _stale_runs s USING (corpus, embedder, reranker, condition) "
            "WHERE m.system_kind = 'imported' ORDER BY ALL"
        ).fetchall()
        if imported:  # never recomputed: deleting it would lose it (the caller's transaction rolls back)
            name, corpus, condition, file = imported[0]
            raise WarehouseError(
                f"imported run {name!r} ({corpus}, condition {condition}, from {file}) ranks chunks that this change "
                f"removes{f' (and {len(imported) - 1} more imported runs)' if len(imported) > 1 else ''}: nothing was "
                "changed; keep the chunking that run was made for, or delete the run first (`ragwh sql --write "
                f"\"DELETE FROM runs WHERE embedder = '{name}'; DELETE FROM run_manifest WHERE embedder = '{name}'\"`) "
                "and re-import it over the new chunks"
            )
        deleted = {}
        for table, key in (
            ("runs", "corpus, embedder, reranker, condition"),
            ("run_manifest", "corpus, embedder, reranker, condition"),
            ("routing", "corpus, embedder, 'none', condition"),
        ):
            n = con.execute(
                f"DELETE FROM {table} WHERE ({key}) IN (SELECT (corpus, embedder, reranker, condition) "
                "FROM _stale_runs)"
            ).fetchone()[0]
            deleted[table] = int(n)
    finally:
        con.execute("DROP TABLE _stale_runs")
    return deleted


def replace_structured_corpus(
    con: duckdb.DuckDBPyConnection, corpus: str, tables: dict, stages: Iterable[str], quarantine_stages: Iterable[str]
) -> None:
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
