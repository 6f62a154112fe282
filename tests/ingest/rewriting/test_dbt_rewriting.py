"""``dbt build`` over the rewriting tables: green on the stage's output, and each singular test failing on
its corruption (lineage, ranking, per-strategy depth, sentence-window cover). Two dbt invocations."""

from __future__ import annotations

import duckdb

from ingest.chunking.sentence_windows import sentence_chunk_stage
from ingest.llm import LLMCache
from ingest.llm.scripted import ScriptedBackend
from ingest.retrieval.embedders import EmbedderSpec
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.stage import rewrite_stage
from tests.ingest.retrieval.fixtures import build_tiny_sentence_transformer
from tests.ingest.rewriting.fixtures import load_corpus, respond
from tests.test_dbt_conditions import dbt, statuses
from warehouse.db import connect
from warehouse.paths import PROJECT_ROOT

SELECT = ["--select", "path:models/staging", "+tag:rewriting"]
SINGULAR = ("rewrite_runs_lineage", "rewrite_runs_ranking", "rewrite_strategy_depth", "sentence_window_cover")


def test_dbt_build_green_then_each_singular_test_fails_on_its_corruption(warehouse_file, tmp_path, monkeypatch):
    con = connect(warehouse_file)
    try:
        load_corpus(con)
        sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
        st = build_tiny_sentence_transformer(tmp_path / "embedder")
        rewrite_stage(
            con,
            "towns",
            RewriteSettings(strategies=("S1", "S2", "S1-pool100", "S1-ann4"), chunk_tokens=64, chunk_overlap=16),
            embedder=EmbedderSpec("tiny", str(st)),
            llm=LLMCache(con, ScriptedBackend(respond), progress=False),
            show_progress=False,
        )
    finally:
        con.close()
    monkeypatch.chdir(PROJECT_ROOT)
    work = tmp_path / "dbt"
    result = dbt(["build", *SELECT], work)
    status = statuses(result)
    assert result.success, {k: v for k, v in status.items() if v not in ("pass", "success")}
    assert all(status[name] == "pass" for name in SINGULAR)

    with duckdb.connect(str(warehouse_file)) as con:
        con.execute(
            "UPDATE rewrite_runs SET score = score + 1 WHERE strategy = 'S2' AND seed = 42 AND rank = 5 "
            "AND query_id = 'towns/q1'"
        )  # no longer the text's mmr score, and above rank 4's
        con.execute(
            "UPDATE rewrite_runs SET rank = rank + 1 WHERE strategy = 'S1' AND seed = 123 AND rank = 10 "
            "AND query_id = 'towns/q2'"
        )  # a gap
        last = (
            "(SELECT max(rank) FROM rewrite_text_runs WHERE strategy = 'S1' AND stage = 'mmr' AND seed = 42 "
            "AND query_id = 'towns/q3')"
        )
        con.execute(
            "INSERT INTO rewrite_text_runs SELECT corpus, embedder, reranker, pool, strategy, seed, query_id, "
            f"variant_idx, stage, rank + 1, chunk_id, doc_id, score, ann_seed, in_exact FROM rewrite_text_runs "
            f"WHERE strategy = 'S1' AND stage = 'mmr' AND rank = {last} AND seed = 42 AND query_id = 'towns/q3'"
        )  # S1's only text: one document more than its merged list (20, or fewer from the fixed pool)
        con.execute(
            "UPDATE chunks SET char_start = char_start + 1 WHERE chunkset = 'sentence:64/16' AND chunk_idx = 0 "
            "AND doc_id = (SELECT min(doc_id) FROM chunks WHERE chunkset = 'sentence:64/16')"
        )
    result = dbt(["build", "--select", *SINGULAR], work)
    assert not result.success
    status = statuses(result)
    assert {name: status[name] for name in SINGULAR} == {name: "fail" for name in SINGULAR}
