"""``ragwh run`` skips a stage only when its output in the warehouse is what the
stage left there; a file loaded by hand between two runs cannot make a run use data its config does
not name. Also: a no-op rerun still skips everything, quickly."""

from __future__ import annotations

import re
import time

import duckdb

from tests.reliability.cli import ragwh
from tests.reliability.compare import warehouse_differences
from tests.reliability.conftest import clean_report
from tests.reliability.inputs import demo_papers, write_beir, write_qasper


def _run(warehouse, clean_demo):
    """``ragwh run`` of the demo writing the clean run's report (the report path is one of its inputs)."""
    result = ragwh("run", "--warehouse", warehouse, "--report", clean_report(clean_demo))
    assert result.exit_code == 0, result.output
    return result.output


def test_rerun_after_a_hand_load_into_the_corpus_equals_a_clean_run(clean_demo, copy_of, tmp_path):
    warehouse = copy_of(clean_demo)
    two = dict(sorted(demo_papers().items())[:2])
    loaded = ragwh(
        "ingest", "qasper", write_qasper(tmp_path / "two.json", two), "--corpus", "demo", "--warehouse", warehouse
    )
    assert loaded.exit_code == 0, loaded.output
    output = _run(warehouse, clean_demo)
    assert (
        "ingest [demo]: inputs unchanged but its output in the warehouse changed since it ran: running it again"
        in output
    )
    assert re.search(r"^> ingest \[demo\]", output, flags=re.M)
    assert warehouse_differences(clean_demo, warehouse) == {}


def test_a_corpus_loaded_by_hand_does_not_leak_into_the_run(clean_demo, copy_of, tmp_path):
    warehouse = copy_of(clean_demo)
    loaded = ragwh("ingest", "beir", write_beir(tmp_path / "beir_mini"), "--corpus", "mini", "--warehouse", warehouse)
    assert loaded.exit_code == 0, loaded.output
    output = _run(warehouse, clean_demo)
    for stage in ("ingest", "induce", "chunk", "embed", "retrieve"):  # the experiment's own stages: untouched
        assert not re.search(rf"^> {stage} ", output, flags=re.M), output
    assert "mini" not in output  # nor in the summary
    assert ">mini<" not in clean_report(clean_demo).read_text(encoding="utf-8")  # nor in the report's tables
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for table in ("chunks", "runs", "query_metrics", "condition_means", "contrasts"):
            assert (
                con.execute(
                    f"SELECT count(*) FROM {table} WHERE starts_with(chunk_id, 'doc|mini/')"
                    if table == "chunks"
                    else f"SELECT count(*) FROM {table} WHERE corpus = 'mini'"
                ).fetchone()[0]
                == 0
            ), table
    finally:
        con.close()
    # what differs: the rows the hand load wrote, the two dbt stages' recorded inputs (the warehouse
    # changed, so dbt rebuilt), and int_eval_queries, the dbt model listing every loaded query with why it
    # is not scored (the mini queries: no runs), and int_query_labels, every loaded query's labels
    assert set(warehouse_differences(clean_demo, warehouse)) == {
        "documents",
        "paragraphs",
        "queries",
        "qrels",
        "funnel",
        "corpus_meta",
        "stage_manifest",
        "int_eval_queries",
        "int_query_labels",
    }


def test_no_op_rerun_skips_every_stage(clean_demo, copy_of, tmp_path):
    warehouse = copy_of(clean_demo)
    started = time.perf_counter()
    output = _run(warehouse, clean_demo)
    seconds = time.perf_counter() - started
    assert "nothing changed since the last run" in output and not re.search(r"^> ", output, flags=re.M)
    assert warehouse_differences(clean_demo, warehouse) == {}
    assert seconds < 15, seconds
