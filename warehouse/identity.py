"""Which warehouse a file is, and which experiment it holds.

A warehouse records its schema version (``warehouse_meta``), one ``experiments`` row per ``ragwh run``
(the resolved config and its hash, code and package versions, precision, device, start / finish,
status) and the settings its marts were built with (``experiment_settings``, read by dbt's macro
``setting``: a bare ``dbt build`` rebuilds what the run built; ``--vars`` still override).

:func:`check_file` classifies an open DuckDB file before any command uses it: an empty database, a
DuckDB file of another application, or a warehouse of an older or newer schema version are one-line
:class:`~warehouse.db.WarehouseError` messages saying what to do.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from pathlib import Path
from typing import Any

import duckdb

from warehouse.schema import BOOKKEEPING, SCHEMA_VERSION, TABLES, ensure_schema

#: the version of a warehouse of ours that records none (written before versions were recorded)
UNVERSIONED = 1


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return sorted(
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    )


def stored_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The schema version the file records; :data:`UNVERSIONED` for a warehouse of ours without one;
    None for a database with none of our tables (empty or another application's)."""
    tables = set(_tables(con))
    if "warehouse_meta" in tables:
        rows = con.execute("SELECT value FROM warehouse_meta WHERE key = 'schema_version'").fetchall()
        if rows:
            return int(rows[0][0])
    return UNVERSIONED if tables & (set(TABLES) - set(BOOKKEEPING)) else None


def upgrade_hint(path: Path) -> str:
    return (
        f"upgrade it with `ragwh upgrade --warehouse {path}` (adds the new tables; then `ragwh run --config "
        f"CONFIG --warehouse {path}` records its experiment, skipping unchanged stages), or rebuild it with "
        "`ragwh run` into a new file"
    )


def check_file(con: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool) -> None:
    """Raise :class:`~warehouse.db.WarehouseError` unless ``con`` is a warehouse of the current schema
    version (a writable connection to an empty database is fine: it becomes one). Writable: create
    what is missing and record the version."""
    from warehouse.db import NEXT_WAREHOUSE, WarehouseError

    version = stored_version(con)
    if version is None:
        tables = _tables(con)
        if tables:
            shown = ", ".join(tables[:5]) + (f", ... ({len(tables)} tables)" if len(tables) > 5 else "")
            raise WarehouseError(
                f"{path} is a DuckDB database but not a ragwarehouse warehouse (it holds {shown}): {NEXT_WAREHOUSE}"
            )
        if read_only:
            raise WarehouseError(
                f"warehouse {path} is an empty DuckDB database (no tables): build it first "
                f"(`ragwh run --warehouse {path}`), or {NEXT_WAREHOUSE}"
            )
    elif version < SCHEMA_VERSION:
        raise WarehouseError(
            f"warehouse {path} has schema version {version}, older than this ragwh's "
            f"{SCHEMA_VERSION}: {upgrade_hint(path)}"
        )
    elif version > SCHEMA_VERSION:
        raise WarehouseError(
            f"warehouse {path} has schema version {version}, written by a newer ragwh (this one "
            f"reads {SCHEMA_VERSION}): upgrade ragwarehouse, or {NEXT_WAREHOUSE}"
        )
    if not read_only:
        ensure_schema(con)
        stamp(con)


