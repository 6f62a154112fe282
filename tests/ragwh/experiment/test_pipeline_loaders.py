"""Every loader through ``ragwh run``. One config holds a BEIR directory, a HotpotQA file
and a Wikipedia export (no LLM: the Wikipedia corpus gets no queries and says so); the run loads, chunks,
embeds (a tiny random-weight embedder: its scores mean nothing, they drive the real code), retrieves and
evaluates all three, and a second run does nothing."""

from __future__ import annotations

import json

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from ragwh.cli import app
from tests.ingest.corpora.wiki_fixtures import outline, page, write_xml
from tests.ingest.retrieval.fixtures import build_tiny_sentence_transformer

BEIR_DOCS = {f"d{i}": f"Abstract number {i} about protein folding and cell biology, sample {i}." for i in range(8)}
BEIR_QUERIES = {"q1": "protein folding", "q2": "cell biology sample"}
BEIR_QRELS = [("q1", "d1", 1), ("q1", "d3", 1), ("q2", "d5", 1)]


def _data(tmp_path, shared_data):
    data = tmp_path / "data"
    beir = data / "beir_tiny"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": f"Title {k}", "text": v}) + "\n" for k, v in BEIR_DOCS.items())
    )
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in BEIR_QUERIES.items())
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in BEIR_QRELS)
    )
    (data / "hotpotqa").mkdir()
    records = json.loads((shared_data / "hotpotqa" / "hotpot_dev_distractor_v1_shared.json").read_text())[:2]
    (data / "hotpotqa" / "two.json").write_text(json.dumps(records))
    (data / "wikipedia").mkdir()
    write_xml(
        data / "wikipedia" / "tiny.xml",
        [
            page(1, "Alpha Article", outline(2, 2), 30, ["Physics"]),
            page(2, "Beta Article", outline(3, 1), 25, ["Chemistry"]),
        ],
    )
    return data


def test_beir_hotpotqa_and_wikipedia_run_from_one_config(shared_data, tmp_path, monkeypatch):
    model = build_tiny_sentence_transformer(tmp_path / "tiny")
    config = {
        "name": "loaders",
        "description": "every loader through ragwh run",
        "corpora": [
            {
                "name": "tiny",
                "loader": "beir",
                "sources": ["beir_tiny/corpus.jsonl", "beir_tiny/queries.jsonl", "beir_tiny/qrels/test.tsv"],
                "options": {"split": "test"},
            },
            {"name": "hotpotqa", "loader": "hotpotqa", "sources": ["hotpotqa/two.json"]},
            {
                "name": "wikipedia",
                "loader": "wikipedia",
                "sources": ["wikipedia/tiny.xml"],
                "options": {"filters": False, "generate_queries": True},
            },
        ],
        "embedders": [{"model": str(model), "strong": True}],
        "rerankers": [],
        "inducer": "texttiling",
        "llm": {"backend": "none"},
        "conditions": ["DOC", "A0", "A2", "G2"],
        "contrasts": [],
        "k": 50,
        "bootstrap": {"B": 200, "seed": 20260710},
        "primary": {"metric": "nDCG@10"},
    }
    path = tmp_path / "loaders.yml"
    path.write_text(yaml.safe_dump(config))
    warehouse = tmp_path / "loaders.duckdb"
    monkeypatch.delenv("RAGWH_LLM_BACKEND", raising=False)
    args = [
        "run",
        "--config",
        str(path),
        "--data",
        str(_data(tmp_path, shared_data)),
        "--warehouse",
        str(warehouse),
        "--report",
        str(tmp_path / "loaders.html"),
    ]
    runner = CliRunner()
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "queries:wikipedia" in first.output  # no LLM: the Wikipedia corpus has no queries, and it says so
    assert "A0 (tiny): no chunks of corpus tiny" in first.output  # BEIR documents have no fixed windows

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        docs = dict(con.execute("SELECT corpus, count(*) FROM documents GROUP BY 1").fetchall())
        assert docs["tiny"] == len(BEIR_DOCS) and docs["hotpotqa"] >= 10 and docs["wikipedia"] == 2
        runs = {r[:2]: r[2] for r in con.execute("SELECT corpus, condition, n_queries FROM run_manifest").fetchall()}
        assert {
            ("tiny", "DOC"): 2,
            ("hotpotqa", "DOC"): 2,
            ("wikipedia", "A0"): 0,
            ("wikipedia", "A2"): 0,
            ("wikipedia", "G2"): 0,
        }.items() <= runs.items()  # Wikipedia: retrieved, no query to rank for
        scored = dict(
            con.execute(
                "SELECT corpus, count(DISTINCT query_id) FROM query_metrics "
                "WHERE metric = 'nDCG@10' AND condition = 'DOC' GROUP BY 1"
            ).fetchall()
        )
        assert scored == {"tiny": 2, "hotpotqa": 2}
        index = {r[:2]: r[2] for r in con.execute("SELECT corpus, condition, n_docs FROM condition_index").fetchall()}
        assert index[("wikipedia", "A0")] == index[("wikipedia", "A2")] == index[("wikipedia", "G2")] == 2
        assert con.execute("SELECT count(*) FROM embedding_truncation WHERE n_uncounted > 0").fetchone()[0] == 0
    finally:
        con.close()

    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "nothing changed since the last run" in second.output, second.output


@pytest.mark.parametrize("study", ["chunking", "rewriting"])
def test_a_loader_without_an_ingest_step_is_refused_not_run_as_another(study, tmp_path):
    """The ingest dispatch ended in a bare else: a loader added to a config's LOADERS without its own branch
    would have run as HotpotQA (chunking) or AmbigNQ (rewriting)."""
    from types import SimpleNamespace

    from ragwh.experiment.pipeline.stages import PipelineError

    if study == "chunking":
        from ragwh.experiment.pipeline.chunking import Pipeline
    else:
        from ragwh.experiment.pipeline.rewriting import RewritingPipeline as Pipeline
    pipeline = Pipeline.__new__(Pipeline)  # only the dispatch runs: no warehouse, no stage
    pipeline.config = SimpleNamespace(limit=None, option_path=lambda corpus, data: None)
    pipeline.data = None
    corpus = SimpleNamespace(name="x", loader="new-loader", options={})
    with pytest.raises(PipelineError, match="loader 'new-loader' has no ingest step"):
        pipeline._ingest_one(corpus, [tmp_path / "f.json"])
