"""``ragwh sql`` (queries over the warehouse, read-only unless ``--write``; an interactive prompt without
a query) and ``ragwh upgrade`` (bring a warehouse of an older schema version to this one)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

WAREHOUSE_HELP = "warehouse file (default $RAGWH_WAREHOUSE, else warehouse/ragwh.duckdb)"
PROMPT, CONTINUE = "ragwh> ", "  ...> "


def _show(console: Console, con, query: str, max_rows: int, as_csv: bool) -> None:
    """Run ``query`` and print its result (a table, or CSV on stdout); statements without one print 'ok'."""
    cur = con.execute(query)
    if cur.description is None:
        console.print("ok")
        return
    columns = [d[0] for d in cur.description]
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(cur.fetchall())
        return
    rows = cur.fetchmany(max_rows + 1)
    table = Table(*[escape(c) for c in columns], show_lines=False)
    for row in rows[:max_rows]:
        table.add_row(*("NULL" if v is None else escape(str(v)) for v in row))
    console.print(table)
    shown = min(len(rows), max_rows)
    console.print(
        f"{shown} row{'s' if shown != 1 else ''}"
        + (" shown (more: --max-rows N, or --csv for all)" if len(rows) > max_rows else "")
    )


def sql_command(
    query: Optional[str] = typer.Argument(
        None, help="SQL to run; without it, an interactive prompt (end a statement with ';', quit with .quit or Ctrl-D)"
    ),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP),
    write: bool = typer.Option(False, "--write", help="open the warehouse writable (default: read-only)"),
    allow_files: bool = typer.Option(
        False,
        "--allow-files",
        help="let SQL read and write other files (read_csv, "
        "COPY ... TO, ATTACH); read-only queries reach only the warehouse without it",
    ),
    max_rows: int = typer.Option(100, "--max-rows", min=1, help="rows printed per result"),
    as_csv: bool = typer.Option(False, "--csv", help="print results as CSV (every row) instead of a table"),
) -> None:
    """Query the warehouse in SQL (DuckDB), read-only unless --write: `ragwh sql "SELECT ... FROM condition_means"`.
    Read-only queries reach no other file (DuckDB's enable_external_access off) unless --allow-files."""
    import duckdb

    from warehouse.db import connect

    console = Console(width=None if sys.stdout.isatty() else 200)
    files = write or allow_files
    con = connect(warehouse, read_only=not write, create=False, files=files)

    def run(statement: str) -> bool:
        try:
            _show(console, con, statement, max_rows, as_csv)
            return True
        except duckdb.Error as exc:
            message = " ".join(str(exc).split())
            if not write and "read-only" in message:
                message += " (the warehouse is opened read-only: pass --write to change it)"
            if not files and "disabled by configuration" in message:
                message += (
                    " (read-only queries reach only the warehouse: pass --allow-files to read or write other files)"
                )
            Console(stderr=True).print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
            return False

    try:
        if query is not None:
            if not run(query):
                raise typer.Exit(1)
            return
        buffer: list[str] = []
        while True:
            try:
                line = input(CONTINUE if buffer else PROMPT)
            except EOFError:
                break
            if not buffer and line.strip() in (".quit", ".exit", "quit", "exit"):
                break
            buffer.append(line)
            if line.rstrip().endswith(";"):
                run("\n".join(buffer))
                buffer = []
        if buffer and "".join(buffer).strip():
            run("\n".join(buffer))
    finally:
        con.close()


def upgrade_command(warehouse: Optional[Path] = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP)) -> None:
    """Bring a warehouse of an older schema version to this ragwh's (adds the new tables and columns; keeps every row)."""
    import duckdb

    from warehouse.db import connect, open_error
    from warehouse.identity import stored_version, upgrade
    from warehouse.paths import warehouse_path
    from warehouse.schema import SCHEMA_VERSION

    path = warehouse_path(warehouse)
    connect(path, read_only=True, create=False).close() if not path.is_file() else None  # missing: its one line
    try:
        con = duckdb.connect(str(path))
    except duckdb.Error as exc:
        raise open_error(path, exc) from None
    try:
        version = stored_version(con)
        if version == SCHEMA_VERSION:
            Console().print(f"{escape(str(path))} is at schema version {SCHEMA_VERSION} already: nothing to do")
            return
        if version is None or version > SCHEMA_VERSION:
            con.close()
            connect(path, read_only=True)  # raises its one-line reason (empty, foreign, newer)
        old, new = upgrade(con)
    finally:
        con.close()
    Console().print(
        escape(
            f"upgraded {path} from schema version {old} to {new}; it records no experiment yet: "
            f"`ragwh run --config CONFIG --warehouse {path}` records it (unchanged stages are skipped)"
        ),
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("sql")(sql_command)
    app.command("upgrade")(upgrade_command)
