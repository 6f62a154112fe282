"""A warehouse that cannot grow (a file size limit here, RLIMIT_FSIZE; a full disk is the same error): ``ragwh
run`` checkpoints after every stage and fails in one line naming the file and the cause, exit 1, its
``experiments`` row 'failed', instead of finishing with its data only in the ``.wal``; a rerun with room
recovers what was committed. The child ignores SIGXFSZ, so a write past the limit fails with EFBIG."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from tests.reliability.cli import ragwh, subprocess_env
from warehouse.paths import PROJECT_ROOT


def _limited_run(warehouse: Path, report: Path, limit: int) -> subprocess.CompletedProcess:
    """``ragwh run`` in a child that sets its own file size limit first (no ``preexec_fn``: forking the threaded
    test process to run Python before exec can deadlock)."""
    child = (
        "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); sys.argv = ['ragwh', *sys.argv[1:]]; "
        "runpy.run_module('ragwh.cli', run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-c", child, "run", "--warehouse", str(warehouse), "--report", str(report)],
        cwd=PROJECT_ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _statuses(warehouse: Path) -> list[str]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return [s for (s,) in con.execute("SELECT status FROM experiments ORDER BY experiment_id").fetchall()]


def _expected(warehouse: Path, stage: str) -> str:
    return (
        f"run failed: {stage}: warehouse {warehouse} could not be written (file size limit): what was committed "
        f"is kept in {warehouse}.wal; free space (or raise the limit) and rerun the same command, which resumes there"
    )


def test_a_checkpoint_that_cannot_grow_the_file_fails_the_run_and_a_rerun_recovers(clean_demo, tmp_path):
    """No room past the file's size: only the report stage runs (a new report path), its small commit fits in
    the log but the checkpoint cannot write it into the file (before: exit 0, 'finished', data only in the log)."""
    warehouse = tmp_path / "full.duckdb"
    shutil.copy(clean_demo, warehouse)
    report = tmp_path / "report.html"
    done = _limited_run(warehouse, report, warehouse.stat().st_size)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == _expected(warehouse, "stage report"), done.stdout[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert _statuses(warehouse)[-1] == "failed"
    rerun = ragwh("run", "--warehouse", warehouse, "--report", report)
    assert rerun.exit_code == 0, rerun.output
    assert "nothing changed since the last run" in rerun.output  # the report stage's commit was kept in the log
    assert _statuses(warehouse)[-2:] == ["failed", "finished"]
    assert not Path(f"{warehouse}.wal").exists()


def test_a_new_warehouse_under_a_small_limit_is_one_line_not_a_traceback_chain(tmp_path):
    warehouse = tmp_path / "small.duckdb"
    done = _limited_run(warehouse, tmp_path / "report.html", 1_000_000)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == _expected(warehouse, "stage ingest [demo]"), done.stdout[-3000:]
    assert _statuses(warehouse) == ["failed"]
