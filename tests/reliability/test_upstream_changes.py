"""A corpus loaded by hand (``ragwh ingest``) between two runs of a rewriting experiment makes the run
load it again from what its config names, so nothing downstream points at rows that are gone; and when
dbt finds such rows anyway (a relationships test), its error names the orphan rows and the command that
rebuilds them."""

from __future__ import annotations

import duckdb
import pytest
import yaml

from ragwh.experiment.config.rewriting import load_experiment
from ragwh.experiment.pipeline.rewriting import RewritingPipeline
from tests.reliability.cli import ragwh
from tests.reliability.inputs import hotpot_record, write_hotpot
from warehouse.dbt import DbtError, run_dbt
from warehouse.schema import ensure_schema


def _ingest(config, tmp_path, warehouse) -> list[tuple[str, str, str]]:
    """Run the experiment's ingest stage alone; return its (stage, scope, status) results."""
    pipeline = RewritingPipeline(load_experiment(config), data=tmp_path, warehouse=warehouse)
    try:
        pipeline.ingest()
        return [(r.stage, r.scope, r.status) for r in pipeline.outcome.stages]
    finally:
        pipeline.close()


def _corpus(warehouse) -> dict[str, list]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT * FROM {t} WHERE {c} ORDER BY ALL").fetchall()
            for t, c in (
                ("documents", "corpus = 'hp'"),
                ("queries", "corpus = 'hp'"),
                ("qrels", "starts_with(query_id, 'hp/')"),
                ("query_answers", "starts_with(query_id, 'hp/')"),
            )
        }
    finally:
        con.close()


def test_a_hand_load_between_runs_makes_the_run_load_the_configured_corpus_again(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGWH_LLM_BACKEND", raising=False)
    write_hotpot(tmp_path / "hotpot.json")
    config = tmp_path / "rw.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "rw-upstream",
                "study": "rewriting",
                "corpora": [{"name": "hp", "loader": "hotpotqa", "sources": ["hotpot.json"]}],
                "embedder": "all-MiniLM-L6-v2",
                "rewriting": {"strategies": ["S1"], "seeds": [42]},
                "reader": "none",
            }
        )
    )
    warehouse = tmp_path / "w.duckdb"
    assert _ingest(config, tmp_path, warehouse) == [("ingest", "hp", "ran")]
    configured = _corpus(warehouse)
    assert _ingest(config, tmp_path, warehouse) == [("ingest", "hp", "skipped")]  # nothing changed: skipped
    other = write_hotpot(tmp_path / "other.json", [hotpot_record("h9", "Who is Kim?", ["Kim", "Lee"])])
    loaded = ragwh("ingest", "hotpotqa", other, "--corpus", "hp", "--warehouse", warehouse)
    assert loaded.exit_code == 0, loaded.output
    assert _corpus(warehouse) != configured
    assert _ingest(config, tmp_path, warehouse) == [("ingest", "hp", "ran")]  # noticed, and loaded again
    assert _corpus(warehouse) == configured


def test_a_failed_relationships_test_names_the_orphan_rows_and_the_repair(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    con = duckdb.connect(str(warehouse))
    ensure_schema(con)
    con.execute(
        "INSERT INTO documents (doc_id, corpus, title, text, source_file) VALUES ('c/d1', 'c', 'T', 'T\n\nx', 'f')"
    )
    con.execute("INSERT INTO paragraphs VALUES ('c/d1', 0, 3, 4), ('c/gone', 0, 3, 4), ('c/lost', 0, 3, 4)")
    con.close()
    with pytest.raises(DbtError) as failed:
        run_dbt(
            "build",
            warehouse,
            select="stg_documents stg_paragraphs",
            progress=False,
            repair="`ragwh run --config x.yml`",
        )
    lines = str(failed.value).splitlines()
    assert (
        "  orphans stg_paragraphs.doc_id -> stg_documents.doc_id: 2 value(s) without a parent row: 'c/gone', 'c/lost'"
        in lines
    )
    assert "  repair: `ragwh run --config x.yml`" in lines
