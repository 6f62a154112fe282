"""kill -9 in the middle of an ingest and of the embedding job, then a rerun: the warehouse equals
the one an uninterrupted run built (every table, EXCEPT ALL both ways; see :mod:`.compare`), and
what was committed before the kill is kept (embeddings commit every 256 texts
or 30 s -- here every 64, so that the demo's 150 texts commit three times)."""

from __future__ import annotations

import re
import subprocess
import sys

import duckdb

from tests.reliability.cli import DEMO_FILE, ragwh, subprocess_env
from tests.reliability.compare import warehouse_differences
from tests.reliability.conftest import clean_report
from warehouse.paths import PROJECT_ROOT


def _killed(spec: str, *args, commit_texts: int | None = None) -> subprocess.CompletedProcess:
    """``ragwh ARGS`` in a subprocess that SIGKILLs itself at ``spec`` (see tests/reliability/killer.py)."""
    extra = [] if commit_texts is None else [str(commit_texts)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.killer", spec, *extra, "--", *map(str, args)],
        cwd=PROJECT_ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == -9, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    return done


def _rerun(warehouse, clean_demo) -> str:
    result = ragwh("run", "--warehouse", warehouse, "--report", clean_report(clean_demo))
    assert result.exit_code == 0, result.output
    return result.output


def test_kill_during_a_reload_leaves_the_warehouse_as_it_was(clean_demo, copy_of):
    warehouse = copy_of(clean_demo)
    _killed(
        "load_qasper:1", "ingest", "qasper", DEMO_FILE, "--corpus", "demo", "--limit", "2", "--warehouse", warehouse
    )
    assert warehouse_differences(clean_demo, warehouse) == {}


def test_kill_during_ingest_then_rerun_equals_a_clean_run(clean_demo, tmp_path):
    warehouse = tmp_path / "killed.duckdb"
    done = _killed("load_qasper:1", "run", "--warehouse", warehouse, "--report", clean_report(clean_demo))
    assert "> ingest [demo]" in done.stdout
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 0  # the transaction never committed
    finally:
        con.close()
    output = _rerun(warehouse, clean_demo)
    assert re.search(r"^> ingest \[demo\]", output, flags=re.M)
    assert warehouse_differences(clean_demo, warehouse) == {}
    con = duckdb.connect(str(warehouse), read_only=True)
    try:  # the killed run's row is reconciled by the rerun, not left 'running'
        statuses = con.execute("SELECT status, detail FROM experiments ORDER BY experiment_id").fetchall()
    finally:
        con.close()
    assert [s for s, _ in statuses] == ["interrupted", "finished"]
    assert statuses[0][1].endswith(" UTC by run #2") and "ended without finishing" in statuses[0][1]


def test_kill_during_embedding_keeps_committed_batches_and_rerun_equals_a_clean_run(clean_demo, tmp_path):
    warehouse = tmp_path / "killed.duckdb"
    done = _killed(
        "embed_texts>store_embeddings:2",
        "run",
        "--warehouse",
        warehouse,
        "--report",
        clean_report(clean_demo),
        commit_texts=64,
    )
    assert "> embed [demo|all-MiniLM-L6-v2" in done.stdout  # (the stored name may carry a precision suffix)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM stage_manifest WHERE stage = 'embed'").fetchone()[0] == 0
    finally:
        con.close()
    output = _rerun(warehouse, clean_demo)
    # the clean run embedded N texts (K were already stored by TextTiling); after the kill the first
    # batch of 64 was kept, so the rerun finds K + 64 stored and embeds N - 64
    con = duckdb.connect(str(clean_demo), read_only=True)
    try:
        detail = con.execute("SELECT detail FROM stage_manifest WHERE stage = 'embed'").fetchone()[0]
    finally:
        con.close()
    already, embedded = map(int, re.search(r"already_stored (\d+), embedded (\d+)", detail).groups())
    assert f"already_stored {already + 64}, embedded {embedded - 64}" in output, output
    assert warehouse_differences(clean_demo, warehouse) == {}
