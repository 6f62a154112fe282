"""An ``experiments`` row left 'running' by a run whose process is gone (kill -9, a crash) becomes
'interrupted' when the next run starts, in the same transaction as the next run's own row; the row of a
process that still runs, or of another machine, is left alone."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys

import duckdb

from tests.reliability.cli import ragwh
from tests.reliability.conftest import clean_report


def _add_running(con, experiment_id: int, pid, host: str, started: dt.datetime) -> None:
    con.execute(
        "INSERT INTO experiments SELECT * REPLACE (? AS experiment_id, 'running' AS status, NULL AS finished_at, "
        "NULL AS detail, ? AS pid, ? AS host, ? AS started_at) FROM experiments WHERE experiment_id = 1",
        [experiment_id, pid, host, started],
    )


def test_a_running_row_whose_process_is_gone_becomes_interrupted(clean_demo, copy_of):
    path = copy_of(clean_demo)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    here, now = socket.gethostname(), dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    try:
        with duckdb.connect(str(path)) as con:
            _add_running(con, 2, dead.pid, here, now)  # killed
            _add_running(con, 3, None, None, now)  # an older ragwh's row: no pid recorded
            _add_running(con, 4, alive.pid, here, now + dt.timedelta(seconds=5))  # still running
            _add_running(con, 5, 1, "another-host.example", now)  # cannot be seen from here
        result = ragwh("run", "--warehouse", path, "--report", clean_report(clean_demo))
        assert result.exit_code == 0, result.output
    finally:
        alive.communicate(b"")
    with duckdb.connect(str(path), read_only=True) as con:
        rows = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT experiment_id, status, detail, finished_at FROM experiments ORDER BY 1"
            ).fetchall()
        }
    assert [rows[i][0] for i in (1, 2, 3, 4, 5, 6)] == [
        "finished",
        "interrupted",
        "interrupted",
        "running",
        "running",
        "finished",
    ]
    assert rows[2][1].startswith(f"process {dead.pid} on {here} ended without finishing; noticed at ")
    assert rows[2][1].endswith(" UTC by run #6") and rows[2][2] is None
    assert rows[3][1].startswith("its process (pid not recorded) ended without finishing; noticed at ")
