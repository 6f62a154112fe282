"""Opening the warehouse: every way it can fail is one line naming the file and what to do,
and a command that may not create the warehouse never does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from warehouse.db import WarehouseError, connect, discard_if_empty
from warehouse.identity import upgrade
from warehouse.schema import SCHEMA_VERSION

HOLDER = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()"


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_second_writer_names_file_and_holder_pid(tmp_path):
    path = tmp_path / "held.duckdb"
    connect(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        for read_only in (False, True):
            with pytest.raises(WarehouseError) as exc:
                connect(path, read_only=read_only)
            assert _one_line(exc) == (
                f"warehouse {path} is in use by another process (PID {holder.pid}): wait for it to finish, "
                "or pass another --warehouse FILE"
            )
    finally:
        holder.communicate("")


@pytest.mark.parametrize(
    "kind, expected",
    [
        (
            "empty",
            "warehouse {p} is an empty (0-byte) file, not a DuckDB database: delete it to start a new warehouse "
            "there, or pass another --warehouse FILE",
        ),
        (
            "junk",
            "warehouse {p} is not a DuckDB database file: pass the path of a warehouse with --warehouse (a path "
            "that does not exist yet starts a new one)",
        ),
        ("directory", "warehouse {p} is a directory: pass a file path with --warehouse (e.g. {p}/ragwh.duckdb)"),
    ],
)
def test_unusable_paths(tmp_path, kind, expected):
    path = tmp_path / "wh.duckdb"
    if kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b"" if kind == "empty" else b"not a database " * 300)
    before = None if kind == "directory" else path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(WarehouseError) as exc:
            connect(path, read_only=read_only)
        assert _one_line(exc) == expected.format(p=path)
    assert kind == "directory" and path.is_dir() or path.read_bytes() == before


def test_missing_warehouse_is_not_created_unless_asked(tmp_path):
    path = tmp_path / "sub" / "none.duckdb"
    expected = f"no warehouse at {path}: build one first (`ragwh run`, or `ragwh ingest ...`), or pass --warehouse FILE"
    for kwargs in ({"read_only": True}, {"create": False}):
        with pytest.raises(WarehouseError) as exc:
            connect(path, **kwargs)
        assert _one_line(exc) == expected
    assert not path.parent.exists()
    connect(path).close()  # the default (a loader, `ragwh run`) creates it
    assert path.is_file()


def test_discard_if_empty_removes_only_a_warehouse_without_rows(tmp_path):
    empty, loaded = tmp_path / "empty.duckdb", tmp_path / "loaded.duckdb"
    connect(empty).close()
    con = connect(loaded)
    con.execute("INSERT INTO qrels VALUES ('q/1', 'd/1', 1)")
    con.close()
    assert discard_if_empty(empty) and not empty.exists()
    assert not discard_if_empty(loaded) and loaded.is_file()


def test_an_older_warehouse_gains_the_induction_log_columns_with_its_rows_kept(tmp_path):
    import duckdb

    path = tmp_path / "old.duckdb"
    old = duckdb.connect(str(path))
    old.execute(
        "CREATE TABLE induction_log (structure VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, "
        "status VARCHAR NOT NULL, n_sections INTEGER, detail VARCHAR NOT NULL)"
    )
    old.execute("INSERT INTO induction_log VALUES ('induced:llm', 'qasper/1', 'failed', NULL, 'no JSON')")
    old.close()
    # every command refuses it with how to upgrade; the upgrade keeps its rows and adds what is missing
    with pytest.raises(WarehouseError, match=r"schema version 1, older than .* `ragwh upgrade --warehouse"):
        connect(path)
    with pytest.raises(WarehouseError, match="schema version 1"):
        connect(path, read_only=True)
    raw = duckdb.connect(str(path))
    try:
        assert upgrade(raw) == (1, SCHEMA_VERSION)
    finally:
        raw.close()
    con = connect(path)
    try:
        assert con.execute(
            "SELECT doc_id, status, outcome, structured, schema_valid FROM induction_log"
        ).fetchall() == [("qasper/1", "failed", None, None, None)]
        assert con.execute("SELECT value FROM warehouse_meta").fetchall() == [(str(SCHEMA_VERSION),)]
    finally:
        con.close()


def test_empty_foreign_and_newer_databases_are_one_line_errors(tmp_path):
    import duckdb

    empty, foreign, newer = (tmp_path / f"{n}.duckdb" for n in ("empty", "foreign", "newer"))
    duckdb.connect(str(empty)).close()
    raw = duckdb.connect(str(foreign))
    raw.execute("CREATE TABLE orders (id INTEGER)")
    raw.close()
    connect(newer).close()
    raw = duckdb.connect(str(newer))
    raw.execute("UPDATE warehouse_meta SET value = '99'")
    raw.close()
    with pytest.raises(WarehouseError, match=r"empty DuckDB database \(no tables\): build it first"):
        connect(empty, read_only=True)
    for read_only in (True, False):
        with pytest.raises(WarehouseError, match=r"not a ragwarehouse warehouse \(it holds orders\)"):
            connect(foreign, read_only=read_only)
        with pytest.raises(WarehouseError, match="schema version 99, written by a newer ragwh"):
            connect(newer, read_only=read_only)
    raw = duckdb.connect(str(foreign))
    assert [r[0] for r in raw.execute("SHOW TABLES").fetchall()] == ["orders"]  # nothing was written into it
    raw.close()
    connect(empty).close()  # a writable connection makes an empty database a warehouse
    con = connect(empty, read_only=True)
    con.close()


def _duckdb_bytes(con) -> int:
    return con.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").fetchall()[0][0]


def test_release_cached_memory_evicts_what_a_read_cached_and_restores_the_limit(tmp_path):
    from warehouse.db import release_cached_memory

    con = connect(tmp_path / "w.duckdb")
    con.execute("CREATE TABLE big AS SELECT i, [hash(i * 64 + j) FOR j IN range(64)] AS v FROM range(100000) t(i)")
    con.execute("CHECKPOINT")
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    assert con.execute("SELECT sum(len(v)) FROM big").fetchall()[0][0] == 6_400_000
    cached = _duckdb_bytes(con)
    assert cached > 20_000_000  # the table's blocks stay cached after the read
    assert release_cached_memory(con, floor="4MiB")  # below the ~50 MB the read cached
    assert _duckdb_bytes(con) < cached / 4
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == limit
    assert con.execute("SELECT sum(len(v)) FROM big").fetchall()[0][0] == 6_400_000  # read again as needed
    for own in ("1234MB", "-1"):  # a limit someone set (it reads back rounded: "1.1 GiB"), or none: left alone
        con.execute(f"SET memory_limit = '{own}'")
        shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        assert not release_cached_memory(con, floor="4MiB")
        assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == shown
        assert _duckdb_bytes(con) > 20_000_000  # nothing evicted


def test_release_cached_memory_leaves_an_in_memory_database_alone():
    import duckdb

    from warehouse.db import release_cached_memory

    con = duckdb.connect()
    con.execute("CREATE TABLE big AS SELECT i, repeat('x', 200) AS s FROM range(300000) t(i)")
    before = _duckdb_bytes(con)
    assert not release_cached_memory(con)
    assert _duckdb_bytes(con) == before and con.execute("SELECT count(*) FROM big").fetchall()[0][0] == 300_000


def test_bulk_appends_checkpoints_less_often_then_once_and_gives_the_threshold_back(tmp_path):
    from warehouse.db import BULK_CHECKPOINT_THRESHOLD, bulk_appends

    con = connect(tmp_path / "w.duckdb")
    wal = tmp_path / "w.duckdb.wal"
    default = con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    con.execute("CREATE TABLE t (v DOUBLE[])")
    with bulk_appends(con):
        assert con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0] != default
        for _ in range(20):  # ~20 MiB of committed rows: over DuckDB's 16 MiB, under the bulk threshold
            con.execute("INSERT INTO t SELECT [random() FOR j IN range(128)] FROM range(1024)")
        assert wal.stat().st_size > 16 * 2**20  # no checkpoint yet: the rows wait in the log
    assert not wal.exists() or wal.stat().st_size < 2**20  # one checkpoint at the end
    assert con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0] == default
    assert con.execute("SELECT count(*) FROM t").fetchall()[0][0] == 20 * 1024
    con.execute("SET checkpoint_threshold = '100MB'")  # set by someone: left alone
    shown = con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    with bulk_appends(con):
        assert con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0] == shown
    assert BULK_CHECKPOINT_THRESHOLD == "256MiB"
    con.execute("RESET checkpoint_threshold")
    import duckdb

    con.execute("BEGIN")  # a caller's own open transaction: its final checkpoint fails loudly, never silently
    with pytest.raises(duckdb.TransactionException, match="current transaction"), bulk_appends(con):
        con.execute("INSERT INTO t VALUES ([1.0])")
    con.execute("ROLLBACK")


def test_rows_committed_under_bulk_appends_survive_a_killed_process(tmp_path):
    """A job killed between checkpoints keeps every committed batch: DuckDB replays its log on the next open."""
    script = (
        "import sys, os; from warehouse.db import connect, bulk_appends\n"
        "con = connect(sys.argv[1]); con.execute('CREATE TABLE t (i INTEGER)')\n"
        "with bulk_appends(con):\n"
        "    for b in range(5): con.execute(f'INSERT INTO t SELECT {b} * 100 + range FROM range(100)')\n"
        "    print('committed', flush=True); os._exit(9)  # killed: no checkpoint, no close\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "w.duckdb")],
        capture_output=True,
        text=True,
        cwd=str(Path(__file__).resolve().parents[2]),
        timeout=120,
    )
    assert out.returncode == 9 and "committed" in out.stdout, out.stderr
    con = connect(tmp_path / "w.duckdb")
    assert con.execute("SELECT count(*), count(DISTINCT i) FROM t").fetchall()[0] == (500, 500)


def test_memory_capped_bounds_what_a_long_read_keeps_cached(tmp_path):
    import duckdb

    from warehouse.db import memory_capped

    con = connect(tmp_path / "w.duckdb")
    con.execute("CREATE TABLE big AS SELECT i, [hash(i * 64 + j) FOR j IN range(64)] AS v FROM range(200000) t(i)")
    con.execute("CHECKPOINT")
    con.execute("SET memory_limit = '1GiB'")
    con.execute("RESET memory_limit")  # a fresh start: nothing cached
    default = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    with memory_capped(con, "32MiB") as capped:
        assert capped and con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == "32.0 MiB"
        total = sum(b.num_rows for b in con.sql("SELECT v FROM big").to_arrow_reader(8192))
        assert total == 200_000 and _duckdb_bytes(con) <= 32 * 2**20  # ~100 MB read, at most 32 MiB kept
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == default
    with pytest.raises(ZeroDivisionError), memory_capped(con, "32MiB"):  # the block's error, and the limit back
        1 / 0
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == default
    with duckdb.connect() as memory, memory_capped(memory, "16MiB") as capped:
        assert not capped  # an in-memory database is left alone


@pytest.mark.parametrize(
    ("os_message", "cause"),
    [
        ('Could not write file "{p}": No space left on device', "no space left on device"),
        (
            'FATAL Error: Failed to create checkpoint because of error: Could not write file "{p}": File too large',
            "file size limit",
        ),
        ('Could not write file "{p}": Disk quota exceeded', "disk quota exceeded"),
    ],
)
def test_a_write_for_want_of_space_names_the_file_and_cause(os_message, cause, tmp_path):
    from warehouse.db import write_failure

    path = tmp_path / "w.duckdb"
    error = write_failure(path, RuntimeError(os_message.format(p=path)))
    assert str(error) == (
        f"warehouse {path} could not be written ({cause}): what was committed is kept in {path}.wal; "
        "free space (or raise the limit) and rerun the same command, which resumes there"
    )
    assert write_failure(path, RuntimeError("Binder Error: no such column")) is None


def test_a_full_disk_on_another_file_names_that_file_not_the_warehouse(tmp_path):
    """A report, dbt's target folder or DuckDB's spill file that cannot be written is not the warehouse: the line
    names the file that failed and says nothing of the warehouse's log."""
    from warehouse.db import write_failure

    path, report = tmp_path / "w.duckdb", tmp_path / "reports" / "r.html"
    error = write_failure(path, OSError(28, "No space left on device", str(report)))
    assert str(error) == (
        f"{report} could not be written (no space left on device): free space (or raise the limit) "
        "and rerun the same command, which resumes where it stopped"
    )
    spill = tmp_path / ".tmp" / "duckdb_temp_storage-0.tmp"
    assert str(write_failure(path, RuntimeError(f'Could not write file "{spill}": File too large'))).startswith(
        f"{spill} could not be written (file size limit)"
    )
    wal = write_failure(path, RuntimeError(f'Could not write file "{path}.wal": No space left on device'))
    assert str(wal).startswith(f"warehouse {path} could not be written")
