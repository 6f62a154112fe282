"""A load that would leave a corpus without documents is refused before it
writes (exit 1, one line naming the file and why every record was dropped, every table unchanged);
a reload that removes documents takes the runs that ranked their chunks with them."""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.ingest.corpora.wiki_fixtures import sample_pages
from tests.reliability.cli import DEMO_FILE, one_line, ragwh
from tests.reliability.compare import warehouse_differences
from tests.reliability.inputs import (
    BEIR_CORPUS,
    HOTPOT_RECORDS,
    demo_papers,
    write_beir,
    write_hotpot,
    write_qasper,
    write_wiki,
)

NOTHING_WRITTEN = "(nothing was written: fix the input, or the options that dropped every record)"


def _no_sections(tmp):
    papers = {pid: {**paper, "full_text": []} for pid, paper in demo_papers().items()}
    path = write_qasper(tmp / "no_sections.json", papers)
    return [
        "qasper",
        path,
        "--corpus",
        "demo",
    ], f"{path}: no documents to load into corpus 'demo' (papers: no_sections 5)"


def _qasper_limit_0(tmp):
    return (
        ["qasper", DEMO_FILE, "--corpus", "demo", "--limit", "0"],
        f"{DEMO_FILE}: no documents to load into corpus 'demo' (papers: beyond_limit 5)",
    )


def _beir_all_empty(tmp):
    path = write_beir(tmp / "beir_mini", corpus=[{**d, "text": "  "} for d in BEIR_CORPUS])
    return [
        "beir",
        path,
        "--corpus",
        "mini",
    ], f"{path}: no documents to load into corpus 'mini' (beir_documents: empty_text 3; beir_qrels: doc_quarantined 2)"


def _hotpot_limit_0(tmp):
    path = write_hotpot(tmp / "hotpot.json", HOTPOT_RECORDS)
    return [
        "hotpotqa",
        path,
        "--corpus",
        "hp",
        "--limit",
        "0",
    ], f"{path}: no documents to load into corpus 'hp' (hotpotqa_questions: beyond_limit 2)"


def _wiki_all_filtered(tmp):
    path = write_wiki(tmp / "short.jsonl", [p for p in sample_pages() if p["page_id"] in (11, 12, 13, 14)])
    return ["wikipedia", path, "--corpus", "wiki"], (
        f"{path}: no documents to load into corpus 'wiki' (filters: too_few_words 2, too_shallow 1, too_few_sections 1)"
    )


def _wiki_only_redirects(tmp):
    path = write_wiki(tmp / "redirects.jsonl", [p for p in sample_pages() if p["page_id"] in (15, 16, 19)])
    return ["wikipedia", path, "--corpus", "wiki"], (
        f"{path}: no documents to load into corpus 'wiki' (pages: redirect 1, other_namespace 1; articles: "
        "empty_document 1)"
    )


@pytest.mark.parametrize(
    "case",
    [_no_sections, _qasper_limit_0, _beir_all_empty, _hotpot_limit_0, _wiki_all_filtered, _wiki_only_redirects],
    ids=lambda f: f.__name__.strip("_"),
)
def test_an_empty_load_is_refused_and_changes_nothing(case, base, copy_of, tmp_path):
    warehouse = copy_of(base)
    args, message = case(tmp_path)
    result = ragwh("ingest", *args, "--warehouse", warehouse)
    assert result.exit_code == 1
    assert one_line(result) == f"ingest {args[0]} failed, warehouse unchanged: {message} {NOTHING_WRITTEN}"
    assert warehouse_differences(base, warehouse) == {}


def test_an_empty_first_load_in_a_run_leaves_no_warehouse(tmp_path):
    args, message = _no_sections(tmp_path)
    config = tmp_path / "c.yml"
    config.write_text(
        json.dumps(
            {
                "name": "x",
                "corpora": [{"name": "demo", "loader": "qasper", "sources": [args[1].name]}],
                "embedders": [{"model": "all-MiniLM-L6-v2", "strong": True}],
                "conditions": ["A3"],
                "contrasts": [],
            }
        )
    )
    warehouse = tmp_path / "w.duckdb"
    result = ragwh("run", "--config", config, "--data", tmp_path, "--warehouse", warehouse)
    assert result.exit_code == 1
    assert f"run failed: stage ingest [demo] failed: IngestError: {message} {NOTHING_WRITTEN}" in result.output
    assert not warehouse.exists()


def test_a_reload_without_some_papers_removes_the_runs_that_ranked_their_chunks(clean_demo, copy_of, tmp_path):
    warehouse = copy_of(clean_demo)
    papers = demo_papers()
    kept = dict(sorted(papers.items())[:3])
    result = ragwh(
        "ingest", "qasper", write_qasper(tmp_path / "three.json", kept), "--corpus", "demo", "--warehouse", warehouse
    )
    assert result.exit_code == 0, result.output
    assert "marts were built before this load: rebuild them with `dbt build` (or `ragwh run`)" in result.output
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM documents WHERE corpus = 'demo'").fetchone()[0] == 3
        for table in ("runs", "chunk_prefixes"):
            dangling = con.execute(f"SELECT count(*) FROM {table} WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)")
            assert dangling.fetchone()[0] == 0, table
        # a run that ranked a removed chunk is gone whole (with its routing and manifest row), so
        # `ragwh retrieve` recomputes it rather than trusting its fingerprint
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM run_manifest").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM routing").fetchone()[0] == 0
    finally:
        con.close()


def test_rechunking_removes_runs_that_rank_a_vanished_chunk(clean_demo, copy_of):
    warehouse = copy_of(clean_demo)
    con = duckdb.connect(str(warehouse))
    n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.execute("INSERT INTO runs VALUES ('demo', 'old-model', 'none', 'A3', 'demo/q', 1, 'fixed|demo/gone|0', 0.5)")
    con.execute(
        "INSERT INTO run_manifest (corpus, embedder, reranker, condition, fingerprint, k, n_queries, created_at) "
        "VALUES ('demo', 'old-model', 'none', 'A3', 'fp', 50, 1, now())"
    )
    con.close()
    result = ragwh("chunk", "--corpus", "demo", "--warehouse", warehouse)
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == n_runs  # the live runs are kept
        assert con.execute("SELECT count(*) FROM run_manifest WHERE embedder = 'old-model'").fetchone()[0] == 0
    finally:
        con.close()