def stamp(con: duckdb.DuckDBPyConnection) -> None:
    """Record :data:`~warehouse.schema.SCHEMA_VERSION` (the tables must exist)."""
    con.execute("DELETE FROM warehouse_meta WHERE key = 'schema_version'")
    con.execute("INSERT INTO warehouse_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])


def upgrade(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """Bring an older warehouse of ours to the current version (additive: new tables and nullable
    columns). Returns (from, to)."""
    version = stored_version(con)
    if version is None or version > SCHEMA_VERSION:
        raise ValueError("not a warehouse this ragwh can upgrade")
    ensure_schema(con)
    stamp(con)
    return version, SCHEMA_VERSION


# --- experiments -------------------------------------------------------------------------------------
def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def start_experiment(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> int:
    """Insert a 'running' experiments row (``row``: the columns name .. device) with this process's pid and
    host, and return its id. In the same transaction, every other 'running' row whose process is gone
    (:func:`_gone`) becomes 'interrupted', its detail saying which process and when this run noticed."""
    now = _now()
    con.execute("BEGIN TRANSACTION")
    try:
        ((next_id,),) = con.execute("SELECT coalesce(max(experiment_id), 0) + 1 FROM experiments").fetchall()
        for old_id, pid, host, started in con.execute(
            "SELECT experiment_id, pid, host, started_at FROM experiments WHERE status = 'running'"
        ).fetchall():
            if _gone(pid, host, started):
                process = f"process {pid} on {host}" if pid is not None else "its process (pid not recorded)"
                con.execute(
                    "UPDATE experiments SET status = 'interrupted', detail = ? WHERE experiment_id = ?",
                    [
                        f"{process} ended without finishing; noticed at {now:%Y-%m-%d %H:%M:%S} UTC by run #{next_id}",
                        old_id,
                    ],
                )
        values = {
            **row,
            "experiment_id": next_id,
            "started_at": now,
            "status": "running",
            "pid": os.getpid(),
            "host": socket.gethostname(),
        }
        cols = ", ".join(values)
        con.execute(f"INSERT INTO experiments ({cols}) VALUES ({', '.join('?' * len(values))})", list(values.values()))
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    return next_id


def _gone(pid: int | None, host: str | None, started: dt.datetime) -> bool:
    """Whether the process of a 'running' row no longer runs it: no pid recorded (an older ragwh's row: a
    writer opening the file means that run let go of it), this very process (it runs one experiment at a
    time), no such process on this host, or a process started after the row did (the pid was reused). A row
    of another host is left alone: its process cannot be seen from here."""
    if pid is None:
        return True
    if host != socket.gethostname():
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: alive
    return _started_after(pid, started)


def _started_after(pid: int, started: dt.datetime) -> bool:
    """Linux: whether process ``pid`` started after ``started`` (UTC) by more than a second (/proc)."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime ")
        )
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    began = dt.datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), dt.timezone.utc).replace(tzinfo=None)
    return began > started + dt.timedelta(seconds=1)


def finish_experiment(
    con: duckdb.DuckDBPyConnection, experiment_id: int, status: str, detail: str | None = None
) -> None:
    con.execute(
        "UPDATE experiments SET status = ?, finished_at = ?, detail = ? WHERE experiment_id = ?",
        [status, _now(), detail, experiment_id],
    )


def latest_experiment(con: duckdb.DuckDBPyConnection, study: str | None = None) -> dict[str, Any] | None:
    """The last experiments row (of ``study``), as a dict; None when no run was recorded."""
    where = "WHERE study = ?" if study else ""
    cur = con.execute(
        f"SELECT * FROM experiments {where} ORDER BY experiment_id DESC LIMIT 1", [study] if study else []
    )
    rows = cur.fetchall()
    return dict(zip([d[0] for d in cur.description], rows[0])) if rows else None


def write_settings(con: duckdb.DuckDBPyConnection, settings: dict[str, Any], study: str, experiment_id: int) -> None:
    """Replace the stored value of every setting in ``settings`` (other studies' settings stay)."""
    con.execute("BEGIN TRANSACTION")
    try:
        for name, value in sorted(settings.items()):
            con.execute("DELETE FROM experiment_settings WHERE name = ?", [name])
            con.execute(
                "INSERT INTO experiment_settings VALUES (?, ?, ?, ?)",
                [name, json.dumps(value, sort_keys=True), study, experiment_id],
            )
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def read_settings(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    return {n: json.loads(v) for n, v in con.execute("SELECT name, value_json FROM experiment_settings").fetchall()}


def setting(con: duckdb.DuckDBPyConnection, name: str) -> Any:
    """Setting ``name`` as dbt's macro ``setting`` resolves it without ``--vars``: the value the last ``ragwh run``
    stored in ``experiment_settings``, else ``dbt_project.yml``'s default (so what the marts were built with,
    unless a ``dbt build --vars`` overrode it). :class:`KeyError` for a name ``setting_defaults`` lacks."""
    from warehouse.dbt import setting_defaults

    defaults = setting_defaults()
    if name not in defaults:
        raise KeyError(f"unknown setting {name!r} (dbt_project.yml setting_defaults: {', '.join(defaults)})")
    has_table = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'experiment_settings'"
    ).fetchone()[0]
    stored = (
        con.execute("SELECT value_json FROM experiment_settings WHERE name = ?", [name]).fetchall() if has_table else []
    )
    return json.loads(stored[0][0]) if stored else defaults[name]
